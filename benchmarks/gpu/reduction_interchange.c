/* reduction_interchange.c -- GPU benchmark: row sums of a single-precision matrix,
 *   s[i] = sum_j A[i][j], loops interchanged: j outer, i inner
 *   (s zeroed in its own i loop first, inside the scop).
 * Size macros: N (rows, default 8192), M (columns, default N); A is 256 MB at the default.
 * Small test: -DN=20.
 * Variants: reduction_vanilla.c (i, j), reduction_unroll.c (j unrolled by 4);
 * all three give the same checksum at the same N, M (same summation order per element).
 * Output: time of the scop call, checksum = weighted sum of s accumulated in double. */
#define _POSIX_C_SOURCE 199309L
#pragma GCC diagnostic ignored "-Wunknown-pragmas" /* #pragma scop / endscop */
#include <stdio.h>
#include <time.h>

#ifndef N
#define N 8192
#endif
#ifndef M
#define M N
#endif

static float A[N][M], s[N];

static void kernel_reduction(int n, int m, float s[N], float A[N][M])
{
  int i, j;
#pragma scop
  for (i = 0; i < n; i++)
    s[i] = 0.0f;
  for (j = 0; j < m; j++)
    for (i = 0; i < n; i++)
      s[i] += A[i][j];
#pragma endscop
}

int main(void)
{
  int i, j;
  struct timespec t0, t1;
  double cs = 0.0;

  for (i = 0; i < N; i++)
    for (j = 0; j < M; j++)
      A[i][j] = (float)((i * 3 + j * 7 + i * j) % 29) / 29.0f;

  clock_gettime(CLOCK_MONOTONIC, &t0);
  kernel_reduction(N, M, s, A);
  clock_gettime(CLOCK_MONOTONIC, &t1);

  for (i = 0; i < N; i++)
    cs += (double)s[i] * (1 + (i * 7) % 13);
  printf("time: %.6f\n", (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec));
  printf("checksum: %.10e\n", cs);
  return 0;
}
