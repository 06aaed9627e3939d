/* bicg.c -- PolyBench/C 4.2.1 bicg: s := A^T r; q := A p (BiCG sub-kernel).
 * Size macros: M, N (defaults 58, 62; A is N x M).
 * Kernel, loop nests and init_array as in PolyBench 4.2.1; bounds are the int parameters.
 * Output: per array written, its sum and a hash of its bytes. */
#pragma GCC diagnostic ignored "-Wunknown-pragmas" /* #pragma scop / endscop */
#include <stdio.h>

#ifndef M
#define M 58
#endif
#ifndef N
#define N 62
#endif

static double A[N][M], s[M], q[N], p[M], r[N];

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
static void kernel_bicg(int m, int n, double A[N][M], double s[M], double q[N], double p[M], double r[N])
{
  int i, j;
#pragma scop
  for (i = 0; i < m; i++)
    s[i] = 0;
  for (i = 0; i < n; i++)
    {
      q[i] = 0.0;
      for (j = 0; j < m; j++)
        {
          s[j] = s[j] + r[i] * A[i][j];
          q[i] = q[i] + A[i][j] * p[j];
        }
    }
#pragma endscop
}

int main(void)
{
  int i, j, m = M, n = N;

  for (i = 0; i < m; i++)
    p[i] = (double)(i % m) / m;
  for (i = 0; i < n; i++) {
    r[i] = (double)(i % n) / n;
    for (j = 0; j < m; j++)
      A[i][j] = (double) (i*(j+1) % n) / n;
  }

  kernel_bicg(m, n, A, s, q, p, r);

  dump("s", s, M);
  dump("q", q, N);
  return 0;
}
