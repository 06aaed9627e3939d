// expect: 12: non-affine subscript
// product of two iterators in a subscript
#include <stdio.h>
#define N 16
double A[N][N], B[N][N], x[N], y[N];
int idx[N];
int main(void) {
  int i, j, n = N;
#pragma scop
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      x[i * j % N] = A[i][j];
#pragma endscop
  printf("%g\n", A[1][1] + x[1]);
  return 0;
}
