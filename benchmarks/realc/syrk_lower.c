/* syrk_lower.c -- C = alpha*A*A^T + beta*C, lower triangle, row-major with leading dimensions.
 * Style: the reference BLAS ssyrk loop (uplo = lower, trans = no) written row-major as CBLAS wrappers and small
 *   linear-algebra libraries do: triangular bounds j <= i, a hoisted scalar, const float * without restrict.
 * Blockers: flattened subscripts with leading dimensions (a[i*lda + l] needs lda >= k, c[i*ldc + j] ldc >= n;
 *   the harness passes a padded C, ldc = n + 8), triangular bounds, pointer parameters without restrict.
 * Args: N K (default 1100 1100). small-args: 31 23 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void ssyrk_ln(int n, int k, float alpha, const float *a, int lda, float beta, float *c, int ldc)
{
    int i, j, l;
    /* hot */
    for (i = 0; i < n; i++) {
        for (j = 0; j <= i; j++)
            c[i * ldc + j] *= beta;
        for (l = 0; l < k; l++) {
            float t = alpha * a[i * lda + l];
            for (j = 0; j <= i; j++)
                c[i * ldc + j] += t * a[j * lda + l];
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
    int n = argc > 1 ? atoi(argv[1]) : 1100;
    int k = argc > 2 ? atoi(argv[2]) : 1100;
    int lda = k, ldc = n + 8;
    float *a = malloc(sizeof(float) * n * lda);
    float *c = malloc(sizeof(float) * n * ldc);
    for (int i = 0; i < n * lda; i++)
        a[i] = (float)((i * 11 + 5) % 29) / 29.0f - 0.5f;
    for (int i = 0; i < n * ldc; i++)
        c[i] = (float)((i * 3) % 7) / 7.0f;

    double t0 = wall();
    ssyrk_ln(n, k, 0.5f, a, lda, 0.8f, c, ldc);
    double t1 = wall();

    double cs = 0.0;
    for (int i = 0; i < n * ldc; i++)
        cs += c[i] * (1 + i % 9);
    printf("time: %.6f\n", t1 - t0);
    printf("checksum: %.10e\n", cs);
    printf("hash: %016llx\n", fnv1a(14695981039346656037ULL, c, sizeof(float) * n * ldc));
    free(a); free(c);
    return 0;
}
