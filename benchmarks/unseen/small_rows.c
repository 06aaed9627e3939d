/* A small linear map applied to many points (a per-node transform in a mesh or particle code, a 1x1
   convolution over pixels): each of 400,000 rows of 24 values times a 24 x 24 matrix, summed into a 24-wide
   accumulator row cleared for every row, then a leaky ReLU stored. The values are multiples of 1/64, so every
   sum is exact in any order. */
#include <stdio.h>
#include <time.h>
#ifndef NROW
#define NROW 400000
#endif
#ifndef NIN
#define NIN 24
#endif
#ifndef NOUT
#define NOUT 24
#endif
double X[NROW][NIN], W[NIN][NOUT], Y[NROW][NOUT], acc[NOUT];
int main(void) {
  int i, j, k;
  for (i = 0; i < NROW; i++) for (k = 0; k < NIN; k++) X[i][k] = ((i * 7 + k * 5) % 37 - 18) / 16.0;
  for (k = 0; k < NIN; k++) for (j = 0; j < NOUT; j++) W[k][j] = ((k * 3 + j * 13) % 19 - 9) / 64.0;
  struct timespec start, stop;
  clock_gettime(CLOCK_MONOTONIC, &start);
#pragma scop
  for (i = 0; i < NROW; i++) {
    for (j = 0; j < NOUT; j++)
      acc[j] = 0.0;
    for (k = 0; k < NIN; k++)
      for (j = 0; j < NOUT; j++)
        acc[j] += X[i][k] * W[k][j];
    for (j = 0; j < NOUT; j++)
      Y[i][j] = acc[j] > 0.0 ? acc[j] : 0.125 * acc[j];
  }
#pragma endscop
  clock_gettime(CLOCK_MONOTONIC, &stop);
  double cs = 0;
  for (i = 0; i < NROW; i++) for (j = 0; j < NOUT; j++) cs += Y[i][j] * ((i + 3 * j) % 7);
  printf("time: %.6f\n", (stop.tv_sec - start.tv_sec) + 1e-9 * (stop.tv_nsec - start.tv_nsec));
  printf("checksum: %.10e\n", cs);
  return 0;
}
