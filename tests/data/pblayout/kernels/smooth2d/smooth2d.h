/* smooth2d.h -- sizes and data type of polytune's PolyBench-layout test kernel smooth2d. */
#ifndef _SMOOTH2D_H
#define _SMOOTH2D_H
#if !defined(MINI_DATASET) && !defined(SMALL_DATASET) && !defined(MEDIUM_DATASET) && !defined(LARGE_DATASET)
#define SMALL_DATASET
#endif
#if !defined(TSTEPS) && !defined(N)
#ifdef MINI_DATASET
#define TSTEPS 4
#define N 18
#endif
#ifdef SMALL_DATASET
#define TSTEPS 10
#define N 54
#endif
#ifdef MEDIUM_DATASET
#define TSTEPS 50
#define N 250
#endif
#ifdef LARGE_DATASET
#define TSTEPS 200
#define N 1300
#endif
#endif
#define _PB_TSTEPS POLYBENCH_LOOP_BOUND(TSTEPS, tsteps)
#define _PB_N POLYBENCH_LOOP_BOUND(N, n)
#ifndef DATA_TYPE
#define DATA_TYPE double
#define DATA_PRINTF_MODIFIER "%0.6lf "
#define SCALAR_VAL(x) x
#endif
#endif
