/* stencil2d_unroll.c -- GPU benchmark: 2-D 64-point (8x8) weighted stencil in single precision,
 *   B[i][j] = sum_{di=-4..3} sum_{dj=-4..3} W[di+4][dj+4] * A[i+di][j+dj]
 *   on the interior 4 <= i, j < N-4 (the border of B stays 0), loop order i, j, di, dj
 *   with the innermost (dj) loop unrolled by 4 by hand: dj += 4, four statements
 *   (B[i][j] = 0 before the di loop, inside the scop).
 * Size macro: N (default 8192, 256 MB per array; N > 8 so that the interior is not empty). Small test: -DN=19.
 * Variants: stencil2d_vanilla.c (i, j, di, dj; same checksum), stencil2d_interchange.c
 * (order i, j, dj, di: another summation order, so the checksum differs in the last float bits).
 * Output: time of the scop call, checksum = weighted sum of B accumulated in double. */
#define _POSIX_C_SOURCE 199309L
#pragma GCC diagnostic ignored "-Wunknown-pragmas" /* #pragma scop / endscop */
#include <stdio.h>
#include <time.h>

#ifndef N
#define N 8192
#endif
#if N <= 8
#error "stencil2d: N must be greater than 8 (radius-4 stencil)"
#endif

static float A[N][N], B[N][N], W[8][8];

static void kernel_stencil2d(int n, float B[N][N], float A[N][N], float W[8][8])
{
  int i, j, di, dj;
#pragma scop
  for (i = 4; i < n - 4; i++)
    for (j = 4; j < n - 4; j++) {
      B[i][j] = 0.0f;
      for (di = -4; di < 4; di++)
        for (dj = -4; dj < 4; dj += 4) {
          B[i][j] += W[di + 4][dj + 4] * A[i + di][j + dj];
          B[i][j] += W[di + 4][dj + 5] * A[i + di][j + dj + 1];
          B[i][j] += W[di + 4][dj + 6] * A[i + di][j + dj + 2];
          B[i][j] += W[di + 4][dj + 7] * A[i + di][j + dj + 3];
        }
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
      A[i][j] = (float)((i * 5 + j * 3 + i * j) % 23) / 23.0f;
  for (i = 0; i < 8; i++)
    for (j = 0; j < 8; j++)
      W[i][j] = (float)((i * 8 + j * 3) % 11 + 1) / 64.0f;

  clock_gettime(CLOCK_MONOTONIC, &t0);
  kernel_stencil2d(N, B, A, W);
  clock_gettime(CLOCK_MONOTONIC, &t1);

  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      cs += (double)B[i][j] * (1 + (i * 7 + j) % 13);
  printf("time: %.6f\n", (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec));
  printf("checksum: %.10e\n", cs);
  return 0;
}
