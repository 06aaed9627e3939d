/* Runs polytune's CUDA output on the CPU, for tests on machines without a GPU: blocks run one after the
 * other; the threads of a block are coroutines (ucontext) run one at a time, switching at
 * __syncthreads() and at warp shuffles, so barriers and shared memory (a `static` array, one per
 * kernel) behave as on the GPU for race-free kernels. It checks the mapping, the bounds, the staging and
 * the host code, not the hardware. A barrier that some threads of a block skip is an error (exit 9).
 * The test rewrites `k<<<g, b>>>(args)` into `PT_EMU_LAUNCH(g, b, k, args)`. */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <ucontext.h>
#include <math.h> /* nvcc declares the math functions before any user code; so must the emulation */
struct dim3 {
  unsigned x, y, z;
  dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
static dim3 blockIdx, threadIdx, blockDim, gridDim;
#define __global__
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
#define __restrict__
#define __builtin_assume(x) ((void)0)
#define __shared__ static
typedef int cudaError_t;
enum { cudaSuccess = 0, cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost, cudaMemcpyDeviceToDevice };
static const char *cudaGetErrorString(cudaError_t) { return "emulated error"; }
static cudaError_t cudaMalloc(void **p, size_t n) { *p = malloc(n ? n : 1); return *p ? 0 : 2; }
static cudaError_t cudaMemcpy(void *d, const void *s, size_t n, int) { memcpy(d, s, n); return 0; }
static cudaError_t cudaFree(void *p) { free(p); return 0; }
static cudaError_t cudaGetLastError(void) { return 0; }
static cudaError_t cudaDeviceSynchronize(void) { return 0; }
enum { cudaErrorInvalidValue = 1, cudaErrorInvalidConfiguration = 9, cudaErrorLaunchOutOfResources = 7 };
/* events read the host clock: the emulation runs the kernels synchronously */
struct pt_emu_event { double t; };
typedef pt_emu_event *cudaEvent_t;
#include <time.h>
static cudaError_t cudaEventCreate(cudaEvent_t *e) { *e = new pt_emu_event(); return 0; }
static cudaError_t cudaEventRecord(cudaEvent_t e, int stream = 0)
{
  struct timespec t;
  (void)stream;
  clock_gettime(CLOCK_MONOTONIC, &t);
  e->t = t.tv_sec + 1e-9 * t.tv_nsec;
  return 0;
}
static cudaError_t cudaEventSynchronize(cudaEvent_t) { return 0; }
static cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b) { *ms = (float)((b->t - a->t) * 1e3); return 0; }
static long pt_emu_threads;

#define PT_EMU_STACK (64 * 1024)
static ucontext_t pt_emu_main, pt_emu_ctx[1024];
static char *pt_emu_stacks[1024];
static int pt_emu_state[1024]; /* 0 running, 1 at a barrier, 2 done */
static int pt_emu_current;
static std::function<void()> *pt_emu_body;
static double pt_emu_slot[1024];

static void pt_emu_entry(void)
{
  (*pt_emu_body)();
  pt_emu_state[pt_emu_current] = 2;
  swapcontext(&pt_emu_ctx[pt_emu_current], &pt_emu_main);
}
static void pt_emu_set_thread(int t)
{
  threadIdx.x = t % blockDim.x;
  threadIdx.y = (t / blockDim.x) % blockDim.y;
  threadIdx.z = t / (blockDim.x * blockDim.y);
}
static void __syncthreads(void)
{
  pt_emu_state[pt_emu_current] = 1;
  swapcontext(&pt_emu_ctx[pt_emu_current], &pt_emu_main);
}
/* every thread of the block must call the same shuffles (polytune's reductions do) */
template <typename T> static T __shfl_down_sync(unsigned, T v, unsigned delta, int width = 32)
{
  int t = pt_emu_current;
  pt_emu_slot[t] = (double)v;
  __syncthreads();
  int lane = t % width, src = t + (int)delta;
  T out = (lane + (int)delta < width && src < (int)(blockDim.x * blockDim.y * blockDim.z)) ? (T)pt_emu_slot[src] : v;
  __syncthreads();
  return out;
}
static void pt_emu_block(int n)
{
  for (int t = 0; t < n; t++) {
    if (!pt_emu_stacks[t]) pt_emu_stacks[t] = (char *)malloc(PT_EMU_STACK);
    getcontext(&pt_emu_ctx[t]);
    pt_emu_ctx[t].uc_stack.ss_sp = pt_emu_stacks[t];
    pt_emu_ctx[t].uc_stack.ss_size = PT_EMU_STACK;
    pt_emu_ctx[t].uc_link = &pt_emu_main;
    makecontext(&pt_emu_ctx[t], pt_emu_entry, 0);
    pt_emu_state[t] = 0;
  }
  for (;;) {
    int at_barrier = 0, done = 0;
    for (int t = 0; t < n; t++) {
      if (pt_emu_state[t] == 2) { done++; continue; }
      pt_emu_state[t] = 0;
      pt_emu_current = t;
      pt_emu_set_thread(t);
      pt_emu_threads++;
      swapcontext(&pt_emu_main, &pt_emu_ctx[t]);
      if (pt_emu_state[t] == 1) at_barrier++; else done++;
    }
    if (done == n) return;
    if (at_barrier != n) { fprintf(stderr, "emulation: a barrier that only some threads reach\n"); exit(9); }
  }
}
#define PT_EMU_LAUNCH(grid, block, kernel, ...)                                                   \
  do {                                                                                            \
    gridDim = (grid); blockDim = (block);                                                         \
    int pt_emu_n = (int)((long)blockDim.x * blockDim.y * blockDim.z);                             \
    if ((long)blockDim.x * blockDim.y * blockDim.z > 1024) { fprintf(stderr, "bad block\n"); exit(9); } \
    std::function<void()> pt_emu_f = [&]() { kernel(__VA_ARGS__); };                              \
    pt_emu_body = &pt_emu_f;                                                                      \
    for (blockIdx.z = 0; blockIdx.z < gridDim.z; blockIdx.z++)                                    \
      for (blockIdx.y = 0; blockIdx.y < gridDim.y; blockIdx.y++)                                  \
        for (blockIdx.x = 0; blockIdx.x < gridDim.x; blockIdx.x++)                                \
          pt_emu_block(pt_emu_n);                                                                 \
  } while (0)
