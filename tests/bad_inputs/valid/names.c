// expect: ok
// identifiers that are isl keywords (mod, exists, infty, rat) or look like generated names (c0, c1, c_min)
#include <stdio.h>
double c0[40][40], c_min[40];
int main(void) {
  int mod, exists, c1, infty = 30, rat = 3;
  for (mod = 0; mod < 40; mod++) { c_min[mod] = mod * 0.5; for (c1 = 0; c1 < 40; c1++) c0[mod][c1] = (mod + c1) % 7; }
#pragma scop
  for (mod = 1; mod < infty; mod++)
    for (exists = rat; exists <= mod + 5; exists++)
      for (c1 = 0; c1 < 20; c1++)
        c0[mod][exists] = c0[mod - 1][exists] * 0.5 + c_min[c1] * 0.25 + c0[mod][exists - 1] * 0.125;
#pragma endscop
  for (mod = 0; mod < 40; mod++) for (c1 = 0; c1 < 40; c1++) printf("%.17g\n", c0[mod][c1]);
  return 0;
}
