/* trimul.c -- polytune test kernel in PolyBench/C 4.2.1's layout: B := alpha * L * B with L lower
 * triangular (a triangular reduction loop), then a symmetric rank update of C's lower triangle. */
#include <stdio.h>
#include <unistd.h>
#include <string.h>
#include <math.h>

#include <polybench.h>
#include "trimul.h"

static void init_array(int n, DATA_TYPE *alpha, DATA_TYPE POLYBENCH_2D(L, N, N, n, n),
                       DATA_TYPE POLYBENCH_2D(B, N, N, n, n), DATA_TYPE POLYBENCH_2D(C, N, N, n, n))
{
  int i, j;
  *alpha = 1.25;
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++) {
      L[i][j] = j <= i ? (DATA_TYPE)((i + 2 * j) % n) / n : 0.0;
      B[i][j] = (DATA_TYPE)((n + i - j) % n) / n;
      C[i][j] = (DATA_TYPE)((i * j) % 13) / 13.0;
    }
}

static void print_array(int n, DATA_TYPE POLYBENCH_2D(B, N, N, n, n), DATA_TYPE POLYBENCH_2D(C, N, N, n, n))
{
  int i, j;
  POLYBENCH_DUMP_START;
  POLYBENCH_DUMP_BEGIN("B");
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++) {
      if ((i * n + j) % 20 == 0) fprintf(POLYBENCH_DUMP_TARGET, "\n");
      fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, B[i][j]);
    }
  POLYBENCH_DUMP_END("B");
  POLYBENCH_DUMP_BEGIN("C");
  for (i = 0; i < n; i++)
    for (j = 0; j <= i; j++) {
      if ((i * n + j) % 20 == 0) fprintf(POLYBENCH_DUMP_TARGET, "\n");
      fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, C[i][j]);
    }
  POLYBENCH_DUMP_END("C");
  POLYBENCH_DUMP_FINISH;
}

static void kernel_trimul(int n, DATA_TYPE alpha, DATA_TYPE POLYBENCH_2D(L, N, N, n, n),
                          DATA_TYPE POLYBENCH_2D(B, N, N, n, n), DATA_TYPE POLYBENCH_2D(C, N, N, n, n))
{
  int i, j, k;
#pragma scop
  for (i = _PB_N - 1; i >= 0; i--)
    for (j = 0; j < _PB_N; j++) {
      for (k = 0; k < i; k++)
        B[i][j] += L[i][k] * B[k][j];
      B[i][j] = alpha * B[i][j];
    }
  for (i = 0; i < _PB_N; i++)
    for (k = 0; k < _PB_N; k++)
      for (j = 0; j <= i; j++)
        C[i][j] += alpha * B[i][k] * B[j][k];
#pragma endscop
}

int main(int argc, char **argv)
{
  int n = N;
  DATA_TYPE alpha;
  POLYBENCH_2D_ARRAY_DECL(L, DATA_TYPE, N, N, n, n);
  POLYBENCH_2D_ARRAY_DECL(B, DATA_TYPE, N, N, n, n);
  POLYBENCH_2D_ARRAY_DECL(C, DATA_TYPE, N, N, n, n);

  init_array(n, &alpha, POLYBENCH_ARRAY(L), POLYBENCH_ARRAY(B), POLYBENCH_ARRAY(C));
  polybench_start_instruments;
  kernel_trimul(n, alpha, POLYBENCH_ARRAY(L), POLYBENCH_ARRAY(B), POLYBENCH_ARRAY(C));
  polybench_stop_instruments;
  polybench_print_instruments;
  polybench_prevent_dce(print_array(n, POLYBENCH_ARRAY(B), POLYBENCH_ARRAY(C)));

  POLYBENCH_FREE_ARRAY(L);
  POLYBENCH_FREE_ARRAY(B);
  POLYBENCH_FREE_ARRAY(C);
  return 0;
}
