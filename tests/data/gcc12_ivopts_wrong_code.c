/* gcc 12.2 (Debian 12.2.0-14) miscompiles this loop nest at -O1 and -O2: it prints 747825 where -O0, -O3 and
   -O2 -fno-ivopts print 761921 (the induction-variable optimization). Found in polytune's CUDA output of random
   program 82153 (tests/progen.py) run through the CPU emulation, whose kernel is this nest; nvcc compiles it
   right. The emulation builds therefore use -fno-ivopts (tests/test_gpu_random_nests.py). */
#include <stdio.h>
double A[26][26];
__attribute__((noinline)) void k(int n) {
  for (long i = 1; i < n; i++)
    for (long j = 0; j < 4; j += 2)
      for (long k = j + 1; k < n - j; k++)
        A[13 - k][2 * i] = A[2 * k + 2][j] + A[k][i];
}
int main() {
  for (int i = 0; i < 26; i++) for (int j = 0; j < 26; j++) A[i][j] = i + j;
  k(9);
  double s = 0; for (int i = 0; i < 26; i++) for (int j = 0; j < 26; j++) s += A[i][j] * (i + 2 * j);
  printf("%.17g\n", s);
}
