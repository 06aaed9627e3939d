/* jacobi_flat.c -- Jacobi iterations for the Poisson equation on a square grid stored as one flat array.
 * Style: the Jacobi solver of HPC course material and OpenMP tutorials: u[i*n + j], a scratch grid, a copy
 *   back after each sweep, the source term h2 * f[i*n + j], doubles, sizes as int parameters.
 * Blockers: flattened subscripts whose shape follows from the bounds (u[(i-1)*n + j] ... with 1 <= j < n-1),
 *   pointer parameters without restrict.
 * Args: N ITERS (default 2000 25). small-args: 17 3 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void jacobi(int n, int iters, double h2, double *u, double *unew, const double *f)
{
    /* hot */
    for (int it = 0; it < iters; it++) {
        for (int i = 1; i < n - 1; i++) {
            for (int j = 1; j < n - 1; j++) {
                unew[i * n + j] = 0.25 * (u[(i - 1) * n + j] + u[(i + 1) * n + j]
                                          + u[i * n + j - 1] + u[i * n + j + 1] - h2 * f[i * n + j]);
            }
        }
        for (int i = 1; i < n - 1; i++) {
            for (int j = 1; j < n - 1; j++) {
                u[i * n + j] = unew[i * n + j];
            }
        }
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
    int n = argc > 1 ? atoi(argv[1]) : 2000;
    int iters = argc > 2 ? atoi(argv[2]) : 25;
    double *u = malloc(sizeof(double) * n * n);
    double *unew = calloc((size_t)n * n, sizeof(double));
    double *f = malloc(sizeof(double) * n * n);
    for (int i = 0; i < n * n; i++) {
        u[i] = (double)((i * 7) % 13) / 13.0;
        f[i] = (double)((i * 3 + 1) % 11) / 11.0;
    }
    double h2 = 1.0 / ((double)(n - 1) * (n - 1));

    double t0 = wall();
    jacobi(n, iters, h2, u, unew, f);
    double t1 = wall();

    double cs = 0.0;
    for (int i = 0; i < n * n; i++)
        cs += u[i] * (1 + i % 7);
    unsigned long long h = fnv1a(14695981039346656037ULL, u, sizeof(double) * n * n);
    h = fnv1a(h, unew, sizeof(double) * n * n);
    printf("time: %.6f\n", t1 - t0);
    printf("checksum: %.10e\n", cs);
    printf("hash: %016llx\n", h);
    free(u); free(unew); free(f);
    return 0;
}
