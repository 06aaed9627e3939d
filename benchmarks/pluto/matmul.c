/* matmul: C = A * B in the textbook loop order (i, j, k), the form of Pluto's matmul example.
 * Size macro: N (default 2000, the size of the Pluto target). Small test: -DN=13. */
#pragma GCC diagnostic ignored "-Wunknown-pragmas" /* #pragma scop / endscop */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <time.h>

#ifndef N
#define N 2000
#endif

static double A[N][N], B[N][N], C[N][N];

int main(void)
{
  struct timespec t0, t1;
  double cs = 0.0;
  int i, j, k;

  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++) {
      A[i][j] = (double)((i * j + 1) % N) / N;
      B[i][j] = (double)((i + 2 * j) % N) / N;
      C[i][j] = 0.0;
    }

  clock_gettime(CLOCK_MONOTONIC, &t0);
#pragma scop
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      for (k = 0; k < N; k++)
        C[i][j] = C[i][j] + A[i][k] * B[k][j];
#pragma endscop
  clock_gettime(CLOCK_MONOTONIC, &t1);

  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      cs += C[i][j] * (1 + (i * 7 + j) % 13);
  printf("time: %.6f\n", (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec));
  printf("checksum: %.10e\n", cs);
  return 0;
}
