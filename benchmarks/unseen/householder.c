/* Applying K Householder reflectors to an M x N matrix (the loop of LAPACK's dlarf, one reflector at a time):
   a kernel written after the schedules were built, to measure them on code they were not tuned on. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#ifndef M
#define M 2000
#endif
#ifndef N
#define N 1600
#endif
#ifndef K
#define K 64
#endif
double A[M][N], V[M][K], w[N], tau[K];
int main(void) {
  int i, j, k;
  for (i = 0; i < M; i++) {
    for (j = 0; j < N; j++) A[i][j] = ((i * 7 + j * 3) % 101) / 101.0;
    for (k = 0; k < K; k++) V[i][k] = ((i + 5 * k) % 17) / 17.0 - 0.5;
  }
  for (k = 0; k < K; k++) tau[k] = 1.0 / (M + k);
  struct timespec start, stop;
  clock_gettime(CLOCK_MONOTONIC, &start);
#pragma scop
  for (k = 0; k < K; k++)
    for (j = 0; j < N; j++) {
      w[j] = 0.0;
      for (i = 0; i < M; i++)
        w[j] += V[i][k] * A[i][j];
      for (i = 0; i < M; i++)
        A[i][j] -= tau[k] * V[i][k] * w[j];
    }
#pragma endscop
  clock_gettime(CLOCK_MONOTONIC, &stop);
  double cs = 0;
  for (i = 0; i < M; i++) for (j = 0; j < N; j++) cs += A[i][j] * ((i + j) % 7);
  printf("time: %.6f\n", (stop.tv_sec - start.tv_sec) + 1e-9 * (stop.tv_nsec - start.tv_nsec));
  printf("checksum: %.10e\n", cs);
  return 0;
}
