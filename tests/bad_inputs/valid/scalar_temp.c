// expect: ok
// scalar temporaries written inside the scop (declared outside, and declared inside the loop body)
#include <stdio.h>
#define N 18
double A[N][N], B[N][N], s;

int main(void) {
  int i, j;
  double t;
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++) {
      A[i][j] = ((i * 3 + j * 5) % 7) * 0.25;
      B[i][j] = 0.0;
    }
  s = 0.0;
#pragma scop
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++) {
      t = A[i][j] * 0.5;
      B[i][j] = t + t * 0.25;
    }
  for (i = 0; i < N; i++) {
    double u = A[i][i] + 1.0;
    for (j = 1; j < N; j++)
      A[i][j] = A[i][j - 1] * 0.5 + u;
    s = s + A[i][N - 1];
  }
#pragma endscop
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      printf("%.17g %.17g\n", A[i][j], B[i][j]);
  printf("%.17g %.17g\n", s, t);
  return 0;
}
