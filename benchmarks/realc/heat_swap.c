/* heat_swap.c -- explicit time steps of the 2-D heat equation, swapping the two grids' pointers after each step.
 * Style: the ubiquitous double-buffered stencil of simulation codes and tutorials: `double *tmp = cur;
 *   cur = next; next = tmp;` at the end of the time loop, flat grids cur[i*nx + j], nx and ny separate.
 * Blockers: pointer variables reassigned in the region (the swap: which array a name denotes changes with the
 *   parity of t), flattened subscripts, pointer parameters without restrict.
 * Args: NX NY STEPS (default 2000 2000 50). small-args: 19 15 5 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Returns the grid that holds the last step. */
double *heat(int nx, int ny, int steps, double alpha, double *u, double *v)
{
    double *cur = u;
    double *next = v;
    /* hot */
    for (int t = 0; t < steps; t++) {
        for (int i = 1; i < ny - 1; i++) {
            for (int j = 1; j < nx - 1; j++) {
                next[i * nx + j] = cur[i * nx + j]
                    + alpha * (cur[(i + 1) * nx + j] + cur[(i - 1) * nx + j]
                               + cur[i * nx + j + 1] + cur[i * nx + j - 1] - 4.0 * cur[i * nx + j]);
            }
        }
        double *tmp = cur;
        cur = next;
        next = tmp;
    }
    /* end hot */
    return cur;
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
    int nx = argc > 1 ? atoi(argv[1]) : 2000;
    int ny = argc > 2 ? atoi(argv[2]) : 2000;
    int steps = argc > 3 ? atoi(argv[3]) : 50;
    double *u = malloc(sizeof(double) * nx * ny);
    double *v = malloc(sizeof(double) * nx * ny);
    for (int i = 0; i < nx * ny; i++)
        u[i] = v[i] = (double)((i * 11 + (i / nx) * 3) % 17) / 17.0;

    double t0 = wall();
    double *res = heat(nx, ny, steps, 0.2, u, v);
    double t1 = wall();

    double cs = (res == u) ? 1.0 : 2.0;
    for (int i = 0; i < nx * ny; i++)
        cs += res[i] * (1 + i % 7);
    unsigned long long h = fnv1a(14695981039346656037ULL, u, sizeof(double) * nx * ny);
    h = fnv1a(h, v, sizeof(double) * nx * ny);
    printf("time: %.6f\n", t1 - t0);
    printf("checksum: %.10e\n", cs);
    printf("hash: %016llx\n", h);
    free(u); free(v);
    return 0;
}
