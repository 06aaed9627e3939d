/* A tensor times a matrix along its first mode (Tucker, tensor networks): Y[a][b][c] += U[a][d] X[d][b][c],
   a 160 x 120 x 150 tensor: a contraction whose second free index is two loops. */
#include <stdio.h>
#include <time.h>
#ifndef NA
#define NA 160
#endif
#ifndef NB
#define NB 120
#endif
#ifndef NC
#define NC 150
#endif
#ifndef ND
#define ND 170
#endif
double X[ND][NB][NC], Y[NA][NB][NC], U[NA][ND];
int main(void) {
  int a, b, c, d;
  for (d = 0; d < ND; d++) for (b = 0; b < NB; b++) for (c = 0; c < NC; c++) X[d][b][c] = ((d + 3 * b + c) % 17) / 17.0;
  for (a = 0; a < NA; a++) for (b = 0; b < NB; b++) for (c = 0; c < NC; c++) Y[a][b][c] = ((a + b) % 3) / 3.0;
  for (a = 0; a < NA; a++) for (d = 0; d < ND; d++) U[a][d] = ((a * 5 + d) % 11) / 11.0;
  struct timespec start, stop;
  clock_gettime(CLOCK_MONOTONIC, &start);
#pragma scop
  for (a = 0; a < NA; a++)
    for (b = 0; b < NB; b++)
      for (c = 0; c < NC; c++)
        for (d = 0; d < ND; d++)
          Y[a][b][c] += U[a][d] * X[d][b][c];
#pragma endscop
  clock_gettime(CLOCK_MONOTONIC, &stop);
  double cs = 0;
  for (a = 0; a < NA; a++) for (b = 0; b < NB; b++) for (c = 0; c < NC; c++) cs += Y[a][b][c] * ((a + b + c) % 5);
  printf("time: %.6f\n", (stop.tv_sec - start.tv_sec) + 1e-9 * (stop.tv_nsec - start.tv_nsec));
  printf("checksum: %.10e\n", cs);
  return 0;
}
