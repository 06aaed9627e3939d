/* gramschmidt.c -- PolyBench/C 4.2.1 gramschmidt: QR decomposition by modified Gram-Schmidt.
 * Size macros: M, N (defaults 60, 40; A and Q are M x N, R is N x N; M >= N so A has full rank).
 * Kernel and loop nests as in PolyBench 4.2.1 (the scalar nrm, sqrt, triangular j loop); bounds
 * are the int parameters. init_array: PolyBench's formula plus 100 on the diagonal (well
 * conditioned, no zero column). Output: per array written, its sum and a hash of its bytes. */
#pragma GCC diagnostic ignored "-Wunknown-pragmas" /* #pragma scop / endscop */
#include <math.h>
#include <stdio.h>

#ifndef M
#define M 60
#endif
#ifndef N
#define N 40
#endif

static double A[M][N], R[N][N], Q[M][N];

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
static void kernel_gramschmidt(int m, int n, double A[M][N], double R[N][N], double Q[M][N])
{
  int i, j, k;
  double nrm;
#pragma scop
  for (k = 0; k < n; k++)
    {
      nrm = 0.0;
      for (i = 0; i < m; i++)
        nrm += A[i][k] * A[i][k];
      R[k][k] = sqrt(nrm);
      for (i = 0; i < m; i++)
        Q[i][k] = A[i][k] / R[k][k];
      for (j = k + 1; j < n; j++)
        {
          R[k][j] = 0.0;
          for (i = 0; i < m; i++)
            R[k][j] += Q[i][k] * A[i][j];
          for (i = 0; i < m; i++)
            A[i][j] = A[i][j] - Q[i][k] * R[k][j];
        }
    }
#pragma endscop
}

int main(void)
{
  int i, j, m = M, n = N;

  for (i = 0; i < m; i++)
    for (j = 0; j < n; j++) {
      A[i][j] = (((double) ((i*j) % m) / m )*100) + 10 + (i == j ? 100.0 : 0.0);
      Q[i][j] = 0.0;
    }
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      R[i][j] = 0.0;

  kernel_gramschmidt(m, n, A, R, Q);

  dump("A", &A[0][0], (long)M * N);
  dump("R", &R[0][0], (long)N * N);
  dump("Q", &Q[0][0], (long)M * N);
  return 0;
}
