/* attention.c -- causal multi-head attention of one token against the key/value cache, for every position of a
 * prompt (grouped-query heads: n_heads query heads share n_kv_heads key/value heads).
 * Style: llama2.c's attention block in forward(): Config and RunState structs, head pointers
 *   (`float *q = s->q + h * head_size;`), the cache row of head h / kv_mul, score /= sqrtf(head_size), an inline
 *   softmax, the weighted sum of the values; `#pragma omp parallel for private(h)` over the heads.
 * Blockers: struct fields in bounds and bases (p->n_heads, s->att), pointer variables, a non-affine subscript
 *   ((h / kv_mul) * head_size: a division by a parameter), a data-dependent condition (the softmax maximum),
 *   expf and sqrtf, an OpenMP pragma in the nest.
 * Args: DIM N_HEADS N_KV_HEADS T (default 768 12 4 896). small-args: 24 4 2 9 */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct {
    int dim;
    int n_heads;
    int n_kv_heads;
    int seq_len;
} Config;

typedef struct {
    float *q;           /* (dim,) query of the current token */
    float *att;         /* (n_heads, seq_len) scores */
    float *xb;          /* (dim,) output */
    float *key_cache;   /* (seq_len, kv_dim) */
    float *value_cache; /* (seq_len, kv_dim) */
} RunState;

static void attention(const Config *p, RunState *s, int pos)
{
    int kv_dim = (p->dim * p->n_kv_heads) / p->n_heads;
    int kv_mul = p->n_heads / p->n_kv_heads;
    int head_size = p->dim / p->n_heads;
    int h;
    /* hot */
#pragma omp parallel for private(h)
    for (h = 0; h < p->n_heads; h++) {
        float *q = s->q + h * head_size;
        float *att = s->att + h * p->seq_len;
        for (int t = 0; t <= pos; t++) {
            float *k = s->key_cache + t * kv_dim + (h / kv_mul) * head_size;
            float score = 0.0f;
            for (int i = 0; i < head_size; i++) {
                score += q[i] * k[i];
            }
            score /= sqrtf(head_size);
            att[t] = score;
        }
        float max_val = att[0];
        for (int t = 1; t <= pos; t++) {
            if (att[t] > max_val) {
                max_val = att[t];
            }
        }
        float sum = 0.0f;
        for (int t = 0; t <= pos; t++) {
            att[t] = expf(att[t] - max_val);
            sum += att[t];
        }
        for (int t = 0; t <= pos; t++) {
            att[t] /= sum;
        }
        float *xb = s->xb + h * head_size;
        for (int i = 0; i < head_size; i++) {
            xb[i] = 0.0f;
        }
        for (int t = 0; t <= pos; t++) {
            float *v = s->value_cache + t * kv_dim + (h / kv_mul) * head_size;
            float a = att[t];
            for (int i = 0; i < head_size; i++) {
                xb[i] += a * v[i];
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
    Config p;
    p.dim = argc > 1 ? atoi(argv[1]) : 768;
    p.n_heads = argc > 2 ? atoi(argv[2]) : 12;
    p.n_kv_heads = argc > 3 ? atoi(argv[3]) : 4;
    p.seq_len = argc > 4 ? atoi(argv[4]) : 896;
    int kv_dim = (p.dim * p.n_kv_heads) / p.n_heads;
    RunState s;
    s.q = malloc(sizeof(float) * p.dim);
    s.att = malloc(sizeof(float) * p.n_heads * p.seq_len);
    s.xb = malloc(sizeof(float) * p.dim);
    s.key_cache = malloc(sizeof(float) * p.seq_len * kv_dim);
    s.value_cache = malloc(sizeof(float) * p.seq_len * kv_dim);
    for (int i = 0; i < p.seq_len * kv_dim; i++) {
        s.key_cache[i] = (float)((i * 7 + 1) % 29) / 29.0f - 0.5f;
        s.value_cache[i] = (float)((i * 5 + 2) % 31) / 31.0f - 0.5f;
    }

    double cs = 0.0;
    double elapsed = 0.0;
    for (int pos = 0; pos < p.seq_len; pos++) {
        for (int i = 0; i < p.dim; i++)
            s.q[i] = (float)((i * 3 + pos * 11) % 19) / 19.0f - 0.5f;
        double t0 = wall();
        attention(&p, &s, pos);
        elapsed += wall() - t0;
        for (int i = 0; i < p.dim; i++)
            cs += s.xb[i] * (1 + (i + pos) % 7);
    }

    unsigned long long h = fnv1a(14695981039346656037ULL, s.xb, sizeof(float) * p.dim);
    h = fnv1a(h, s.att, sizeof(float) * p.n_heads * p.seq_len);
    printf("time: %.6f\n", elapsed);
    printf("checksum: %.10e\n", cs);
    printf("hash: %016llx\n", h);
    free(s.q); free(s.att); free(s.xb); free(s.key_cache); free(s.value_cache);
    return 0;
}
