/* floyd-warshall.c -- PolyBench/C 4.2.1 floyd-warshall: all-pairs shortest paths.
 * Size macro: N (default 60).
 * Kernel, loop nests and init_array as in PolyBench 4.2.1 (the data-dependent ?: min); bounds are
 * the int parameter. DATA_TYPE is int, PolyBench's default for this kernel.
 * Output: the sum and an FNV-1a hash of the bytes of path. */
#pragma GCC diagnostic ignored "-Wunknown-pragmas" /* #pragma scop / endscop */
#include <stdio.h>

#ifndef N
#define N 60
#endif

static int path[N][N];

static void dump_int(const char *name, const int *a, long n)
{
  unsigned long long h = 1469598103934665603ULL;
  const unsigned char *p = (const unsigned char *)a;
  long long s = 0;
  for (long i = 0; i < n * (long)sizeof(int); i++) {
    h ^= p[i];
    h *= 1099511628211ULL;
  }
  for (long i = 0; i < n; i++)
    s += a[i];
  printf("%s: sum %lld hash %016llx\n", name, s, h);
}

static void kernel_floyd_warshall(int n, int path[N][N])
{
  int i, j, k;
#pragma scop
  for (k = 0; k < n; k++)
    {
      for(i = 0; i < n; i++)
        for (j = 0; j < n; j++)
          path[i][j] = path[i][j] < path[i][k] + path[k][j] ?
            path[i][j] : path[i][k] + path[k][j];
    }
#pragma endscop
}

int main(void)
{
  int i, j, n = N;

  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++) {
      path[i][j] = i*j%7+1;
      if ((i+j)%13 == 0 || (i+j)%7==0 || (i+j)%11 == 0)
        path[i][j] = 999;
    }

  kernel_floyd_warshall(n, path);

  dump_int("path", &path[0][0], (long)N * N);
  return 0;
}
