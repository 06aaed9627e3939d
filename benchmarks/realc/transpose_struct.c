/* transpose_struct.c -- B = A^T for matrices kept in a small struct (rows, cols, a flat row-major buffer).
 * Style: the matrix type of small C numeric libraries and course code (`typedef struct { int rows, cols;
 *   double *data; } matrix;` passed by value), data[i * m.cols + j].
 * Blockers: struct fields in the bounds and subscripts (m.rows, m.cols, t.cols), struct fields as array bases,
 *   flattened subscripts (t.data[j*t.cols + i]: its shape needs t.cols >= m.rows, which the tool cannot know),
 *   no reuse within a pass (the column walk misses the cache without tiling).
 * Args: ROWS COLS REPS (default 4000 3000 2). small-args: 37 29 2 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct {
    int rows, cols;
    double *data;
} matrix;

void transpose(matrix m, matrix t)
{
    /* hot */
    for (int i = 0; i < m.rows; i++) {
        for (int j = 0; j < m.cols; j++) {
            t.data[j * t.cols + i] = m.data[i * m.cols + j];
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
    matrix a, b;
    a.rows = argc > 1 ? atoi(argv[1]) : 4000;
    a.cols = argc > 2 ? atoi(argv[2]) : 3000;
    int reps = argc > 3 ? atoi(argv[3]) : 2;
    b.rows = a.cols;
    b.cols = a.rows;
    a.data = malloc(sizeof(double) * a.rows * a.cols);
    b.data = malloc(sizeof(double) * a.rows * a.cols);
    for (int i = 0; i < a.rows * a.cols; i++)
        a.data[i] = (double)((i * 7 + 1) % 1000) / 7.0;

    double cs = 0.0;
    double t0 = wall();
    for (int r = 0; r < reps; r++) {
        transpose(a, b);
        transpose(b, a);
        cs += a.data[(r * 7919) % (a.rows * a.cols)];
    }
    double t1 = wall();

    for (int i = 0; i < a.rows * a.cols; i++)
        cs += b.data[i] * (1 + i % 7);
    unsigned long long h = fnv1a(14695981039346656037ULL, a.data, sizeof(double) * a.rows * a.cols);
    h = fnv1a(h, b.data, sizeof(double) * a.rows * a.cols);
    printf("time: %.6f\n", t1 - t0);
    printf("checksum: %.10e\n", cs);
    printf("hash: %016llx\n", h);
    free(a.data); free(b.data);
    return 0;
}
