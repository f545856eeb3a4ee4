// clCreateProgramWithIL through the ICD loader: a corpus of kernels made SPIR-V by clang-22's
// SPIR-V target gives the same results as the same kernels built from OpenCL C; the IL queries,
// specialization constants and the spec's error codes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cl_test.h"
#include "spirv_tools.h"

using namespace cltest;

namespace {

// One kernel argument: a buffer the kernel reads or writes (count elements of 4 bytes, ints or
// floats), __local memory, or a value.
struct Arg {
  enum Kind { In, Out, Local, Value } kind;
  size_t count = 0;  // elements of 4 bytes (buffers, local memory)
  bool floats = false;
  std::vector<uint8_t> value;  // Value
};

Arg in(size_t n, bool floats = false) { return {Arg::In, n, floats, {}}; }
Arg out(size_t n, bool floats = false) { return {Arg::Out, n, floats, {}}; }
Arg local(size_t n) { return {Arg::Local, n, false, {}}; }
template <class T>
Arg value(T v) {
  Arg a{Arg::Value, 0, false, std::vector<uint8_t>(sizeof(T))};
  std::memcpy(a.value.data(), &v, sizeof(T));
  return a;
}

struct Case {
  const char* name;
  const char* source;
  const char* kernel;
  size_t global[2];
  size_t local[2];
  std::vector<Arg> args;
};

#include "corpus.inc"

// Test names show the case's name, not its bytes.
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

std::string build_log(cl_program p, cl_device_id d) {
  size_t size = 0;
  clGetProgramBuildInfo(p, d, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
  std::string log(size, '\0');
  clGetProgramBuildInfo(p, d, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
  return log;
}

class SpirvCorpus : public ContextTest, public ::testing::WithParamInterface<Case> {
 protected:
  void SetUp() override {
    ContextTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (deviceString(device_, CL_DEVICE_IL_VERSION).find("SPIR-V_1.2") == std::string::npos)
      GTEST_SKIP() << "the device takes no SPIR-V 1.2";
    if (!spirv_test::tools_present())
      GTEST_SKIP() << "no " << MANIFOLD_TEST_CLANG << " here to make the SPIR-V";
  }

  // Runs the case's kernel from `program` on fixed inputs; the Out buffers' bytes.
  std::vector<std::vector<uint8_t>> run(cl_program program, const Case& c) {
    cl_int err = CL_SUCCESS;
    Kernel kernel(clCreateKernel(program, c.kernel, &err));
    EXPECT_EQ(Err(CL_SUCCESS), Err(err)) << c.kernel;
    if (err != CL_SUCCESS) return {};
    std::vector<Mem> buffers;
    std::vector<std::vector<uint8_t>> results;
    std::mt19937 random(42);
    for (cl_uint i = 0; i < c.args.size(); ++i) {
      const Arg& a = c.args[i];
      if (a.kind == Arg::Local) {
        EXPECT_EQ(Err(CL_SUCCESS), Err(clSetKernelArg(kernel, i, a.count * 4, nullptr)));
        continue;
      }
      if (a.kind == Arg::Value) {
        EXPECT_EQ(Err(CL_SUCCESS), Err(clSetKernelArg(kernel, i, a.value.size(), a.value.data())));
        continue;
      }
      std::vector<uint8_t> data(a.count * 4, 0);
      for (size_t e = 0; e < a.count && a.kind == Arg::In; ++e) {
        if (a.floats) {
          const float f = std::uniform_real_distribution<float>(-4.0f, 4.0f)(random);
          std::memcpy(&data[e * 4], &f, 4);
        } else {
          const int32_t v = std::uniform_int_distribution<int32_t>(-1000, 1000)(random);
          std::memcpy(&data[e * 4], &v, 4);
        }
      }
      buffers.push_back(
          makeBuffer(data.size(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, data.data()));
      cl_mem m = buffers.back();
      EXPECT_EQ(Err(CL_SUCCESS), Err(clSetKernelArg(kernel, i, sizeof(cl_mem), &m)));
    }
    const cl_uint dims = c.global[1] ? 2 : 1;
    EXPECT_EQ(Err(CL_SUCCESS), Err(clEnqueueNDRangeKernel(queue_, kernel, dims, nullptr, c.global,
                                                          c.local, 0, nullptr, nullptr)));
    size_t b = 0;
    for (const Arg& a : c.args) {
      if (a.kind != Arg::In && a.kind != Arg::Out) continue;
      std::vector<uint8_t> bytes = read(buffers[b++], a.count * 4);
      if (a.kind == Arg::Out) results.push_back(std::move(bytes));
    }
    return results;
  }

  Program build_source(const Case& c) {
    cl_int err = CL_SUCCESS;
    const char* source = c.source;
    Program p(clCreateProgramWithSource(context_, 1, &source, nullptr, &err));
    EXPECT_EQ(Err(CL_SUCCESS), Err(err));
    EXPECT_EQ(Err(CL_SUCCESS),
              Err(clBuildProgram(p, 1, &device_, "-cl-std=CL2.0", nullptr, nullptr)));
    return p;
  }

  Program build_il(const std::vector<uint8_t>& il) {
    cl_int err = CL_SUCCESS;
    Program p(clCreateProgramWithIL(context_, il.data(), il.size(), &err));
    EXPECT_EQ(Err(CL_SUCCESS), Err(err));
    if (!p) return p;
    err = clBuildProgram(p, 1, &device_, "", nullptr, nullptr);
    EXPECT_EQ(Err(CL_SUCCESS), Err(err)) << build_log(p, device_);
    return p;
  }
};

bool close_enough(float a, float b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  return std::fabs(a - b) <= 1e-5f * std::max(1.0f, std::fabs(b));
}

TEST_P(SpirvCorpus, SameResultsAsOpenClC) {
  const Case& c = GetParam();
  std::string log;
  const std::vector<uint8_t> il = spirv_test::clang_spirv(c.source, &log);
  ASSERT_FALSE(il.empty()) << log;
  Program from_source = build_source(c);
  Program from_il = build_il(il);
  if (HasFailure()) return;
  const auto expected = run(from_source, c);
  const auto actual = run(from_il, c);
  ASSERT_EQ(expected.size(), actual.size());
  size_t out_index = 0;
  for (const Arg& a : c.args) {
    if (a.kind != Arg::Out) continue;
    const auto& e = expected[out_index];
    const auto& g = actual[out_index];
    for (size_t k = 0; k < a.count; ++k) {
      if (a.floats) {
        float x, y;
        std::memcpy(&x, &e[k * 4], 4);
        std::memcpy(&y, &g[k * 4], 4);
        ASSERT_TRUE(close_enough(y, x)) << "output " << out_index << "[" << k << "]: " << y
                                        << " from IL, " << x << " from OpenCL C";
      } else {
        int32_t x, y;
        std::memcpy(&x, &e[k * 4], 4);
        std::memcpy(&y, &g[k * 4], 4);
        ASSERT_EQ(y, x) << "output " << out_index << "[" << k << "]";
      }
    }
    ++out_index;
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, SpirvCorpus, ::testing::ValuesIn(kCorpus),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return std::string(info.param.name);
                         });

class SpirvApi : public ContextTest {
 protected:
  void SetUp() override {
    ContextTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (!spirv_test::tools_present())
      GTEST_SKIP() << "no " << MANIFOLD_TEST_CLANG << " or " << MANIFOLD_TEST_SPIRV_AS
                   << " here to make the SPIR-V";
  }
  // The program of `il`, built for the device; empty (and the test failed, with the build log)
  // when creating or building it fails.
  Program buildIl(const std::vector<uint8_t>& il) {
    cl_int err = CL_SUCCESS;
    Program p(clCreateProgramWithIL(context_, il.data(), il.size(), &err));
    EXPECT_EQ(Err(CL_SUCCESS), Err(err));
    if (err != CL_SUCCESS) return Program();
    err = clBuildProgram(p, 1, &device_, nullptr, nullptr, nullptr);
    EXPECT_EQ(Err(CL_SUCCESS), Err(err)) << build_log(p, device_);
    return err == CL_SUCCESS ? std::move(p) : Program();
  }
};

TEST_F(SpirvApi, DeviceReportsSpirvVersions) {
  const std::string ils = deviceString(device_, CL_DEVICE_IL_VERSION);
  if (ils.empty()) GTEST_SKIP() << "no IL on this device";
  EXPECT_EQ(ils, "SPIR-V_1.0 SPIR-V_1.1 SPIR-V_1.2");
  auto list = infoVector<cl_name_version>(clGetDeviceInfo, device_, CL_DEVICE_ILS_WITH_VERSION);
  ASSERT_EQ(list.size(), 3u);
  EXPECT_STREQ(list[2].name, "SPIR-V");
  EXPECT_EQ(list[2].version, CL_MAKE_VERSION(1, 2, 0));
  EXPECT_TRUE(hasWord(deviceString(device_, CL_DEVICE_EXTENSIONS), "cl_khr_il_program"));
  EXPECT_NE(clGetExtensionFunctionAddressForPlatform(platform_, "clCreateProgramWithILKHR"),
            nullptr);
}

TEST_F(SpirvApi, ErrorsOfClCreateProgramWithIL) {
  if (deviceString(device_, CL_DEVICE_IL_VERSION).empty()) GTEST_SKIP() << "no IL";
  cl_int err = CL_SUCCESS;
  const uint32_t garbage[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  // The spec: CL_INVALID_VALUE if il is NULL or if length is zero, or if il does not contain
  // well-formed intermediate language input that can be consumed by the OpenCL runtime.
  EXPECT_EQ(clCreateProgramWithIL(context_, nullptr, 16, &err), nullptr);
  EXPECT_EQ(Err(CL_INVALID_VALUE), Err(err));
  EXPECT_EQ(clCreateProgramWithIL(context_, garbage, 0, &err), nullptr);
  EXPECT_EQ(Err(CL_INVALID_VALUE), Err(err));
  EXPECT_EQ(clCreateProgramWithIL(context_, garbage, sizeof(garbage), &err), nullptr);
  EXPECT_EQ(Err(CL_INVALID_VALUE), Err(err));
  std::vector<uint8_t> il = spirv_test::clang_spirv("kernel void k(global int* p) { p[0] = 1; }");
  ASSERT_FALSE(il.empty());
  EXPECT_EQ(clCreateProgramWithIL(context_, il.data(), il.size() - 8, &err), nullptr);
  EXPECT_EQ(Err(CL_INVALID_VALUE), Err(err));
  EXPECT_EQ(clCreateProgramWithIL(nullptr, il.data(), il.size(), &err), nullptr);
  EXPECT_EQ(Err(CL_INVALID_CONTEXT), Err(err));
}

// A module of whole instructions that breaks SPIR-V's rules (an integer add of floats): created,
// since clCreateProgramWithIL checks only the form, and its build fails with SPIRV-Tools' reason.
TEST_F(SpirvApi, InvalidModuleFailsTheBuildWithTheReason) {
  if (deviceString(device_, CL_DEVICE_IL_VERSION).empty()) GTEST_SKIP() << "no IL";
  std::string log;
  std::vector<uint8_t> il = spirv_test::assemble(R"(
               OpCapability Addresses
               OpCapability Kernel
               OpMemoryModel Physical64 OpenCL
               OpEntryPoint Kernel %k "k"
       %void = OpTypeVoid
      %float = OpTypeFloat 32
        %one = OpConstant %float 1
         %fn = OpTypeFunction %void
          %k = OpFunction %void None %fn
          %l = OpLabel
        %sum = OpIAdd %float %one %one
               OpReturn
               OpFunctionEnd
)",
                                                 &log);
  ASSERT_FALSE(il.empty()) << log;
  cl_int err = CL_SUCCESS;
  Program p(clCreateProgramWithIL(context_, il.data(), il.size(), &err));
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  EXPECT_EQ(Err(CL_BUILD_PROGRAM_FAILURE),
            Err(clBuildProgram(p, 1, &device_, nullptr, nullptr, nullptr)));
  const std::string text = build_log(p, device_);
  EXPECT_NE(text.find("invalid SPIR-V"), std::string::npos) << text;
  EXPECT_NE(text.find("OpIAdd"), std::string::npos) << text;
}

TEST_F(SpirvApi, ProgramIlQueryAndSourceOfAnIlProgram) {
  if (deviceString(device_, CL_DEVICE_IL_VERSION).empty()) GTEST_SKIP() << "no IL";
  std::vector<uint8_t> il = spirv_test::clang_spirv("kernel void k(global int* p) { p[0] = 7; }");
  ASSERT_FALSE(il.empty());
  cl_int err = CL_SUCCESS;
  Program p(clCreateProgramWithIL(context_, il.data(), il.size(), &err));
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  size_t size = 0;
  ASSERT_EQ(Err(CL_SUCCESS), Err(clGetProgramInfo(p, CL_PROGRAM_IL, 0, nullptr, &size)));
  ASSERT_EQ(size, il.size());
  std::vector<uint8_t> back(size);
  ASSERT_EQ(Err(CL_SUCCESS), Err(clGetProgramInfo(p, CL_PROGRAM_IL, size, back.data(), nullptr)));
  EXPECT_EQ(back, il);
  EXPECT_EQ(infoString(clGetProgramInfo, p.get(), CL_PROGRAM_SOURCE), "");
  ASSERT_EQ(Err(CL_SUCCESS), Err(clBuildProgram(p, 0, nullptr, nullptr, nullptr, nullptr)));
  EXPECT_EQ(infoString(clGetProgramInfo, p.get(), CL_PROGRAM_KERNEL_NAMES), "k");
}

TEST_F(SpirvApi, UnsupportedCapabilityBuildLogNamesIt) {
  if (deviceString(device_, CL_DEVICE_IL_VERSION).empty()) GTEST_SKIP() << "no IL";
  std::string log;
  std::vector<uint8_t> il = spirv_test::assemble(R"(
               OpCapability Addresses
               OpCapability Kernel
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
  cl_int err = CL_SUCCESS;
  Program p(clCreateProgramWithIL(context_, il.data(), il.size(), &err));
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  EXPECT_EQ(Err(CL_BUILD_PROGRAM_FAILURE),
            Err(clBuildProgram(p, 1, &device_, nullptr, nullptr, nullptr)));
  const std::string text = build_log(p, device_);
  EXPECT_NE(text.find("unsupported capability Pipes"), std::string::npos) << text;
}

// Alignment decorations that are not powers of two: LLVM's SPIR-V backends write 128 as
// 0xffffff80 (taken as 128), and other values mean no alignment beyond the type's. The private
// array is large and the work-group too: a 4 GiB alignment would end the process.
TEST_F(SpirvApi, AlignmentThatIsNotAPowerOfTwo) {
  if (deviceString(device_, CL_DEVICE_IL_VERSION).empty()) GTEST_SKIP() << "no IL";
  std::string log;
  std::vector<uint8_t> il = spirv_test::assemble(R"(
               OpCapability Addresses
               OpCapability Kernel
               OpCapability Int64
               OpMemoryModel Physical64 OpenCL
               OpEntryPoint Kernel %k "copy" %gid
               OpDecorate %gid BuiltIn GlobalInvocationId
               OpDecorate %gid Constant
               OpDecorate %array Alignment 4294967168
               OpDecorate %other Alignment 24
       %void = OpTypeVoid
       %uint = OpTypeInt 32 0
      %ulong = OpTypeInt 64 0
    %v3ulong = OpTypeVector %ulong 3
   %gid_type = OpTypePointer Input %v3ulong
        %gid = OpVariable %gid_type Input
       %size = OpConstant %uint 2048
    %arr_t   = OpTypeArray %uint %size
  %arr_ptr   = OpTypePointer Function %arr_t
  %uint_fptr = OpTypePointer Function %uint
        %ptr = OpTypePointer CrossWorkgroup %uint
         %fn = OpTypeFunction %void %ptr
       %zero = OpConstant %ulong 0
       %mask = OpConstant %ulong 2047
          %k = OpFunction %void None %fn
          %p = OpFunctionParameter %ptr
          %l = OpLabel
      %array = OpVariable %arr_ptr Function
      %other = OpVariable %uint_fptr Function
         %ids = OpLoad %v3ulong %gid
          %i = OpCompositeExtract %ulong %ids 0
          %j = OpBitwiseAnd %ulong %i %mask
       %slot = OpInBoundsPtrAccessChain %uint_fptr %array %zero %j
          %v = OpUConvert %uint %i
               OpStore %slot %v Aligned 4
               OpStore %other %v Aligned 3
          %w = OpLoad %uint %slot Aligned 4
          %x = OpLoad %uint %other
          %y = OpIAdd %uint %w %x
          %q = OpInBoundsPtrAccessChain %ptr %p %i
               OpStore %q %y Aligned 4
               OpReturn
               OpFunctionEnd
)",
                                                 &log);
  ASSERT_FALSE(il.empty()) << log;
  Program p = buildIl(il);
  ASSERT_TRUE(p.get());
  cl_int err = CL_SUCCESS;
  Kernel k(clCreateKernel(p, "copy", &err));
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  const size_t items = 4096;
  Mem buffer = makeBuffer(items * 4);
  cl_mem m = buffer;
  ASSERT_EQ(Err(CL_SUCCESS), Err(clSetKernelArg(k, 0, sizeof(m), &m)));
  size_t local = 0;
  clGetKernelWorkGroupInfo(k, device_, CL_KERNEL_WORK_GROUP_SIZE, sizeof local, &local, nullptr);
  local = std::min<size_t>(local, 1024);
  ASSERT_EQ(Err(CL_SUCCESS), Err(clEnqueueNDRangeKernel(queue_, k, 1, nullptr, &items, &local, 0,
                                                        nullptr, nullptr)));
  std::vector<uint8_t> bytes = read(buffer, items * 4);
  std::vector<uint32_t> values(items);
  std::memcpy(values.data(), bytes.data(), bytes.size());
  for (size_t i = 0; i < items; ++i) ASSERT_EQ(values[i], 2 * uint32_t(i)) << i;
}

// OpTypeOpaque as the pointee of a kernel argument (CTS spirv_new op_type_opaque_simple): the
// kernel casts the pointer to a type it knows and writes through it.
TEST_F(SpirvApi, PointerToAnOpaqueType) {
  if (deviceString(device_, CL_DEVICE_IL_VERSION).empty()) GTEST_SKIP() << "no IL";
  std::string log;
  std::vector<uint8_t> il = spirv_test::assemble(R"(
               OpCapability Addresses
               OpCapability Kernel
               OpCapability Int64
               OpMemoryModel Physical64 OpenCL
               OpEntryPoint Kernel %k "fill" %gid
               OpDecorate %gid BuiltIn GlobalInvocationId
               OpDecorate %gid Constant
       %void = OpTypeVoid
       %uint = OpTypeInt 32 0
      %ulong = OpTypeInt 64 0
    %v3ulong = OpTypeVector %ulong 3
   %gid_type = OpTypePointer Input %v3ulong
        %gid = OpVariable %gid_type Input
     %opaque = OpTypeOpaque "opaque_t"
 %opaque_ptr = OpTypePointer CrossWorkgroup %opaque
   %uint_ptr = OpTypePointer CrossWorkgroup %uint
         %fn = OpTypeFunction %void %opaque_ptr
      %three = OpConstant %uint 3
          %k = OpFunction %void None %fn
          %p = OpFunctionParameter %opaque_ptr
          %l = OpLabel
        %ids = OpLoad %v3ulong %gid
          %i = OpCompositeExtract %ulong %ids 0
      %words = OpBitcast %uint_ptr %p
       %slot = OpInBoundsPtrAccessChain %uint_ptr %words %i
          %v = OpUConvert %uint %i
          %y = OpIMul %uint %v %three
               OpStore %slot %y Aligned 4
               OpReturn
               OpFunctionEnd
)",
                                                 &log);
  ASSERT_FALSE(il.empty()) << log;
  Program p = buildIl(il);
  ASSERT_TRUE(p.get());
  cl_int err = CL_SUCCESS;
  Kernel k(clCreateKernel(p, "fill", &err));
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  const size_t items = 256;
  Mem buffer = makeBuffer(items * 4);
  cl_mem m = buffer;
  ASSERT_EQ(Err(CL_SUCCESS), Err(clSetKernelArg(k, 0, sizeof(m), &m)));
  ASSERT_EQ(Err(CL_SUCCESS), Err(clEnqueueNDRangeKernel(queue_, k, 1, nullptr, &items, nullptr, 0,
                                                        nullptr, nullptr)));
  std::vector<uint8_t> bytes = read(buffer, items * 4);
  std::vector<uint32_t> values(items);
  std::memcpy(values.data(), bytes.data(), bytes.size());
  for (size_t i = 0; i < items; ++i) ASSERT_EQ(values[i], 3 * uint32_t(i)) << i;
}

bool deviceHasWorkGroupCollectives(cl_device_id device) {
  cl_bool supported = CL_FALSE;
  return clGetDeviceInfo(device, CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT,
                         sizeof supported, &supported, nullptr) == CL_SUCCESS &&
         supported == CL_TRUE;
}

// Work-group async copies (OpTypeEvent, OpGroupAsyncCopy, OpGroupWaitEvents: the Kernel
// capability's) and collectives (the Groups capability) from clang's SPIR-V, against host
// results: a group's slice reversed through __local memory, its sum, inclusive scan, maximum,
// the first item's value and whether all are positive; then a strided copy back to global.
TEST_F(SpirvApi, AsyncCopiesAndWorkGroupCollectives) {
  if (deviceString(device_, CL_DEVICE_IL_VERSION).empty()) GTEST_SKIP() << "no IL";
  std::string log;
  std::vector<uint8_t> il = spirv_test::clang_spirv(R"(
kernel void groups(global const int* in, global int* out, local int* tile) {
  const size_t n = get_local_size(0), base = get_group_id(0) * n, i = get_local_id(0);
  event_t e = async_work_group_copy(tile, in + base, n, 0);
  wait_group_events(1, &e);
  int v = tile[n - 1 - i];
  global int* o = out + get_global_id(0) * 6;
  o[0] = v;
  o[1] = work_group_reduce_add(v);
  o[2] = work_group_scan_inclusive_add(v);
  o[3] = work_group_reduce_max(v);
  o[4] = work_group_broadcast(v, 0);
  o[5] = work_group_all(v > 0);
}
// A second kernel: clang 22's SPIR-V backend writes an invalid OpConstantNull for a function
// with two async copies.
kernel void scatter(global const int* in, global int* strided, local int* tile) {
  const size_t n = get_local_size(0), base = get_group_id(0) * n, i = get_local_id(0);
  tile[i] = in[base + i];
  barrier(CLK_LOCAL_MEM_FENCE);
  event_t e = async_work_group_strided_copy(strided + base * 2, tile, n, 2, 0);
  wait_group_events(1, &e);
}
)",
                                                    &log, "-cl-std=CL2.0 -O2");
  ASSERT_FALSE(il.empty()) << log;
  cl_int err = CL_SUCCESS;
  Program p(clCreateProgramWithIL(context_, il.data(), il.size(), &err));
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  const cl_int built = clBuildProgram(p, 1, &device_, nullptr, nullptr, nullptr);
  if (!deviceHasWorkGroupCollectives(device_)) {
    // A device without collectives refuses the Groups capability and says so.
    EXPECT_EQ(Err(CL_BUILD_PROGRAM_FAILURE), Err(built));
    EXPECT_NE(build_log(p, device_).find("Groups"), std::string::npos) << build_log(p, device_);
    return;
  }
  ASSERT_EQ(Err(CL_SUCCESS), Err(built)) << build_log(p, device_);
  Kernel k(clCreateKernel(p, "groups", &err));
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  const size_t local = 16, groups = 4, items = local * groups;
  std::vector<int32_t> input(items);
  for (size_t j = 0; j < items; ++j) input[j] = int32_t(j % 7) + 1 - (j == 37 ? 9 : 0);
  Mem in = makeBuffer(items * 4), out = makeBuffer(items * 6 * 4), strided = makeBuffer(items * 8);
  ASSERT_EQ(Err(CL_SUCCESS), Err(clEnqueueWriteBuffer(queue_, in, CL_TRUE, 0, items * 4,
                                                      input.data(), 0, nullptr, nullptr)));
  std::vector<int32_t> zeros(items * 2, 0);
  ASSERT_EQ(Err(CL_SUCCESS), Err(clEnqueueWriteBuffer(queue_, strided, CL_TRUE, 0, items * 8,
                                                      zeros.data(), 0, nullptr, nullptr)));
  Kernel scatter(clCreateKernel(p, "scatter", &err));
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  cl_mem group_args[2] = {in, out}, scatter_args[2] = {in, strided};
  for (cl_uint a = 0; a < 2; ++a) {
    ASSERT_EQ(Err(CL_SUCCESS), Err(clSetKernelArg(k, a, sizeof(cl_mem), &group_args[a])));
    ASSERT_EQ(Err(CL_SUCCESS), Err(clSetKernelArg(scatter, a, sizeof(cl_mem), &scatter_args[a])));
  }
  ASSERT_EQ(Err(CL_SUCCESS), Err(clSetKernelArg(k, 2, local * 4, nullptr)));
  ASSERT_EQ(Err(CL_SUCCESS), Err(clSetKernelArg(scatter, 2, local * 4, nullptr)));
  for (cl_kernel kernel : {k.get(), scatter.get()})
    ASSERT_EQ(Err(CL_SUCCESS), Err(clEnqueueNDRangeKernel(queue_, kernel, 1, nullptr, &items,
                                                          &local, 0, nullptr, nullptr)));
  std::vector<uint8_t> bytes = read(out, items * 6 * 4), strided_bytes = read(strided, items * 8);
  std::vector<int32_t> got(items * 6), got_strided(items * 2);
  std::memcpy(got.data(), bytes.data(), bytes.size());
  std::memcpy(got_strided.data(), strided_bytes.data(), strided_bytes.size());
  for (size_t g = 0; g < groups; ++g) {
    int sum = 0, max = INT32_MIN, scan = 0;
    bool all = true;
    for (size_t i = 0; i < local; ++i) {
      const int v = input[g * local + local - 1 - i];
      sum += v;
      max = std::max(max, v);
      all = all && v > 0;
    }
    for (size_t i = 0; i < local; ++i) {
      const int v = input[g * local + local - 1 - i];
      scan += v;
      const int32_t* o = &got[(g * local + i) * 6];
      EXPECT_EQ(o[0], v) << g << " " << i;
      EXPECT_EQ(o[1], sum) << g << " " << i;
      EXPECT_EQ(o[2], scan) << g << " " << i;
      EXPECT_EQ(o[3], max) << g << " " << i;
      EXPECT_EQ(o[4], input[g * local + local - 1]) << g << " " << i;
      EXPECT_EQ(o[5] != 0, all) << g << " " << i;
      EXPECT_EQ(got_strided[(g * local + i) * 2], input[g * local + i]) << g << " " << i;
      EXPECT_EQ(got_strided[(g * local + i) * 2 + 1], 0) << g << " " << i;
    }
  }
}

// Sub-groups from clang's SPIR-V (the Groups capability's collectives of Subgroup scope, the
// sub-group BuiltIns, OpControlBarrier of Subgroup scope) against a host model: a group of 70
// work-items cut into sub-groups of the width clGetKernelSubGroupInfo reports, the last partial.
TEST_F(SpirvApi, SubGroups) {
  if (deviceString(device_, CL_DEVICE_IL_VERSION).empty()) GTEST_SKIP() << "no IL";
  std::string log;
  std::vector<uint8_t> il =
      spirv_test::clang_spirv(R"(
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
kernel void sg(global const int* in, global int* out, local int* tmp) {
  size_t g = get_global_id(0);
  int v = in[g];
  global int* o = out + g * 8;
  uint lane = get_sub_group_local_id(), size = get_sub_group_size();
  tmp[get_local_id(0)] = v;
  sub_group_barrier(CLK_LOCAL_MEM_FENCE);
  o[0] = size + 1000 * get_max_sub_group_size();
  o[1] = lane + 1000 * get_sub_group_id();
  o[2] = sub_group_reduce_add(v);
  o[3] = sub_group_scan_exclusive_min(v);
  o[4] = sub_group_broadcast(v, 1);
  o[5] = sub_group_all(v > 0);
  o[6] = get_num_sub_groups() + 1000 * get_enqueued_num_sub_groups();
  o[7] = tmp[get_local_id(0) - lane + size - 1 - lane];
}
)",
                              &log, "-cl-std=CL2.0 -O2 -Xclang -cl-ext=+cl_khr_subgroups");
  ASSERT_FALSE(il.empty()) << log;
  cl_int err = CL_SUCCESS;
  Program p(clCreateProgramWithIL(context_, il.data(), il.size(), &err));
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  const cl_int built = clBuildProgram(p, 1, &device_, nullptr, nullptr, nullptr);
  if (deviceInfo<cl_uint>(device_, CL_DEVICE_MAX_NUM_SUB_GROUPS) == 0) {
    // A device without sub-groups refuses them and says so.
    EXPECT_EQ(Err(CL_BUILD_PROGRAM_FAILURE), Err(built));
    EXPECT_NE(build_log(p, device_).find("sub-groups"), std::string::npos) << build_log(p, device_);
    return;
  }
  ASSERT_EQ(Err(CL_SUCCESS), Err(built)) << build_log(p, device_);
  Kernel k(clCreateKernel(p, "sg", &err));
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  const size_t local = 70, groups = 3, items = local * groups;
  size_t width = 0;
  ASSERT_EQ(Err(CL_SUCCESS),
            Err(clGetKernelSubGroupInfo(k, device_, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE,
                                        sizeof local, &local, sizeof width, &width, nullptr)));
  ASSERT_GE(width, 1u);
  std::vector<int32_t> input(items);
  for (size_t j = 0; j < items; ++j) input[j] = int32_t(j * 37 % 23) - 3;
  Mem in = makeBuffer(items * 4), out = makeBuffer(items * 8 * 4);
  ASSERT_EQ(Err(CL_SUCCESS), Err(clEnqueueWriteBuffer(queue_, in, CL_TRUE, 0, items * 4,
                                                      input.data(), 0, nullptr, nullptr)));
  cl_mem args[2] = {in, out};
  for (cl_uint a = 0; a < 2; ++a)
    ASSERT_EQ(Err(CL_SUCCESS), Err(clSetKernelArg(k, a, sizeof(cl_mem), &args[a])));
  ASSERT_EQ(Err(CL_SUCCESS), Err(clSetKernelArg(k, 2, local * 4, nullptr)));
  ASSERT_EQ(Err(CL_SUCCESS), Err(clEnqueueNDRangeKernel(queue_, k, 1, nullptr, &items, &local, 0,
                                                        nullptr, nullptr)));
  if (kernelsComputeNothing(device_)) return;  // the simulated CUDA driver: built and launched
  std::vector<uint8_t> bytes = read(out, items * 8 * 4);
  std::vector<int32_t> got(items * 8);
  std::memcpy(got.data(), bytes.data(), bytes.size());
  const int32_t count = int32_t((local + width - 1) / width);
  for (size_t g = 0; g < groups; ++g)
    for (size_t first = 0; first < local; first += width) {
      const size_t size = std::min(width, local - first), base = g * local + first;
      int32_t sum = 0, low = INT32_MAX;
      bool all = true;
      for (size_t l = 0; l < size; ++l) {
        sum += input[base + l];
        all = all && input[base + l] > 0;
      }
      for (size_t l = 0; l < size; ++l) {
        const int32_t* o = &got[(base + l) * 8];
        SCOPED_TRACE("work-item " + std::to_string(base + l));
        EXPECT_EQ(o[0], int32_t(size + 1000 * width));
        EXPECT_EQ(o[1], int32_t(l + 1000 * (first / width)));
        EXPECT_EQ(o[2], sum);
        EXPECT_EQ(o[3], low);
        low = std::min(low, input[base + l]);
        if (size > 1) {
          EXPECT_EQ(o[4], input[base + 1]);
        }
        EXPECT_EQ(o[5] != 0, all);
        EXPECT_EQ(o[6], count + 1000 * count);
        EXPECT_EQ(o[7], input[base + size - 1 - l]);
      }
    }
}

// Images from clang's SPIR-V (ImageBasic, LiteralSampler): a sampled read through a kernel
// argument sampler and through a literal one, plain reads, float and unsigned writes, and the size
// queries, against host results.
TEST_F(SpirvApi, ImagesSamplersAndQueries) {
  if (deviceString(device_, CL_DEVICE_IL_VERSION).empty()) GTEST_SKIP() << "no IL";
  cl_bool images = CL_FALSE;
  clGetDeviceInfo(device_, CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, nullptr);
  std::string log;
  std::vector<uint8_t> il = spirv_test::clang_spirv(R"(
kernel void images(read_only image2d_t src, sampler_t s, write_only image2d_t dst,
                   write_only image2d_t counts, global int* sizes) {
  const int2 c = (int2)(get_global_id(0), get_global_id(1));
  const sampler_t literal = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE |
                            CLK_FILTER_NEAREST;
  float4 a = read_imagef(src, s, (float2)(c.x + 0.5f, c.y + 0.5f));
  float4 b = read_imagef(src, literal, c + (int2)(1, 0));
  float4 p = read_imagef(src, c);
  write_imagef(dst, c, a + b + p);
  write_imageui(counts, c, (uint4)(c.x, c.y, 200 + c.x, 7));
  if (c.x == 0 && c.y == 0) {
    int2 d = get_image_dim(src);
    sizes[0] = get_image_width(src);
    sizes[1] = get_image_height(dst);
    sizes[2] = d.x * 100 + d.y;
  }
}
)",
                                                    &log, "-cl-std=CL2.0 -O2");
  ASSERT_FALSE(il.empty()) << log;
  if (!images) {
    cl_int err = CL_SUCCESS;
    Program p(clCreateProgramWithIL(context_, il.data(), il.size(), &err));
    ASSERT_EQ(Err(CL_SUCCESS), Err(err));
    EXPECT_EQ(Err(CL_BUILD_PROGRAM_FAILURE),
              Err(clBuildProgram(p, 1, &device_, nullptr, nullptr, nullptr)));
    EXPECT_NE(build_log(p, device_).find("ImageBasic"), std::string::npos) << build_log(p, device_);
    return;
  }
  Program p = buildIl(il);
  ASSERT_TRUE(p.get());
  cl_int err = CL_SUCCESS;
  Kernel k(clCreateKernel(p, "images", &err));
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  const size_t w = 8, h = 4;
  std::vector<float> texels(w * h * 4);
  for (size_t i = 0; i < texels.size(); ++i) texels[i] = float(i % 29) * 0.25f;
  const cl_image_format rgba_float = {CL_RGBA, CL_FLOAT}, rgba_u8 = {CL_RGBA, CL_UNSIGNED_INT8};
  cl_image_desc desc = {};
  desc.image_type = CL_MEM_OBJECT_IMAGE2D;
  desc.image_width = w;
  desc.image_height = h;
  Mem src(clCreateImage(context_, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, &rgba_float, &desc,
                        texels.data(), &err));
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  Mem dst(clCreateImage(context_, CL_MEM_WRITE_ONLY, &rgba_float, &desc, nullptr, &err));
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  Mem counts(clCreateImage(context_, CL_MEM_WRITE_ONLY, &rgba_u8, &desc, nullptr, &err));
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  Mem sizes = makeBuffer(3 * 4);
  const cl_sampler_properties props[] = {CL_SAMPLER_NORMALIZED_COORDS,
                                         CL_FALSE,
                                         CL_SAMPLER_ADDRESSING_MODE,
                                         CL_ADDRESS_CLAMP_TO_EDGE,
                                         CL_SAMPLER_FILTER_MODE,
                                         CL_FILTER_NEAREST,
                                         0};
  cl_sampler sampler = clCreateSamplerWithProperties(context_, props, &err);
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  cl_mem m[4] = {src, dst, counts, sizes};
  ASSERT_EQ(Err(CL_SUCCESS), Err(clSetKernelArg(k, 0, sizeof(cl_mem), &m[0])));
  ASSERT_EQ(Err(CL_SUCCESS), Err(clSetKernelArg(k, 1, sizeof(cl_sampler), &sampler)));
  for (cl_uint a = 1; a < 4; ++a)
    ASSERT_EQ(Err(CL_SUCCESS), Err(clSetKernelArg(k, a + 1, sizeof(cl_mem), &m[a])));
  const size_t global[2] = {w, h};
  ASSERT_EQ(Err(CL_SUCCESS), Err(clEnqueueNDRangeKernel(queue_, k, 2, nullptr, global, nullptr, 0,
                                                        nullptr, nullptr)));
  std::vector<float> out(w * h * 4);
  std::vector<uint8_t> count_bytes(w * h * 4);
  const size_t origin[3] = {0, 0, 0}, region[3] = {w, h, 1};
  ASSERT_EQ(Err(CL_SUCCESS), Err(clEnqueueReadImage(queue_, dst, CL_TRUE, origin, region, 0, 0,
                                                    out.data(), 0, nullptr, nullptr)));
  ASSERT_EQ(Err(CL_SUCCESS), Err(clEnqueueReadImage(queue_, counts, CL_TRUE, origin, region, 0, 0,
                                                    count_bytes.data(), 0, nullptr, nullptr)));
  std::vector<uint8_t> size_bytes = read(sizes, 12);
  int32_t got_sizes[3];
  std::memcpy(got_sizes, size_bytes.data(), 12);
  clReleaseSampler(sampler);
  EXPECT_EQ(got_sizes[0], int(w));
  EXPECT_EQ(got_sizes[1], int(h));
  EXPECT_EQ(got_sizes[2], int(w * 100 + h));
  for (size_t y = 0; y < h; ++y)
    for (size_t x = 0; x < w; ++x)
      for (size_t ch = 0; ch < 4; ++ch) {
        const size_t right = std::min(x + 1, w - 1);
        const float expected = 2 * texels[(y * w + x) * 4 + ch] + texels[(y * w + right) * 4 + ch];
        EXPECT_EQ(out[(y * w + x) * 4 + ch], expected) << x << "," << y << " " << ch;
        const uint8_t want[4] = {uint8_t(x), uint8_t(y), uint8_t(200 + x), 7};
        EXPECT_EQ(count_bytes[(y * w + x) * 4 + ch], want[ch]) << x << "," << y << " " << ch;
      }
}

// OpImageQueryFormat and OpImageQueryOrder give SPIR-V's enumerants (the environment spec's tables
// 2.1 and 2.2), not the CL_* values get_image_channel_* return in OpenCL C.
TEST_F(SpirvApi, ImageFormatAndOrderQueries) {
  if (deviceString(device_, CL_DEVICE_IL_VERSION).empty()) GTEST_SKIP() << "no IL";
  cl_bool images = CL_FALSE;
  clGetDeviceInfo(device_, CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, nullptr);
  if (!images) GTEST_SKIP() << "no images";
  std::string log;
  std::vector<uint8_t> il = spirv_test::assemble(R"(
               OpCapability Addresses
               OpCapability Kernel
               OpCapability Int64
               OpCapability ImageBasic
               OpMemoryModel Physical64 OpenCL
               OpEntryPoint Kernel %k "query"
       %void = OpTypeVoid
       %uint = OpTypeInt 32 0
      %ulong = OpTypeInt 64 0
      %image = OpTypeImage %void 2D 0 0 0 0 Unknown ReadOnly
        %ptr = OpTypePointer CrossWorkgroup %uint
         %fn = OpTypeFunction %void %image %ptr
        %one = OpConstant %ulong 1
          %k = OpFunction %void None %fn
        %img = OpFunctionParameter %image
          %p = OpFunctionParameter %ptr
          %l = OpLabel
     %format = OpImageQueryFormat %uint %img
      %order = OpImageQueryOrder %uint %img
               OpStore %p %format Aligned 4
         %p1 = OpInBoundsPtrAccessChain %ptr %p %one
               OpStore %p1 %order Aligned 4
               OpReturn
               OpFunctionEnd
)",
                                                 &log);
  ASSERT_FALSE(il.empty()) << log;
  Program p = buildIl(il);
  ASSERT_TRUE(p.get());
  cl_int err = CL_SUCCESS;
  Kernel k(clCreateKernel(p, "query", &err));
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  const cl_image_format format = {CL_BGRA, CL_UNORM_INT8};
  cl_image_desc desc = {};
  desc.image_type = CL_MEM_OBJECT_IMAGE2D;
  desc.image_width = 4;
  desc.image_height = 4;
  Mem image(clCreateImage(context_, CL_MEM_READ_ONLY, &format, &desc, nullptr, &err));
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  Mem out = makeBuffer(8);
  cl_mem args[2] = {image, out};
  for (cl_uint a = 0; a < 2; ++a)
    ASSERT_EQ(Err(CL_SUCCESS), Err(clSetKernelArg(k, a, sizeof(cl_mem), &args[a])));
  const size_t one = 1;
  ASSERT_EQ(Err(CL_SUCCESS),
            Err(clEnqueueNDRangeKernel(queue_, k, 1, nullptr, &one, nullptr, 0, nullptr, nullptr)));
  std::vector<uint8_t> bytes = read(out, 8);
  uint32_t got[2];
  std::memcpy(got, bytes.data(), 8);
  EXPECT_EQ(got[0], 2u);  // UnormInt8
  EXPECT_EQ(got[1], 6u);  // BGRA
}

// A program-scope pointer initialized with the address of an array element: LLVM's SPIR-V
// backend writes such initializers as OpSpecConstantOp (here InBoundsPtrAccessChain and a cast
// to the generic address space).
TEST_F(SpirvApi, SpecConstantOpInitializers) {
  if (deviceString(device_, CL_DEVICE_IL_VERSION).empty()) GTEST_SKIP() << "no IL";
  std::string log;
  std::vector<uint8_t> il = spirv_test::assemble(R"(
               OpCapability Addresses
               OpCapability Kernel
               OpCapability Int64
               OpCapability GenericPointer
               OpMemoryModel Physical64 OpenCL
               OpEntryPoint Kernel %k "read_through"
       %void = OpTypeVoid
       %uint = OpTypeInt 32 0
      %ulong = OpTypeInt 64 0
      %three = OpConstant %uint 3
        %arr = OpTypeArray %uint %three
    %arr_ptr = OpTypePointer CrossWorkgroup %arr
   %uint_ptr = OpTypePointer CrossWorkgroup %uint
   %gen_ptr  = OpTypePointer Generic %uint
  %gptr_ptr  = OpTypePointer CrossWorkgroup %uint_ptr
  %genp_ptr  = OpTypePointer CrossWorkgroup %gen_ptr
         %fn = OpTypeFunction %void %uint_ptr
     %seven  = OpConstant %uint 7
     %eleven = OpConstant %uint 11
   %thirteen = OpConstant %uint 13
      %zero  = OpConstant %ulong 0
       %two  = OpConstant %ulong 2
       %init = OpConstantComposite %arr %seven %eleven %thirteen
      %table = OpVariable %arr_ptr CrossWorkgroup %init
       %last = OpSpecConstantOp %uint_ptr InBoundsPtrAccessChain %table %zero %two
    %generic = OpSpecConstantOp %gen_ptr PtrCastToGeneric %last
          %p = OpVariable %gptr_ptr CrossWorkgroup %last
          %q = OpVariable %genp_ptr CrossWorkgroup %generic
          %k = OpFunction %void None %fn
        %out = OpFunctionParameter %uint_ptr
          %l = OpLabel
         %pp = OpLoad %uint_ptr %p Aligned 8
          %v = OpLoad %uint %pp Aligned 4
         %qq = OpLoad %gen_ptr %q Aligned 8
          %w = OpLoad %uint %qq Aligned 4
          %s = OpIAdd %uint %v %w
               OpStore %out %s Aligned 4
               OpReturn
               OpFunctionEnd
)",
                                                 &log);
  ASSERT_FALSE(il.empty()) << log;
  Program p = buildIl(il);
  ASSERT_TRUE(p.get());
  cl_int err = CL_SUCCESS;
  Kernel k(clCreateKernel(p, "read_through", &err));
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  Mem buffer = makeBuffer(4);
  cl_mem m = buffer;
  ASSERT_EQ(Err(CL_SUCCESS), Err(clSetKernelArg(k, 0, sizeof(m), &m)));
  const size_t one = 1;
  ASSERT_EQ(Err(CL_SUCCESS),
            Err(clEnqueueNDRangeKernel(queue_, k, 1, nullptr, &one, nullptr, 0, nullptr, nullptr)));
  std::vector<uint8_t> bytes = read(buffer, 4);
  uint32_t value = 0;
  std::memcpy(&value, bytes.data(), 4);
  EXPECT_EQ(value, 26u);
}

// Builtins of 3-element vectors: clang passes a char3 to the CPU's builtin library as an i32 (its
// allocation size), while a module read from SPIR-V passes the <3 x i8> itself (CTS
// relational_bitselect on 3-vectors did not build).
TEST_F(SpirvApi, BuiltinsOfThreeElementVectors) {
  if (deviceString(device_, CL_DEVICE_IL_VERSION).empty()) GTEST_SKIP() << "no IL";
  std::string log;
  std::vector<uint8_t> il = spirv_test::clang_spirv(R"CL(
kernel void select3(global const char* a, global const char* b, global const char* c,
                    global char* out, global const short* sa, global short* sout) {
  size_t i = get_global_id(0);
  char3 r = bitselect(vload3(i, a), vload3(i, b), vload3(i, c));
  vstore3(r, i, out);
  short3 s = clamp(vload3(i, sa), (short3)(-5), (short3)(5));
  vstore3(s == (short3)(1, 2, 3) ? (short3)(7) : s, i, sout);
})CL",
                                                    &log);
  ASSERT_FALSE(il.empty()) << log;
  Program p = buildIl(il);
  ASSERT_TRUE(p.get());
  cl_int err = CL_SUCCESS;
  Kernel k(clCreateKernel(p, "select3", &err));
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  const size_t items = 64, n = items * 3;
  std::vector<int8_t> a(n), b(n), c(n);
  for (size_t i = 0; i < n; ++i) {
    a[i] = int8_t(i * 7 - 100);
    b[i] = int8_t(i * 13 + 5);
    c[i] = int8_t(i * 29);
  }
  std::vector<int16_t> sa(a.begin(), a.end());
  Mem A = makeBuffer(n), B = makeBuffer(n), C = makeBuffer(n), Out = makeBuffer(n),
      SA = makeBuffer(n * 2), SOut = makeBuffer(n * 2);
  write(A, a.data(), n);
  write(B, b.data(), n);
  write(C, c.data(), n);
  write(SA, sa.data(), n * 2);
  cl_mem args[] = {A, B, C, Out, SA, SOut};
  for (cl_uint i = 0; i < 6; ++i)
    ASSERT_EQ(Err(CL_SUCCESS), Err(clSetKernelArg(k, i, sizeof(cl_mem), &args[i])));
  ASSERT_EQ(Err(CL_SUCCESS), Err(clEnqueueNDRangeKernel(queue_, k, 1, nullptr, &items, nullptr, 0,
                                                        nullptr, nullptr)));
  std::vector<uint8_t> out = read(Out, n), sout_bytes = read(SOut, n * 2);
  std::vector<int16_t> sout(n);
  std::memcpy(sout.data(), sout_bytes.data(), n * 2);
  for (size_t i = 0; i < n; ++i) {
    const uint8_t expected = uint8_t((a[i] & ~c[i]) | (b[i] & c[i]));
    ASSERT_EQ(out[i], expected) << i;
    const int16_t clamped = int16_t(std::clamp<int>(a[i], -5, 5));
    const int16_t against = int16_t(1 + i % 3);
    ASSERT_EQ(sout[i], clamped == against ? 7 : clamped) << i;
  }
}

// The environment spec allows Int64Atomics with cl_khr_int64_base_atomics (SPIRV-Tools' OpenCL
// environments refuse it): such a module is taken, built and run where the device has it.
TEST_F(SpirvApi, Int64AtomicsWhereTheDeviceHasThem) {
  if (deviceString(device_, CL_DEVICE_IL_VERSION).empty()) GTEST_SKIP() << "no IL";
  if (deviceString(device_, CL_DEVICE_EXTENSIONS).find("cl_khr_int64_base_atomics") ==
      std::string::npos)
    GTEST_SKIP() << "no cl_khr_int64_base_atomics";
  std::string log;
  std::vector<uint8_t> il = spirv_test::assemble(R"(
               OpCapability Addresses
               OpCapability Kernel
               OpCapability Int64
               OpCapability Int64Atomics
               OpMemoryModel Physical64 OpenCL
               OpEntryPoint Kernel %k "count"
       %void = OpTypeVoid
       %uint = OpTypeInt 32 0
      %ulong = OpTypeInt 64 0
        %ptr = OpTypePointer CrossWorkgroup %ulong
         %fn = OpTypeFunction %void %ptr
     %device = OpConstant %uint 1
    %relaxed = OpConstant %uint 0
       %step = OpConstant %ulong 4294967296
          %k = OpFunction %void None %fn
          %p = OpFunctionParameter %ptr
          %l = OpLabel
        %old = OpAtomicIAdd %ulong %p %device %relaxed %step
               OpReturn
               OpFunctionEnd
)",
                                                 &log);
  ASSERT_FALSE(il.empty()) << log;
  Program p = buildIl(il);
  ASSERT_TRUE(p.get());
  cl_int err = CL_SUCCESS;
  Kernel k(clCreateKernel(p, "count", &err));
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  Mem buffer = makeBuffer(8);
  const uint64_t zero = 0;
  ASSERT_EQ(Err(CL_SUCCESS),
            Err(clEnqueueWriteBuffer(queue_, buffer, CL_TRUE, 0, 8, &zero, 0, nullptr, nullptr)));
  cl_mem m = buffer;
  ASSERT_EQ(Err(CL_SUCCESS), Err(clSetKernelArg(k, 0, sizeof(m), &m)));
  const size_t items = 1000;
  ASSERT_EQ(Err(CL_SUCCESS), Err(clEnqueueNDRangeKernel(queue_, k, 1, nullptr, &items, nullptr, 0,
                                                        nullptr, nullptr)));
  std::vector<uint8_t> bytes = read(buffer, 8);
  uint64_t total = 0;
  std::memcpy(&total, bytes.data(), 8);
  EXPECT_EQ(total, uint64_t(items) << 32);
}

// Float16 with cl_khr_fp16 (the environment spec's capability for half arithmetic): half
// loads, arithmetic, an OpenCL.std function of half, and conversions to half with a rounding-mode
// decoration, where the device reports the extension.
TEST_F(SpirvApi, Float16WhereTheDeviceHasIt) {
  if (deviceString(device_, CL_DEVICE_IL_VERSION).empty()) GTEST_SKIP() << "no IL";
  if (deviceString(device_, CL_DEVICE_EXTENSIONS).find("cl_khr_fp16") == std::string::npos)
    GTEST_SKIP() << "no cl_khr_fp16";
  std::string log;
  std::vector<uint8_t> il = spirv_test::assemble(R"(
               OpCapability Addresses
               OpCapability Kernel
               OpCapability Int64
               OpCapability Float16
        %std = OpExtInstImport "OpenCL.std"
               OpMemoryModel Physical64 OpenCL
               OpEntryPoint Kernel %k "halves" %gid
               OpDecorate %gid BuiltIn GlobalInvocationId
               OpDecorate %gid Constant
               OpDecorate %toward_zero FPRoundingMode RTZ
               OpDecorate %toward_pos FPRoundingMode RTP
       %void = OpTypeVoid
      %ulong = OpTypeInt 64 0
       %half = OpTypeFloat 16
      %float = OpTypeFloat 32
     %v2half = OpTypeVector %half 2
    %v3ulong = OpTypeVector %ulong 3
   %gid_type = OpTypePointer Input %v3ulong
        %gid = OpVariable %gid_type Input
       %hptr = OpTypePointer CrossWorkgroup %half
       %fptr = OpTypePointer CrossWorkgroup %float
         %fn = OpTypeFunction %void %hptr %fptr %hptr
      %three = OpConstant %half 0x1.8p+1
       %four = OpConstant %ulong 4
        %one = OpConstant %ulong 1
        %two = OpConstant %ulong 2
      %three_u = OpConstant %ulong 3
          %k = OpFunction %void None %fn
         %in = OpFunctionParameter %hptr
     %floats = OpFunctionParameter %fptr
        %out = OpFunctionParameter %hptr
          %l = OpLabel
        %ids = OpLoad %v3ulong %gid
          %i = OpCompositeExtract %ulong %ids 0
         %pa = OpInBoundsPtrAccessChain %hptr %in %i
          %x = OpLoad %half %pa Aligned 2
    %product = OpFMul %half %x %three
       %root = OpExtInst %half %std sqrt %x
         %pf = OpInBoundsPtrAccessChain %fptr %floats %i
          %f = OpLoad %float %pf Aligned 4
%toward_zero = OpFConvert %half %f
      %pair = OpCompositeConstruct %v2half %x %product
     %sums = OpFAdd %v2half %pair %pair
   %doubled = OpCompositeExtract %half %sums 1
 %toward_pos = OpFConvert %half %f
       %base = OpIMul %ulong %i %four
         %q0 = OpInBoundsPtrAccessChain %hptr %out %base
               OpStore %q0 %doubled Aligned 2
       %b1 = OpIAdd %ulong %base %one
         %q1 = OpInBoundsPtrAccessChain %hptr %out %b1
               OpStore %q1 %root Aligned 2
       %b2 = OpIAdd %ulong %base %two
         %q2 = OpInBoundsPtrAccessChain %hptr %out %b2
               OpStore %q2 %toward_zero Aligned 2
       %b3 = OpIAdd %ulong %base %three_u
         %q3 = OpInBoundsPtrAccessChain %hptr %out %b3
               OpStore %q3 %toward_pos Aligned 2
               OpReturn
               OpFunctionEnd
)",
                                                 &log);
  ASSERT_FALSE(il.empty()) << log;
  Program p = buildIl(il);
  ASSERT_TRUE(p.get());
  cl_int err = CL_SUCCESS;
  Kernel k(clCreateKernel(p, "halves", &err));
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  // Halves 1, 2, 4, 0.25 and floats between two halves (1 + 2^-12: rtz gives 1, rtp 1 + 2^-10;
  // -1 - 2^-12: rtz gives -1, rtp -1).
  const uint16_t halves[4] = {0x3c00, 0x4000, 0x4400, 0x3400};
  const float floats[4] = {1.0f + 0x1p-12f, -1.0f - 0x1p-12f, 65504.0f * 2, 3.0f};
  Mem in = makeBuffer(sizeof halves), f = makeBuffer(sizeof floats), out = makeBuffer(32);
  ASSERT_EQ(Err(CL_SUCCESS), Err(clEnqueueWriteBuffer(queue_, in, CL_TRUE, 0, sizeof halves, halves,
                                                      0, nullptr, nullptr)));
  ASSERT_EQ(Err(CL_SUCCESS), Err(clEnqueueWriteBuffer(queue_, f, CL_TRUE, 0, sizeof floats, floats,
                                                      0, nullptr, nullptr)));
  cl_mem args[3] = {in, f, out};
  for (cl_uint a = 0; a < 3; ++a)
    ASSERT_EQ(Err(CL_SUCCESS), Err(clSetKernelArg(k, a, sizeof(cl_mem), &args[a])));
  const size_t items = 4;
  ASSERT_EQ(Err(CL_SUCCESS), Err(clEnqueueNDRangeKernel(queue_, k, 1, nullptr, &items, nullptr, 0,
                                                        nullptr, nullptr)));
  std::vector<uint8_t> bytes = read(out, 32);
  uint16_t got[16];
  std::memcpy(got, bytes.data(), sizeof got);
  // Per item: 2 * 3x, sqrt(x), rtz(f), rtp(f).
  const uint16_t expected[16] = {
      0x4600, 0x3c00, 0x3c00, 0x3c01,  // x = 1: 6, 1; f = 1 + 2^-12
      0x4a00, 0x3da8, 0xbc00, 0xbc00,  // x = 2: 12, sqrt(2) = 0x3da8; f = -1 - 2^-12
      0x4e00, 0x4000, 0x7bff, 0x7c00,  // x = 4: 24, 2; f = 131008: rtz the largest half, rtp inf
      0x3e00, 0x3800, 0x4200, 0x4200,  // x = 0.25: 1.5, 0.5; f = 3 exactly
  };
  for (int i = 0; i < 16; ++i)
    EXPECT_EQ(got[i], expected[i])
        << "item " << i / 4 << " value " << i % 4 << ": 0x" << std::hex << got[i];
}

TEST_F(SpirvApi, SpecializationConstants) {
  if (deviceString(device_, CL_DEVICE_IL_VERSION).empty()) GTEST_SKIP() << "no IL";
  std::string log;
  std::vector<uint8_t> il = spirv_test::assemble(R"(
               OpCapability Addresses
               OpCapability Kernel
               OpCapability Int64
               OpMemoryModel Physical64 OpenCL
               OpEntryPoint Kernel %k "spec"
               OpDecorate %number SpecId 7
               OpDecorate %flag SpecId 8
       %void = OpTypeVoid
       %uint = OpTypeInt 32 0
      %ulong = OpTypeInt 64 0
       %bool = OpTypeBool
        %ptr = OpTypePointer CrossWorkgroup %uint
         %fn = OpTypeFunction %void %ptr
     %number = OpSpecConstant %uint 5
       %flag = OpSpecConstantFalse %bool
        %one = OpConstant %uint 1
       %zero = OpConstant %uint 0
     %second = OpConstant %ulong 1
          %k = OpFunction %void None %fn
          %p = OpFunctionParameter %ptr
          %l = OpLabel
          %f = OpSelect %uint %flag %one %zero
               OpStore %p %number Aligned 4
          %q = OpInBoundsPtrAccessChain %ptr %p %second
               OpStore %q %f Aligned 4
               OpReturn
               OpFunctionEnd
)",
                                                 &log);
  ASSERT_FALSE(il.empty()) << log;
  cl_int err = CL_SUCCESS;
  Program p(clCreateProgramWithIL(context_, il.data(), il.size(), &err));
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  auto run_spec = [&]() {
    EXPECT_EQ(Err(CL_SUCCESS), Err(clBuildProgram(p, 1, &device_, nullptr, nullptr, nullptr)));
    Kernel k(clCreateKernel(p, "spec", &err));
    EXPECT_EQ(Err(CL_SUCCESS), Err(err));
    Mem buffer = makeBuffer(8);
    cl_mem m = buffer;
    EXPECT_EQ(Err(CL_SUCCESS), Err(clSetKernelArg(k, 0, sizeof(m), &m)));
    const size_t one = 1;
    EXPECT_EQ(Err(CL_SUCCESS), Err(clEnqueueNDRangeKernel(queue_, k, 1, nullptr, &one, nullptr, 0,
                                                          nullptr, nullptr)));
    std::vector<uint8_t> bytes = read(buffer, 8);
    std::vector<uint32_t> values(2);
    std::memcpy(values.data(), bytes.data(), 8);
    return values;
  };
  EXPECT_EQ(run_spec(), (std::vector<uint32_t>{5, 0}));  // the defaults
  const uint32_t number = 42;
  const uint8_t flag = 1;
  EXPECT_EQ(Err(CL_SUCCESS), Err(clSetProgramSpecializationConstant(p, 7, 4, &number)));
  EXPECT_EQ(Err(CL_SUCCESS), Err(clSetProgramSpecializationConstant(p, 8, 1, &flag)));
  // The spec: CL_INVALID_SPEC_ID for an id the module lacks; CL_INVALID_VALUE for a size that
  // is not the constant's or a NULL value.
  EXPECT_EQ(Err(CL_INVALID_SPEC_ID), Err(clSetProgramSpecializationConstant(p, 9, 4, &number)));
  EXPECT_EQ(Err(CL_INVALID_VALUE), Err(clSetProgramSpecializationConstant(p, 7, 8, &number)));
  EXPECT_EQ(Err(CL_INVALID_VALUE), Err(clSetProgramSpecializationConstant(p, 7, 4, nullptr)));
  EXPECT_EQ(run_spec(), (std::vector<uint32_t>{42, 1}));
}

// printf through OpenCL.std's extended instruction: the module's kernel runs once on one
// work-item; what it printed (stdout, flushed when the launch completes) and the values it
// wrote to its `status` buffer (printf's results).
class SpirvPrintf : public SpirvApi {
 protected:
  std::string run_once(const std::vector<uint8_t>& il, const char* name,
                       const std::vector<Arg>& values, std::vector<int32_t>* status) {
    cl_int err = CL_SUCCESS;
    Program p(clCreateProgramWithIL(context_, il.data(), il.size(), &err));
    EXPECT_EQ(Err(CL_SUCCESS), Err(err));
    if (err != CL_SUCCESS) return {};
    err = clBuildProgram(p, 1, &device_, "", nullptr, nullptr);
    EXPECT_EQ(Err(CL_SUCCESS), Err(err)) << build_log(p, device_);
    if (err != CL_SUCCESS) return {};
    Kernel k(clCreateKernel(p, name, &err));
    EXPECT_EQ(Err(CL_SUCCESS), Err(err));
    Mem buffer = makeBuffer(status->size() * 4);
    cl_mem m = buffer;
    EXPECT_EQ(Err(CL_SUCCESS), Err(clSetKernelArg(k, 0, sizeof(m), &m)));
    for (cl_uint i = 0; i < values.size(); ++i)
      EXPECT_EQ(Err(CL_SUCCESS),
                Err(clSetKernelArg(k, i + 1, values[i].value.size(), values[i].value.data())));
    const size_t one = 1;
    testing::internal::CaptureStdout();
    EXPECT_EQ(Err(CL_SUCCESS), Err(clEnqueueNDRangeKernel(queue_, k, 1, nullptr, &one, nullptr, 0,
                                                          nullptr, nullptr)));
    EXPECT_EQ(Err(CL_SUCCESS), Err(clFinish(queue_)));
    const std::string printed = testing::internal::GetCapturedStdout();
    std::vector<uint8_t> bytes = read(buffer, status->size() * 4);
    std::memcpy(status->data(), bytes.data(), bytes.size());
    return printed;
  }

  void SetUp() override {
    SpirvApi::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (deviceString(device_, CL_DEVICE_IL_VERSION).empty()) GTEST_SKIP() << "no IL";
  }
};

// clang's SPIR-V target emits valid OpenCL.std printf only for SPIR's mangled printf (as the
// SPIR-V pipeline calls it): float arguments promoted to double, vectors whole, %s strings as
// pointers to their arrays.
TEST_F(SpirvPrintf, ScalarsStringsAndVectorsFromClang) {
  std::string log;
  const std::vector<uint8_t> il = spirv_test::clang_spirv(R"CL(
int __attribute__((overloadable)) __spirv_ocl_printf(constant char* format, ...);
kernel void say(global int* status, int v, float f) {
  status[0] = __spirv_ocl_printf("v=%d f=%.2f s=%s\n", v, f, "text");
  status[1] = __spirv_ocl_printf("%v4hlu|%v2hlf|%v3hhd|%c|%ld\n", (uint4)(5, 6, 7, 8),
                                 (float2)(0.5f, f), (char3)(-1, 0, 1), 'x', -123456789012L);
  status[2] = __spirv_ocl_printf("100%%\n");
})CL",
                                                          &log);
  ASSERT_FALSE(il.empty()) << log;
  std::vector<int32_t> status(3, 7);
  const std::string printed = run_once(il, "say", {value(42), value(2.25f)}, &status);
  EXPECT_EQ(printed,
            "v=42 f=2.25 s=text\n"
            "5,6,7,8|0.500000,2.250000|-1,0,1|x|-123456789012\n"
            "100%\n");
  EXPECT_EQ(status, (std::vector<int32_t>{0, 0, 0}));
}

// A UniformConstant string of `text` (and its terminating zero) named %name, with the types
// and constants it needs (%uchar, %uint, %_ptr_uchar and the %cN characters are shared).
std::string string_variable(const std::string& name, const std::string& text,
                            std::set<int>* characters) {
  const std::string length = std::to_string(text.size() + 1);
  std::ostringstream out;
  out << "%" << name << "_n = OpConstant %uint " << length << "\n";
  out << "%" << name << "_t = OpTypeArray %uchar %" << name << "_n\n";
  out << "%" << name << "_p = OpTypePointer UniformConstant %" << name << "_t\n";
  std::string elements;
  for (const char c : text + '\0') {
    const int code = static_cast<unsigned char>(c);
    if (characters->insert(code).second)
      out << "%c" << code << " = OpConstant %uchar " << code << "\n";
    elements += " %c" + std::to_string(code);
  }
  out << "%" << name << "_v = OpConstantComposite %" << name << "_t" << elements << "\n";
  out << "%" << name << " = OpVariable %" << name << "_p UniformConstant %" << name << "_v\n";
  return out.str();
}

// Written as SPIRV-LLVM-Translator writes printf (the format and %s through access chains to
// their first character), with arguments no OpenCL C call passes: an unpromoted float and char.
TEST_F(SpirvPrintf, HandWrittenExtendedInstruction) {
  std::set<int> characters;
  // In order: each character constant is defined where it is first used.
  std::string strings = string_variable("format", "%s:%d:%c:%ld:%v4hhu:%.1f|\n", &characters);
  strings += string_variable("word", "hi", &characters);
  std::string log;
  const std::vector<uint8_t> il = spirv_test::assemble(R"(
               OpCapability Addresses
               OpCapability Kernel
               OpCapability Int8
               OpCapability Int64
        %std = OpExtInstImport "OpenCL.std"
               OpMemoryModel Physical64 OpenCL
               OpEntryPoint Kernel %k "say"
       %void = OpTypeVoid
      %uchar = OpTypeInt 8 0
       %uint = OpTypeInt 32 0
      %ulong = OpTypeInt 64 0
      %float = OpTypeFloat 32
     %uchar4 = OpTypeVector %uchar 4
  %_ptr_uchar = OpTypePointer UniformConstant %uchar
   %ptr_uint = OpTypePointer CrossWorkgroup %uint
         %fn = OpTypeFunction %void %ptr_uint %uint
      %zero = OpConstant %ulong 0
      %big = OpConstant %ulong 123456789012
      %half = OpConstant %float 2.5
    %letter = OpConstant %uchar 90
       %one = OpConstant %uchar 1
       %two = OpConstant %uchar 2
     %three = OpConstant %uchar 3
      %four = OpConstant %uchar 4
    %vector = OpConstantComposite %uchar4 %one %two %three %four
)" + strings + R"(
          %k = OpFunction %void None %fn
     %status = OpFunctionParameter %ptr_uint
          %v = OpFunctionParameter %uint
          %l = OpLabel
     %format_0 = OpInBoundsPtrAccessChain %_ptr_uchar %format %zero %zero
       %word_0 = OpInBoundsPtrAccessChain %_ptr_uchar %word %zero %zero
     %result = OpExtInst %uint %std printf %format_0 %word_0 %v %letter %big %vector %half
               OpStore %status %result Aligned 4
               OpReturn
               OpFunctionEnd
)",
                                                       &log);
  ASSERT_FALSE(il.empty()) << log;
  std::vector<int32_t> status(1, 7);
  const std::string printed = run_once(il, "say", {value(uint32_t(7))}, &status);
  EXPECT_EQ(printed, "hi:7:Z:123456789012:1,2,3,4:2.5|\n");
  EXPECT_EQ(status[0], 0);
}

}  // namespace
