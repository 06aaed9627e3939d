#include <stdio.h>
double B[64];
int main(void) {
  int n = 40;
  double *p = B;
  for (int q = 0; q < 64; q++) B[q] = q % 7;
#pragma scop
  for (int t = 0; t < 4; t++)
    for (int i = 1; i < n; i++)
      p[i] = (B[i - 1] + B[i + 1]) * 0.5;
#pragma endscop
  for (int q = 0; q < 64; q++) printf("%.17g\n", B[q]);
  return 0;
}
