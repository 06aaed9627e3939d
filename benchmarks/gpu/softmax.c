/* softmax.c -- row-wise softmax of an N x M float matrix, with per-row maximum and sum arrays (the form
 * in which the rows are independent: the GPU targets map the rows to threads / programs and reduce each
 * row; benchmarks/pluto/softmax.c keeps them in two scalars, which serializes the rows).
 * Size macros: N (rows, default 4096), M (columns, default N). */
#define _POSIX_C_SOURCE 199309L
#pragma GCC diagnostic ignored "-Wunknown-pragmas" /* #pragma scop / endscop */
#include <math.h>
#include <stdio.h>
#include <time.h>

#ifndef N
#define N 4096
#endif
#ifndef M
#define M N
#endif

static float A[N][M], B[N][M], mx[N], sm[N];

static void kernel_softmax(float A[N][M], float B[N][M], float mx[N], float sm[N])
{
  int i, j;
#pragma scop
  for (i = 0; i < N; i++) {
    mx[i] = A[i][0];
    for (j = 1; j < M; j++)
      mx[i] = fmaxf(mx[i], A[i][j]);
    sm[i] = 0.0f;
    for (j = 0; j < M; j++) {
      B[i][j] = expf(A[i][j] - mx[i]);
      sm[i] += B[i][j];
    }
    for (j = 0; j < M; j++)
      B[i][j] /= sm[i];
  }
#pragma endscop
}

int main(void)
{
  int i, j;
  struct timespec t0, t1;
  double cs = 0.0;

  for (i = 0; i < N; i++)
    for (j = 0; j < M; j++)
      A[i][j] = (float)((i * 7 + j * 13) % 101) / 25.0f - 2.0f;

  clock_gettime(CLOCK_MONOTONIC, &t0);
  kernel_softmax(A, B, mx, sm);
  clock_gettime(CLOCK_MONOTONIC, &t1);

  for (i = 0; i < N; i++) {
    cs += mx[i] + sm[i] * 1e-3;
    for (j = 0; j < M; j++)
      cs += B[i][j] * (1 + (i * 7 + j) % 13);
  }
  printf("time: %.6f\n", (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec));
  printf("checksum: %.10e\n", cs);
  return 0;
}
