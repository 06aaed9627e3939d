/* maxpool.c -- 2x2 stride-2 max pooling, iterated TSTEPS times; after each pooling
 * the input is relaxed towards its pooled maximum ("unpool" write-back):
 *   out[c][y][x] = max_{dy,dx} in[c][2y+dy][2x+dx]
 *   in[c][2y+dy][2x+dx] = 0.5 * (in[c][2y+dy][2x+dx] + out[c][y][x]) + 0.01*(dy-dx)
 * Size macros: NC = channels (default 32), N = output height/width (default 256;
 * input is 2N x 2N), TSTEPS (default 40).
 * Style: global arrays sized by macro, scop in main, iterators declared at top. */
#define _POSIX_C_SOURCE 199309L
#pragma GCC diagnostic ignored "-Wunknown-pragmas" /* #pragma scop / endscop */
#include <math.h>
#include <stdio.h>
#include <time.h>

#ifndef NC
#define NC 32
#endif
#ifndef N
#define N 256
#endif
#ifndef TSTEPS
#define TSTEPS 40
#endif

static double in[NC][2 * N][2 * N], out[NC][N][N];

int main(void)
{
  int t, c, y, x, dy, dx;
  struct timespec t0, t1;
  double cs = 0.0;

  for (c = 0; c < NC; c++)
    for (y = 0; y < 2 * N; y++)
      for (x = 0; x < 2 * N; x++)
        in[c][y][x] = (double)((c * 5 + y * (x + 3)) % 29) / 29.0;

  clock_gettime(CLOCK_MONOTONIC, &t0);
#pragma scop
  for (t = 0; t < TSTEPS; t++) {
    for (c = 0; c < NC; c++)
      for (y = 0; y < N; y++)
        for (x = 0; x < N; x++) {
          out[c][y][x] = in[c][2 * y][2 * x];
          for (dy = 0; dy < 2; dy++)
            for (dx = 0; dx < 2; dx++)
              out[c][y][x] = fmax(out[c][y][x], in[c][2 * y + dy][2 * x + dx]);
        }
    for (c = 0; c < NC; c++)
      for (y = 0; y < N; y++)
        for (dy = 0; dy < 2; dy++)
          for (x = 0; x < N; x++)
            for (dx = 0; dx < 2; dx++)
              in[c][2 * y + dy][2 * x + dx] =
                  0.5 * (in[c][2 * y + dy][2 * x + dx] + out[c][y][x]) + 0.01 * (dy - dx);
  }
#pragma endscop
  clock_gettime(CLOCK_MONOTONIC, &t1);

  for (c = 0; c < NC; c++) {
    for (y = 0; y < 2 * N; y++)
      for (x = 0; x < 2 * N; x++)
        cs += in[c][y][x] * (1 + (c * 3 + y * 7 + x) % 13);
    for (y = 0; y < N; y++)
      for (x = 0; x < N; x++)
        cs += out[c][y][x] * (1 + (c * 5 + y * 3 + x) % 11);
  }
  printf("time: %.6f\n", (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec));
  printf("checksum: %.10e\n", cs);
  return 0;
}
