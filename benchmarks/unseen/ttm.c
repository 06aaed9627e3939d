/* Tensor times matrix along the middle mode (Tucker decompositions): Y[a][b][c] = sum_d X[a][d][c] U[d][b],
   a 200 x 200 x 200 tensor and a 200 x 200 matrix. */
#include <stdio.h>
#include <time.h>
#ifndef N
#define N 200
#endif
double X[N][N][N], Y[N][N][N], U[N][N];
int main(void) {
  int a, b, c, d;
  for (a = 0; a < N; a++) for (b = 0; b < N; b++) for (c = 0; c < N; c++) { X[a][b][c] = ((a + 3 * b + c) % 17) / 17.0; Y[a][b][c] = 0.0; }
  for (a = 0; a < N; a++) for (b = 0; b < N; b++) U[a][b] = ((a * 5 + b) % 11) / 11.0;
  struct timespec start, stop;
  clock_gettime(CLOCK_MONOTONIC, &start);
#pragma scop
  for (a = 0; a < N; a++)
    for (b = 0; b < N; b++)
      for (c = 0; c < N; c++)
        for (d = 0; d < N; d++)
          Y[a][b][c] += X[a][d][c] * U[d][b];
#pragma endscop
  clock_gettime(CLOCK_MONOTONIC, &stop);
  double cs = 0;
  for (a = 0; a < N; a++) for (b = 0; b < N; b++) for (c = 0; c < N; c++) cs += Y[a][b][c] * ((a + b + c) % 5);
  printf("time: %.6f\n", (stop.tv_sec - start.tv_sec) + 1e-9 * (stop.tv_nsec - start.tv_nsec));
  printf("checksum: %.10e\n", cs);
  return 0;
}
