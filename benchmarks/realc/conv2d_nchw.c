/* conv2d_nchw.c -- a direct 2-D convolution (valid padding, stride 1) of an NCHW batch, sizes in a struct.
 * Style: the reference convolution of small inference engines (a conv_params struct passed by pointer, a bias
 *   initialising the accumulator, NCHW offsets written out as ((b*C + c)*H + y)*W + x).
 * Blockers: struct fields in the bounds and subscripts (p->out_h, p->in_c, ...), flattened 4-level subscripts
 *   with runtime sizes (the input's shape needs in_h >= out_h + k - 1 and in_w >= out_w + k - 1: a runtime
 *   assumption), pointer parameters without restrict.
 * Args: BATCH IN_C OUT_C OUT_HW K (default 2 64 64 56 3). small-args: 2 3 4 7 3 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct {
    int batch;
    int in_c, in_h, in_w;
    int out_c, out_h, out_w;
    int k;
} conv_params;

void conv2d_forward(const conv_params *p, const float *in, const float *w, const float *bias, float *out)
{
    /* hot */
    for (int b = 0; b < p->batch; b++) {
        for (int o = 0; o < p->out_c; o++) {
            for (int y = 0; y < p->out_h; y++) {
                for (int x = 0; x < p->out_w; x++) {
                    float acc = bias[o];
                    for (int c = 0; c < p->in_c; c++) {
                        for (int ky = 0; ky < p->k; ky++) {
                            for (int kx = 0; kx < p->k; kx++) {
                                acc += w[((o * p->in_c + c) * p->k + ky) * p->k + kx]
                                     * in[((b * p->in_c + c) * p->in_h + y + ky) * p->in_w + x + kx];
                            }
                        }
                    }
                    out[((b * p->out_c + o) * p->out_h + y) * p->out_w + x] = acc;
                }
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
    conv_params p;
    p.batch = argc > 1 ? atoi(argv[1]) : 2;
    p.in_c = argc > 2 ? atoi(argv[2]) : 64;
    p.out_c = argc > 3 ? atoi(argv[3]) : 64;
    p.out_h = p.out_w = argc > 4 ? atoi(argv[4]) : 56;
    p.k = argc > 5 ? atoi(argv[5]) : 3;
    p.in_h = p.out_h + p.k - 1;
    p.in_w = p.out_w + p.k - 1;
    int nin = p.batch * p.in_c * p.in_h * p.in_w;
    int nw = p.out_c * p.in_c * p.k * p.k;
    int nout = p.batch * p.out_c * p.out_h * p.out_w;
    float *in = malloc(sizeof(float) * nin);
    float *w = malloc(sizeof(float) * nw);
    float *bias = malloc(sizeof(float) * p.out_c);
    float *out = malloc(sizeof(float) * nout);
    for (int i = 0; i < nin; i++)
        in[i] = (float)((i * 7 + 3) % 17) / 17.0f - 0.5f;
    for (int i = 0; i < nw; i++)
        w[i] = (float)((i * 3 + 1) % 11) / 11.0f - 0.5f;
    for (int i = 0; i < p.out_c; i++)
        bias[i] = (float)(i % 3) / 4.0f;

    double t0 = wall();
    conv2d_forward(&p, in, w, bias, out);
    double t1 = wall();

    double cs = 0.0;
    for (int i = 0; i < nout; i++)
        cs += out[i] * (1 + i % 7);
    printf("time: %.6f\n", t1 - t0);
    printf("checksum: %.10e\n", cs);
    printf("hash: %016llx\n", fnv1a(14695981039346656037ULL, out, sizeof(float) * nout));
    free(in); free(w); free(bias); free(out);
    return 0;
}
