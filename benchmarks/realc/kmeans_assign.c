/* kmeans_assign.c -- the assignment step of k-means: every point to its nearest centre, counting the changes.
 * Style: Rodinia kmeans' kmeans_clustering loop with find_nearest_point written inline: flat feature rows
 *   (feature[i*nfeatures + f]), the running minimum `if (dist < min_dist) { min_dist = dist; index = j; }`,
 *   a delta counter of changed memberships, float accumulators.
 * Blockers: data-dependent conditions (the minimum and its index; membership[i] != index), flattened subscripts
 *   whose shape follows from the bounds, scalars carried across the cluster loop, a scalar reduction returned.
 * Args: NPOINTS NCLUSTERS NFEATURES REPS (default 60000 32 34 6). small-args: 37 5 3 2 */
#define _POSIX_C_SOURCE 199309L
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

float assign_points(const float *feature, const float *clusters, int *membership,
                    int npoints, int nclusters, int nfeatures)
{
    float delta = 0.0f;
    /* hot */
    for (int i = 0; i < npoints; i++) {
        int index = 0;
        float min_dist = FLT_MAX;
        for (int j = 0; j < nclusters; j++) {
            float dist = 0.0f;
            for (int f = 0; f < nfeatures; f++) {
                float diff = feature[i * nfeatures + f] - clusters[j * nfeatures + f];
                dist += diff * diff;
            }
            if (dist < min_dist) {
                min_dist = dist;
                index = j;
            }
        }
        if (membership[i] != index)
            delta += 1.0f;
        membership[i] = index;
    }
    /* end hot */
    return delta;
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
    int npoints = argc > 1 ? atoi(argv[1]) : 60000;
    int nclusters = argc > 2 ? atoi(argv[2]) : 32;
    int nfeatures = argc > 3 ? atoi(argv[3]) : 34;
    int reps = argc > 4 ? atoi(argv[4]) : 6;
    float *feature = malloc(sizeof(float) * npoints * nfeatures);
    float *clusters = malloc(sizeof(float) * nclusters * nfeatures);
    int *membership = malloc(sizeof(int) * npoints);
    for (int i = 0; i < npoints * nfeatures; i++)
        feature[i] = (float)((i * 31 + (i / nfeatures) * 7) % 97) / 97.0f;
    for (int i = 0; i < npoints; i++)
        membership[i] = -1;

    double cs = 0.0;
    double elapsed = 0.0;
    for (int r = 0; r < reps; r++) {
        for (int i = 0; i < nclusters * nfeatures; i++)
            clusters[i] = (float)((i * 13 + r * 5) % 89) / 89.0f;
        double t0 = wall();
        float delta = assign_points(feature, clusters, membership, npoints, nclusters, nfeatures);
        elapsed += wall() - t0;
        cs += delta;
    }

    for (int i = 0; i < npoints; i++)
        cs += membership[i] * (1 + i % 7);
    printf("time: %.6f\n", elapsed);
    printf("checksum: %.10e\n", cs);
    printf("hash: %016llx\n", fnv1a(14695981039346656037ULL, membership, sizeof(int) * npoints));
    free(feature); free(clusters); free(membership);
    return 0;
}
