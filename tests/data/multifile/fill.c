/* fill.c -- the second translation unit of prog.c. */
#include "fill.h"

void fill(double *a, int n, int stride, int seed)
{
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      a[i * stride + j] = (double)((i * 7 + j * seed + 3) % 17) / 17.0;
}
