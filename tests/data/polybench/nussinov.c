/* nussinov.c -- PolyBench/C 4.2.1 nussinov: RNA folding by dynamic programming.
 * Size macro: N (default 60).
 * Kernel, loop nests and init_array as in PolyBench 4.2.1 (i counts down; the affine ifs with an
 * else; match() and max_score() are PolyBench's macros, data-dependent ?:); bounds are the int
 * parameter. Types as PolyBench's defaults: base is char, DATA_TYPE int.
 * Output: the sum and an FNV-1a hash of the bytes of table. */
#pragma GCC diagnostic ignored "-Wunknown-pragmas" /* #pragma scop / endscop */
#include <stdio.h>

#ifndef N
#define N 60
#endif

typedef char base;
#define match(b1, b2) (((b1)+(b2)) == 3 ? 1 : 0)
#define max_score(s1, s2) ((s1 >= s2) ? s1 : s2)

static base seq[N];
static int table[N][N];

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

static void kernel_nussinov(int n, base seq[N], int table[N][N])
{
  int i, j, k;
#pragma scop
  for (i = n-1; i >= 0; i--) {
    for (j=i+1; j<n; j++) {

      if (j-1>=0)
        table[i][j] = max_score(table[i][j], table[i][j-1]);
      if (i+1<n)
        table[i][j] = max_score(table[i][j], table[i+1][j]);

      if (j-1>=0 && i+1<n) {
        /* don't allow adjacent elements to bond */
        if (i<j-1)
          table[i][j] = max_score(table[i][j], table[i+1][j-1]+match(seq[i], seq[j]));
        else
          table[i][j] = max_score(table[i][j], table[i+1][j-1]);
      }

      for (k=i+1; k<j; k++) {
        table[i][j] = max_score(table[i][j], table[i][k] + table[k+1][j]);
      }
    }
  }
#pragma endscop
}

int main(void)
{
  int i, j, n = N;

  for (i = 0; i < n; i++)
    seq[i] = (base)((i+1)%4); /* right side is AGCT/0..3 */
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      table[i][j] = 0;

  kernel_nussinov(n, seq, table);

  dump_int("table", &table[0][0], (long)N * N);
  return 0;
}
