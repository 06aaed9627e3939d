// expect: ok
// decreasing loops 'for (i = n - 1; i >= 0; i--)' carrying a dependence backwards
#include <stdio.h>
#define N 23
double x[N + 1], y[N], A[N][N];

int main(void) {
  int i, j, n = N;
  for (i = 0; i < N; i++) {
    x[i] = (i % 5) * 0.5;
    y[i] = (i % 3) * 0.25;
    for (j = 0; j < N; j++)
      A[i][j] = ((i + j) % 4) * 0.125;
  }
  x[N] = 1.0;
#pragma scop
  for (i = n - 1; i >= 0; i--)
    x[i] = x[i + 1] * 0.5 + y[i];
  for (i = n - 1; i >= 1; i--)
    for (j = n - 2; j >= 0; j--)
      A[i][j] = A[i - 1][j + 1] * 0.5 + A[i][j] * 0.25 + x[j];
#pragma endscop
  for (i = 0; i < N; i++) {
    printf("%.17g\n", x[i]);
    for (j = 0; j < N; j++)
      printf("%.17g\n", A[i][j]);
  }
  return 0;
}
