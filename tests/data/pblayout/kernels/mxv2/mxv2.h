/* mxv2.h -- sizes and data type of polytune's PolyBench-layout test kernel mxv2. */
#ifndef _MXV2_H
#define _MXV2_H
#if !defined(MINI_DATASET) && !defined(SMALL_DATASET) && !defined(MEDIUM_DATASET) && !defined(LARGE_DATASET)
#define SMALL_DATASET
#endif
#if !defined(N) && !defined(M)
#ifdef MINI_DATASET
#define M 19
#define N 23
#endif
#ifdef SMALL_DATASET
#define M 61
#define N 73
#endif
#ifdef MEDIUM_DATASET
#define M 390
#define N 410
#endif
#ifdef LARGE_DATASET
#define M 1900
#define N 2100
#endif
#endif
#define _PB_M POLYBENCH_LOOP_BOUND(M, m)
#define _PB_N POLYBENCH_LOOP_BOUND(N, n)
#ifndef DATA_TYPE
#define DATA_TYPE double
#define DATA_PRINTF_MODIFIER "%0.6lf "
#define SCALAR_VAL(x) x
#endif
#endif
