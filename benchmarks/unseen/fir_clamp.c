/* A 16-tap causal FIR filter over 8 channels of 400,000 samples, the samples before the start held at the first
   one (an index clamped by an if, audio code's edge handling), repeated T times: a kernel written after the split
   of clamps. */
#include <stdio.h>
#include <time.h>
#ifndef C
#define C 8
#endif
#ifndef L
#define L 400000
#endif
#ifndef K
#define K 16
#endif
#ifndef T
#define T 3
#endif
float x[C][L], y[C][L], h[K];
int main(void) {
  int t, c, n, k;
  for (c = 0; c < C; c++) for (n = 0; n < L; n++) x[c][n] = (float)((c * 31 + n * 7) % 97) / 128.0f;
  for (k = 0; k < K; k++) h[k] = (float)(K - k) / (K * K);
  struct timespec start, stop;
  clock_gettime(CLOCK_MONOTONIC, &start);
#pragma scop
  for (t = 0; t < T; t++)
    for (c = 0; c < C; c++)
      for (n = 0; n < L; n++) {
        y[c][n] = 0.001f * t;
        for (k = 0; k < K; k++) {
          int s = n - k;
          if (s < 0)
            s = 0;
          y[c][n] += h[k] * x[c][s];
        }
      }
#pragma endscop
  clock_gettime(CLOCK_MONOTONIC, &stop);
  double cs = 0;
  for (c = 0; c < C; c++) for (n = 0; n < L; n++) cs += y[c][n] * ((c + 2 * n) % 11);
  printf("time: %.6f\n", (stop.tv_sec - start.tv_sec) + 1e-9 * (stop.tv_nsec - start.tv_nsec));
  printf("checksum: %.10e\n", cs);
  return 0;
}
