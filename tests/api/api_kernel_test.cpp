// Program, kernel, sampler, SVM and sharing entry points (api/program.cpp, api/kernel.cpp,
// api/sampler.cpp, api/svm.cpp, api/sharing.cpp).
//
// Built twice (tests/api/CMakeLists.txt):
//   api_kernel_enqueue       through the ICD loader, with Manifold's real compiler;
//   api_kernel_enqueue_fake  linked with the runtime directly and MANIFOLD_FAKE_COMPILER: the
//                            fake compiler reads kernel signatures and runs the C++ bodies
//                            registered below, so the API layer is tested without LLVM.
// Every kernel is written in OpenCL C; under the fake compiler its C++ twin does the work.
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#ifndef CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#endif
#ifndef CL_USE_DEPRECATED_OPENCL_2_2_APIS
#define CL_USE_DEPRECATED_OPENCL_2_2_APIS  // clSetProgramReleaseCallback
#endif
#include <CL/cl.h>
#include <CL/cl_egl.h>
#include <CL/cl_gl.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#ifdef MANIFOLD_FAKE_COMPILER
#include "tests/fakes/compiler/fake_compiler.h"
// Distinct test names for the two builds (ctest lists both binaries' tests side by side).
#define KernelApi KernelApiFake
#endif

namespace {

// ---- Kernels ----

// Each work-item writes the size of its work-group (dimension 0, and dimension 1 * 1000).
const char* kProbeSource = R"CLC(
__kernel void probe(__global uint* out) {
  size_t x = get_global_id(0) - get_global_offset(0);
  size_t y = get_global_id(1) - get_global_offset(1);
  out[y * get_global_size(0) + x] = (uint)(get_local_size(0) + 1000 * get_local_size(1));
}
)CLC";

const char* kFillSource = R"CLC(
__kernel void fill(__global int* out, int value) {
  out[get_global_id(0)] = value;
}
__kernel void count(__global int* counter) {
  if (get_global_id(0) == 0) counter[0] += 1;
}
)CLC";

const char* kReqdSource = R"CLC(
__kernel __attribute__((reqd_work_group_size(2, 1, 1))) void reqd(__global int* out) {
  out[get_global_id(0)] = 7;
}
)CLC";

const char* kLocalSource = R"CLC(
__kernel void uses_local(__global int* out, __local int* scratch) {
  scratch[get_local_id(0)] = 1;
  barrier(CLK_LOCAL_MEM_FENCE);
  out[get_global_id(0)] = scratch[0];
}
)CLC";

const char* kBadSource = R"CLC(
__kernel void broken(__global int* out) {
  out[0] = badcodehere;
}
)CLC";

#ifdef MANIFOLD_FAKE_COMPILER
using manifold::compiler::NDRange;

template <class T>
T* buffer_arg(const void* const* args, int i) {
  return *static_cast<T* const*>(args[i]);
}

// The size of the group that global index `g` (offset removed) falls into in dimension `d`.
size_t group_size(const NDRange& r, unsigned d, size_t g) {
  const size_t first = g / r.local_size[d] * r.local_size[d];
  return std::min(r.local_size[d], r.global_size[d] - first);
}

// The global indices (offset removed) of dimension `d` in the groups a launch runs.
size_t items_begin(const NDRange& r, unsigned d) {
  return d < r.work_dim ? r.launch_first(d) * r.local_size[d] : 0;
}
size_t items_end(const NDRange& r, unsigned d) {
  return d < r.work_dim ? std::min(r.global_size[d], r.launch_end(d) * r.local_size[d]) : 1;
}

void define_fake_kernels() {
  using manifold::fake_compiler::define_kernel;
  define_kernel("probe", [](const NDRange& r, const void* const* args, const size_t*) {
    auto* out = buffer_arg<uint32_t>(args, 0);
    for (size_t y = items_begin(r, 1); y < items_end(r, 1); ++y)
      for (size_t x = items_begin(r, 0); x < items_end(r, 0); ++x)
        out[y * r.global_size[0] + x] = static_cast<uint32_t>(
            group_size(r, 0, x) + 1000 * (r.work_dim > 1 ? group_size(r, 1, y) : 1));
  });
  define_kernel("fill", [](const NDRange& r, const void* const* args, const size_t*) {
    auto* out = buffer_arg<int32_t>(args, 0);
    const int32_t value = *static_cast<const int32_t*>(args[1]);
    for (size_t i = items_begin(r, 0); i < items_end(r, 0); ++i)
      out[r.global_offset[0] + i] = value;
  });
  define_kernel("count", [](const NDRange&, const void* const* args, const size_t*) {
    buffer_arg<int32_t>(args, 0)[0] += 1;
  });
  define_kernel("reqd", [](const NDRange& r, const void* const* args, const size_t*) {
    for (size_t i = items_begin(r, 0); i < items_end(r, 0); ++i)
      buffer_arg<int32_t>(args, 0)[i] = 7;
  });
  define_kernel("uses_local", [](const NDRange& r, const void* const* args, const size_t*) {
    for (size_t i = items_begin(r, 0); i < items_end(r, 0); ++i)
      buffer_arg<int32_t>(args, 0)[i] = 1;
  });
}
#endif

// ---- Fixture ----

class KernelApi : public ::testing::Test {
 protected:
  void SetUp() override {
#ifdef MANIFOLD_FAKE_COMPILER
    define_fake_kernels();
#endif
    // The platform: MANIFOLD_TEST_PLATFORM names it (default "Manifold"; "any": the first).
    const char* wanted_env = std::getenv("MANIFOLD_TEST_PLATFORM");
    const std::string wanted = wanted_env ? wanted_env : "Manifold";
    cl_uint n = 0;
    ASSERT_EQ(clGetPlatformIDs(0, nullptr, &n), CL_SUCCESS);
    ASSERT_GT(n, 0u);
    std::vector<cl_platform_id> platforms(n);
    ASSERT_EQ(clGetPlatformIDs(n, platforms.data(), nullptr), CL_SUCCESS);
    for (cl_platform_id p : platforms) {
      char name[256] = {};
      clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof(name), name, nullptr);
      if (!platform_ && (wanted == "any" || std::string(name).find(wanted) != std::string::npos))
        platform_ = p;
    }
    ASSERT_NE(platform_, nullptr) << "no platform named " << wanted
                                  << " (set OCL_ICD_VENDORS or MANIFOLD_TEST_PLATFORM)";
    ASSERT_EQ(clGetDeviceIDs(platform_, CL_DEVICE_TYPE_CPU, 1, &device_, nullptr), CL_SUCCESS);
    cl_int err = CL_SUCCESS;
    context_ = clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &err);
    ASSERT_EQ(err, CL_SUCCESS);
    queue_ = clCreateCommandQueue(context_, device_, 0, &err);
    ASSERT_EQ(err, CL_SUCCESS);
  }

  void TearDown() override {
    for (cl_kernel k : kernels_) clReleaseKernel(k);
    for (cl_program p : programs_) clReleaseProgram(p);
    for (cl_mem m : mems_) clReleaseMemObject(m);
    if (queue_) clReleaseCommandQueue(queue_);
    if (context_) clReleaseContext(context_);
  }

  cl_program source_program(const char* source) {
    cl_int err = CL_SUCCESS;
    cl_program p = clCreateProgramWithSource(context_, 1, &source, nullptr, &err);
    EXPECT_EQ(err, CL_SUCCESS);
    programs_.push_back(p);
    return p;
  }

  cl_program built(const char* source, const char* options = nullptr) {
    cl_program p = source_program(source);
    const cl_int err = clBuildProgram(p, 0, nullptr, options, nullptr, nullptr);
    EXPECT_EQ(err, CL_SUCCESS) << build_log(p);
    return p;
  }

  cl_kernel kernel(cl_program p, const char* name) {
    cl_int err = CL_SUCCESS;
    cl_kernel k = clCreateKernel(p, name, &err);
    EXPECT_EQ(err, CL_SUCCESS) << name;
    kernels_.push_back(k);
    return k;
  }

  cl_mem buffer(size_t bytes) {
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateBuffer(context_, CL_MEM_READ_WRITE, bytes, nullptr, &err);
    EXPECT_EQ(err, CL_SUCCESS);
    mems_.push_back(m);
    return m;
  }

  template <class T>
  std::vector<T> read(cl_mem m, size_t count) {
    std::vector<T> out(count);
    EXPECT_EQ(clEnqueueReadBuffer(queue_, m, CL_TRUE, 0, count * sizeof(T), out.data(), 0, nullptr,
                                  nullptr),
              CL_SUCCESS);
    return out;
  }

  void zero(cl_mem m, size_t bytes) {
    const int32_t z = 0;
    ASSERT_EQ(clEnqueueFillBuffer(queue_, m, &z, sizeof(z), 0, bytes, 0, nullptr, nullptr),
              CL_SUCCESS);
    ASSERT_EQ(clFinish(queue_), CL_SUCCESS);
  }

  std::string build_log(cl_program p) {
    size_t size = 0;
    clGetProgramBuildInfo(p, device_, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
    std::string log(size, '\0');
    clGetProgramBuildInfo(p, device_, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
    return log;
  }

  template <class T>
  T device_info(cl_device_info param) {
    T value{};
    EXPECT_EQ(clGetDeviceInfo(device_, param, sizeof(T), &value, nullptr), CL_SUCCESS);
    return value;
  }

  cl_platform_id platform_ = nullptr;
  cl_device_id device_ = nullptr;
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
  std::vector<cl_program> programs_;
  std::vector<cl_kernel> kernels_;
  std::vector<cl_mem> mems_;
};

// ---- Programs ----

TEST_F(KernelApi, CreateProgramWithSourceValidatesArguments) {
  cl_int err = CL_SUCCESS;
  const char* parts[] = {"__kernel void a(__global int* p) {}\n", nullptr};
  EXPECT_EQ(clCreateProgramWithSource(context_, 0, parts, nullptr, &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_VALUE);
  EXPECT_EQ(clCreateProgramWithSource(context_, 1, nullptr, nullptr, &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_VALUE);
  EXPECT_EQ(clCreateProgramWithSource(context_, 2, parts, nullptr, &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_VALUE);
  EXPECT_EQ(clCreateProgramWithSource(nullptr, 1, parts, nullptr, &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_CONTEXT);

  // Lengths: 0 means null-terminated; a length excludes the rest of the string.
  const char* pieces[] = {"abcXYZ", "def", "ghi"};
  const size_t lengths[] = {3, 0, 2};
  cl_program p = clCreateProgramWithSource(context_, 3, pieces, lengths, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  programs_.push_back(p);
  size_t size = 0;
  ASSERT_EQ(clGetProgramInfo(p, CL_PROGRAM_SOURCE, 0, nullptr, &size), CL_SUCCESS);
  std::string source(size, '\0');
  ASSERT_EQ(clGetProgramInfo(p, CL_PROGRAM_SOURCE, size, source.data(), nullptr), CL_SUCCESS);
  EXPECT_EQ(std::string(source.c_str()), "abcdefgh");
}

TEST_F(KernelApi, BuildReportsKernelsAndStatus) {
  cl_program p = built(kFillSource);
  cl_build_status status = CL_BUILD_NONE;
  ASSERT_EQ(
      clGetProgramBuildInfo(p, device_, CL_PROGRAM_BUILD_STATUS, sizeof(status), &status, nullptr),
      CL_SUCCESS);
  EXPECT_EQ(status, CL_BUILD_SUCCESS);
  cl_program_binary_type type = 0;
  ASSERT_EQ(clGetProgramBuildInfo(p, device_, CL_PROGRAM_BINARY_TYPE, sizeof(type), &type, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(type, static_cast<cl_program_binary_type>(CL_PROGRAM_BINARY_TYPE_EXECUTABLE));

  size_t num = 0;
  ASSERT_EQ(clGetProgramInfo(p, CL_PROGRAM_NUM_KERNELS, sizeof(num), &num, nullptr), CL_SUCCESS);
  EXPECT_EQ(num, 2u);
  char names[256] = {};
  ASSERT_EQ(clGetProgramInfo(p, CL_PROGRAM_KERNEL_NAMES, sizeof(names), names, nullptr),
            CL_SUCCESS);
  EXPECT_NE(std::string(names).find("fill"), std::string::npos);
  EXPECT_NE(std::string(names).find("count"), std::string::npos);
  EXPECT_NE(std::string(names).find(';'), std::string::npos);

  cl_uint count = 0;
  ASSERT_EQ(clCreateKernelsInProgram(p, 0, nullptr, &count), CL_SUCCESS);
  EXPECT_EQ(count, 2u);
  cl_kernel ks[2] = {};
  EXPECT_EQ(clCreateKernelsInProgram(p, 1, ks, nullptr), CL_INVALID_VALUE);
  ASSERT_EQ(clCreateKernelsInProgram(p, 2, ks, nullptr), CL_SUCCESS);
  kernels_.push_back(ks[0]);
  kernels_.push_back(ks[1]);

  // Kernels are attached: the program cannot be rebuilt.
  EXPECT_EQ(clBuildProgram(p, 0, nullptr, nullptr, nullptr, nullptr), CL_INVALID_OPERATION);
  EXPECT_EQ(clCompileProgram(p, 0, nullptr, nullptr, 0, nullptr, nullptr, nullptr, nullptr),
            CL_INVALID_OPERATION);
}

TEST_F(KernelApi, QueriesBeforeBuild) {
  cl_program p = source_program(kFillSource);
  size_t num = 0;
  EXPECT_EQ(clGetProgramInfo(p, CL_PROGRAM_NUM_KERNELS, sizeof(num), &num, nullptr),
            CL_INVALID_PROGRAM_EXECUTABLE);
  EXPECT_EQ(clGetProgramInfo(p, CL_PROGRAM_KERNEL_NAMES, 0, nullptr, &num),
            CL_INVALID_PROGRAM_EXECUTABLE);
  cl_int err = CL_SUCCESS;
  EXPECT_EQ(clCreateKernel(p, "fill", &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_PROGRAM_EXECUTABLE);
  cl_build_status status = CL_BUILD_SUCCESS;
  ASSERT_EQ(
      clGetProgramBuildInfo(p, device_, CL_PROGRAM_BUILD_STATUS, sizeof(status), &status, nullptr),
      CL_SUCCESS);
  EXPECT_EQ(status, CL_BUILD_NONE);
  size_t size = 99;
  ASSERT_EQ(clGetProgramBuildInfo(p, device_, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size), CL_SUCCESS);
  EXPECT_EQ(size, 1u);  // an empty string
  ASSERT_EQ(clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof(size), &size, nullptr), CL_SUCCESS);
  EXPECT_EQ(size, 0u);
}

TEST_F(KernelApi, BuildFailureSetsStatusAndLog) {
  cl_program p = source_program(kBadSource);
  EXPECT_EQ(clBuildProgram(p, 1, &device_, nullptr, nullptr, nullptr), CL_BUILD_PROGRAM_FAILURE);
  cl_build_status status = CL_BUILD_NONE;
  ASSERT_EQ(
      clGetProgramBuildInfo(p, device_, CL_PROGRAM_BUILD_STATUS, sizeof(status), &status, nullptr),
      CL_SUCCESS);
  EXPECT_EQ(status, CL_BUILD_ERROR);
  EXPECT_NE(build_log(p).find("badcodehere"), std::string::npos);
  cl_int err = CL_SUCCESS;
  EXPECT_EQ(clCreateKernel(p, "broken", &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_PROGRAM_EXECUTABLE);
}

TEST_F(KernelApi, BuildValidatesArguments) {
  cl_program p = source_program(kFillSource);
  int data = 0;
  EXPECT_EQ(clBuildProgram(nullptr, 0, nullptr, nullptr, nullptr, nullptr), CL_INVALID_PROGRAM);
  EXPECT_EQ(clBuildProgram(p, 1, nullptr, nullptr, nullptr, nullptr), CL_INVALID_VALUE);
  EXPECT_EQ(clBuildProgram(p, 0, &device_, nullptr, nullptr, nullptr), CL_INVALID_VALUE);
  EXPECT_EQ(clBuildProgram(p, 0, nullptr, nullptr, nullptr, &data), CL_INVALID_VALUE);
  EXPECT_EQ(clBuildProgram(p, 0, nullptr, "-not-an-option", nullptr, nullptr),
            CL_INVALID_BUILD_OPTIONS);

  // A sub-device is a device, but not one of this program's.
  const cl_device_partition_property props[] = {CL_DEVICE_PARTITION_EQUALLY, 1, 0};
  cl_device_id sub = nullptr;
  cl_uint got = 0;
  if (clCreateSubDevices(device_, props, 1, &sub, &got) == CL_SUCCESS && got == 1) {
    EXPECT_EQ(clBuildProgram(p, 1, &sub, nullptr, nullptr, nullptr), CL_INVALID_DEVICE);
    clReleaseDevice(sub);
  }
}

struct Notification {
  std::mutex mutex;
  std::condition_variable cv;
  bool called = false;
  cl_build_status status = CL_BUILD_NONE;
  cl_device_id device = nullptr;
};

void CL_CALLBACK on_build(cl_program program, void* user_data) {
  auto* n = static_cast<Notification*>(user_data);
  cl_build_status status = CL_BUILD_NONE;
  clGetProgramBuildInfo(program, n->device, CL_PROGRAM_BUILD_STATUS, sizeof(status), &status,
                        nullptr);
  std::lock_guard lock(n->mutex);
  n->status = status;
  n->called = true;
  n->cv.notify_all();
}

bool wait_for(Notification& n) {
  std::unique_lock lock(n.mutex);
  return n.cv.wait_for(lock, std::chrono::seconds(60), [&] { return n.called; });
}

TEST_F(KernelApi, AsynchronousBuildCallsNotify) {
  for (const char* source : {kFillSource, kBadSource}) {
    cl_int err = CL_SUCCESS;
    cl_program p = clCreateProgramWithSource(context_, 1, &source, nullptr, &err);
    ASSERT_EQ(err, CL_SUCCESS);
    Notification n;
    n.device = device_;
    err = clBuildProgram(p, 1, &device_, nullptr, on_build, &n);
    ASSERT_EQ(err, CL_SUCCESS);
    // The application may drop the program while it builds.
    ASSERT_EQ(clReleaseProgram(p), CL_SUCCESS);
    ASSERT_TRUE(wait_for(n));
    EXPECT_EQ(n.status, source == kFillSource ? CL_BUILD_SUCCESS : CL_BUILD_ERROR);
  }
}

TEST_F(KernelApi, BinariesRoundTrip) {
  cl_program p = built(kFillSource);
  size_t size = 0;
  ASSERT_EQ(clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof(size), &size, nullptr), CL_SUCCESS);
  ASSERT_GT(size, 0u);
  std::vector<unsigned char> binary(size);
  unsigned char* targets[] = {binary.data()};
  size_t ret = 0;
  EXPECT_EQ(clGetProgramInfo(p, CL_PROGRAM_BINARIES, 1, targets, nullptr), CL_INVALID_VALUE);
  ASSERT_EQ(clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof(targets), targets, &ret), CL_SUCCESS);
  EXPECT_EQ(ret, sizeof(targets));
  unsigned char* skipped[] = {nullptr};  // a NULL entry skips the device
  EXPECT_EQ(clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof(skipped), skipped, nullptr),
            CL_SUCCESS);

  const unsigned char* bins[] = {binary.data()};
  cl_int status = -1, err = CL_SUCCESS;
  cl_program from_binary =
      clCreateProgramWithBinary(context_, 1, &device_, &size, bins, &status, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  programs_.push_back(from_binary);
  EXPECT_EQ(status, CL_SUCCESS);
  ASSERT_EQ(clBuildProgram(from_binary, 0, nullptr, nullptr, nullptr, nullptr), CL_SUCCESS);
  cl_kernel k = kernel(from_binary, "fill");
  cl_mem out = buffer(16 * sizeof(int));
  const int value = 42;
  ASSERT_EQ(clSetKernelArg(k, 0, sizeof(out), &out), CL_SUCCESS);
  ASSERT_EQ(clSetKernelArg(k, 1, sizeof(value), &value), CL_SUCCESS);
  const size_t global = 16;
  ASSERT_EQ(clEnqueueNDRangeKernel(queue_, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr),
            CL_SUCCESS);
  for (int v : read<int>(out, 16)) EXPECT_EQ(v, 42);

  // A program from a binary has no source and cannot be compiled.
  EXPECT_EQ(
      clCompileProgram(from_binary, 0, nullptr, nullptr, 0, nullptr, nullptr, nullptr, nullptr),
      CL_INVALID_OPERATION);
}

TEST_F(KernelApi, CreateProgramWithBinaryValidates) {
  const unsigned char junk[] = "definitely not a program binary";
  const unsigned char* bins[] = {junk};
  size_t length = sizeof(junk);
  cl_int status = CL_SUCCESS, err = CL_SUCCESS;
  EXPECT_EQ(clCreateProgramWithBinary(context_, 1, &device_, &length, bins, &status, &err),
            nullptr);
  EXPECT_EQ(err, CL_INVALID_BINARY);
  EXPECT_EQ(status, CL_INVALID_BINARY);

  size_t zero = 0;
  EXPECT_EQ(clCreateProgramWithBinary(context_, 1, &device_, &zero, bins, &status, &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_VALUE);
  EXPECT_EQ(status, CL_INVALID_VALUE);
  EXPECT_EQ(clCreateProgramWithBinary(context_, 1, &device_, nullptr, bins, nullptr, &err),
            nullptr);
  EXPECT_EQ(err, CL_INVALID_VALUE);
  EXPECT_EQ(clCreateProgramWithBinary(context_, 0, &device_, &length, bins, nullptr, &err),
            nullptr);
  EXPECT_EQ(err, CL_INVALID_VALUE);
  EXPECT_EQ(clCreateProgramWithBinary(context_, 1, nullptr, &length, bins, nullptr, &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_VALUE);
}

TEST_F(KernelApi, CompileWithHeadersAndLink) {
  const char* header_source = "#define FILL_VALUE 5\n";
  cl_program header = source_program(header_source);
  const char* source =
      "#include \"fill_value.h\"\n"
      "__kernel void fill(__global int* out, int value) {\n"
      "  out[get_global_id(0)] = value + FILL_VALUE - FILL_VALUE;\n"
      "}\n";
  cl_program object = source_program(source);
  const char* names[] = {"fill_value.h"};
  EXPECT_EQ(clCompileProgram(object, 0, nullptr, nullptr, 1, nullptr, names, nullptr, nullptr),
            CL_INVALID_VALUE);
  EXPECT_EQ(clCompileProgram(object, 0, nullptr, nullptr, 0, &header, nullptr, nullptr, nullptr),
            CL_INVALID_VALUE);
  EXPECT_EQ(
      clCompileProgram(object, 0, nullptr, "-not-an-option", 0, nullptr, nullptr, nullptr, nullptr),
      CL_INVALID_COMPILER_OPTIONS);
  ASSERT_EQ(clCompileProgram(object, 0, nullptr, nullptr, 1, &header, names, nullptr, nullptr),
            CL_SUCCESS)
      << build_log(object);
  cl_program_binary_type type = 0;
  ASSERT_EQ(
      clGetProgramBuildInfo(object, device_, CL_PROGRAM_BINARY_TYPE, sizeof(type), &type, nullptr),
      CL_SUCCESS);
  EXPECT_EQ(type, static_cast<cl_program_binary_type>(CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT));

  cl_int err = CL_SUCCESS;
  EXPECT_EQ(clLinkProgram(context_, 0, nullptr, nullptr, 0, nullptr, nullptr, nullptr, &err),
            nullptr);
  EXPECT_EQ(err, CL_INVALID_VALUE);
  cl_program bogus = reinterpret_cast<cl_program>(queue_);
  EXPECT_EQ(clLinkProgram(context_, 0, nullptr, nullptr, 1, &bogus, nullptr, nullptr, &err),
            nullptr);
  EXPECT_EQ(err, CL_INVALID_PROGRAM);
  EXPECT_EQ(
      clLinkProgram(context_, 0, nullptr, "-not-an-option", 1, &object, nullptr, nullptr, &err),
      nullptr);
  EXPECT_EQ(err, CL_INVALID_LINKER_OPTIONS);
  // One input compiled, one not: the link rules are broken.
  cl_program uncompiled = source_program(kFillSource);
  cl_program mixed[] = {object, uncompiled};
  EXPECT_EQ(clLinkProgram(context_, 0, nullptr, nullptr, 2, mixed, nullptr, nullptr, &err),
            nullptr);
  EXPECT_EQ(err, CL_INVALID_OPERATION);

  cl_program linked =
      clLinkProgram(context_, 1, &device_, nullptr, 1, &object, nullptr, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  programs_.push_back(linked);
  ASSERT_EQ(
      clGetProgramBuildInfo(linked, device_, CL_PROGRAM_BINARY_TYPE, sizeof(type), &type, nullptr),
      CL_SUCCESS);
  EXPECT_EQ(type, static_cast<cl_program_binary_type>(CL_PROGRAM_BINARY_TYPE_EXECUTABLE));
  cl_kernel k = kernel(linked, "fill");
  cl_mem out = buffer(8 * sizeof(int));
  const int value = -3;
  ASSERT_EQ(clSetKernelArg(k, 0, sizeof(out), &out), CL_SUCCESS);
  ASSERT_EQ(clSetKernelArg(k, 1, sizeof(value), &value), CL_SUCCESS);
  const size_t global = 8;
  ASSERT_EQ(clEnqueueNDRangeKernel(queue_, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr),
            CL_SUCCESS);
  for (int v : read<int>(out, 8)) EXPECT_EQ(v, -3);
  // A linked program cannot be built again.
  EXPECT_EQ(clBuildProgram(linked, 0, nullptr, nullptr, nullptr, nullptr), CL_INVALID_OPERATION);
}

TEST_F(KernelApi, ProgramQueries) {
  cl_program p = built(kFillSource, "-DUNUSED=1");
  cl_context c = nullptr;
  ASSERT_EQ(clGetProgramInfo(p, CL_PROGRAM_CONTEXT, sizeof(c), &c, nullptr), CL_SUCCESS);
  EXPECT_EQ(c, context_);
  cl_uint n = 0;
  ASSERT_EQ(clGetProgramInfo(p, CL_PROGRAM_NUM_DEVICES, sizeof(n), &n, nullptr), CL_SUCCESS);
  EXPECT_EQ(n, 1u);
  cl_device_id d = nullptr;
  ASSERT_EQ(clGetProgramInfo(p, CL_PROGRAM_DEVICES, sizeof(d), &d, nullptr), CL_SUCCESS);
  EXPECT_EQ(d, device_);
  ASSERT_EQ(clGetProgramInfo(p, CL_PROGRAM_REFERENCE_COUNT, sizeof(n), &n, nullptr), CL_SUCCESS);
  EXPECT_EQ(n, 1u);
  size_t size = 99;
  ASSERT_EQ(clGetProgramInfo(p, CL_PROGRAM_IL, 0, nullptr, &size), CL_SUCCESS);
  EXPECT_EQ(size, 0u);
  cl_bool b = CL_TRUE;
  ASSERT_EQ(clGetProgramInfo(p, CL_PROGRAM_SCOPE_GLOBAL_CTORS_PRESENT, sizeof(b), &b, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(b, CL_FALSE);
  ASSERT_EQ(clGetProgramInfo(p, CL_PROGRAM_SCOPE_GLOBAL_DTORS_PRESENT, sizeof(b), &b, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(b, CL_FALSE);
  EXPECT_EQ(clGetProgramInfo(p, 0x7fffffff, sizeof(n), &n, nullptr), CL_INVALID_VALUE);
  EXPECT_EQ(clGetProgramInfo(p, CL_PROGRAM_NUM_DEVICES, 1, &n, nullptr), CL_INVALID_VALUE);

  char options[64] = {};
  ASSERT_EQ(clGetProgramBuildInfo(p, device_, CL_PROGRAM_BUILD_OPTIONS, sizeof(options), options,
                                  nullptr),
            CL_SUCCESS);
  EXPECT_STREQ(options, "-DUNUSED=1");
  size_t globals = 1;
  ASSERT_EQ(clGetProgramBuildInfo(p, device_, CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE,
                                  sizeof(globals), &globals, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(globals, 0u);
  EXPECT_EQ(clGetProgramBuildInfo(p, nullptr, CL_PROGRAM_BUILD_STATUS, sizeof(n), &n, nullptr),
            CL_INVALID_DEVICE);
  EXPECT_EQ(clGetProgramBuildInfo(p, device_, 0x7fffffff, sizeof(n), &n, nullptr),
            CL_INVALID_VALUE);
  EXPECT_EQ(clRetainProgram(p), CL_SUCCESS);
  EXPECT_EQ(clReleaseProgram(p), CL_SUCCESS);
  EXPECT_EQ(clRetainProgram(nullptr), CL_INVALID_PROGRAM);
}

// ---- Optional features (OpenCL 3.0 consistency) ----

void CL_CALLBACK program_released(cl_program, void*) {}

TEST_F(KernelApi, UnsupportedProgramFeatures) {
  cl_program p = built(kFillSource);
  size_t il_size = 0;
  ASSERT_EQ(clGetDeviceInfo(device_, CL_DEVICE_ILS_WITH_VERSION, 0, nullptr, &il_size), CL_SUCCESS);
  if (il_size == 0) {
    const cl_uint bogus = 0xDEADBEEF;
    cl_int err = CL_SUCCESS;
    EXPECT_EQ(clCreateProgramWithIL(context_, &bogus, sizeof(bogus), &err), nullptr);
    EXPECT_EQ(err, CL_INVALID_OPERATION);
    const cl_uint value = 42;
    EXPECT_EQ(clSetProgramSpecializationConstant(p, 0, sizeof(value), &value),
              CL_INVALID_OPERATION);
  }
  EXPECT_EQ(clSetProgramReleaseCallback(p, program_released, nullptr), CL_INVALID_OPERATION);
  cl_int err = CL_SUCCESS;
  EXPECT_EQ(clCreateProgramWithBuiltInKernels(context_, 1, &device_, "no_such_builtin", &err),
            nullptr);
  EXPECT_EQ(err, CL_INVALID_VALUE);
  EXPECT_EQ(clCreateProgramWithBuiltInKernels(context_, 1, &device_, nullptr, &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_VALUE);
}

TEST_F(KernelApi, SvmWithoutSupport) {
  if (device_info<cl_device_svm_capabilities>(CL_DEVICE_SVM_CAPABILITIES) != 0)
    GTEST_SKIP() << "the device supports SVM";
  cl_program p = built(kFillSource);
  cl_kernel k = kernel(p, "fill");
  EXPECT_EQ(clSVMAlloc(context_, CL_MEM_READ_WRITE, 16, 0), nullptr);
  void* bogus0 = reinterpret_cast<void*>(0xDEADBEEF);
  void* bogus1 = reinterpret_cast<void*>(0xDEADDEAD);
  const cl_uint pattern = 0xAAAAAAAA;
  EXPECT_EQ(clEnqueueSVMMemFill(queue_, bogus0, &pattern, sizeof(pattern), 16, 0, nullptr, nullptr),
            CL_INVALID_OPERATION);
  EXPECT_EQ(clEnqueueSVMMemcpy(queue_, CL_TRUE, bogus1, bogus0, 16, 0, nullptr, nullptr),
            CL_INVALID_OPERATION);
  EXPECT_EQ(clEnqueueSVMMap(queue_, CL_TRUE, CL_MAP_READ, bogus1, 16, 0, nullptr, nullptr),
            CL_INVALID_OPERATION);
  EXPECT_EQ(clEnqueueSVMUnmap(queue_, bogus1, 0, nullptr, nullptr), CL_INVALID_OPERATION);
  EXPECT_EQ(clEnqueueSVMMigrateMem(queue_, 1, const_cast<const void**>(&bogus1), nullptr, 0, 0,
                                   nullptr, nullptr),
            CL_INVALID_OPERATION);
  clSVMFree(context_, nullptr);
  EXPECT_EQ(clEnqueueSVMFree(queue_, 1, &bogus0, nullptr, nullptr, 0, nullptr, nullptr),
            CL_INVALID_OPERATION);
  EXPECT_EQ(clEnqueueSVMFree(nullptr, 1, &bogus0, nullptr, nullptr, 0, nullptr, nullptr),
            CL_INVALID_COMMAND_QUEUE);
  EXPECT_EQ(clSetKernelArgSVMPointer(k, 0, nullptr), CL_INVALID_OPERATION);
  EXPECT_EQ(clSetKernelExecInfo(k, CL_KERNEL_EXEC_INFO_SVM_PTRS, 0, nullptr), CL_INVALID_OPERATION);
}

TEST_F(KernelApi, SamplersWithoutImages) {
  cl_int err = CL_SUCCESS;
  const cl_sampler_properties bad[] = {CL_SAMPLER_FILTER_MODE, 0x1234, 0};
  EXPECT_EQ(clCreateSamplerWithProperties(context_, bad, &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_VALUE);
  const cl_sampler_properties twice[] = {CL_SAMPLER_FILTER_MODE, CL_FILTER_LINEAR,
                                         CL_SAMPLER_FILTER_MODE, CL_FILTER_LINEAR, 0};
  EXPECT_EQ(clCreateSamplerWithProperties(context_, twice, &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_VALUE);
  EXPECT_EQ(clCreateSampler(context_, 2, CL_ADDRESS_CLAMP, CL_FILTER_NEAREST, &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_VALUE);
  EXPECT_EQ(clCreateSampler(nullptr, CL_TRUE, CL_ADDRESS_CLAMP, CL_FILTER_NEAREST, &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_CONTEXT);

  const cl_sampler_properties good[] = {CL_SAMPLER_NORMALIZED_COORDS, CL_FALSE,
                                        CL_SAMPLER_ADDRESSING_MODE, CL_ADDRESS_REPEAT, 0};
  cl_sampler s = clCreateSamplerWithProperties(context_, good, &err);
  if (device_info<cl_bool>(CL_DEVICE_IMAGE_SUPPORT) == CL_FALSE) {
    EXPECT_EQ(s, nullptr);
    EXPECT_EQ(err, CL_INVALID_OPERATION);
    return;
  }
  ASSERT_EQ(err, CL_SUCCESS);
  cl_addressing_mode mode = 0;
  ASSERT_EQ(clGetSamplerInfo(s, CL_SAMPLER_ADDRESSING_MODE, sizeof(mode), &mode, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(mode, static_cast<cl_addressing_mode>(CL_ADDRESS_REPEAT));
  cl_sampler_properties got[5] = {};
  size_t size = 0;
  ASSERT_EQ(clGetSamplerInfo(s, CL_SAMPLER_PROPERTIES, sizeof(got), got, &size), CL_SUCCESS);
  EXPECT_EQ(size, sizeof(good));
  clReleaseSampler(s);
}

TEST_F(KernelApi, NoGlOrEglSharing) {
  cl_int err = CL_SUCCESS;
  EXPECT_EQ(clCreateFromGLBuffer(context_, CL_MEM_READ_WRITE, 1, &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_CONTEXT);
  EXPECT_EQ(clCreateFromGLTexture(context_, CL_MEM_READ_WRITE, 0x0DE1, 0, 1, &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_CONTEXT);
  cl_mem m = buffer(64);
  cl_gl_object_type type = 0;
  cl_GLuint name = 0;
  EXPECT_EQ(clGetGLObjectInfo(m, &type, &name), CL_INVALID_GL_OBJECT);
  EXPECT_EQ(clGetGLObjectInfo(nullptr, &type, &name), CL_INVALID_MEM_OBJECT);
  EXPECT_EQ(clEnqueueAcquireGLObjects(queue_, 1, &m, 0, nullptr, nullptr), CL_INVALID_CONTEXT);
  EXPECT_EQ(clEnqueueAcquireGLObjects(queue_, 1, nullptr, 0, nullptr, nullptr), CL_INVALID_VALUE);
  EXPECT_EQ(clEnqueueReleaseGLObjects(nullptr, 1, &m, 0, nullptr, nullptr),
            CL_INVALID_COMMAND_QUEUE);

  using EglImage = cl_mem(CL_API_CALL*)(cl_context, CLeglDisplayKHR, CLeglImageKHR, cl_mem_flags,
                                        const cl_egl_image_properties_khr*, cl_int*);
  auto egl_image = reinterpret_cast<EglImage>(
      clGetExtensionFunctionAddressForPlatform(platform_, "clCreateFromEGLImageKHR"));
  if (egl_image) {
    EXPECT_EQ(
        egl_image(context_, nullptr, nullptr, CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY, nullptr, &err),
        nullptr);
    EXPECT_EQ(err, CL_INVALID_VALUE);
    EXPECT_EQ(egl_image(context_, nullptr, nullptr, CL_MEM_READ_ONLY, nullptr, &err), nullptr);
    EXPECT_NE(err, CL_SUCCESS);
  }
}

// ---- Kernels ----

TEST_F(KernelApi, CreateKernelErrors) {
  cl_program p = built(kFillSource);
  cl_int err = CL_SUCCESS;
  EXPECT_EQ(clCreateKernel(p, nullptr, &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_VALUE);
  EXPECT_EQ(clCreateKernel(p, "nonexistent_kernel", &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_KERNEL_NAME);
  EXPECT_EQ(clCreateKernel(nullptr, "fill", &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_PROGRAM);
}

TEST_F(KernelApi, KernelQueries) {
  cl_program p = built(kReqdSource);
  cl_kernel k = kernel(p, "reqd");
  char name[32] = {};
  ASSERT_EQ(clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof(name), name, nullptr), CL_SUCCESS);
  EXPECT_STREQ(name, "reqd");
  cl_uint num_args = 0;
  ASSERT_EQ(clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof(num_args), &num_args, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(num_args, 1u);
  cl_program prog = nullptr;
  ASSERT_EQ(clGetKernelInfo(k, CL_KERNEL_PROGRAM, sizeof(prog), &prog, nullptr), CL_SUCCESS);
  EXPECT_EQ(prog, p);
  cl_context ctx = nullptr;
  ASSERT_EQ(clGetKernelInfo(k, CL_KERNEL_CONTEXT, sizeof(ctx), &ctx, nullptr), CL_SUCCESS);
  EXPECT_EQ(ctx, context_);
  char attributes[128] = {};
  ASSERT_EQ(clGetKernelInfo(k, CL_KERNEL_ATTRIBUTES, sizeof(attributes), attributes, nullptr),
            CL_SUCCESS);
  EXPECT_NE(std::string(attributes).find("reqd_work_group_size"), std::string::npos);

  size_t compile_size[3] = {};
  ASSERT_EQ(clGetKernelWorkGroupInfo(k, device_, CL_KERNEL_COMPILE_WORK_GROUP_SIZE,
                                     sizeof(compile_size), compile_size, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(compile_size[0], 2u);
  EXPECT_EQ(compile_size[1], 1u);
  EXPECT_EQ(compile_size[2], 1u);
  size_t wg = 0;
  ASSERT_EQ(
      clGetKernelWorkGroupInfo(k, nullptr, CL_KERNEL_WORK_GROUP_SIZE, sizeof(wg), &wg, nullptr),
      CL_SUCCESS);
  EXPECT_GE(wg, 2u);
  EXPECT_LE(wg, device_info<size_t>(CL_DEVICE_MAX_WORK_GROUP_SIZE));
  size_t multiple = 0;
  ASSERT_EQ(clGetKernelWorkGroupInfo(k, device_, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
                                     sizeof(multiple), &multiple, nullptr),
            CL_SUCCESS);
  EXPECT_GT(multiple, 0u);
  size_t global[3];
  EXPECT_EQ(clGetKernelWorkGroupInfo(k, device_, CL_KERNEL_GLOBAL_WORK_SIZE, sizeof(global), global,
                                     nullptr),
            CL_INVALID_VALUE);
  EXPECT_EQ(clGetKernelWorkGroupInfo(k, device_, 0x7fffffff, sizeof(wg), &wg, nullptr),
            CL_INVALID_VALUE);

  // Without -cl-kernel-arg-info, argument information is not available.
  cl_kernel_arg_address_qualifier address = 0;
  EXPECT_EQ(
      clGetKernelArgInfo(k, 0, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof(address), &address, nullptr),
      CL_KERNEL_ARG_INFO_NOT_AVAILABLE);
  EXPECT_EQ(
      clGetKernelArgInfo(k, 5, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof(address), &address, nullptr),
      CL_INVALID_ARG_INDEX);
}

TEST_F(KernelApi, KernelArgInfo) {
  cl_program p = built(kLocalSource, "-cl-kernel-arg-info");
  cl_kernel k = kernel(p, "uses_local");
  cl_kernel_arg_address_qualifier address = 0;
  ASSERT_EQ(
      clGetKernelArgInfo(k, 1, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof(address), &address, nullptr),
      CL_SUCCESS);
  EXPECT_EQ(address, static_cast<cl_kernel_arg_address_qualifier>(CL_KERNEL_ARG_ADDRESS_LOCAL));
  char name[32] = {};
  ASSERT_EQ(clGetKernelArgInfo(k, 0, CL_KERNEL_ARG_NAME, sizeof(name), name, nullptr), CL_SUCCESS);
  EXPECT_STREQ(name, "out");
  char type[32] = {};
  ASSERT_EQ(clGetKernelArgInfo(k, 0, CL_KERNEL_ARG_TYPE_NAME, sizeof(type), type, nullptr),
            CL_SUCCESS);
  EXPECT_STREQ(type, "int*");

  // CL_KERNEL_LOCAL_MEM_SIZE counts the __local arguments set so far.
  cl_ulong before = 0, after = 0;
  ASSERT_EQ(clGetKernelWorkGroupInfo(k, device_, CL_KERNEL_LOCAL_MEM_SIZE, sizeof(before), &before,
                                     nullptr),
            CL_SUCCESS);
  ASSERT_EQ(clSetKernelArg(k, 1, 256, nullptr), CL_SUCCESS);
  ASSERT_EQ(clGetKernelWorkGroupInfo(k, device_, CL_KERNEL_LOCAL_MEM_SIZE, sizeof(after), &after,
                                     nullptr),
            CL_SUCCESS);
  EXPECT_EQ(after, before + 256);
}

TEST_F(KernelApi, CloneKeepsArguments) {
  cl_program p = built(kFillSource);
  cl_kernel k = kernel(p, "fill");
  cl_mem out = buffer(4 * sizeof(int));
  const int value = 9;
  ASSERT_EQ(clSetKernelArg(k, 0, sizeof(out), &out), CL_SUCCESS);
  ASSERT_EQ(clSetKernelArg(k, 1, sizeof(value), &value), CL_SUCCESS);
  cl_int err = CL_SUCCESS;
  cl_kernel clone = clCloneKernel(k, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  kernels_.push_back(clone);
  cl_uint refs = 0;
  ASSERT_EQ(clGetKernelInfo(clone, CL_KERNEL_REFERENCE_COUNT, sizeof(refs), &refs, nullptr),
            CL_SUCCESS);
  EXPECT_EQ(refs, 1u);
  const size_t global = 4;
  ASSERT_EQ(
      clEnqueueNDRangeKernel(queue_, clone, 1, nullptr, &global, nullptr, 0, nullptr, nullptr),
      CL_SUCCESS);
  for (int v : read<int>(out, 4)) EXPECT_EQ(v, 9);
  EXPECT_EQ(clCloneKernel(nullptr, &err), nullptr);
  EXPECT_EQ(err, CL_INVALID_KERNEL);
}

// The spec (clReleaseMemObject): a memory object is deleted once its reference count is zero
// and the commands using it have finished; clSetKernelArg takes no reference. So the
// destructor callback fires at release even while a kernel still names the buffer, and a
// launch enqueued before the release keeps the buffer until the launch completes.
TEST_F(KernelApi, KernelArgumentsDoNotDelayBufferDestruction) {
  cl_program p = built(kFillSource);
  cl_kernel k = kernel(p, "fill");
  cl_int err = CL_SUCCESS;
  cl_mem unused = clCreateBuffer(context_, CL_MEM_READ_WRITE, 64, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  std::atomic<int> destroyed{0};
  auto count = [](cl_mem, void* data) { ++*static_cast<std::atomic<int>*>(data); };
  ASSERT_EQ(clSetMemObjectDestructorCallback(unused, count, &destroyed), CL_SUCCESS);
  ASSERT_EQ(clSetKernelArg(k, 0, sizeof(unused), &unused), CL_SUCCESS);
  ASSERT_EQ(clReleaseMemObject(unused), CL_SUCCESS);
  EXPECT_EQ(destroyed.load(), 1) << "the kernel argument kept the released buffer alive";

  // A launch in flight keeps its buffer: written correctly, destroyed after it completes.
  cl_mem used = clCreateBuffer(context_, CL_MEM_READ_WRITE, 4 * sizeof(int), nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  std::atomic<int> used_destroyed{0};
  ASSERT_EQ(clSetMemObjectDestructorCallback(used, count, &used_destroyed), CL_SUCCESS);
  cl_event gate = clCreateUserEvent(context_, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  const int value = 5;
  ASSERT_EQ(clSetKernelArg(k, 0, sizeof(used), &used), CL_SUCCESS);
  ASSERT_EQ(clSetKernelArg(k, 1, sizeof(value), &value), CL_SUCCESS);
  const size_t global = 4;
  ASSERT_EQ(clEnqueueNDRangeKernel(queue_, k, 1, nullptr, &global, nullptr, 1, &gate, nullptr),
            CL_SUCCESS);
  ASSERT_EQ(clReleaseMemObject(used), CL_SUCCESS);
  EXPECT_EQ(used_destroyed.load(), 0) << "destroyed while a queued launch still uses it";
  ASSERT_EQ(clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
  ASSERT_EQ(clFinish(queue_), CL_SUCCESS);
  clReleaseEvent(gate);
  // The command's reference goes when the command is retired; allow the worker a moment.
  for (int i = 0; i < 200 && used_destroyed.load() == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(used_destroyed.load(), 1);
}

// ---- Enqueueing ----

TEST_F(KernelApi, NDRangeValidation) {
  cl_program p = built(kProbeSource);
  cl_kernel k = kernel(p, "probe");
  const size_t global[3] = {8, 1, 1};
  const size_t local[3] = {4, 1, 1};
  EXPECT_EQ(clEnqueueNDRangeKernel(queue_, k, 1, nullptr, global, local, 0, nullptr, nullptr),
            CL_INVALID_KERNEL_ARGS);
  cl_mem out = buffer(64 * sizeof(uint32_t));
  ASSERT_EQ(clSetKernelArg(k, 0, sizeof(out), &out), CL_SUCCESS);
  EXPECT_EQ(clEnqueueNDRangeKernel(queue_, k, 0, nullptr, global, local, 0, nullptr, nullptr),
            CL_INVALID_WORK_DIMENSION);
  EXPECT_EQ(clEnqueueNDRangeKernel(queue_, k, 4, nullptr, global, local, 0, nullptr, nullptr),
            CL_INVALID_WORK_DIMENSION);
  EXPECT_EQ(clEnqueueNDRangeKernel(nullptr, k, 1, nullptr, global, local, 0, nullptr, nullptr),
            CL_INVALID_COMMAND_QUEUE);
  EXPECT_EQ(clEnqueueNDRangeKernel(queue_, nullptr, 1, nullptr, global, local, 0, nullptr, nullptr),
            CL_INVALID_KERNEL);
  EXPECT_EQ(clEnqueueNDRangeKernel(queue_, k, 1, nullptr, global, local, 1, nullptr, nullptr),
            CL_INVALID_EVENT_WAIT_LIST);

  const size_t huge_offset[1] = {SIZE_MAX - 2};
  EXPECT_EQ(clEnqueueNDRangeKernel(queue_, k, 1, huge_offset, global, local, 0, nullptr, nullptr),
            CL_INVALID_GLOBAL_OFFSET);

  size_t max_items[3] = {};
  ASSERT_EQ(clGetDeviceInfo(device_, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof(max_items), max_items,
                            nullptr),
            CL_SUCCESS);
  const size_t too_wide[1] = {max_items[0] + 1};
  const size_t wide_global[1] = {max_items[0] + 1};
  EXPECT_EQ(
      clEnqueueNDRangeKernel(queue_, k, 1, nullptr, wide_global, too_wide, 0, nullptr, nullptr),
      CL_INVALID_WORK_ITEM_SIZE);
  size_t kernel_wg = 0;
  ASSERT_EQ(clGetKernelWorkGroupInfo(k, device_, CL_KERNEL_WORK_GROUP_SIZE, sizeof(kernel_wg),
                                     &kernel_wg, nullptr),
            CL_SUCCESS);
  if (max_items[0] * max_items[1] > kernel_wg) {
    const size_t big_local[2] = {max_items[0], max_items[1]};
    const size_t big_global[2] = {max_items[0], max_items[1]};
    EXPECT_EQ(
        clEnqueueNDRangeKernel(queue_, k, 2, nullptr, big_global, big_local, 0, nullptr, nullptr),
        CL_INVALID_WORK_GROUP_SIZE);
  }
  const size_t zero_local[1] = {0};
  EXPECT_EQ(clEnqueueNDRangeKernel(queue_, k, 1, nullptr, global, zero_local, 0, nullptr, nullptr),
            CL_INVALID_WORK_GROUP_SIZE);

  // Another context's kernel.
  cl_int err = CL_SUCCESS;
  cl_context other = clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  cl_command_queue other_queue = clCreateCommandQueue(other, device_, 0, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  EXPECT_EQ(clEnqueueNDRangeKernel(other_queue, k, 1, nullptr, global, local, 0, nullptr, nullptr),
            CL_INVALID_CONTEXT);
  clReleaseCommandQueue(other_queue);
  clReleaseContext(other);

  ASSERT_EQ(clEnqueueNDRangeKernel(queue_, k, 1, nullptr, global, local, 0, nullptr, nullptr),
            CL_SUCCESS);
  for (uint32_t v : read<uint32_t>(out, 8)) EXPECT_EQ(v, 1004u);
}

TEST_F(KernelApi, UniformWorkGroupsBeforeOpenCL20) {
  cl_program p = built(kProbeSource);  // no -cl-std: OpenCL C 1.2, uniform work-groups only
  cl_kernel k = kernel(p, "probe");
  cl_mem out = buffer(64 * sizeof(uint32_t));
  ASSERT_EQ(clSetKernelArg(k, 0, sizeof(out), &out), CL_SUCCESS);
  const size_t global[3] = {3, 3, 3};
  const size_t local[3] = {2, 2, 2};
  EXPECT_EQ(clEnqueueNDRangeKernel(queue_, k, 1, nullptr, global, local, 0, nullptr, nullptr),
            CL_INVALID_WORK_GROUP_SIZE);
  // NULL local: the runtime picks a size that divides the global size.
  const size_t odd_global[1] = {30};
  ASSERT_EQ(clEnqueueNDRangeKernel(queue_, k, 1, nullptr, odd_global, nullptr, 0, nullptr, nullptr),
            CL_SUCCESS);
  const auto sizes = read<uint32_t>(out, 30);
  const uint32_t chosen = sizes[0] % 1000;
  ASSERT_GT(chosen, 0u);
  EXPECT_EQ(30 % chosen, 0u);
  for (uint32_t v : sizes) EXPECT_EQ(v % 1000, chosen);
}

TEST_F(KernelApi, NonUniformWorkGroupsWithOpenCL20) {
  if (device_info<cl_bool>(CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT) == CL_FALSE)
    GTEST_SKIP() << "no non-uniform work-group support";
  cl_program p = built(kProbeSource, "-cl-std=CL3.0");
  cl_kernel k = kernel(p, "probe");
  cl_mem out = buffer(64 * sizeof(uint32_t));
  ASSERT_EQ(clSetKernelArg(k, 0, sizeof(out), &out), CL_SUCCESS);
  const size_t global[1] = {7};
  const size_t local[1] = {4};
  ASSERT_EQ(clEnqueueNDRangeKernel(queue_, k, 1, nullptr, global, local, 0, nullptr, nullptr),
            CL_SUCCESS);
  const auto sizes = read<uint32_t>(out, 7);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(sizes[i], 1004u);
  for (size_t i = 4; i < 7; ++i) EXPECT_EQ(sizes[i], 1003u);  // the partial last group

  cl_program uniform = built(kProbeSource, "-cl-std=CL3.0 -cl-uniform-work-group-size");
  cl_kernel ku = kernel(uniform, "probe");
  ASSERT_EQ(clSetKernelArg(ku, 0, sizeof(out), &out), CL_SUCCESS);
  EXPECT_EQ(clEnqueueNDRangeKernel(queue_, ku, 1, nullptr, global, local, 0, nullptr, nullptr),
            CL_INVALID_WORK_GROUP_SIZE);
}

TEST_F(KernelApi, TwoDimensionalLocalSizeChoice) {
  cl_program p = built(kProbeSource);
  cl_kernel k = kernel(p, "probe");
  const size_t global[2] = {12, 10};
  cl_mem out = buffer(120 * sizeof(uint32_t));
  ASSERT_EQ(clSetKernelArg(k, 0, sizeof(out), &out), CL_SUCCESS);
  ASSERT_EQ(clEnqueueNDRangeKernel(queue_, k, 2, nullptr, global, nullptr, 0, nullptr, nullptr),
            CL_SUCCESS);
  const auto sizes = read<uint32_t>(out, 120);
  const uint32_t lx = sizes[0] % 1000, ly = sizes[0] / 1000;
  ASSERT_GT(lx, 0u);
  ASSERT_GT(ly, 0u);
  EXPECT_EQ(12 % lx, 0u);
  EXPECT_EQ(10 % ly, 0u);
  EXPECT_LE(lx * ly, device_info<size_t>(CL_DEVICE_MAX_WORK_GROUP_SIZE));
}

TEST_F(KernelApi, RequiredWorkGroupSize) {
  cl_program p = built(kReqdSource);
  cl_kernel k = kernel(p, "reqd");
  cl_mem out = buffer(8 * sizeof(int));
  ASSERT_EQ(clSetKernelArg(k, 0, sizeof(out), &out), CL_SUCCESS);
  const size_t global[1] = {8};
  const size_t wrong[1] = {4};
  EXPECT_EQ(clEnqueueNDRangeKernel(queue_, k, 1, nullptr, global, wrong, 0, nullptr, nullptr),
            CL_INVALID_WORK_GROUP_SIZE);
  // clEnqueueTask is a 1x1x1 range: it cannot satisfy reqd_work_group_size(2, 1, 1).
  EXPECT_EQ(clEnqueueTask(queue_, k, 0, nullptr, nullptr), CL_INVALID_WORK_GROUP_SIZE);
  const size_t odd[1] = {7};
  EXPECT_EQ(clEnqueueNDRangeKernel(queue_, k, 1, nullptr, odd, nullptr, 0, nullptr, nullptr),
            CL_INVALID_WORK_GROUP_SIZE);
  ASSERT_EQ(clEnqueueNDRangeKernel(queue_, k, 1, nullptr, global, nullptr, 0, nullptr, nullptr),
            CL_SUCCESS);
  for (int v : read<int>(out, 8)) EXPECT_EQ(v, 7);
}

TEST_F(KernelApi, ZeroSizedRangeIsAMarker) {
  cl_program p = built(kFillSource);
  cl_kernel k = kernel(p, "fill");
  cl_mem out = buffer(4 * sizeof(int));
  zero(out, 4 * sizeof(int));
  const int value = 5;
  ASSERT_EQ(clSetKernelArg(k, 0, sizeof(out), &out), CL_SUCCESS);
  ASSERT_EQ(clSetKernelArg(k, 1, sizeof(value), &value), CL_SUCCESS);
  const size_t zeros[3] = {0, 0, 0};
  const size_t one_zero[2] = {4, 0};
  ASSERT_EQ(clEnqueueNDRangeKernel(queue_, k, 1, nullptr, zeros, nullptr, 0, nullptr, nullptr),
            CL_SUCCESS);
  ASSERT_EQ(clEnqueueNDRangeKernel(queue_, k, 2, nullptr, one_zero, nullptr, 0, nullptr, nullptr),
            CL_SUCCESS);
  ASSERT_EQ(clEnqueueNDRangeKernel(queue_, k, 1, nullptr, nullptr, nullptr, 0, nullptr, nullptr),
            CL_SUCCESS);
  for (int v : read<int>(out, 4)) EXPECT_EQ(v, 0);

  // It still waits for its wait list and returns an event.
  cl_int err = CL_SUCCESS;
  cl_event gate = clCreateUserEvent(context_, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  cl_event done = nullptr;
  ASSERT_EQ(clEnqueueNDRangeKernel(queue_, k, 1, nullptr, zeros, nullptr, 1, &gate, &done),
            CL_SUCCESS);
  ASSERT_NE(done, nullptr);
  cl_int status = 0;
  ASSERT_EQ(
      clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status, nullptr),
      CL_SUCCESS);
  EXPECT_EQ(status, CL_QUEUED);
  cl_command_type type = 0;
  ASSERT_EQ(clGetEventInfo(done, CL_EVENT_COMMAND_TYPE, sizeof(type), &type, nullptr), CL_SUCCESS);
  EXPECT_EQ(type, static_cast<cl_command_type>(CL_COMMAND_NDRANGE_KERNEL));
  ASSERT_EQ(clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
  ASSERT_EQ(clFinish(queue_), CL_SUCCESS);
  ASSERT_EQ(
      clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status, nullptr),
      CL_SUCCESS);
  EXPECT_EQ(status, CL_COMPLETE);
  clReleaseEvent(done);
  clReleaseEvent(gate);
}

TEST_F(KernelApi, LocalMemoryLimit) {
  cl_program p = built(kLocalSource);
  cl_kernel k = kernel(p, "uses_local");
  cl_mem out = buffer(16 * sizeof(int));
  ASSERT_EQ(clSetKernelArg(k, 0, sizeof(out), &out), CL_SUCCESS);
  EXPECT_EQ(clSetKernelArg(k, 1, 0, nullptr), CL_INVALID_ARG_SIZE);
  const cl_ulong local_mem = device_info<cl_ulong>(CL_DEVICE_LOCAL_MEM_SIZE);
  ASSERT_EQ(clSetKernelArg(k, 1, static_cast<size_t>(local_mem) + 1, nullptr), CL_SUCCESS);
  const size_t global[1] = {16};
  const size_t local[1] = {4};
  EXPECT_EQ(clEnqueueNDRangeKernel(queue_, k, 1, nullptr, global, local, 0, nullptr, nullptr),
            CL_OUT_OF_RESOURCES);
  ASSERT_EQ(clSetKernelArg(k, 1, 4 * sizeof(int), nullptr), CL_SUCCESS);
  ASSERT_EQ(clEnqueueNDRangeKernel(queue_, k, 1, nullptr, global, local, 0, nullptr, nullptr),
            CL_SUCCESS);
  for (int v : read<int>(out, 16)) EXPECT_EQ(v, 1);
}

TEST_F(KernelApi, TaskRunsOnce) {
  cl_program p = built(kFillSource);
  cl_kernel k = kernel(p, "count");
  cl_mem counter = buffer(sizeof(int));
  zero(counter, sizeof(int));
  ASSERT_EQ(clSetKernelArg(k, 0, sizeof(counter), &counter), CL_SUCCESS);
  ASSERT_EQ(clEnqueueTask(queue_, k, 0, nullptr, nullptr), CL_SUCCESS);
  ASSERT_EQ(clEnqueueTask(queue_, k, 0, nullptr, nullptr), CL_SUCCESS);
  EXPECT_EQ(read<int>(counter, 1)[0], 2);
}

struct NativeArgs {
  int* a;
  int* b;
  int scale;
};

void CL_CALLBACK native_scale(void* raw) {
  auto* args = static_cast<NativeArgs*>(raw);
  for (int i = 0; i < 4; ++i) args->b[i] = args->a[i] * args->scale;
}

TEST_F(KernelApi, NativeKernel) {
  cl_mem a = buffer(4 * sizeof(int));
  cl_mem b = buffer(4 * sizeof(int));
  const int input[4] = {1, 2, 3, 4};
  ASSERT_EQ(clEnqueueWriteBuffer(queue_, a, CL_TRUE, 0, sizeof(input), input, 0, nullptr, nullptr),
            CL_SUCCESS);
  NativeArgs args{};
  std::memcpy(&args.a, &a, sizeof(a));
  std::memcpy(&args.b, &b, sizeof(b));
  args.scale = 3;
  cl_mem list[] = {a, b};
  const void* locations[] = {&args.a, &args.b};
  const cl_device_exec_capabilities caps =
      device_info<cl_device_exec_capabilities>(CL_DEVICE_EXECUTION_CAPABILITIES);
  EXPECT_EQ(clEnqueueNativeKernel(queue_, nullptr, &args, sizeof(args), 2, list, locations, 0,
                                  nullptr, nullptr),
            CL_INVALID_VALUE);
  EXPECT_EQ(clEnqueueNativeKernel(queue_, native_scale, nullptr, sizeof(args), 0, nullptr, nullptr,
                                  0, nullptr, nullptr),
            CL_INVALID_VALUE);
  EXPECT_EQ(clEnqueueNativeKernel(queue_, native_scale, &args, 0, 0, nullptr, nullptr, 0, nullptr,
                                  nullptr),
            CL_INVALID_VALUE);
  EXPECT_EQ(clEnqueueNativeKernel(queue_, native_scale, &args, sizeof(args), 2, nullptr, locations,
                                  0, nullptr, nullptr),
            CL_INVALID_VALUE);
  EXPECT_EQ(clEnqueueNativeKernel(queue_, native_scale, &args, sizeof(args), 0, list, nullptr, 0,
                                  nullptr, nullptr),
            CL_INVALID_VALUE);
  if (!(caps & CL_EXEC_NATIVE_KERNEL)) {
    EXPECT_EQ(clEnqueueNativeKernel(queue_, native_scale, &args, sizeof(args), 2, list, locations,
                                    0, nullptr, nullptr),
              CL_INVALID_OPERATION);
    return;
  }
  cl_mem bad_list[] = {a, reinterpret_cast<cl_mem>(queue_)};
  EXPECT_EQ(clEnqueueNativeKernel(queue_, native_scale, &args, sizeof(args), 2, bad_list, locations,
                                  0, nullptr, nullptr),
            CL_INVALID_MEM_OBJECT);
  ASSERT_EQ(clEnqueueNativeKernel(queue_, native_scale, &args, sizeof(args), 2, list, locations, 0,
                                  nullptr, nullptr),
            CL_SUCCESS);
  // The application's args block is not modified: the function got a copy.
  EXPECT_EQ(std::memcmp(&args.a, &a, sizeof(a)), 0);
  const auto result = read<int>(b, 4);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(result[i], input[i] * 3);
}

TEST_F(KernelApi, SubGroupQueries) {
  cl_program p = built(kFillSource);
  cl_kernel k = kernel(p, "fill");
  size_t value = 0;
  const size_t local[1] = {64};
  const cl_int err = clGetKernelSubGroupInfo(k, device_, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE,
                                             sizeof(local), local, sizeof(value), &value, nullptr);
  if (device_info<cl_uint>(CL_DEVICE_MAX_NUM_SUB_GROUPS) == 0) {
    EXPECT_EQ(err, CL_INVALID_OPERATION);
    return;
  }
  ASSERT_EQ(err, CL_SUCCESS);
  EXPECT_GT(value, 0u);
  EXPECT_LE(value, 64u);
  EXPECT_EQ(clGetKernelSubGroupInfo(k, device_, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, 0,
                                    nullptr, sizeof(value), &value, nullptr),
            CL_INVALID_VALUE);
}

}  // namespace
