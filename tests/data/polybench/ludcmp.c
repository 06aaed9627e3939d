/* ludcmp.c -- PolyBench/C 4.2.1 ludcmp: LU decomposition (scalar w), then forward and backward
 * substitution (the backward loop counts down).
 * Size macro: N (default 60).
 * Kernel and loop nests as in PolyBench 4.2.1; bounds are the int parameter. init_array: b, x, y as
 * in PolyBench; A strictly diagonally dominant (instead of PolyBench's L L^T) so LU without pivoting
 * is stable. Output: per array written, its sum and a hash of its bytes. */
#pragma GCC diagnostic ignored "-Wunknown-pragmas" /* #pragma scop / endscop */
#include <stdio.h>

#ifndef N
#define N 60
#endif

static double A[N][N], b[N], x[N], y[N];

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
static void kernel_ludcmp(int n, double A[N][N], double b[N], double x[N], double y[N])
{
  int i, j, k;
  double w;
#pragma scop
  for (i = 0; i < n; i++) {
    for (j = 0; j <i; j++) {
      w = A[i][j];
      for (k = 0; k < j; k++) {
        w -= A[i][k] * A[k][j];
      }
      A[i][j] = w / A[j][j];
    }
    for (j = i; j < n; j++) {
      w = A[i][j];
      for (k = 0; k < i; k++) {
        w -= A[i][k] * A[k][j];
      }
      A[i][j] = w;
    }
  }

  for (i = 0; i < n; i++) {
    w = b[i];
    for (j = 0; j < i; j++)
      w -= A[i][j] * y[j];
    y[i] = w;
  }

  for (i = n-1; i >=0; i--) {
    w = y[i];
    for (j = i+1; j < n; j++)
      w -= A[i][j] * x[j];
    x[i] = w / A[i][i];
  }
#pragma endscop
}

int main(void)
{
  int i, j, n = N;
  double fn = (double)n;

  for (i = 0; i < n; i++) {
    x[i] = 0;
    y[i] = 0;
    b[i] = (i+1)/fn/2.0 + 4;
  }
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      A[i][j] = (i == j) ? 2.0 * n + 8.0 : (double)((i * j + 1) % 7 + 1) / (1 + i + 2 * j);

  kernel_ludcmp(n, A, b, x, y);

  dump("A", &A[0][0], (long)N * N);
  dump("x", x, N);
  dump("y", y, N);
  return 0;
}
