#include <stdio.h>

#define NMAX 9
static double A[26][26];
static double t = 0.5;

static double kernel0(int n, double s)
{
  int i, j, k;
#pragma scop
  for (i = 0; i < n - 1; i++) {
    for (j = 1; j < n; j++) {
      for (k = j + 1; k < (n - j < 5 ? n - j : 5); k++) {
        A[k + 1][i] = A[(j < 4 ? j : 4)][i + 2] * 0.5 + A[13 - j][i + 2] * 0.25 + 1.0;
      }
    }
    A[(i < 4 ? i : 4)][13 - i] = A[(i < 4 ? i : 4)][2 * i + 2] * 0.5 + A[i + 3][2] * 0.25 + 1.0;
    if (i % 2 == 0)
      A[i + 0][i + 2] += A[9][i + 3] * 0.125;
  }
  for (i = 0; i < n - 2; i++) {
    s = 0.0;
    for (j = i + 1; j < n - 3; j++) {
      s += A[(j < 4 ? j : 4)][5] * 0.125;
    }
    A[i + 1][(i < 4 ? i : 4)] = s * 0.5 + A[(i < 4 ? i : 4)][(i < 4 ? i : 4)] * 0.25;
  }
  A[5][0] = s * 0.5 + t * 0.25;
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
  }
  for (i = 0; i < 26; i++)
    for (j = 0; j < 26; j++) {
      printf("%.17g\n", A[i][j]);
    }
  printf("%.17g\n", t);
  return 0;
}
