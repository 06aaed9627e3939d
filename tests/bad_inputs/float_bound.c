// expect: 10: 
// a double variable in a bound was modelled as an integer parameter (wrong results, an invalid OpenMP predicate)
// a loop bound that is not an integer (d is a double) is outside the model
#include <stdio.h>
double A[8][8];
int main(void) {
  int i, j;
  double d = 2.5;
#pragma scop
  for (i = 0; i < d; i++)
    for (j = 0; j < d; j++)
      A[i][j] = A[i][j] + 1.0;
#pragma endscop
  printf("%g\n", A[2][2]);
  return 0;
}
