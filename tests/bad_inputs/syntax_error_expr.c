// expect: 13: syntax error
// xfail: pycparser raises 'Invalid expression' without a line; polytune then reports the '#pragma scop' line (10) instead of 13
// incomplete expression: 'y[i] = x[i] + ;'
#include <stdio.h>
#define N 16
double A[N][N], B[N][N], x[N], y[N];
int idx[N];
int main(void) {
  int i, j, n = N;
#pragma scop
  for (i = 0; i < n; i++) {
    x[i] = y[i];
    y[i] = x[i] + ;
  }
#pragma endscop
  printf("%g\n", A[1][1] + x[1]);
  return 0;
}
