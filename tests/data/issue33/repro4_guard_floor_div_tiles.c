#include <stdio.h>
#include <stdlib.h>
double A[23][20], B[23][19];
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 9;
  int m = 12;
  int p = argc > 2 ? atoi(argv[2]) : 15;
  for (int a = 0; a < 23; a++) for (int b = 0; b < 19; b++) { A[a][b] = (a * 3 + b) % 7 - 3; B[a][b] = (a + 5 * b) % 11 - 5; }
#pragma scop
  for (int i = m - 3; i > 5; i -= 3)
    for (int j = p - 2; j >= i + 2; j--)
      for (int k = 0; k < p - i; ++k) {
        if (i % 2 == 0)
          A[(j - 1) / 2][k + 6] = B[(j - 1) / 2 + 1][k + 7] * 0.25;
        B[j - 2][n - 1 - i + 7] = (A[j - 3][n - 1 - i + 7] + k) * 0.33;
      }
#pragma endscop
  for (int a = 0; a < 23; a++) for (int b = 0; b < 19; b++) printf("%.17g %.17g\n", A[a][b], B[a][b]);
  return 0;
}
