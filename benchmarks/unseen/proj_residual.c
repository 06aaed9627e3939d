/* The residual of a low-rank reconstruction (PCA or reduced-basis codes): each of 8,000 samples of 512
   features minus its 64 coordinates times the 64 x 512 basis, the reconstruction formed one feature at a
   time (a dot product down a column of the basis) in a scratch vector, then subtracted. The values are
   multiples of 1/64, so every sum is exact in any order. */
#include <stdio.h>
#include <time.h>
#ifndef NS
#define NS 8000
#endif
#ifndef NK
#define NK 64
#endif
#ifndef NF
#define NF 512
#endif
double A[NS][NK], P[NK][NF], B[NS][NF], R[NS][NF], tmp[NF];
int main(void) {
  int n, j, k;
  for (n = 0; n < NS; n++) for (k = 0; k < NK; k++) A[n][k] = ((n * 5 + k * 3) % 31 - 15) / 16.0;
  for (k = 0; k < NK; k++) for (j = 0; j < NF; j++) P[k][j] = ((k * 11 + j * 7) % 27 - 13) / 64.0;
  for (n = 0; n < NS; n++) for (j = 0; j < NF; j++) B[n][j] = ((n + j * 9) % 41 - 20) / 8.0;
  struct timespec start, stop;
  clock_gettime(CLOCK_MONOTONIC, &start);
#pragma scop
  for (n = 0; n < NS; n++) {
    for (j = 0; j < NF; j++) {
      tmp[j] = 0.0;
      for (k = 0; k < NK; k++)
        tmp[j] += A[n][k] * P[k][j];
    }
    for (j = 0; j < NF; j++)
      R[n][j] = B[n][j] - tmp[j];
  }
#pragma endscop
  clock_gettime(CLOCK_MONOTONIC, &stop);
  double cs = 0;
  for (n = 0; n < NS; n++) for (j = 0; j < NF; j++) cs += R[n][j] * ((n + 3 * j) % 7);
  printf("time: %.6f\n", (stop.tv_sec - start.tv_sec) + 1e-9 * (stop.tv_nsec - start.tv_nsec));
  printf("checksum: %.10e\n", cs);
  return 0;
}
