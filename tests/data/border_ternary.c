/* A stencil whose border is a ternary between values: the taps beyond the edge (in[(i - 1) * m + j] at i = 0)
 * are read only in the branch the interior takes; a tap two columns back read under an index scalar's test.
 * Args: N M REPS (default 300 200 2). */
#include <stdio.h>
#include <stdlib.h>

static void f(int n, int m, const float *in, float *out)
{
#pragma scop
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            out[i * m + j] = (i > 0 && j > 0 && i < n - 1 && j < m - 1)
                ? 0.25f * (in[(i - 1) * m + j] + in[(i + 1) * m + j] + in[i * m + j - 1] + in[i * m + j + 1])
                : in[i * m + j];
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++) {
            int valid = j - 2 >= 0;
            out[i * m + j] += valid ? in[i * m + j - 2] : 0.5f;
        }
#pragma endscop
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 300, m = argc > 2 ? atoi(argv[2]) : 200;
    int reps = argc > 3 ? atoi(argv[3]) : 2;
    float *in = malloc(sizeof(float) * n * m), *out = malloc(sizeof(float) * n * m);
    for (int i = 0; i < n * m; i++)
        in[i] = (float)(i % 17) / 7.0f;
    for (int r = 0; r < reps; r++)
        f(n, m, in, out);
    double cs = 0;
    for (int i = 0; i < n * m; i++)
        cs += out[i] * (1 + i % 5);
    printf("checksum: %.17g\n", cs);
    return 0;
}
