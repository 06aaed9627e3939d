/* hotspot.c -- the thermal simulation of a chip: each step, every cell's temperature from its neighbours, its
 * power and the ambient temperature, with separate formulas at the corners and edges.
 * Style: Rodinia hotspot's OpenMP single_iteration: flat grids temp[r*col + c], an if/else-if chain over the
 *   corners, edges and interior, `#pragma omp parallel for shared(...) private(r, c, delta) firstprivate(row, col)`,
 *   float coefficients precomputed by the caller, called twice per time step with the buffers exchanged.
 * Blockers: flattened subscripts whose shape follows from the bounds, conditions on the iterators (r == 0,
 *   c == col - 1) selecting different statements, an OpenMP pragma in the nest, pointer parameters without
 *   restrict.
 * Args: ROWS COLS ITERS (default 2048 2048 30). small-args: 11 13 2 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void single_iteration(float *result, float *temp, float *power, int row, int col,
                      float Cap_1, float Rx_1, float Ry_1, float Rz_1, float amb_temp)
{
    float delta;
    int r, c;
    /* hot */
#pragma omp parallel for shared(power, temp, result) private(r, c, delta) firstprivate(row, col) schedule(static)
    for (r = 0; r < row; r++) {
        for (c = 0; c < col; c++) {
            if (r == 0 && c == 0) {
                delta = Cap_1 * (power[0] + (temp[1] - temp[0]) * Rx_1 + (temp[col] - temp[0]) * Ry_1
                                 + (amb_temp - temp[0]) * Rz_1);
            } else if (r == 0 && c == col - 1) {
                delta = Cap_1 * (power[c] + (temp[c - 1] - temp[c]) * Rx_1 + (temp[c + col] - temp[c]) * Ry_1
                                 + (amb_temp - temp[c]) * Rz_1);
            } else if (r == row - 1 && c == col - 1) {
                delta = Cap_1 * (power[r * col + c] + (temp[r * col + c - 1] - temp[r * col + c]) * Rx_1
                                 + (temp[(r - 1) * col + c] - temp[r * col + c]) * Ry_1
                                 + (amb_temp - temp[r * col + c]) * Rz_1);
            } else if (r == row - 1 && c == 0) {
                delta = Cap_1 * (power[r * col] + (temp[r * col + 1] - temp[r * col]) * Rx_1
                                 + (temp[(r - 1) * col] - temp[r * col]) * Ry_1 + (amb_temp - temp[r * col]) * Rz_1);
            } else if (r == 0) {
                delta = Cap_1 * (power[c] + (temp[c + 1] + temp[c - 1] - 2.0f * temp[c]) * Rx_1
                                 + (temp[col + c] - temp[c]) * Ry_1 + (amb_temp - temp[c]) * Rz_1);
            } else if (c == col - 1) {
                delta = Cap_1 * (power[r * col + c]
                                 + (temp[(r + 1) * col + c] + temp[(r - 1) * col + c] - 2.0f * temp[r * col + c]) * Ry_1
                                 + (temp[r * col + c - 1] - temp[r * col + c]) * Rx_1
                                 + (amb_temp - temp[r * col + c]) * Rz_1);
            } else if (r == row - 1) {
                delta = Cap_1 * (power[r * col + c]
                                 + (temp[r * col + c + 1] + temp[r * col + c - 1] - 2.0f * temp[r * col + c]) * Rx_1
                                 + (temp[(r - 1) * col + c] - temp[r * col + c]) * Ry_1
                                 + (amb_temp - temp[r * col + c]) * Rz_1);
            } else if (c == 0) {
                delta = Cap_1 * (power[r * col]
                                 + (temp[(r + 1) * col] + temp[(r - 1) * col] - 2.0f * temp[r * col]) * Ry_1
                                 + (temp[r * col + 1] - temp[r * col]) * Rx_1 + (amb_temp - temp[r * col]) * Rz_1);
            } else {
                delta = Cap_1 * (power[r * col + c]
                                 + (temp[(r + 1) * col + c] + temp[(r - 1) * col + c] - 2.0f * temp[r * col + c]) * Ry_1
                                 + (temp[r * col + c + 1] + temp[r * col + c - 1] - 2.0f * temp[r * col + c]) * Rx_1
                                 + (amb_temp - temp[r * col + c]) * Rz_1);
            }
            result[r * col + c] = temp[r * col + c] + delta;
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
    int row = argc > 1 ? atoi(argv[1]) : 2048;
    int col = argc > 2 ? atoi(argv[2]) : 2048;
    int iters = argc > 3 ? atoi(argv[3]) : 30;
    float *temp = malloc(sizeof(float) * row * col);
    float *power = malloc(sizeof(float) * row * col);
    float *result = malloc(sizeof(float) * row * col);
    for (int i = 0; i < row * col; i++) {
        temp[i] = 320.0f + (float)((i * 7 + (i / col) * 3) % 23);
        power[i] = (float)((i * 13) % 17) / 1700.0f;
    }
    float Cap_1 = 0.05f, Rx_1 = 0.1f, Ry_1 = 0.12f, Rz_1 = 0.0004f, amb_temp = 80.0f;

    double t0 = wall();
    for (int i = 0; i < iters; i++) {
        single_iteration(result, temp, power, row, col, Cap_1, Rx_1, Ry_1, Rz_1, amb_temp);
        single_iteration(temp, result, power, row, col, Cap_1, Rx_1, Ry_1, Rz_1, amb_temp);
    }
    double t1 = wall();

    double cs = 0.0;
    for (int i = 0; i < row * col; i++)
        cs += temp[i] * (1 + i % 7);
    unsigned long long h = fnv1a(14695981039346656037ULL, temp, sizeof(float) * row * col);
    h = fnv1a(h, result, sizeof(float) * row * col);
    printf("time: %.6f\n", t1 - t0);
    printf("checksum: %.10e\n", cs);
    printf("hash: %016llx\n", h);
    free(temp); free(power); free(result);
    return 0;
}
