// expect: 12: side
// call to a function whose side effects are unknown
#include <stdio.h>
#define N 16
double A[N][N], B[N][N], x[N], y[N];
int idx[N];
int noisy(int k) { printf("%d\n", k); return k; }
int main(void) {
  int i, j, n = N;
#pragma scop
  for (i = 0; i < n; i++)
    x[i] = noisy(i) + y[i];
#pragma endscop
  printf("%g\n", A[1][1] + x[1]);
  return 0;
}
