/* matmul_llmc.c -- the forward pass of a linear layer: out[b,t,:] = inp[b,t,:] W^T + bias, (B,T,C) -> (B,T,OC).
 * Style: llm.c's naive matmul_forward: `#pragma omp parallel for collapse(2)` over (b, t), row pointers computed
 *   per iteration (`float *out_bt = out + b*T*OC + t*OC`), an optional bias tested against NULL, const float *.
 * Blockers: pointer variables (out_bt, inp_bt, wrow: an array plus an affine offset), flattened 3-level offsets
 *   (b*T*OC + t*OC, products of parameters), an OpenMP pragma in the nest, a condition on a pointer
 *   (bias != NULL), pointer parameters without restrict.
 * Args: B T C OC (default 4 32 768 3072). small-args: 2 5 19 23 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void matmul_forward(float *out, const float *inp, const float *weight, const float *bias,
                    int B, int T, int C, int OC)
{
    /* hot */
#pragma omp parallel for collapse(2)
    for (int b = 0; b < B; b++) {
        for (int t = 0; t < T; t++) {
            float *out_bt = out + b * T * OC + t * OC;
            const float *inp_bt = inp + b * T * C + t * C;
            for (int o = 0; o < OC; o++) {
                float val = (bias != NULL) ? bias[o] : 0.0f;
                const float *wrow = weight + o * C;
                for (int i = 0; i < C; i++) {
                    val += inp_bt[i] * wrow[i];
                }
                out_bt[o] = val;
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
    int B = argc > 1 ? atoi(argv[1]) : 4;
    int T = argc > 2 ? atoi(argv[2]) : 32;
    int C = argc > 3 ? atoi(argv[3]) : 768;
    int OC = argc > 4 ? atoi(argv[4]) : 3072;
    float *inp = malloc(sizeof(float) * B * T * C);
    float *weight = malloc(sizeof(float) * OC * C);
    float *bias = malloc(sizeof(float) * OC);
    float *out = malloc(sizeof(float) * B * T * OC);
    for (int i = 0; i < B * T * C; i++)
        inp[i] = (float)((i * 7 + 2) % 23) / 23.0f - 0.5f;
    for (int i = 0; i < OC * C; i++)
        weight[i] = (float)((i * 5 + 3) % 19) / 19.0f - 0.5f;
    for (int i = 0; i < OC; i++)
        bias[i] = (float)(i % 5) / 10.0f;

    double t0 = wall();
    matmul_forward(out, inp, weight, bias, B, T, C, OC);
    double t1 = wall();

    double cs = 0.0;
    for (int i = 0; i < B * T * OC; i++)
        cs += out[i] * (1 + i % 7);
    printf("time: %.6f\n", t1 - t0);
    printf("checksum: %.10e\n", cs);
    printf("hash: %016llx\n", fnv1a(14695981039346656037ULL, out, sizeof(float) * B * T * OC));
    free(inp); free(weight); free(bias); free(out);
    return 0;
}
