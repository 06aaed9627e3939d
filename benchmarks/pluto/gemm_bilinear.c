/* gemm_bilinear.c -- batched bilinear form O[i][j] = sum_k sum_l X[i][k]*W[k][l]*Y[j][l],
 * computed as two matmul-like nests: T = X*W, then O = T*Y^T.
 * Size macro: N (default 1000).
 * Style: global arrays sized by macro, scop in main, iterators declared at top. */
#define _POSIX_C_SOURCE 199309L
#pragma GCC diagnostic ignored "-Wunknown-pragmas" /* #pragma scop / endscop */
#include <stdio.h>
#include <time.h>

#ifndef N
#define N 1000
#endif

static double X[N][N], W[N][N], Y[N][N], T[N][N], O[N][N];

int main(void)
{
  int i, j, k, l;
  struct timespec t0, t1;
  double cs = 0.0;

  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++) {
      X[i][j] = (double)((i * j + 1) % N) / N;
      W[i][j] = (double)((i + 2 * j) % N) / N - 0.5;
      Y[i][j] = (double)((i * (j + 1) + 3) % N) / N;
    }

  clock_gettime(CLOCK_MONOTONIC, &t0);
#pragma scop
  for (i = 0; i < N; i++)
    for (l = 0; l < N; l++) {
      T[i][l] = 0.0;
      for (k = 0; k < N; k++)
        T[i][l] += X[i][k] * W[k][l];
    }
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++) {
      O[i][j] = 0.0;
      for (l = 0; l < N; l++)
        O[i][j] += T[i][l] * Y[j][l];
    }
#pragma endscop
  clock_gettime(CLOCK_MONOTONIC, &t1);

  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      cs += T[i][j] * (1 + (i * 7 + j) % 13) + O[i][j] * (1 + (i * 5 + j) % 11);
  printf("time: %.6f\n", (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec));
  printf("checksum: %.10e\n", cs);
  return 0;
}
