/* A 7-tap horizontal box blur of a 2000 x 2000 image plus the row below, its coordinates through index helpers of
   the file (`clampi(x + k, 0, W - 1)`, `at(y, x)`: static inline functions, as C code writes what a macro would),
   repeated T times: a kernel written after the helpers were inlined. */
#include <stdio.h>
#include <time.h>
#ifndef H
#define H 2000
#endif
#ifndef W
#define W 2000
#endif
#ifndef T
#define T 5
#endif
static inline int clampi(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }
static inline int imin(int a, int b) { return a < b ? a : b; }
static inline long at(int y, int x) { return (long)y * W + x; }
float src[H * W], dst[H * W];
int main(void) {
  int t, y, x, k;
  for (y = 0; y < H * W; y++) src[y] = (float)((y * 13 + (y / W) * 7) % 255) / 256.0f;
  struct timespec start, stop;
  clock_gettime(CLOCK_MONOTONIC, &start);
#pragma scop
  for (t = 0; t < T; t++)
    for (y = 0; y < H; y++)
      for (x = 0; x < W; x++) {
        dst[at(y, x)] = 0.125f * src[at(imin(y + 1, H - 1), x)] + 0.001f * t;
        for (k = -3; k <= 3; k++)
          dst[at(y, x)] += 0.125f * src[at(y, clampi(x + k, 0, W - 1))];
      }
#pragma endscop
  clock_gettime(CLOCK_MONOTONIC, &stop);
  double cs = 0;
  for (y = 0; y < H * W; y++) cs += dst[y] * ((y + 2 * (y / W)) % 11);
  printf("time: %.6f\n", (stop.tv_sec - start.tv_sec) + 1e-9 * (stop.tv_nsec - start.tv_nsec));
  printf("checksum: %.10e\n", cs);
  return 0;
}
