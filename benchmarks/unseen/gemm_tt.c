/* C = beta C + alpha A^T B^T with both operands stored transposed (BLAS dgemm with transa = transb = 'T'),
   900 x 1000 x 800. */
#include <stdio.h>
#include <time.h>
#ifndef M
#define M 900
#endif
#ifndef N
#define N 1000
#endif
#ifndef K
#define K 800
#endif
double A[K][M], B[N][K], C[M][N];
int main(void) {
  int i, j, k;
  double alpha = 1.25, beta = 0.75;
  for (k = 0; k < K; k++) for (i = 0; i < M; i++) A[k][i] = ((k * 3 + i) % 19) / 19.0;
  for (j = 0; j < N; j++) for (k = 0; k < K; k++) B[j][k] = ((j + 7 * k) % 23) / 23.0;
  for (i = 0; i < M; i++) for (j = 0; j < N; j++) C[i][j] = ((i + j) % 7) / 7.0;
  struct timespec start, stop;
  clock_gettime(CLOCK_MONOTONIC, &start);
#pragma scop
  for (i = 0; i < M; i++)
    for (j = 0; j < N; j++) {
      C[i][j] *= beta;
      for (k = 0; k < K; k++)
        C[i][j] += alpha * A[k][i] * B[j][k];
    }
#pragma endscop
  clock_gettime(CLOCK_MONOTONIC, &stop);
  double cs = 0;
  for (i = 0; i < M; i++) for (j = 0; j < N; j++) cs += C[i][j] * ((i + 2 * j) % 5);
  printf("time: %.6f\n", (stop.tv_sec - start.tv_sec) + 1e-9 * (stop.tv_nsec - start.tv_nsec));
  printf("checksum: %.10e\n", cs);
  return 0;
}
