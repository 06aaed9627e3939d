/* self_attention.c -- single-head attention: S = Q K^T / sqrt(d), row softmax(S), O = S V.
 * Size macros: N = sequence length (default 4000), D = head dimension (default 64).
 * Style: kernel function with int-parameter sizes, iterators declared at top;
 * row max / row sum kept in arrays m[], l[] (no scalar temporaries). */
#define _POSIX_C_SOURCE 199309L
#pragma GCC diagnostic ignored "-Wunknown-pragmas" /* #pragma scop / endscop */
#include <math.h>
#include <stdio.h>
#include <time.h>

#ifndef N
#define N 4000
#endif
#ifndef D
#define D 64
#endif

static double Q[N][D], K[N][D], V[N][D], S[N][N], O[N][D], m[N], l[N];

static void kernel_attention(int n, int d, double scale, double Q[n][d], double K[n][d],
                             double V[n][d], double S[n][n], double O[n][d],
                             double m[n], double l[n])
{
  int i, j, k;
#pragma scop
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++) {
      S[i][j] = 0.0;
      for (k = 0; k < d; k++)
        S[i][j] += Q[i][k] * K[j][k];
      S[i][j] *= scale;
    }
  for (i = 0; i < n; i++) {
    m[i] = S[i][0];
    for (j = 1; j < n; j++)
      m[i] = fmax(m[i], S[i][j]);
    l[i] = 0.0;
    for (j = 0; j < n; j++) {
      S[i][j] = exp(S[i][j] - m[i]);
      l[i] += S[i][j];
    }
    for (j = 0; j < n; j++)
      S[i][j] /= l[i];
  }
  for (i = 0; i < n; i++)
    for (k = 0; k < d; k++) {
      O[i][k] = 0.0;
      for (j = 0; j < n; j++)
        O[i][k] += S[i][j] * V[j][k];
    }
#pragma endscop
}

int main(void)
{
  int i, j;
  struct timespec t0, t1;
  double cs = 0.0;

  for (i = 0; i < N; i++)
    for (j = 0; j < D; j++) {
      Q[i][j] = (double)((i * j + 1) % 37) / 37.0 - 0.5;
      K[i][j] = (double)((i * (j + 2) + 5) % 41) / 41.0 - 0.5;
      V[i][j] = (double)((i + 3 * j) % 23) / 23.0;
    }

  clock_gettime(CLOCK_MONOTONIC, &t0);
  kernel_attention(N, D, 1.0 / sqrt((double)D), Q, K, V, S, O, m, l);
  clock_gettime(CLOCK_MONOTONIC, &t1);

  for (i = 0; i < N; i++) {
    for (j = 0; j < N; j++)
      cs += S[i][j] * (1 + (i * 7 + j) % 13);
    for (j = 0; j < D; j++)
      cs += O[i][j] * (1 + (i * 5 + j) % 11);
    cs += m[i] * (1 + i % 7) + l[i] * (1 + i % 5);
  }
  printf("time: %.6f\n", (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec));
  printf("checksum: %.10e\n", cs);
  return 0;
}
