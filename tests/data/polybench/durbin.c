/* durbin.c -- PolyBench/C 4.2.1 durbin: Levinson-Durbin solution of a Yule-Walker (Toeplitz) system.
 * Size macro: N (default 60).
 * Kernel and loop nests as in PolyBench 4.2.1 (scalars alpha, beta, sum carried across k; the
 * temporary z a local array of the kernel function); bounds are the int parameter.
 * init_array: PolyBench's r[i] = n+1-i, scaled by 1/(4 n (i+1)^2) so that the Toeplitz matrix
 * [1, r0, r1, ...] is diagonally dominant and the result finite and moderate.
 * Output: per array written, its sum and a hash of its bytes. */
#pragma GCC diagnostic ignored "-Wunknown-pragmas" /* #pragma scop / endscop */
#include <stdio.h>

#ifndef N
#define N 60
#endif

static double r[N], y[N];

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
static void kernel_durbin(int n, double r[N], double y[N])
{
  double z[N];
  double alpha;
  double beta;
  double sum;
  int i, k;
#pragma scop
  y[0] = -r[0];
  beta = 1.0;
  alpha = -r[0];

  for (k = 1; k < n; k++) {
    beta = (1-alpha*alpha)*beta;
    sum = 0.0;
    for (i=0; i<k; i++) {
      sum += r[k-i-1]*y[i];
    }
    alpha = - (r[k] + sum)/beta;

    for (i=0; i<k; i++) {
      z[i] = y[i] + alpha*y[k-i-1];
    }
    for (i=0; i<k; i++) {
      y[i] = z[i];
    }
    y[k] = alpha;
  }
#pragma endscop
}

int main(void)
{
  int i, n = N;

  for (i = 0; i < n; i++)
    r[i] = (n+1-i) / (4.0 * n * (i+1) * (i+1));

  kernel_durbin(n, r, y);

  dump("y", y, N);
  return 0;
}
