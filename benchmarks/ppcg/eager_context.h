/* Force-included (nvcc -include) into PPCG's host file by run.py's "eager context" build: the CUDA context is
   created when the program starts, by a static initializer, instead of at the first CUDA call inside the timed
   region, so that the region's time leaves out that one-time cost (as benchmarks/cuda_mappings.py does for
   polytune's output). PPCG's code itself is unchanged. */
#include <cuda_runtime.h>
static const int ppcg_bench_eager_context = (cudaFree(0), 0);
