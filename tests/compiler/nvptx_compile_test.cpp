// The NVPTX pipeline without a GPU: OpenCL C programs compile to PTX for a Hopper target, and
// where CUDA's ptxas is installed the PTX assembles (what the driver's JIT would do).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <string>

#include "compiler/compiler.h"
#include "every_half_builtin.h"

namespace {

using namespace manifold::compiler;

std::string ptxas() {
  for (const char* p : {"/usr/local/cuda/bin/ptxas", "/usr/bin/ptxas"})
    if (access(p, X_OK) == 0) return p;
  return {};
}

// Runs ptxas on `ptx` for `arch`; its exit status, and what it said in *text.
int assemble(const std::string& assembler, const std::string& ptx, const std::string& name,
             const std::string& arch, std::string* text) {
  const std::string path = testing::TempDir() + "/manifold_" + name + ".ptx";
  std::ofstream(path) << ptx;
  const std::string command = assembler + " -arch=" + arch + " -o /dev/null " + path + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  char buf[512];
  while (pipe && fgets(buf, sizeof(buf), pipe)) *text += buf;
  return pipe ? pclose(pipe) : -1;
}

// Whether this ptxas compiles for `arch` (CUDA 13 dropped sm_50 to sm_72).
bool ptxas_knows(const std::string& assembler, const std::string& arch) {
  std::string text;
  assemble(assembler, ".version 6.0\n.target " + arch + "\n.address_size 64\n", "probe_" + arch,
           arch, &text);
  return text.find("is not defined") == std::string::npos;
}

// Builds `source` for compute capability sm (90: sm_90) and, where ptxas is installed, assembles
// the PTX: for that architecture where ptxas knows it, else for the oldest it does (the PTX of an
// older target is what the driver JIT-compiles for a newer GPU).
std::string expect_builds_for(unsigned sm, const char* name, const std::string& source,
                              const char* options = "") {
  const Target target = nvptx_target(sm / 10, sm % 10);
  BuildOutput out = build(source, options, target);
  EXPECT_TRUE(out.success) << name << " for sm_" << sm << ":\n" << out.log;
  if (!out.success) return {};
  std::string error;
  auto ptx = nvptx_ptx_of(out.binary, &error);
  EXPECT_TRUE(ptx.has_value()) << error;
  if (!ptx) return {};
  EXPECT_NE(ptx->find(".entry"), std::string::npos);
  const std::string assembler = ptxas();
  if (assembler.empty()) return *ptx;
  std::string arch = "sm_" + std::to_string(sm);
  if (!ptxas_knows(assembler, arch)) arch = "sm_75";
  std::string text;
  const int rc =
      assemble(assembler, *ptx, name + std::string("_sm") + std::to_string(sm), arch, &text);
  EXPECT_EQ(rc, 0) << name << " for sm_" << sm << ": ptxas -arch=" << arch << " says:\n"
                   << text << "\nPTX:\n"
                   << ptx->substr(0, 6000);
  return *ptx;
}

// *assembled: whether ptxas checked the PTX (it is not installed everywhere).
void expect_builds(const char* name, const std::string& source, const char* options = "",
                   bool* assembled = nullptr) {
  const std::string ptx = expect_builds_for(90, name, source, options);
  if (assembled) *assembled = !ptx.empty() && !ptxas().empty();
}

TEST(NvptxPipeline, TargetNamesTheComputeCapability) {
  const Target t = nvptx_target(9, 0);
  EXPECT_EQ(t.triple, "nvptx64-nvidia-cuda");
  EXPECT_EQ(t.cpu, "sm_90");
  EXPECT_EQ(t.features, "+ptx78");
  EXPECT_EQ(nvptx_target(8, 6).cpu, "sm_86");
  EXPECT_EQ(nvptx_target(13, 0).cpu, "sm_120");  // newer than LLVM knows: the newest it does
}

TEST(NvptxPipeline, VectorAddWithConstantArgument) {
  expect_builds("vadd", R"(
    kernel void add(global const float* a, constant float* b, global float* c, float s) {
      size_t i = get_global_id(0);
      c[i] = a[i] + s * b[i] + get_global_offset(0) + get_work_dim();
    })");
}

// CTS basic work_item_functions and wg_barrier on CUDA: get_work_dim() was folded to 1 when the
// shim was compiled, and work_group_barrier (OpenCL C 2.0's spelling) did not link. The work
// dimension must come from the launch state the runtime writes.
TEST(NvptxPipeline, WorkDimReadsTheLaunchStateAndWorkGroupBarrierLinks) {
  const char* source = R"(
    kernel void dims(global uint* out, local int* scratch) {
      scratch[get_local_id(0)] = get_work_dim();
      work_group_barrier(CLK_LOCAL_MEM_FENCE);
      work_group_barrier(CLK_GLOBAL_MEM_FENCE, memory_scope_work_group);
      out[get_global_id(0)] = scratch[0] + get_global_offset(1);
    })";
  expect_builds("work_dim", source, "-cl-std=CL3.0");
  BuildOutput out = build(source, "-cl-std=CL3.0", nvptx_target(9, 0));
  ASSERT_TRUE(out.success) << out.log;
  std::string error;
  auto ptx = nvptx_ptx_of(out.binary, &error);
  ASSERT_TRUE(ptx.has_value()) << error;
  // The kernel loads work_dim (at offset 24 of the state) instead of storing a constant 1.
  EXPECT_NE(ptx->find("[__manifold_launch+24]"), std::string::npos) << *ptx;
  // The state is global memory, read through the non-coherent cache, not a __constant__: a
  // module with constant data makes every launch of its kernels slower on the GPU.
  EXPECT_NE(ptx->find(".global .align 8 .b8 __manifold_launch[152] = {0, 0, 0, 0, 0, 0, 0, 0, 0, "
                      "0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1"),
            std::string::npos)
      << *ptx;
  EXPECT_NE(ptx->find("ld.global.nc.b32"), std::string::npos) << *ptx;
  EXPECT_EQ(ptx->find(".const"), std::string::npos) << *ptx;
}

// Program-scope constant data is global memory on CUDA too (a constant bank slows every launch of
// the module's kernels); data whose address escapes stays constant.
TEST(NvptxPipeline, ProgramScopeConstantsAreGlobalMemory) {
  const char* source = R"(
    constant int table[4] = {3, 1, 4, 1};
    kernel void lookup(global int* out) { out[get_global_id(0)] = table[out[0] & 3]; })";
  BuildOutput out = build(source, "", nvptx_target(9, 0));
  ASSERT_TRUE(out.success) << out.log;
  std::string error;
  auto ptx = nvptx_ptx_of(out.binary, &error);
  ASSERT_TRUE(ptx.has_value()) << error;
  EXPECT_NE(ptx->find(".global .align 4 .b8 table[16]"), std::string::npos) << *ptx;
  EXPECT_NE(ptx->find("ld.global.nc"), std::string::npos) << *ptx;
  EXPECT_EQ(ptx->find(".const"), std::string::npos) << *ptx;
}

// CTS c11_atomics on CUDA: the C11-style functions on local 64-bit atomics (and the rest of
// the family) were undefined at link: libclc has few of them.
TEST(NvptxPipeline, C11AtomicsOfEveryTypeOnLocalAndGlobalMemory) {
  // Relaxed work-group atomics on every type (every order and scope: OpenCLC30 below).
  expect_builds("c11_atomics", R"(
    #define R memory_order_relaxed
    #define WG memory_scope_work_group
    kernel void k(global atomic_long* g, global atomic_int* gi, global atomic_ulong* gu,
                  global long* out) {
      local atomic_long l[4];
      local atomic_uint lu[4];
      local atomic_flag flag;
      size_t i = get_local_id(0);
      if (i == 0) {
        atomic_init(&l[0], 5);
        atomic_store_explicit(&l[1], 7, R, WG);
        atomic_init(&lu[0], 1u);
        atomic_flag_clear_explicit(&flag, R, WG);
      }
      work_group_barrier(CLK_LOCAL_MEM_FENCE);
      long seen = atomic_load_explicit(&l[1], R, WG);
      long expected = 5;
      atomic_compare_exchange_strong_explicit(&l[0], &expected, 9, R, R, WG);
      atomic_fetch_add_explicit(&l[2], 1, R, WG);
      atomic_fetch_min_explicit(&l[3], -3, R, WG);
      atomic_fetch_xor_explicit(&lu[0], 3u, R, WG);
      atomic_exchange_explicit(g, seen, R, WG);
      atomic_fetch_max_explicit(gu, 2ul, R, WG);
      int e = 0;
      atomic_compare_exchange_weak_explicit(gi, &e, 1, R, R, WG);
      atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE, R, WG);
      bool was = atomic_flag_test_and_set_explicit(&flag, R, WG);
      out[get_global_id(0)] = seen + expected + e + was + atomic_load_explicit(&lu[0], R, WG);
    })",
                "-cl-std=CL3.0");
}

TEST(NvptxPipeline, LocalArgumentsAndBarriers) {
  expect_builds("reduce", R"(
    kernel void reduce(global const float* in, global float* out, local float* scratch, local int* other) {
      local float fixed[64];
      size_t lid = get_local_id(0);
      scratch[lid] = in[get_global_id(0)];
      fixed[lid % 64] = 1.0f;
      other[lid] = 1;
      barrier(CLK_LOCAL_MEM_FENCE);
      for (size_t s = get_local_size(0) / 2; s > 0; s /= 2) {
        if (lid < s) scratch[lid] += scratch[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
      }
      if (lid == 0) out[get_group_id(0)] = scratch[0] + fixed[3] + other[1];
    })");
}

TEST(NvptxPipeline, Atomics32And64) {
  expect_builds("atomics", R"(
    #pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
    #pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable
    kernel void count(global int* c32, global long* c64, global uint* u, local long* l) {
      atomic_inc(c32);
      atomic_add(c32 + 1, 2);
      atomic_max(c32 + 2, 5);
      atomic_cmpxchg(c32 + 3, 0, 1);
      atomic_xchg(c32 + 4, 7);
      atom_add(c64, 1L);
      atom_max(c64 + 1, 3L);
      atom_cmpxchg(c64 + 2, 0L, 1L);
      atom_inc(l);
      atomic_or(u, 4u);
      barrier(CLK_LOCAL_MEM_FENCE);
      if (get_local_id(0) == 0) atom_add(c64 + 3, *l);
    })");
}

TEST(NvptxPipeline, DoubleAndMath) {
  expect_builds("math", R"(
    #pragma OPENCL EXTENSION cl_khr_fp64 : enable
    kernel void f(global double* x, global float* y) {
      size_t i = get_global_id(0);
      x[i] = sqrt((double)i) + exp(-1.0) + sin((double)i) + pow(x[i], 1.5);
      float v = y[i];
      y[i] = native_exp(v) + native_log(v + 1.0f) + native_sin(v) + native_recip(v + 2.0f) +
             half_exp(v) + rsqrt(v + 1.0f) + fma(v, v, v) + exp2(v) + log10(v + 1.0f) +
             native_divide(v, 3.0f) + native_powr(v + 1.0f, 0.5f) + tanh(v) + erf(v);
      float4 w = native_sqrt((float4)(v, v + 1, v + 2, v + 3));
      y[i + 1] = w.x + w.w;
    })");
}

TEST(NvptxPipeline, Printf) {
  expect_builds("printf", R"(
    kernel void hello(int v, global float* f) {
      printf("v=%d f=%f s=%s vec=%v4d h=%hd c=%c l=%ld\n", v, f[0], "text", (int4)(1, 2, 3, 4),
             (short)3, 'x', (long)v);
    })");
}

// CTS printf length_specifier and vector on CUDA: vprintf misreads "hh" ("%hhd" printed '%').
// The format vprintf gets has no h/hh (the values are narrowed and widened to int instead), and
// vector conversions become one conversion per lane.
TEST(NvptxPipeline, PrintfShortLengthsAndVectorsReachVprintfAsInts) {
  BuildOutput out = build(R"(
    kernel void k(void) { printf("%#v2hhx %hhd %hx\n", (uchar2)(0xFA, 0xFB), 127, -32767); })",
                          "", nvptx_target(9, 0));
  ASSERT_TRUE(out.success) << out.log;
  std::string error;
  auto ptx = nvptx_ptx_of(out.binary, &error);
  ASSERT_TRUE(ptx.has_value()) << error;
  std::string bytes;  // how PTX spells the rewritten format: its bytes in decimal
  for (char ch : std::string("%#x,%#x %d %x\n")) bytes += std::to_string(int(ch)) + ", ";
  bytes.replace(bytes.size() - 2, 2, "}");  // the terminating zero is left implicit
  EXPECT_NE(ptx->find(bytes), std::string::npos) << "format bytes " << bytes << " in\n" << *ptx;
}

// CTS math_brute_force sqrt_cr on CUDA: with -cl-fp32-correctly-rounded-divide-sqrt (the device
// reports CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT) sqrt must be the correctly rounded instruction.
TEST(NvptxPipeline, CorrectlyRoundedSqrtWhenAskedFor) {
  const char* source = "kernel void k(global float* x) { x[0] = sqrt(x[0]); x[1] = sqrt(x[1]); }";
  const char* vector = "kernel void k(global float4* x) { x[0] = sqrt(x[0]); }";
  for (const char* s : {source, vector}) {
    BuildOutput exact = build(s, "-cl-fp32-correctly-rounded-divide-sqrt", nvptx_target(9, 0));
    ASSERT_TRUE(exact.success) << exact.log;
    std::string error;
    auto ptx = nvptx_ptx_of(exact.binary, &error);
    ASSERT_TRUE(ptx.has_value()) << error;
    EXPECT_NE(ptx->find("sqrt.rn.f32"), std::string::npos) << *ptx;
    EXPECT_EQ(ptx->find("sqrt.approx"), std::string::npos) << *ptx;
  }
}

// CTS math_brute_force isinf on CUDA: a vector relational is -1 in every true lane; libclc's
// nvptx library gave libdevice's 1. The shim's vector isinf compares (setp, selp -1).
TEST(NvptxPipeline, VectorIsinfIsAllBitsInTrueLanes) {
  BuildOutput out = build(
      "kernel void k(global float4* x, global int4* r, global double2* y, "
      "global long2* s) { r[0] = isinf(x[0]); s[0] = isinf(y[0]); }",
      "", nvptx_target(9, 0));
  ASSERT_TRUE(out.success) << out.log;
  std::string error;
  auto ptx = nvptx_ptx_of(out.binary, &error);
  ASSERT_TRUE(ptx.has_value()) << error;
  EXPECT_NE(ptx->find("-1, 0, %p"), std::string::npos) << *ptx;  // selp: -1 where true
  EXPECT_EQ(ptx->find(", 1, 0, %p"), std::string::npos) << *ptx;
}

// CTS math_brute_force on CUDA: log1p, pow, powr, atan2pi (double), tgamma, ldexp, cospi, tanpi
// come from the shim (libdevice) in every width; they must build and assemble.
TEST(NvptxPipeline, ShimMathInEveryWidth) {
  expect_builds("shim_math", R"(
    kernel void k(global double4* d, global float3* f, global int3* n, global double* s) {
      d[0] = log1p(d[1]) + pow(d[2], d[3]) + powr(d[4], d[5]) + atan2pi(d[6], d[7]);
      d[8] = ldexp(d[9], 3) + ldexp(d[10], (int4)(1, 2, 3, 4));
      f[0] = tgamma(f[1]) + ldexp(f[2], n[0]) + ldexp(f[3], 2);
      s[0] = log1p(s[1]) + pow(s[2], s[3]) + powr(s[4], s[5]) + atan2pi(s[6], s[7]);
      s[8] = tgamma(s[9]) + cospi(s[10]) + tanpi(s[11]);
      d[11] = tgamma(d[12]) + cospi(d[13]) + tanpi(d[14]);
      f[4] = cospi(f[5]) + tanpi(f[6]);
      s[12] = asinpi(s[13]) + atanpi(s[14]);
      d[15] = asinpi(d[16]) + atanpi(d[17]);
    })");
}

// CTS half vstore_half_rtp/rtn on CUDA: libclc's double forms end in a round-to-nearest
// conversion, so a tiny positive double stored with rtp gave 0 instead of the smallest half. The
// portable software conversion (compiler/builtins/vstore_half.cl) rounds from the double's bits.
TEST(NvptxPipeline, VstoreHalfOfDoublesRoundsFromTheDouble) {
  const char* source = R"(
    kernel void k(global double* d, global half* h, local half* l) {
      vstore_half_rtp(d[0], 0, h);
      vstore_half2_rtn((double2)(d[1], d[2]), 1, h);
      vstorea_half4_rtz((double4)(d[3]), 1, l);
      vstore_half(vload_half(5, l), 9, h);
    })";
  expect_builds("vstore_half", source);
  BuildOutput out = build(source, "", nvptx_target(9, 0));
  ASSERT_TRUE(out.success) << out.log;
  std::string error;
  auto ptx = nvptx_ptx_of(out.binary, &error);
  ASSERT_TRUE(ptx.has_value()) << error;
  EXPECT_EQ(ptx->find(".f16.f64"), std::string::npos) << *ptx;  // libclc's fptrunc to half
  EXPECT_EQ(ptx->find(".f32.f64"), std::string::npos) << *ptx;
}

// CTS basic kernel_memory_alignment_local on CUDA: a __local double16 argument must be 128-byte
// aligned; the dynamic shared block that holds __local arguments is declared so (the runtime
// places each argument at a multiple of 128 in it).
TEST(NvptxPipeline, LocalArgumentBlockIsAlignedForTheWidestType) {
  BuildOutput out = build(
      "kernel void k(local double16* a, local char* b, global double16* o) {"
      " o[0] = a[0] + (double16)(b[0]); }",
      "", nvptx_target(9, 0));
  ASSERT_TRUE(out.success) << out.log;
  std::string error;
  auto ptx = nvptx_ptx_of(out.binary, &error);
  ASSERT_TRUE(ptx.has_value()) << error;
  EXPECT_NE(ptx->find(".extern .shared .align 128 .b8 __manifold_dynamic_shared[]"),
            std::string::npos)
      << *ptx;
}

TEST(NvptxPipeline, StructsVectorsAndHelpers) {
  expect_builds("structs", R"(
    typedef struct { float4 a; int b; } S;
    float helper(float x) { return x * 2.0f; }
    kernel void k(S s, global float4* out, int2 p) {
      out[get_global_id(0)] = s.a * helper((float)s.b) + (float4)(p.x, p.y, 0, 0);
    })");
}

// shuffle/shuffle2 come from libclc; run-time masks keep the calls from folding away.
TEST(NvptxPipeline, ShuffleAndShuffle2) {
  expect_builds("shuffle", R"(
    kernel void k(global const uint* masks, global int* out, global double* d, global char* c) {
      uint16 m = vload16(0, masks);
      vstore8(shuffle((int4)(1, 2, 3, 4), m.lo), 0, out);
      vstore16(shuffle2((int2)(1, 2), (int2)(3, 4), m), 0, out + 8);
      vstore4(shuffle2((double8)(1.0), (double8)(2.0), convert_ulong4(m.lo.lo)), 0, d);
      vstore2(shuffle((char16)(7), convert_uchar2(m.lo.lo.lo)), 0, c);
    })");
}

// Every builtin of half (compiler/builtins/half.cl, libclc has none) links, for Hopper and for
// GPUs before sm_53, which have no half arithmetic (LLVM computes in float there). Not assembled
// here: ptxas takes most of a minute over this one large kernel.
TEST(NvptxPipeline, EveryHalfBuiltin) {
  for (unsigned major : {9u, 5u}) {
    BuildOutput out = build(kEveryHalfBuiltin, "-cl-std=CL3.0", nvptx_target(major, 0));
    ASSERT_TRUE(out.success) << "sm_" << major << "0:\n" << out.log;
    std::string error;
    auto ptx = nvptx_ptx_of(out.binary, &error);
    ASSERT_TRUE(ptx.has_value()) << error;
    EXPECT_NE(ptx->find(".entry every"), std::string::npos);
  }
}

TEST(NvptxPipeline, OpenCL30) {
  expect_builds("cl30", R"(
    kernel void k(global int* out) {
      out[get_global_id(1) * get_global_size(0) + get_global_id(0)] = (int)get_global_linear_id();
    })",
                "-cl-std=CL3.0");
}

// ---- OpenCL C 3.0's optional features on CUDA ----

TEST(NvptxPipeline, TargetReportsTheOpenCLC30FeaturesItImplements) {
  const Target t = nvptx_target(9, 0);
  EXPECT_EQ(t.opencl_c_version, 300u);
  const std::set<std::string> features(t.opencl_c_features.begin(), t.opencl_c_features.end());
  EXPECT_EQ(features,
            (std::set<std::string>{
                "__opencl_c_int64", "__opencl_c_fp64", "__opencl_c_generic_address_space",
                "__opencl_c_program_scope_global_variables", "__opencl_c_atomic_order_acq_rel",
                "__opencl_c_atomic_order_seq_cst", "__opencl_c_atomic_scope_device",
                "__opencl_c_atomic_scope_all_devices", "__opencl_c_work_group_collective_functions",
                "__opencl_c_images", "__opencl_c_read_write_images", "__opencl_c_3d_image_writes",
                "__opencl_c_fp16", "__opencl_c_subgroups"}));
}

const char* kGenericPointers = R"(
  int read_through(generic int* p) { return *p; }
  kernel void k(global int* data, global int* out) {
    local int shared_value;
    int private_value = 3;
    shared_value = 2;
    generic int* pointers[3] = {data, &shared_value, &private_value};
    int bits = 0, sum = 0;
    for (int i = 0; i < 3; ++i) {
      generic int* p = pointers[data[i] & 3];
      bits = bits * 8 + (to_global(p) != NULL) + 2 * (to_local(p) != NULL) +
             4 * (to_private(p) != NULL);
      sum += get_fence(p) + read_through(p);
      global int* g = to_global(p);
      if (g) *g += 1;
      local int* l = to_local(p);
      if (l) *l += 1;
    }
    out[0] = bits + sum + shared_value + (int)(global int*)pointers[0][0];
  })";

// Every order with every scope, on global and local memory, 32 and 64 bits, and the fences.
const char* kAtomicsEveryOrderAndScope = R"(
  #define RMW(object, order, scope) \
    r += atomic_fetch_add_explicit(object, 1, order, scope) + \
         atomic_fetch_xor_explicit(object, 1, order, scope) + \
         atomic_exchange_explicit(object, 1, order, scope)
  #define ORDERS(object, scope) \
    RMW(object, memory_order_relaxed, scope); RMW(object, memory_order_acquire, scope); \
    RMW(object, memory_order_release, scope); RMW(object, memory_order_acq_rel, scope); \
    RMW(object, memory_order_seq_cst, scope); \
    r += atomic_load_explicit(object, memory_order_acquire, scope) + \
         atomic_load_explicit(object, memory_order_seq_cst, scope); \
    atomic_store_explicit(object, r, memory_order_release, scope); \
    atomic_store_explicit(object, r, memory_order_seq_cst, scope)
  #define SCOPES(object) \
    ORDERS(object, memory_scope_work_item); ORDERS(object, memory_scope_work_group); \
    ORDERS(object, memory_scope_device); ORDERS(object, memory_scope_all_svm_devices)
  #define FENCES(flags) \
    atomic_work_item_fence(flags, memory_order_acquire, memory_scope_work_item); \
    atomic_work_item_fence(flags, memory_order_release, memory_scope_work_group); \
    atomic_work_item_fence(flags, memory_order_acq_rel, memory_scope_device); \
    atomic_work_item_fence(flags, memory_order_seq_cst, memory_scope_all_svm_devices)
  kernel void k(global atomic_int* gi, global atomic_long* gl, global long* out) {
    local atomic_int li;
    local atomic_long ll;
    long r = 0;
    if (get_local_id(0) == 0) { atomic_init(&li, 0); atomic_init(&ll, 0); }
    work_group_barrier(CLK_LOCAL_MEM_FENCE);
    SCOPES(gi); SCOPES(gl); SCOPES(&li); SCOPES(&ll);
    int e = 0;
    atomic_compare_exchange_strong_explicit(gi, &e, 1, memory_order_seq_cst, memory_order_acquire,
                                            memory_scope_device);
    atomic_compare_exchange_weak_explicit(&li, &e, 1, memory_order_acq_rel, memory_order_relaxed,
                                          memory_scope_work_group);
    long f = 0;
    atomic_compare_exchange_strong_explicit(&ll, &f, 2, memory_order_release,
                                            memory_order_relaxed, memory_scope_all_svm_devices);
    FENCES(CLK_GLOBAL_MEM_FENCE); FENCES(CLK_LOCAL_MEM_FENCE);
    FENCES(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
    mem_fence(CLK_GLOBAL_MEM_FENCE); read_mem_fence(CLK_LOCAL_MEM_FENCE);
    write_mem_fence(CLK_GLOBAL_MEM_FENCE);
    out[get_global_id(0)] = r + e + f + atomic_fetch_add(gi, 1) + atomic_load(&ll) +
                            atomic_flag_test_and_set_explicit((global atomic_flag*)gi + 1,
                                                              memory_order_acq_rel,
                                                              memory_scope_work_group);
  })";

const char* kProgramScopeGlobals = R"(
  global int counter = 5;
  global float table[4] = {1.5f, 2.5f, 3.5f, 4.5f};
  global int* global pointer_to_counter = &counter;
  static global long hidden = -1;
  global uint hits;
  int next_ticket(void) { static global int ticket = 100; return ticket++; }
  kernel void bump(void) {
    atomic_inc(&hits);
    if (get_global_id(0) == 0) { *pointer_to_counter += 1; table[hits & 3] += 1.0f; hidden--; }
  }
  kernel void read_back(global float* out) {
    out[0] = counter; out[1] = hits; out[2] = table[0] + table[3]; out[3] = hidden;
    out[4] = next_ticket();
  })";

// Each collective of each type the device has, with every scan and broadcast form.
const char* kCollectives = R"(
  #pragma OPENCL EXTENSION cl_khr_fp16 : enable
  #define ALL(T) \
    kernel void k_##T(global T* v, global int* p) { \
      size_t i = get_global_id(0); \
      T x = v[i]; \
      v[i] = work_group_reduce_add(x) + work_group_reduce_min(x) + work_group_reduce_max(x) + \
             work_group_scan_inclusive_add(x) + work_group_scan_inclusive_min(x) + \
             work_group_scan_inclusive_max(x) + work_group_scan_exclusive_add(x) + \
             work_group_scan_exclusive_min(x) + work_group_scan_exclusive_max(x) + \
             work_group_broadcast(x, 1) + work_group_broadcast(x, 1, 0) + \
             work_group_broadcast(x, 0, 1, 0); \
      p[i] = work_group_all(p[i]) + work_group_any(p[i]); \
    }
  ALL(int) ALL(uint) ALL(long) ALL(ulong) ALL(float) ALL(double) ALL(half)
)";

const char* kNonUniformQueries = R"(
  kernel void k(global ulong* out) {
    size_t i = get_global_linear_id();
    out[i] = get_global_id(0) + get_local_id(1) + get_local_size(2) + get_enqueued_local_size(0) +
             get_group_id(1) + get_num_groups(2) + get_global_size(0) + get_local_linear_id() +
             get_global_offset(1) + get_work_dim();
  })";

// What the CUDA device reports must build for every GPU generation LLVM targets, and its PTX
// must assemble (ptxas, where installed).
class NvptxOpenCLC30 : public ::testing::TestWithParam<unsigned> {};

TEST_P(NvptxOpenCLC30, FeatureKernelsBuildAndAssemble) {
  const unsigned sm = GetParam();
  expect_builds_for(sm, "generic", kGenericPointers, "-cl-std=CL3.0");
  expect_builds_for(sm, "atomics", kAtomicsEveryOrderAndScope, "-cl-std=CL3.0");
  expect_builds_for(sm, "globals", kProgramScopeGlobals, "-cl-std=CL3.0");
  expect_builds_for(sm, "collectives", kCollectives, "-cl-std=CL3.0");
  expect_builds_for(sm, "non_uniform", kNonUniformQueries, "-cl-std=CL3.0");
}

INSTANTIATE_TEST_SUITE_P(ComputeCapabilities, NvptxOpenCLC30,
                         ::testing::Values(50u, 60u, 70u, 75u, 80u, 86u, 90u),
                         [](const auto& info) { return "sm_" + std::to_string(info.param); });

TEST(NvptxPipeline, PtxasIsPresentOrTheAssemblyChecksAreSkipped) {
  if (ptxas().empty()) GTEST_SKIP() << "no ptxas: the PTX of these tests is not assembled";
  for (const char* arch : {"sm_50", "sm_60", "sm_70"})
    if (!ptxas_knows(ptxas(), arch))
      std::printf("note: this ptxas has no %s: its PTX is assembled for sm_75\n", arch);
}

std::string ptx_for(unsigned sm, const char* source, const char* options = "-cl-std=CL3.0") {
  BuildOutput out = build(source, options, nvptx_target(sm / 10, sm % 10));
  EXPECT_TRUE(out.success) << out.log;
  std::string error;
  return nvptx_ptx_of(out.binary, &error).value_or("");
}

// Whether the first memory operation after `first` in the PTX begins with `second`.
bool next_memory_operation_is(const std::string& ptx, const std::string& first,
                              const std::string& second) {
  size_t at = ptx.find(first);
  if (at == std::string::npos) return false;
  at = ptx.find('\n', at);
  while (at != std::string::npos) {
    const size_t begin = ptx.find_first_not_of(" \t\n", at);
    if (begin == std::string::npos) return false;
    for (const char* memory : {"ld.", "st.", "atom.", "red.", "fence.", "membar."})
      if (ptx.compare(begin, std::strlen(memory), memory) == 0)
        return ptx.compare(begin, second.size(), second) == 0;
    at = ptx.find('\n', begin);
  }
  return false;
}

// Clang's NVPTX target drops OpenCL's scopes and LLVM's NVPTX backend the orders of atomicrmw:
// the pipeline puts both back (compiler/nvptx_atomics.h).
TEST(NvptxPipeline, AtomicsKeepTheirScopesAndOrders) {
  const std::string ptx = ptx_for(90, R"(
    kernel void k(global atomic_int* g, global int* out) {
      local atomic_int l;
      if (get_local_id(0) == 0) atomic_init(&l, 0);
      work_group_barrier(CLK_LOCAL_MEM_FENCE);
      out[0] = atomic_load_explicit(g, memory_order_acquire, memory_scope_device);
      atomic_store_explicit(g + 1, 1, memory_order_release, memory_scope_work_group);
      out[1] = atomic_fetch_add_explicit(g + 2, 1, memory_order_seq_cst, memory_scope_work_group);
      out[2] = atomic_fetch_add_explicit(&l, 1, memory_order_acq_rel, memory_scope_work_group);
      out[3] = atomic_fetch_or(g + 3, 4);  // seq_cst, device
      atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE, memory_order_release,
                             memory_scope_all_svm_devices);
    })");
  EXPECT_NE(ptx.find("ld.acquire.gpu.global.b32"), std::string::npos) << ptx;
  EXPECT_NE(ptx.find("st.release.cta.global.b32"), std::string::npos) << ptx;
  // A seq_cst read-modify-write: a full fence of its scope, then an acquire atom (CUDA's mapping).
  EXPECT_TRUE(next_memory_operation_is(ptx, "fence.sc.cta;", "atom.acquire.cta.global.add.u32"))
      << ptx;
  // An acq_rel one is one ordered atom, of __local memory (not generic), with no fence around it.
  EXPECT_NE(ptx.find("atom.acq_rel.cta.shared.add.u32"), std::string::npos) << ptx;
  EXPECT_TRUE(next_memory_operation_is(ptx, "fence.sc.gpu;", "atom.acquire.gpu.global.or.b32"))
      << ptx;
  EXPECT_NE(ptx.find("fence.acq_rel.sys"), std::string::npos) << ptx;
  EXPECT_EQ(ptx.find("fence.acq_rel.cta"), std::string::npos) << ptx;
  EXPECT_EQ(ptx.find("fence.acq_rel.gpu"), std::string::npos) << ptx;
  // Nothing else is system-scoped (volatile atomics were, and stayed generic).
  size_t system = 0;
  for (size_t at = ptx.find(".sys"); at != std::string::npos; at = ptx.find(".sys", at + 1))
    ++system;
  EXPECT_EQ(system, 1u) << ptx;
}

// Every read-modify-write PTX's atom has an ordered form of keeps its operation, width and address
// space; a relaxed one stays a plain atom, and one PTX has no ordered form of keeps the fences.
TEST(NvptxPipeline, OrderedReadModifyWritesAreOrderedAtoms) {
  const std::string ptx = ptx_for(90, R"(
    #pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
    #pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable
    kernel void k(global atomic_long* g, global atomic_uint* u, global long* out,
                  local atomic_long* l) {
      out[0] = atomic_fetch_sub_explicit(g, 3, memory_order_release, memory_scope_device);
      out[1] = atomic_fetch_min_explicit(g + 1, 3, memory_order_acquire, memory_scope_work_group);
      out[2] = atomic_fetch_max_explicit(u, 3u, memory_order_acq_rel, memory_scope_device);
      out[3] = atomic_exchange_explicit(l, 5, memory_order_seq_cst, memory_scope_work_group);
      out[4] = atomic_fetch_xor_explicit(l + 1, 5, memory_order_relaxed, memory_scope_work_group);
      out[5] = atomic_fetch_add_explicit(u + 1, 1u, memory_order_seq_cst,
                                         memory_scope_all_svm_devices);
    })");
  for (const char* expected : {"atom.release.gpu.global.add.u64", "atom.acquire.cta.global.min.s64",
                               "atom.acq_rel.gpu.global.max.u32", "atom.shared.xor.b64"})
    EXPECT_NE(ptx.find(expected), std::string::npos) << expected << "\n" << ptx;
  EXPECT_TRUE(next_memory_operation_is(ptx, "fence.sc.cta;", "atom.acquire.cta.shared.exch.b64"))
      << ptx;
  EXPECT_TRUE(next_memory_operation_is(ptx, "fence.sc.sys;", "atom.acquire.sys.global.add.u32"))
      << ptx;
  // fetch_sub adds the negated operand.
  EXPECT_NE(ptx.find("-3"), std::string::npos) << ptx;
  EXPECT_EQ(ptx.find("fence.acq_rel"), std::string::npos) << ptx;
}

// A warp's read-modify-writes of one address become one atom when all 32 lanes run them together
// (compiler/nvptx_warp_atomics.h); each lane's own atom stays beside it. Compare-exchange is not
// combined, nor an atomic on an address computed from loaded data or from the thread index.
TEST(NvptxPipeline, WarpWideReadModifyWritesOfOneAddressAreOneAtom) {
  const std::string ptx = expect_builds_for(90, "warp_atomics", R"(
    kernel void k(global int* g, global atomic_int* a, global int* out, local uint* l) {
      size_t id = get_global_id(0);
      out[id] = atomic_or(g + id / 32, 1 << get_local_id(0) % 32);
      atomic_inc(l);
      out[id + 1] = atomic_cmpxchg(g + 1, 0, 1);
      atomic_inc(l + 1 + g[id] % 8);  // a histogram's bin: the address comes from loaded data
      atomic_add(g + 64 + id, 2);     // element `id`: a different address in each lane
      out[id + 2] = atomic_fetch_xor_explicit(a, (int)id, memory_order_acq_rel,
                                              memory_scope_device);
    })",
                                            "-cl-std=CL3.0");
  const auto count = [&](const std::string& text) {
    size_t n = 0;
    for (size_t at = ptx.find(text); at != std::string::npos; at = ptx.find(text, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("activemask.b32"), 3u) << ptx;
  // The xor's address is a kernel argument: the same in every lane without asking.
  EXPECT_EQ(count("vote.sync.all.pred"), 2u) << ptx;
  // The prefix scans of the or's and the xor's operands; the increment's constant needs none.
  EXPECT_EQ(count("shfl.sync.up.b32"), 12u) << ptx;
  // An ordered operation's barriers: the other lanes' accesses before lane 0's, and after.
  EXPECT_EQ(count("bar.warp.sync"), 2u) << ptx;
  EXPECT_EQ(count("atom.global.or.b32"), 2u) << ptx;
  EXPECT_EQ(count("atom.acq_rel.gpu.global.xor.b32"), 2u) << ptx;
  EXPECT_EQ(count(".shared.add.u32"), 3u) << ptx;  // the bin's once
  EXPECT_EQ(count(".cas.b32"), 1u) << ptx;
  EXPECT_EQ(count("atom.global.add.u32"), 1u) << ptx;
}

// Before sm_70 PTX has no ordered loads, stores or atomics (LLVM's backend ended the process on
// them): relaxed ones between membar fences.
TEST(NvptxPipeline, AtomicOrdersBeforeVoltaAreFences) {
  const std::string ptx = ptx_for(60, R"(
    kernel void k(global atomic_int* g, global int* out) {
      out[0] = atomic_load_explicit(g, memory_order_acquire, memory_scope_device);
      atomic_store_explicit(g + 1, 1, memory_order_seq_cst, memory_scope_work_group);
      int e = 0;
      atomic_compare_exchange_strong(g + 2, &e, 1);
      atomic_work_item_fence(CLK_IMAGE_MEM_FENCE, memory_order_acq_rel, memory_scope_work_item);
    })");
  EXPECT_NE(ptx.find("ld.volatile.global.b32"), std::string::npos) << ptx;
  EXPECT_NE(ptx.find("membar.gl"), std::string::npos) << ptx;
  EXPECT_NE(ptx.find("membar.cta;\n\tst.volatile.global.b32"), std::string::npos) << ptx;
  EXPECT_EQ(ptx.find(".acquire"), std::string::npos) << ptx;
  EXPECT_EQ(ptx.find(".release"), std::string::npos) << ptx;
}

TEST(NvptxPipeline, GenericPointersAskTheHardwareWhereTheyPoint) {
  const std::string ptx = ptx_for(90, kGenericPointers);
  for (const char* test : {"isspacep.global", "isspacep.shared", "isspacep.local"})
    EXPECT_NE(ptx.find(test), std::string::npos) << test << "\n" << ptx;
}

TEST(NvptxPipeline, ProgramScopeGlobalsAreModuleVariables) {
  BuildOutput out = build(kProgramScopeGlobals, "-cl-std=CL3.0", nvptx_target(9, 0));
  ASSERT_TRUE(out.success) << out.log;
  std::string error;
  const std::string ptx = nvptx_ptx_of(out.binary, &error).value_or("");
  EXPECT_NE(ptx.find(".global .align 4 .u32 counter = 5;"), std::string::npos) << ptx;
  EXPECT_NE(ptx.find(".global .align 4 .b8 table[16] = {0, 0, 192, 63"), std::string::npos) << ptx;
  // counter, table, pointer_to_counter, hidden, hits, ticket.
  EXPECT_EQ(global_variables_size(out.binary), 4u + 16 + 8 + 8 + 4 + 4);
}

// The collectives' scratch is static shared memory of its own, beside the launch's dynamic block
// (which the runtime sizes for the __local arguments alone).
TEST(NvptxPipeline, CollectivesUseShufflesAndAStaticScratch) {
  const std::string ptx = ptx_for(90, R"(
    kernel void k(global int* v, local int* scratch) {
      size_t i = get_global_id(0);
      scratch[get_local_id(0)] = v[i];
      v[i] = work_group_reduce_add(scratch[0]) + work_group_scan_exclusive_min(v[i]) +
             work_group_all(v[i]);
    })");
  EXPECT_NE(ptx.find(".shared .align 8 .b8 __manifold_collective_slots[520];"), std::string::npos)
      << ptx;
  EXPECT_NE(ptx.find(".extern .shared .align 128 .b8 __manifold_dynamic_shared[]"),
            std::string::npos)
      << ptx;
  EXPECT_NE(ptx.find("shfl.sync.down.b32"), std::string::npos) << ptx;
  EXPECT_NE(ptx.find("shfl.sync.up.b32"), std::string::npos) << ptx;
  EXPECT_NE(ptx.find("bar.red.and.pred"), std::string::npos) << ptx;
}

// Images on CUDA: the image builtins (compiler/builtins/image.cl, the software path over the
// descriptors of compiler/image_abi.h) on every image type, with samplers from arguments and from
// the source, read_write images and 3D writes.
TEST(NvptxPipeline, ImagesOfEveryTypeWithEverySamplerSource) {
  const Target target = nvptx_target(9, 0);
  EXPECT_TRUE(target.images);
  EXPECT_TRUE(target.has_feature("__opencl_c_images"));
  EXPECT_TRUE(target.has_feature("__opencl_c_read_write_images"));
  EXPECT_TRUE(target.has_feature("__opencl_c_3d_image_writes"));
  const char* source = R"(
    const sampler_t lit = CLK_NORMALIZED_COORDS_TRUE | CLK_ADDRESS_MIRRORED_REPEAT | CLK_FILTER_LINEAR;
    kernel void every(read_only image1d_t a, read_only image1d_array_t b, read_only image2d_t c,
                      read_only image2d_array_t d, read_only image3d_t e,
                      read_only image1d_buffer_t f, write_only image3d_t g, read_write image2d_t h,
                      write_only image2d_array_t i, sampler_t s, global float4* out,
                      global int4* iout) {
      const sampler_t local_lit = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP | CLK_FILTER_NEAREST;
      int x = get_global_id(0);
      float4 acc = read_imagef(a, s, x * 0.5f) + read_imagef(b, lit, (float2)(x, 1)) +
                   read_imagef(c, local_lit, (int2)(x, 0)) +
                   read_imagef(d, lit, (float4)(0.5f, 0.5f, 1.0f, 0.0f)) +
                   read_imagef(e, s, (float4)(x, 1.0f, 2.0f, 0.0f)) + read_imagef(f, x);
      int4 v = read_imagei(c, s, (float2)(x, 0.0f)) +
               as_int4(read_imageui(e, local_lit, (int4)(x, 0, 0, 0)));
      write_imagef(g, (int4)(x, 1, 1, 0), acc);
      write_imageui(h, (int2)(x, 0), read_imageui(h, (int2)(x, 0)) + 1u);
      atomic_work_item_fence(CLK_IMAGE_MEM_FENCE, memory_order_acq_rel, memory_scope_work_item);
      write_imagei(i, (int4)(x, 0, 1, 0), v);
      out[x] = acc + (float4)(get_image_width(a), get_image_dim(e).z, get_image_array_size(d),
                              get_image_channel_order(h) + get_image_channel_data_type(i));
      iout[x] = v;
    })";
  bool assembled = false;
  expect_builds("images", source, "-cl-std=CL3.0", &assembled);
  if (HasFatalFailure()) return;
  BuildOutput out = build(source, "-cl-std=CL3.0", target);
  ASSERT_TRUE(out.success) << out.log;
  std::string error;
  auto ptx = nvptx_ptx_of(out.binary, &error);
  ASSERT_TRUE(ptx.has_value()) << error;
  // Descriptor fields do not change while a kernel runs: read through the non-coherent cache.
  EXPECT_NE(ptx->find("ld.global.nc"), std::string::npos);
  // An image is the address of its descriptor, a sampler its bits: one 64-bit parameter each.
  for (int p = 0; p < 10; ++p)
    EXPECT_NE(ptx->find(".param .u64 .ptr .global .align 1 every_param_" + std::to_string(p) + ","),
              std::string::npos)
        << "parameter " << p;
  // The general format conversions stay calls (compiler/stages.h, kOutlinedBuiltinPrefix).
  EXPECT_NE(
      ptx->find(".func  (.param .align 16 .b8 func_retval0[16]) __manifold_outlined_decode_f("),
      std::string::npos);
  if (!assembled) GTEST_SKIP() << "compiled to PTX, but not assembled: no ptxas here";
}

// OpenCL C 1.2 programs (the default) read and write images too; integer coordinates without a
// sampler, and the sRGB table of image.cl, which must not land in the constant bank.
TEST(NvptxPipeline, ImagesInOpenCL12) {
  bool assembled = false;
  expect_builds("images12", R"(
    kernel void copy(read_only image2d_t in, write_only image2d_t out, sampler_t s) {
      int2 c = (int2)(get_global_id(0), get_global_id(1));
      write_imagef(out, c, read_imagef(in, s, c) * 0.5f);
    })",
                "", &assembled);
  if (!assembled) GTEST_SKIP() << "compiled to PTX, but not assembled: no ptxas here";
}

// Sub-groups are warps: every function of cl_khr_subgroups and the cl_khr_subgroup_* extensions
// builds, and assembles for Turing, Ampere and Hopper; redux.sync only where the GPU has it.
TEST(NvptxPipeline, SubGroupFunctionsOnWarps) {
  const Target target = nvptx_target(9, 0);
  EXPECT_TRUE(target.has_feature("__opencl_c_subgroups"));
  EXPECT_EQ(target.sub_group_size, 32u);
  for (const char* extension :
       {"cl_khr_subgroups", "cl_khr_subgroup_extended_types", "cl_khr_subgroup_non_uniform_vote",
        "cl_khr_subgroup_ballot", "cl_khr_subgroup_non_uniform_arithmetic",
        "cl_khr_subgroup_shuffle", "cl_khr_subgroup_shuffle_relative",
        "cl_khr_subgroup_clustered_reduce"})
    EXPECT_NE(std::find(target.extensions.begin(), target.extensions.end(), extension),
              target.extensions.end())
        << extension;
  const char* source = R"(
    #pragma OPENCL EXTENSION cl_khr_fp16 : enable
    #define EACH_TYPE(M) M(char) M(uchar) M(short) M(ushort) M(int) M(uint) M(long) M(ulong) \
                         M(float) M(double) M(half)
    #define USE(T)                                                                          \
      kernel void use_##T(global T* p, global int* q, uint cluster) {                       \
        size_t g = get_global_id(0);                                                        \
        T x = p[g];                                                                         \
        T r = sub_group_reduce_add(x) + sub_group_reduce_min(x) + sub_group_reduce_max(x) + \
              sub_group_scan_inclusive_add(x) + sub_group_scan_exclusive_max(x) +           \
              sub_group_broadcast(x, 1) + sub_group_shuffle(x, 3) +                         \
              sub_group_shuffle_xor(x, 1) + sub_group_shuffle_up(x, 1) +                    \
              sub_group_shuffle_down(x, 2) + sub_group_broadcast_first(x) +                 \
              sub_group_clustered_reduce_mul(x, 4) + sub_group_clustered_reduce_min(x, 8);  \
        if (q[g]) r += sub_group_non_uniform_reduce_add(x) +                                \
                       sub_group_non_uniform_scan_inclusive_mul(x) +                        \
                       sub_group_non_uniform_scan_exclusive_min(x) +                        \
                       sub_group_non_uniform_broadcast(x, 0);                               \
        q[g] += sub_group_non_uniform_all_equal(x);                                         \
        p[g] = r;                                                                           \
        vstore4(sub_group_broadcast(vload4(g, p), 2), g, p);                                \
      }
    EACH_TYPE(USE)
    kernel void other(global uint* out, global long* l) {
      size_t g = get_global_id(0);
      uint4 b = sub_group_ballot(out[g] > 3);
      out[g] = get_sub_group_size() + get_max_sub_group_size() + get_num_sub_groups() +
               get_enqueued_num_sub_groups() + get_sub_group_id() + get_sub_group_local_id() +
               sub_group_all(out[g]) + sub_group_any(out[g]) + sub_group_elect() +
               sub_group_non_uniform_all(out[g]) + sub_group_non_uniform_any(out[g]) +
               sub_group_inverse_ballot(b) + sub_group_ballot_bit_extract(b, 3) +
               sub_group_ballot_bit_count(b) + sub_group_ballot_inclusive_scan(b) +
               sub_group_ballot_exclusive_scan(b) + sub_group_ballot_find_lsb(b) +
               sub_group_ballot_find_msb(b) + get_sub_group_eq_mask().x +
               get_sub_group_ge_mask().x + get_sub_group_gt_mask().x +
               get_sub_group_le_mask().x + get_sub_group_lt_mask().x +
               sub_group_non_uniform_reduce_logical_xor((int)out[g]) +
               sub_group_clustered_reduce_logical_and((int)out[g], 2) +
               sub_group_non_uniform_reduce_and(out[g]) + sub_group_clustered_reduce_xor(out[g], 16);
      l[g] = sub_group_non_uniform_scan_exclusive_or(l[g]);
      sub_group_barrier(CLK_LOCAL_MEM_FENCE);
      sub_group_barrier(CLK_GLOBAL_MEM_FENCE, memory_scope_sub_group);
      vstore16(sub_group_non_uniform_broadcast(vload16(g, (global double*)l), 5), g,
               (global double*)l);
    }
    // The kernel corpus's form: scans in divergent code beside clustered reductions of every
    // cluster size (ptxas failed register allocation on it when those looped over the lanes).
    kernel void clustered_beside_scans(global const int* in, global const int* taken,
                                       global int* out, global int* clustered, uint cluster) {
      size_t g = get_global_id(0);
      int x = in[g];
      if (taken[g]) {
        out[3 * g] = sub_group_non_uniform_reduce_add(x);
        out[3 * g + 1] = sub_group_non_uniform_scan_inclusive_add(x);
        out[3 * g + 2] = sub_group_non_uniform_scan_exclusive_add(x);
      }
      switch (cluster) {
        case 1: clustered[g] = sub_group_clustered_reduce_add(x, 1); break;
        case 2: clustered[g] = sub_group_clustered_reduce_add(x, 2); break;
        case 4: clustered[g] = sub_group_clustered_reduce_add(x, 4); break;
        case 8: clustered[g] = sub_group_clustered_reduce_add(x, 8); break;
        case 16: clustered[g] = sub_group_clustered_reduce_add(x, 16); break;
        case 32: clustered[g] = sub_group_clustered_reduce_add(x, 32); break;
        case 64: clustered[g] = sub_group_clustered_reduce_add(x, 64); break;
        case 128: clustered[g] = sub_group_clustered_reduce_add(x, 128); break;
      }
    })";
  for (const auto& [major, minor] : {std::pair{7u, 5u}, std::pair{8u, 0u}, std::pair{9u, 0u}}) {
    SCOPED_TRACE("sm_" + std::to_string(major * 10 + minor));
    const std::string ptx = expect_builds_for(
        major * 10 + minor, ("subgroups_sm" + std::to_string(major * 10 + minor)).c_str(), source,
        "-cl-std=CL3.0");
    EXPECT_NE(ptx.find("shfl.sync.idx.b32"), std::string::npos);
    EXPECT_NE(ptx.find("activemask.b32"), std::string::npos);
    EXPECT_NE(ptx.find("vote.sync.ballot.b32"), std::string::npos);
    EXPECT_NE(ptx.find("bar.warp.sync"), std::string::npos);
    EXPECT_EQ(ptx.find("redux.sync") != std::string::npos, major >= 8);
  }
  // OpenCL C 2.0 programs see the functions through cl_khr_subgroups.
  expect_builds("subgroups_cl20", R"(
    #pragma OPENCL EXTENSION cl_khr_subgroups : enable
    kernel void k(global int* p) { p[get_global_id(0)] = sub_group_reduce_add(p[0]); })",
                "-cl-std=CL2.0");
}

}  // namespace
