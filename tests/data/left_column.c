/* An operand reading a column the product writes earlier: B[k][j - 1] beside B[i][j] +=, k > i. Element
   B[k][j - 1] is written at column j - 1, which a block of columns before the one whose packing reads it can
   hold: the packed code reads it from a snapshot of the rows (tests/test_contraction.py, tests/test_heap.py). */
#include <stdio.h>
#ifndef M
#define M 40
#endif
#ifndef N
#define N 50
#endif
double A[M][M], B[M][N];
int main(void) {
  for (int i = 0; i < M; i++) for (int j = 0; j < M; j++) A[i][j] = (i * 7 + j) % 5 - 2;
  for (int i = 0; i < M; i++) for (int j = 0; j < N; j++) B[i][j] = (i + 3 * j) % 7;
#pragma scop
  for (int i = 0; i < M; i++)
    for (int j = 1; j < N; j++)
      for (int k = i + 1; k < M; k++)
        B[i][j] += A[k][i] * B[k][j - 1];
#pragma endscop
  for (int i = 0; i < M; i++) for (int j = 0; j < N; j++) printf("%.17g\n", B[i][j]);
  return 0;
}
