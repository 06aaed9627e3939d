/* gauss_seidel.c -- Gauss-Seidel sweeps (in place, lexicographic order) for the Poisson equation on a grid
 * described by a struct.
 * Style: multigrid smoothers and solver examples: a grid struct (g->n, g->h2, g->u, g->f) passed by pointer,
 *   the update written in place so that each point sees its already-updated west and north neighbours.
 * Blockers: struct fields in the bounds and subscripts (g->n) and as array bases (g->u, g->f: pointers inside a
 *   struct that may alias), flattened subscripts, a read-only struct field as a coefficient (g->h2).
 * Args: N SWEEPS (default 2000 20). small-args: 13 3 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct {
    int n;
    double h2;
    double *u;
    double *f;
} grid;

void gs_smooth(grid *g, int sweeps)
{
    /* hot */
    for (int s = 0; s < sweeps; s++) {
        for (int i = 1; i < g->n - 1; i++) {
            for (int j = 1; j < g->n - 1; j++) {
                g->u[i * g->n + j] = 0.25 * (g->u[(i - 1) * g->n + j] + g->u[(i + 1) * g->n + j]
                                             + g->u[i * g->n + j - 1] + g->u[i * g->n + j + 1]
                                             - g->h2 * g->f[i * g->n + j]);
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
    grid g;
    g.n = argc > 1 ? atoi(argv[1]) : 2000;
    int sweeps = argc > 2 ? atoi(argv[2]) : 20;
    int nn = g.n * g.n;
    g.h2 = 1.0 / ((double)(g.n - 1) * (g.n - 1));
    g.u = malloc(sizeof(double) * nn);
    g.f = malloc(sizeof(double) * nn);
    for (int i = 0; i < nn; i++) {
        g.u[i] = (double)((i * 5) % 19) / 19.0;
        g.f[i] = (double)((i * 7 + 2) % 13) / 13.0;
    }

    double t0 = wall();
    gs_smooth(&g, sweeps);
    double t1 = wall();

    double cs = 0.0;
    for (int i = 0; i < nn; i++)
        cs += g.u[i] * (1 + i % 7);
    printf("time: %.6f\n", t1 - t0);
    printf("checksum: %.10e\n", cs);
    printf("hash: %016llx\n", fnv1a(14695981039346656037ULL, g.u, sizeof(double) * nn));
    free(g.u); free(g.f);
    return 0;
}
