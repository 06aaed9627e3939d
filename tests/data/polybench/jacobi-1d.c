/* jacobi-1d.c -- PolyBench/C 4.2.1 jacobi-1d: 1-d Jacobi stencil, two arrays alternating.
 * Size macros: N, TSTEPS (defaults 100, 10).
 * Kernel, loop nests and init_array as in PolyBench 4.2.1; bounds are the int parameters.
 * Output: per array written, its sum and a hash of its bytes. */
#pragma GCC diagnostic ignored "-Wunknown-pragmas" /* #pragma scop / endscop */
#include <stdio.h>

#ifndef N
#define N 100
#endif
#ifndef TSTEPS
#define TSTEPS 10
#endif

static double A[N], B[N];

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
static void kernel_jacobi_1d(int tsteps, int n, double A[N], double B[N])
{
  int t, i;
#pragma scop
  for (t = 0; t < tsteps; t++)
    {
      for (i = 1; i < n - 1; i++)
        B[i] = 0.33333 * (A[i-1] + A[i] + A[i+1]);
      for (i = 1; i < n - 1; i++)
        A[i] = 0.33333 * (B[i-1] + B[i] + B[i+1]);
    }
#pragma endscop
}

int main(void)
{
  int i, n = N;

  for (i = 0; i < n; i++) {
    A[i] = ((double) i+ 2) / n;
    B[i] = ((double) i+ 3) / n;
  }

  kernel_jacobi_1d(TSTEPS, n, A, B);

  dump("A", A, N);
  dump("B", B, N);
  return 0;
}
