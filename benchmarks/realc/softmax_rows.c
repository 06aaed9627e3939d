/* softmax_rows.c -- a numerically stable softmax over every row of an attention score matrix.
 * Style: llama2.c's softmax (the running maximum found with `if (x[i] > max_val)`, expf, the sum, the division),
 *   written out inside the loop over rows as ggml's per-row soft_max does, through a row pointer.
 * Blockers: a data-dependent condition (`if (row[i] > max_val) max_val = row[i];`), expf, a pointer variable
 *   (`float *row = x + r * len;`), scalar reductions per row.
 * Args: ROWS LEN REPS (default 2048 2048 10). small-args: 9 31 2 */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void softmax_rows(float *x, int rows, int len)
{
    /* hot */
    for (int r = 0; r < rows; r++) {
        float *row = x + r * len;
        float max_val = row[0];
        for (int i = 1; i < len; i++) {
            if (row[i] > max_val) {
                max_val = row[i];
            }
        }
        float sum = 0.0f;
        for (int i = 0; i < len; i++) {
            row[i] = expf(row[i] - max_val);
            sum += row[i];
        }
        for (int i = 0; i < len; i++) {
            row[i] /= sum;
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
    int rows = argc > 1 ? atoi(argv[1]) : 2048;
    int len = argc > 2 ? atoi(argv[2]) : 2048;
    int reps = argc > 3 ? atoi(argv[3]) : 10;
    float *x = malloc(sizeof(float) * rows * len);
    double cs = 0.0;
    double elapsed = 0.0;
    for (int rep = 0; rep < reps; rep++) {
        for (int i = 0; i < rows * len; i++)
            x[i] = (float)((i * 7 + rep * 13 + (i / len) * 5) % 41) / 4.0f - 5.0f;
        double t0 = wall();
        softmax_rows(x, rows, len);
        elapsed += wall() - t0;
        cs += x[(rep * 104729) % (rows * len)];
    }

    for (int i = 0; i < rows * len; i++)
        cs += x[i] * (1 + i % 7);
    printf("time: %.6f\n", elapsed);
    printf("checksum: %.10e\n", cs);
    printf("hash: %016llx\n", fnv1a(14695981039346656037ULL, x, sizeof(float) * rows * len));
    free(x);
    return 0;
}
