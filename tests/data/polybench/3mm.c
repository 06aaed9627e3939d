/* 3mm.c -- PolyBench/C 4.2.1 3mm: E := A*B; F := C*D; G := E*F.
 * Size macros: NI, NJ, NK, NL, NM (defaults 40, 50, 60, 70, 80).
 * Kernel, loop nests and init_array as in PolyBench 4.2.1 (bounds are the size macros, as
 * PolyBench's _PB_ macros expand to by default). Output: per array written, its sum and a hash. */
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
#ifndef NM
#define NM 80
#endif
#define _PB_NI NI
#define _PB_NJ NJ
#define _PB_NK NK
#define _PB_NL NL
#define _PB_NM NM

static double E[NI][NJ], A[NI][NK], B[NK][NJ], F[NJ][NL], C[NJ][NM], D[NM][NL], G[NI][NL];

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
static void kernel_3mm(int ni, int nj, int nk, int nl, int nm, double E[NI][NJ], double A[NI][NK],
                       double B[NK][NJ], double F[NJ][NL], double C[NJ][NM], double D[NM][NL],
                       double G[NI][NL])
{
  int i, j, k;
#pragma scop
  /* E := A*B */
  for (i = 0; i < _PB_NI; i++)
    for (j = 0; j < _PB_NJ; j++)
      {
        E[i][j] = 0.0;
        for (k = 0; k < _PB_NK; ++k)
          E[i][j] += A[i][k] * B[k][j];
      }
  /* F := C*D */
  for (i = 0; i < _PB_NJ; i++)
    for (j = 0; j < _PB_NL; j++)
      {
        F[i][j] = 0.0;
        for (k = 0; k < _PB_NM; ++k)
          F[i][j] += C[i][k] * D[k][j];
      }
  /* G := E*F */
  for (i = 0; i < _PB_NI; i++)
    for (j = 0; j < _PB_NL; j++)
      {
        G[i][j] = 0.0;
        for (k = 0; k < _PB_NJ; ++k)
          G[i][j] += E[i][k] * F[k][j];
      }
#pragma endscop
}

int main(void)
{
  int i, j, ni = NI, nj = NJ, nk = NK, nl = NL, nm = NM;

  for (i = 0; i < ni; i++)
    for (j = 0; j < nk; j++)
      A[i][j] = (double) ((i*j+1) % ni) / (5*ni);
  for (i = 0; i < nk; i++)
    for (j = 0; j < nj; j++)
      B[i][j] = (double) ((i*(j+1)+2) % nj) / (5*nj);
  for (i = 0; i < nj; i++)
    for (j = 0; j < nm; j++)
      C[i][j] = (double) (i*(j+3) % nl) / (5*nl);
  for (i = 0; i < nm; i++)
    for (j = 0; j < nl; j++)
      D[i][j] = (double) ((i*(j+2)+2) % nk) / (5*nk);

  kernel_3mm(ni, nj, nk, nl, nm, E, A, B, F, C, D, G);

  dump("E", &E[0][0], (long)NI * NJ);
  dump("F", &F[0][0], (long)NJ * NL);
  dump("G", &G[0][0], (long)NI * NL);
  return 0;
}
