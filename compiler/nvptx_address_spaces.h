// NVPTX's address spaces and the passes of the NVPTX pipeline (compiler/nvptx_pipeline.cpp) that
// move pointers and data between them.
#pragma once

#include <string>

namespace llvm {
class Function;
class Module;
}  // namespace llvm

namespace manifold::compiler {

inline constexpr unsigned kGlobalAS = 1, kSharedAS = 3, kConstantAS = 4;

// NVPTX's __constant space (4) is the constant bank, read with ld.const: fine for program-scope
// __constant tables, wrong for a buffer the host allocated. A kernel's __constant pointer
// arguments are therefore retyped to global (1), following the pointer through the kernel.
bool retype_constant_arguments(llvm::Function& kernel, std::string* log);

// Program-scope __constant data (the program's, and the shim's launch state) moves to the global
// address space (__device__, not __constant__, in CUDA terms): the driver binds a module's
// constant bank at every launch of its kernels, which costs each launch GPU time, while global
// data costs nothing until read. The reads stay cached: invariant loads become ld.global.nc.
// Data used otherwise than by loads (copied whole, its address escaping) stays constant.
void move_constants_to_global_memory(llvm::Module& module);

// The work-group collectives' __local scratch (compiler/nvptx/collectives.cl): one static shared
// array per module, next to the launch's dynamic block, that the library's calls of
// __manifold_collective_scratch() address.
void define_collective_scratch(llvm::Module& module);

}  // namespace manifold::compiler
