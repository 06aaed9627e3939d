/* jacobi-2d.c -- PolyBench 4.2 jacobi-2d: 5-point stencil, A -> B -> A per time step.
 * Size macros: N (default 2000), TSTEPS (default 150).
 * Style: kernel function with int-parameter sizes, iterators declared at top. */
#define _POSIX_C_SOURCE 199309L
#pragma GCC diagnostic ignored "-Wunknown-pragmas" /* #pragma scop / endscop */
#include <stdio.h>
#include <time.h>

#ifndef N
#define N 2000
#endif
#ifndef TSTEPS
#define TSTEPS 150
#endif

static double A[N][N], B[N][N];

static void kernel_jacobi_2d(int tsteps, int n, double A[n][n], double B[n][n])
{
  int t, i, j;
#pragma scop
  for (t = 0; t < tsteps; t++) {
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        B[i][j] = 0.2 * (A[i][j] + A[i][j - 1] + A[i][1 + j] + A[1 + i][j] + A[i - 1][j]);
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        A[i][j] = 0.2 * (B[i][j] + B[i][j - 1] + B[i][1 + j] + B[1 + i][j] + B[i - 1][j]);
  }
#pragma endscop
}

int main(void)
{
  int i, j;
  struct timespec t0, t1;
  double cs = 0.0;

  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++) {
      A[i][j] = ((double)i * (j + 2) + 2) / N;
      B[i][j] = ((double)i * (j + 3) + 3) / N;
    }

  clock_gettime(CLOCK_MONOTONIC, &t0);
  kernel_jacobi_2d(TSTEPS, N, A, B);
  clock_gettime(CLOCK_MONOTONIC, &t1);

  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      cs += A[i][j] * (1 + (i * 7 + j) % 13) + B[i][j] * (1 + (i * 5 + j) % 11);
  printf("time: %.6f\n", (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec));
  printf("checksum: %.10e\n", cs);
  return 0;
}
