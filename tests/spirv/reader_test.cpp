// The SPIR-V reader below the API: modules from clang's SPIR-V target build for the CPU and
// for NVPTX (the CUDA devices' pipeline; no GPU needed), kernel info comes out as for OpenCL
// C, and what the reader does not support fails with a log that names it.
#include <gtest/gtest.h>

#include <filesystem>

#include "compiler/compiler.h"
#include "spirv_tools.h"

namespace manifold::compiler {
namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

const char* kKernels = R"(
typedef struct { int a; float b; } pair_t;
kernel void vadd(global const float* a, global const float* b, global float* c, int n) {
  size_t i = get_global_id(0);
  if (i < n) c[i] = a[i] + b[i] + sin(a[i]) + fmax(a[i], 1.0f);
}
kernel void reduce(global const int* in, global int* out, local int* tmp) {
  size_t l = get_local_id(0);
  tmp[l] = in[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (size_t s = get_local_size(0) / 2; s > 0; s >>= 1) {
    if (l < s) tmp[l] += tmp[l + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (l == 0) atomic_add(out, tmp[0]);
}
kernel void pairs(global pair_t* p, float4 v, global float4* o, constant int* table) {
  p[0].a += table[1];
  o[0] = v * 2.0f + (float4)(1, 2, 3, 4);
  switch (p[1].a) {
    case 0: p[1].b = 1; break;
    case 5: p[1].b = 2; break;
    default: p[1].b = 3;
  }
})";

std::vector<uint8_t> corpus_module() {
  std::string log;
  std::vector<uint8_t> il = spirv_test::clang_spirv(kKernels, &log);
  EXPECT_FALSE(il.empty()) << log;
  return il;
}

TEST(SpirvReader, ClangModuleIsValid) {
  std::string why;
  EXPECT_TRUE(il_valid(corpus_module(), &why)) << why;
}

TEST(SpirvReader, BuildsForTheCpuWithKernelInfo) {
  BuildOutput out = build_il(corpus_module(), "", host_cpu_target(), {});
  ASSERT_TRUE(out.success) << out.log;
  ASSERT_EQ(out.kernels.size(), 3u);
  const KernelInfo& vadd = out.kernels[0];
  EXPECT_EQ(vadd.name, "vadd");
  ASSERT_EQ(vadd.args.size(), 4u);
  EXPECT_EQ(vadd.args[0].kind, ArgKind::Buffer);
  EXPECT_EQ(vadd.args[0].address,
            static_cast<cl_kernel_arg_address_qualifier>(CL_KERNEL_ARG_ADDRESS_GLOBAL));
  EXPECT_EQ(vadd.args[3].kind, ArgKind::Value);
  EXPECT_EQ(vadd.args[3].size, 4u);
  const KernelInfo& reduce = out.kernels[1];
  EXPECT_EQ(reduce.args[2].kind, ArgKind::Local);
  const KernelInfo& pairs = out.kernels[2];
  EXPECT_EQ(pairs.args[1].size, 16u);
  EXPECT_EQ(pairs.args[3].address,
            static_cast<cl_kernel_arg_address_qualifier>(CL_KERNEL_ARG_ADDRESS_CONSTANT));
}

// Programs from SPIR-V get the footprints of device groups as programs from OpenCL C do.
TEST(SpirvReader, FootprintsOfReadModules) {
  BuildOutput out = build_il(corpus_module(), "", host_cpu_target(), {});
  ASSERT_TRUE(out.success) << out.log;
  ASSERT_EQ(out.kernels.size(), 3u);
  const KernelFootprint& vadd = out.kernels[0].footprint;
  ASSERT_TRUE(vadd.analyzed);
  EXPECT_EQ(vadd.whole_reason, "");
  ASSERT_EQ(vadd.args.size(), 4u);
  EXPECT_TRUE(vadd.args[2].writes_known);
  ASSERT_EQ(vadd.args[2].accesses.size(), 1u);
  EXPECT_EQ(vadd.args[2].accesses[0].size, 4u);
  // Groups [1, 2) of 64 work-items write c[64] to c[127].
  NDRange range;
  range.global_size[0] = 256;
  range.local_size[0] = 64;
  range.group_first[0] = 1;
  range.group_count[0] = 1;
  const uint64_t pointer = 0;
  const int32_t n = 256;
  const std::span<const uint8_t> p(reinterpret_cast<const uint8_t*>(&pointer), sizeof pointer);
  const std::span<const uint8_t> v(reinterpret_cast<const uint8_t*>(&n), sizeof n);
  const std::vector<std::span<const uint8_t>> args = {p, p, p, v};
  PartFootprint written = evaluate_part(vadd, 2, range, args);
  ASSERT_TRUE(written.writes);
  EXPECT_EQ(written.writes->first, 256u);
  EXPECT_EQ(written.writes->end, 512u);
  EXPECT_EQ(out.kernels[1].footprint.whole_reason, "global atomics");
}

TEST(SpirvReader, BuildsForNvptx) {
  BuildOutput out = build_il(corpus_module(), "", nvptx_target(9, 0), {});
  ASSERT_TRUE(out.success) << out.log;
  std::string error;
  std::optional<std::string> ptx = nvptx_ptx_of(out.binary, &error);
  ASSERT_TRUE(ptx) << error;
  EXPECT_TRUE(contains(*ptx, ".entry vadd")) << *ptx;
  EXPECT_TRUE(contains(*ptx, ".entry reduce"));
  EXPECT_TRUE(contains(*ptx, "bar.sync") || contains(*ptx, "barrier.sync")) << *ptx;
}

// OpenCL.std printf becomes OpenCL C's printf, which each pipeline lowers as its own: on NVPTX,
// CUDA's vprintf with the format string in the PTX.
TEST(SpirvReader, PrintfBuildsForNvptx) {
  std::string log;
  const std::vector<uint8_t> il = spirv_test::clang_spirv(R"(
int __attribute__((overloadable)) __spirv_ocl_printf(constant char* format, ...);
kernel void say(int v) { __spirv_ocl_printf("v=%d %s %v2hld\n", v, "text", (int2)(v, 1)); })",
                                                          &log);
  ASSERT_FALSE(il.empty()) << log;
  BuildOutput out = build_il(il, "", nvptx_target(9, 0), {});
  ASSERT_TRUE(out.success) << out.log;
  std::string error;
  std::optional<std::string> ptx = nvptx_ptx_of(out.binary, &error);
  ASSERT_TRUE(ptx) << error;
  EXPECT_TRUE(contains(*ptx, "vprintf")) << *ptx;
}

// Images from clang's SPIR-V (ImageBasic, LiteralSampler) build for NVPTX too: the CUDA device
// reads them with the same builtins as OpenCL C programs (compiler/builtins/image.cl).
TEST(SpirvReader, ImagesBuildForNvptx) {
  std::string log;
  const std::vector<uint8_t> il = spirv_test::clang_spirv(R"(
const sampler_t literal = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP | CLK_FILTER_NEAREST;
kernel void images(read_only image2d_t src, sampler_t s, write_only image3d_t dst,
                   read_write image2d_t rw, global int* sizes) {
  int2 c = (int2)(get_global_id(0), get_global_id(1));
  float4 a = read_imagef(src, s, (float2)(c.x + 0.5f, c.y + 0.5f)) + read_imagef(src, literal, c);
  write_imagef(dst, (int4)(c, 1, 0), a + read_imagef(rw, c));
  write_imageui(rw, c, (uint4)(c.x, c.y, 0, 1));
  sizes[0] = get_image_width(src) + get_image_depth(dst) + get_image_channel_order(rw);
})",
                                                          &log);
  ASSERT_FALSE(il.empty()) << log;
  BuildOutput out = build_il(il, "", nvptx_target(9, 0), {});
  ASSERT_TRUE(out.success) << out.log;
  ASSERT_EQ(out.kernels.size(), 1u);
  EXPECT_EQ(out.kernels[0].args[0].kind, ArgKind::Image);
  EXPECT_EQ(out.kernels[0].args[1].kind, ArgKind::Sampler);
  EXPECT_EQ(out.kernels[0].args[3].kind, ArgKind::Image);
  std::string error;
  std::optional<std::string> ptx = nvptx_ptx_of(out.binary, &error);
  ASSERT_TRUE(ptx) << error;
  EXPECT_TRUE(contains(*ptx, ".entry images")) << *ptx;
}

TEST(SpirvReader, CompiledObjectsLinkWithOpenClC) {
  // An IL object and an OpenCL C object in one link: the IL kernel calls a function the
  // OpenCL C program defines (Import linkage).
  std::string log;
  std::vector<uint8_t> il = spirv_test::clang_spirv(R"(
    int helper(int x);
    kernel void uses_helper(global int* p) { p[0] = helper(p[0]); })",
                                                    &log);
  ASSERT_FALSE(il.empty()) << log;
  const Target target = host_cpu_target();
  BuildOutput il_object = compile_il(il, "", target, {});
  ASSERT_TRUE(il_object.success) << il_object.log;
  BuildOutput c_object = compile("int helper(int x) { return x * 3; }", "", {}, target);
  ASSERT_TRUE(c_object.success) << c_object.log;
  BuildOutput linked = link({il_object.binary, c_object.binary}, "", target);
  ASSERT_TRUE(linked.success) << linked.log;
  ASSERT_EQ(linked.kernels.size(), 1u);
  EXPECT_EQ(linked.kernels[0].name, "uses_helper");
}

TEST(SpirvReader, RejectsWhatIsNotSpirv) {
  std::string why;
  const std::vector<uint8_t> garbage = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10,
                                        11, 12, 13, 14, 15, 16, 17, 18, 19, 20};
  EXPECT_FALSE(il_valid(garbage, &why));
  EXPECT_TRUE(contains(why, "magic")) << why;
  std::vector<uint8_t> truncated = corpus_module();
  truncated.resize(truncated.size() / 2 & ~size_t(3));
  EXPECT_FALSE(il_valid(truncated, &why));
  std::vector<uint8_t> odd = corpus_module();
  odd.pop_back();
  EXPECT_FALSE(il_valid(odd, &why));
}

TEST(SpirvReader, UnsupportedCapabilityFailsTheBuildNamingIt) {
  std::string log;
  std::vector<uint8_t> il = spirv_test::assemble(R"(
               OpCapability Addresses
               OpCapability Kernel
               OpCapability Int64
               OpCapability Pipes
               OpMemoryModel Physical64 OpenCL
               OpEntryPoint Kernel %k "k"
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
          %k = OpFunction %void None %fn
          %l = OpLabel
               OpReturn
               OpFunctionEnd
)",
                                                 &log);
  ASSERT_FALSE(il.empty()) << log;
  std::string why;
  ASSERT_TRUE(il_valid(il, &why)) << why;
  BuildOutput out = build_il(il, "", host_cpu_target(), {});
  EXPECT_FALSE(out.success);
  EXPECT_TRUE(contains(out.log, "unsupported capability Pipes")) << out.log;
}

// The modules of other producers (llvm_spirv/, run on the devices by producers_test.cpp) build
// for the GPU pipelines too: NVPTX and AMDGPU, which take the reader's module as they take
// OpenCL C's. AMD GPUs have no printf, sub-groups or generic address space yet (the build says
// so).
TEST(SpirvReader, OtherProducersModulesBuildForNvptxAndAmdgpu) {
  const std::optional<Target> amdgpu = amdgpu_target("gfx90a:sramecc+:xnack-");
  ASSERT_TRUE(amdgpu);
  size_t modules = 0;
  for (const auto& entry : std::filesystem::directory_iterator(MANIFOLD_PRODUCERS_CORPUS)) {
    if (entry.path().extension() != ".spv") continue;
    ++modules;
    const std::string name = entry.path().stem().string();
    const std::vector<uint8_t> il = spirv_test::read_file(entry.path().string());
    BuildOutput nvptx = build_il(il, "", nvptx_target(9, 0), {});
    EXPECT_TRUE(nvptx.success) << name << ":\n" << nvptx.log;
    if (name == "printf" || name == "all_subgroup_builtins" || name == "generic_address_space")
      continue;
    BuildOutput gcn = build_il(il, "", *amdgpu, {});
    EXPECT_TRUE(gcn.success) << name << ":\n" << gcn.log;
  }
  EXPECT_GE(modules, 20u) << "the corpus at " << MANIFOLD_PRODUCERS_CORPUS;
}

}  // namespace
}  // namespace manifold::compiler

namespace manifold::compiler {
namespace {

// An entry point whose name PTX cannot spell (CTS-style fuzzing found "\xCF" ending the process
// in LLVM's PTX printer): the NVPTX build fails with a log; the CPU takes any name.
TEST(SpirvReader, KernelNamesPtxCannotSpellFailTheNvptxBuild) {
  std::string log;
  std::vector<uint8_t> il = spirv_test::assemble(R"(
               OpCapability Addresses
               OpCapability Kernel
               OpMemoryModel Physical64 OpenCL
               OpEntryPoint Kernel %k "k)"
                                                 "\xc3\x8f"  // U+00CF, as UTF-8
                                                 R"("
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
          %k = OpFunction %void None %fn
          %l = OpLabel
               OpReturn
               OpFunctionEnd
)",
                                                 &log);
  ASSERT_FALSE(il.empty()) << log;
  BuildOutput nvptx = build_il(il, "", nvptx_target(9, 0), {});
  EXPECT_FALSE(nvptx.success);
  EXPECT_TRUE(contains(nvptx.log, "cannot be a PTX symbol name")) << nvptx.log;
  EXPECT_TRUE(build_il(il, "", host_cpu_target(), {}).success);
}

}  // namespace
}  // namespace manifold::compiler
