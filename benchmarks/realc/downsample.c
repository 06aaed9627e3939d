/* downsample.c -- an image pyramid: each level the 2x2 average of the previous one, all channels.
 * Style: pyramid builders in vision code (a planar multi-channel image whose sizes come in an int array
 *   dims[3] = {channels, height, width}, halved sizes dims[1] / 2 in the bounds, flat offsets).
 * Blockers: array elements in the bounds and subscripts (dims[0], dims[1] / 2, dims[2]), flattened 3-level
 *   subscripts with strides of 2 whose shape follows from the bounds (needs dims[2] / 2 columns per output row),
 *   pointer parameters without restrict.
 * Args: C H W LEVELS REPS (default 3 2048 2048 5 30). small-args: 2 24 20 2 2 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void downsample2x(const float *src, float *dst, const int dims[3])
{
    /* hot */
    for (int c = 0; c < dims[0]; c++) {
        for (int y = 0; y < dims[1] / 2; y++) {
            for (int x = 0; x < dims[2] / 2; x++) {
                const int s = (c * dims[1] + 2 * y) * dims[2] + 2 * x;
                dst[(c * (dims[1] / 2) + y) * (dims[2] / 2) + x] =
                    0.25f * (src[s] + src[s + 1] + src[s + dims[2]] + src[s + dims[2] + 1]);
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
    int c = argc > 1 ? atoi(argv[1]) : 3;
    int h = argc > 2 ? atoi(argv[2]) : 2048;
    int w = argc > 3 ? atoi(argv[3]) : 2048;
    int levels = argc > 4 ? atoi(argv[4]) : 5;
    int reps = argc > 5 ? atoi(argv[5]) : 30;
    float **pyr = malloc(sizeof(float *) * (levels + 1));
    int hh = h, ww = w;
    for (int l = 0; l <= levels; l++) {
        pyr[l] = calloc((size_t)c * hh * ww, sizeof(float));
        hh /= 2;
        ww /= 2;
    }
    for (int i = 0; i < c * h * w; i++)
        pyr[0][i] = (float)((i * 7 + (i / w) * 5) % 97) / 97.0f;

    double cs = 0.0;
    double t0 = wall();
    for (int r = 0; r < reps; r++) {
        int dims[3] = {c, h, w};
        for (int l = 0; l < levels; l++) {
            downsample2x(pyr[l], pyr[l + 1], dims);
            dims[1] /= 2;
            dims[2] /= 2;
        }
        cs += pyr[1][r % (c * (h / 2) * (w / 2))];
    }
    double t1 = wall();

    unsigned long long hs = 14695981039346656037ULL;
    hh = h / 2;
    ww = w / 2;
    for (int l = 1; l <= levels; l++) {
        for (int i = 0; i < c * hh * ww; i++)
            cs += pyr[l][i] * (1 + i % 7);
        hs = fnv1a(hs, pyr[l], sizeof(float) * c * hh * ww);
        hh /= 2;
        ww /= 2;
    }
    printf("time: %.6f\n", t1 - t0);
    printf("checksum: %.10e\n", cs);
    printf("hash: %016llx\n", hs);
    for (int l = 0; l <= levels; l++)
        free(pyr[l]);
    free(pyr);
    return 0;
}
