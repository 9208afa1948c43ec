// Just enough of CUDA to run the shipped kernels on the CPU, for tests without a GPU: a block
// is run as blockDim std::threads (all of them at once, so that __syncthreads and warp
// shuffles are real barriers), the blocks of a grid one after another. Shared memory is a
// function-local static (one block runs at a time), dynamic shared memory a buffer per block,
// atomics are std::atomic_ref, cp.async copies are done at the wait (see the end). It checks
// the kernels' index arithmetic, bounds and synchronisation logic, not their speed; it cannot
// find a race between blocks.
#pragma once

#include <atomic>
#include <barrier>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

struct tt_uint3 {
  unsigned int x = 0, y = 0, z = 0;
};
struct dim3 {
  unsigned int x = 1, y = 1, z = 1;
};

struct alignas(8) float2 {
  float x, y;
};
struct alignas(16) float4 {
  float x, y, z, w;
};
struct alignas(16) uint4 {
  unsigned int x, y, z, w;
};
inline float2 make_float2(float x, float y) { return {x, y}; }
inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return {x, y, z, w}; }

inline thread_local tt_uint3 threadIdx;
inline thread_local tt_uint3 blockIdx;
inline thread_local dim3 blockDim;
inline thread_local dim3 gridDim;

namespace tt_emu {

struct Warp {
  explicit Warp(std::ptrdiff_t lanes) : barrier(lanes) {}
  std::barrier<> barrier;
  float values[32] = {};
};

struct Block {
  std::unique_ptr<std::barrier<>> barrier;
  std::vector<std::unique_ptr<Warp>> warps;
  std::vector<float4> dynamic_shared;  // 16-byte aligned
};

inline thread_local Block* current_block = nullptr;

// cp.async copies of this thread not yet waited for.
struct AsyncCopy {
  void* dst;
  const void* src;
  int size;   // bytes written to dst
  int bytes;  // of which read from src; the rest are zeros
};
inline thread_local std::vector<AsyncCopy> async_copies;

inline unsigned linear_thread() { return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); }

// Runs body() as the kernel over grid x block, with `shared_bytes` of dynamic shared memory.
template <class Body>
void launch(dim3 grid, dim3 block, std::size_t shared_bytes, Body body) {
  const unsigned threads = block.x * block.y * block.z;
  for (unsigned bz = 0; bz < grid.z; ++bz)
    for (unsigned by = 0; by < grid.y; ++by)
      for (unsigned bx = 0; bx < grid.x; ++bx) {
        Block b;
        b.barrier = std::make_unique<std::barrier<>>(threads);
        for (unsigned w = 0; w < (threads + 31) / 32; ++w)
          b.warps.push_back(std::make_unique<Warp>(std::min(32u, threads - 32 * w)));
        b.dynamic_shared.resize((shared_bytes + 15) / 16 + 1);
        std::vector<std::thread> pool;
        pool.reserve(threads);
        for (unsigned t = 0; t < threads; ++t) {
          pool.emplace_back([&, t] {
            current_block = &b;
            blockDim = block;
            gridDim = grid;
            blockIdx = {bx, by, bz};
            threadIdx = {t % block.x, (t / block.x) % block.y, t / (block.x * block.y)};
            body();
            if (!async_copies.empty()) {
              std::fprintf(stderr, "cuda_shim: a thread ended with cp.async copies in flight\n");
              std::abort();
            }
          });
        }
        for (auto& th : pool) th.join();
      }
}

}  // namespace tt_emu

#define __global__
#define __device__
#define __constant__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#define TT_DYNAMIC_SHARED(type, name) type* name = reinterpret_cast<type*>(tt_emu::current_block->dynamic_shared.data())

inline void __syncthreads() { tt_emu::current_block->barrier->arrive_and_wait(); }
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }

inline float __shfl_down_sync(unsigned /*mask*/, float v, int delta) {
  const unsigned lane = tt_emu::linear_thread() % 32;
  tt_emu::Warp& w = *tt_emu::current_block->warps[tt_emu::linear_thread() / 32];
  w.values[lane] = v;
  w.barrier.arrive_and_wait();
  const float r = lane + static_cast<unsigned>(delta) < 32 ? w.values[lane + delta] : v;
  w.barrier.arrive_and_wait();
  return r;
}

// The sub-warp form: lanes shuffle within groups of `width` (a power of two up to 32).
inline float __shfl_down_sync(unsigned /*mask*/, float v, int delta, int width) {
  const unsigned lane = tt_emu::linear_thread() % 32;
  tt_emu::Warp& w = *tt_emu::current_block->warps[tt_emu::linear_thread() / 32];
  w.values[lane] = v;
  w.barrier.arrive_and_wait();
  const unsigned group_end = (lane / static_cast<unsigned>(width) + 1) * static_cast<unsigned>(width);
  const float r = lane + static_cast<unsigned>(delta) < group_end ? w.values[lane + delta] : v;
  w.barrier.arrive_and_wait();
  return r;
}

// A load through the read-only data cache: a plain load on the CPU.
template <class T>
inline T __ldg(const T* p) {
  return *p;
}

// The device's integer min and max.
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }

template <class T>
inline T atomicAdd(T* p, T v) {
  return std::atomic_ref<T>(*p).fetch_add(v);
}
template <class T>
inline T atomicExch(T* p, T v) {
  return std::atomic_ref<T>(*p).exchange(v);
}

// cp.async (sm_80+), as the kernels wrap it: tt_cp_async16/4(dst, src, bytes) copies 16 (4)
// bytes into shared memory, the first `bytes` from src and zeros after them, asynchronously;
// tt_cp_async_wait_all waits for the thread's copies. Here the copies are done at the wait,
// the latest a GPU may do them, so that a read before the wait sees stale data. A kernel
// compiled with TT_EMU_NO_CP_ASYNC sees no cp.async (its path for older GPUs).
#ifndef TT_EMU_NO_CP_ASYNC
#define TT_EMULATED_CP_ASYNC 1
inline void tt_cp_async16(float* dst, const float* src, int bytes) {
  tt_emu::async_copies.push_back({dst, src, 16, bytes});
}
inline void tt_cp_async4(float* dst, const float* src, int bytes) {
  tt_emu::async_copies.push_back({dst, src, 4, bytes});
}
inline void tt_cp_async_wait_all() {
  for (const tt_emu::AsyncCopy& c : tt_emu::async_copies) {
    std::memcpy(c.dst, c.src, static_cast<std::size_t>(c.bytes));
    std::memset(static_cast<char*>(c.dst) + c.bytes, 0, static_cast<std::size_t>(c.size - c.bytes));
  }
  tt_emu::async_copies.clear();
}
#endif
