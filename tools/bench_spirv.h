// The bench's small program (saxpy) as a SPIR-V module, for the IL build figures.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace manifold_tool {

// `kernel void saxpy(global float* y, global const float* x, float a)`: y[i] = a * x[i] + y[i],
// the same kernel as the OpenCL C build figures. `nonce` goes into the header's generator word,
// so that each nonce is a different module to every program cache.
std::vector<uint32_t> saxpy_spirv_module(const std::string& nonce);

}  // namespace manifold_tool
