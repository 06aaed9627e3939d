/* im2col.c -- unfolding an image into the columns of a convolution's GEMM (zero padding, any stride).
 * Style: darknet/Caffe's im2col_cpu: a pixel helper that returns 0 outside the image, the column index
 *   split into kernel offsets and an input channel with % and / by the kernel size, offsets h*stride.
 * Blockers: non-affine subscripts (c % ksize, c / ksize / ksize, h * stride: products and quotients of a
 *   parameter and an iterator; these must be refused unless the values are versioned), a call to a helper that is
 *   not in libm (side-effect free), data-dependent bounds test inside the helper, flattened subscripts.
 * Args: CHANNELS HW KSIZE STRIDE PAD LAYERS (default 64 112 3 1 1 20). small-args: 3 11 3 2 1 2 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static float im_pixel(const float *im, int height, int width, int row, int col, int channel, int pad)
{
    row -= pad;
    col -= pad;
    if (row < 0 || col < 0 || row >= height || col >= width)
        return 0;
    return im[col + width * (row + height * channel)];
}

void im2col(const float *data_im, int channels, int height, int width, int ksize, int stride, int pad,
            float *data_col)
{
    int height_col = (height + 2 * pad - ksize) / stride + 1;
    int width_col = (width + 2 * pad - ksize) / stride + 1;
    int channels_col = channels * ksize * ksize;
    /* hot */
    for (int c = 0; c < channels_col; ++c) {
        int w_offset = c % ksize;
        int h_offset = (c / ksize) % ksize;
        int c_im = c / ksize / ksize;
        for (int h = 0; h < height_col; ++h) {
            for (int w = 0; w < width_col; ++w) {
                int im_row = h_offset + h * stride;
                int im_col = w_offset + w * stride;
                int col_index = (c * height_col + h) * width_col + w;
                data_col[col_index] = im_pixel(data_im, height, width, im_row, im_col, c_im, pad);
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
    int channels = argc > 1 ? atoi(argv[1]) : 64;
    int hw = argc > 2 ? atoi(argv[2]) : 112;
    int ksize = argc > 3 ? atoi(argv[3]) : 3;
    int stride = argc > 4 ? atoi(argv[4]) : 1;
    int pad = argc > 5 ? atoi(argv[5]) : 1;
    int layers = argc > 6 ? atoi(argv[6]) : 20;
    int out_hw = (hw + 2 * pad - ksize) / stride + 1;
    int nim = channels * hw * hw;
    int ncol = channels * ksize * ksize * out_hw * out_hw;
    float *im = malloc(sizeof(float) * nim);
    float *col = malloc(sizeof(float) * ncol);
    double cs = 0.0;
    double elapsed = 0.0;
    unsigned long long h = 14695981039346656037ULL;
    for (int l = 0; l < layers; l++) {
        for (int i = 0; i < nim; i++)
            im[i] = (float)((i * 7 + l * 3) % 23) / 23.0f;
        double t0 = wall();
        im2col(im, channels, hw, hw, ksize, stride, pad, col);
        elapsed += wall() - t0;
        for (int i = 0; i < ncol; i += 97)
            cs += col[i] * (1 + i % 5);
    }
    h = fnv1a(h, col, sizeof(float) * ncol);

    printf("time: %.6f\n", elapsed);
    printf("checksum: %.10e\n", cs);
    printf("hash: %016llx\n", h);
    free(im); free(col);
    return 0;
}
