// expect: ok
// or-reject: 12
// xfail-run: 'i != n' is modelled as 'i < n or i > n': the domain is unbounded and the output has a second loop 'for (c0 = max(0, n + 1); 1; c0++)' (infinite; with -fopenmp: invalid controlling predicate)
// a loop condition 'i != n' (rejecting it with a FILE:LINE error would also be fine)
#include <stdio.h>
double x[20];

int main(void) {
  int i, n = 16;
  for (i = 0; i < 20; i++) x[i] = 1.0;
#pragma scop
  for (i = 0; i != n; i++)
    x[i] = i * 0.5;
#pragma endscop
  for (i = 0; i < 20; i++)
    printf("%.17g\n", x[i]);
  return 0;
}
