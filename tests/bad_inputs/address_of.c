// expect: 11: taking an address
#include <stdio.h>
#define N 16
double A[N][N], B[N][N], x[N], y[N];
int idx[N];
int main(void) {
  int i, j, n = N;
  double *p;
#pragma scop
  for (i = 0; i < n; i++)
    p = &x[i];
#pragma endscop
  (void)p;
  printf("%g\n", A[1][1] + x[1]);
  return 0;
}
