/* gemm_nn.c -- C = ALPHA*A*B + BETA*C on row-major float matrices that sit inside larger buffers.
 * Style: darknet's gemm.c (gemm_cpu scales C, then dispatches on the transposes to gemm_nn): int sizes, leading
 *   dimensions lda/ldb/ldc, the A element hoisted into a `register` scalar, plain float * parameters.
 * Blockers: flattened subscripts with leading dimensions (A[i*lda + k] is A[i][k] only if lda >= K; here the
 *   buffers are padded, lda = K + 4, ldc = N + 4), pointer parameters without restrict.
 * Args: M N K (default 1100 1100 1100). small-args: 37 29 41 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void gemm_nn(int M, int N, int K, float ALPHA, float *A, int lda, float *B, int ldb, float *C, int ldc)
{
    int i, j, k;
    /* hot */
    for (i = 0; i < M; ++i) {
        for (k = 0; k < K; ++k) {
            register float A_PART = ALPHA * A[i * lda + k];
            for (j = 0; j < N; ++j) {
                C[i * ldc + j] += A_PART * B[k * ldb + j];
            }
        }
    }
    /* end hot */
}

static void gemm_cpu(int TA, int TB, int M, int N, int K, float ALPHA, float *A, int lda, float *B, int ldb,
                     float BETA, float *C, int ldc)
{
    int i, j;
    for (i = 0; i < M; ++i) {
        for (j = 0; j < N; ++j) {
            C[i * ldc + j] *= BETA;
        }
    }
    if (!TA && !TB)
        gemm_nn(M, N, K, ALPHA, A, lda, B, ldb, C, ldc);
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
    int M = argc > 1 ? atoi(argv[1]) : 1100;
    int N = argc > 2 ? atoi(argv[2]) : 1100;
    int K = argc > 3 ? atoi(argv[3]) : 1100;
    int lda = K + 4, ldb = N, ldc = N + 4;
    float *A = malloc(sizeof(float) * M * lda);
    float *B = malloc(sizeof(float) * K * ldb);
    float *C = malloc(sizeof(float) * M * ldc);
    for (int i = 0; i < M * lda; i++)
        A[i] = (float)((i * 7 + 3) % 19) / 19.0f - 0.5f;
    for (int i = 0; i < K * ldb; i++)
        B[i] = (float)((i * 5 + 1) % 23) / 23.0f - 0.5f;
    for (int i = 0; i < M * ldc; i++)
        C[i] = (float)(i % 11) / 11.0f;

    double t0 = wall();
    gemm_cpu(0, 0, M, N, K, 0.5f, A, lda, B, ldb, 1.25f, C, ldc);
    double t1 = wall();

    double cs = 0.0;
    for (int i = 0; i < M * ldc; i++)
        cs += C[i] * (1 + i % 7);
    printf("time: %.6f\n", t1 - t0);
    printf("checksum: %.10e\n", cs);
    printf("hash: %016llx\n", fnv1a(14695981039346656037ULL, C, sizeof(float) * M * ldc));
    free(A); free(B); free(C);
    return 0;
}
