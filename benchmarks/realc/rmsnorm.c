/* rmsnorm.c -- RMS normalization of every row of an activation matrix, once per layer (its own weights).
 * Style: llama2.c's rmsnorm (sum of squares, `ss /= size; ss += 1e-5f; ss = 1.0f / sqrtf(ss);`, then
 *   o[j] = weight[j] * (ss * x[j])), applied row by row through row pointers as batched inference code does.
 * Blockers: pointer variables (`const float *xr = x + r * size;`), sqrtf, a scalar reduction per row, pointer
 *   parameters without restrict.
 * Args: ROWS SIZE LAYERS (default 512 4096 64). small-args: 7 33 2 */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void rmsnorm_rows(float *o, const float *x, const float *weight, int rows, int size)
{
    /* hot */
    for (int r = 0; r < rows; r++) {
        const float *xr = x + r * size;
        float *orow = o + r * size;
        float ss = 0.0f;
        for (int j = 0; j < size; j++) {
            ss += xr[j] * xr[j];
        }
        ss /= size;
        ss += 1e-5f;
        ss = 1.0f / sqrtf(ss);
        for (int j = 0; j < size; j++) {
            orow[j] = weight[j] * (ss * xr[j]);
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
    int rows = argc > 1 ? atoi(argv[1]) : 512;
    int size = argc > 2 ? atoi(argv[2]) : 4096;
    int layers = argc > 3 ? atoi(argv[3]) : 64;
    float *x = malloc(sizeof(float) * rows * size);
    float *o = malloc(sizeof(float) * rows * size);
    float *w = malloc(sizeof(float) * layers * size);
    for (int i = 0; i < rows * size; i++)
        x[i] = (float)((i * 11 + 4) % 37) / 37.0f - 0.5f;
    for (int i = 0; i < layers * size; i++)
        w[i] = 0.5f + (float)(i % 13) / 13.0f;

    double cs = 0.0;
    unsigned long long h = 14695981039346656037ULL;
    double t0 = wall();
    for (int l = 0; l < layers; l++) {
        rmsnorm_rows(o, x, w + l * size, rows, size);
        cs += o[(l * 7919) % (rows * size)];
    }
    double t1 = wall();

    for (int i = 0; i < rows * size; i++)
        cs += o[i] * (1 + i % 7);
    printf("time: %.6f\n", t1 - t0);
    printf("checksum: %.10e\n", cs);
    printf("hash: %016llx\n", fnv1a(h, o, sizeof(float) * rows * size));
    free(x); free(o); free(w);
    return 0;
}
