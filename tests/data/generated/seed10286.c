#include <stdio.h>

#define NMAX 9
static double A[26][26], B[26][26], C[26][26];
static double t = 0.5;

static double kernel0(int n, double s)
{
  int i, j, k;
#pragma scop
  for (i = 0; i < n - 3; i++) {
    for (j = i; j < n - 2; j++) {
      for (k = j + 1; k < i; k++) {
        A[j + 3][i + 1] = s * 0.5 + C[k + 2][5] * 0.25;
      }
    }
    for (j = i + 1; j < i; j++) {
      for (k = i + 1; k < n - i; k++) {
        A[2 * k + 1][2 * i + 1] = C[k + 2][5] * 0.5 + C[i + 2][(j < 4 ? j : 4)] * 0.25 + 1.0;
      }
    }
  }
#pragma endscop
  return s;
}

int main(void)
{
  int i, j, n;
  for (i = 0; i < 26; i++)
    for (j = 0; j < 26; j++) {
      A[i][j] = (double)((i * 7 + j * 3 + 0) % 17) * 0.125 - 1.0;
      B[i][j] = (double)((i * 9 + j * 4 + 1) % 17) * 0.125 - 1.0;
      C[i][j] = (double)((i * 11 + j * 5 + 2) % 17) * 0.125 - 1.0;
    }
  for (n = 0; n < 5; n++) {
    static const int ns[] = {0, 1, 2, 3, 9};
    printf("%.17g\n", kernel0(ns[n], 0.75 + 0));
  }
  for (i = 0; i < 26; i++)
    for (j = 0; j < 26; j++) {
      printf("%.17g\n", A[i][j]);
      printf("%.17g\n", B[i][j]);
      printf("%.17g\n", C[i][j]);
    }
  printf("%.17g\n", t);
  return 0;
}
