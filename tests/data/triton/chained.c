/* Chained assignments (C's a = b = e) in a GPU-mapped nest and in scalar statements. */
#pragma GCC diagnostic ignored "-Wunknown-pragmas" /* #pragma scop / endscop */
#include <stdio.h>

#ifndef N
#define N 40
#endif

static double A[N][N], B[N][N], C[N][N];
static float F[N];

int main(void)
{
  double s, t;
  double cs = 0.0;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      A[i][j] = (double)((i * 7 + j * 3) % 11) / 11.0 - 0.3;
#pragma scop
  s = t = 0.5;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      B[i][j] = C[i][j] = A[i][j] * s + t;
  for (int i = 0; i < N; i++)
    F[i] = C[i][i] = B[i][i] * 3.0; /* a double value through a float: F holds it rounded, C does not */
#pragma endscop
  for (int i = 0; i < N; i++) {
    cs += F[i];
    for (int j = 0; j < N; j++)
      cs += B[i][j] * (1 + (i + 2 * j) % 5) + C[i][j];
  }
  printf("checksum %.10e\n", cs);
  return 0;
}
