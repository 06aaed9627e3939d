/* polybench.c -- polytune's own stand-in for PolyBench/C 4.2.1's utilities/polybench.c (see polybench.h). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "polybench.h"

double polybench_program_total_flops = 0;
static double polybench_t_start, polybench_t_end;

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

void polybench_flush_cache(void)
{
  size_t n = 32770 * 1024 / sizeof(double);
  double *flush = calloc(n, sizeof(double));
  double sum = 0;
  if (!flush) return;
  for (size_t i = 0; i < n; i++) sum += flush[i];
  if (sum > 10.0) printf("flush: %g\n", sum); /* never true: keeps the loop */
  free(flush);
}

void polybench_timer_start(void)
{
  polybench_flush_cache();
  polybench_t_start = now();
}

void polybench_timer_stop(void) { polybench_t_end = now(); }

void polybench_timer_print(void) { printf("%0.6f\n", polybench_t_end - polybench_t_start); }

void *polybench_alloc_data(unsigned long long int n, int elt_size)
{
  void *p = NULL;
  size_t bytes = (size_t)n * (size_t)elt_size;
  if (posix_memalign(&p, 4096, bytes ? bytes : 1) != 0 || !p) {
    fprintf(stderr, "[PolyBench] posix_memalign: cannot allocate memory\n");
    exit(1);
  }
  memset(p, 0, bytes);
  return p;
}

void polybench_free_data(void *ptr) { free(ptr); }
