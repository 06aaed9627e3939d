// expect: 3: preprocessor
#include <stdio.h>
#include "no_such_header_polytune.h"
int main(void) {
  double x[4] = {0};
  int i;
#pragma scop
  for (i = 0; i < 4; i++)
    x[i] = 1.0;
#pragma endscop
  return 0;
}
