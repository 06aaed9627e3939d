// expect: ok
// fixed: helper macro prefix avoids the file's identifiers
// the file defines its own c_min (not used inside the region); the generated code must not clobber it
#include <stdio.h>
#define c_min(a, b) ((a) < (b) ? (a) : (b))
double A[40][40];

int main(void) {
  int i, j;
  for (i = 0; i < 40; i++)
    for (j = 0; j < 40; j++)
      A[i][j] = (i * j) % 3;
#pragma scop
  for (i = 0; i < 40; i++)
    for (j = 0; j <= i; j++)
      A[i][j] = A[i][j] * 0.5 + 1.0;
#pragma endscop
  for (i = 0; i < 40; i++)
    for (j = 0; j < 40; j++)
      printf("%.17g\n", A[i][j] + c_min(i, j));
  return 0;
}
