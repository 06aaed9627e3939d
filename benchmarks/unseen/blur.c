/* A separable 3x3 box blur of an image, a row pass into a scratch image then a column pass, repeated T times
   (the idiom of image pipelines): a kernel written after the schedules were built. */
#include <stdio.h>
#include <time.h>
#ifndef H
#define H 3000
#endif
#ifndef W
#define W 3000
#endif
#ifndef T
#define T 5
#endif
double img[H][W], tmp[H][W];
int main(void) {
  int t, i, j;
  for (i = 0; i < H; i++) for (j = 0; j < W; j++) img[i][j] = ((i * 13 + j * 7) % 255) / 255.0;
  struct timespec start, stop;
  clock_gettime(CLOCK_MONOTONIC, &start);
#pragma scop
  for (t = 0; t < T; t++) {
    for (i = 0; i < H; i++)
      for (j = 1; j < W - 1; j++)
        tmp[i][j] = (img[i][j - 1] + img[i][j] + img[i][j + 1]) / 3.0;
    for (i = 1; i < H - 1; i++)
      for (j = 1; j < W - 1; j++)
        img[i][j] = (tmp[i - 1][j] + tmp[i][j] + tmp[i + 1][j]) / 3.0;
  }
#pragma endscop
  clock_gettime(CLOCK_MONOTONIC, &stop);
  double cs = 0;
  for (i = 0; i < H; i++) for (j = 0; j < W; j++) cs += img[i][j] * ((i + 2 * j) % 11);
  printf("time: %.6f\n", (stop.tv_sec - start.tv_sec) + 1e-9 * (stop.tv_nsec - start.tv_nsec));
  printf("checksum: %.10e\n", cs);
  return 0;
}
