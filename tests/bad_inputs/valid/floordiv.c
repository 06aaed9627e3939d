// expect: ok
// division and modulo by constants in subscripts (C truncates: (i - 3) / 2 is -1 for i = 0)
#include <stdio.h>
#define N 19
double A[N], B[2 * N], C[N];

int main(void) {
  int i;
  for (i = 0; i < N; i++) {
    A[i] = (i % 4) * 0.5 + 1.0;
    C[i] = 0.0;
  }
  for (i = 0; i < 2 * N; i++)
    B[i] = 0.0;
#pragma scop
  for (i = 0; i < N; i++)
    B[i] = A[i / 2] + A[(i + 1) / 2] * 0.5 + A[(i - 3) / 2 + 2] * 0.25;
  for (i = 0; i < 2 * N - 2; i++)
    C[i / 2] = C[i / 2] * 0.5 + B[i] + B[i % 3];
#pragma endscop
  for (i = 0; i < N; i++)
    printf("%.17g %.17g\n", A[i], C[i]);
  for (i = 0; i < 2 * N; i++)
    printf("%.17g\n", B[i]);
  return 0;
}
