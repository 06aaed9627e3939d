/* doitgen.c -- PolyBench/C 4.2.1 doitgen: multiresolution analysis kernel (MADNESS),
 * A[r][q][:] := A[r][q][:] * C4, through the 1-d temporary sum.
 * Size macros: NQ, NR, NP (defaults 20, 25, 30).
 * Kernel, loop nests and init_array as in PolyBench 4.2.1; bounds are the int parameters.
 * Output: per array written, its sum and a hash of its bytes. */
#pragma GCC diagnostic ignored "-Wunknown-pragmas" /* #pragma scop / endscop */
#include <stdio.h>

#ifndef NQ
#define NQ 20
#endif
#ifndef NR
#define NR 25
#endif
#ifndef NP
#define NP 30
#endif

static double A[NR][NQ][NP], sum[NP], C4[NP][NP];

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
static void kernel_doitgen(int nr, int nq, int np, double A[NR][NQ][NP], double C4[NP][NP], double sum[NP])
{
  int r, q, p, s;
#pragma scop
  for (r = 0; r < nr; r++)
    for (q = 0; q < nq; q++)  {
      for (p = 0; p < np; p++)  {
        sum[p] = 0.0;
        for (s = 0; s < np; s++)
          sum[p] += A[r][q][s] * C4[s][p];
      }
      for (p = 0; p < np; p++)
        A[r][q][p] = sum[p];
    }
#pragma endscop
}

int main(void)
{
  int i, j, k, nr = NR, nq = NQ, np = NP;

  for (i = 0; i < nr; i++)
    for (j = 0; j < nq; j++)
      for (k = 0; k < np; k++)
        A[i][j][k] = (double) ((i*j + k) % np) / np;
  for (i = 0; i < np; i++)
    for (j = 0; j < np; j++)
      C4[i][j] = (double) (i*j % np) / np;

  kernel_doitgen(nr, nq, np, A, C4, sum);

  dump("A", &A[0][0][0], (long)NR * NQ * NP);
  dump("sum", sum, NP);
  return 0;
}
