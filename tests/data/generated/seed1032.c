#include <stdio.h>

#define NMAX 9
static double A[26][26], B[26][26];
static double t = 0.5;

static double kernel0(int n, double s)
{
  int i, j, k;
#pragma scop
  for (i = 0; i < n - 3; i++) {
    for (j = (0 > 1 ? 0 : 1); j < (i + 1 < 5 ? i + 1 : 5); j++) {
      t = A[2 * i + 1][i + 0] * 0.5 + t * 0.25;
    }
  }
  for (i = 0; i < n; i += 3) {
    for (j = 0; j < 3; j += 3) {
      for (k = 0; k < j + 1; k++) {
        s = B[(k < 4 ? k : 4)][13 - j] * 0.5 + s * 0.25;
      }
    }
  }
  for (i = (1 > 1 ? 1 : 1); i < (n - 3 < 7 ? n - 3 : 7); i++) {
    for (j = i; j < n - 1; j++) {
      s = 0.0;
      for (k = n - 2 - 1; k >= j + 1; k -= 2) {
        s += A[j + 0][i] * 0.125;
      }
      A[13 - j][j + 1] = s * 0.5 + B[j + 0][i] * 0.25;
    }
  }
  B[0][5] = s * 0.5 + t * 0.25;
#pragma endscop
  return s;
}

static double kernel1(int n, double s)
{
  int i, j, k;
#pragma scop
  for (i = 0; i < n; i++) {
    for (j = i; j < 3; j++) {
      for (k = j + 1; k < (i + 1 < 7 ? i + 1 : 7); k += 2) {
        s += B[j + 1][i] * 0.125;
      }
    }
    B[13 - i][i + 3] = B[i + 3][i + 0] * 0.5 + A[(i < 4 ? i : 4)][2 * i + 2] * 0.25 + 1.0;
    for (j = 0; j < n - 2; j++) {
      for (k = j - 1; k >= j; k -= 2) {
        if (k % 2 == 0)
          B[2 * k + 0][2 * i + 1] = B[i + 0][0] * 0.5 + A[k + 1][k + 1] * 0.25 + 1.0;
      }
    }
  }
  for (i = 1; i < n - 3; i++) {
    for (j = 1; j < i + 1; j += 3) {
      for (k = n - 2 - 1; k >= j; k -= 2) {
        if (i <= k)
          A[k + 2][i + 2] = t * 0.25 + B[k + 1][i] * 0.5;
      }
    }
  }
#pragma endscop
  return s;
}

static double kernel2(int n, double s)
{
  int i, j, k;
#pragma scop
  for (i = 1; i < n - 2; i++) {
    for (j = i; j < n; j++) {
      B[13 - i][13 - i] = B[2 * j + 2][j + 1] * 0.5 + A[5][i + 2] * 0.25 + 1.0;
    }
    s = B[i][i + 0] * 0.5 + 0.25;
    for (j = i + 1 - 1; j >= i; j--) {
      for (k = (i + 1 > 1 ? i + 1 : 1); k < (i < 7 ? i : 7); k++) {
        s = A[13 - k][2 * i + 1] * 0.5 + s * 0.25;
      }
    }
    s = B[i + 1][i + 1] * 0.5 + 0.25;
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
