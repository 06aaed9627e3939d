#include <stdio.h>
static int A[6][14], B[4][7][7];
static void kernel0(long n, int m, int A_d0, int A_d1, int A[A_d0][A_d1], int B_d0, int B_d1, int B_d2, int B[B_d0][B_d1][B_d2]) {
  #pragma scop
  for (int i1 = 0; i1 < n + 1; i1++) {
    for (int j2 = m; j2 <= n; j2++) {
      for (int k3 = 3; k3 > 2 - 1; k3--) {
        B[k3][3 - k3 + 2][k3 + 2] = (2 * 1 - B[k3][3 - k3 - 1 + 2][k3 + 2] + 3 * A[j2 + 1][2 * j2 + 1 + 6] + 2 * B[k3][k3 + 2][k3 + 2]) % 1009;
        for (int l4 = 2; l4 <= k3 + 1; l4++) {
          A[2 * j2 + 1][j2 + 6] += (3 * A[2 * j2 + 1][j2 + 6] + 3 * A[2 * j2 + 1][j2 - 1 + 6] + j2 - 3 * 3) % 1009;
          B[i1][j2 + 2 + 2][k3 + 2] += (2 * B[k3 - 2][j2 + 2 + 2][1 + 2]) % 1009;
          A[l4 - 2 + 1][n - 1 - l4 + 6] = (3 * A[l4 + 1][n - 1 - l4 - 1 + 6] + 2 * l4 + 2 * A[l4 - 2 + 1 + 1][l4 - 1 + 6]) % 1009;
        }
        for (long l5 = 2 - 1; l5 > 1 - 1; l5--) {
          A[0 + 1][j2 - l5 + 6] = (B[k3 - 2][l5 - 1 + 2][l5 % 2 + 2] + A[j2 - 1 + 1][2 * k3 + 1 + 6] - A[j2 + 1][j2 - l5 - 1 + 6]) % 1009;
        }
      }
      B[j2][2 * i1 + 2][i1 - 2 + 2] = (4 + 2 * 4 + 3 * A[2 + 1][j2 + i1 + 6]) % 1009;
      B[i1][j2 - i1 + 2][j2 + 2] += (B[i1][j2 - i1 + 1 + 2][j2 + 2] - 5 - 2 * i1) % 1009;
    }
  }
  B[1][1 + 2][3 + 2] = (3 * B[3][1 + 2][3 + 1 + 2] + 3 * B[1 - 1][1 + 1 + 2][2 + 2] - 2 * 5) % 1009;
  #pragma endscop
}
int main(void) {
  for (int a = 0; a < 6; a++) for (int b = 0; b < 14; b++) A[a][b] = (a * 5 + b * 3) % 17 - 8;
  for (int a = 0; a < 4; a++) for (int b = 0; b < 7; b++) for (int c = 0; c < 7; c++) B[a][b][c] = (a + 2 * b + 3 * c) % 13 - 6;
  kernel0(2, 1, 6, 14, A, 4, 7, 7, B);
  for (int a = 0; a < 6; a++) for (int b = 0; b < 14; b++) printf("%d\n", A[a][b]);
  for (int a = 0; a < 4; a++) for (int b = 0; b < 7; b++) for (int c = 0; c < 7; c++) printf("%d\n", B[a][b][c]);
  return 0;
}
