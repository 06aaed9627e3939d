/* rgb_to_gray.c -- converting interleaved 8-bit RGB pixels to grey levels with integer weights (77, 150, 29) >> 8.
 * Style: stb_image- and libjpeg-style pixel loops: one loop over w * h pixels, a pointer to the current pixel
 *   (`const unsigned char *p = rgb + 3 * i;`), unsigned char arithmetic with a shift.
 * Blockers: a product of two parameters in the bound (i < w * h), a pointer variable (an array plus an affine
 *   offset), pointer parameters without restrict, integer arithmetic on unsigned char.
 * Args: W H REPS (default 4096 4096 24). small-args: 13 11 2 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void rgb_to_gray(const unsigned char *rgb, unsigned char *gray, int w, int h)
{
    /* hot */
    for (int i = 0; i < w * h; i++) {
        const unsigned char *p = rgb + 3 * i;
        gray[i] = (unsigned char)((77 * p[0] + 150 * p[1] + 29 * p[2]) >> 8);
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
    int reps = argc > 3 ? atoi(argv[3]) : 24;
    unsigned char *rgb = malloc((size_t)3 * w * h);
    unsigned char *gray = malloc((size_t)w * h);
    double cs = 0.0;
    double elapsed = 0.0;
    unsigned long long hh = 14695981039346656037ULL;
    for (int r = 0; r < reps; r++) {
        for (int i = 0; i < 3 * w * h; i += 4096)
            rgb[i] = (unsigned char)(i * 7 + r);
        if (r == 0)
            for (int i = 0; i < 3 * w * h; i++)
                rgb[i] = (unsigned char)((i * 31 + (i / (3 * w)) * 17) & 255);
        double t0 = wall();
        rgb_to_gray(rgb, gray, w, h);
        elapsed += wall() - t0;
        cs += gray[(r * 7919) % (w * h)];
        hh = fnv1a(hh, gray, (size_t)w * h < 65536 ? (size_t)w * h : 65536);
    }

    for (int i = 0; i < w * h; i++)
        cs += gray[i] * (1 + i % 7);
    hh = fnv1a(hh, gray, (size_t)w * h);
    printf("time: %.6f\n", elapsed);
    printf("checksum: %.10e\n", cs);
    printf("hash: %016llx\n", hh);
    free(rgb); free(gray);
    return 0;
}
