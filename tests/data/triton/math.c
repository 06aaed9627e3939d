/* C math functions the Triton target maps to CUDA's libdevice (pow, tanh, atan2, ...), in float and
 * double. Under Triton's interpreter these cannot run (no extern calls there): tests compile them for
 * the GPU ahead of time. */
#pragma GCC diagnostic ignored "-Wunknown-pragmas" /* #pragma scop / endscop */
#include <math.h>
#include <stdio.h>

#ifndef N
#define N 64
#endif

static double X[N], Y[N];
static float P[N], Q[N];

int main(void)
{
  double cs = 0.0;
  for (int i = 0; i < N; i++) {
    X[i] = 0.5 + (double)(i % 9) / 9.0;
    P[i] = 0.25f + (float)(i % 5) / 5.0f;
  }
#pragma scop
  for (int i = 0; i < N; i++) {
    Y[i] = pow(X[i], 1.5) + tanh(X[i]) + atan2(X[i], 2.0) + log10(X[i]) + cbrt(X[i]) + erfc(X[i])
           + copysign(1.0, X[i] - 1.0) + round(4.0 * X[i]) + fma(X[i], 2.0, 1.0);
    Q[i] = powf(P[i], 2.5f) + tanhf(P[i]) + erff(P[i]) + hypotf(P[i], 1.0f) + truncf(8.0f * P[i]);
  }
#pragma endscop
  for (int i = 0; i < N; i++)
    cs += Y[i] + Q[i];
  printf("checksum %.10e\n", cs);
  return 0;
}
