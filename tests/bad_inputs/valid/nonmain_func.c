// expect: ok
// a scop inside a function other than main, with a function parameter as loop bound
#include <stdio.h>
#define M 20
static double A[M][M], B[M][M];

static void kernel(int n, int m, double alpha, double P[M][M], double Q[M][M])
{
  int i, j, k;
#pragma scop
  for (i = 0; i < n; i++)
    for (j = 0; j < m; j++) {
      Q[i][j] = Q[i][j] * 0.5;
      for (k = 0; k < j; k++)
        Q[i][j] += alpha * P[i][k] * P[k][j];
    }
#pragma endscop
}

int main(void) {
  int i, j;
  for (i = 0; i < M; i++)
    for (j = 0; j < M; j++) {
      A[i][j] = ((i * 3 + j * 7) % 10) * 0.1;
      B[i][j] = ((i + j) % 3) * 0.5;
    }
  kernel(17, 19, 0.75, A, B);
  for (i = 0; i < M; i++)
    for (j = 0; j < M; j++)
      printf("%.17g\n", B[i][j]);
  return 0;
}
