/* syrk.c -- PolyBench/C 4.2.1 syrk: C := alpha*A*A^T + beta*C (lower triangle).
 * Size macros: M, N (defaults 40, 50).
 * Kernel, loop nests and init_array as in PolyBench 4.2.1; bounds are the int parameters.
 * Output: per array written, its sum and a hash of its bytes. */
#pragma GCC diagnostic ignored "-Wunknown-pragmas" /* #pragma scop / endscop */
#include <stdio.h>

#ifndef M
#define M 40
#endif
#ifndef N
#define N 50
#endif

static double C[N][N], A[N][M];

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
static void kernel_syrk(int n, int m, double alpha, double beta, double C[N][N], double A[N][M])
{
  int i, j, k;
#pragma scop
  for (i = 0; i < n; i++) {
    for (j = 0; j <= i; j++)
      C[i][j] *= beta;
    for (k = 0; k < m; k++) {
      for (j = 0; j <= i; j++)
        C[i][j] += alpha * A[i][k] * A[j][k];
    }
  }
#pragma endscop
}

int main(void)
{
  int i, j, m = M, n = N;
  double alpha = 1.5, beta = 1.2;

  for (i = 0; i < n; i++)
    for (j = 0; j < m; j++)
      A[i][j] = (double) ((i*j+1)%n) / n;
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      C[i][j] = (double) ((i*j+2)%m) / m;

  kernel_syrk(n, m, alpha, beta, C, A);

  dump("C", &C[0][0], (long)N * N);
  return 0;
}
