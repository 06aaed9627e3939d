/* matmul_batch.c -- xout = W x for a batch of token vectors (W is d x n, row-major), OpenMP over output rows.
 * Style: llama2.c's matmul (`W (d,n) @ x (n,) -> xout (d,)`, a float accumulator, `#pragma omp parallel for
 *   private(i)`), extended to the B vectors of a prompt so that each row of W is read once for all of them.
 * Blockers: flattened subscripts whose shape follows from the bounds (w[i*n + j], x[b*n + j], xout[b*d + i]),
 *   an OpenMP pragma inside the nest, pointer parameters without restrict.
 * Args: B N D (default 16 4096 4096). small-args: 3 37 29 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void matmul_batch(float *xout, float *x, float *w, int B, int n, int d)
{
    int i;
    /* hot */
#pragma omp parallel for private(i)
    for (i = 0; i < d; i++) {
        for (int b = 0; b < B; b++) {
            float val = 0.0f;
            for (int j = 0; j < n; j++) {
                val += w[i * n + j] * x[b * n + j];
            }
            xout[b * d + i] = val;
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
    int B = argc > 1 ? atoi(argv[1]) : 16;
    int n = argc > 2 ? atoi(argv[2]) : 4096;
    int d = argc > 3 ? atoi(argv[3]) : 4096;
    float *w = malloc(sizeof(float) * (size_t)d * n);
    float *x = malloc(sizeof(float) * (size_t)B * n);
    float *xout = malloc(sizeof(float) * (size_t)B * d);
    for (size_t i = 0; i < (size_t)d * n; i++)
        w[i] = (float)((i * 13 + 7) % 31) / 31.0f - 0.5f;
    for (int i = 0; i < B * n; i++)
        x[i] = (float)((i * 3 + 1) % 17) / 17.0f - 0.5f;

    double t0 = wall();
    matmul_batch(xout, x, w, B, n, d);
    double t1 = wall();

    double cs = 0.0;
    for (int i = 0; i < B * d; i++)
        cs += xout[i] * (1 + i % 7);
    printf("time: %.6f\n", t1 - t0);
    printf("checksum: %.10e\n", cs);
    printf("hash: %016llx\n", fnv1a(14695981039346656037ULL, xout, sizeof(float) * B * d));
    free(w); free(x); free(xout);
    return 0;
}
