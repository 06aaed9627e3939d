/* box_blur.c -- a separable box blur of radius r of a multi-channel image, a row pass then a column pass.
 * Style: darknet's image type (a struct of w, h, c and float *data passed by value, planar channels,
 *   data[x + w*(y + h*k)]), as in its image.c filters.
 * Blockers: struct fields in the bounds and subscripts (im.w, im.h, im.c, tmp.w), flattened 3-level subscripts,
 *   two images of one type whose sizes the tool cannot tell are equal, struct fields as array bases.
 * Args: W H C R REPS (default 2048 2048 3 3 2). small-args: 23 19 2 2 2 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct {
    int w;
    int h;
    int c;
    float *data;
} image;

void box_blur(image im, image tmp, int r)
{
    float norm = 1.0f / (2 * r + 1);
    /* hot */
    for (int k = 0; k < im.c; ++k) {
        for (int y = 0; y < im.h; ++y) {
            for (int x = r; x < im.w - r; ++x) {
                float sum = 0;
                for (int d = -r; d <= r; ++d)
                    sum += im.data[x + d + im.w * (y + im.h * k)];
                tmp.data[x + tmp.w * (y + tmp.h * k)] = sum * norm;
            }
        }
        for (int y = r; y < im.h - r; ++y) {
            for (int x = r; x < im.w - r; ++x) {
                float sum = 0;
                for (int d = -r; d <= r; ++d)
                    sum += tmp.data[x + tmp.w * (y + d + tmp.h * k)];
                im.data[x + im.w * (y + im.h * k)] = sum * norm;
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
    image im, tmp;
    im.w = argc > 1 ? atoi(argv[1]) : 2048;
    im.h = argc > 2 ? atoi(argv[2]) : 2048;
    im.c = argc > 3 ? atoi(argv[3]) : 3;
    int r = argc > 4 ? atoi(argv[4]) : 3;
    int reps = argc > 5 ? atoi(argv[5]) : 2;
    tmp = im;
    int n = im.w * im.h * im.c;
    im.data = malloc(sizeof(float) * n);
    tmp.data = calloc(n, sizeof(float));
    for (int i = 0; i < n; i++)
        im.data[i] = (float)((i * 13 + (i / im.w) * 7) % 255) / 255.0f;

    double cs = 0.0;
    double t0 = wall();
    for (int rep = 0; rep < reps; rep++) {
        box_blur(im, tmp, r);
        cs += im.data[(rep * 7919) % n];
    }
    double t1 = wall();

    for (int i = 0; i < n; i++)
        cs += im.data[i] * (1 + i % 7) + tmp.data[i];
    unsigned long long h = fnv1a(14695981039346656037ULL, im.data, sizeof(float) * n);
    h = fnv1a(h, tmp.data, sizeof(float) * n);
    printf("time: %.6f\n", t1 - t0);
    printf("checksum: %.10e\n", cs);
    printf("hash: %016llx\n", h);
    free(im.data); free(tmp.data);
    return 0;
}
