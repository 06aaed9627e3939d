/* Many small matrix products (a batch of 16x16 by 16x16, as in block-sparse or attention heads): a kernel
   written after the schedules were built. */
#include <stdio.h>
#include <time.h>
#ifndef NB
#define NB 20000
#endif
#define S 16
double A[NB][S][S], B[NB][S][S], C[NB][S][S];
int main(void) {
  int b, i, j, k;
  for (b = 0; b < NB; b++) for (i = 0; i < S; i++) for (j = 0; j < S; j++) {
    A[b][i][j] = ((b + i * 3 + j) % 17) / 17.0; B[b][i][j] = ((b * 5 + i + 2 * j) % 13) / 13.0; C[b][i][j] = 0.0;
  }
  struct timespec start, stop;
  clock_gettime(CLOCK_MONOTONIC, &start);
#pragma scop
  for (b = 0; b < NB; b++)
    for (i = 0; i < S; i++)
      for (j = 0; j < S; j++)
        for (k = 0; k < S; k++)
          C[b][i][j] += A[b][i][k] * B[b][k][j];
#pragma endscop
  clock_gettime(CLOCK_MONOTONIC, &stop);
  double cs = 0;
  for (b = 0; b < NB; b++) for (i = 0; i < S; i++) for (j = 0; j < S; j++) cs += C[b][i][j] * ((b + i + j) % 5);
  printf("time: %.6f\n", (stop.tv_sec - start.tv_sec) + 1e-9 * (stop.tv_nsec - start.tv_nsec));
  printf("checksum: %.10e\n", cs);
  return 0;
}
