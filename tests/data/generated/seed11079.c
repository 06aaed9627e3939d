#include <stdio.h>

#define NMAX 9
static double A[26][26], B[26][26];
static double t = 0.5;

static double kernel0(int n, double s)
{
  int i, j, k;
#pragma scop
  for (i = 0; i < n - 1; i++) {
    for (j = 1; j < i; j++) {
      for (k = 3 - 1; k >= j + 1; k--) {
        B[5][13 - i] = s * 0.5 + B[(i < 4 ? i : 4)][k + 0] * 0.25;
      }
    }
  }
  for (i = 1; i < n - 2; i++) {
    for (j = 3 - 1; j >= i; j--) {
      if (i > 1)
        A[i + 3][(i < 4 ? i : 4)] = B[i + 0][j + 2] * 0.5 + A[i + 0][i + 0] * 0.25 + 1.0;
    }
  }
  for (i = n - 1 - 1; i >= 0; i--) {
    B[i + 3][i + 0] = t * 0.25 + B[i + 0][i + 1] * 0.5;
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
    }
  for (n = 0; n < 5; n++) {
    static const int ns[] = {0, 1, 2, 3, 9};
    printf("%.17g\n", kernel0(ns[n], 0.75 + 0));
  }
  for (i = 0; i < 26; i++)
    for (j = 0; j < 26; j++) {
      printf("%.17g\n", A[i][j]);
      printf("%.17g\n", B[i][j]);
    }
  printf("%.17g\n", t);
  return 0;
}
