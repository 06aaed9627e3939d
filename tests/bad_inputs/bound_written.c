// expect: 11: written inside the scop
// loop bound variable n is assigned inside the scop
#include <stdio.h>
#define N 16
double A[N][N], B[N][N], x[N], y[N];
int idx[N];
int main(void) {
  int i, j, n = N;
#pragma scop
  for (j = 0; j < 4; j++) {
    for (i = 0; i < n; i++)
      x[i] = y[j];
    n = n - 1;
  }
#pragma endscop
  printf("%g\n", A[1][1] + x[1]);
  return 0;
}
