/* symm.c -- PolyBench/C 4.2.1 symm: C := alpha*A*B + beta*C, A symmetric (lower triangle used).
 * Size macros: M, N (defaults 40, 50).
 * Kernel, loop nests and init_array as in PolyBench 4.2.1 (the scalar temp2, the triangular k loop);
 * bounds are the int parameters. Output: per array written, its sum and a hash of its bytes. */
#pragma GCC diagnostic ignored "-Wunknown-pragmas" /* #pragma scop / endscop */
#include <stdio.h>

#ifndef M
#define M 40
#endif
#ifndef N
#define N 50
#endif

static double C[M][N], A[M][M], B[M][N];

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
static void kernel_symm(int m, int n, double alpha, double beta, double C[M][N], double A[M][M], double B[M][N])
{
  int i, j, k;
  double temp2;
#pragma scop
  for (i = 0; i < m; i++)
    for (j = 0; j < n; j++ )
      {
        temp2 = 0;
        for (k = 0; k < i; k++) {
          C[k][j] += alpha*B[i][j] * A[i][k];
          temp2 += B[k][j] * A[i][k];
        }
        C[i][j] = beta * C[i][j] + alpha*B[i][j] * A[i][i] + alpha * temp2;
      }
#pragma endscop
}

int main(void)
{
  int i, j, m = M, n = N;
  double alpha = 1.5, beta = 1.2;

  for (i = 0; i < m; i++)
    for (j = 0; j < n; j++) {
      C[i][j] = (double) ((i+j) % 100) / m;
      B[i][j] = (double) ((n+i-j) % 100) / m;
    }
  for (i = 0; i < m; i++) {
    for (j = 0; j <= i; j++)
      A[i][j] = (double) ((i+j) % 100) / m;
    for (j = i+1; j < m; j++)
      A[i][j] = -999; /* regions of arrays that should not be used */
  }

  kernel_symm(m, n, alpha, beta, C, A, B);

  dump("C", &C[0][0], (long)M * N);
  return 0;
}
