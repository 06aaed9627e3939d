/* A fully connected layer over a small batch (inference libraries): for each of 16 inputs of 512 features,
 * 8,192 outputs, each a bias plus a dot product accumulated in a local scalar. Sizes are the function's
 * parameters, as a library's layer routine has them; the batch is small, the layer wide. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#ifndef BATCH
#define BATCH 16
#endif
#ifndef NOUT
#define NOUT 8192
#endif
#ifndef NIN
#define NIN 512
#endif

static void dense(int batch, int nout, int nin, double x[batch][nin], double w[nout][nin], double bias[nout],
                  double y[batch][nout])
{
#pragma scop
  for (int b = 0; b < batch; b++)
    for (int o = 0; o < nout; o++) {
      double s = bias[o];
      for (int i = 0; i < nin; i++)
        s += w[o][i] * x[b][i];
      y[b][o] = s > 0.0 ? s : 0.0;
    }
#pragma endscop
}

int main(int argc, char **argv)
{
  int batch = argc > 1 ? atoi(argv[1]) : BATCH, nout = argc > 2 ? atoi(argv[2]) : NOUT;
  int nin = argc > 3 ? atoi(argv[3]) : NIN;
  double (*x)[nin] = malloc(sizeof(double) * batch * nin), (*w)[nin] = malloc(sizeof(double) * nout * nin);
  double *bias = malloc(sizeof(double) * nout), (*y)[nout] = malloc(sizeof(double) * batch * nout);
  for (int b = 0; b < batch; b++)
    for (int i = 0; i < nin; i++) x[b][i] = ((b * 7 + i * 3) % 101) / 101.0 - 0.5;
  for (int o = 0; o < nout; o++) {
    bias[o] = (o % 13) / 13.0 - 0.25;
    for (int i = 0; i < nin; i++) w[o][i] = ((o * 5 + i * 11) % 97) / 97.0 - 0.5;
  }
  struct timespec start, stop;
  clock_gettime(CLOCK_MONOTONIC, &start);
  dense(batch, nout, nin, x, w, bias, y);
  clock_gettime(CLOCK_MONOTONIC, &stop);
  double cs = 0;
  for (int b = 0; b < batch; b++)
    for (int o = 0; o < nout; o++) cs += y[b][o] * ((b + o) % 7);
  printf("time: %.6f\n", (stop.tv_sec - start.tv_sec) + 1e-9 * (stop.tv_nsec - start.tv_nsec));
  printf("checksum: %.10e\n", cs);
  free(x);
  free(w);
  free(bias);
  free(y);
  return 0;
}
