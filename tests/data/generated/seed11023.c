#include <stdio.h>

#define NMAX 9
static double A[26][26];
static double t = 0.5;

static double kernel0(int n, double s)
{
  int i, j, k;
#pragma scop
  for (i = n - 1 - 1; i >= 1; i--) {
    A[i + 2][i + 3] = s * 0.5 + A[2 * i + 0][i + 0] * 0.25;
  }
  for (i = n - 2 - 1; i >= 1; i -= 2) {
    for (j = 0; j < i; j++) {
      A[j + 1][j + 1] = A[(j < 4 ? j : 4)][(i < 4 ? i : 4)] * 0.5 + A[2][j + 3] * 0.25 + 1.0;
    }
    for (j = 1; j < 3; j++) {
      s = A[j + 1][j + 0] * 0.5 + 0.25;
      A[2][j + 3] = A[j + 3][j + 0] * 0.5 + A[2 * i + 1][j + 3] * 0.25 + 1.0;
    }
  }
#pragma endscop
  return s;
}

static double kernel1(int n, double s)
{
  int i, j, k;
#pragma scop
  for (i = 1; i < 3; i++) {
    for (j = i + 1; j < n - 2; j++) {
      s = A[j + 0][2 * i + 2] * 0.5 + s * 0.25;
    }
  }
  for (i = 0; i < 3; i++) {
    A[i + 0][(i < 4 ? i : 4)] = t * 0.25 + A[i + 0][i + 0] * 0.5;
    A[(i < 4 ? i : 4)][2 * i + 2] = s * 0.5 + A[2 * i + 2][i + 3] * 0.25;
  }
  for (i = 1; i < 3; i++) {
    A[i + 0][i + 3] = A[i + 2][i + 2] * 0.5 + A[i + 0][13 - i] * 0.25 + 1.0;
  }
#pragma endscop
  return s;
}

static double kernel2(int n, double s)
{
  int i, j, k;
#pragma scop
  for (i = 1; i < 3; i++) {
    for (j = 0; j < n - i; j++) {
      for (k = i + 1; k < n; k += 3) {
        A[i + 0][j + 1] = t * 0.25 + A[j + 1][i + 1] * 0.5;
      }
    }
  }
  for (i = 0; i < n; i++) {
    for (j = 1; j < i + 1; j++) {
      A[i + 0][i + 1] = A[i + 0][j + 0] * 0.5 + A[j + 0][j + 0] * 0.25 + 1.0;
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
    }
  printf("%.17g\n", t);
  return 0;
}
