// expect: ok
// 'if' with affine conditions (including '%' by a constant) and an 'else'
#include <stdio.h>
#define N 17
double A[N][N], B[N][N];

int main(void) {
  int i, j;
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++) {
      A[i][j] = ((i * 3 + j) % 7) * 0.5;
      B[i][j] = 0.0;
    }
#pragma scop
  for (i = 1; i < N; i++)
    for (j = 1; j < N; j++) {
      if (i + j < N && j != 5)
        B[i][j] = A[i - 1][j] * 0.5 + 1.0;
      else
        B[i][j] = B[i - 1][j - 1] * 0.25 - A[i][j];
      if (i % 3 == 0)
        A[i][j] = B[i][j] + A[i][j - 1] * 0.5;
    }
#pragma endscop
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      printf("%.17g %.17g\n", A[i][j], B[i][j]);
  return 0;
}
