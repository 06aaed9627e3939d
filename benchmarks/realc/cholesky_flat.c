/* cholesky_flat.c -- the Cholesky factor L (A = L L^T) of a symmetric positive definite matrix, row by row.
 * Style: the short Cholesky-Banachiewicz routine found in answers and small numerical libraries: flat
 *   row-major matrices A[i*n + j], L[i*n + j], a dot product s, and an if/else on i == j choosing sqrt() of the
 *   diagonal or the division by L[j*n + j].
 * Blockers: flattened subscripts whose shape follows from the bounds, a condition on the iterators (i == j)
 *   choosing between two statements, sqrt, triangular bounds, pointer parameters without restrict.
 * Args: N (default 1300). small-args: 23 */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void cholesky(const double *A, double *L, int n)
{
    /* hot */
    for (int i = 0; i < n; i++) {
        for (int j = 0; j <= i; j++) {
            double s = 0.0;
            for (int k = 0; k < j; k++)
                s += L[i * n + k] * L[j * n + k];
            if (i == j)
                L[i * n + i] = sqrt(A[i * n + i] - s);
            else
                L[i * n + j] = (A[i * n + j] - s) / L[j * n + j];
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
    int n = argc > 1 ? atoi(argv[1]) : 1300;
    double *A = malloc(sizeof(double) * n * n);
    double *L = calloc((size_t)n * n, sizeof(double));
    for (int i = 0; i < n; i++)
        for (int j = 0; j <= i; j++) {
            double v = (i == j) ? (double)n : (double)((i * 7 + j * 3) % 10) / 10.0;
            A[i * n + j] = A[j * n + i] = v;
        }

    double t0 = wall();
    cholesky(A, L, n);
    double t1 = wall();

    double cs = 0.0;
    for (int i = 0; i < n * n; i++)
        cs += L[i] * (1 + i % 7);
    printf("time: %.6f\n", t1 - t0);
    printf("checksum: %.10e\n", cs);
    printf("hash: %016llx\n", fnv1a(14695981039346656037ULL, L, sizeof(double) * n * n));
    free(A); free(L);
    return 0;
}
