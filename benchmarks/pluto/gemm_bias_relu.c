/* gemm_bias_relu.c -- C = relu(A*B + bias), naive i-j-k (dot product) order.
 * Size macro: N (default 1600).
 * Style: global arrays sized by macro, scop in main, C99 loop declarations. */
#define _POSIX_C_SOURCE 199309L
#pragma GCC diagnostic ignored "-Wunknown-pragmas" /* #pragma scop / endscop */
#include <math.h>
#include <stdio.h>
#include <time.h>

#ifndef N
#define N 1600
#endif

static double A[N][N], B[N][N], C[N][N], bias[N];

int main(void)
{
  struct timespec t0, t1;
  double cs = 0.0;

  for (int i = 0; i < N; i++) {
    bias[i] = (double)(i % 7) / 7.0 - 0.5;
    for (int j = 0; j < N; j++) {
      A[i][j] = (double)((i * j + 1) % N) / N - 0.5;
      B[i][j] = (double)((i * (j + 3) + 2) % N) / N - 0.5;
    }
  }

  clock_gettime(CLOCK_MONOTONIC, &t0);
#pragma scop
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      C[i][j] = bias[j];
      for (int k = 0; k < N; k++)
        C[i][j] += A[i][k] * B[k][j];
    }
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      C[i][j] = fmax(C[i][j], 0.0);
#pragma endscop
  clock_gettime(CLOCK_MONOTONIC, &t1);

  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      cs += C[i][j] * (1 + (i * 7 + j) % 13);
  printf("time: %.6f\n", (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec));
  printf("checksum: %.10e\n", cs);
  return 0;
}
