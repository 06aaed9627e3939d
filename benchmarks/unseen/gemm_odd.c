/* A rectangular product of odd sizes, 1013 x 997 by 997 x 1109 (no size a multiple of a tile or a vector). */
#include <stdio.h>
#include <time.h>
#ifndef M
#define M 1013
#endif
#ifndef N
#define N 1109
#endif
#ifndef K
#define K 997
#endif
double A[M][K], B[K][N], C[M][N];
int main(void) {
  int i, j, k;
  for (i = 0; i < M; i++) for (k = 0; k < K; k++) A[i][k] = ((i * 3 + k) % 19) / 19.0 - 0.5;
  for (k = 0; k < K; k++) for (j = 0; j < N; j++) B[k][j] = ((j + 7 * k) % 23) / 23.0;
  for (i = 0; i < M; i++) for (j = 0; j < N; j++) C[i][j] = 0.0;
  struct timespec start, stop;
  clock_gettime(CLOCK_MONOTONIC, &start);
#pragma scop
  for (i = 0; i < M; i++)
    for (k = 0; k < K; k++)
      for (j = 0; j < N; j++)
        C[i][j] += A[i][k] * B[k][j];
#pragma endscop
  clock_gettime(CLOCK_MONOTONIC, &stop);
  double cs = 0;
  for (i = 0; i < M; i++) for (j = 0; j < N; j++) cs += C[i][j] * ((i + 2 * j) % 5);
  printf("time: %.6f\n", (stop.tv_sec - start.tv_sec) + 1e-9 * (stop.tv_nsec - start.tv_nsec));
  printf("checksum: %.10e\n", cs);
  return 0;
}
