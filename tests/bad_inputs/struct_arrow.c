// expect: 11: struct member access
#include <stdio.h>
#define N 16
double A[N][N], B[N][N], x[N], y[N];
int idx[N];
struct pt { double a, b; } P[N], *q = P;
int main(void) {
  int i, j, n = N;
#pragma scop
  for (i = 0; i < n; i++)
    x[i] = (q + i)->a;
#pragma endscop
  printf("%g\n", A[1][1] + x[1]);
  return 0;
}
