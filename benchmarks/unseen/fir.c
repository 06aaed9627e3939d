/* A 64-tap FIR filter over 8 channels of 400,000 samples (signal processing): y[c][i] = sum_k h[k] x[c][i+k]. */
#include <stdio.h>
#include <time.h>
#ifndef C
#define C 8
#endif
#ifndef L
#define L 400000
#endif
#ifndef K
#define K 64
#endif
double x[C][L + K], y[C][L], h[K];
int main(void) {
  int c, i, k;
  for (c = 0; c < C; c++) for (i = 0; i < L + K; i++) x[c][i] = ((c * 5 + i * 3) % 97) / 97.0;
  for (k = 0; k < K; k++) h[k] = 1.0 / (k + 1);
  for (c = 0; c < C; c++) for (i = 0; i < L; i++) y[c][i] = 0.0;
  struct timespec start, stop;
  clock_gettime(CLOCK_MONOTONIC, &start);
#pragma scop
  for (c = 0; c < C; c++)
    for (i = 0; i < L; i++)
      for (k = 0; k < K; k++)
        y[c][i] += h[k] * x[c][i + k];
#pragma endscop
  clock_gettime(CLOCK_MONOTONIC, &stop);
  double cs = 0;
  for (c = 0; c < C; c++) for (i = 0; i < L; i++) cs += y[c][i] * ((c + i) % 7);
  printf("time: %.6f\n", (stop.tv_sec - start.tv_sec) + 1e-9 * (stop.tv_nsec - start.tv_nsec));
  printf("checksum: %.10e\n", cs);
  return 0;
}
