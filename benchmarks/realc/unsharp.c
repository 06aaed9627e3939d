/* unsharp.c -- unsharp masking with a threshold: a 3x3 box blur, then each pixel pushed away from its blurred
 * value where they differ by more than the threshold.
 * Style: photo editors' and GIMP-plug-in-style filters on flat float images: a blur pass into a scratch buffer,
 *   then `if (fabsf(diff) > threshold)` choosing the sharpened or the original value.
 * Blockers: a data-dependent condition (fabsf(diff) > threshold) choosing between two writes, fabsf, flattened
 *   subscripts whose shape follows from the bounds, pointer parameters without restrict.
 * Args: W H REPS (default 4000 4000 4). small-args: 13 9 2 */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void unsharp_mask(const float *src, float *blur, float *dst, int w, int h, float amount, float threshold)
{
    /* hot */
    for (int y = 1; y < h - 1; y++) {
        for (int x = 1; x < w - 1; x++) {
            float s = 0.0f;
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++)
                    s += src[(y + dy) * w + x + dx];
            blur[y * w + x] = s / 9.0f;
        }
    }
    for (int y = 1; y < h - 1; y++) {
        for (int x = 1; x < w - 1; x++) {
            float diff = src[y * w + x] - blur[y * w + x];
            if (fabsf(diff) > threshold)
                dst[y * w + x] = src[y * w + x] + amount * diff;
            else
                dst[y * w + x] = src[y * w + x];
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
    int w = argc > 1 ? atoi(argv[1]) : 4000;
    int h = argc > 2 ? atoi(argv[2]) : 4000;
    int reps = argc > 3 ? atoi(argv[3]) : 4;
    float *src = malloc(sizeof(float) * w * h);
    float *blur = calloc((size_t)w * h, sizeof(float));
    float *dst = calloc((size_t)w * h, sizeof(float));
    for (int i = 0; i < w * h; i++)
        src[i] = (float)((i * 29 + (i / w) * 11) % 128) / 127.0f;

    double cs = 0.0;
    double elapsed = 0.0;
    for (int r = 0; r < reps; r++) {
        double t0 = wall();
        unsharp_mask(src, blur, dst, w, h, 0.6f, 0.05f + 0.05f * r);
        elapsed += wall() - t0;
        cs += dst[(r * 7919) % (w * h)];
    }

    for (int i = 0; i < w * h; i++)
        cs += dst[i] * (1 + i % 7) + blur[i];
    unsigned long long hh = fnv1a(14695981039346656037ULL, dst, sizeof(float) * w * h);
    hh = fnv1a(hh, blur, sizeof(float) * w * h);
    printf("time: %.6f\n", elapsed);
    printf("checksum: %.10e\n", cs);
    printf("hash: %016llx\n", hh);
    free(src); free(blur); free(dst);
    return 0;
}
