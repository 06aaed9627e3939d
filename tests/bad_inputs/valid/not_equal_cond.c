// expect: ok
// or-reject: 11
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
