/* batchnorm.c -- batch normalization at inference: normalize with the running statistics, scale, add a bias.
 * Style: darknet's normalize_cpu / scale_bias / add_bias fused into one pass over an NCHW tensor whose shape is
 *   an int array (shape[0] batch, shape[1] filters, shape[2] * shape[3] spatial), an index scalar
 *   `int index = b*filters*spatial + f*spatial + i;`, sqrtf of the variance plus .000001f.
 * Blockers: array elements and a product of them in the bounds (shape[0], shape[2] * shape[3]), an index scalar
 *   with products of parameters, sqrtf, pointer parameters without restrict.
 * Args: BATCH FILTERS HW REPS (default 8 128 56 30). small-args: 2 3 5 2 */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void batchnorm_forward(float *x, const int *shape, float *mean, float *variance, float *scales, float *biases)
{
    int b, f, i;
    int filters = shape[1];
    int spatial = shape[2] * shape[3];
    /* hot */
    for (b = 0; b < shape[0]; ++b) {
        for (f = 0; f < filters; ++f) {
            for (i = 0; i < spatial; ++i) {
                int index = b * filters * spatial + f * spatial + i;
                x[index] = (x[index] - mean[f]) / (sqrtf(variance[f]) + .000001f);
                x[index] = x[index] * scales[f] + biases[f];
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
    int shape[4];
    shape[0] = argc > 1 ? atoi(argv[1]) : 8;
    shape[1] = argc > 2 ? atoi(argv[2]) : 128;
    shape[2] = shape[3] = argc > 3 ? atoi(argv[3]) : 56;
    int reps = argc > 4 ? atoi(argv[4]) : 30;
    int n = shape[0] * shape[1] * shape[2] * shape[3];
    int nf = shape[1];
    float *x = malloc(sizeof(float) * n);
    float *mean = malloc(sizeof(float) * nf);
    float *variance = malloc(sizeof(float) * nf);
    float *scales = malloc(sizeof(float) * nf);
    float *biases = malloc(sizeof(float) * nf);
    for (int f = 0; f < nf; f++) {
        mean[f] = (float)(f % 7) / 14.0f;
        variance[f] = 1.0f + (float)(f % 5) / 5.0f;
        scales[f] = 0.9f + (float)(f % 3) / 30.0f;
        biases[f] = (float)(f % 4) / 40.0f;
    }
    for (int i = 0; i < n; i++)
        x[i] = (float)((i * 17 + 3) % 53) / 53.0f;

    double cs = 0.0;
    double t0 = wall();
    for (int r = 0; r < reps; r++) {
        batchnorm_forward(x, shape, mean, variance, scales, biases);
        cs += x[(r * 7919) % n];
    }
    double t1 = wall();

    for (int i = 0; i < n; i++)
        cs += x[i] * (1 + i % 7);
    printf("time: %.6f\n", t1 - t0);
    printf("checksum: %.10e\n", cs);
    printf("hash: %016llx\n", fnv1a(14695981039346656037ULL, x, sizeof(float) * n));
    free(x); free(mean); free(variance); free(scales); free(biases);
    return 0;
}
