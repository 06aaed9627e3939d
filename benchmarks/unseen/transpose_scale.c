/* B = alpha * A^T + B^T-free: a scaled transpose-add of a 4000 x 4000 matrix, repeated 4 times (BLAS geam,
   the transposes of FFTs and data layout changes): no reuse, one array walked across its rows. */
#include <stdio.h>
#include <time.h>
#ifndef N
#define N 4000
#endif
#ifndef R
#define R 4
#endif
double A[N][N], B[N][N];
int main(void) {
  int r, i, j;
  for (i = 0; i < N; i++) for (j = 0; j < N; j++) { A[i][j] = ((i * 7 + j * 3) % 101) / 101.0; B[i][j] = ((i + j) % 13) / 13.0; }
  struct timespec start, stop;
  clock_gettime(CLOCK_MONOTONIC, &start);
#pragma scop
  for (r = 0; r < R; r++)
    for (i = 0; i < N; i++)
      for (j = 0; j < N; j++)
        B[i][j] = 0.5 * B[i][j] + 0.25 * A[j][i];
#pragma endscop
  clock_gettime(CLOCK_MONOTONIC, &stop);
  double cs = 0;
  for (i = 0; i < N; i++) for (j = 0; j < N; j++) cs += B[i][j] * ((i + 2 * j) % 7);
  printf("time: %.6f\n", (stop.tv_sec - start.tv_sec) + 1e-9 * (stop.tv_nsec - start.tv_nsec));
  printf("checksum: %.10e\n", cs);
  return 0;
}
