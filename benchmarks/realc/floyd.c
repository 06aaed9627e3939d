/* floyd.c -- all-pairs shortest paths (Floyd-Warshall) on a dense int distance matrix.
 * Style: the textbook and competitive-programming Floyd-Warshall on a flat matrix: the update guarded by
 *   `if (dist[i*n + k] + dist[k*n + j] < dist[i*n + j])`, a large finite "infinity".
 * Blockers: a data-dependent condition guarding the write (a conditional may-write), flattened subscripts whose
 *   shape follows from the bounds, the k loop carrying every dependence (only i and j are parallel).
 * Args: N (default 1000). small-args: 29 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define INF (1 << 28)

void floyd_warshall(int n, int *dist)
{
    /* hot */
    for (int k = 0; k < n; k++) {
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                if (dist[i * n + k] + dist[k * n + j] < dist[i * n + j])
                    dist[i * n + j] = dist[i * n + k] + dist[k * n + j];
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
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    int *dist = malloc(sizeof(int) * n * n);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            int r = (i * 131 + j * 71) % 97;
            dist[i * n + j] = (i == j) ? 0 : (r < 20 ? 1 + (r * 13) % 50 : INF);
        }

    double t0 = wall();
    floyd_warshall(n, dist);
    double t1 = wall();

    double cs = 0.0;
    for (int i = 0; i < n * n; i++)
        cs += (double)dist[i] * (1 + i % 7);
    printf("time: %.6f\n", t1 - t0);
    printf("checksum: %.10e\n", cs);
    printf("hash: %016llx\n", fnv1a(14695981039346656037ULL, dist, sizeof(int) * n * n));
    free(dist);
    return 0;
}
