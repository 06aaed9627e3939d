/* Force-included (nvcc -include) by run.py's "events" build, whose copy of PPCG's host file calls
   ppcg_bench_start() before its first kernel launch and ppcg_bench_stop() after its last one (inside
   PPCG's loops, when the launches are: the first call records the start, every call records the end).
   At exit, the milliseconds between the two events go to stderr as "ppcg-kernel-ms:". */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
static cudaEvent_t ppcg_bench_e0, ppcg_bench_e1;
static int ppcg_bench_started;
static void ppcg_bench_report(void)
{
  float ms = 0;
  cudaEventSynchronize(ppcg_bench_e1);
  if (cudaEventElapsedTime(&ms, ppcg_bench_e0, ppcg_bench_e1) == cudaSuccess)
    fprintf(stderr, "ppcg-kernel-ms: %.6f\n", ms);
}
static void ppcg_bench_start(void)
{
  if (ppcg_bench_started++)
    return;
  cudaEventCreate(&ppcg_bench_e0);
  cudaEventCreate(&ppcg_bench_e1);
  cudaEventRecord(ppcg_bench_e0);
  atexit(ppcg_bench_report);
}
static void ppcg_bench_stop(void)
{
  cudaEventRecord(ppcg_bench_e1);
}
