/* An integer matrix product, 900 x 1000 by 1000 x 800 (quantized inference, counting paths): every result
   exact, so no reordering of the sums may change a bit. */
#include <stdio.h>
#include <time.h>
#ifndef M
#define M 900
#endif
#ifndef N
#define N 800
#endif
#ifndef K
#define K 1000
#endif
int A[M][K], B[K][N], C[M][N];
int main(void) {
  int i, j, k;
  for (i = 0; i < M; i++) for (k = 0; k < K; k++) A[i][k] = (i * 3 + k) % 19 - 9;
  for (k = 0; k < K; k++) for (j = 0; j < N; j++) B[k][j] = (j + 7 * k) % 23 - 11;
  for (i = 0; i < M; i++) for (j = 0; j < N; j++) C[i][j] = (i + j) % 3;
  struct timespec start, stop;
  clock_gettime(CLOCK_MONOTONIC, &start);
#pragma scop
  for (i = 0; i < M; i++)
    for (j = 0; j < N; j++)
      for (k = 0; k < K; k++)
        C[i][j] += A[i][k] * B[k][j];
#pragma endscop
  clock_gettime(CLOCK_MONOTONIC, &stop);
  long cs = 0;
  for (i = 0; i < M; i++) for (j = 0; j < N; j++) cs += (long)C[i][j] * ((i + 2 * j) % 5);
  printf("time: %.6f\n", (stop.tv_sec - start.tv_sec) + 1e-9 * (stop.tv_nsec - start.tv_nsec));
  printf("checksum: %ld\n", cs);
  return 0;
}
