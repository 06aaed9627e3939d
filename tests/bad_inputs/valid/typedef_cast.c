// expect: ok
// a typedef'd element type, used in casts inside the scop
#include <stdio.h>
#define N 22
typedef double real;
typedef int idx_t;
real A[N][N], v[N];

int main(void) {
  idx_t i, j;
  for (i = 0; i < N; i++) {
    v[i] = (real)(i % 5);
    for (j = 0; j < N; j++)
      A[i][j] = (real)((i * j) % 7) * (real)0.25;
  }
#pragma scop
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      A[i][j] = A[i][j] * (real)0.5 + (real)i * 0.125 + (real)(j - i) * v[j];
#pragma endscop
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      printf("%.17g\n", A[i][j]);
  return 0;
}
