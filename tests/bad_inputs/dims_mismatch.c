// expect: 14: subscripts
// array used with different numbers of subscripts
#include <stdio.h>
#define N 16
double A[N][N], B[N][N], x[N], y[N];
int idx[N];
double C[N][N];
int main(void) {
  int i, j, n = N;
  double *p;
#pragma scop
  for (i = 0; i < n; i++) {
    C[i][0] = 1.0;
    p = C[i];
  }
#pragma endscop
  printf("%g\n", p[0]);
  return 0;
}
