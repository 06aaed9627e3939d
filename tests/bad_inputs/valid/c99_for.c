// expect: ok
// C99 loop declarations 'for (int i = ...)' and a 2-d stencil-like update
#include <stdio.h>
#define N 20
double A[N][N], B[N][N];

int main(void) {
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      A[i][j] = ((i * 7 + j * 3) % 11) * 0.125;
      B[i][j] = ((i + 2 * j) % 5) * 0.25;
    }
#pragma scop
  for (int t = 0; t < 3; t++)
    for (int i = 1; i < N - 1; i++)
      for (int j = 1; j < N - 1; j++)
        A[i][j] = (A[i - 1][j] + A[i][j - 1] + A[i][j] + B[i][j + 1]) * 0.25;
#pragma endscop
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      printf("%.17g\n", A[i][j]);
  return 0;
}
