/* fill.h -- deterministic test data for prog.c. */
#ifndef FILL_H
#define FILL_H
void fill(double *a, int n, int stride, int seed);
#endif
