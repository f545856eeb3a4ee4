// The AMDGPU pipeline without a GPU: programs compile to code objects v5 for gfx90a, gfx942,
// gfx1030 and gfx1100, and each code object's metadata note shows the launch ABI of
// compiler/gpu_launch_abi.h (explicit arguments only, their offsets and sizes, LDS, wave size).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "amdgpu_code_object.h"
#include "compiler/compiler.h"
#include "spirv_tools.h"

namespace {

using namespace manifold::compiler;
using amdgpu_test::CodeObject;
using amdgpu_test::KernelMetadata;

const char* const kProcessors[] = {"gfx90a", "gfx942", "gfx1030", "gfx1100"};

Target target_for(const std::string& processor) {
  std::optional<Target> target = amdgpu_target(processor);
  EXPECT_TRUE(target.has_value()) << processor;
  return target.value_or(Target{});
}

// Builds `source` for `processor` and reads its code object; failures are test failures.
std::optional<CodeObject> build_code_object(const std::string& processor, const std::string& source,
                                            const char* options = "",
                                            std::vector<uint8_t>* bytes_out = nullptr) {
  BuildOutput out = build(source, options, target_for(processor));
  EXPECT_TRUE(out.success) << processor << ":\n" << out.log;
  if (!out.success) return std::nullopt;
  std::string error;
  std::optional<std::vector<uint8_t>> bytes = amdgpu_code_object_of(out.binary, &error);
  EXPECT_TRUE(bytes.has_value()) << error;
  if (!bytes) return std::nullopt;
  std::optional<CodeObject> object = amdgpu_test::read_code_object(*bytes, &error);
  EXPECT_TRUE(object.has_value()) << processor << ": " << error;
  if (bytes_out) *bytes_out = std::move(*bytes);
  return object;
}

bool has_hidden_argument(const KernelMetadata& kernel) {
  for (const auto& arg : kernel.args)
    if (arg.value_kind.rfind("hidden_", 0) == 0) return true;
  return false;
}

// The OpenCL C sources in a test file: its raw string literals that define a kernel.
std::vector<std::string> kernels_in(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const std::string s = text.str();
  std::vector<std::string> sources;
  for (size_t at = s.find("R\""); at != std::string::npos; at = s.find("R\"", at + 2)) {
    const size_t open = s.find('(', at);
    if (open == std::string::npos || open - at > 20) continue;
    const std::string closing = ")" + s.substr(at + 2, open - at - 2) + "\"";
    const size_t end = s.find(closing, open);
    if (end == std::string::npos) break;
    std::string body = s.substr(open + 1, end - open - 1);
    if (body.find("kernel void") != std::string::npos) sources.push_back(body);
    at = end;
  }
  return sources;
}

TEST(AmdgpuTarget, NamesTheProcessorFeaturesAndWaveSize) {
  const Target gfx90a = target_for("gfx90a");
  EXPECT_EQ(gfx90a.triple, "amdgcn-amd-amdhsa");
  EXPECT_EQ(gfx90a.cpu, "gfx90a");
  EXPECT_EQ(gfx90a.features, "+wavefrontsize64");
  EXPECT_EQ(target_for("gfx1100").features, "+wavefrontsize32");
  EXPECT_EQ(target_for("gfx90a:sramecc+:xnack-").features, "+sramecc,-xnack,+wavefrontsize64");
  EXPECT_FALSE(amdgpu_target("gfx9999").has_value());
  EXPECT_FALSE(amdgpu_target("sm_90").has_value());
  EXPECT_FALSE(amdgpu_target("gfx90a:bogus+").has_value());
}

// Every kind of argument, at the offsets natural alignment gives: the layout the launcher
// writes. A __local pointer is a 4-byte offset into dynamic LDS.
TEST(AmdgpuPipeline, MetadataListsExactlyTheExplicitArguments) {
  const char* source = R"(
    kernel void layout(global float* a, local float* l, float s, int4 v, constant int* c,
                       char ch, long x, global double* d) {
      size_t i = get_global_id(0);
      l[get_local_id(0)] = a[i] * s + v.y + c[1] + ch + x;
      barrier(CLK_LOCAL_MEM_FENCE);
      d[i] = l[get_local_size(0) - 1 - get_local_id(0)] + get_global_offset(0) +
             get_num_groups(0) + get_global_size(1) + get_work_dim() + get_group_id(2);
    })";
  struct Expected {
    uint64_t offset, size;
    const char* kind;
  };
  const Expected expected[] = {
      {0, 8, "global_buffer"},  {8, 4, "by_value"},  {12, 4, "by_value"}, {16, 16, "by_value"},
      {32, 8, "global_buffer"}, {40, 1, "by_value"}, {48, 8, "by_value"}, {56, 8, "global_buffer"}};
  for (const char* processor : kProcessors) {
    SCOPED_TRACE(processor);
    std::optional<CodeObject> object = build_code_object(processor, source);
    ASSERT_TRUE(object.has_value());
    EXPECT_EQ(object->machine, 224);    // EM_AMDGPU
    EXPECT_EQ(object->os_abi, 64);      // ELFOSABI_AMDGPU_HSA
    EXPECT_EQ(object->abi_version, 3);  // code object v5
    EXPECT_EQ(object->type, 3);         // ET_DYN: linked
    EXPECT_NE(object->processor.find(processor), std::string::npos) << object->processor;
    ASSERT_EQ(object->kernels.count("layout"), 1u);
    const KernelMetadata& k = object->kernels.at("layout");
    ASSERT_EQ(k.args.size(), std::size(expected)) << "hidden arguments are not expected";
    for (size_t i = 0; i < std::size(expected); ++i) {
      SCOPED_TRACE("argument " + std::to_string(i));
      EXPECT_EQ(k.args[i].offset, expected[i].offset);
      EXPECT_EQ(k.args[i].size, expected[i].size);
      EXPECT_EQ(k.args[i].value_kind, expected[i].kind);
    }
    EXPECT_EQ(k.args[4].address_space, "constant");
    EXPECT_EQ(k.kernarg_segment_size, 64u);
    EXPECT_EQ(k.wavefront_size, std::string(processor).rfind("gfx9", 0) == 0 ? 64u : 32u);
    EXPECT_EQ(k.max_flat_workgroup_size, 256u);
    EXPECT_FALSE(k.uses_dynamic_stack);
    // The launch state the launcher writes (compiler/gpu_launch_abi.h), exported.
    EXPECT_NE(std::find(object->defined_symbols.begin(), object->defined_symbols.end(),
                        "__manifold_launch"),
              object->defined_symbols.end());
    EXPECT_NE(
        std::find(object->defined_symbols.begin(), object->defined_symbols.end(), "layout.kd"),
        object->defined_symbols.end());
  }
}

TEST(AmdgpuPipeline, StaticLocalMemoryAndWorkGroupLimitAreReported) {
  const char* source = R"(
    kernel void fixed(global float* out) {
      local float tile[300];
      tile[get_local_id(0)] = get_local_id(0);
      barrier(CLK_LOCAL_MEM_FENCE);
      out[get_global_id(0)] = tile[299 - get_local_id(0)];
    }
    __attribute__((reqd_work_group_size(64, 2, 1)))
    kernel void sized(global int* out) { out[get_global_id(0)] = get_local_size(1); })";
  for (const char* processor : kProcessors) {
    SCOPED_TRACE(processor);
    BuildOutput out = build(source, "", target_for(processor));
    ASSERT_TRUE(out.success) << out.log;
    std::optional<CodeObject> object = build_code_object(processor, source);
    ASSERT_TRUE(object.has_value());
    EXPECT_EQ(object->kernels.at("fixed").group_segment_fixed_size, 1200u);
    EXPECT_EQ(object->kernels.at("sized").group_segment_fixed_size, 0u);
    EXPECT_EQ(object->kernels.at("sized").max_flat_workgroup_size, 128u);
    for (const KernelInfo& k : out.kernels)
      EXPECT_EQ(k.max_work_group_size, k.name == "sized" ? 128u : 256u) << k.name;
  }
}

// Code objects are cached on disk like every build, per processor.
TEST(AmdgpuPipeline, CodeObjectsAreCachedPerProcessor) {
  const std::string dir = spirv_test::temp_path(".cache");
  ::setenv("MANIFOLD_CACHE_DIR", dir.c_str(), 1);
  const char* source = "kernel void k(global int* p) { p[get_global_id(0)] = 7; }";
  BuildOutput first = build(source, "", target_for("gfx1030"));
  BuildOutput second = build(source, "", target_for("gfx1030"));
  BuildOutput other = build(source, "", target_for("gfx1100"));
  ::unsetenv("MANIFOLD_CACHE_DIR");
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(first.success && second.success && other.success) << first.log << other.log;
  EXPECT_FALSE(first.from_cache);
  EXPECT_TRUE(second.from_cache);
  EXPECT_FALSE(other.from_cache);
  std::string error;
  EXPECT_EQ(amdgpu_code_object_of(first.binary, &error),
            amdgpu_code_object_of(second.binary, &error));
}

// Builds on several threads at once, each a real build (an empty cache): lld's in-process links
// are serialized, nothing else is; the first builds of a process race to register the AMDGPU
// code generator, which clang's back end needs too (a frontend ran before it was registered and
// crashed).
TEST(AmdgpuPipeline, ConcurrentBuildsAllLink) {
  const std::string dir = spirv_test::temp_path(".cache");
  ::setenv("MANIFOLD_CACHE_DIR", dir.c_str(), 1);
  std::vector<std::thread> threads;
  std::vector<BuildOutput> outs(6);
  for (size_t t = 0; t < outs.size(); ++t)
    threads.emplace_back([t, &outs] {
      const std::string source = "kernel void k" + std::to_string(t) +
                                 "(global int* p) { p[get_global_id(0)] = " + std::to_string(t) +
                                 "; }";
      outs[t] = build(source, "", target_for(kProcessors[t % std::size(kProcessors)]));
    });
  for (std::thread& thread : threads) thread.join();
  ::unsetenv("MANIFOLD_CACHE_DIR");
  std::filesystem::remove_all(dir);
  for (size_t t = 0; t < outs.size(); ++t) {
    EXPECT_FALSE(outs[t].from_cache);
    ASSERT_TRUE(outs[t].success) << outs[t].log;
    std::string error;
    auto bytes = amdgpu_code_object_of(outs[t].binary, &error);
    ASSERT_TRUE(bytes.has_value()) << error;
    auto object = amdgpu_test::read_code_object(*bytes, &error);
    ASSERT_TRUE(object.has_value()) << error;
    EXPECT_EQ(object->kernels.count("k" + std::to_string(t)), 1u);
  }
}

TEST(AmdgpuPipeline, PrintfIsAClearBuildError) {
  BuildOutput out =
      build("kernel void k(int v) { printf(\"%d\\n\", v); }", "", target_for("gfx90a"));
  EXPECT_FALSE(out.success);
  EXPECT_NE(out.log.find("printf is not supported on AMD GPUs"), std::string::npos) << out.log;
}

TEST(AmdgpuPipeline, UndefinedFunctionIsABuildError) {
  BuildOutput out =
      build("void helper(void); kernel void k() { helper(); }", "", target_for("gfx1030"));
  EXPECT_FALSE(out.success);
  EXPECT_NE(out.log.find("undefined function 'helper'"), std::string::npos) << out.log;
}

TEST(AmdgpuPipeline, BuildsFromSpirv) {
  std::string log;
  const std::vector<uint8_t> il = spirv_test::clang_spirv(R"(
    kernel void scale(global float* x, local float* tmp, float f) {
      tmp[get_local_id(0)] = x[get_global_id(0)] * f;
      barrier(CLK_LOCAL_MEM_FENCE);
      x[get_global_id(0)] = tmp[get_local_size(0) - 1 - get_local_id(0)] + get_global_offset(0);
    })",
                                                          &log);
  ASSERT_FALSE(il.empty()) << log;
  for (const char* processor : kProcessors) {
    SCOPED_TRACE(processor);
    BuildOutput out = build_il(il, "", target_for(processor), {});
    ASSERT_TRUE(out.success) << out.log;
    std::string error;
    auto bytes = amdgpu_code_object_of(out.binary, &error);
    ASSERT_TRUE(bytes.has_value()) << error;
    auto object = amdgpu_test::read_code_object(*bytes, &error);
    ASSERT_TRUE(object.has_value()) << error;
    ASSERT_EQ(object->kernels.count("scale"), 1u);
    const KernelMetadata& k = object->kernels.at("scale");
    EXPECT_FALSE(has_hidden_argument(k));
    EXPECT_EQ(k.kernarg_segment_size, 16u);  // pointer, local offset, float
  }
}

// The SPIR-V corpus (tests/spirv/corpus.inc) through the SPIR-V reader: private variables live
// in AMDGPU's private address space, builtins with private pointers (sincos) resolve.
TEST(AmdgpuPipeline, SpirvCorpusLinksWithNothingUndefined) {
  size_t built = 0;
  for (const std::string& source : kernels_in(MANIFOLD_SOURCE_DIR "/tests/spirv/corpus.inc")) {
    if (source.find("printf") != std::string::npos || source.find("image") != std::string::npos)
      continue;
    std::string log;
    const std::vector<uint8_t> il = spirv_test::clang_spirv(source, &log);
    if (il.empty()) continue;  // OpenCL C the SPIR-V target does not take
    for (const char* processor : {"gfx90a", "gfx1100"}) {
      SCOPED_TRACE(std::string(processor) + ":\n" + source);
      BuildOutput out = build_il(il, "", target_for(processor), {});
      ASSERT_TRUE(out.success) << out.log;
      std::string error;
      auto bytes = amdgpu_code_object_of(out.binary, &error);
      ASSERT_TRUE(bytes.has_value()) << error;
      auto object = amdgpu_test::read_code_object(*bytes, &error);
      ASSERT_TRUE(object.has_value()) << error;
      EXPECT_TRUE(object->undefined_symbols.empty());
      EXPECT_EQ(object->kernels.size(), out.kernels.size());
      for (const auto& [name, k] : object->kernels) EXPECT_FALSE(has_hidden_argument(k)) << name;
      ++built;
    }
  }
  EXPECT_GE(built, 10u);
}

// ---- The kernel corpus and the GPU end-to-end kernels, for every processor ----

class AmdgpuCorpus : public testing::TestWithParam<const char*> {};

// Whether a kernel source uses the generic address space, work-group collectives or the
// all-devices memory scope, which the AMDGPU target does not report.
bool needs_unreported_feature(const std::string& source) {
  for (const char* word : {"generic", "to_global", "to_local", "to_private", "get_fence",
                           "memory_scope_all_svm_devices", "work_group_reduce", "work_group_scan",
                           "work_group_broadcast", "work_group_all", "work_group_any"})
    if (source.find(word) != std::string::npos) return true;
  return false;
}

TEST_P(AmdgpuCorpus, EveryKernelLinksWithNothingUndefined) {
  const std::string processor = GetParam();
  size_t built = 0;
  for (const char* file :
       {"tests/kernels/kernel_corpus_test.cpp", "tests/backends/gpu_driver/cuda_e2e_test.cpp",
        "tests/spirv/corpus.inc", "tests/compiler/nvptx_compile_test.cpp"}) {
    const std::vector<std::string> sources =
        kernels_in(std::string(MANIFOLD_SOURCE_DIR "/") + file);
    EXPECT_GE(sources.size(), 5u) << file;
    for (size_t i = 0; i < sources.size(); ++i) {
      SCOPED_TRACE(std::string(file) + " kernel source " + std::to_string(i));
      const std::string& source = sources[i];
      BuildOutput out = build(source, "-cl-std=CL3.0", target_for(processor));
      if (source.find("printf") != std::string::npos) {  // unsupported, and said so
        EXPECT_FALSE(out.success);
        EXPECT_NE(out.log.find("printf"), std::string::npos) << out.log;
        continue;
      }
      // OpenCL C 3.0's optional features that AMD GPUs do not report (the generic address space,
      // work-group collectives, the all-devices scope, program-scope variables): clang refuses
      // them.
      if (needs_unreported_feature(source)) {
        EXPECT_FALSE(out.success);
        continue;
      }
      // Neither are images (no image builtins for AMDGPU yet).
      if (source.find("image2d_t") != std::string::npos ||
          source.find("image1d_t") != std::string::npos) {
        EXPECT_FALSE(out.success);
        EXPECT_NE(out.log.find("__opencl_c_images"), std::string::npos) << out.log;
        continue;
      }
      if (!out.success && out.log.find("program scope variable") != std::string::npos) continue;
      // Nor sub-groups (the AMDGPU target reports none yet); the corpus's sub-group kernels also
      // take their GID macro from a prelude the runner adds.
      if (source.find("sub_group") != std::string::npos) {
        EXPECT_FALSE(out.success);
        continue;
      }
      ASSERT_TRUE(out.success) << out.log << "\n" << source;
      std::string error;
      auto bytes = amdgpu_code_object_of(out.binary, &error);
      ASSERT_TRUE(bytes.has_value()) << error;
      auto object = amdgpu_test::read_code_object(*bytes, &error);
      ASSERT_TRUE(object.has_value()) << error;
      EXPECT_TRUE(object->undefined_symbols.empty())
          << "undefined: " << object->undefined_symbols.front();
      EXPECT_EQ(object->kernels.size(), out.kernels.size());
      for (const KernelInfo& info : out.kernels) {
        ASSERT_EQ(object->kernels.count(info.name), 1u) << info.name;
        const KernelMetadata& k = object->kernels.at(info.name);
        EXPECT_FALSE(has_hidden_argument(k)) << info.name;
        EXPECT_EQ(k.args.size(), info.args.size()) << info.name;
        EXPECT_FALSE(k.uses_dynamic_stack) << info.name;
      }
      ++built;
    }
  }
  EXPECT_GE(built, 20u);
}

INSTANTIATE_TEST_SUITE_P(Processors, AmdgpuCorpus, testing::ValuesIn(kProcessors));

// LLVM's own reader agrees: llvm-readobj-22 --notes shows the kernels (where it is installed).
TEST(AmdgpuPipeline, LlvmReadobjReadsTheNote) {
  const char* readobj = "/usr/lib/llvm-22/bin/llvm-readobj";
  if (access(readobj, X_OK) != 0) GTEST_SKIP() << readobj << " is not installed";
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(build_code_object("gfx942",
                                "kernel void probe(global int* p, local int* l) { "
                                "l[0] = 1; p[get_global_id(0)] = l[0]; }",
                                "", &bytes));
  const std::string path = spirv_test::temp_path(".hsaco");
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
  FILE* pipe = popen((std::string(readobj) + " --notes " + path + " 2>&1").c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string text;
  char buffer[512];
  while (fgets(buffer, sizeof buffer, pipe)) text += buffer;
  EXPECT_EQ(pclose(pipe), 0) << text;
  std::remove(path.c_str());
  EXPECT_NE(text.find("NT_AMDGPU_METADATA"), std::string::npos) << text;
  EXPECT_NE(text.find(".name:           probe"), std::string::npos) << text;
  EXPECT_NE(text.find("amdgcn-amd-amdhsa--gfx942"), std::string::npos) << text;
  EXPECT_EQ(text.find("hidden_"), std::string::npos) << text;
}

}  // namespace
