/* lu.c -- PolyBench 4.2 lu (in place, no pivoting: A = L U, unit-diagonal L).
 * Size macro: N (default 1600).
 * Style: kernel function with int-parameter size, C99 loop declarations,
 * triangular loop bounds. Input is strictly diagonally dominant. */
#define _POSIX_C_SOURCE 199309L
#pragma GCC diagnostic ignored "-Wunknown-pragmas" /* #pragma scop / endscop */
#include <stdio.h>
#include <time.h>

#ifndef N
#define N 1600
#endif

static double A[N][N];

static void kernel_lu(int n, double A[n][n])
{
#pragma scop
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < i; j++) {
      for (int k = 0; k < j; k++)
        A[i][j] -= A[i][k] * A[k][j];
      A[i][j] /= A[j][j];
    }
    for (int j = i; j < n; j++)
      for (int k = 0; k < i; k++)
        A[i][j] -= A[i][k] * A[k][j];
  }
#pragma endscop
}

int main(void)
{
  struct timespec t0, t1;
  double cs = 0.0;

  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      A[i][j] = (i == j) ? 2.0 * N + 8.0 : (double)((i * j + 1) % 7 + 1) / (1 + i + 2 * j);

  clock_gettime(CLOCK_MONOTONIC, &t0);
  kernel_lu(N, A);
  clock_gettime(CLOCK_MONOTONIC, &t1);

  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      cs += A[i][j] * (1 + (i * 7 + j) % 13);
  printf("time: %.6f\n", (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec));
  printf("checksum: %.10e\n", cs);
  return 0;
}
