#include <stdio.h>
#include <stdlib.h>
double A[200][16], B[200][16];
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 100;
  if (n > 200) n = 200;
  for (int i = 0; i < 200; i++) for (int j = 0; j < 16; j++) { A[i][j] = (i + j) % 5; B[i][j] = (3 * i + j) % 7; }
#pragma scop
  for (int i = 0; i < n; i++)
    for (int j = 0; j < 16; j++)
      A[i][j] = B[i][j] * 2.0 + A[i][j] * 0.5 + j;
#pragma endscop
  for (int i = 0; i < 200; i++) printf("%.17g %.17g\n", A[i][3], A[i][15]);
  return 0;
}
