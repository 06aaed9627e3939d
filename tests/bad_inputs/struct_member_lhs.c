// expect: 12: struct
// struct member as the assignment target
#include <stdio.h>
#define N 16
double A[N][N], B[N][N], x[N], y[N];
int idx[N];
struct pt { double a, b; } P[N];
int main(void) {
  int i, j, n = N;
#pragma scop
  for (i = 0; i < n; i++)
    P[i].a = y[i];
#pragma endscop
  printf("%g\n", P[1].a);
  return 0;
}
