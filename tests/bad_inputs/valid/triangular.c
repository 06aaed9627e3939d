// expect: ok
// triangular and trapezoidal bounds (j <= i, k < i + 2, j >= i - 3)
#include <stdio.h>
#define N 13
double L[N + 4][N + 4], x[N + 4], b[N + 4];

int main(void) {
  int i, j, k;
  for (i = 0; i < N + 4; i++) {
    x[i] = 0.0;
    b[i] = (i % 7) * 0.5 + 1.0;
    for (j = 0; j < N + 4; j++)
      L[i][j] = ((i * 5 + j) % 9) * 0.0625 + (i == j);
  }
#pragma scop
  for (i = 0; i < N; i++) {
    x[i] = b[i];
    for (j = 0; j < i; j++)
      x[i] = x[i] - L[i][j] * x[j] * 0.125;
    x[i] = x[i] / L[i][i];
  }
  for (i = 0; i < N; i++)
    for (k = 0; k < i + 2; k++)
      for (j = i - 3 > 0 ? i - 3 : 0; j <= i; j++)
        L[k][j] = L[k][j] * 0.5 + x[j] * 0.25;
#pragma endscop
  for (i = 0; i < N + 4; i++) {
    printf("%.17g\n", x[i]);
    for (j = 0; j < N + 4; j++)
      printf("%.17g\n", L[i][j]);
  }
  return 0;
}
