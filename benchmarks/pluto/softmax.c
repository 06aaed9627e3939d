/* softmax.c -- row-wise softmax B[i][:] = exp(A[i][:] - max) / sum(exp(A[i][:] - max)).
 * Size macro: N (default 4500; A and B are N x N).
 * Style: kernel function with int-parameter size, C99 loop declarations,
 * scalar temporaries (mx, sum) written inside the scop. */
#define _POSIX_C_SOURCE 199309L
#pragma GCC diagnostic ignored "-Wunknown-pragmas" /* #pragma scop / endscop */
#include <math.h>
#include <stdio.h>
#include <time.h>

#ifndef N
#define N 4500
#endif

static double A[N][N], B[N][N];
static double mx, sum;

static void kernel_softmax(int n, double A[n][n], double B[n][n])
{
#pragma scop
  for (int i = 0; i < n; i++) {
    mx = A[i][0];
    for (int j = 1; j < n; j++)
      mx = fmax(mx, A[i][j]);
    sum = 0.0;
    for (int j = 0; j < n; j++) {
      B[i][j] = exp(A[i][j] - mx);
      sum += B[i][j];
    }
    for (int j = 0; j < n; j++)
      B[i][j] /= sum;
  }
#pragma endscop
}

int main(void)
{
  struct timespec t0, t1;
  double cs = 0.0;

  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      A[i][j] = 8.0 * (double)((i * j + 3 * i + 1) % 101) / 101.0 - 4.0;

  clock_gettime(CLOCK_MONOTONIC, &t0);
  kernel_softmax(N, A, B);
  clock_gettime(CLOCK_MONOTONIC, &t1);

  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      cs += B[i][j] * (1 + (i * 7 + j) % 13);
  cs += mx + sum;
  printf("time: %.6f\n", (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec));
  printf("checksum: %.10e\n", cs);
  return 0;
}
