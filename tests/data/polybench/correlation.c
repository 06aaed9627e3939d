/* correlation.c -- PolyBench/C 4.2.1 correlation: means, standard deviations (sqrt, the
 * near-zero guard as a data-dependent ?:), centring and reduction, then the correlation matrix.
 * Size macros: M, N (defaults 40, 50; data is N x M).
 * Kernel and loop nests as in PolyBench 4.2.1; bounds are the int parameters. init_array: see main.
 * Output: per array written, its sum and a hash of its bytes. */
#pragma GCC diagnostic ignored "-Wunknown-pragmas" /* #pragma scop / endscop */
#include <math.h>
#include <stdio.h>

#ifndef M
#define M 40
#endif
#ifndef N
#define N 50
#endif

static double data[N][M], corr[M][M], mean[M], stddev[M];

/* Prints one line per array: the sum (%.17g) and an FNV-1a hash of the raw bytes (last-bit exact). */
static void dump(const char *name, const double *a, long n)
{
  unsigned long long h = 1469598103934665603ULL;
  const unsigned char *p = (const unsigned char *)a;
  double s = 0.0;
  for (long i = 0; i < n * (long)sizeof(double); i++) {
    h ^= p[i];
    h *= 1099511628211ULL;
  }
  for (long i = 0; i < n; i++)
    s += a[i];
  printf("%s: sum %.17g hash %016llx\n", name, s, h);
}
static void kernel_correlation(int m, int n, double float_n, double data[N][M], double corr[M][M],
                               double mean[M], double stddev[M])
{
  int i, j, k;
  double eps = 0.1;
#pragma scop
  for (j = 0; j < m; j++)
    {
      mean[j] = 0.0;
      for (i = 0; i < n; i++)
        mean[j] += data[i][j];
      mean[j] /= float_n;
    }

  for (j = 0; j < m; j++)
    {
      stddev[j] = 0.0;
      for (i = 0; i < n; i++)
        stddev[j] += (data[i][j] - mean[j]) * (data[i][j] - mean[j]);
      stddev[j] /= float_n;
      stddev[j] = sqrt(stddev[j]);
      /* The following in an inelegant but usual way to handle
         near-zero std. dev. values, which below would cause a zero-
         divide. */
      stddev[j] = stddev[j] <= eps ? 1.0 : stddev[j];
    }

  /* Center and reduce the column vectors. */
  for (i = 0; i < n; i++)
    for (j = 0; j < m; j++)
      {
        data[i][j] -= mean[j];
        data[i][j] /= sqrt(float_n) * stddev[j];
      }

  /* Calculate the m * m correlation matrix. */
  for (i = 0; i < m-1; i++)
    {
      corr[i][i] = 1.0;
      for (j = i+1; j < m; j++)
        {
          corr[i][j] = 0.0;
          for (k = 0; k < n; k++)
            corr[i][j] += (data[k][i] * data[k][j]);
          corr[j][i] = corr[i][j];
        }
    }
  corr[m-1][m-1] = 1.0;
#pragma endscop
}

int main(void)
{
  int i, j, m = M, n = N;
  double float_n = (double)N;

  /* PolyBench's data[i][j] = i*j/M + i makes every column a multiple of column 0 (all correlations 1):
     a term varying with i and j is added, and column 1 is constant so the near-zero stddev guard fires. */
  for (i = 0; i < N; i++)
    for (j = 0; j < M; j++)
      data[i][j] = j == 1 ? 3.0 : (double)(i*j)/M + i + (double)((i*i + 3*j) % 11) / 4.0;

  kernel_correlation(m, n, float_n, data, corr, mean, stddev);

  dump("data", &data[0][0], (long)N * M);
  dump("corr", &corr[0][0], (long)M * M);
  dump("mean", mean, M);
  dump("stddev", stddev, M);
  return 0;
}
