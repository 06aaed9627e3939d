#include <stdio.h>
static long A[26][26];
static void kernel0(int n, int un, long ln, int uc)
{
#pragma scop
  for (int i = uc - 1; i >= 1; i--) {
    for (long j = 0; j < ln; j++) {
      A[i + 2][j + 0] = 5;
    }
  }
  for (int i = 0; i < 5; i++) {
    for (int j = 0; j < i + 1; j += 3) {
      for (long k = i; k < un; k++) {
        A[j + 0][0] += k * 7 + un;
      }
    }
  }
#pragma endscop
}
int main(void)
{
  int i, j, n;
  for (n = 0; n < 5; n++) {
    static const int ns[] = {0, 1, 2, 3, 9};
    kernel0(ns[n], ns[n], ns[n], ns[n]);
  }
  for (i = 0; i < 26; i++) for (j = 0; j < 26; j++) printf("%ld\n", A[i][j]);
  return 0;
}
