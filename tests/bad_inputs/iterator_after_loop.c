// expect: 14: loop iterator 'i' is read outside its loop
/* Pluto's test/dfp/scalar-distribute.c shape: C gives i == N after the loop; polytune must not take the
   iterator for a parameter (it read the value i had before the region). */
#include <stdio.h>
#define N 10
double A[N], B[N + 1], s;
int main(void) {
  int i;
  for (i = 0; i <= N; i++) { A[i % N] = i; B[i] = 10 * i; }
  i = 5;
#pragma scop
  for (i = 0; i < N; i++)
    A[i] = 2 * A[i];
  s = B[i];
#pragma endscop
  printf("%g %g\n", s, A[9]);
  return 0;
}
