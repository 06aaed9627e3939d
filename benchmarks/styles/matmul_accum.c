/* matmul_accum.c -- C = A * B with a local scalar accumulator (`double s = 0.0; s += ...; c[..] = s`),
 * over malloc'd matrices indexed by hand (c[i * N + j]), the way much C code outside benchmark suites
 * is written: restrict pointer parameters, a linearized subscript.
 * Size macro: N (default 1500). */
#define _POSIX_C_SOURCE 199309L
#pragma GCC diagnostic ignored "-Wunknown-pragmas" /* #pragma scop / endscop */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifndef N
#define N 1500
#endif

static void matmul(const double *restrict a, const double *restrict b, double *restrict c)
{
#pragma scop
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      double s = 0.0;
      for (int k = 0; k < N; k++)
        s += a[i * N + k] * b[k * N + j];
      c[i * N + j] = s;
    }
#pragma endscop
}

int main(void)
{
  struct timespec t0, t1;
  double *a = malloc(sizeof(double) * N * N), *b = malloc(sizeof(double) * N * N);
  double *c = malloc(sizeof(double) * N * N), cs = 0.0;
  for (int i = 0; i < N * N; i++) {
    a[i] = (double)(i % 7) * 0.5 - 1.0;
    b[i] = (double)(i % 5) * 0.25;
  }
  clock_gettime(CLOCK_MONOTONIC, &t0);
  matmul(a, b, c);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  for (int i = 0; i < N * N; i++)
    cs += c[i] * (1 + i % 3);
  printf("time: %.6f\n", (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec));
  printf("checksum: %.10e\n", cs);
  free(a);
  free(b);
  free(c);
  return 0;
}
