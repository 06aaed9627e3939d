/* The squared gradient magnitude of a 4000 x 4000 image by Sobel's 3x3 operators, the border pixels set to 0 by a
   ternary around the whole expression (image-processing code), repeated T times: a kernel written after the split
   of clamps. */
#include <stdio.h>
#include <time.h>
#ifndef N
#define N 4000
#endif
#ifndef T
#define T 3
#endif
float img[N][N], mag[N][N];
int main(void) {
  int t, i, j;
  for (i = 0; i < N; i++) for (j = 0; j < N; j++) img[i][j] = (float)((i * 17 + j * 5) % 251) / 256.0f;
  struct timespec start, stop;
  clock_gettime(CLOCK_MONOTONIC, &start);
#pragma scop
  for (t = 0; t < T; t++)
    for (i = 0; i < N; i++)
      for (j = 0; j < N; j++)
        mag[i][j] = (i > 0 && i < N - 1 && j > 0 && j < N - 1)
          ? (img[i - 1][j + 1] + 2.0f * img[i][j + 1] + img[i + 1][j + 1] - img[i - 1][j - 1] - 2.0f * img[i][j - 1]
             - img[i + 1][j - 1]) * (img[i - 1][j + 1] + 2.0f * img[i][j + 1] + img[i + 1][j + 1] - img[i - 1][j - 1]
             - 2.0f * img[i][j - 1] - img[i + 1][j - 1])
            + (img[i + 1][j - 1] + 2.0f * img[i + 1][j] + img[i + 1][j + 1] - img[i - 1][j - 1] - 2.0f * img[i - 1][j]
               - img[i - 1][j + 1]) * (img[i + 1][j - 1] + 2.0f * img[i + 1][j] + img[i + 1][j + 1] - img[i - 1][j - 1]
               - 2.0f * img[i - 1][j] - img[i - 1][j + 1]) + 0.001f * t
          : 0.0f;
#pragma endscop
  clock_gettime(CLOCK_MONOTONIC, &stop);
  double cs = 0;
  for (i = 0; i < N; i++) for (j = 0; j < N; j++) cs += mag[i][j] * ((i + 2 * j) % 11);
  printf("time: %.6f\n", (stop.tv_sec - start.tv_sec) + 1e-9 * (stop.tv_nsec - start.tv_nsec));
  printf("checksum: %.10e\n", cs);
  return 0;
}
