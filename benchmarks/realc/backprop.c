/* backprop.c -- the forward pass of a fully connected sigmoid layer for a batch of samples.
 * Style: Rodinia backprop's bpnn_layerforward: a weight matrix as an array of row pointers (float **conn, conn[k][j]),
 *   1-based units with the thresholding unit l1[0] = 1, a squash() helper (1 / (1 + exp(-x))), omp_set_num_threads()
 *   and `#pragma omp parallel for ... private(...)` inside the function.
 * Blockers: a pointer-to-pointer array (conn[k][j]: rows that must not overlap), pointer variables (l1, l2: an array
 *   plus an affine offset), a call to a helper that is not in libm (side-effect free), OpenMP lines in the region
 *   (omp_set_num_threads and a pragma), a write of a constant through a pointer variable.
 * Args: N1 N2 SAMPLES (default 2048 1024 16). small-args: 13 7 3 */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

static int num_threads = 1;

static float squash(float x)
{
    return 1.0f / (1.0f + expf(-x));
}

void layer_forward_batch(float *in, float *out, float **conn, int n1, int n2, int nsamples)
{
    int s, j, k;
    float sum;
    /* hot */
#ifdef _OPENMP
    omp_set_num_threads(num_threads);
#endif
    for (s = 0; s < nsamples; s++) {
        float *l1 = in + s * (n1 + 1);
        float *l2 = out + s * (n2 + 1);
        l1[0] = 1.0f;
#pragma omp parallel for shared(conn, n1, n2, l1, l2) private(k, j, sum) schedule(static)
        for (j = 1; j <= n2; j++) {
            sum = 0.0f;
            for (k = 0; k <= n1; k++)
                sum += conn[k][j] * l1[k];
            l2[j] = squash(sum);
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
    int n1 = argc > 1 ? atoi(argv[1]) : 2048;
    int n2 = argc > 2 ? atoi(argv[2]) : 1024;
    int nsamples = argc > 3 ? atoi(argv[3]) : 16;
#ifdef _OPENMP
    num_threads = omp_get_max_threads();
#endif
    float *store = malloc(sizeof(float) * (n1 + 1) * (n2 + 1));
    float **conn = malloc(sizeof(float *) * (n1 + 1));
    for (int k = 0; k <= n1; k++)
        conn[k] = store + k * (n2 + 1);
    for (int i = 0; i < (n1 + 1) * (n2 + 1); i++)
        store[i] = (float)((i * 7 + 5) % 29) / 290.0f - 0.05f;
    float *in = malloc(sizeof(float) * nsamples * (n1 + 1));
    float *out = calloc((size_t)nsamples * (n2 + 1), sizeof(float));
    for (int i = 0; i < nsamples * (n1 + 1); i++)
        in[i] = (float)((i * 3 + 1) % 17) / 17.0f;

    double t0 = wall();
    layer_forward_batch(in, out, conn, n1, n2, nsamples);
    double t1 = wall();

    double cs = 0.0;
    for (int i = 0; i < nsamples * (n2 + 1); i++)
        cs += out[i] * (1 + i % 7);
    unsigned long long h = fnv1a(14695981039346656037ULL, out, sizeof(float) * nsamples * (n2 + 1));
    h = fnv1a(h, in, sizeof(float) * nsamples * (n1 + 1));
    printf("time: %.6f\n", t1 - t0);
    printf("checksum: %.10e\n", cs);
    printf("hash: %016llx\n", h);
    free(store); free(conn); free(in); free(out);
    return 0;
}
