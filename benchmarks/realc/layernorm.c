/* layernorm.c -- layer normalization of a (B, T, C) activation tensor, saving the mean and 1/std of each row.
 * Style: llm.c's layernorm_forward: row pointers `float *x = inp + b*T*C + t*C;`, the mean, the variance, a
 *   1.0f / sqrtf(v + eps) scale, out = n * weight + bias, mean[b*T + t] and rstd[b*T + t] stored.
 * Blockers: pointer variables with flattened 3-level offsets (b*T*C + t*C: products of parameters), sqrtf, scalar
 *   reductions, pointer parameters without restrict.
 * Args: B T C LAYERS (default 8 256 768 48). small-args: 2 3 29 2 */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void layernorm_forward(float *out, float *mean, float *rstd, float *inp, float *weight, float *bias,
                       int B, int T, int C)
{
    float eps = 1e-5f;
    /* hot */
    for (int b = 0; b < B; b++) {
        for (int t = 0; t < T; t++) {
            float *x = inp + b * T * C + t * C;
            float m = 0.0f;
            for (int i = 0; i < C; i++) {
                m += x[i];
            }
            m = m / C;
            float v = 0.0f;
            for (int i = 0; i < C; i++) {
                float xshift = x[i] - m;
                v += xshift * xshift;
            }
            v = v / C;
            float s = 1.0f / sqrtf(v + eps);
            float *out_bt = out + b * T * C + t * C;
            for (int i = 0; i < C; i++) {
                float n = s * (x[i] - m);
                out_bt[i] = n * weight[i] + bias[i];
            }
            mean[b * T + t] = m;
            rstd[b * T + t] = s;
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
    int B = argc > 1 ? atoi(argv[1]) : 8;
    int T = argc > 2 ? atoi(argv[2]) : 256;
    int C = argc > 3 ? atoi(argv[3]) : 768;
    int layers = argc > 4 ? atoi(argv[4]) : 48;
    float *inp = malloc(sizeof(float) * B * T * C);
    float *out = malloc(sizeof(float) * B * T * C);
    float *mean = malloc(sizeof(float) * B * T);
    float *rstd = malloc(sizeof(float) * B * T);
    float *weight = malloc(sizeof(float) * layers * C);
    float *bias = malloc(sizeof(float) * layers * C);
    for (int i = 0; i < B * T * C; i++)
        inp[i] = (float)((i * 13 + 5) % 43) / 43.0f - 0.3f;
    for (int i = 0; i < layers * C; i++) {
        weight[i] = 0.75f + (float)(i % 7) / 14.0f;
        bias[i] = (float)(i % 5) / 20.0f;
    }

    double cs = 0.0;
    double t0 = wall();
    for (int l = 0; l < layers; l++) {
        layernorm_forward(out, mean, rstd, inp, weight + l * C, bias + l * C, B, T, C);
        cs += out[(l * 7919) % (B * T * C)];
    }
    double t1 = wall();

    for (int i = 0; i < B * T * C; i++)
        cs += out[i] * (1 + i % 7);
    for (int i = 0; i < B * T; i++)
        cs += mean[i] + rstd[i];
    unsigned long long h = fnv1a(14695981039346656037ULL, out, sizeof(float) * B * T * C);
    h = fnv1a(h, mean, sizeof(float) * B * T);
    h = fnv1a(h, rstd, sizeof(float) * B * T);
    printf("time: %.6f\n", t1 - t0);
    printf("checksum: %.10e\n", cs);
    printf("hash: %016llx\n", h);
    free(inp); free(out); free(mean); free(rstd); free(weight); free(bias);
    return 0;
}
