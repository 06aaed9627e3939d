/* gemm_layernorm.c -- C = A*B, then row-wise layer norm: C = scale*(C-mean)/sqrt(var+eps) + shift.
 * Size macro: N (default 1500).
 * Style: kernel function with int-parameter size, C99 loop declarations,
 * scalar temporaries (mean, var) written inside the scop. */
#define _POSIX_C_SOURCE 199309L
#pragma GCC diagnostic ignored "-Wunknown-pragmas" /* #pragma scop / endscop */
#include <math.h>
#include <stdio.h>
#include <time.h>

#ifndef N
#define N 1500
#endif

static double A[N][N], B[N][N], C[N][N], scale[N], shift[N];
static double mean, var;

static void kernel_gemm_layernorm(int n, double C[n][n], double A[n][n], double B[n][n],
                                  double scale[n], double shift[n])
{
#pragma scop
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < n; j++)
      C[i][j] = 0.0;
    for (int k = 0; k < n; k++)
      for (int j = 0; j < n; j++)
        C[i][j] += A[i][k] * B[k][j];
  }
  for (int i = 0; i < n; i++) {
    mean = 0.0;
    for (int j = 0; j < n; j++)
      mean += C[i][j];
    mean = mean / n;
    var = 0.0;
    for (int j = 0; j < n; j++)
      var += (C[i][j] - mean) * (C[i][j] - mean);
    var = var / n;
    for (int j = 0; j < n; j++)
      C[i][j] = scale[j] * (C[i][j] - mean) / sqrt(var + 1e-5) + shift[j];
  }
#pragma endscop
}

int main(void)
{
  struct timespec t0, t1;
  double cs = 0.0;

  for (int i = 0; i < N; i++) {
    scale[i] = 1.0 + (double)(i % 5) / 10.0;
    shift[i] = (double)(i % 3) / 3.0;
    for (int j = 0; j < N; j++) {
      A[i][j] = (double)((i * j + 1) % N) / N;
      B[i][j] = (double)((i * (j + 2) + 1) % N) / N - 0.3;
    }
  }

  clock_gettime(CLOCK_MONOTONIC, &t0);
  kernel_gemm_layernorm(N, C, A, B, scale, shift);
  clock_gettime(CLOCK_MONOTONIC, &t1);

  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      cs += C[i][j] * (1 + (i * 7 + j) % 13);
  cs += mean + var;
  printf("time: %.6f\n", (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec));
  printf("checksum: %.10e\n", cs);
  return 0;
}
