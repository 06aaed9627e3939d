/* A 2x bilinear upsample of a 1500 x 1500 image, the right and bottom neighbours clamped to the last column and
   row with MIN (stb- and OpenCV-style resizers), repeated T times: a kernel written after the split of clamps. */
#include <stdio.h>
#include <time.h>
#ifndef H
#define H 1500
#endif
#ifndef W
#define W 1500
#endif
#ifndef T
#define T 4
#endif
#define MIN(a, b) ((a) < (b) ? (a) : (b))
float src[H][W], dst[2 * H][2 * W];
int main(void) {
  int t, y, x;
  for (y = 0; y < H; y++) for (x = 0; x < W; x++) src[y][x] = (float)((y * 13 + x * 7) % 255) / 256.0f;
  struct timespec start, stop;
  clock_gettime(CLOCK_MONOTONIC, &start);
#pragma scop
  for (t = 0; t < T; t++)
    for (y = 0; y < 2 * H; y++)
      for (x = 0; x < 2 * W; x++)
        dst[y][x] = 0.25f * (src[y / 2][x / 2] + src[y / 2][MIN(x / 2 + 1, W - 1)]
                             + src[MIN(y / 2 + 1, H - 1)][x / 2] + src[MIN(y / 2 + 1, H - 1)][MIN(x / 2 + 1, W - 1)])
                    + 0.001f * t;
#pragma endscop
  clock_gettime(CLOCK_MONOTONIC, &stop);
  double cs = 0;
  for (y = 0; y < 2 * H; y++) for (x = 0; x < 2 * W; x++) cs += dst[y][x] * ((y + 2 * x) % 11);
  printf("time: %.6f\n", (stop.tv_sec - start.tv_sec) + 1e-9 * (stop.tv_nsec - start.tv_nsec));
  printf("checksum: %.10e\n", cs);
  return 0;
}
