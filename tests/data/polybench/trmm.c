/* trmm.c -- PolyBench/C 4.2.1 trmm: B := alpha*A^T*B, A unit lower triangular.
 * Size macros: M, N (defaults 40, 50).
 * Kernel, loop nests and init_array as in PolyBench 4.2.1 (k from i+1); bounds are the int parameters.
 * Output: per array written, its sum and a hash of its bytes. */
#pragma GCC diagnostic ignored "-Wunknown-pragmas" /* #pragma scop / endscop */
#include <stdio.h>

#ifndef M
#define M 40
#endif
#ifndef N
#define N 50
#endif

static double A[M][M], B[M][N];

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
static void kernel_trmm(int m, int n, double alpha, double A[M][M], double B[M][N])
{
  int i, j, k;
#pragma scop
  for (i = 0; i < m; i++)
    for (j = 0; j < n; j++) {
      for (k = i+1; k < m; k++)
        B[i][j] += A[k][i] * B[k][j];
      B[i][j] = alpha * B[i][j];
    }
#pragma endscop
}

int main(void)
{
  int i, j, m = M, n = N;
  double alpha = 1.5;

  for (i = 0; i < m; i++) {
    for (j = 0; j < i; j++)
      A[i][j] = (double)((i+j) % m)/m;
    A[i][i] = 1.0;
    for (j = 0; j < n; j++)
      B[i][j] = (double)((n+(i-j)) % n)/n;
  }

  kernel_trmm(m, n, alpha, A, B);

  dump("B", &B[0][0], (long)M * N);
  return 0;
}
