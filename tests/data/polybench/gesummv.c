/* gesummv.c -- PolyBench/C 4.2.1 gesummv: y := alpha*A*x + beta*B*x.
 * Size macro: N (default 90).
 * Kernel, loop nests and init_array as in PolyBench 4.2.1; bounds are the int parameter.
 * Output: per array written, its sum and a hash of its bytes. */
#pragma GCC diagnostic ignored "-Wunknown-pragmas" /* #pragma scop / endscop */
#include <stdio.h>

#ifndef N
#define N 90
#endif

static double A[N][N], B[N][N], tmp[N], x[N], y[N];

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
static void kernel_gesummv(int n, double alpha, double beta, double A[N][N], double B[N][N], double tmp[N],
                           double x[N], double y[N])
{
  int i, j;
#pragma scop
  for (i = 0; i < n; i++)
    {
      tmp[i] = 0.0;
      y[i] = 0.0;
      for (j = 0; j < n; j++)
        {
          tmp[i] = A[i][j] * x[j] + tmp[i];
          y[i] = B[i][j] * x[j] + y[i];
        }
      y[i] = alpha * tmp[i] + beta * y[i];
    }
#pragma endscop
}

int main(void)
{
  int i, j, n = N;
  double alpha = 1.5, beta = 1.2;

  for (i = 0; i < n; i++) {
    x[i] = (double)(i % n) / n;
    for (j = 0; j < n; j++) {
      A[i][j] = (double) ((i*j+1) % n) / n;
      B[i][j] = (double) ((i*j+2) % n) / n;
    }
  }

  kernel_gesummv(n, alpha, beta, A, B, tmp, x, y);

  dump("tmp", tmp, N);
  dump("y", y, N);
  return 0;
}
