/* leaky_bias.c -- a convolutional layer's epilogue: add the bias of each filter, then the leaky ReLU activation.
 * Style: darknet's add_bias + activate_array(LEAKY) in one pass over l->output, sizes read from the layer struct
 *   through a pointer (l->batch, l->n, l->out_h * l->out_w in the bound), an index scalar, `if (v < 0)`.
 * Blockers: struct fields and a product of two of them in the bounds (l->out_h * l->out_w), an index scalar,
 *   a data-dependent condition, a struct field as the array base (l->output).
 * Args: BATCH N HW REPS (default 8 128 56 80). small-args: 2 3 5 2 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct {
    int batch, n;
    int out_h, out_w;
    float *biases;
    float *output;
} layer;

void bias_leaky_forward(layer *l)
{
    /* hot */
    for (int b = 0; b < l->batch; ++b) {
        for (int f = 0; f < l->n; ++f) {
            for (int i = 0; i < l->out_h * l->out_w; ++i) {
                int idx = (b * l->n + f) * l->out_h * l->out_w + i;
                float v = l->output[idx] + l->biases[f];
                if (v < 0)
                    v = .1f * v;
                l->output[idx] = v;
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
    layer l;
    l.batch = argc > 1 ? atoi(argv[1]) : 8;
    l.n = argc > 2 ? atoi(argv[2]) : 128;
    l.out_h = l.out_w = argc > 3 ? atoi(argv[3]) : 56;
    int reps = argc > 4 ? atoi(argv[4]) : 80;
    int n = l.batch * l.n * l.out_h * l.out_w;
    l.output = malloc(sizeof(float) * n);
    l.biases = malloc(sizeof(float) * l.n);
    for (int f = 0; f < l.n; f++)
        l.biases[f] = (float)(f % 9) / 9.0f - 0.45f;
    for (int i = 0; i < n; i++)
        l.output[i] = (float)((i * 29 + 7) % 61) / 61.0f - 0.5f;

    double cs = 0.0;
    double t0 = wall();
    for (int r = 0; r < reps; r++) {
        bias_leaky_forward(&l);
        cs += l.output[(r * 7919) % n];
    }
    double t1 = wall();

    for (int i = 0; i < n; i++)
        cs += l.output[i] * (1 + i % 7);
    printf("time: %.6f\n", t1 - t0);
    printf("checksum: %.10e\n", cs);
    printf("hash: %016llx\n", fnv1a(14695981039346656037ULL, l.output, sizeof(float) * n));
    free(l.output); free(l.biases);
    return 0;
}
