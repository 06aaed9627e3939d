/* The dynamic program of the longest common subsequence of two sequences of 6,000 symbols (bioinformatics,
   diff): each cell from its west, north and north-west neighbours, a wavefront. */
#include <stdio.h>
#include <time.h>
#ifndef N
#define N 6000
#endif
int a[N], b[N];
double D[N + 1][N + 1];
int main(void) {
  int i, j;
  for (i = 0; i < N; i++) { a[i] = (i * 7 + 3) % 4; b[i] = (i * 5 + 1) % 4; }
  for (i = 0; i <= N; i++) { D[i][0] = 0.0; D[0][i] = 0.0; }
  struct timespec start, stop;
  clock_gettime(CLOCK_MONOTONIC, &start);
#pragma scop
  for (i = 1; i <= N; i++)
    for (j = 1; j <= N; j++)
      D[i][j] = a[i - 1] == b[j - 1] ? D[i - 1][j - 1] + 1.0
              : (D[i - 1][j] > D[i][j - 1] ? D[i - 1][j] : D[i][j - 1]);
#pragma endscop
  clock_gettime(CLOCK_MONOTONIC, &stop);
  double cs = 0;
  for (i = 0; i <= N; i += 7) for (j = 0; j <= N; j += 3) cs += D[i][j];
  printf("time: %.6f\n", (stop.tv_sec - start.tv_sec) + 1e-9 * (stop.tv_nsec - start.tv_nsec));
  printf("checksum: %.10e\n", cs);
  return 0;
}
