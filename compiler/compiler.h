// Manifold's OpenCL C compiler: source -> LLVM IR (clang in-process) -> per-target binaries
// (compiler/target_pipeline.h), and the vocabulary the runtime and the backends share with it:
// kernels, targets, binaries, NDRanges. No backend runtime lives here: the host CPU's executor
// is backends/cpu/cpu_executable.h.
//
// Thread safety: every free function may be called from several threads at once.
#pragma once

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#include <CL/cl.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "compiler/footprint.h"

namespace manifold::compiler {

enum class ArgKind {
  Buffer,  // __global or __constant pointer
  Local,   // __local pointer: the runtime passes only a size
  Value,   // by value, including structs and vectors
  Sampler,
  Image,
};

struct KernelArg {
  ArgKind kind = ArgKind::Value;
  // Bytes of the value as set by clSetKernelArg: pointer size for buffers and local pointers.
  size_t size = 0;
  cl_kernel_arg_address_qualifier address = CL_KERNEL_ARG_ADDRESS_PRIVATE;
  cl_kernel_arg_access_qualifier access = CL_KERNEL_ARG_ACCESS_NONE;
  cl_kernel_arg_type_qualifier type_qualifier = CL_KERNEL_ARG_TYPE_NONE;
  std::string type_name;  // e.g. "float4*", "uint", "struct Foo"
  std::string name;       // parameter name as written in the source
};

struct KernelInfo {
  std::string name;
  std::vector<KernelArg> args;
  size_t reqd_work_group_size[3] = {0, 0, 0};  // all zero: not specified
  size_t work_group_size_hint[3] = {0, 0, 0};  // all zero: not specified
  std::string vec_type_hint;                   // e.g. "float4"; empty: not specified
  std::string attributes;                      // CL_KERNEL_ATTRIBUTES string
  uint64_t local_mem_size = 0;                 // static __local variables of the kernel
  uint64_t private_mem_size = 0;               // per work-item stack estimate
  // Work-items a group of this kernel may have on its device, when lower than the device's
  // limit (a GPU kernel's registers can allow fewer); 0: the device's limit applies.
  size_t max_work_group_size = 0;
  // False when the program was not compiled with -cl-kernel-arg-info: clGetKernelArgInfo then
  // answers CL_KERNEL_ARG_INFO_NOT_AVAILABLE. kind and size are always valid.
  bool arg_info_available = false;
  // What ranges of work-groups read and write in each buffer argument (device groups).
  KernelFootprint footprint;
};

// What one device supports; the compiler defines exactly these feature macros and extensions.
struct Target {
  std::string triple;                          // e.g. "x86_64-pc-linux-gnu"
  std::string cpu;                             // e.g. "znver4"; empty: generic
  std::string features;                        // e.g. "+avx2,+fma"
  unsigned opencl_c_version = 300;             // highest OpenCL C the device accepts
  unsigned opencl_version = 300;               // CL_DEVICE_VERSION's, as __OPENCL_VERSION__
  std::vector<std::string> opencl_c_features;  // __opencl_c_* macros to define
  std::vector<std::string> extensions;         // cl_khr_* etc. to enable
  bool fp64 = true;
  bool fp16 = false;
  bool images = false;
  // Work-items per sub-group where the target reports sub-groups (__opencl_c_subgroups): the
  // CPU's vector of work-items, a warp on NVIDIA GPUs.
  unsigned sub_group_size = 0;
  // Programs from SPIR-V (compiler/spirv/) build for this target: the device reports SPIR-V
  // 1.0 to 1.2 and cl_khr_il_program.
  bool spirv = false;

  bool has_feature(std::string_view feature) const {
    for (const std::string& f : opencl_c_features)
      if (f == feature) return true;
    return false;
  }
};

// The host CPU as the CPU device sees it: host triple, CPU name and features, the
// __opencl_c_* features and extensions Manifold's CPU pipeline implements.
Target host_cpu_target();

// An NVIDIA GPU of compute capability major.minor (CUDA devices): triple nvptx64-nvidia-cuda,
// cpu sm_XY, the PTX version it needs, the OpenCL C features the NVPTX pipeline implements.
// Programs built for it carry PTX (compiler/nvptx_pipeline.cpp).
Target nvptx_target(unsigned major, unsigned minor);
// The PTX text of an NVPTX executable binary; nullopt (with *error) for anything else.
std::optional<std::string> nvptx_ptx_of(std::span<const uint8_t> binary, std::string* error);

// An AMD GPU named as HIP's gcnArchName does ("gfx90a", "gfx90a:sramecc+:xnack-"): triple
// amdgcn-amd-amdhsa, cpu gfx90a, features from the name plus the wavefront size (wave32 on
// gfx10 and later), the OpenCL C features the AMDGPU pipeline implements. Programs built for it
// carry a code object v5 (compiler/amdgpu_pipeline.cpp; launch ABI: compiler/gpu_launch_abi.h).
// nullopt for a processor LLVM does not know or a feature other than xnack and sramecc.
std::optional<Target> amdgpu_target(std::string_view gcn_arch_name);
// The code object (ELF) of an AMDGPU executable binary, what hipModuleLoadData takes; nullopt
// (with *error) for anything else.
std::optional<std::vector<uint8_t>> amdgpu_code_object_of(std::span<const uint8_t> binary,
                                                          std::string* error);

// Offline compilation (`manifold compile`): a target by name: "x86-64" (this host's CPU),
// "sm_XY", "gfxNNN[:feature±...]" (compiler/target_names.cpp, one table entry per kind of
// target). nullopt with the reason in *why for a name no entry takes.
std::optional<Target> target_named(std::string_view name, std::string* why);
// The forms of names target_named takes, each with what it names (for usage texts).
std::vector<std::pair<std::string, std::string>> target_name_forms();
// What a device loads from an executable binary: an AMDGPU code object, PTX text, or the CPU's
// relocatable object. nullopt (with *error) for anything else.
std::optional<std::vector<uint8_t>> native_code_of(std::span<const uint8_t> binary,
                                                   std::string* error);

// What a Level Zero device supports beyond the core of OpenCL C (its module properties).
struct SpirvDeviceFeatures {
  bool fp16 = false;
  bool fp64 = false;
  bool int64_atomics = false;
};
// A Level Zero device: triple spirv64v1.2, the OpenCL C features the SPIR-V pipeline
// implements and those of `device`. Programs built for it carry SPIR-V
// (compiler/spirv_pipeline.cpp).
Target spirv_target(const SpirvDeviceFeatures& device);
// The SPIR-V module of a SPIR-V executable binary; nullopt (with *error) for anything else.
std::optional<std::vector<uint8_t>> spirv_module_of(std::span<const uint8_t> binary,
                                                    std::string* error);

// What clGetProgramInfo(CL_PROGRAM_BINARY_TYPE) reports for a binary.
enum class BinaryType { None, CompiledObject, Library, Executable };

// How long each step of one build took (milliseconds, in order), for MANIFOLD_DEBUG.
using StageTimes = std::vector<std::pair<std::string, double>>;

struct BuildOutput {
  bool success = false;
  std::string log;              // clang diagnostics and compiler messages, as the build log
  std::vector<uint8_t> binary;  // self-describing: round-trips through clCreateProgramWithBinary
  std::vector<KernelInfo> kernels;
  BinaryType type = BinaryType::None;
  bool from_cache = false;  // served by the on-disk program cache (compiler/program_cache.h)
  StageTimes stage_times;
};

// clBuildProgram: compile and link into an executable. Successful builds are cached on disk
// (MANIFOLD_CACHE_DIR, see compiler/program_cache.h).
BuildOutput build(std::string_view source, std::string_view options, const Target&);
// clCompileProgram: compile only (an object; "-create-library" is a link option, not this).
// headers are (include name, source) pairs, found by #include "name".
BuildOutput compile(std::string_view source, std::string_view options,
                    const std::vector<std::pair<std::string, std::string>>& headers, const Target&);
// clLinkProgram: objects and libraries in; "-create-library" gives a library, else an
// executable (then every called function must be defined).
BuildOutput link(const std::vector<std::span<const uint8_t>>& objects, std::string_view options,
                 const Target&);

// ---- SPIR-V (clCreateProgramWithIL, compiler/spirv/) ----

// Whether `il` is well-formed SPIR-V of a version the reader takes (1.0 to 1.4): a header and
// whole instructions. SPIRV-Tools validates it for the OpenCL environment of that version when it
// is first built (the build log says what is invalid). False with the reason.
bool il_valid(std::span<const uint8_t> il, std::string* why);
// Values given with clSetProgramSpecializationConstant: SpecId -> the value's bytes.
using SpecConstantValues = std::map<uint32_t, std::vector<uint8_t>>;
// The specialization constants of a valid module: SpecId -> the size of its type in bytes.
std::map<uint32_t, size_t> il_spec_constants(std::span<const uint8_t> il);
// clBuildProgram and clCompileProgram of a program from IL; cached like builds from source,
// keyed by the IL's hash and the specialization values.
BuildOutput build_il(std::span<const uint8_t> il, std::string_view options, const Target& target,
                     const SpecConstantValues& spec_values);
BuildOutput compile_il(std::span<const uint8_t> il, std::string_view options, const Target& target,
                       const SpecConstantValues& spec_values);

// Detects CL_INVALID_BUILD_OPTIONS / CL_INVALID_COMPILER_OPTIONS / CL_INVALID_LINKER_OPTIONS.
// The two-argument form accepts any option valid for some call; the OptionsKind form checks
// exactly what that call accepts (clLinkProgram: only link options; clBuildProgram and
// clCompileProgram: compile options, -create-library is link-only).
enum class OptionsKind { Build, Compile, Link };
bool options_valid(std::string_view options, std::string* why);
bool options_valid(std::string_view options, OptionsKind kind, std::string* why);

// Reads a binary's header without JIT-compiling it (clCreateProgramWithBinary): its type,
// kernels and the options it was built with. nullopt (with *error) when corrupt or foreign.
struct BinaryInfo {
  BinaryType type = BinaryType::None;
  std::vector<KernelInfo> kernels;
  std::string options;
  std::string triple;
};
std::optional<BinaryInfo> inspect_binary(std::span<const uint8_t> binary, std::string* error);
// CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE: the bytes of the program-scope variables in the
// global address space of an executable binary (0 for anything else).
size_t global_variables_size(std::span<const uint8_t> binary);

// ---- Kernel launches ----

// The index space of one kernel launch. A launch runs the work-groups [group_first[d],
// group_first[d] + group_count[d]) of each dimension d (group_count 0: every group from
// group_first on), so that one NDRange can be split over several launches or devices. The
// work-item functions answer for the whole NDRange in every launch: get_group_id,
// get_global_id, get_num_groups and get_global_size are those of the unsplit NDRange.
struct NDRange {
  unsigned work_dim = 1;
  size_t global_offset[3] = {0, 0, 0};
  size_t global_size[3] = {1, 1, 1};
  size_t local_size[3] = {1, 1, 1};  // enqueued local size; the last group may be smaller
  size_t group_first[3] = {0, 0, 0};
  size_t group_count[3] = {0, 0, 0};

  // Work-groups of the whole NDRange in dimension d (1 beyond work_dim).
  size_t num_groups(unsigned d) const {
    if (d >= work_dim) return 1;
    const size_t local = local_size[d] ? local_size[d] : 1;
    return (global_size[d] + local - 1) / local;
  }
  // The first group this launch runs in dimension d, and one past its last.
  size_t launch_first(unsigned d) const {
    if (d >= work_dim) return 0;
    return group_first[d] < num_groups(d) ? group_first[d] : num_groups(d);
  }
  size_t launch_end(unsigned d) const {
    const size_t first = launch_first(d), all = num_groups(d);
    if (d >= work_dim || group_count[d] == 0 || group_count[d] > all - first) return all;
    return first + group_count[d];
  }
  // Whether this launch runs every group of the NDRange.
  bool whole() const {
    if (!(group_first[0] | group_first[1] | group_first[2] | group_count[0] | group_count[1] |
          group_count[2]))
      return true;  // the usual launch, decided without a division
    for (unsigned d = 0; d < 3; ++d)
      if (launch_first(d) != 0 || launch_end(d) != num_groups(d)) return false;
    return true;
  }
};

}  // namespace manifold::compiler
