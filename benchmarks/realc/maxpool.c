/* maxpool.c -- the forward pass of a max-pooling layer, remembering the index of each maximum.
 * Style: darknet's forward_maxpool_layer: a layer struct passed by value (l.batch, l.c, l.out_h, l.size,
 *   l.stride, l.pad), index scalars (`int out_index = ...; int index = ...;`), a validity flag, the maximum
 *   and its index chosen with comparisons of the data.
 * Blockers: struct fields in bounds and subscripts, index scalars, data-dependent choices (val > max), a
 *   non-affine subscript (i * l.stride: an iterator times a parameter), flattened subscripts.
 * Args: BATCH C HW SIZE STRIDE REPS (default 4 64 112 2 2 20). small-args: 2 3 9 3 2 2 */
#define _POSIX_C_SOURCE 199309L
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct {
    int batch, c, h, w;
    int out_h, out_w;
    int size, stride, pad;
    int *indexes;
    float *output;
} maxpool_layer;

void forward_maxpool(const maxpool_layer l, const float *input)
{
    int b, i, j, k, m, n;
    int w_offset = -l.pad / 2;
    int h_offset = -l.pad / 2;
    /* hot */
    for (b = 0; b < l.batch; ++b) {
        for (k = 0; k < l.c; ++k) {
            for (i = 0; i < l.out_h; ++i) {
                for (j = 0; j < l.out_w; ++j) {
                    int out_index = j + l.out_w * (i + l.out_h * (k + l.c * b));
                    float max = -FLT_MAX;
                    int max_i = -1;
                    for (n = 0; n < l.size; ++n) {
                        for (m = 0; m < l.size; ++m) {
                            int cur_h = h_offset + i * l.stride + n;
                            int cur_w = w_offset + j * l.stride + m;
                            int index = cur_w + l.w * (cur_h + l.h * (k + b * l.c));
                            int valid = (cur_h >= 0 && cur_h < l.h && cur_w >= 0 && cur_w < l.w);
                            float val = valid ? input[index] : -FLT_MAX;
                            max_i = (val > max) ? index : max_i;
                            max = (val > max) ? val : max;
                        }
                    }
                    l.output[out_index] = max;
                    l.indexes[out_index] = max_i;
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
    maxpool_layer l;
    l.batch = argc > 1 ? atoi(argv[1]) : 4;
    l.c = argc > 2 ? atoi(argv[2]) : 64;
    l.h = l.w = argc > 3 ? atoi(argv[3]) : 112;
    l.size = argc > 4 ? atoi(argv[4]) : 2;
    l.stride = argc > 5 ? atoi(argv[5]) : 2;
    int reps = argc > 6 ? atoi(argv[6]) : 20;
    l.pad = l.size - 1;
    l.out_h = (l.h + l.pad - l.size) / l.stride + 1;
    l.out_w = (l.w + l.pad - l.size) / l.stride + 1;
    int nin = l.batch * l.c * l.h * l.w;
    int nout = l.batch * l.c * l.out_h * l.out_w;
    float *input = malloc(sizeof(float) * nin);
    l.output = malloc(sizeof(float) * nout);
    l.indexes = malloc(sizeof(int) * nout);
    for (int i = 0; i < nin; i++)
        input[i] = (float)((i * 37 + 11) % 101) / 101.0f - 0.5f;

    double cs = 0.0;
    double t0 = wall();
    for (int r = 0; r < reps; r++) {
        forward_maxpool(l, input);
        cs += l.output[(r * 7919) % nout];
    }
    double t1 = wall();

    for (int i = 0; i < nout; i++)
        cs += l.output[i] * (1 + i % 7) + l.indexes[i] % 13;
    unsigned long long h = fnv1a(14695981039346656037ULL, l.output, sizeof(float) * nout);
    h = fnv1a(h, l.indexes, sizeof(int) * nout);
    printf("time: %.6f\n", t1 - t0);
    printf("checksum: %.10e\n", cs);
    printf("hash: %016llx\n", h);
    free(input); free(l.output); free(l.indexes);
    return 0;
}
