/* conv2d.c -- multi-channel 3x3 convolution (valid padding), direct loop order:
 *   out[co][y][x] = sum_ci sum_ky sum_kx w[co][ci][ky][kx] * in[ci][y+ky][x+kx]
 * Size macros: NC = input and output channels (default 64), N = output height/width
 * (default 256; input is (N+2)x(N+2)).
 * Style: kernel function with int-parameter sizes, iterators declared at top. */
#define _POSIX_C_SOURCE 199309L
#pragma GCC diagnostic ignored "-Wunknown-pragmas" /* #pragma scop / endscop */
#include <stdio.h>
#include <time.h>

#ifndef NC
#define NC 64
#endif
#ifndef N
#define N 256
#endif

static double in[NC][N + 2][N + 2], w[NC][NC][3][3], out[NC][N][N];

static void kernel_conv2d(int nc, int n, double out[nc][n][n], double w[nc][nc][3][3],
                          double in[nc][n + 2][n + 2])
{
  int co, ci, y, x, ky, kx;
#pragma scop
  for (co = 0; co < nc; co++)
    for (y = 0; y < n; y++)
      for (x = 0; x < n; x++) {
        out[co][y][x] = 0.0;
        for (ci = 0; ci < nc; ci++)
          for (ky = 0; ky < 3; ky++)
            for (kx = 0; kx < 3; kx++)
              out[co][y][x] += w[co][ci][ky][kx] * in[ci][y + ky][x + kx];
      }
#pragma endscop
}

int main(void)
{
  int c, d, y, x;
  struct timespec t0, t1;
  double cs = 0.0;

  for (c = 0; c < NC; c++)
    for (y = 0; y < N + 2; y++)
      for (x = 0; x < N + 2; x++)
        in[c][y][x] = (double)((c + y * x + 1) % 17) / 17.0;
  for (c = 0; c < NC; c++)
    for (d = 0; d < NC; d++)
      for (y = 0; y < 3; y++)
        for (x = 0; x < 3; x++)
          w[c][d][y][x] = (double)((c * 3 + d * 5 + y * 3 + x) % 11) / 11.0 - 0.45;

  clock_gettime(CLOCK_MONOTONIC, &t0);
  kernel_conv2d(NC, N, out, w, in);
  clock_gettime(CLOCK_MONOTONIC, &t1);

  for (c = 0; c < NC; c++)
    for (y = 0; y < N; y++)
      for (x = 0; x < N; x++)
        cs += out[c][y][x] * (1 + (c * 3 + y * 7 + x) % 13);
  printf("time: %.6f\n", (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec));
  printf("checksum: %.10e\n", cs);
  return 0;
}
