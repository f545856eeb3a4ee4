// The SPIR-V pipeline (Level Zero devices) over every OpenCL C kernel of the test corpora: each
// module it emits is valid SPIR-V for OpenCL's environment (checked here again with SPIRV-Tools,
// independently of the pipeline's own check) and declares only the capabilities the Level Zero
// spec lists for OpenCL kernels, the optional ones only where the device reports them.
#include <gtest/gtest.h>
#include <spirv-tools/libspirv.h>
#include <spirv/unified1/spirv.hpp>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "compiler/compiler.h"
#include "compiler/spirv_capabilities.h"

namespace {

using namespace manifold::compiler;

// Raw string literals of `path` that hold a kernel.
std::vector<std::string> kernel_sources(const std::string& path) {
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  std::vector<std::string> out;
  size_t at = 0;
  while ((at = text.find("R\"", at)) != std::string::npos) {
    const size_t open = text.find('(', at);
    if (open == std::string::npos) break;
    const std::string delimiter = text.substr(at + 2, open - at - 2);
    if (delimiter.size() > 16 || delimiter.find_first_of(" \n\"") != std::string::npos) {
      at += 2;
      continue;
    }
    const std::string close = ")" + delimiter + "\"";
    const size_t end = text.find(close, open);
    if (end == std::string::npos) break;
    std::string body = text.substr(open + 1, end - open - 1);
    if (body.find("kernel void") != std::string::npos) out.push_back(std::move(body));
    at = end + close.size();
  }
  return out;
}

std::vector<uint32_t> words(const std::vector<uint8_t>& bytes) {
  std::vector<uint32_t> w(bytes.size() / 4);
  std::copy(bytes.begin(), bytes.begin() + w.size() * 4, reinterpret_cast<uint8_t*>(w.data()));
  return w;
}

// SPIRV-Tools' verdict for `env`; empty when valid.
std::string validate(const std::vector<uint32_t>& module, spv_target_env env) {
  spv_context context = spvContextCreate(env);
  spv_const_binary_t binary{module.data(), module.size()};
  spv_diagnostic diagnostic = nullptr;
  const spv_result_t result = spvValidate(context, &binary, &diagnostic);
  std::string why;
  if (result != SPV_SUCCESS) why = diagnostic ? diagnostic->error : "invalid";
  spvDiagnosticDestroy(diagnostic);
  spvContextDestroy(context);
  return why;
}

std::set<uint32_t> declared_capabilities(const std::vector<uint32_t>& module) {
  std::set<uint32_t> out;
  for (size_t i = 5; i < module.size();) {
    const uint32_t count = module[i] >> 16, opcode = module[i] & 0xffff;
    if (count == 0) break;
    if (opcode == spv::OpCapability && count >= 2) out.insert(module[i + 1]);
    i += count;
  }
  return out;
}

struct Corpus {
  const char* file;
  size_t at_least;  // kernels the file holds, so that a broken extraction fails the test
};

class SpirvCorpus : public ::testing::TestWithParam<Corpus> {};

TEST_P(SpirvCorpus, EveryModuleIsValidAndDeclaresOnlyAllowedCapabilities) {
  const std::string path = std::string(MANIFOLD_SOURCE_DIR) + "/" + GetParam().file;
  const std::vector<std::string> sources = kernel_sources(path);
  ASSERT_GE(sources.size(), GetParam().at_least) << path;
  // A device without the optional features, and one with them all.
  for (const SpirvDeviceFeatures features :
       {SpirvDeviceFeatures{}, SpirvDeviceFeatures{true, true, true}}) {
    const Target target = spirv_target(features);
    const std::vector<uint32_t> allowed = allowed_spirv_capabilities(target);
    size_t built = 0;
    for (const std::string& source : sources) {
      SCOPED_TRACE(source.substr(0, 200));
      const BuildOutput out = build(source, "", target);
      if (!out.success) {
        // Only the frontend may refuse a kernel: it needs an OpenCL C feature this device
        // lacks (doubles without fp64, OpenCL 2.0 atomics...). Every kernel the frontend
        // accepts must become valid SPIR-V.
        const bool frontend_refused = out.log.find("input.cl:") != std::string::npos &&
                                      out.log.find("error:") != std::string::npos;
        // OpenCL C 1.x has no feature for images: clang accepts them there, and the capability
        // check refuses the module (these devices report no images).
        const bool images_refused =
            out.log.find("declares capability ImageBasic") != std::string::npos;
        EXPECT_TRUE(frontend_refused || images_refused) << out.log;
        if (!images_refused) {
          EXPECT_EQ(out.log.find("SPIR-V for the device"), std::string::npos) << out.log;
        }
        continue;
      }
      ++built;
      std::string error;
      const std::optional<std::vector<uint8_t>> module = spirv_module_of(out.binary, &error);
      ASSERT_TRUE(module) << error;
      const std::vector<uint32_t> w = words(*module);
      ASSERT_GE(w.size(), 5u);
      EXPECT_EQ(w[1], 0x00010200u) << "SPIR-V 1.2";
      // SPIRV-Tools' OpenCL environment refuses the capabilities OpenCL ties to extensions
      // (cl_khr_fp16, cl_khr_int64_base_atomics): those modules follow SPIR-V's own rules.
      const std::set<uint32_t> declared = declared_capabilities(w);
      const bool extension_capabilities =
          declared.count(spv::CapabilityFloat16) || declared.count(spv::CapabilityInt64Atomics);
      EXPECT_EQ(validate(w, extension_capabilities ? SPV_ENV_UNIVERSAL_1_2 : SPV_ENV_OPENCL_2_2),
                "");
      for (uint32_t capability : declared)
        EXPECT_NE(std::find(allowed.begin(), allowed.end(), capability), allowed.end())
            << "capability " << capability;
      EXPECT_TRUE(check_emitted_spirv(*module, target, &error)) << error;
    }
    EXPECT_GE(built, 1u);
  }
}

INSTANTIATE_TEST_SUITE_P(Corpora, SpirvCorpus,
                         ::testing::Values(Corpus{"tests/kernels/kernel_corpus_test.cpp", 9},
                                           Corpus{"tests/spirv/corpus.inc", 12},
                                           Corpus{"tests/backends/gpu_driver/cuda_e2e_test.cpp", 5},
                                           Corpus{"tests/compiler/nvptx_compile_test.cpp", 10}));

// The capability check itself refuses what the device does not report.
TEST(SpirvCapabilities, Float64OnlyWhereTheDeviceHasIt) {
  const char* source = R"CL(
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
kernel void twice(global double* d) { d[get_global_id(0)] *= 2.0; })CL";
  const BuildOutput with = build(source, "", spirv_target({false, true, false}));
  ASSERT_TRUE(with.success) << with.log;
  std::string error;
  const auto module = spirv_module_of(with.binary, &error);
  ASSERT_TRUE(module);
  EXPECT_TRUE(declared_capabilities(words(*module)).count(spv::CapabilityFloat64));
  EXPECT_FALSE(check_emitted_spirv(*module, spirv_target({}), &error));
  EXPECT_NE(error.find("Float64"), std::string::npos) << error;
  // Without fp64 the frontend refuses double before any SPIR-V exists.
  const BuildOutput without = build(source, "", spirv_target({}));
  EXPECT_FALSE(without.success);
}

// An application's SPIR-V that keeps to the device's capabilities goes to the driver as it is
// (Manifold's reader still takes it: kernel metadata); one that needs what the device lacks is
// refused with the capability named, before any driver sees it.
TEST(SpirvCapabilities, ApplicationModulesGoToTheDriverAsTheyAre) {
  const char* source = R"CL(
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
kernel void twice(global double* d, global int* n) {
  d[get_global_id(0)] *= 2.0;
  n[get_global_id(0)] += 1;
})CL";
  const BuildOutput built = build(source, "", spirv_target({false, true, false}));
  ASSERT_TRUE(built.success) << built.log;
  std::string error;
  const auto il = spirv_module_of(built.binary, &error);
  ASSERT_TRUE(il) << error;
  const BuildOutput from_il = build_il(*il, "", spirv_target({false, true, false}), {});
  ASSERT_TRUE(from_il.success) << from_il.log;
  const auto given = spirv_module_of(from_il.binary, &error);
  ASSERT_TRUE(given) << error;
  EXPECT_EQ(*given, *il);
  ASSERT_EQ(from_il.kernels.size(), 1u);
  EXPECT_EQ(from_il.kernels[0].args.size(), 2u);
  const BuildOutput no_fp64 = build_il(*il, "", spirv_target({}), {});
  EXPECT_FALSE(no_fp64.success);
  EXPECT_NE(no_fp64.log.find("Float64"), std::string::npos) << no_fp64.log;
}

// LLVM 22's backend writes an alloca's 128-byte alignment as 0xffffff80 (an 8-bit value,
// sign-extended): a driver would align the private array to 4 GiB. Every Alignment the pipeline
// emits is a power of two no larger than 128.
TEST(SpirvCapabilities, AlignmentDecorationsArePowersOfTwo) {
  const char* source = R"CL(
kernel void k(global const double16* in, global double16* out, global const uint* at) {
  __private double16 copy[64];
  __attribute__((aligned(256))) __private int wide[8];
  for (int i = 0; i < 64; ++i) copy[i] = in[i];
  for (int i = 0; i < 8; ++i) wide[i] = i;
  out[get_global_id(0)] = copy[at[get_global_id(0)] & 63] + (double)wide[at[0] & 7];
})CL";
  const BuildOutput out = build(source, "", spirv_target({false, true, false}));
  ASSERT_TRUE(out.success) << out.log;
  std::string error;
  const auto module = spirv_module_of(out.binary, &error);
  ASSERT_TRUE(module) << error;
  const std::vector<uint32_t> w = words(*module);
  int alignments = 0;
  for (size_t i = 5; i < w.size() && (w[i] >> 16);) {
    const uint32_t count = w[i] >> 16;
    if ((w[i] & 0xffff) == spv::OpDecorate && count == 4 && w[i + 2] == spv::DecorationAlignment) {
      const uint32_t a = w[i + 3];
      EXPECT_TRUE(a && !(a & (a - 1)) && a <= 128) << "Alignment " << a;
      ++alignments;
    }
    i += count;
  }
  EXPECT_GT(alignments, 0);
}

// CL_KERNEL_LOCAL_MEM_SIZE: the __local variables each kernel uses, helpers' included.
TEST(SpirvCapabilities, KernelsCountTheirStaticLocalMemory) {
  const char* source = R"CL(
void helper(local int* t) { t[get_local_id(0)] = 1; }
kernel void small(global int* out) {
  local int tile[10];
  tile[get_local_id(0)] = (int)get_global_id(0);
  barrier(CLK_LOCAL_MEM_FENCE);
  out[get_global_id(0)] = tile[9 - get_local_id(0)];
}
kernel void large(global int* out) {
  local int a[64];
  local float b[32];
  helper(a);
  b[get_local_id(0)] = 1.0f;
  barrier(CLK_LOCAL_MEM_FENCE);
  out[get_global_id(0)] = a[0] + (int)b[1];
}
kernel void none(global int* out) { out[0] = 1; })CL";
  const BuildOutput out = build(source, "", spirv_target({}));
  ASSERT_TRUE(out.success) << out.log;
  std::map<std::string, uint64_t> local;
  for (const KernelInfo& k : out.kernels) local[k.name] = k.local_mem_size;
  EXPECT_EQ(local["small"], 40u);
  EXPECT_EQ(local["large"], 64u * 4 + 32u * 4);
  EXPECT_EQ(local["none"], 0u);
}

// The optimizer picks a char8's even elements through a <7 x i8> shuffle; SPIR-V has no such
// vector: such modules are scalarized before emission (CTS basic hiloeo).
TEST(SpirvCapabilities, VectorsOfOtherLengthsAreScalarized) {
  const char* source = R"CL(
kernel void even_char8(global char8* in, global char4* out) {
  out[get_global_id(0)] = in[get_global_id(0)].even;
}
kernel void odd_short16(global short16* in, global short8* out) {
  out[get_global_id(0)] = in[get_global_id(0)].odd + in[get_global_id(0)].hi;
}
kernel void lo_int3(global int3* in, global int2* out) {
  out[get_global_id(0)] = in[get_global_id(0)].lo;
})CL";
  const BuildOutput out = build(source, "", spirv_target({}));
  ASSERT_TRUE(out.success) << out.log;
  std::string error;
  const auto module = spirv_module_of(out.binary, &error);
  ASSERT_TRUE(module) << error;
  EXPECT_EQ(validate(words(*module), SPV_ENV_OPENCL_2_2), "");
}

// all/any of integer vectors (the backend gives OpAll/OpAny the integer vector: invalid SPIR-V),
// and no __IMAGE_SUPPORT__ on a device without images (clang defines it for SPIR-V targets).
TEST(SpirvCapabilities, AllAnyAndNoImageSupportMacro) {
  const char* source = R"CL(
#ifdef __IMAGE_SUPPORT__
#error "__IMAGE_SUPPORT__ on a device without images"
#endif
kernel void k(global char2* a, global int4* b, global long* c, global int* out) {
  size_t i = get_global_id(0);
  out[i] = all(a[i]) + 2 * any(b[i]) + 4 * all(c[i]) + 8 * any(a[i] == (char2)(1, 2));
})CL";
  const BuildOutput out = build(source, "", spirv_target({}));
  ASSERT_TRUE(out.success) << out.log;
  std::string error;
  const auto module = spirv_module_of(out.binary, &error);
  ASSERT_TRUE(module) << error;
  EXPECT_EQ(validate(words(*module), SPV_ENV_OPENCL_2_2), "");
}

// The legacy atomics and fences LLVM's backend leaves as imports are resolved by the shim.
TEST(SpirvCapabilities, LegacyAtomicsAndFencesResolve) {
  const char* source = R"CL(
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable
kernel void k(global int* a, local int* l, global uint* u, global long* g, global float* f) {
  atomic_inc(a); atomic_dec(a); atomic_xchg(a, 2); atomic_min(a, 1); atomic_max(a, 1);
  atomic_min(u, 1u); atomic_max(u, 1u); atomic_inc(l); atomic_xchg(f, 1.0f);
  atom_inc(a); atom_inc(g); atom_min(g, 1L); atom_max(g, 1L); atom_xchg(g, 3L);
  mem_fence(CLK_GLOBAL_MEM_FENCE); read_mem_fence(CLK_LOCAL_MEM_FENCE);
  write_mem_fence(CLK_GLOBAL_MEM_FENCE);
})CL";
  const BuildOutput out = build(source, "", spirv_target({false, false, true}));
  EXPECT_TRUE(out.success) << out.log;
}

// OpExtInst printf instructions of OpenCL.std in `module`.
size_t printf_instructions(const std::vector<uint32_t>& module) {
  constexpr uint32_t kOpenClStdPrintf = 184;
  std::set<uint32_t> opencl_std;
  size_t count = 0;
  for (size_t i = 5; i < module.size();) {
    const uint32_t length = module[i] >> 16, opcode = module[i] & 0xffff;
    if (length == 0 || i + length > module.size()) break;
    if (opcode == spv::OpExtInstImport &&
        std::string(reinterpret_cast<const char*>(&module[i + 2])) == "OpenCL.std")
      opencl_std.insert(module[i + 1]);
    if (opcode == spv::OpExtInst && length >= 5 && opencl_std.count(module[i + 3]) &&
        module[i + 4] == kOpenClStdPrintf)
      ++count;
    i += length;
  }
  return count;
}

// printf becomes OpenCL.std printf with its format a UniformConstant pointer to i8 (the
// OpenCL environment's validation checks that), %s strings and vectors included, and Manifold's
// SPIR-V reader takes the module back for the CPU (as the Level Zero test driver does).
TEST(SpirvPrintf, BecomesTheExtendedInstruction) {
  const char* source = R"CL(
kernel void say(global const float2* f, int v, global int* status) {
  if (get_global_id(0) != 0) return;
  status[0] = printf("v=%d s=%s\n", v, "text");
  status[1] = printf("%v4hlu|%v2hlf|%c|%.1f\n", (uint4)(1, 2, 3, 4), f[0], 'x', f[1].y);
  printf("no arguments\n");
})CL";
  for (const SpirvDeviceFeatures features :
       {SpirvDeviceFeatures{}, SpirvDeviceFeatures{true, true, true}}) {
    const Target target = spirv_target(features);
    const BuildOutput out = build(source, "", target);
    ASSERT_TRUE(out.success) << out.log;
    std::string error;
    const std::optional<std::vector<uint8_t>> module = spirv_module_of(out.binary, &error);
    ASSERT_TRUE(module) << error;
    const std::vector<uint32_t> w = words(*module);
    EXPECT_EQ(printf_instructions(w), 3u);
    const bool fp64 = declared_capabilities(w).count(spv::CapabilityFloat64);
    EXPECT_EQ(fp64, features.fp64) << "float arguments are promoted only where double exists";
    EXPECT_EQ(validate(w, SPV_ENV_OPENCL_2_2), "");
    const BuildOutput back = build_il(*module, "", host_cpu_target(), {});
    EXPECT_TRUE(back.success) << back.log;
  }
}

TEST(SpirvCapabilities, UndefinedFunctionIsABuildError) {
  const BuildOutput out =
      build("void helper(global int*);\nkernel void k(global int* a) { helper(a); }", "",
            spirv_target({}));
  EXPECT_FALSE(out.success);
  EXPECT_NE(out.log.find("helper"), std::string::npos) << out.log;
}

}  // namespace

namespace {
// Code generation keeps no state between builds: the same kernel built again, after others,
// gives a valid module again.
TEST(SpirvCapabilities, RepeatedBuildsInOneProcess) {
  const char* spin = R"CL(
    kernel void spin(global uint* x, uint n) {
      uint v = x[get_global_id(0)];
      for (uint i = 0; i < n; ++i) v = v * 1664525u + 1013904223u;
      x[get_global_id(0)] = v;
    }
)CL";
  for (int round = 0; round < 4; ++round) {
    const std::string options = "-D ROUND=" + std::to_string(round);
    const BuildOutput out = build(spin, options, spirv_target({}));
    EXPECT_TRUE(out.success) << "round " << round << ": " << out.log;
  }
}
}  // namespace
