/* gemm_tn.c -- C += ALPHA * A^T * B, A stored K x M: the weight-gradient product of a fully connected layer.
 * Style: darknet's gemm_tn (the TA=1 branch of gemm_cpu): int sizes, leading dimensions, a `register` scalar,
 *   float * parameters without restrict.
 * Blockers: flattened subscripts with leading dimensions (A[k*lda + i] needs lda >= M, B[k*ldb + j] and
 *   C[i*ldc + j] need ldb, ldc >= N), pointer parameters without restrict.
 * Args: M N K (default 1000 1000 1000). small-args: 33 27 45 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void gemm_tn(int M, int N, int K, float ALPHA, float *A, int lda, float *B, int ldb, float *C, int ldc)
{
    int i, j, k;
    /* hot */
    for (i = 0; i < M; ++i) {
        for (k = 0; k < K; ++k) {
            register float A_PART = ALPHA * A[k * lda + i];
            for (j = 0; j < N; ++j) {
                C[i * ldc + j] += A_PART * B[k * ldb + j];
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
    int M = argc > 1 ? atoi(argv[1]) : 1000;
    int N = argc > 2 ? atoi(argv[2]) : 1000;
    int K = argc > 3 ? atoi(argv[3]) : 1000;
    float *A = calloc((size_t)K * M, sizeof(float));
    float *B = calloc((size_t)K * N, sizeof(float));
    float *C = calloc((size_t)M * N, sizeof(float));
    for (int k = 0; k < K; k++)
        for (int i = 0; i < M; i++)
            A[k * M + i] = (float)((k * 3 + i * 5) % 17) / 17.0f - 0.5f;
    for (int k = 0; k < K; k++)
        for (int j = 0; j < N; j++)
            B[k * N + j] = (float)((k + 2 * j) % 13) / 13.0f - 0.5f;

    double t0 = wall();
    gemm_tn(M, N, K, 0.75f, A, M, B, N, C, N);
    double t1 = wall();

    double cs = 0.0;
    for (int i = 0; i < M * N; i++)
        cs += C[i] * (1 + i % 5);
    printf("time: %.6f\n", t1 - t0);
    printf("checksum: %.10e\n", cs);
    printf("hash: %016llx\n", fnv1a(14695981039346656037ULL, C, sizeof(float) * M * N));
    free(A); free(B); free(C);
    return 0;
}
