/* gemm.c -- PolyBench 4.2 gemm: C = alpha*A*B + beta*C.
 * Size macros: N (default 1500); NI, NJ, NK (default N each).
 * Style: kernel function with int-parameter sizes, iterators declared at top. */
#define _POSIX_C_SOURCE 199309L
#pragma GCC diagnostic ignored "-Wunknown-pragmas" /* #pragma scop / endscop */
#include <stdio.h>
#include <time.h>

#ifndef N
#define N 1500
#endif
#ifndef NI
#define NI N
#endif
#ifndef NJ
#define NJ N
#endif
#ifndef NK
#define NK N
#endif

static double C[NI][NJ], A[NI][NK], B[NK][NJ];

static void kernel_gemm(int ni, int nj, int nk, double alpha, double beta,
                        double C[ni][nj], double A[ni][nk], double B[nk][nj])
{
  int i, j, k;
#pragma scop
  for (i = 0; i < ni; i++) {
    for (j = 0; j < nj; j++)
      C[i][j] *= beta;
    for (k = 0; k < nk; k++)
      for (j = 0; j < nj; j++)
        C[i][j] += alpha * A[i][k] * B[k][j];
  }
#pragma endscop
}

int main(void)
{
  int i, j;
  struct timespec t0, t1;
  double cs = 0.0;

  for (i = 0; i < NI; i++)
    for (j = 0; j < NJ; j++)
      C[i][j] = (double)((i * j + 1) % NI) / NI;
  for (i = 0; i < NI; i++)
    for (j = 0; j < NK; j++)
      A[i][j] = (double)(i * (j + 1) % NK) / NK;
  for (i = 0; i < NK; i++)
    for (j = 0; j < NJ; j++)
      B[i][j] = (double)(i * (j + 2) % NJ) / NJ;

  clock_gettime(CLOCK_MONOTONIC, &t0);
  kernel_gemm(NI, NJ, NK, 1.5, 1.2, C, A, B);
  clock_gettime(CLOCK_MONOTONIC, &t1);

  for (i = 0; i < NI; i++)
    for (j = 0; j < NJ; j++)
      cs += C[i][j] * (1 + (i * 7 + j) % 13);
  printf("time: %.6f\n", (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec));
  printf("checksum: %.10e\n", cs);
  return 0;
}
