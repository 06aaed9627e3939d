// expect: ok
// two scop regions in one file, with code between them that must stay untouched
#include <stdio.h>
#define N 24
double A[N][N], x[N], y[N];

int main(void) {
  int i, j;
  for (i = 0; i < N; i++) {
    x[i] = (i % 6) * 0.5;
    y[i] = 0.0;
    for (j = 0; j < N; j++)
      A[i][j] = ((i + 3 * j) % 8) * 0.125;
  }
#pragma scop
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      y[i] = y[i] + A[i][j] * x[j];
#pragma endscop
  /* between the regions */
  x[0] = y[N - 1] * 0.5;
#pragma scop
  for (i = 1; i < N; i++)
    for (j = 1; j < N; j++)
      A[i][j] = A[i - 1][j] * 0.5 + A[i][j - 1] * 0.25 + y[j];
#pragma endscop
  for (i = 0; i < N; i++) {
    printf("%.17g %.17g\n", x[i], y[i]);
    for (j = 0; j < N; j++)
      printf("%.17g\n", A[i][j]);
  }
  return 0;
}
