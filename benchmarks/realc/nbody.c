/* nbody.c -- one step's accelerations of an all-pairs gravitational n-body system (softened), then velocities.
 * Style: n-body codes of HPC courses and benchmark suites: a struct of arrays reached through a pointer (b->n,
 *   b->x[j], b->m[j]), `if (j == i) continue;`, 1 / (d2 * sqrtf(d2)), three float accumulators.
 * Blockers: struct fields in the bound and as array bases (b->n, b->x: pointers inside a struct, which may alias),
 *   `continue`, sqrtf, scalar reductions.
 * Args: N STEPS (default 4096 3). small-args: 37 2 */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct {
    int n;
    float *x, *y, *z;
    float *vx, *vy, *vz;
    float *m;
} bodies;

void accelerate(bodies *b, float dt, float soft)
{
    /* hot */
    for (int i = 0; i < b->n; i++) {
        float ax = 0.0f, ay = 0.0f, az = 0.0f;
        for (int j = 0; j < b->n; j++) {
            if (j == i)
                continue;
            float dx = b->x[j] - b->x[i];
            float dy = b->y[j] - b->y[i];
            float dz = b->z[j] - b->z[i];
            float d2 = dx * dx + dy * dy + dz * dz + soft;
            float inv = b->m[j] / (d2 * sqrtf(d2));
            ax += dx * inv;
            ay += dy * inv;
            az += dz * inv;
        }
        b->vx[i] += dt * ax;
        b->vy[i] += dt * ay;
        b->vz[i] += dt * az;
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
    bodies b;
    b.n = argc > 1 ? atoi(argv[1]) : 4096;
    int steps = argc > 2 ? atoi(argv[2]) : 3;
    float **fields[7] = {&b.x, &b.y, &b.z, &b.vx, &b.vy, &b.vz, &b.m};
    for (int f = 0; f < 7; f++)
        *fields[f] = malloc(sizeof(float) * b.n);
    for (int i = 0; i < b.n; i++) {
        b.x[i] = (float)((i * 37) % 101) / 10.0f;
        b.y[i] = (float)((i * 53 + 7) % 103) / 10.0f;
        b.z[i] = (float)((i * 71 + 3) % 107) / 10.0f;
        b.vx[i] = b.vy[i] = b.vz[i] = 0.0f;
        b.m[i] = 1.0f + (float)(i % 5) / 5.0f;
    }

    double elapsed = 0.0;
    for (int s = 0; s < steps; s++) {
        double t0 = wall();
        accelerate(&b, 0.01f, 0.01f);
        elapsed += wall() - t0;
        for (int i = 0; i < b.n; i++) {
            b.x[i] += 0.01f * b.vx[i];
            b.y[i] += 0.01f * b.vy[i];
            b.z[i] += 0.01f * b.vz[i];
        }
    }

    double cs = 0.0;
    unsigned long long h = 14695981039346656037ULL;
    for (int i = 0; i < b.n; i++)
        cs += (b.x[i] + 2 * b.y[i] + 3 * b.z[i]) * (1 + i % 7) + b.vx[i];
    for (int f = 0; f < 6; f++)
        h = fnv1a(h, *fields[f], sizeof(float) * b.n);
    printf("time: %.6f\n", elapsed);
    printf("checksum: %.10e\n", cs);
    printf("hash: %016llx\n", h);
    for (int f = 0; f < 7; f++)
        free(*fields[f]);
    return 0;
}
