/* depthwise.c -- a stack of TSTEPS pairs of depthwise 3x3 convolution layers
 * (one 3x3 filter per channel, "same" size, border kept), ping-ponging A -> B -> A:
 *   B[c][y+1][x+1] = sum_ky sum_kx W[c][ky][kx] * A[c][y+ky][x+kx]
 * Size macros: NC = channels (default 32), N = image height/width (default 512),
 * TSTEPS = number of layer pairs (default 50).
 * Style: global arrays sized by macro, scop in main, C99 loop declarations. */
#define _POSIX_C_SOURCE 199309L
#pragma GCC diagnostic ignored "-Wunknown-pragmas" /* #pragma scop / endscop */
#include <stdio.h>
#include <time.h>

#ifndef NC
#define NC 32
#endif
#ifndef N
#define N 512
#endif
#ifndef TSTEPS
#define TSTEPS 50
#endif

static double A[NC][N][N], B[NC][N][N], W[NC][3][3];

int main(void)
{
  struct timespec t0, t1;
  double cs = 0.0;

  for (int c = 0; c < NC; c++) {
    for (int y = 0; y < N; y++)
      for (int x = 0; x < N; x++)
        A[c][y][x] = B[c][y][x] = (double)((c + y * (x + 1)) % 23) / 23.0;
    for (int ky = 0; ky < 3; ky++)
      for (int kx = 0; kx < 3; kx++)
        W[c][ky][kx] = (1.0 + (c + 2 * ky + kx) % 5) / 45.0; /* taps sum to <= 1 */
  }

  clock_gettime(CLOCK_MONOTONIC, &t0);
#pragma scop
  for (int t = 0; t < TSTEPS; t++) {
    for (int c = 0; c < NC; c++)
      for (int y = 0; y < N - 2; y++)
        for (int x = 0; x < N - 2; x++) {
          B[c][y + 1][x + 1] = 0.0;
          for (int ky = 0; ky < 3; ky++)
            for (int kx = 0; kx < 3; kx++)
              B[c][y + 1][x + 1] += W[c][ky][kx] * A[c][y + ky][x + kx];
        }
    for (int c = 0; c < NC; c++)
      for (int y = 0; y < N - 2; y++)
        for (int x = 0; x < N - 2; x++) {
          A[c][y + 1][x + 1] = 0.0;
          for (int ky = 0; ky < 3; ky++)
            for (int kx = 0; kx < 3; kx++)
              A[c][y + 1][x + 1] += W[c][ky][kx] * B[c][y + ky][x + kx];
        }
  }
#pragma endscop
  clock_gettime(CLOCK_MONOTONIC, &t1);

  for (int c = 0; c < NC; c++)
    for (int y = 0; y < N; y++)
      for (int x = 0; x < N; x++)
        cs += (A[c][y][x] + 2.0 * B[c][y][x]) * (1 + (c * 3 + y * 7 + x) % 13);
  printf("time: %.6f\n", (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec));
  printf("checksum: %.10e\n", cs);
  return 0;
}
