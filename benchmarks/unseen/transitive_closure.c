/* Warshall's transitive closure of a 2,000-vertex directed graph held as a byte reachability matrix (graph
   libraries, dependency analysis): vertex k joins every pair it links, row k and column k read by every row. */
#include <stdio.h>
#include <time.h>
#ifndef N
#define N 2000
#endif
unsigned char R[N][N];
int main(void) {
  int i, j, k;
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      R[i][j] = i == j || (i * 131 + j * 71) % 997 == 0;
  struct timespec start, stop;
  clock_gettime(CLOCK_MONOTONIC, &start);
#pragma scop
  for (k = 0; k < N; k++)
    for (i = 0; i < N; i++)
      for (j = 0; j < N; j++)
        R[i][j] = R[i][j] | (R[i][k] & R[k][j]);
#pragma endscop
  clock_gettime(CLOCK_MONOTONIC, &stop);
  double cs = 0;
  for (i = 0; i < N; i++) for (j = 0; j < N; j += 7) cs += R[i][j] * (double)(i % 13 + j % 5);
  printf("time: %.6f\n", (stop.tv_sec - start.tv_sec) + 1e-9 * (stop.tv_nsec - start.tv_nsec));
  printf("checksum: %.10e\n", cs);
  return 0;
}
