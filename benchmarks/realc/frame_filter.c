/* frame_filter.c -- a 3x3 integer smoothing filter (1 2 1 / 2 4 2 / 1 2 1, >> 4) over 8-bit video frames.
 * Style: embedded and DSP video code: statically allocated frame buffers of the largest supported resolution
 *   (`static unsigned char in[MAX_H][MAX_W]`), the frame's own height and width at run time, integer arithmetic.
 * Blockers: none but the missing `#pragma scop` (the control group); unsigned char data.
 * Args: H W FRAMES (default 1080 1920 100). small-args: 9 14 2 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MAX_H 1088
#define MAX_W 1920

static unsigned char in[MAX_H][MAX_W];
static unsigned char out[MAX_H][MAX_W];

void filter_frame(int h, int w)
{
    /* hot */
    for (int y = 1; y < h - 1; y++) {
        for (int x = 1; x < w - 1; x++) {
            int s = in[y - 1][x - 1] + 2 * in[y - 1][x] + in[y - 1][x + 1]
                  + 2 * in[y][x - 1] + 4 * in[y][x] + 2 * in[y][x + 1]
                  + in[y + 1][x - 1] + 2 * in[y + 1][x] + in[y + 1][x + 1];
            out[y][x] = (unsigned char)(s >> 4);
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
    int h = argc > 1 ? atoi(argv[1]) : 1080;
    int w = argc > 2 ? atoi(argv[2]) : 1920;
    int frames = argc > 3 ? atoi(argv[3]) : 100;
    if (h > MAX_H)
        h = MAX_H;
    if (w > MAX_W)
        w = MAX_W;
    double cs = 0.0;
    double elapsed = 0.0;
    unsigned long long hs = 14695981039346656037ULL;
    for (int f = 0; f < frames; f++) {
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                in[y][x] = (unsigned char)((x * 3 + y * 7 + f * 11 + (x * y) % 13) & 255);
        double t0 = wall();
        filter_frame(h, w);
        elapsed += wall() - t0;
        for (int y = 0; y < h; y++) {
            for (int x = 0; x < w; x += 7)
                cs += out[y][x];
            hs = fnv1a(hs, out[y], (size_t)w);
        }
    }
    printf("time: %.6f\n", elapsed);
    printf("checksum: %.10e\n", cs);
    printf("hash: %016llx\n", hs);
    return 0;
}
