/* A dense layer over a batch of sequences (the projection of a transformer or an RNN, written row by row):
   each of 8 x 256 rows of 512 features times a 512 x 512 weight matrix, summed into an accumulator row that
   is cleared for every row, then the row plus a bias stored. The values are multiples of 1/64, so every sum
   is exact in any order. */
#include <stdio.h>
#include <time.h>
#ifndef NBATCH
#define NBATCH 8
#endif
#ifndef NROW
#define NROW 256
#endif
#ifndef NIN
#define NIN 512
#endif
#ifndef NOUT
#define NOUT 512
#endif
double X[NBATCH][NROW][NIN], W[NIN][NOUT], bias[NOUT], Y[NBATCH][NROW][NOUT], acc[NOUT];
int main(void) {
  int b, i, j, k;
  for (b = 0; b < NBATCH; b++) for (i = 0; i < NROW; i++) for (k = 0; k < NIN; k++) X[b][i][k] = ((b * 7 + i * 3 + k) % 29 - 14) / 16.0;
  for (k = 0; k < NIN; k++) for (j = 0; j < NOUT; j++) W[k][j] = ((k * 5 + j * 11) % 23 - 11) / 64.0;
  for (j = 0; j < NOUT; j++) bias[j] = (j % 13) / 8.0 - 0.75;
  struct timespec start, stop;
  clock_gettime(CLOCK_MONOTONIC, &start);
#pragma scop
  for (b = 0; b < NBATCH; b++)
    for (i = 0; i < NROW; i++) {
      for (j = 0; j < NOUT; j++)
        acc[j] = 0.0;
      for (k = 0; k < NIN; k++)
        for (j = 0; j < NOUT; j++)
          acc[j] += X[b][i][k] * W[k][j];
      for (j = 0; j < NOUT; j++)
        Y[b][i][j] = acc[j] + bias[j];
    }
#pragma endscop
  clock_gettime(CLOCK_MONOTONIC, &stop);
  double cs = 0;
  for (b = 0; b < NBATCH; b++) for (i = 0; i < NROW; i++) for (j = 0; j < NOUT; j++) cs += Y[b][i][j] * ((b + 2 * i + 3 * j) % 7);
  printf("time: %.6f\n", (stop.tv_sec - start.tv_sec) + 1e-9 * (stop.tv_nsec - start.tv_nsec));
  printf("checksum: %.10e\n", cs);
  return 0;
}
