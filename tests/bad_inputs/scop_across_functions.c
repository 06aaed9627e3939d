// expect: 13: crosses a function boundary
#include <stdio.h>
#define N 16
double A[N], B[N];
static void f(void)
{
  int i;
#pragma scop
  for (i = 0; i < N; i++)
    A[i] = 2.0 * A[i];
}

static void g(void)
{
  int i;
  for (i = 0; i < N; i++)
    B[i] = A[i] + 1.0;
#pragma endscop
}
int main(void) { f(); g(); printf("%g\n", B[3]); return 0; }
