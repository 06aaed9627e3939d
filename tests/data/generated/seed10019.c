#include <stdio.h>

#define NMAX 9
static double A[26][26], B[26][26];
static double t = 0.5;

static double kernel0(int n, double s)
{
  int i, j, k;
#pragma scop
  for (i = 0; i < 3; i++) {
    for (j = 0; j < i + 1; j++) {
      for (k = i + 1; k < j; k++) {
        t = B[13 - j][j + 1] * 0.5 + t * 0.25;
      }
    }
  }
#pragma endscop
  return s;
}

static double kernel1(int n, double s)
{
  int i, j, k;
#pragma scop
  for (i = 0; i < n - 2; i += 3) {
    B[i + 1][i + 3] = B[i + 0][13 - i] * 0.5 + B[i + 2][i + 2] * 0.25 + 1.0;
  }
  for (i = n - 1; i >= 1; i--) {
    B[13 - i][i + 0] = B[i + 1][i + 0] * 0.5 + B[i + 0][i + 3] * 0.25 + 1.0;
    for (j = 1; j < n - i; j++) {
      t = A[j + 0][i + 3] * 0.5 + t * 0.25;
    }
  }
#pragma endscop
  return s;
}

static double kernel2(int n, double s)
{
  int i, j, k;
#pragma scop
  for (i = 1; i < 3; i++) {
    for (j = i + 1; j < i + 1; j++) {
      for (k = j + 1; k < 3; k += 3) {
        if (i < n - 2)
          s = B[k + 1][13 - j] * 0.5 + s * 0.25;
      }
    }
  }
  for (i = 0; i < n; i++) {
    for (j = i; j < n; j++) {
      s += B[13 - j][2 * j + 2] * 0.125;
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
    }
  for (n = 0; n < 5; n++) {
    static const int ns[] = {0, 1, 2, 3, 9};
    printf("%.17g\n", kernel0(ns[n], 0.75 + 0));
    printf("%.17g\n", kernel1(ns[n], 0.75 + 1));
    printf("%.17g\n", kernel2(ns[n], 0.75 + 2));
  }
  for (i = 0; i < 26; i++)
    for (j = 0; j < 26; j++) {
      printf("%.17g\n", A[i][j]);
      printf("%.17g\n", B[i][j]);
    }
  printf("%.17g\n", t);
  return 0;
}
