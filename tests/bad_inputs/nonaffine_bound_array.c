// expect: 11: non-affine loop bound
// loop bound reads an array
#include <stdio.h>
#define N 16
double A[N][N], B[N][N], x[N], y[N];
int idx[N];
int main(void) {
  int i, j, n = N;
#pragma scop
  for (j = 0; j < n; j++)
    for (i = 0; i < idx[j]; i++)
      A[j][i] = 1.0;
#pragma endscop
  printf("%g\n", A[1][1] + x[1]);
  return 0;
}
