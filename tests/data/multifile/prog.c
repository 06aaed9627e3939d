/* prog.c -- a program of several translation units for polytune's tests: the scop is here, the data
 * comes from fill.c, the checksum from a library built from lib/chk.c (libchk.a), and the size from the
 * command line.  Build: gcc prog.c fill.c -Ilib -Llib -lchk -lm -o prog && ./prog 300 */
#include <stdio.h>
#include <stdlib.h>

#include "fill.h"
#include "chk.h"

#define NMAX 512

static double A[NMAX][NMAX], B[NMAX][NMAX], C[NMAX][NMAX];

static void kernel(int n)
{
  int i, j, k;
#pragma scop
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++) {
      C[i][j] = 0.0;
      for (k = 0; k < n; k++)
        C[i][j] += A[i][k] * B[k][j];
    }
#pragma endscop
}

int main(int argc, char **argv)
{
  if (argc < 2) {
    fprintf(stderr, "usage: %s N (N <= %d)\n", argv[0], NMAX);
    return 2;
  }
  int n = atoi(argv[1]);
  if (n < 0 || n > NMAX) {
    fprintf(stderr, "N must be in 0..%d\n", NMAX);
    return 2;
  }
  fill(&A[0][0], n, NMAX, 1);
  fill(&B[0][0], n, NMAX, 2);
  kernel(n);
  printf("checksum: %s\n", chk_hex(&C[0][0], NMAX * NMAX));
  return 0;
}
