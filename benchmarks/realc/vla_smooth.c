/* vla_smooth.c -- repeated 9-point smoothing of a 2-D field passed as C99 variable-length array parameters.
 * Style: modern scientific C (C99 VLA parameters `double a[n][m]`, as "Modern C" and numerical course code
 *   recommend): the shape travels with the array, a scratch field and a copy back.
 * Blockers: none but the missing `#pragma scop` (the control group), pointer parameters without restrict.
 * Args: N M ITERS (default 2000 2000 20). small-args: 11 13 3 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void smooth(int n, int m, int iters, double a[n][m], double b[n][m])
{
    /* hot */
    for (int t = 0; t < iters; t++) {
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < m - 1; j++)
                b[i][j] = (4.0 * a[i][j] + 2.0 * (a[i - 1][j] + a[i + 1][j] + a[i][j - 1] + a[i][j + 1])
                           + a[i - 1][j - 1] + a[i - 1][j + 1] + a[i + 1][j - 1] + a[i + 1][j + 1]) / 16.0;
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < m - 1; j++)
                a[i][j] = b[i][j];
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
    int m = argc > 2 ? atoi(argv[2]) : 2000;
    int iters = argc > 3 ? atoi(argv[3]) : 20;
    double (*a)[m] = malloc(sizeof(double) * n * m);
    double (*b)[m] = calloc((size_t)n * m, sizeof(double));
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            a[i][j] = (double)((i * 7 + j * 13) % 31) / 31.0;

    double t0 = wall();
    smooth(n, m, iters, a, b);
    double t1 = wall();

    double cs = 0.0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            cs += a[i][j] * (1 + (i + 2 * j) % 7);
    unsigned long long h = fnv1a(14695981039346656037ULL, a, sizeof(double) * n * m);
    h = fnv1a(h, b, sizeof(double) * n * m);
    printf("time: %.6f\n", t1 - t0);
    printf("checksum: %.10e\n", cs);
    printf("hash: %016llx\n", h);
    free(a); free(b);
    return 0;
}
