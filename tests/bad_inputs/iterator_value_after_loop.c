// expect: 11: loop iterator 'j' is read outside its loop
#include <stdio.h>
#define N 10
double A[N], s;
int main(void) {
  int i, j;
  for (i = 0; i < N; i++) A[i] = i;
#pragma scop
  for (j = 0; j < N; j++)
    A[j] = 2 * A[j];
  s = j + A[1];
#pragma endscop
  printf("%g\n", s);
  return 0;
}
