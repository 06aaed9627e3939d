/* fdtd-2d.c -- PolyBench 4.2 fdtd-2d (2-D finite-difference time domain, 4 statements).
 * Size macros: N (default 2000; NX = NY = N), TSTEPS (default 150).
 * Style: kernel function with int-parameter sizes (nx, ny kept separate),
 * iterators declared at top. */
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

static double ex[N][N], ey[N][N], hz[N][N], fict[TSTEPS];

static void kernel_fdtd_2d(int tmax, int nx, int ny, double ex[nx][ny], double ey[nx][ny],
                           double hz[nx][ny], double fict[tmax])
{
  int t, i, j;
#pragma scop
  for (t = 0; t < tmax; t++) {
    for (j = 0; j < ny; j++)
      ey[0][j] = fict[t];
    for (i = 1; i < nx; i++)
      for (j = 0; j < ny; j++)
        ey[i][j] = ey[i][j] - 0.5 * (hz[i][j] - hz[i - 1][j]);
    for (i = 0; i < nx; i++)
      for (j = 1; j < ny; j++)
        ex[i][j] = ex[i][j] - 0.5 * (hz[i][j] - hz[i][j - 1]);
    for (i = 0; i < nx - 1; i++)
      for (j = 0; j < ny - 1; j++)
        hz[i][j] = hz[i][j] - 0.7 * (ex[i][j + 1] - ex[i][j] + ey[i + 1][j] - ey[i][j]);
  }
#pragma endscop
}

int main(void)
{
  int i, j;
  struct timespec t0, t1;
  double cs = 0.0;

  for (i = 0; i < TSTEPS; i++)
    fict[i] = (double)i;
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++) {
      ex[i][j] = ((double)i * (j + 1)) / N;
      ey[i][j] = ((double)i * (j + 2)) / N;
      hz[i][j] = ((double)i * (j + 3)) / N;
    }

  clock_gettime(CLOCK_MONOTONIC, &t0);
  kernel_fdtd_2d(TSTEPS, N, N, ex, ey, hz, fict);
  clock_gettime(CLOCK_MONOTONIC, &t1);

  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      cs += ex[i][j] * (1 + (i * 7 + j) % 13) + ey[i][j] * (1 + (i * 5 + j) % 11)
            + hz[i][j] * (1 + (i * 3 + j) % 7);
  printf("time: %.6f\n", (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec));
  printf("checksum: %.10e\n", cs);
  return 0;
}
