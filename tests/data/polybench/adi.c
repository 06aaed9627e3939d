/* adi.c -- PolyBench/C 4.2.1 adi: alternating direction implicit solver (column sweep, row sweep;
 * the back substitutions count down).
 * Size macros: N, TSTEPS (defaults 40, 6).
 * Kernel, loop nests and init_array as in PolyBench 4.2.1 (the coefficient scalars computed inside
 * the scop, the (double) casts of the sizes); bounds are the size macros through _PB_N/_PB_TSTEPS,
 * as PolyBench's defaults. Output: per array written, its sum and a hash of its bytes. */
#pragma GCC diagnostic ignored "-Wunknown-pragmas" /* #pragma scop / endscop */
#include <stdio.h>

#ifndef N
#define N 40
#endif
#ifndef TSTEPS
#define TSTEPS 6
#endif
#define _PB_N N
#define _PB_TSTEPS TSTEPS

static double u[N][N], v[N][N], p[N][N], q[N][N];

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
static void kernel_adi(int tsteps, int n, double u[N][N], double v[N][N], double p[N][N], double q[N][N])
{
  int t, i, j;
  double DX, DY, DT;
  double B1, B2;
  double mul1, mul2;
  double a, b, c, d, e, f;

#pragma scop

  DX = 1.0/(double)_PB_N;
  DY = 1.0/(double)_PB_N;
  DT = 1.0/(double)_PB_TSTEPS;
  B1 = 2.0;
  B2 = 1.0;
  mul1 = B1 * DT / (DX * DX);
  mul2 = B2 * DT / (DY * DY);

  a = -mul1 /  2.0;
  b = 1.0+mul1;
  c = a;
  d = -mul2 / 2.0;
  e = 1.0+mul2;
  f = d;

  for (t=1; t<=_PB_TSTEPS; t++) {
    /* Column Sweep */
    for (i=1; i<_PB_N-1; i++) {
      v[0][i] = 1.0;
      p[i][0] = 0.0;
      q[i][0] = v[0][i];
      for (j=1; j<_PB_N-1; j++) {
        p[i][j] = -c / (a*p[i][j-1]+b);
        q[i][j] = (-d*u[j][i-1]+(1.0+2.0*d)*u[j][i] - f*u[j][i+1]-a*q[i][j-1])/(a*p[i][j-1]+b);
      }

      v[_PB_N-1][i] = 1.0;
      for (j=_PB_N-2; j>=1; j--) {
        v[j][i] = p[i][j] * v[j+1][i] + q[i][j];
      }
    }
    /* Row Sweep */
    for (i=1; i<_PB_N-1; i++) {
      u[i][0] = 1.0;
      p[i][0] = 0.0;
      q[i][0] = u[i][0];
      for (j=1; j<_PB_N-1; j++) {
        p[i][j] = -f / (d*p[i][j-1]+e);
        q[i][j] = (-a*v[i-1][j]+(1.0+2.0*a)*v[i][j] - c*v[i+1][j]-d*q[i][j-1])/(d*p[i][j-1]+e);
      }
      u[i][_PB_N-1] = 1.0;
      for (j=_PB_N-2; j>=1; j--) {
        u[i][j] = p[i][j] * u[i][j+1] + q[i][j];
      }
    }
  }
#pragma endscop
}

int main(void)
{
  int i, j, n = N;

  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      u[i][j] =  (double)(i + n-j) / n;

  kernel_adi(TSTEPS, n, u, v, p, q);

  dump("u", &u[0][0], (long)N * N);
  dump("v", &v[0][0], (long)N * N);
  dump("p", &p[0][0], (long)N * N);
  dump("q", &q[0][0], (long)N * N);
  return 0;
}
