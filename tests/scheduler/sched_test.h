// Helpers shared by the scheduler tests (tests/scheduler): one context over every device of the
// requested type (MANIFOLD_TEST_DEVICE_TYPE=cpu|gpu|all, see cl_test.h), queues spread over its
// devices, programs built for all of them, and environment knobs for sizes and seeds.
#pragma once

#include <cinttypes>
#include <random>
#include <string>
#include <vector>

#include "cl_test.h"

namespace schedtest {

using namespace cltest;

// Sanitizer builds run fewer commands (TSan slows the runtime ~10x).
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif

// An integer from the environment, or `fallback` when unset or unparsable.
inline long envLong(const char* name, long fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  long x = std::strtol(v, &end, 0);
  return (end && *end == '\0') ? x : fallback;
}

// MANIFOLD_SCHED_SEED: a number replaces the test's own seed; "random" draws one (printed with
// every failure, so that the run can be repeated).
inline uint64_t seedFor(uint64_t fixed) {
  std::string s = envOr("MANIFOLD_SCHED_SEED", "");
  if (s.empty()) return fixed;
  if (s == "random") return std::random_device{}() * 0x100000001ull + std::random_device{}();
  return std::strtoull(s.c_str(), nullptr, 0);
}

inline std::vector<cl_device_id> devicesOfType(cl_platform_id platform, cl_device_type type) {
  cl_uint n = 0;
  if (clGetDeviceIDs(platform, type, 0, nullptr, &n) != CL_SUCCESS || n == 0) return {};
  std::vector<cl_device_id> v(n);
  if (clGetDeviceIDs(platform, type, n, v.data(), nullptr) != CL_SUCCESS) return {};
  return v;
}

inline std::string deviceName(cl_device_id d) {
  char name[256] = {};
  clGetDeviceInfo(d, CL_DEVICE_NAME, sizeof(name) - 1, name, nullptr);
  return name;
}

inline cl_device_type deviceType(cl_device_id d) {
  cl_device_type t = 0;
  clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof(t), &t, nullptr);
  return t;
}

#ifdef MANIFOLD_SCHED_EMULATED_GPUS
// The "_mixed" builds of these tests: before the platform is first opened, ask for CPU devices
// with memory of their own, reported as GPUs (MANIFOLD_EMULATED_GPUS, backends/cpu), so that
// mixed-device contexts and migration run in CI; an explicit MANIFOLD_EMULATED_GPUS wins.
inline const bool kEmulatedGpus = [] {
  return setenv("MANIFOLD_EMULATED_GPUS", MANIFOLD_SCHED_EMULATED_GPUS, /*overwrite=*/0) == 0;
}();
// Every device, whatever MANIFOLD_TEST_DEVICE_TYPE says.
inline cl_device_type testDeviceType() {
  return kEmulatedGpus ? CL_DEVICE_TYPE_ALL : wantedDeviceType();
}
#else
inline cl_device_type testDeviceType() { return wantedDeviceType(); }
#endif

// A context over several devices (possibly of different backends) with helpers.
class MultiDeviceTest : public ::testing::Test {
 protected:
  // Picks the devices of MANIFOLD_TEST_DEVICE_TYPE (every device in a "_mixed" build) and makes
  // one context over all of them.
  void SetUp() override { setUpDevices(testDeviceType()); }

  void setUpDevices(cl_device_type type) {
#ifdef MANIFOLD_SCHED_EMULATED_GPUS
    ASSERT_TRUE(kEmulatedGpus) << "setenv MANIFOLD_EMULATED_GPUS";
#endif
    std::string why;
    platform_ = findPlatform(&why);
    ASSERT_NE(platform_, nullptr) << why;
    devices_ = devicesOfType(platform_, type);
    if (devices_.empty()) {
      if (type == CL_DEVICE_TYPE_CPU) FAIL() << "the platform reports no CPU device";
      GTEST_SKIP() << "the platform has no device of the requested type";
    }
    cl_int err = CL_SUCCESS;
    context_.reset(clCreateContext(nullptr, static_cast<cl_uint>(devices_.size()), devices_.data(),
                                   nullptr, nullptr, &err));
    std::string names;
    for (cl_device_id d : devices_) names += " '" + deviceName(d) + "'";
    ASSERT_EQ(Err(CL_SUCCESS), Err(err)) << "clCreateContext over" << names;
  }

  bool supportsOutOfOrder(cl_device_id d) const {
    cl_command_queue_properties p = 0;
    clGetDeviceInfo(d, CL_DEVICE_QUEUE_ON_HOST_PROPERTIES, sizeof(p), &p, nullptr);
    return (p & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) != 0;
  }

  Queue makeQueue(cl_device_id d, cl_command_queue_properties props) {
    cl_int err = CL_SUCCESS;
    cl_queue_properties p[] = {CL_QUEUE_PROPERTIES, props, 0};
    Queue q(clCreateCommandQueueWithProperties(context_, d, p, &err));
    EXPECT_EQ(Err(CL_SUCCESS), Err(err)) << "clCreateCommandQueueWithProperties on '"
                                         << deviceName(d) << "' props 0x" << std::hex << props;
    return q;
  }

  Mem makeBuffer(size_t size, cl_mem_flags flags = CL_MEM_READ_WRITE, void* host = nullptr) {
    cl_int err = CL_SUCCESS;
    Mem m(clCreateBuffer(context_, flags, size, host, &err));
    EXPECT_EQ(Err(CL_SUCCESS), Err(err)) << "clCreateBuffer(" << size << ")";
    return m;
  }

  Event makeUserEvent() {
    cl_int err = CL_SUCCESS;
    Event e(clCreateUserEvent(context_, &err));
    EXPECT_EQ(Err(CL_SUCCESS), Err(err)) << "clCreateUserEvent";
    return e;
  }

  // Builds `source` for every device of the context; the build log goes into the failure.
  Program build(const char* source) {
    cl_int err = CL_SUCCESS;
    Program p(clCreateProgramWithSource(context_, 1, &source, nullptr, &err));
    EXPECT_EQ(Err(CL_SUCCESS), Err(err)) << "clCreateProgramWithSource";
    if (!p) return p;
    err = clBuildProgram(p, 0, nullptr, "", nullptr, nullptr);
    if (err != CL_SUCCESS) {
      std::string logs;
      for (cl_device_id d : devices_) {
        size_t size = 0;
        clGetProgramBuildInfo(p, d, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
        std::string log(size, '\0');
        clGetProgramBuildInfo(p, d, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
        logs += "--- " + deviceName(d) + ":\n" + log + "\n";
      }
      ADD_FAILURE() << "clBuildProgram: " << errorName(err) << "\n" << logs;
    }
    return p;
  }

  Kernel kernel(cl_program p, const char* name) {
    cl_int err = CL_SUCCESS;
    Kernel k(clCreateKernel(p, name, &err));
    EXPECT_EQ(Err(CL_SUCCESS), Err(err)) << "clCreateKernel " << name;
    return k;
  }

  std::vector<cl_device_id> devicesOf(cl_device_type type) const {
    std::vector<cl_device_id> v;
    for (cl_device_id d : devices_)
      if (deviceType(d) & type) v.push_back(d);
    return v;
  }

  cl_platform_id platform_ = nullptr;
  std::vector<cl_device_id> devices_;
  Context context_;
};

// Sets a kernel argument; a failure is reported with the argument index.
template <typename T>
inline void setArg(cl_kernel k, cl_uint index, const T& value) {
  EXPECT_EQ(Err(CL_SUCCESS), Err(clSetKernelArg(k, index, sizeof(T), &value)))
      << "clSetKernelArg " << index;
}

inline cl_ulong profilingInfo(cl_event e, cl_profiling_info what, cl_int* err) {
  cl_ulong v = 0;
  *err = clGetEventProfilingInfo(e, what, sizeof(v), &v, nullptr);
  return v;
}

}  // namespace schedtest
