// expect: 11: non-affine subscript
// modulo by a parameter
#include <stdio.h>
#define N 16
double A[N][N], B[N][N], x[N], y[N];
int idx[N];
int main(void) {
  int i, j, n = N;
#pragma scop
  for (i = 0; i < N; i++)
    x[i % n] = y[i];
#pragma endscop
  printf("%g\n", A[1][1] + x[1]);
  return 0;
}
