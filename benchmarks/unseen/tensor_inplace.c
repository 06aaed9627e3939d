/* A tensor multiplied in place along its last mode (a change of basis in a spectral or Tucker code, the
   operation of PolyBench's doitgen written another way): each fiber T[a][b][.] of a 128 x 120 x 200 tensor
   is replaced by its product with a 200 x 200 matrix, built in a scratch vector and copied back. The values
   are multiples of 1/64, so every sum is exact in any order. */
#include <stdio.h>
#include <time.h>
#ifndef NA
#define NA 128
#endif
#ifndef NB
#define NB 120
#endif
#ifndef NC
#define NC 200
#endif
double T[NA][NB][NC], M[NC][NC], t[NC];
int main(void) {
  int a, b, c, d;
  for (a = 0; a < NA; a++) for (b = 0; b < NB; b++) for (c = 0; c < NC; c++) T[a][b][c] = ((a * 3 + b * 5 + c) % 19 - 9) / 16.0;
  for (d = 0; d < NC; d++) for (c = 0; c < NC; c++) M[d][c] = ((d * 7 + c * 2) % 17 - 8) / 64.0;
  struct timespec start, stop;
  clock_gettime(CLOCK_MONOTONIC, &start);
#pragma scop
  for (a = 0; a < NA; a++)
    for (b = 0; b < NB; b++) {
      for (c = 0; c < NC; c++)
        t[c] = 0.0;
      for (d = 0; d < NC; d++)
        for (c = 0; c < NC; c++)
          t[c] += T[a][b][d] * M[d][c];
      for (c = 0; c < NC; c++)
        T[a][b][c] = t[c];
    }
#pragma endscop
  clock_gettime(CLOCK_MONOTONIC, &stop);
  double cs = 0;
  for (a = 0; a < NA; a++) for (b = 0; b < NB; b++) for (c = 0; c < NC; c++) cs += T[a][b][c] * ((a + 2 * b + 3 * c) % 7);
  printf("time: %.6f\n", (stop.tv_sec - start.tv_sec) + 1e-9 * (stop.tv_nsec - start.tv_nsec));
  printf("checksum: %.10e\n", cs);
  return 0;
}
