// expect: ok
// loops with constant steps other than 1 (i += 2, j = j + 3, i -= 2)
#include <stdio.h>
#define N 21
double A[N][N], x[N];

int main(void) {
  int i, j;
  for (i = 0; i < N; i++) {
    x[i] = i * 0.5;
    for (j = 0; j < N; j++)
      A[i][j] = ((i * 2 + j) % 5) * 0.25;
  }
#pragma scop
  for (i = 1; i < N; i += 2)
    for (j = 2; j < N; j = j + 3)
      A[i][j] = A[i - 1][j - 2] * 0.5 + x[j];
  for (i = N - 1; i >= 2; i -= 2)
    x[i] = x[i - 2] * 0.5 + A[i][i];
#pragma endscop
  for (i = 0; i < N; i++) {
    printf("%.17g\n", x[i]);
    for (j = 0; j < N; j++)
      printf("%.17g\n", A[i][j]);
  }
  return 0;
}
