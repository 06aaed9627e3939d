/* gemver.c -- PolyBench 4.2 gemver: A += u1 v1^T + u2 v2^T; x += beta A^T y; x += z;
 * w += alpha A x.
 * Size macro: N (default 8000).
 * Style: global arrays sized by macro, scop in main, C99 loop declarations. */
#define _POSIX_C_SOURCE 199309L
#pragma GCC diagnostic ignored "-Wunknown-pragmas" /* #pragma scop / endscop */
#include <stdio.h>
#include <time.h>

#ifndef N
#define N 8000
#endif

static double A[N][N], u1[N], v1[N], u2[N], v2[N], w[N], x[N], y[N], z[N];

int main(void)
{
  struct timespec t0, t1;
  double cs = 0.0, alpha = 1.5, beta = 1.2, fn = N;

  for (int i = 0; i < N; i++) {
    u1[i] = i;
    u2[i] = ((i + 1) / fn) / 2.0;
    v1[i] = ((i + 1) / fn) / 4.0;
    v2[i] = ((i + 1) / fn) / 6.0;
    y[i] = ((i + 1) / fn) / 8.0;
    z[i] = ((i + 1) / fn) / 9.0;
    x[i] = 0.0;
    w[i] = 0.0;
    for (int j = 0; j < N; j++)
      A[i][j] = (double)((long)i * j % N) / N;
  }

  clock_gettime(CLOCK_MONOTONIC, &t0);
#pragma scop
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      A[i][j] = A[i][j] + u1[i] * v1[j] + u2[i] * v2[j];
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      x[i] = x[i] + beta * A[j][i] * y[j];
  for (int i = 0; i < N; i++)
    x[i] = x[i] + z[i];
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      w[i] = w[i] + alpha * A[i][j] * x[j];
#pragma endscop
  clock_gettime(CLOCK_MONOTONIC, &t1);

  for (int i = 0; i < N; i++) {
    cs += w[i] * (1 + (i * 7) % 13) + x[i] * (1 + (i * 5) % 11);
    for (int j = 0; j < N; j++)
      cs += A[i][j] * (1 + (i * 3 + j) % 7);
  }
  printf("time: %.6f\n", (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec));
  printf("checksum: %.10e\n", cs);
  return 0;
}
