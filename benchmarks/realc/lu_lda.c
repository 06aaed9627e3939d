/* lu_lda.c -- in-place LU factorization without pivoting of a column-major matrix with a leading dimension.
 * Style: LAPACK's unblocked dgetf2 as C codes transcribe it (no pivoting: diagonally dominant input):
 *   a[i + j*lda], the column scaled by the pivot, then a rank-1 update of the trailing matrix, column by column.
 * Blockers: flattened column-major subscripts with a leading dimension (a[i + j*lda] needs lda >= n; the harness
 *   passes lda = n + 3), triangular bounds, pointer parameter.
 * Args: N (default 1000). small-args: 29 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void lu_nopiv(int n, double *a, int lda)
{
    int i, j, k;
    /* hot */
    for (k = 0; k < n; k++) {
        double pivot = a[k + k * lda];
        for (i = k + 1; i < n; i++)
            a[i + k * lda] /= pivot;
        for (j = k + 1; j < n; j++) {
            double akj = a[k + j * lda];
            for (i = k + 1; i < n; i++)
                a[i + j * lda] -= a[i + k * lda] * akj;
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
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    int lda = n + 3;
    double *a = malloc(sizeof(double) * lda * n);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < lda; i++)
            a[i + j * lda] = (i == j) ? 2.0 * n : (double)((i * 7 + j * 3) % 10) / 10.0;

    double t0 = wall();
    lu_nopiv(n, a, lda);
    double t1 = wall();

    double cs = 0.0;
    for (int i = 0; i < lda * n; i++)
        cs += a[i] * (1 + i % 5);
    printf("time: %.6f\n", t1 - t0);
    printf("checksum: %.10e\n", cs);
    printf("hash: %016llx\n", fnv1a(14695981039346656037ULL, a, sizeof(double) * lda * n));
    free(a);
    return 0;
}
