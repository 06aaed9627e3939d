/* Runs polytune's CUDA output on the CPU, for tests on machines without a GPU: kernels execute block by
 * block and thread by thread, sequentially (enough for race-free kernels; it checks the mapping, the
 * bounds and the host code, not the hardware). The test rewrites `k<<<g, b>>>(args)` into
 * `PT_EMU_LAUNCH(g, b, k, args)`. */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <math.h> /* nvcc declares the math functions before any user code; so must the emulation */
struct dim3 {
  unsigned x, y, z;
  dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
static dim3 blockIdx, threadIdx, blockDim, gridDim;
#define __global__
#define __launch_bounds__(n)
#define __restrict__
typedef int cudaError_t;
enum { cudaSuccess = 0, cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost, cudaMemcpyDeviceToDevice };
static const char *cudaGetErrorString(cudaError_t) { return "emulated error"; }
static cudaError_t cudaMalloc(void **p, size_t n) { *p = malloc(n ? n : 1); return *p ? 0 : 2; }
static cudaError_t cudaMemcpy(void *d, const void *s, size_t n, int) { memcpy(d, s, n); return 0; }
static cudaError_t cudaFree(void *p) { free(p); return 0; }
static cudaError_t cudaGetLastError(void) { return 0; }
static cudaError_t cudaDeviceSynchronize(void) { return 0; }
static long pt_emu_threads;
#define PT_EMU_LAUNCH(grid, block, kernel, ...)                                                   \
  do {                                                                                            \
    gridDim = (grid); blockDim = (block);                                                         \
    if ((long)blockDim.x * blockDim.y * blockDim.z > 1024) { fprintf(stderr, "bad block\n"); exit(9); } \
    for (blockIdx.z = 0; blockIdx.z < gridDim.z; blockIdx.z++)                                    \
      for (blockIdx.y = 0; blockIdx.y < gridDim.y; blockIdx.y++)                                  \
        for (blockIdx.x = 0; blockIdx.x < gridDim.x; blockIdx.x++)                                \
          for (threadIdx.z = 0; threadIdx.z < blockDim.z; threadIdx.z++)                          \
            for (threadIdx.y = 0; threadIdx.y < blockDim.y; threadIdx.y++)                        \
              for (threadIdx.x = 0; threadIdx.x < blockDim.x; threadIdx.x++) {                    \
                pt_emu_threads++;                                                                 \
                kernel(__VA_ARGS__);                                                              \
              }                                                                                   \
  } while (0)
