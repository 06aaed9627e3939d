/* Taps clamped to the edge, three ways: an index scalar clamped by two ifs (a row pass), a conditional in the
 * subscript (a column pass) and, in a time loop (tiled, skewed), a neighbour's subscript clamped at both ends.
 * Args: W H T (default 300 200 20). */
#include <stdio.h>
#include <stdlib.h>

static const float g5[5] = {0.0625f, 0.25f, 0.375f, 0.25f, 0.0625f};

static void passes(const float *src, float *tmp, float *dst, float *a, float *b, int w, int h, int steps)
{
#pragma scop
    for (int y = 0; y < h; y++)
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
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            float acc = 0.0f;
            for (int k = 0; k < 3; k++)
                acc += g5[k + 1] * tmp[(y + k - 1 < 0 ? 0 : y + k - 1 > h - 1 ? h - 1 : y + k - 1) * w + x];
            dst[y * w + x] = acc;
        }
    for (int t = 0; t < steps; t++) {
        for (int i = 0; i < w; i++)
            b[i] = 0.25f * a[i > 0 ? i - 1 : 0] + 0.5f * a[i] + 0.25f * a[i < w - 1 ? i + 1 : w - 1];
        for (int i = 0; i < w; i++)
            a[i] = b[i];
    }
#pragma endscop
}

int main(int argc, char **argv)
{
    int w = argc > 1 ? atoi(argv[1]) : 300, h = argc > 2 ? atoi(argv[2]) : 200;
    int steps = argc > 3 ? atoi(argv[3]) : 20;
    float *src = malloc(sizeof(float) * w * h), *tmp = malloc(sizeof(float) * w * h);
    float *dst = malloc(sizeof(float) * w * h), *a = malloc(sizeof(float) * w), *b = malloc(sizeof(float) * w);
    for (int i = 0; i < w * h; i++)
        src[i] = (float)((i * 11 + (i / w) * 3) % 256) / 255.0f;
    for (int i = 0; i < w; i++)
        a[i] = (float)((i * 7) % 13);
    passes(src, tmp, dst, a, b, w, h, steps);
    double cs = 0.0;
    for (int i = 0; i < w * h; i++)
        cs += dst[i] * (1 + i % 7) + tmp[i];
    for (int i = 0; i < w; i++)
        cs += a[i] * (1 + i % 5);
    printf("checksum: %.17g\n", cs);
    return 0;
}
