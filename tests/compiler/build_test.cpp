// Builds of valid and invalid programs: logs, options, metadata, separate compilation and
// linking, binaries and their validation.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "backends/cpu/cpu_executable.h"
#include "compiler/compiler.h"

namespace manifold::compiler {
namespace {

using cpu::CpuExecutable;

const Target& host() {
  static const Target target = host_cpu_target();
  return target;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(Build, ValidProgramReportsKernels) {
  BuildOutput out = build(R"(
    __kernel void first(__global int* p) { p[0] = 1; }
    __kernel void second(__global float* q, float s) { q[0] = s; })",
                          "", host());
  ASSERT_TRUE(out.success) << out.log;
  EXPECT_EQ(out.type, BinaryType::Executable);
  ASSERT_EQ(out.kernels.size(), 2u);
  EXPECT_EQ(out.kernels[0].name, "first");
  EXPECT_EQ(out.kernels[1].name, "second");
  EXPECT_FALSE(out.binary.empty());
}

TEST(Build, SyntaxErrorFailsWithLocationInLog) {
  BuildOutput out =
      build("__kernel void k(__global int* p) {\n  p[0] = undefined_name;\n}", "", host());
  EXPECT_FALSE(out.success);
  EXPECT_TRUE(contains(out.log,
                       "input.cl:2:10: error: use of undeclared identifier "
                       "'undefined_name'"))
      << out.log;
  EXPECT_TRUE(contains(out.log, "1 error generated.")) << out.log;
  EXPECT_TRUE(out.binary.empty());
}

TEST(Build, WarningsAndTheirOptions) {
  const char* source = "#warning check this\n__kernel void k(__global int* p) { p[0] = 1; }";
  BuildOutput plain = build(source, "", host());
  ASSERT_TRUE(plain.success) << plain.log;
  EXPECT_TRUE(contains(plain.log, "input.cl:1:2: warning: check this")) << plain.log;
  BuildOutput quiet = build(source, "-w", host());
  ASSERT_TRUE(quiet.success) << quiet.log;
  EXPECT_FALSE(contains(quiet.log, "warning:")) << quiet.log;
  BuildOutput strict = build(source, "-Werror", host());
  EXPECT_FALSE(strict.success);
  EXPECT_TRUE(contains(strict.log, "error:")) << strict.log;
}

TEST(Build, DefinesAndIncludeDirectories) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / "manifold_compiler_test_inc";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "values.h") << "#define FROM_HEADER 7\n";
  const char* source = R"(
    #include "values.h"
    __kernel void k(__global int* p) { p[0] = VALUE + FROM_HEADER + SPACED; })";
  BuildOutput out = build(source, "-DVALUE=5 -D SPACED=\"(1 + 2)\" -I " + dir.string(), host());
  EXPECT_TRUE(out.success) << out.log;
  BuildOutput missing = build(source, "-DVALUE=5", host());
  EXPECT_FALSE(missing.success);
  EXPECT_TRUE(contains(missing.log, "'values.h' file not found")) << missing.log;
  std::filesystem::remove_all(dir);
}

TEST(Build, LanguageVersions) {
  const char* generic = R"(
    void store(int* p, int v) { *p = v; }  // generic pointer: OpenCL C 2.0+
    __kernel void k(__global int* g) { __local int l; store(g, 1); store(&l, 2); })";
  EXPECT_FALSE(build(generic, "", host()).success) << "OpenCL C 1.2 is the default";
  EXPECT_TRUE(build(generic, "-cl-std=CL2.0", host()).success);
  BuildOutput cl3 = build(generic, "-cl-std=CL3.0", host());
  EXPECT_TRUE(cl3.success) << cl3.log;

  Target old_device = host();
  old_device.opencl_c_version = 120;
  BuildOutput too_new = build("__kernel void k() {}", "-cl-std=CL3.0", old_device);
  EXPECT_FALSE(too_new.success);
  EXPECT_TRUE(contains(too_new.log, "does not support OpenCL C 3.0")) << too_new.log;
}

TEST(Build, FeatureMacrosFollowTheTarget) {
  const char* source = R"(
    #ifndef __opencl_c_fp64
    #error no fp64
    #endif
    #if defined(IMAGES) != defined(__opencl_c_images)
    #error images
    #endif
    __kernel void k(__global double* d) { d[0] = 1.0; })";
  EXPECT_TRUE(build(source, "-cl-std=CL3.0 -DIMAGES", host()).success);
  Target no_fp64 = host();
  no_fp64.fp64 = false;
  BuildOutput out = build(source, "-cl-std=CL3.0 -DIMAGES", no_fp64);
  EXPECT_FALSE(out.success);
  EXPECT_TRUE(contains(out.log, "no fp64")) << out.log;
  Target no_images = host();
  no_images.images = false;
  BuildOutput without = build(source, "-cl-std=CL3.0", no_images);
  EXPECT_TRUE(without.success) << without.log;
  BuildOutput wrong = build(source, "-cl-std=CL3.0 -DIMAGES", no_images);
  EXPECT_FALSE(wrong.success);
  EXPECT_TRUE(contains(wrong.log, "error: images")) << wrong.log;
}

// Predefined macros (OpenCL C 3.0 section 6.12) whatever -cl-std says: __OPENCL_VERSION__ is the
// device's version, __IMAGE_SUPPORT__ follows CL_DEVICE_IMAGE_SUPPORT.
TEST(Build, PredefinedMacros) {
  const char* source = R"(
    #if !defined(__OPENCL_VERSION__) || __OPENCL_VERSION__ != 300
    #error __OPENCL_VERSION__
    #endif
    #if !defined(__OPENCL_C_VERSION__) || !defined(__FILE__) || !defined(__LINE__)
    #error __OPENCL_C_VERSION__ __FILE__ __LINE__
    #endif
    #if CL_VERSION_1_0 != 100 || CL_VERSION_1_1 != 110 || CL_VERSION_1_2 != 120 || \
        CL_VERSION_2_0 != 200 || CL_VERSION_3_0 != 300
    #error CL_VERSION_x_y
    #endif
    #if __ENDIAN_LITTLE__ != 1
    #error __ENDIAN_LITTLE__
    #endif
    #if defined(IMAGES) != defined(__IMAGE_SUPPORT__)
    #error __IMAGE_SUPPORT__
    #endif
    #if defined(FAST) != defined(__FAST_RELAXED_MATH__)
    #error __FAST_RELAXED_MATH__
    #endif
    __kernel_exec(64, float4) void k(__global int* p) { p[0] = __OPENCL_VERSION__; })";
  // The host CPU supports images.
  for (const char* std : {"-cl-std=CL1.1", "-cl-std=CL1.2", "-cl-std=CL2.0", "-cl-std=CL3.0"}) {
    BuildOutput out = build(source, std::string(std) + " -DIMAGES", host());
    EXPECT_TRUE(out.success) << std << ":\n" << out.log;
    BuildOutput fast =
        build(source, std::string(std) + " -DIMAGES -cl-fast-relaxed-math -DFAST", host());
    EXPECT_TRUE(fast.success) << std << " -cl-fast-relaxed-math:\n" << fast.log;
  }
  BuildOutput missing = build(source, "", host());
  EXPECT_FALSE(missing.success);
  EXPECT_TRUE(contains(missing.log, "error: __IMAGE_SUPPORT__")) << missing.log;
  Target no_images = host();
  no_images.images = false;
  BuildOutput without = build(source, "", no_images);
  EXPECT_TRUE(without.success) << without.log;
}

TEST(Options, Validation) {
  std::string why;
  EXPECT_TRUE(options_valid("", &why));
  EXPECT_TRUE(
      options_valid("-DX=1 -D Y -I /tmp -cl-std=CL1.2 -cl-mad-enable -cl-opt-disable "
                    "-cl-fast-relaxed-math -cl-finite-math-only -cl-no-signed-zeros "
                    "-cl-unsafe-math-optimizations -cl-denorms-are-zero "
                    "-cl-single-precision-constant -w -Werror -cl-kernel-arg-info",
                    &why))
      << why;
  EXPECT_FALSE(options_valid("-cl-no-such-option", &why));
  EXPECT_TRUE(contains(why, "-cl-no-such-option")) << why;
  EXPECT_FALSE(options_valid("-cl-std=CL9.9", &why));
  EXPECT_FALSE(options_valid("-D", &why));
  EXPECT_FALSE(options_valid("-I", &why));
  // Link-only options are not compile options and vice versa.
  EXPECT_TRUE(options_valid("-create-library", OptionsKind::Link, &why));
  EXPECT_TRUE(options_valid("-create-library -enable-link-options", OptionsKind::Link, &why));
  EXPECT_FALSE(options_valid("-enable-link-options", OptionsKind::Link, &why));
  EXPECT_FALSE(options_valid("-create-library", OptionsKind::Compile, &why));
  EXPECT_FALSE(options_valid("-create-library", OptionsKind::Build, &why));
  EXPECT_FALSE(options_valid("-DX", OptionsKind::Link, &why));
  EXPECT_TRUE(options_valid("-cl-fast-relaxed-math", OptionsKind::Link, &why));

  BuildOutput out = build("__kernel void k() {}", "-bogus", host());
  EXPECT_FALSE(out.success);
  EXPECT_TRUE(contains(out.log, "-bogus")) << out.log;
}

TEST(Metadata, ArgumentsAndAttributes) {
  BuildOutput out = build(R"(
    typedef struct { float x; int y; } Pair;
    __kernel __attribute__((reqd_work_group_size(8, 4, 1)))
    __attribute__((vec_type_hint(float4)))
    void k(__global const float* restrict in, __local int* scratch, __constant uint* table,
           float4 v, Pair pair, volatile __global int* flags, uchar c) {})",
                          "-cl-kernel-arg-info", host());
  ASSERT_TRUE(out.success) << out.log;
  ASSERT_EQ(out.kernels.size(), 1u);
  const KernelInfo& k = out.kernels[0];
  EXPECT_EQ(k.reqd_work_group_size[0], 8u);
  EXPECT_EQ(k.reqd_work_group_size[1], 4u);
  EXPECT_EQ(k.reqd_work_group_size[2], 1u);
  EXPECT_EQ(k.vec_type_hint, "float4");
  EXPECT_EQ(k.attributes, "reqd_work_group_size(8,4,1) vec_type_hint(float4)");
  ASSERT_EQ(k.args.size(), 7u);
  EXPECT_TRUE(k.arg_info_available);

  EXPECT_EQ(k.args[0].kind, ArgKind::Buffer);
  EXPECT_EQ(k.args[0].size, sizeof(void*));
  EXPECT_EQ(k.args[0].address, cl_kernel_arg_address_qualifier(CL_KERNEL_ARG_ADDRESS_GLOBAL));
  EXPECT_EQ(k.args[0].type_qualifier,
            cl_kernel_arg_type_qualifier(CL_KERNEL_ARG_TYPE_CONST | CL_KERNEL_ARG_TYPE_RESTRICT));
  EXPECT_EQ(k.args[0].type_name, "float*");
  EXPECT_EQ(k.args[0].name, "in");
  EXPECT_EQ(k.args[0].access, cl_kernel_arg_access_qualifier(CL_KERNEL_ARG_ACCESS_NONE));

  EXPECT_EQ(k.args[1].kind, ArgKind::Local);
  EXPECT_EQ(k.args[1].address, cl_kernel_arg_address_qualifier(CL_KERNEL_ARG_ADDRESS_LOCAL));
  EXPECT_EQ(k.args[2].kind, ArgKind::Buffer);
  EXPECT_EQ(k.args[2].address, cl_kernel_arg_address_qualifier(CL_KERNEL_ARG_ADDRESS_CONSTANT));
  EXPECT_EQ(k.args[2].type_name, "uint*");

  EXPECT_EQ(k.args[3].kind, ArgKind::Value);
  EXPECT_EQ(k.args[3].size, 16u);
  EXPECT_EQ(k.args[3].type_name, "float4");
  EXPECT_EQ(k.args[3].address, cl_kernel_arg_address_qualifier(CL_KERNEL_ARG_ADDRESS_PRIVATE));
  EXPECT_EQ(k.args[4].kind, ArgKind::Value);
  EXPECT_EQ(k.args[4].size, 8u);
  EXPECT_EQ(k.args[4].type_name, "Pair");
  EXPECT_EQ(k.args[5].type_qualifier, cl_kernel_arg_type_qualifier(CL_KERNEL_ARG_TYPE_VOLATILE));
  EXPECT_EQ(k.args[6].size, 1u);
  EXPECT_EQ(k.args[6].type_name, "uchar");
}

TEST(Metadata, StaticLocalMemorySize) {
  BuildOutput out = build(R"(
    __kernel void k(__global float* p) {
      __local float tile[100];
      __local int counter;
      tile[get_local_id(0)] = p[0];
      counter = 1;
      barrier(CLK_LOCAL_MEM_FENCE);
      p[get_local_id(0)] = tile[0] + counter;
    })",
                          "", host());
  ASSERT_TRUE(out.success) << out.log;
  EXPECT_GE(out.kernels[0].local_mem_size, 404u);
}

TEST(Link, CompileWithHeadersThenLink) {
  BuildOutput library = compile(R"(
    #include "shared/defs.h"
    int scale(int v) { return v * FACTOR; })",
                                "", {{"shared/defs.h", "#define FACTOR 3\n"}}, host());
  ASSERT_TRUE(library.success) << library.log;
  EXPECT_EQ(library.type, BinaryType::CompiledObject);
  BuildOutput main = compile(R"(
    int scale(int v);
    __kernel void k(__global int* p) { p[get_global_id(0)] = scale(p[get_global_id(0)]); })",
                             "", {}, host());
  ASSERT_TRUE(main.success) << main.log;
  ASSERT_EQ(main.kernels.size(), 1u);

  BuildOutput linked = link({library.binary, main.binary}, "", host());
  ASSERT_TRUE(linked.success) << linked.log;
  EXPECT_EQ(linked.type, BinaryType::Executable);
  std::string error;
  auto exe = CpuExecutable::load(linked.binary, host(), &error);
  ASSERT_NE(exe, nullptr) << error;
  int data[4] = {1, 2, 3, 4};
  void* p = data;
  const void* args[] = {&p};
  NDRange r;
  r.global_size[0] = 4;
  r.local_size[0] = 2;
  exe->run("k", r, args, nullptr);
  EXPECT_EQ(data[3], 12);

  // A library first, then an executable from it.
  BuildOutput created = link({library.binary}, "-create-library", host());
  ASSERT_TRUE(created.success) << created.log;
  EXPECT_EQ(created.type, BinaryType::Library);
  BuildOutput from_library = link({created.binary, main.binary}, "", host());
  EXPECT_TRUE(from_library.success) << from_library.log;
}

TEST(Link, UndefinedFunctionFails) {
  BuildOutput main = compile(R"(
    int missing(int v);
    __kernel void k(__global int* p) { p[0] = missing(p[0]); })",
                             "", {}, host());
  ASSERT_TRUE(main.success) << main.log;
  BuildOutput linked = link({main.binary}, "", host());
  EXPECT_FALSE(linked.success);
  EXPECT_TRUE(contains(linked.log, "undefined function 'missing'")) << linked.log;
}

TEST(Link, DuplicateDefinitionFails) {
  BuildOutput a = compile("int f(int v) { return v; }", "", {}, host());
  BuildOutput b = compile("int f(int v) { return v + 1; }", "", {}, host());
  ASSERT_TRUE(a.success && b.success);
  BuildOutput linked = link({a.binary, b.binary}, "-create-library", host());
  EXPECT_FALSE(linked.success);
  EXPECT_FALSE(linked.log.empty());
}

TEST(Binary, RoundTripAndInspection) {
  BuildOutput out = build("__kernel void k(__global int* p, int v) { p[0] = v; }", "-DX=1", host());
  ASSERT_TRUE(out.success) << out.log;
  std::string error;
  std::optional<BinaryInfo> info = inspect_binary(out.binary, &error);
  ASSERT_TRUE(info.has_value()) << error;
  EXPECT_EQ(info->type, BinaryType::Executable);
  EXPECT_EQ(info->options, "-DX=1");
  ASSERT_EQ(info->kernels.size(), 1u);
  EXPECT_EQ(info->kernels[0].args.size(), 2u);

  auto exe = CpuExecutable::load(out.binary, host(), &error);
  ASSERT_NE(exe, nullptr) << error;
  int value = 0, set = 99;
  void* p = &value;
  const void* args[] = {&p, &set};
  NDRange r;
  exe->run("k", r, args, nullptr);
  EXPECT_EQ(value, 99);
  EXPECT_NE(exe->find("k"), nullptr);
  EXPECT_EQ(exe->find("nope"), nullptr);
}

TEST(Binary, CorruptTruncatedAndForeignBinariesAreRejected) {
  BuildOutput out = build("__kernel void k(__global int* p) { p[0] = 1; }", "", host());
  ASSERT_TRUE(out.success) << out.log;
  std::string error;

  std::vector<uint8_t> flipped = out.binary;
  flipped[flipped.size() / 2] ^= 0x40;
  EXPECT_EQ(CpuExecutable::load(flipped, host(), &error), nullptr);
  EXPECT_TRUE(contains(error, "checksum")) << error;

  for (size_t keep :
       {size_t(0), size_t(5), size_t(31), out.binary.size() / 2, out.binary.size() - 1}) {
    std::vector<uint8_t> truncated(out.binary.begin(), out.binary.begin() + keep);
    error.clear();
    EXPECT_EQ(CpuExecutable::load(truncated, host(), &error), nullptr) << keep;
    EXPECT_FALSE(error.empty());
    EXPECT_FALSE(inspect_binary(truncated, &error).has_value());
  }

  std::vector<uint8_t> garbage(4096);
  for (size_t i = 0; i < garbage.size(); ++i) garbage[i] = uint8_t(i * 131 + 7);
  EXPECT_EQ(CpuExecutable::load(garbage, host(), &error), nullptr);
  EXPECT_TRUE(contains(error, "magic")) << error;

  // A compiled object is not an executable.
  BuildOutput object = compile("__kernel void k() {}", "", {}, host());
  ASSERT_TRUE(object.success);
  EXPECT_EQ(CpuExecutable::load(object.binary, host(), &error), nullptr);
  EXPECT_TRUE(contains(error, "not an executable")) << error;
  EXPECT_FALSE(link({garbage}, "", host()).success);
}

TEST(Build, ConcurrentBuildsFromSeveralThreads) {
  std::vector<std::thread> threads;
  std::vector<int> results(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &results] {
      for (int i = 0; i < 5; ++i) {
        std::string source = "__kernel void k" + std::to_string(t) +
                             "(__global float* p) { p[get_global_id(0)] = sin(p[0]) + " +
                             std::to_string(i) + "; }";
        BuildOutput out = build(source, "", host());
        if (!out.success) return;
        std::string error;
        if (!CpuExecutable::load(out.binary, host(), &error)) return;
      }
      results[t] = 1;
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(results, std::vector<int>(4, 1));
}

}  // namespace
}  // namespace manifold::compiler
