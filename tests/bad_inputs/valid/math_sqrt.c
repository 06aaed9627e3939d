// expect: ok
// pure math calls (sqrt, fabs, exp) inside statements
#include <math.h>
#include <stdio.h>
#define N 16
double A[N][N], B[N][N];

int main(void) {
  int i, j;
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++) {
      A[i][j] = ((i * 7 + j) % 13) * 0.375 - 2.0;
      B[i][j] = 0.0;
    }
#pragma scop
  for (i = 1; i < N; i++)
    for (j = 0; j < N; j++)
      B[i][j] = sqrt(fabs(A[i][j]) + B[i - 1][j]) + exp(-fabs(A[i - 1][j]));
#pragma endscop
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      printf("%.17g\n", B[i][j]);
  return 0;
}
