// expect: 12: syntax error
// missing ';' in a for header
#include <stdio.h>
#define N 16
double A[N][N], B[N][N], x[N], y[N];
int idx[N];
int main(void) {
  int i, j, n = N;
#pragma scop
  for (i = 0; i < n; i++) {
    x[i] = y[i];
    for (j = 0; j < n j++)
      A[i][j] = x[i];
  }
#pragma endscop
  printf("%g\n", A[1][1] + x[1]);
  return 0;
}
