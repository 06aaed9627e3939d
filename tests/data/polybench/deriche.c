/* deriche.c -- PolyBench/C 4.2.1 deriche: Deriche recursive edge-detection filter (horizontal and
 * vertical passes, each causal + anti-causal; the anti-causal loops count down).
 * Size macros: W, H (defaults 64, 48).
 * Kernel, loop nests and init_array as in PolyBench 4.2.1 (the coefficient scalars, exp/pow,
 * chained assignments a1 = a5 = k, scalars carried along the rows); bounds are the size macros
 * through _PB_W/_PB_H as PolyBench's defaults. DATA_TYPE double. The arrays y1 and y2 are kernel
 * parameters as in PolyBench (they shadow math.h's Bessel functions).
 * Output: per array written, its sum and a hash of its bytes. */
#pragma GCC diagnostic ignored "-Wunknown-pragmas" /* #pragma scop / endscop */
#include <math.h>
#include <stdio.h>

#ifndef W
#define W 64
#endif
#ifndef H
#define H 48
#endif
#define _PB_W W
#define _PB_H H

static double imgIn[W][H], imgOut[W][H], Y1[W][H], Y2[W][H];

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
static void kernel_deriche(int w, int h, double alpha, double imgIn[W][H], double imgOut[W][H],
                           double y1[W][H], double y2[W][H])
{
  int i, j;
  double xm1, tm1, ym1, ym2;
  double xp1, xp2;
  double tp1, tp2;
  double yp1, yp2;

  double k;
  double a1, a2, a3, a4, a5, a6, a7, a8;
  double b1, b2, c1, c2;

#pragma scop
  k = (1.0-exp(-alpha))*(1.0-exp(-alpha))/(1.0+2.0*alpha*exp(-alpha)-exp(2.0*alpha));
  a1 = a5 = k;
  a2 = a6 = k*exp(-alpha)*(alpha-1.0);
  a3 = a7 = k*exp(-alpha)*(alpha+1.0);
  a4 = a8 = -k*exp(-2.0*alpha);
  b1 =  pow(2.0,-alpha);
  b2 = -exp(-2.0*alpha);
  c1 = c2 = 1;

  for (i=0; i<_PB_W; i++) {
    ym1 = 0.0;
    ym2 = 0.0;
    xm1 = 0.0;
    for (j=0; j<_PB_H; j++) {
      y1[i][j] = a1*imgIn[i][j] + a2*xm1 + b1*ym1 + b2*ym2;
      xm1 = imgIn[i][j];
      ym2 = ym1;
      ym1 = y1[i][j];
    }
  }

  for (i=0; i<_PB_W; i++) {
    yp1 = 0.0;
    yp2 = 0.0;
    xp1 = 0.0;
    xp2 = 0.0;
    for (j=_PB_H-1; j>=0; j--) {
      y2[i][j] = a3*xp1 + a4*xp2 + b1*yp1 + b2*yp2;
      xp2 = xp1;
      xp1 = imgIn[i][j];
      yp2 = yp1;
      yp1 = y2[i][j];
    }
  }

  for (i=0; i<_PB_W; i++)
    for (j=0; j<_PB_H; j++) {
      imgOut[i][j] = c1 * (y1[i][j] + y2[i][j]);
    }

  for (j=0; j<_PB_H; j++) {
    tm1 = 0.0;
    ym1 = 0.0;
    ym2 = 0.0;
    for (i=0; i<_PB_W; i++) {
      y1[i][j] = a5*imgOut[i][j] + a6*tm1 + b1*ym1 + b2*ym2;
      tm1 = imgOut[i][j];
      ym2 = ym1;
      ym1 = y1 [i][j];
    }
  }

  for (j=0; j<_PB_H; j++) {
    tp1 = 0.0;
    tp2 = 0.0;
    yp1 = 0.0;
    yp2 = 0.0;
    for (i=_PB_W-1; i>=0; i--) {
      y2[i][j] = a7*tp1 + a8*tp2 + b1*yp1 + b2*yp2;
      tp2 = tp1;
      tp1 = imgOut[i][j];
      yp2 = yp1;
      yp1 = y2[i][j];
    }
  }

  for (i=0; i<_PB_W; i++)
    for (j=0; j<_PB_H; j++)
      imgOut[i][j] = c2*(y1[i][j] + y2[i][j]);
#pragma endscop
}

int main(void)
{
  int i, j, w = W, h = H;
  double alpha = 0.25; /* parameter of the filter */

  for (i = 0; i < w; i++)
    for (j = 0; j < h; j++)
      imgIn[i][j] = (double) ((313*i+991*j)%65536) / 65535.0f;

  kernel_deriche(w, h, alpha, imgIn, imgOut, Y1, Y2);

  dump("imgOut", &imgOut[0][0], (long)W * H);
  dump("y1", &Y1[0][0], (long)W * H);
  dump("y2", &Y2[0][0], (long)W * H);
  return 0;
}
