// expect: 11: 'continue'
#include <stdio.h>
#define N 16
double A[N][N], B[N][N], x[N], y[N];
int idx[N];
int main(void) {
  int i, j, n = N;
#pragma scop
  for (i = 0; i < n; i++) {
    if (i == 3) { x[i] = 0;
      continue; }
    x[i] = y[i];
  }
#pragma endscop
  printf("%g\n", A[1][1] + x[1]);
  return 0;
}
