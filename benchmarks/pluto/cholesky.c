/* cholesky.c -- PolyBench 4.2 cholesky (in place, lower triangle: A = L L^T).
 * Size macro: N (default 1800).
 * Style: kernel function with int-parameter size, iterators declared at top,
 * triangular loop bounds. Input is symmetric and strictly diagonally dominant (SPD). */
#define _POSIX_C_SOURCE 199309L
#pragma GCC diagnostic ignored "-Wunknown-pragmas" /* #pragma scop / endscop */
#include <math.h>
#include <stdio.h>
#include <time.h>

#ifndef N
#define N 1800
#endif

static double A[N][N];

static void kernel_cholesky(int n, double A[n][n])
{
  int i, j, k;
#pragma scop
  for (i = 0; i < n; i++) {
    for (j = 0; j < i; j++) {
      for (k = 0; k < j; k++)
        A[i][j] -= A[i][k] * A[j][k];
      A[i][j] /= A[j][j];
    }
    for (k = 0; k < i; k++)
      A[i][i] -= A[i][k] * A[i][k];
    A[i][i] = sqrt(A[i][i]);
  }
#pragma endscop
}

int main(void)
{
  int i, j;
  struct timespec t0, t1;
  double cs = 0.0;

  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      A[i][j] = (i == j) ? N + 1.0 : 1.0 / (1 + i + j);

  clock_gettime(CLOCK_MONOTONIC, &t0);
  kernel_cholesky(N, A);
  clock_gettime(CLOCK_MONOTONIC, &t1);

  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      cs += A[i][j] * (1 + (i * 7 + j) % 13);
  printf("time: %.6f\n", (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec));
  printf("checksum: %.10e\n", cs);
  return 0;
}
