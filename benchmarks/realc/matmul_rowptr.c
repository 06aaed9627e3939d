/* matmul_rowptr.c -- C += A B for matrices stored as arrays of row pointers.
 * Style: Numerical Recipes' dmatrix() allocation (double **m, m[i][j]) and the code written on top of it:
 *   row pointers taken out of the loop (`double *ci = C[i];`, `const double *bk = B[k];`), a hoisted scalar.
 * Blockers: pointer variables loaded from arrays of pointers (`double *ci = C[i];`: distinct rows must be assumed
 *   or checked not to overlap), pointer parameters without restrict.
 * Args: N M P (default 1000 1000 1000). small-args: 19 23 17 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void matmul_rows(double **C, double **A, double **B, int n, int m, int p)
{
    /* hot */
    for (int i = 0; i < n; i++) {
        double *ci = C[i];
        const double *ai = A[i];
        for (int k = 0; k < m; k++) {
            const double aik = ai[k];
            const double *bk = B[k];
            for (int j = 0; j < p; j++)
                ci[j] += aik * bk[j];
        }
    }
    /* end hot */
}

static double **dmatrix(int rows, int cols)
{
    double **m = malloc(sizeof(double *) * rows);
    m[0] = malloc(sizeof(double) * rows * cols);
    for (int i = 1; i < rows; i++)
        m[i] = m[i - 1] + cols;
    return m;
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
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    int m = argc > 2 ? atoi(argv[2]) : 1000;
    int p = argc > 3 ? atoi(argv[3]) : 1000;
    double **A = dmatrix(n, m), **B = dmatrix(m, p), **C = dmatrix(n, p);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < m; k++)
            A[i][k] = (double)((i * 3 + k * 7) % 17) / 17.0 - 0.5;
    for (int k = 0; k < m; k++)
        for (int j = 0; j < p; j++)
            B[k][j] = (double)((k * 5 + j) % 13) / 13.0 - 0.5;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < p; j++)
            C[i][j] = (double)((i + j) % 3);

    double t0 = wall();
    matmul_rows(C, A, B, n, m, p);
    double t1 = wall();

    double cs = 0.0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < p; j++)
            cs += C[i][j] * (1 + (i * p + j) % 7);
    printf("time: %.6f\n", t1 - t0);
    printf("checksum: %.10e\n", cs);
    printf("hash: %016llx\n", fnv1a(14695981039346656037ULL, C[0], sizeof(double) * n * p));
    free(A[0]); free(B[0]); free(C[0]); free(A); free(B); free(C);
    return 0;
}
