// expect: ok
// loop bounds with division and modulo by constants, and a '?:' in a statement's value
#include <stdio.h>
#define M 20
double A[M][M];

int main(void) {
  int i, j, n = 19;
  for (i = 0; i < M; i++)
    for (j = 0; j < M; j++)
      A[i][j] = (i + j) % 3;
#pragma scop
  for (i = 0; i < n; i++)
    for (j = (i - 5) / 2 + 3; j <= i / 2 + n % 4; j++)
      A[i][j] = A[i][j] * 0.5 + A[i][j + 1] + (i > 2 ? 1.0 : 0.5);
#pragma endscop
  for (i = 0; i < M; i++)
    for (j = 0; j < M; j++)
      printf("%.17g\n", A[i][j]);
  return 0;
}
