/* trisolv.c -- PolyBench/C 4.2.1 trisolv: forward substitution L x = b.
 * Size macro: N (default 80).
 * Kernel and loop nests as in PolyBench 4.2.1 (bounds are the size macro, as PolyBench's _PB_N
 * expands to by default). init_array: PolyBench's, with the diagonal raised to 2n (diagonally
 * dominant: the solution stays moderate). Output: per array written, its sum and a hash of its bytes. */
#pragma GCC diagnostic ignored "-Wunknown-pragmas" /* #pragma scop / endscop */
#include <stdio.h>

#ifndef N
#define N 80
#endif
#define _PB_N N

static double L[N][N], x[N], b[N];

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
static void kernel_trisolv(int n, double L[N][N], double x[N], double b[N])
{
  int i, j;
#pragma scop
  for (i = 0; i < _PB_N; i++)
    {
      x[i] = b[i];
      for (j = 0; j <i; j++)
        x[i] -= L[i][j] * x[j];
      x[i] = x[i] / L[i][i];
    }
#pragma endscop
}

int main(void)
{
  int i, j, n = N;

  for (i = 0; i < n; i++) {
    x[i] = - 999;
    b[i] =  i ;
    for (j = 0; j <= i; j++)
      L[i][j] = (double) (i+n-j+1)*2/n;
    L[i][i] = 2.0 * n;
  }

  kernel_trisolv(n, L, x, b);

  dump("x", x, N);
  return 0;
}
