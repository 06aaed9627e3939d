/* stencil3d_ns.c -- GPU benchmark: 3-D high-order stencil of a compressible Navier-Stokes code
 * (the shape of the "hypterm" flux kernel of ExaCT's CNS proxy app), single precision.
 * Inputs: density rho, velocities u, v, w and pressure p, float [N][N][N].
 * Every derivative is the 8th-order central difference, radius 4 on each axis:
 *   d/dx f = dxinv * (ALP*(f[i+1]-f[i-1]) + BET*(f[i+2]-f[i-2]) + GAM*(f[i+3]-f[i-3]) + DEL*(f[i+4]-f[i-4]))
 *   with ALP = 4/5, BET = -1/5, GAM = 4/105, DEL = -1/280 (and likewise along j, k).
 * Outputs, on the interior 4 <= i, j, k < N-4 (their border stays 0), in one i, j, k loop nest:
 *   divu  = du/dx + dv/dy + dw/dz                               (velocity divergence)
 *   dmass = d(rho u)/dx + d(rho v)/dy + d(rho w)/dz             (mass flux divergence)
 *   dmx   = d(rho u u + p)/dx + d(rho u v)/dy + d(rho u w)/dz   (x-momentum flux divergence)
 * (the right-hand sides of the mass and x-momentum equations are -dmass and -dmx).
 * Grid spacing h = 1/N on each axis (dxinv = dyinv = dzinv = N). The inputs are increasing
 * ramps plus bounded integer "noise", so every derivative is mostly positive and the checksum
 * does not cancel (with periodic data the derivative sums telescope to almost nothing).
 * Size macro: N (default 256: 64 MB per array, 8 arrays; N > 8 so that the interior is not empty).
 * Small test: -DN=13.
 * Output: time of the scop call, checksum = weighted sum of divu, dmass and dmx accumulated in double. */
#define _POSIX_C_SOURCE 199309L
#pragma GCC diagnostic ignored "-Wunknown-pragmas" /* #pragma scop / endscop */
#include <stdio.h>
#include <time.h>

#ifndef N
#define N 256
#endif
#if N <= 8
#error "stencil3d_ns: N must be greater than 8 (radius-4 stencil)"
#endif

/* 8th-order central difference coefficients */
#define ALP (4.0f / 5.0f)
#define BET (-1.0f / 5.0f)
#define GAM (4.0f / 105.0f)
#define DEL (-1.0f / 280.0f)

static float rho[N][N][N], u[N][N][N], v[N][N][N], w[N][N][N], p[N][N][N];
static float divu[N][N][N], dmass[N][N][N], dmx[N][N][N];

static void kernel_ns(int n, float dxinv, float dyinv, float dzinv,
                      float rho[N][N][N], float u[N][N][N], float v[N][N][N], float w[N][N][N],
                      float p[N][N][N], float divu[N][N][N], float dmass[N][N][N], float dmx[N][N][N])
{
  int i, j, k;
#pragma scop
  for (i = 4; i < n - 4; i++)
    for (j = 4; j < n - 4; j++)
      for (k = 4; k < n - 4; k++) {
        divu[i][j][k] = dxinv * (ALP * (u[i+1][j][k] - u[i-1][j][k])
                               + BET * (u[i+2][j][k] - u[i-2][j][k])
                               + GAM * (u[i+3][j][k] - u[i-3][j][k])
                               + DEL * (u[i+4][j][k] - u[i-4][j][k]))
                      + dyinv * (ALP * (v[i][j+1][k] - v[i][j-1][k])
                               + BET * (v[i][j+2][k] - v[i][j-2][k])
                               + GAM * (v[i][j+3][k] - v[i][j-3][k])
                               + DEL * (v[i][j+4][k] - v[i][j-4][k]))
                      + dzinv * (ALP * (w[i][j][k+1] - w[i][j][k-1])
                               + BET * (w[i][j][k+2] - w[i][j][k-2])
                               + GAM * (w[i][j][k+3] - w[i][j][k-3])
                               + DEL * (w[i][j][k+4] - w[i][j][k-4]));
        dmass[i][j][k] = dxinv * (ALP * (rho[i+1][j][k] * u[i+1][j][k] - rho[i-1][j][k] * u[i-1][j][k])
                                + BET * (rho[i+2][j][k] * u[i+2][j][k] - rho[i-2][j][k] * u[i-2][j][k])
                                + GAM * (rho[i+3][j][k] * u[i+3][j][k] - rho[i-3][j][k] * u[i-3][j][k])
                                + DEL * (rho[i+4][j][k] * u[i+4][j][k] - rho[i-4][j][k] * u[i-4][j][k]))
                       + dyinv * (ALP * (rho[i][j+1][k] * v[i][j+1][k] - rho[i][j-1][k] * v[i][j-1][k])
                                + BET * (rho[i][j+2][k] * v[i][j+2][k] - rho[i][j-2][k] * v[i][j-2][k])
                                + GAM * (rho[i][j+3][k] * v[i][j+3][k] - rho[i][j-3][k] * v[i][j-3][k])
                                + DEL * (rho[i][j+4][k] * v[i][j+4][k] - rho[i][j-4][k] * v[i][j-4][k]))
                       + dzinv * (ALP * (rho[i][j][k+1] * w[i][j][k+1] - rho[i][j][k-1] * w[i][j][k-1])
                                + BET * (rho[i][j][k+2] * w[i][j][k+2] - rho[i][j][k-2] * w[i][j][k-2])
                                + GAM * (rho[i][j][k+3] * w[i][j][k+3] - rho[i][j][k-3] * w[i][j][k-3])
                                + DEL * (rho[i][j][k+4] * w[i][j][k+4] - rho[i][j][k-4] * w[i][j][k-4]));
        dmx[i][j][k] = dxinv * (ALP * ((rho[i+1][j][k] * u[i+1][j][k] * u[i+1][j][k] + p[i+1][j][k])
                                     - (rho[i-1][j][k] * u[i-1][j][k] * u[i-1][j][k] + p[i-1][j][k]))
                              + BET * ((rho[i+2][j][k] * u[i+2][j][k] * u[i+2][j][k] + p[i+2][j][k])
                                     - (rho[i-2][j][k] * u[i-2][j][k] * u[i-2][j][k] + p[i-2][j][k]))
                              + GAM * ((rho[i+3][j][k] * u[i+3][j][k] * u[i+3][j][k] + p[i+3][j][k])
                                     - (rho[i-3][j][k] * u[i-3][j][k] * u[i-3][j][k] + p[i-3][j][k]))
                              + DEL * ((rho[i+4][j][k] * u[i+4][j][k] * u[i+4][j][k] + p[i+4][j][k])
                                     - (rho[i-4][j][k] * u[i-4][j][k] * u[i-4][j][k] + p[i-4][j][k])))
                     + dyinv * (ALP * (rho[i][j+1][k] * u[i][j+1][k] * v[i][j+1][k]
                                     - rho[i][j-1][k] * u[i][j-1][k] * v[i][j-1][k])
                              + BET * (rho[i][j+2][k] * u[i][j+2][k] * v[i][j+2][k]
                                     - rho[i][j-2][k] * u[i][j-2][k] * v[i][j-2][k])
                              + GAM * (rho[i][j+3][k] * u[i][j+3][k] * v[i][j+3][k]
                                     - rho[i][j-3][k] * u[i][j-3][k] * v[i][j-3][k])
                              + DEL * (rho[i][j+4][k] * u[i][j+4][k] * v[i][j+4][k]
                                     - rho[i][j-4][k] * u[i][j-4][k] * v[i][j-4][k]))
                     + dzinv * (ALP * (rho[i][j][k+1] * u[i][j][k+1] * w[i][j][k+1]
                                     - rho[i][j][k-1] * u[i][j][k-1] * w[i][j][k-1])
                              + BET * (rho[i][j][k+2] * u[i][j][k+2] * w[i][j][k+2]
                                     - rho[i][j][k-2] * u[i][j][k-2] * w[i][j][k-2])
                              + GAM * (rho[i][j][k+3] * u[i][j][k+3] * w[i][j][k+3]
                                     - rho[i][j][k-3] * u[i][j][k-3] * w[i][j][k-3])
                              + DEL * (rho[i][j][k+4] * u[i][j][k+4] * w[i][j][k+4]
                                     - rho[i][j][k-4] * u[i][j][k-4] * w[i][j][k-4]));
      }
#pragma endscop
}

int main(void)
{
  int i, j, k;
  struct timespec t0, t1;
  double cs = 0.0;

  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      for (k = 0; k < N; k++) {
        rho[i][j][k] = 1.0f + ((float)(i + j + k) + (float)((i * j + 3 * k + 1) % 13) / 26.0f) / (3 * N);
        u[i][j][k] = ((float)i + (float)((i * k + 2 * j + 5) % 17) / 34.0f) / N;
        v[i][j][k] = ((float)j + (float)((3 * i + j * k + 2) % 19) / 38.0f) / N;
        w[i][j][k] = ((float)k + (float)((i * j + 5 * k + 1) % 23) / 46.0f) / N;
        p[i][j][k] = 1.0f + ((float)i + (float)((2 * i + j * k + 7) % 11) / 22.0f) / N;
      }

  clock_gettime(CLOCK_MONOTONIC, &t0);
  kernel_ns(N, (float)N, (float)N, (float)N, rho, u, v, w, p, divu, dmass, dmx);
  clock_gettime(CLOCK_MONOTONIC, &t1);

  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      for (k = 0; k < N; k++)
        cs += ((double)divu[i][j][k] + 2.0 * dmass[i][j][k] + 3.0 * dmx[i][j][k]) * (1 + (i * 3 + j * 7 + k) % 13);
  printf("time: %.6f\n", (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec));
  printf("checksum: %.10e\n", cs);
  return 0;
}
