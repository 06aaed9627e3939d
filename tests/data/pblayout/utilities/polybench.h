/* polybench.h -- polytune's own stand-in for PolyBench/C 4.2.1's utilities/polybench.h.
 * Written for polytune's tests (not PolyBench's file): the same macro and function names that PolyBench
 * kernels use, so a kernel laid out as in the distribution (kernel.c + kernel.h + utilities/polybench.c)
 * builds and runs the way the real suite does: a second translation unit, no extern "C", timing with
 * -DPOLYBENCH_TIME, array dumps on stderr with -DPOLYBENCH_DUMP_ARRAYS. */
#ifndef POLYTUNE_TEST_POLYBENCH_H
#define POLYTUNE_TEST_POLYBENCH_H

#include <stdlib.h>

#ifndef POLYBENCH_PADDING_FACTOR
#define POLYBENCH_PADDING_FACTOR 0
#endif

#ifdef POLYBENCH_USE_SCALAR_LB
#define POLYBENCH_LOOP_BOUND(x, y) x
#else
#define POLYBENCH_LOOP_BOUND(x, y) y
#endif

#ifdef POLYBENCH_USE_C99_PROTO
#define POLYBENCH_C99_SELECT(x, y) y
#else
#define POLYBENCH_C99_SELECT(x, y) x
#endif

#ifdef POLYBENCH_USE_RESTRICT
#define POLYBENCH_RESTRICT restrict
#else
#define POLYBENCH_RESTRICT
#endif

/* Arrays live on the heap, passed to the kernel as pointers to rows. */
#define POLYBENCH_ARRAY(x) *x
#define POLYBENCH_FREE_ARRAY(x) polybench_free_data((void *)x);
#define POLYBENCH_1D(var, dim1, ddim1) var[POLYBENCH_RESTRICT POLYBENCH_C99_SELECT(dim1, ddim1) + POLYBENCH_PADDING_FACTOR]
#define POLYBENCH_2D(var, dim1, dim2, ddim1, ddim2)                                                                  \
  var[POLYBENCH_RESTRICT POLYBENCH_C99_SELECT(dim1, ddim1) + POLYBENCH_PADDING_FACTOR]                               \
     [POLYBENCH_C99_SELECT(dim2, ddim2) + POLYBENCH_PADDING_FACTOR]
#define POLYBENCH_1D_ARRAY_DECL(var, type, dim1, ddim1)                                                              \
  type(*var)[dim1 + POLYBENCH_PADDING_FACTOR] =                                                                     \
      (type(*)[dim1 + POLYBENCH_PADDING_FACTOR])polybench_alloc_data(dim1 + POLYBENCH_PADDING_FACTOR, sizeof(type))
#define POLYBENCH_2D_ARRAY_DECL(var, type, dim1, dim2, ddim1, ddim2)                                                 \
  type(*var)[dim1 + POLYBENCH_PADDING_FACTOR][dim2 + POLYBENCH_PADDING_FACTOR] =                                    \
      (type(*)[dim1 + POLYBENCH_PADDING_FACTOR][dim2 + POLYBENCH_PADDING_FACTOR])polybench_alloc_data(              \
          (dim1 + POLYBENCH_PADDING_FACTOR) * (dim2 + POLYBENCH_PADDING_FACTOR), sizeof(type))

/* Dead-code elimination guard and array dumps: -DPOLYBENCH_DUMP_ARRAYS prints the arrays on stderr. */
#ifdef POLYBENCH_DUMP_ARRAYS
#define POLYBENCH_DCE_ONLY_CODE
#else
#define POLYBENCH_DCE_ONLY_CODE if (argc > 42 && !strcmp(argv[0], ""))
#endif
#define polybench_prevent_dce(func) POLYBENCH_DCE_ONLY_CODE func
#define POLYBENCH_DUMP_TARGET stderr
#define POLYBENCH_DUMP_START fprintf(POLYBENCH_DUMP_TARGET, "==BEGIN DUMP_ARRAYS==\n")
#define POLYBENCH_DUMP_FINISH fprintf(POLYBENCH_DUMP_TARGET, "==END   DUMP_ARRAYS==\n")
#define POLYBENCH_DUMP_BEGIN(s) fprintf(POLYBENCH_DUMP_TARGET, "begin dump: %s", s)
#define POLYBENCH_DUMP_END(s) fprintf(POLYBENCH_DUMP_TARGET, "\nend   dump: %s\n", s)

/* Timing: -DPOLYBENCH_TIME prints the kernel's wall time in seconds. */
#ifdef POLYBENCH_TIME
#define polybench_start_instruments polybench_timer_start();
#define polybench_stop_instruments polybench_timer_stop();
#define polybench_print_instruments polybench_timer_print();
#else
#define polybench_start_instruments
#define polybench_stop_instruments
#define polybench_print_instruments
#endif

extern double polybench_program_total_flops;
void polybench_timer_start(void);
void polybench_timer_stop(void);
void polybench_timer_print(void);
void *polybench_alloc_data(unsigned long long int n, int elt_size);
void polybench_free_data(void *ptr);
void polybench_flush_cache(void);

#endif
