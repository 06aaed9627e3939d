#include <stdio.h>
#include <stdlib.h>
double A[64][64];
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 40;
  int tsteps = argc > 2 ? atoi(argv[2]) : 5;
  if (n > 64) n = 64;
  for (int i = 0; i < 64; i++) for (int j = 0; j < 64; j++) A[i][j] = ((i * 7 + j * 3) % 13) / 13.0;
#pragma scop
  for (int t = 0; t < tsteps; t++)
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        A[i][j] = (A[i - 1][j] + A[i][j - 1] + A[i][j] + A[i][j + 1] + A[i + 1][j]) / 5.0;
#pragma endscop
  for (int i = 0; i < 64; i++) for (int j = 0; j < 64; j += 7) printf("%.17g\n", A[i][j]);
  return 0;
}
