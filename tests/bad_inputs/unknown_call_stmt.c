// expect: 12: side
// call statement with unknown side effects
#include <stdio.h>
#define N 16
double A[N][N], B[N][N], x[N], y[N];
int idx[N];
void touch(double *p) { *p += 1.0; }
int main(void) {
  int i, j, n = N;
#pragma scop
  for (i = 0; i < n; i++)
    touch(x);
#pragma endscop
  printf("%g\n", A[1][1] + x[1]);
  return 0;
}
