// expect: 10: unsupported 'for' increment
// step by a parameter: i += n
#include <stdio.h>
#define N 16
double A[N][N], B[N][N], x[N], y[N];
int idx[N];
int main(void) {
  int i, j, n = N;
#pragma scop
  for (i = 0; i < 100; i += n)
    x[i % N] = y[i % N];
#pragma endscop
  printf("%g\n", A[1][1] + x[1]);
  return 0;
}
