// expect: 10: 'switch'
#include <stdio.h>
#define N 16
double A[N][N], B[N][N], x[N], y[N];
int idx[N];
int main(void) {
  int i, j, n = N;
#pragma scop
  for (i = 0; i < n; i++) {
    switch (i) {
    case 0: x[i] = 1.0; break;
    default: x[i] = y[i];
    }
  }
#pragma endscop
  printf("%g\n", A[1][1] + x[1]);
  return 0;
}
