/* Widest (bottleneck) paths between all pairs of 1,800 nodes of a capacity graph (network routing): the
   Floyd-Warshall recurrence over the (max, min) semiring, in float. */
#include <stdio.h>
#include <time.h>
#ifndef N
#define N 1800
#endif
float W[N][N];
int main(void) {
  int i, j, k;
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      W[i][j] = i == j ? 1e30f : (float)((i * 37 + j * 91) % 1009) / 8.0f;
  struct timespec start, stop;
  clock_gettime(CLOCK_MONOTONIC, &start);
#pragma scop
  for (k = 0; k < N; k++)
    for (i = 0; i < N; i++)
      for (j = 0; j < N; j++) {
        float via = W[i][k] < W[k][j] ? W[i][k] : W[k][j];
        W[i][j] = W[i][j] > via ? W[i][j] : via;
      }
#pragma endscop
  clock_gettime(CLOCK_MONOTONIC, &stop);
  double cs = 0;
  for (i = 0; i < N; i += 3) for (j = 0; j < N; j += 5) cs += W[i][j] < 1e29f ? W[i][j] : 0.0f;
  printf("time: %.6f\n", (stop.tv_sec - start.tv_sec) + 1e-9 * (stop.tv_nsec - start.tv_nsec));
  printf("checksum: %.10e\n", cs);
  return 0;
}
