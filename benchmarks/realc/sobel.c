/* sobel.c -- Sobel edge magnitude of a grey image, thresholded: the magnitude where it exceeds thresh, else 0.
 * Style: image-processing tutorials and small libraries: one index scalar `int idx = y * w + x;` and neighbours
 *   addressed as idx - w - 1 ... idx + w + 1, sqrtf of the squared gradients, an if/else on the result.
 * Blockers: an index scalar with parameter offsets (idx - w + 1: flattened subscripts whose shape follows from
 *   the bounds), a data-dependent condition (mag > thresh) choosing between two writes, sqrtf, pointer
 *   parameters without restrict.
 * Args: W H REPS (default 4096 4096 3). small-args: 17 13 2 */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void sobel_edges(const float *img, float *edges, int w, int h, float thresh)
{
    /* hot */
    for (int y = 1; y < h - 1; y++) {
        for (int x = 1; x < w - 1; x++) {
            int idx = y * w + x;
            float gx = -img[idx - w - 1] + img[idx - w + 1]
                       - 2.0f * img[idx - 1] + 2.0f * img[idx + 1]
                       - img[idx + w - 1] + img[idx + w + 1];
            float gy = -img[idx - w - 1] - 2.0f * img[idx - w] - img[idx - w + 1]
                       + img[idx + w - 1] + 2.0f * img[idx + w] + img[idx + w + 1];
            float mag = sqrtf(gx * gx + gy * gy);
            if (mag > thresh)
                edges[idx] = mag;
            else
                edges[idx] = 0.0f;
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
    int w = argc > 1 ? atoi(argv[1]) : 4096;
    int h = argc > 2 ? atoi(argv[2]) : 4096;
    int reps = argc > 3 ? atoi(argv[3]) : 3;
    float *img = malloc(sizeof(float) * w * h);
    float *edges = calloc((size_t)w * h, sizeof(float));
    for (int i = 0; i < w * h; i++)
        img[i] = (float)((i * 7 + (i / w) * 13) % 64) / 64.0f;

    double cs = 0.0;
    double elapsed = 0.0;
    for (int r = 0; r < reps; r++) {
        double t0 = wall();
        sobel_edges(img, edges, w, h, 0.5f + 0.25f * r);
        elapsed += wall() - t0;
        for (int i = 0; i < w * h; i += 101)
            cs += edges[i];
    }

    for (int i = 0; i < w * h; i++)
        cs += edges[i] * (1 + i % 7);
    printf("time: %.6f\n", elapsed);
    printf("checksum: %.10e\n", cs);
    printf("hash: %016llx\n", fnv1a(14695981039346656037ULL, edges, sizeof(float) * w * h));
    free(img); free(edges);
    return 0;
}
