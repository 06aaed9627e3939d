/* The edit distance of two sequences of 5,000 symbols over int tables (spell checking, sequence alignment):
   each cell the least of its west and north neighbours plus one and its north-west neighbour plus the cost
   of a substitution, a wavefront. */
#include <stdio.h>
#include <time.h>
#ifndef N
#define N 5000
#endif
int a[N], b[N];
int D[N + 1][N + 1];
int main(void) {
  int i, j;
  for (i = 0; i < N; i++) { a[i] = (i * 7 + 3) % 5; b[i] = (i * 11 + 1) % 5; }
  for (i = 0; i <= N; i++) { D[i][0] = i; D[0][i] = i; }
  struct timespec start, stop;
  clock_gettime(CLOCK_MONOTONIC, &start);
#pragma scop
  for (i = 1; i <= N; i++)
    for (j = 1; j <= N; j++)
      D[i][j] = (D[i - 1][j] < D[i][j - 1] ? D[i - 1][j] : D[i][j - 1]) + 1 < D[i - 1][j - 1] + (a[i - 1] != b[j - 1])
              ? (D[i - 1][j] < D[i][j - 1] ? D[i - 1][j] : D[i][j - 1]) + 1
              : D[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
#pragma endscop
  clock_gettime(CLOCK_MONOTONIC, &stop);
  long cs = 0;
  for (i = 0; i <= N; i += 7) for (j = 0; j <= N; j += 3) cs += D[i][j] * ((i + j) % 5 + 1);
  printf("time: %.6f\n", (stop.tv_sec - start.tv_sec) + 1e-9 * (stop.tv_nsec - start.tv_nsec));
  printf("checksum: %ld\n", cs);
  return 0;
}
