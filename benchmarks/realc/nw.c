/* nw.c -- the score matrix of a Needleman-Wunsch global alignment with a linear gap penalty.
 * Style: Rodinia nw's sequential reference: flat int matrices score[i*max_cols + j] and the substitution
 *   scores ref[i*max_cols + j], a `maximum(a, b, c)` helper, the first row and column set by the caller.
 * Blockers: a call to a helper that is not in libm (side-effect free), flattened subscripts whose shape follows
 *   from the bounds, a wavefront (each cell needs its west, north and north-west neighbours), int data.
 * Args: ROWS COLS PENALTY REPS (default 7000 7000 10 4). small-args: 23 19 10 2 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int maximum(int a, int b, int c)
{
    int k = (a <= b) ? b : a;
    return (k <= c) ? c : k;
}

void nw_score(int *score, const int *ref, int max_rows, int max_cols, int penalty)
{
    /* hot */
    for (int i = 1; i < max_rows; i++) {
        for (int j = 1; j < max_cols; j++) {
            score[i * max_cols + j] = maximum(score[(i - 1) * max_cols + j - 1] + ref[i * max_cols + j],
                                              score[i * max_cols + j - 1] - penalty,
                                              score[(i - 1) * max_cols + j] - penalty);
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
    int max_rows = argc > 1 ? atoi(argv[1]) : 7000;
    int max_cols = argc > 2 ? atoi(argv[2]) : 7000;
    int penalty = argc > 3 ? atoi(argv[3]) : 10;
    int reps = argc > 4 ? atoi(argv[4]) : 4;
    int *score = calloc((size_t)max_rows * max_cols, sizeof(int));
    int *ref = malloc(sizeof(int) * max_rows * max_cols);
    int *seq1 = malloc(sizeof(int) * max_rows);
    int *seq2 = malloc(sizeof(int) * max_cols);
    for (int i = 0; i < max_rows; i++)
        seq1[i] = (i * 7 + 3) % 24;
    for (int j = 0; j < max_cols; j++)
        seq2[j] = (j * 11 + 5) % 24;
    for (int i = 0; i < max_rows; i++)
        for (int j = 0; j < max_cols; j++)
            ref[i * max_cols + j] = (seq1[i] == seq2[j]) ? 5 : -((seq1[i] + seq2[j]) % 4);
    for (int i = 0; i < max_rows; i++)
        score[i * max_cols] = -i * penalty;
    for (int j = 0; j < max_cols; j++)
        score[j] = -j * penalty;

    double t0 = wall();
    for (int r = 0; r < reps; r++)
        nw_score(score, ref, max_rows, max_cols, penalty);
    double t1 = wall();

    double cs = 0.0;
    for (int i = 0; i < max_rows * max_cols; i++)
        cs += score[i] * (double)(1 + i % 7);
    printf("time: %.6f\n", t1 - t0);
    printf("checksum: %.10e\n", cs);
    printf("hash: %016llx\n", fnv1a(14695981039346656037ULL, score, sizeof(int) * max_rows * max_cols));
    free(score); free(ref); free(seq1); free(seq2);
    return 0;
}
