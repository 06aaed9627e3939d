/* 2d_bidirec.c -- row sweep where each row reads the previous row in both directions:
 *   a[i][j] += 0.25 * (a[i-1][j] + a[i-1][N-1-j] - 2*a[i][j])   (i >= 1, all j)
 * repeated TSTEPS times (damped so values stay bounded).
 * Size macros: N (default 2000), TSTEPS (default 300).
 * Style: global arrays sized by macro, scop in main, C99 loop declarations. */
#define _POSIX_C_SOURCE 199309L
#pragma GCC diagnostic ignored "-Wunknown-pragmas" /* #pragma scop / endscop */
#include <stdio.h>
#include <time.h>

#ifndef N
#define N 2000
#endif
#ifndef TSTEPS
#define TSTEPS 300
#endif

static double a[N][N];

int main(void)
{
  struct timespec t0, t1;
  double cs = 0.0;

  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      a[i][j] = (double)((i * (j + 1) + 3 * j) % N) / N;

  clock_gettime(CLOCK_MONOTONIC, &t0);
#pragma scop
  for (int t = 0; t < TSTEPS; t++)
    for (int i = 1; i < N; i++)
      for (int j = 0; j < N; j++)
        a[i][j] += 0.25 * (a[i - 1][j] + a[i - 1][N - 1 - j] - 2.0 * a[i][j]);
#pragma endscop
  clock_gettime(CLOCK_MONOTONIC, &t1);

  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      cs += a[i][j] * (1 + (i * 7 + j) % 13);
  printf("time: %.6f\n", (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec));
  printf("checksum: %.10e\n", cs);
  return 0;
}
