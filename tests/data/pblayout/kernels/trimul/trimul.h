/* trimul.h -- sizes and data type of polytune's PolyBench-layout test kernel trimul. */
#ifndef _TRIMUL_H
#define _TRIMUL_H
#if !defined(MINI_DATASET) && !defined(SMALL_DATASET) && !defined(MEDIUM_DATASET) && !defined(LARGE_DATASET)
#define SMALL_DATASET
#endif
#if !defined(N)
#ifdef MINI_DATASET
#define N 21
#endif
#ifdef SMALL_DATASET
#define N 67
#endif
#ifdef MEDIUM_DATASET
#define N 300
#endif
#ifdef LARGE_DATASET
#define N 1500
#endif
#endif
#define _PB_N POLYBENCH_LOOP_BOUND(N, n)
#ifndef DATA_TYPE
#define DATA_TYPE double
#define DATA_PRINTF_MODIFIER "%0.6lf "
#define SCALAR_VAL(x) x
#endif
#endif
