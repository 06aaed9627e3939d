/* 2mm.c -- PolyBench/C 4.2.1 2mm: D := alpha*A*B*C + beta*D (tmp := alpha*A*B; D := beta*D + tmp*C).
 * Size macros: NI, NJ, NK, NL (defaults 40, 50, 60, 70).
 * Kernel, loop nests and init_array as in PolyBench 4.2.1; bounds are the int parameters
 * (POLYBENCH_USE_SCALAR_LB style). Output: per array written, its sum and a hash of its bytes. */
#pragma GCC diagnostic ignored "-Wunknown-pragmas" /* #pragma scop / endscop */
#include <stdio.h>

#ifndef NI
#define NI 40
#endif
#ifndef NJ
#define NJ 50
#endif
#ifndef NK
#define NK 60
#endif
#ifndef NL
#define NL 70
#endif

static double tmp[NI][NJ], A[NI][NK], B[NK][NJ], C[NJ][NL], D[NI][NL];

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
static void kernel_2mm(int ni, int nj, int nk, int nl, double alpha, double beta, double tmp[NI][NJ],
                       double A[NI][NK], double B[NK][NJ], double C[NJ][NL], double D[NI][NL])
{
  int i, j, k;
#pragma scop
  /* D := alpha*A*B*C + beta*D */
  for (i = 0; i < ni; i++)
    for (j = 0; j < nj; j++)
      {
        tmp[i][j] = 0.0;
        for (k = 0; k < nk; ++k)
          tmp[i][j] += alpha * A[i][k] * B[k][j];
      }
  for (i = 0; i < ni; i++)
    for (j = 0; j < nl; j++)
      {
        D[i][j] *= beta;
        for (k = 0; k < nj; ++k)
          D[i][j] += tmp[i][k] * C[k][j];
      }
#pragma endscop
}

int main(void)
{
  int i, j, ni = NI, nj = NJ, nk = NK, nl = NL;
  double alpha = 1.5, beta = 1.2;

  for (i = 0; i < ni; i++)
    for (j = 0; j < nk; j++)
      A[i][j] = (double) ((i*j+1) % ni) / ni;
  for (i = 0; i < nk; i++)
    for (j = 0; j < nj; j++)
      B[i][j] = (double) (i*(j+1) % nj) / nj;
  for (i = 0; i < nj; i++)
    for (j = 0; j < nl; j++)
      C[i][j] = (double) ((i*(j+3)+1) % nl) / nl;
  for (i = 0; i < ni; i++)
    for (j = 0; j < nl; j++)
      D[i][j] = (double) (i*(j+2) % nk) / nk;

  kernel_2mm(ni, nj, nk, nl, alpha, beta, tmp, A, B, C, D);

  dump("tmp", &tmp[0][0], (long)NI * NJ);
  dump("D", &D[0][0], (long)NI * NL);
  return 0;
}
