// expect: ok
// flags: -DN=21 -DSCALE=0.5
// macros from the command line (-D) and from #define, used inside the scop
#include <stdio.h>
#define IDX(i) ((i) + 1)
#define TWICE(e) (2 * (e))
#define HALF (SCALE * 1.0)
double A[N + 2][2 * N + 2], x[2 * N + 2];

int main(void) {
  int i, j;
  for (i = 0; i < N + 2; i++)
    for (j = 0; j < 2 * N + 2; j++)
      A[i][j] = ((i + j * 3) % 7) * 0.25;
  for (j = 0; j < 2 * N + 2; j++)
    x[j] = (j % 4) * 0.5;
#pragma scop
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      A[IDX(i)][TWICE(j)] = A[i][TWICE(j) + 1] * HALF + x[IDX(j)];
#pragma endscop
  for (i = 0; i < N + 2; i++)
    for (j = 0; j < 2 * N + 2; j++)
      printf("%.17g\n", A[i][j]);
  return 0;
}
