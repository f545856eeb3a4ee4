// Shapes of the compute kernels of `manifold bench` and their plain C++ results, shared by the
// OpenCL worker (which checks a device's output against them) and the host reference (which runs
// the same work in C++ on every thread).
#pragma once

#include <cstddef>
#include <cstdint>

namespace manifold_tool {

inline constexpr unsigned kMadIterations = 64;  // of 8 multiply-add chains per work-item
inline constexpr size_t kMadLanes = size_t{1} << 20;
inline constexpr size_t kLoopItems = 4096;  // work-groups of one uint16 item in the loop
inline constexpr unsigned kLoopLanesPerItem = 16;
inline constexpr unsigned kLoopIterations = 4096;

// Lane `x0`'s result of the mad kernels: eight chains x = x * a + b started at x0 + c.
template <typename T>
T mad_chains(T x0, T a, T b) {
  T sum[8];
  for (int c = 0; c < 8; ++c) {
    T x = x0 + T(c);
    for (unsigned i = 0; i < kMadIterations; ++i) x = x * a + b;
    sum[c] = x;
  }
  return ((sum[0] + sum[1]) + (sum[2] + sum[3])) + ((sum[4] + sum[5]) + (sum[6] + sum[7]));
}

// Lane `lane`'s result of the uint16 add/xor loop.
inline uint32_t loop_lane(uint32_t lane) {
  uint32_t x = lane, y = x * 3u + 1u, z = x ^ 0x5bd1e995u;
  for (unsigned i = 0; i < kLoopIterations; ++i) {
    x += y;
    y ^= z;
    z += x;
  }
  return x ^ y ^ z;
}

}  // namespace manifold_tool
