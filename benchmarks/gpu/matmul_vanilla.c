/* matmul_vanilla.c -- GPU benchmark: single-precision matrix product C = A * B,
 *   C[i][j] = sum_k A[i][k] * B[k][j], textbook loop order i, j, k
 *   (C[i][j] = 0 before the k loop, inside the scop).
 * Size macro: N (default 2048; a multiple of 64 suits GPU tiles). Small test: -DN=20.
 * Variants: matmul_unroll.c (k unrolled by 4), matmul_interchange.c (order i, k, j);
 * all three give the same checksum at the same N (same summation order per element).
 * Output: time of the scop call, checksum = weighted sum of C accumulated in double. */
#define _POSIX_C_SOURCE 199309L
#pragma GCC diagnostic ignored "-Wunknown-pragmas" /* #pragma scop / endscop */
#include <stdio.h>
#include <time.h>

#ifndef N
#define N 2048
#endif

static float A[N][N], B[N][N], C[N][N];

static void kernel_matmul(int n, float C[N][N], float A[N][N], float B[N][N])
{
  int i, j, k;
#pragma scop
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++) {
      C[i][j] = 0.0f;
      for (k = 0; k < n; k++)
        C[i][j] += A[i][k] * B[k][j];
    }
#pragma endscop
}

int main(void)
{
  int i, j;
  struct timespec t0, t1;
  double cs = 0.0;

  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++) {
      A[i][j] = (float)((i * j + 1) % 17) / 17.0f;
      B[i][j] = (float)((i + 2 * j) % 19) / 19.0f - 0.25f;
    }

  clock_gettime(CLOCK_MONOTONIC, &t0);
  kernel_matmul(N, C, A, B);
  clock_gettime(CLOCK_MONOTONIC, &t1);

  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      cs += (double)C[i][j] * (1 + (i * 7 + j) % 13);
  printf("time: %.6f\n", (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec));
  printf("checksum: %.10e\n", cs);
  return 0;
}
