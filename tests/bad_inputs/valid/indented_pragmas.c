// expect: ok
// indented pragmas with extra spaces, a region inside a nested block, a comment on the pragma line
#include <stdio.h>
#define N 15
double A[N][N];

int main(int argc, char **argv) {
  int i, j;
  (void)argv;
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      A[i][j] = ((i * 2 + j) % 9) * 0.25;
  if (argc > 0) {
    for (int rep = 0; rep < 2; rep++) {
      #  pragma   scop   /* start */
      for (i = 1; i < N; i++)
        for (j = 1; j < N; j++)
          A[i][j] = A[i - 1][j] * 0.25 + A[i][j - 1] * 0.5 + 0.125;
      #pragma endscop // end
    }
  }
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      printf("%.17g\n", A[i][j]);
  return 0;
}
