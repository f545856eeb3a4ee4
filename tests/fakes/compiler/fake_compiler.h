// A test double of compiler/compiler.h and backends/cpu/cpu_executable.h for testing the API
// layer without LLVM: it reads the signatures of OpenCL C kernels (not their bodies) and runs
// each kernel through a C++ implementation the test registers under the kernel's name.
// Binaries are self-describing text, so they round-trip through
// clGetProgramInfo(CL_PROGRAM_BINARIES) and clCreateProgramWithBinary.
//
// Source conventions it understands: `__kernel`/`kernel` functions with
// `__attribute__((reqd_work_group_size(X, Y, Z)))`, parameters in the __global, __constant
// and __local address spaces, sampler_t, image types, and scalar/vector value types.
// A source containing `badcodehere` fails to compile (the build log names it); a `#include
// "name"` needs an embedded header of that name.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "backends/cpu/cpu_executable.h"
#include "compiler/compiler.h"

namespace manifold::fake_compiler {

// One launch of a kernel (the runtime's arguments as CpuExecutable::run gets them): it runs the
// work-items of the groups the NDRange selects, [launch_first(d), launch_end(d)) per
// dimension, and only those.
using KernelBody = std::function<void(const compiler::NDRange&, const void* const* arg_values,
                                      const size_t* local_sizes)>;

// Registers the implementation of kernel `name` (replaces an earlier one).
void define_kernel(const std::string& name, KernelBody body);
void clear_kernels();

}  // namespace manifold::fake_compiler
