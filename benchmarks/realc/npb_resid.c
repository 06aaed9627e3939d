/* npb_resid.c -- a multigrid-style residual r = v - A u (7-point operator) and a Jacobi-like correction u += c r
 * on 3-D grids, repeated.
 * Style: NAS Parallel Benchmarks MG and other Fortran-heritage C: global arrays sized by a compile-time maximum
 *   (u[NM][NM][NM]), loops bounded by the runtime sizes n1, n2, n3, subscripts [i3][i2][i1], coefficients a0, a1.
 * Blockers: none but the missing `#pragma scop` (the control group: shapes declared, bounds plain parameters).
 * Args: N ITERS (default 128 40). small-args: 9 2 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NM 130

static double u[NM][NM][NM], v[NM][NM][NM], r[NM][NM][NM];

void mg_relax(int n1, int n2, int n3, int iters, double a0, double a1, double c)
{
    int it, i1, i2, i3;
    /* hot */
    for (it = 0; it < iters; it++) {
        for (i3 = 1; i3 < n3 - 1; i3++)
            for (i2 = 1; i2 < n2 - 1; i2++)
                for (i1 = 1; i1 < n1 - 1; i1++)
                    r[i3][i2][i1] = v[i3][i2][i1] - a0 * u[i3][i2][i1]
                                    - a1 * (u[i3][i2][i1 - 1] + u[i3][i2][i1 + 1] + u[i3][i2 - 1][i1]
                                            + u[i3][i2 + 1][i1] + u[i3 - 1][i2][i1] + u[i3 + 1][i2][i1]);
        for (i3 = 1; i3 < n3 - 1; i3++)
            for (i2 = 1; i2 < n2 - 1; i2++)
                for (i1 = 1; i1 < n1 - 1; i1++)
                    u[i3][i2][i1] += c * r[i3][i2][i1];
    }
    /* end hot */
}

static double wall(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static unsigned long long fnv1a(unsigned long long h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 1099511628211ULL;
    }
    return h;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 128;
    int iters = argc > 2 ? atoi(argv[2]) : 40;
    if (n > NM)
        n = NM;
    for (int i3 = 0; i3 < n; i3++)
        for (int i2 = 0; i2 < n; i2++)
            for (int i1 = 0; i1 < n; i1++) {
                u[i3][i2][i1] = (double)((i1 * 3 + i2 * 5 + i3 * 7) % 11) / 11.0;
                v[i3][i2][i1] = (double)((i1 + i2 * 2 + i3 * 3) % 7) / 7.0;
            }

    double t0 = wall();
    mg_relax(n, n, n, iters, -6.0 / 8.0, 1.0 / 8.0, 0.1);
    double t1 = wall();

    double cs = 0.0;
    unsigned long long h = 14695981039346656037ULL;
    for (int i3 = 0; i3 < n; i3++)
        for (int i2 = 0; i2 < n; i2++) {
            for (int i1 = 0; i1 < n; i1++)
                cs += u[i3][i2][i1] * (1 + (i1 + i2 + i3) % 7) + r[i3][i2][i1];
            h = fnv1a(h, u[i3][i2], sizeof(double) * n);
            h = fnv1a(h, r[i3][i2], sizeof(double) * n);
        }
    printf("time: %.6f\n", t1 - t0);
    printf("checksum: %.10e\n", cs);
    printf("hash: %016llx\n", h);
    return 0;
}
