/* gaussian_clamp.c -- a separable 5-tap Gaussian blur with clamp-to-edge borders, rows into a scratch image,
 * then columns.
 * Style: image libraries' generic filters (stb_image_resize- and OpenCV-reference-like): the tap's coordinate as
 *   an index scalar clamped into the image (`int xx = x + k; if (xx < 0) xx = 0; if (xx > w - 1) xx = w - 1;`),
 *   coefficients in a static const table, flat images y * w + x.
 * Blockers: index scalars assigned under conditions (a piecewise-affine subscript: min/max of iterators and
 *   parameters), flattened subscripts, a read-only global table, pointer parameters without restrict.
 * Args: W H REPS (default 3000 3000 3). small-args: 11 7 2 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static const float g5[5] = {0.0625f, 0.25f, 0.375f, 0.25f, 0.0625f};

void gauss5(const float *src, float *tmp, float *dst, int w, int h)
{
    /* hot */
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            float acc = 0.0f;
            for (int k = -2; k <= 2; k++) {
                int xx = x + k;
                if (xx < 0)
                    xx = 0;
                if (xx > w - 1)
                    xx = w - 1;
                acc += g5[k + 2] * src[y * w + xx];
            }
            tmp[y * w + x] = acc;
        }
    }
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            float acc = 0.0f;
            for (int k = -2; k <= 2; k++) {
                int yy = y + k;
                if (yy < 0)
                    yy = 0;
                if (yy > h - 1)
                    yy = h - 1;
                acc += g5[k + 2] * tmp[yy * w + x];
            }
            dst[y * w + x] = acc;
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
    int w = argc > 1 ? atoi(argv[1]) : 3000;
    int h = argc > 2 ? atoi(argv[2]) : 3000;
    int reps = argc > 3 ? atoi(argv[3]) : 3;
    float *src = malloc(sizeof(float) * w * h);
    float *tmp = malloc(sizeof(float) * w * h);
    float *dst = malloc(sizeof(float) * w * h);
    for (int i = 0; i < w * h; i++)
        src[i] = (float)((i * 11 + (i / w) * 3) % 256) / 255.0f;

    double cs = 0.0;
    double t0 = wall();
    for (int r = 0; r < reps; r++) {
        gauss5(src, tmp, dst, w, h);
        gauss5(dst, tmp, src, w, h);
        cs += src[(r * 7919) % (w * h)];
    }
    double t1 = wall();

    for (int i = 0; i < w * h; i++)
        cs += src[i] * (1 + i % 7) + tmp[i];
    unsigned long long hh = fnv1a(14695981039346656037ULL, src, sizeof(float) * w * h);
    hh = fnv1a(hh, tmp, sizeof(float) * w * h);
    printf("time: %.6f\n", t1 - t0);
    printf("checksum: %.10e\n", cs);
    printf("hash: %016llx\n", hh);
    free(src); free(tmp); free(dst);
    return 0;
}
