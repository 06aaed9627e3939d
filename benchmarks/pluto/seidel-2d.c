/* seidel-2d.c -- PolyBench 4.2 seidel-2d: in-place 9-point Gauss-Seidel sweep.
 * Size macros: N (default 2000), TSTEPS (default 50).
 * Style: global array sized by macro, scop in main, C99 loop declarations. */
#define _POSIX_C_SOURCE 199309L
#pragma GCC diagnostic ignored "-Wunknown-pragmas" /* #pragma scop / endscop */
#include <stdio.h>
#include <time.h>

#ifndef N
#define N 2000
#endif
#ifndef TSTEPS
#define TSTEPS 50
#endif

static double A[N][N];

int main(void)
{
  struct timespec t0, t1;
  double cs = 0.0;

  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      A[i][j] = ((double)i * (j + 2) + 2) / N;

  clock_gettime(CLOCK_MONOTONIC, &t0);
#pragma scop
  for (int t = 0; t <= TSTEPS - 1; t++)
    for (int i = 1; i <= N - 2; i++)
      for (int j = 1; j <= N - 2; j++)
        A[i][j] = (A[i - 1][j - 1] + A[i - 1][j] + A[i - 1][j + 1]
                   + A[i][j - 1] + A[i][j] + A[i][j + 1]
                   + A[i + 1][j - 1] + A[i + 1][j] + A[i + 1][j + 1]) / 9.0;
#pragma endscop
  clock_gettime(CLOCK_MONOTONIC, &t1);

  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      cs += A[i][j] * (1 + (i * 7 + j) % 13);
  printf("time: %.6f\n", (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec));
  printf("checksum: %.10e\n", cs);
  return 0;
}
