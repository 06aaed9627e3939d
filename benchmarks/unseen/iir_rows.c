/* First-order IIR smoothing along the rows of a 16-channel signal (audio and sensor filters): per channel,
 * y[i] = alpha * y[i-1] + x[i], with the running value in a local scalar. Sizes are the function's
 * parameters, as a library routine has them (16 channels of 35,000 samples, 200 passes). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#ifndef NC
#define NC 16
#endif
#ifndef W
#define W 35000
#endif
#ifndef PASSES
#define PASSES 200
#endif

static void iir_rows(int passes, int nc, int w, double alpha, double x[nc][w], double y[nc][w])
{
#pragma scop
  for (int r = 0; r < passes; r++)
    for (int c = 0; c < nc; c++) {
      double acc = 0.0;
      for (int i = 0; i < w; i++) {
        acc = alpha * acc + x[c][i];
        y[c][i] = acc;
      }
    }
#pragma endscop
}

int main(int argc, char **argv)
{
  int nc = argc > 1 ? atoi(argv[1]) : NC, w = argc > 2 ? atoi(argv[2]) : W;
  double (*x)[w] = malloc(sizeof(double) * nc * w), (*y)[w] = malloc(sizeof(double) * nc * w);
  for (int c = 0; c < nc; c++)
    for (int i = 0; i < w; i++) {
      x[c][i] = ((c * 7 + i * 3) % 101) / 101.0;
      y[c][i] = 0.0;
    }
  struct timespec start, stop;
  clock_gettime(CLOCK_MONOTONIC, &start);
  iir_rows(PASSES, nc, w, 0.75, x, y);
  clock_gettime(CLOCK_MONOTONIC, &stop);
  double cs = 0;
  for (int c = 0; c < nc; c++)
    for (int i = 0; i < w; i++) cs += y[c][i] * ((c + i) % 7);
  printf("time: %.6f\n", (stop.tv_sec - start.tv_sec) + 1e-9 * (stop.tv_nsec - start.tv_nsec));
  printf("checksum: %.10e\n", cs);
  free(x);
  free(y);
  return 0;
}
