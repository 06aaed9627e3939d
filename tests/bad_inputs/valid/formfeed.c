// expect: ok
// fixed: lines are split at newlines only
// a form feed (^L, page break) in a comment before the scop; its text must be kept as is
#include <stdio.h>
/* page 1 */
/* page 2 */
double x[10];

int main(void) {
  int i;
#pragma scop
  for (i = 1; i < 10; i++)
    x[i] = x[i - 1] * 0.5 + i;
#pragma endscop
  for (i = 0; i < 10; i++)
    printf("%.17g\n", x[i]);
  return 0;
}
