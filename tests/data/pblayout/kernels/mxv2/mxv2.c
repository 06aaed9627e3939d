/* mxv2.c -- polytune test kernel in PolyBench/C 4.2.1's layout: y = A x and z = A^T w in one scop.
 * Built like a PolyBench kernel: gcc mxv2.c ../../utilities/polybench.c -I ../../utilities -DPOLYBENCH_TIME */
#include <stdio.h>
#include <unistd.h>
#include <string.h>
#include <math.h>

#include <polybench.h>
#include "mxv2.h"

static void init_array(int m, int n, DATA_TYPE POLYBENCH_2D(A, M, N, m, n), DATA_TYPE POLYBENCH_1D(x, N, n),
                       DATA_TYPE POLYBENCH_1D(w, M, m))
{
  int i, j;
  for (j = 0; j < n; j++)
    x[j] = (DATA_TYPE)(j % 7) / 7.0;
  for (i = 0; i < m; i++) {
    w[i] = (DATA_TYPE)((i * 3) % 11) / 11.0;
    for (j = 0; j < n; j++)
      A[i][j] = (DATA_TYPE)((i * j + 1) % m) / (5 * m);
  }
}

static void print_array(int m, int n, DATA_TYPE POLYBENCH_1D(y, M, m), DATA_TYPE POLYBENCH_1D(z, N, n))
{
  int i;
  POLYBENCH_DUMP_START;
  POLYBENCH_DUMP_BEGIN("y");
  for (i = 0; i < m; i++) {
    if (i % 20 == 0) fprintf(POLYBENCH_DUMP_TARGET, "\n");
    fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, y[i]);
  }
  POLYBENCH_DUMP_END("y");
  POLYBENCH_DUMP_BEGIN("z");
  for (i = 0; i < n; i++) {
    if (i % 20 == 0) fprintf(POLYBENCH_DUMP_TARGET, "\n");
    fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, z[i]);
  }
  POLYBENCH_DUMP_END("z");
  POLYBENCH_DUMP_FINISH;
}

static void kernel_mxv2(int m, int n, DATA_TYPE POLYBENCH_2D(A, M, N, m, n), DATA_TYPE POLYBENCH_1D(x, N, n),
                        DATA_TYPE POLYBENCH_1D(w, M, m), DATA_TYPE POLYBENCH_1D(y, M, m),
                        DATA_TYPE POLYBENCH_1D(z, N, n))
{
  int i, j;
#pragma scop
  for (j = 0; j < _PB_N; j++)
    z[j] = SCALAR_VAL(0.0);
  for (i = 0; i < _PB_M; i++) {
    y[i] = SCALAR_VAL(0.0);
    for (j = 0; j < _PB_N; j++) {
      y[i] = y[i] + A[i][j] * x[j];
      z[j] = z[j] + A[i][j] * w[i];
    }
  }
#pragma endscop
}

int main(int argc, char **argv)
{
  int m = M;
  int n = N;
  POLYBENCH_2D_ARRAY_DECL(A, DATA_TYPE, M, N, m, n);
  POLYBENCH_1D_ARRAY_DECL(x, DATA_TYPE, N, n);
  POLYBENCH_1D_ARRAY_DECL(w, DATA_TYPE, M, m);
  POLYBENCH_1D_ARRAY_DECL(y, DATA_TYPE, M, m);
  POLYBENCH_1D_ARRAY_DECL(z, DATA_TYPE, N, n);

  init_array(m, n, POLYBENCH_ARRAY(A), POLYBENCH_ARRAY(x), POLYBENCH_ARRAY(w));
  polybench_start_instruments;
  kernel_mxv2(m, n, POLYBENCH_ARRAY(A), POLYBENCH_ARRAY(x), POLYBENCH_ARRAY(w), POLYBENCH_ARRAY(y),
              POLYBENCH_ARRAY(z));
  polybench_stop_instruments;
  polybench_print_instruments;
  polybench_prevent_dce(print_array(m, n, POLYBENCH_ARRAY(y), POLYBENCH_ARRAY(z)));

  POLYBENCH_FREE_ARRAY(A);
  POLYBENCH_FREE_ARRAY(x);
  POLYBENCH_FREE_ARRAY(w);
  POLYBENCH_FREE_ARRAY(y);
  POLYBENCH_FREE_ARRAY(z);
  return 0;
}
