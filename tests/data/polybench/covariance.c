/* covariance.c -- PolyBench/C 4.2.1 covariance: column means, centring, cov = data^T data / (n-1).
 * Size macros: M, N (defaults 40, 50; data is N x M).
 * Kernel, loop nests and init_array as in PolyBench 4.2.1 (float_n a scalar parameter, the
 * triangular j loop and the symmetric copy); bounds are the int parameters.
 * Output: per array written, its sum and a hash of its bytes. */
#pragma GCC diagnostic ignored "-Wunknown-pragmas" /* #pragma scop / endscop */
#include <stdio.h>

#ifndef M
#define M 40
#endif
#ifndef N
#define N 50
#endif

static double data[N][M], cov[M][M], mean[M];

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
static void kernel_covariance(int m, int n, double float_n, double data[N][M], double cov[M][M], double mean[M])
{
  int i, j, k;
#pragma scop
  for (j = 0; j < m; j++)
    {
      mean[j] = 0.0;
      for (i = 0; i < n; i++)
        mean[j] += data[i][j];
      mean[j] /= float_n;
    }

  for (i = 0; i < n; i++)
    for (j = 0; j < m; j++)
      data[i][j] -= mean[j];

  for (i = 0; i < m; i++)
    for (j = i; j < m; j++)
      {
        cov[i][j] = 0.0;
        for (k = 0; k < n; k++)
          cov[i][j] += data[k][i] * data[k][j];
        cov[i][j] /= (float_n - 1.0);
        cov[j][i] = cov[i][j];
      }
#pragma endscop
}

int main(void)
{
  int i, j, m = M, n = N;
  double float_n = (double)n;

  for (i = 0; i < n; i++)
    for (j = 0; j < m; j++)
      data[i][j] = ((double) i*j) / M;

  kernel_covariance(m, n, float_n, data, cov, mean);

  dump("data", &data[0][0], (long)N * M);
  dump("cov", &cov[0][0], (long)M * M);
  dump("mean", mean, M);
  return 0;
}
