// expect: 10: a statement under a data-dependent condition writes 'x'
#include <stdio.h>
#define N 16
double A[N][N], B[N][N], x[N], y[N];
int idx[N];
int main(void) {
  int i, j, n = N;
#pragma scop
  for (i = 0; i < n; i++)
    if (x[i] > 0) {
      x[i] = 0;
      y[i] = x[i];
    }
#pragma endscop
  printf("%g\n", A[1][1] + x[1]);
  return 0;
}
