/* A batch of 3,000 small matrix products, 44 x 52 by 52 x 72 (a mini-batch of dense layers, the blocks of a
   block-sparse solver), the batch loop outermost: each product fits in the L2 cache. */
#include <stdio.h>
#include <time.h>
#ifndef NB
#define NB 3000
#endif
#ifndef M
#define M 44
#endif
#ifndef N
#define N 72
#endif
#ifndef K
#define K 52
#endif
double A[NB][M][K], B[NB][K][N], C[NB][M][N];
int main(void) {
  int b, i, j, k;
  for (b = 0; b < NB; b++) {
    for (i = 0; i < M; i++) for (k = 0; k < K; k++) A[b][i][k] = ((b + i * 3 + k) % 17) / 17.0;
    for (k = 0; k < K; k++) for (j = 0; j < N; j++) B[b][k][j] = ((b * 5 + k + 2 * j) % 13) / 13.0;
    for (i = 0; i < M; i++) for (j = 0; j < N; j++) C[b][i][j] = 0.0;
  }
  struct timespec start, stop;
  clock_gettime(CLOCK_MONOTONIC, &start);
#pragma scop
  for (b = 0; b < NB; b++)
    for (i = 0; i < M; i++)
      for (j = 0; j < N; j++)
        for (k = 0; k < K; k++)
          C[b][i][j] += A[b][i][k] * B[b][k][j];
#pragma endscop
  clock_gettime(CLOCK_MONOTONIC, &stop);
  double cs = 0;
  for (b = 0; b < NB; b++) for (i = 0; i < M; i++) for (j = 0; j < N; j++) cs += C[b][i][j] * ((b + i + j) % 5);
  printf("time: %.6f\n", (stop.tv_sec - start.tv_sec) + 1e-9 * (stop.tv_nsec - start.tv_nsec));
  printf("checksum: %.10e\n", cs);
  return 0;
}
