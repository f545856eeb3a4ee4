// Shared fixture and helpers for the OpenCL API conformance suite (tests/api).
//
// Every test talks to the platform through the real ICD loader. The platform is chosen by
// CL_PLATFORM_NAME:
//   MANIFOLD_TEST_PLATFORM      platform name to look for (default "Manifold"); "any" takes the
//                               first platform the loader reports. A substring match is accepted
//                               when no platform has exactly that name.
//   MANIFOLD_TEST_DEVICE_TYPE   cpu (default) | gpu | all
//   MANIFOLD_TEST_DEVICE_NAME   only devices whose CL_DEVICE_NAME contains it (e.g. "Manifold
//                               group": the suites on the device groups of MANIFOLD_DEVICE_GROUPS)
//   MANIFOLD_TEST_TIMEOUT       seconds one test may run before the watchdog aborts the process
//                               (default 120); a hang in the runtime then fails visibly instead
//                               of blocking the whole run.
//
// To run the suite against another conformant platform (e.g. PoCL):
//   OCL_ICD_VENDORS=/etc/OpenCL/vendors MANIFOLD_TEST_PLATFORM=any ./test_binary
#pragma once

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#ifndef CL_USE_DEPRECATED_OPENCL_1_0_APIS
#define CL_USE_DEPRECATED_OPENCL_1_0_APIS
#endif
#ifndef CL_USE_DEPRECATED_OPENCL_1_1_APIS
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
#endif
#ifndef CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#endif
#ifndef CL_USE_DEPRECATED_OPENCL_2_0_APIS
#define CL_USE_DEPRECATED_OPENCL_2_0_APIS
#endif

#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace cltest {

// ------------------------------------------------------------------------------------------
// Error codes
// ------------------------------------------------------------------------------------------

inline const char* errorName(cl_int e) {
  switch (e) {
#define CLT_ERR(x) \
  case x:          \
    return #x;
    CLT_ERR(CL_SUCCESS)
    CLT_ERR(CL_DEVICE_NOT_FOUND)
    CLT_ERR(CL_DEVICE_NOT_AVAILABLE)
    CLT_ERR(CL_COMPILER_NOT_AVAILABLE)
    CLT_ERR(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    CLT_ERR(CL_OUT_OF_RESOURCES)
    CLT_ERR(CL_OUT_OF_HOST_MEMORY)
    CLT_ERR(CL_PROFILING_INFO_NOT_AVAILABLE)
    CLT_ERR(CL_MEM_COPY_OVERLAP)
    CLT_ERR(CL_IMAGE_FORMAT_MISMATCH)
    CLT_ERR(CL_IMAGE_FORMAT_NOT_SUPPORTED)
    CLT_ERR(CL_BUILD_PROGRAM_FAILURE)
    CLT_ERR(CL_MAP_FAILURE)
    CLT_ERR(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    CLT_ERR(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    CLT_ERR(CL_COMPILE_PROGRAM_FAILURE)
    CLT_ERR(CL_LINKER_NOT_AVAILABLE)
    CLT_ERR(CL_LINK_PROGRAM_FAILURE)
    CLT_ERR(CL_DEVICE_PARTITION_FAILED)
    CLT_ERR(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
    CLT_ERR(CL_INVALID_VALUE)
    CLT_ERR(CL_INVALID_DEVICE_TYPE)
    CLT_ERR(CL_INVALID_PLATFORM)
    CLT_ERR(CL_INVALID_DEVICE)
    CLT_ERR(CL_INVALID_CONTEXT)
    CLT_ERR(CL_INVALID_QUEUE_PROPERTIES)
    CLT_ERR(CL_INVALID_COMMAND_QUEUE)
    CLT_ERR(CL_INVALID_HOST_PTR)
    CLT_ERR(CL_INVALID_MEM_OBJECT)
    CLT_ERR(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
    CLT_ERR(CL_INVALID_IMAGE_SIZE)
    CLT_ERR(CL_INVALID_SAMPLER)
    CLT_ERR(CL_INVALID_BINARY)
    CLT_ERR(CL_INVALID_BUILD_OPTIONS)
    CLT_ERR(CL_INVALID_PROGRAM)
    CLT_ERR(CL_INVALID_PROGRAM_EXECUTABLE)
    CLT_ERR(CL_INVALID_KERNEL_NAME)
    CLT_ERR(CL_INVALID_KERNEL_DEFINITION)
    CLT_ERR(CL_INVALID_KERNEL)
    CLT_ERR(CL_INVALID_ARG_INDEX)
    CLT_ERR(CL_INVALID_ARG_VALUE)
    CLT_ERR(CL_INVALID_ARG_SIZE)
    CLT_ERR(CL_INVALID_KERNEL_ARGS)
    CLT_ERR(CL_INVALID_WORK_DIMENSION)
    CLT_ERR(CL_INVALID_WORK_GROUP_SIZE)
    CLT_ERR(CL_INVALID_WORK_ITEM_SIZE)
    CLT_ERR(CL_INVALID_GLOBAL_OFFSET)
    CLT_ERR(CL_INVALID_EVENT_WAIT_LIST)
    CLT_ERR(CL_INVALID_EVENT)
    CLT_ERR(CL_INVALID_OPERATION)
    CLT_ERR(CL_INVALID_GL_OBJECT)
    CLT_ERR(CL_INVALID_BUFFER_SIZE)
    CLT_ERR(CL_INVALID_MIP_LEVEL)
    CLT_ERR(CL_INVALID_GLOBAL_WORK_SIZE)
    CLT_ERR(CL_INVALID_PROPERTY)
    CLT_ERR(CL_INVALID_IMAGE_DESCRIPTOR)
    CLT_ERR(CL_INVALID_COMPILER_OPTIONS)
    CLT_ERR(CL_INVALID_LINKER_OPTIONS)
    CLT_ERR(CL_INVALID_DEVICE_PARTITION_COUNT)
    CLT_ERR(CL_INVALID_PIPE_SIZE)
    CLT_ERR(CL_INVALID_DEVICE_QUEUE)
    CLT_ERR(CL_INVALID_SPEC_ID)
    CLT_ERR(CL_MAX_SIZE_RESTRICTION_EXCEEDED)
    CLT_ERR(CL_PLATFORM_NOT_FOUND_KHR)
#undef CLT_ERR
    default:
      return "CL_<unknown error>";
  }
}

// A cl_int that gtest prints by name: EXPECT_EQ(Err(CL_INVALID_VALUE), Err(x)) reports
// "CL_INVALID_VALUE (-30)" instead of a bare number.
struct Err {
  cl_int code;
  explicit Err(cl_int c) : code(c) {}
  bool operator==(const Err& o) const { return code == o.code; }
};
inline void PrintTo(const Err& e, std::ostream* os) {
  *os << errorName(e.code) << " (" << e.code << ")";
}
inline std::ostream& operator<<(std::ostream& os, const Err& e) {
  return os << errorName(e.code) << " (" << e.code << ")";
}

// Event execution status, printed by name (CL_COMPLETE etc., or an error name when negative).
struct Status {
  cl_int code;
  explicit Status(cl_int c) : code(c) {}
  bool operator==(const Status& o) const { return code == o.code; }
};
inline const char* statusName(cl_int s) {
  switch (s) {
    case CL_COMPLETE:
      return "CL_COMPLETE";
    case CL_RUNNING:
      return "CL_RUNNING";
    case CL_SUBMITTED:
      return "CL_SUBMITTED";
    case CL_QUEUED:
      return "CL_QUEUED";
    default:
      return s < 0 ? errorName(s) : "<unknown status>";
  }
}
inline void PrintTo(const Status& s, std::ostream* os) {
  *os << statusName(s.code) << " (" << s.code << ")";
}

}  // namespace cltest

// CHECK_CL(expr): the call must return CL_SUCCESS; stops the test otherwise (ASSERT).
#define CHECK_CL(expr) ASSERT_EQ(::cltest::Err(CL_SUCCESS), ::cltest::Err(expr)) << "  in: " #expr
// EXPECT_CL_OK(expr): same, but the test goes on.
#define EXPECT_CL_OK(expr) \
  EXPECT_EQ(::cltest::Err(CL_SUCCESS), ::cltest::Err(expr)) << "  in: " #expr
// EXPECT_CL(code, expr) / ASSERT_CL(code, expr): the call must return exactly `code`.
#define EXPECT_CL(code, expr) EXPECT_EQ(::cltest::Err(code), ::cltest::Err(expr)) << "  in: " #expr
#define ASSERT_CL(code, expr) ASSERT_EQ(::cltest::Err(code), ::cltest::Err(expr)) << "  in: " #expr
// For error codes returned through an errcode_ret out-parameter.
#define EXPECT_ERR(code, var) \
  EXPECT_EQ(::cltest::Err(code), ::cltest::Err(var)) << "  errcode_ret of the call above"
#define ASSERT_ERR(code, var) \
  ASSERT_EQ(::cltest::Err(code), ::cltest::Err(var)) << "  errcode_ret of the call above"
#define EXPECT_STATUS(st, val) EXPECT_EQ(::cltest::Status(st), ::cltest::Status(val))
#define ASSERT_STATUS(st, val) ASSERT_EQ(::cltest::Status(st), ::cltest::Status(val))

namespace cltest {

// ------------------------------------------------------------------------------------------
// RAII wrappers. A wrapper adopts the handle it is constructed from (no retain); copies retain.
// ------------------------------------------------------------------------------------------

template <typename T, cl_int(CL_API_CALL* Retain)(T), cl_int(CL_API_CALL* Release)(T)>
class Ref {
 public:
  Ref() = default;
  explicit Ref(T h) : h_(h) {}
  Ref(const Ref& o) : h_(o.h_) {
    if (h_) Retain(h_);
  }
  Ref(Ref&& o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
  Ref& operator=(Ref o) noexcept {
    std::swap(h_, o.h_);
    return *this;
  }
  ~Ref() { reset(); }
  // Releases the held handle (if any) and adopts h.
  void reset(T h = nullptr) {
    if (h_) Release(h_);
    h_ = h;
  }
  T get() const { return h_; }
  operator T() const { return h_; }  // NOLINT: implicit on purpose, for passing to cl* calls
  // For out-parameters: Event e; clEnqueueMarker(q, e.out());
  T* out() {
    reset();
    return &h_;
  }
  // Gives up ownership without releasing.
  T take() { return std::exchange(h_, nullptr); }
  explicit operator bool() const { return h_ != nullptr; }

 private:
  T h_ = nullptr;
};

using Context = Ref<cl_context, clRetainContext, clReleaseContext>;
using Queue = Ref<cl_command_queue, clRetainCommandQueue, clReleaseCommandQueue>;
using Mem = Ref<cl_mem, clRetainMemObject, clReleaseMemObject>;
using Event = Ref<cl_event, clRetainEvent, clReleaseEvent>;
using Program = Ref<cl_program, clRetainProgram, clReleaseProgram>;
using Kernel = Ref<cl_kernel, clRetainKernel, clReleaseKernel>;
using Sampler = Ref<cl_sampler, clRetainSampler, clReleaseSampler>;
using Device = Ref<cl_device_id, clRetainDevice, clReleaseDevice>;

// ------------------------------------------------------------------------------------------
// Info queries. info<T>(clGetDeviceInfo, dev, CL_DEVICE_MAX_COMPUTE_UNITS) etc.
// Failures are reported with ADD_FAILURE and a value-initialised T is returned.
// ------------------------------------------------------------------------------------------

template <typename T, typename H, typename P>
T info(cl_int(CL_API_CALL* fn)(H, P, size_t, void*, size_t*), std::type_identity_t<H> h,
       std::type_identity_t<P> param) {
  T value{};
  size_t ret = 0;
  cl_int err = fn(h, param, sizeof(T), &value, &ret);
  if (err != CL_SUCCESS) {
    ADD_FAILURE() << "info query 0x" << std::hex << param << std::dec
                  << " failed: " << errorName(err);
    return T{};
  }
  if (ret != sizeof(T)) {
    ADD_FAILURE() << "info query 0x" << std::hex << param << std::dec << ": param_value_size_ret "
                  << ret << " != sizeof(return type) " << sizeof(T);
  }
  return value;
}

template <typename T, typename H, typename P>
std::vector<T> infoVector(cl_int(CL_API_CALL* fn)(H, P, size_t, void*, size_t*),
                          std::type_identity_t<H> h, std::type_identity_t<P> param) {
  size_t size = 0;
  cl_int err = fn(h, param, 0, nullptr, &size);
  if (err != CL_SUCCESS) {
    ADD_FAILURE() << "size query 0x" << std::hex << param << std::dec
                  << " failed: " << errorName(err);
    return {};
  }
  if (size % sizeof(T) != 0) {
    ADD_FAILURE() << "info query 0x" << std::hex << param << std::dec << ": size " << size
                  << " is not a multiple of the element size " << sizeof(T);
  }
  std::vector<T> v(size / sizeof(T));
  if (size == 0) return v;
  size_t ret = 0;
  err = fn(h, param, size, v.data(), &ret);
  if (err != CL_SUCCESS) {
    ADD_FAILURE() << "info query 0x" << std::hex << param << std::dec
                  << " failed: " << errorName(err);
    return {};
  }
  if (ret != size)
    ADD_FAILURE() << "info query 0x" << std::hex << param << std::dec << ": size changed";
  return v;
}

// char[] queries. Checks that the value is NUL-terminated and that the reported size includes
// the terminator.
template <typename H, typename P>
std::string infoString(cl_int(CL_API_CALL* fn)(H, P, size_t, void*, size_t*),
                       std::type_identity_t<H> h, std::type_identity_t<P> param) {
  size_t size = 0;
  cl_int err = fn(h, param, 0, nullptr, &size);
  if (err != CL_SUCCESS) {
    ADD_FAILURE() << "size query 0x" << std::hex << param << std::dec
                  << " failed: " << errorName(err);
    return {};
  }
  if (size == 0) {
    ADD_FAILURE() << "string query 0x" << std::hex << param << std::dec
                  << " returned size 0 (must include the NUL terminator)";
    return {};
  }
  std::string s(size, '\x7f');
  size_t ret = 0;
  err = fn(h, param, size, s.data(), &ret);
  if (err != CL_SUCCESS) {
    ADD_FAILURE() << "string query 0x" << std::hex << param << std::dec
                  << " failed: " << errorName(err);
    return {};
  }
  if (ret != size)
    ADD_FAILURE() << "string query 0x" << std::hex << param << std::dec << ": size changed";
  if (s[size - 1] != '\0') {
    ADD_FAILURE() << "string query 0x" << std::hex << param << std::dec << " is not NUL-terminated";
  }
  s.resize(std::strlen(s.c_str()));
  return s;
}

inline std::string platformString(cl_platform_id p, cl_platform_info param) {
  return infoString(clGetPlatformInfo, p, param);
}
inline std::string deviceString(cl_device_id d, cl_device_info param) {
  return infoString(clGetDeviceInfo, d, param);
}
template <typename T>
T deviceInfo(cl_device_id d, cl_device_info param) {
  return info<T>(clGetDeviceInfo, d, param);
}
template <typename T>
T memInfo(cl_mem m, cl_mem_info param) {
  return info<T>(clGetMemObjectInfo, m, param);
}
template <typename T>
T eventInfo(cl_event e, cl_event_info param) {
  return info<T>(clGetEventInfo, e, param);
}
template <typename T>
T queueInfo(cl_command_queue q, cl_command_queue_info param) {
  return info<T>(clGetCommandQueueInfo, q, param);
}
template <typename T>
T contextInfo(cl_context c, cl_context_info param) {
  return info<T>(clGetContextInfo, c, param);
}

inline cl_uint refCount(cl_mem m) { return memInfo<cl_uint>(m, CL_MEM_REFERENCE_COUNT); }
inline cl_uint refCount(cl_event e) { return eventInfo<cl_uint>(e, CL_EVENT_REFERENCE_COUNT); }
inline cl_uint refCount(cl_command_queue q) {
  return queueInfo<cl_uint>(q, CL_QUEUE_REFERENCE_COUNT);
}
inline cl_uint refCount(cl_context c) {
  return contextInfo<cl_uint>(c, CL_CONTEXT_REFERENCE_COUNT);
}

inline cl_int eventStatus(cl_event e) {
  cl_int s = 0;
  cl_int err = clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(s), &s, nullptr);
  if (err != CL_SUCCESS) {
    ADD_FAILURE() << "CL_EVENT_COMMAND_EXECUTION_STATUS query failed: " << errorName(err);
    return 1000;
  }
  return s;
}

// Polls until the event's status is <= `target` (statuses count down: QUEUED 3 .. COMPLETE 0,
// errors < 0) or the timeout expires; returns the last status seen. Lets a test check that a
// command finishes without hanging forever when it does not.
inline cl_int waitStatus(cl_event e, cl_int target = CL_COMPLETE,
                         std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  cl_int s = eventStatus(e);
  while (s > target && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    s = eventStatus(e);
  }
  return s;
}

// Split a space-separated list (extensions, etc.).
inline std::vector<std::string> splitSpaces(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream is(s);
  std::string w;
  while (is >> w) out.push_back(w);
  return out;
}

inline bool hasWord(const std::string& list, const std::string& word) {
  auto words = splitSpaces(list);
  return std::find(words.begin(), words.end(), word) != words.end();
}

// Parses "OpenCL <major>.<minor> ..." (or "OpenCL C <major>.<minor> ..." with prefix "OpenCL C ").
inline bool parseVersion(const std::string& s, const std::string& prefix, int& major, int& minor) {
  if (s.rfind(prefix, 0) != 0) return false;
  return std::sscanf(s.c_str() + prefix.size(), "%d.%d", &major, &minor) == 2;
}

// ------------------------------------------------------------------------------------------
// Environment: which platform / device the suite runs on.
// ------------------------------------------------------------------------------------------

inline std::string envOr(const char* name, const char* def) {
  const char* v = std::getenv(name);
  return (v && *v) ? std::string(v) : std::string(def);
}

inline std::vector<cl_platform_id> allPlatforms() {
  cl_uint n = 0;
  if (clGetPlatformIDs(0, nullptr, &n) != CL_SUCCESS || n == 0) return {};
  std::vector<cl_platform_id> v(n);
  if (clGetPlatformIDs(n, v.data(), nullptr) != CL_SUCCESS) return {};
  return v;
}

inline std::string rawPlatformName(cl_platform_id p) {
  size_t size = 0;
  if (clGetPlatformInfo(p, CL_PLATFORM_NAME, 0, nullptr, &size) != CL_SUCCESS || size == 0)
    return {};
  std::string s(size, '\0');
  if (clGetPlatformInfo(p, CL_PLATFORM_NAME, size, s.data(), nullptr) != CL_SUCCESS) return {};
  s.resize(std::strlen(s.c_str()));
  return s;
}

// The platform under test, or nullptr with `why` filled in.
inline cl_platform_id findPlatform(std::string* why = nullptr) {
  std::string want = envOr("MANIFOLD_TEST_PLATFORM", "Manifold");
  auto platforms = allPlatforms();
  if (platforms.empty()) {
    if (why) *why = "the ICD loader reports no platform (check OCL_ICD_VENDORS)";
    return nullptr;
  }
  if (want == "any") return platforms[0];
  for (auto p : platforms)
    if (rawPlatformName(p) == want) return p;
  for (auto p : platforms)
    if (rawPlatformName(p).find(want) != std::string::npos) return p;
  if (why) {
    std::string names;
    for (auto p : platforms) names += " '" + rawPlatformName(p) + "'";
    *why = "no platform named '" + want +
           "' (set MANIFOLD_TEST_PLATFORM, or 'any'); platforms:" + names;
  }
  return nullptr;
}

inline cl_device_type wantedDeviceType() {
  std::string t = envOr("MANIFOLD_TEST_DEVICE_TYPE", "cpu");
  if (t == "gpu") return CL_DEVICE_TYPE_GPU;
  if (t == "all") return CL_DEVICE_TYPE_ALL;
  if (t == "accelerator") return CL_DEVICE_TYPE_ACCELERATOR;
  return CL_DEVICE_TYPE_CPU;
}

inline bool isCpuDevice(cl_device_id d) {
  cl_device_type t = 0;
  clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof(t), &t, nullptr);
  return (t & CL_DEVICE_TYPE_CPU) != 0;
}

// The simulated CUDA driver (tests/fakes/cuda/null_cuda.cpp) runs no kernel code: the API suites
// run over it (CI, sanitizers) for everything host-side, and a test that checks what a kernel
// computed skips there with SKIP_IF_KERNELS_COMPUTE_NOTHING.
inline bool kernelsComputeNothing(cl_device_id d) {
  char name[256] = {};
  clGetDeviceInfo(d, CL_DEVICE_NAME, sizeof(name) - 1, name, nullptr);
  return std::strstr(name, "null CUDA driver") != nullptr;
}
#define SKIP_IF_KERNELS_COMPUTE_NOTHING(device)                        \
  do {                                                                 \
    if (::cltest::kernelsComputeNothing(device))                       \
      GTEST_SKIP() << "the simulated CUDA driver runs no kernel code"; \
  } while (0)

// Device capabilities that decide whether optional-feature tests run.
struct Caps {
  int major = 0, minor = 0;  // CL_DEVICE_VERSION
  bool images = false;
  cl_device_svm_capabilities svm = 0;
  bool pipes = false;
  cl_uint maxSubDevices = 0;
  bool compiler = false;
  bool linker = false;
  cl_command_queue_properties hostQueueProps = 0;
  cl_device_device_enqueue_capabilities deviceEnqueue = 0;
  std::string extensions;
  bool hasExtension(const std::string& e) const { return hasWord(extensions, e); }
  bool atLeast(int M, int m) const { return major > M || (major == M && minor >= m); }
};

inline Caps queryCaps(cl_device_id d) {
  Caps c;
  char buf[1024] = {};
  if (clGetDeviceInfo(d, CL_DEVICE_VERSION, sizeof(buf) - 1, buf, nullptr) == CL_SUCCESS)
    parseVersion(buf, "OpenCL ", c.major, c.minor);
  cl_bool b = CL_FALSE;
  if (clGetDeviceInfo(d, CL_DEVICE_IMAGE_SUPPORT, sizeof(b), &b, nullptr) == CL_SUCCESS)
    c.images = b;
  if (clGetDeviceInfo(d, CL_DEVICE_SVM_CAPABILITIES, sizeof(c.svm), &c.svm, nullptr) != CL_SUCCESS)
    c.svm = 0;
  b = CL_FALSE;
  if (clGetDeviceInfo(d, CL_DEVICE_PIPE_SUPPORT, sizeof(b), &b, nullptr) == CL_SUCCESS)
    c.pipes = b;
  else if (c.major == 2)
    c.pipes = true;  // 2.x devices always support pipes
  clGetDeviceInfo(d, CL_DEVICE_PARTITION_MAX_SUB_DEVICES, sizeof(c.maxSubDevices), &c.maxSubDevices,
                  nullptr);
  b = CL_FALSE;
  if (clGetDeviceInfo(d, CL_DEVICE_COMPILER_AVAILABLE, sizeof(b), &b, nullptr) == CL_SUCCESS)
    c.compiler = b;
  b = CL_FALSE;
  if (clGetDeviceInfo(d, CL_DEVICE_LINKER_AVAILABLE, sizeof(b), &b, nullptr) == CL_SUCCESS)
    c.linker = b;
  clGetDeviceInfo(d, CL_DEVICE_QUEUE_ON_HOST_PROPERTIES, sizeof(c.hostQueueProps),
                  &c.hostQueueProps, nullptr);
  clGetDeviceInfo(d, CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES, sizeof(c.deviceEnqueue),
                  &c.deviceEnqueue, nullptr);
  size_t n = 0;
  if (clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, 0, nullptr, &n) == CL_SUCCESS && n) {
    std::string s(n, '\0');
    clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, n, s.data(), nullptr);
    s.resize(std::strlen(s.c_str()));
    c.extensions = s;
  }
  return c;
}

// ------------------------------------------------------------------------------------------
// Watchdog: aborts the process when one test runs longer than MANIFOLD_TEST_TIMEOUT seconds,
// naming the test, so that a runtime hang (e.g. a clFinish that never returns) fails instead of
// blocking. Registered once per binary by a static initializer.
// ------------------------------------------------------------------------------------------

class Watchdog : public ::testing::EmptyTestEventListener {
 public:
  Watchdog() : state_(std::make_shared<State>()) {
    state_->seconds = std::atoi(envOr("MANIFOLD_TEST_TIMEOUT", "120").c_str());
    if (state_->seconds <= 0) return;
    // The thread shares the state, so it may outlive this listener (gtest deletes listeners at
    // exit) without touching freed memory; the destructor tells it to stop.
    std::thread([state = state_] { state->run(); }).detach();
  }
  ~Watchdog() override {
    std::lock_guard<std::mutex> lk(state_->m);
    state_->stop = true;
    state_->cv.notify_all();
  }
  void OnTestStart(const ::testing::TestInfo& t) override {
    std::lock_guard<std::mutex> lk(state_->m);
    state_->name = std::string(t.test_suite_name()) + "." + t.name();
    state_->deadline = std::chrono::steady_clock::now() + std::chrono::seconds(state_->seconds);
    state_->armed = true;
    state_->cv.notify_all();
  }
  void OnTestEnd(const ::testing::TestInfo&) override {
    std::lock_guard<std::mutex> lk(state_->m);
    state_->armed = false;
  }

 private:
  struct State {
    void run() {
      std::unique_lock<std::mutex> lk(m);
      while (!stop) {
        if (!armed) {
          cv.wait(lk);
          continue;
        }
        if (std::chrono::steady_clock::now() >= deadline) {
          std::fprintf(
              stderr,
              "\n[  WATCHDOG ] %s did not finish within %d s (MANIFOLD_TEST_TIMEOUT): aborting\n",
              name.c_str(), seconds);
          std::fflush(stderr);
          std::_Exit(3);
        }
        cv.wait_until(lk, deadline);
      }
    }
    int seconds = 0;
    std::mutex m;
    std::condition_variable cv;
    std::string name;
    std::chrono::steady_clock::time_point deadline;
    bool armed = false;
    bool stop = false;
  };
  std::shared_ptr<State> state_;
};

inline const bool kWatchdogRegistered = [] {
  ::testing::UnitTest::GetInstance()->listeners().Append(new Watchdog);
  return true;
}();

// The devices of `devices` whose name contains MANIFOLD_TEST_DEVICE_NAME (all when unset).
inline std::vector<cl_device_id> devicesNamed(std::vector<cl_device_id> devices) {
  const std::string wanted = envOr("MANIFOLD_TEST_DEVICE_NAME", "");
  if (wanted.empty()) return devices;
  std::erase_if(devices, [&](cl_device_id d) {
    return deviceString(d, CL_DEVICE_NAME).find(wanted) == std::string::npos;
  });
  return devices;
}

// ------------------------------------------------------------------------------------------
// Fixtures
// ------------------------------------------------------------------------------------------

// Platform + device under test, no context.
class DeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    platform_ = findPlatform(&why);
    ASSERT_NE(platform_, nullptr) << why;
    cl_device_type type = wantedDeviceType();
    cl_uint n = 0;
    cl_int err = clGetDeviceIDs(platform_, type, 0, nullptr, &n);
    if (err == CL_DEVICE_NOT_FOUND || n == 0) {
      if (type == CL_DEVICE_TYPE_CPU) {
        FAIL() << "the platform reports no CPU device (clGetDeviceIDs returned " << errorName(err)
               << ")";
      }
      GTEST_SKIP() << "the platform has no device of the requested MANIFOLD_TEST_DEVICE_TYPE";
    }
    ASSERT_EQ(Err(CL_SUCCESS), Err(err)) << "clGetDeviceIDs";
    std::vector<cl_device_id> devs(n);
    ASSERT_EQ(Err(CL_SUCCESS), Err(clGetDeviceIDs(platform_, type, n, devs.data(), nullptr)));
    devs = devicesNamed(devs);
    if (devs.empty()) GTEST_SKIP() << "no device of the requested MANIFOLD_TEST_DEVICE_NAME";
    device_ = devs[0];
    caps_ = queryCaps(device_);
  }

  cl_platform_id platform_ = nullptr;
  cl_device_id device_ = nullptr;
  Caps caps_;
};

// + a context on that one device and an in-order queue (no properties).
class ContextTest : public DeviceTest {
 protected:
  void SetUp() override {
    DeviceTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    cl_int err = CL_SUCCESS;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)platform_, 0};
    context_.reset(clCreateContext(props, 1, &device_, nullptr, nullptr, &err));
    ASSERT_EQ(Err(CL_SUCCESS), Err(err)) << "clCreateContext";
    ASSERT_NE(context_.get(), nullptr);
    queue_.reset(clCreateCommandQueueWithProperties(context_, device_, nullptr, &err));
    ASSERT_EQ(Err(CL_SUCCESS), Err(err)) << "clCreateCommandQueueWithProperties";
    ASSERT_NE(queue_.get(), nullptr);
  }
  void TearDown() override {
    if (queue_) clFinish(queue_);
  }

  // Creates a buffer; ADD_FAILURE on error.
  Mem makeBuffer(size_t size, cl_mem_flags flags = CL_MEM_READ_WRITE, void* host = nullptr) {
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateBuffer(context_, flags, size, host, &err);
    EXPECT_EQ(Err(CL_SUCCESS), Err(err))
        << "clCreateBuffer(size=" << size << ", flags=0x" << std::hex << flags << ")";
    return Mem(m);
  }
  Queue makeQueue(cl_command_queue_properties props) {
    cl_int err = CL_SUCCESS;
    cl_queue_properties p[] = {CL_QUEUE_PROPERTIES, props, 0};
    cl_command_queue q = clCreateCommandQueueWithProperties(context_, device_, p, &err);
    EXPECT_EQ(Err(CL_SUCCESS), Err(err))
        << "clCreateCommandQueueWithProperties(props=0x" << std::hex << props << ")";
    return Queue(q);
  }
  Event makeUserEvent() {
    cl_int err = CL_SUCCESS;
    cl_event e = clCreateUserEvent(context_, &err);
    EXPECT_EQ(Err(CL_SUCCESS), Err(err)) << "clCreateUserEvent";
    return Event(e);
  }
  // Blocking write of `data` into `buf` at `offset` on the fixture queue.
  void write(cl_mem buf, const void* data, size_t size, size_t offset = 0) {
    ASSERT_EQ(Err(CL_SUCCESS), Err(clEnqueueWriteBuffer(queue_, buf, CL_TRUE, offset, size, data, 0,
                                                        nullptr, nullptr)));
  }
  std::vector<unsigned char> read(cl_mem buf, size_t size, size_t offset = 0) {
    std::vector<unsigned char> v(size);
    EXPECT_EQ(Err(CL_SUCCESS), Err(clEnqueueReadBuffer(queue_, buf, CL_TRUE, offset, size, v.data(),
                                                       0, nullptr, nullptr)));
    return v;
  }

  Context context_;
  Queue queue_;
};

// A second context on the same device (for CL_INVALID_CONTEXT cases).
inline Context makeOtherContext(cl_device_id d) {
  cl_int err = CL_SUCCESS;
  cl_context c = clCreateContext(nullptr, 1, &d, nullptr, nullptr, &err);
  EXPECT_EQ(Err(CL_SUCCESS), Err(err)) << "clCreateContext (second context)";
  return Context(c);
}

// Aligned host allocation, freed with free().
// What this process writes to its standard output while the object lives (file descriptor 1
// goes to a temporary file meanwhile).
class CapturedStdout {
 public:
  CapturedStdout() {
    std::fflush(stdout);
    file_ = std::tmpfile();
    saved_ = dup(1);
    if (file_ && saved_ >= 0) dup2(fileno(file_), 1);
  }
  ~CapturedStdout() { restore(); }
  CapturedStdout(const CapturedStdout&) = delete;
  CapturedStdout& operator=(const CapturedStdout&) = delete;
  // Everything written so far; the standard output is restored.
  std::string text() {
    restore();
    std::string out;
    if (!file_) return out;
    std::rewind(file_);
    char chunk[4096];
    for (size_t n; (n = std::fread(chunk, 1, sizeof chunk, file_)) > 0;) out.append(chunk, n);
    return out;
  }

 private:
  void restore() {
    if (saved_ < 0) return;
    std::fflush(stdout);
    dup2(saved_, 1);
    close(saved_);
    saved_ = -1;
  }
  std::FILE* file_ = nullptr;
  int saved_ = -1;
};

struct AlignedBuf {
  void* p = nullptr;
  AlignedBuf(size_t size, size_t align = 4096) {
    size_t rounded = (size + align - 1) / align * align;
    p = std::aligned_alloc(align, rounded ? rounded : align);
  }
  ~AlignedBuf() { std::free(p); }
  AlignedBuf(const AlignedBuf&) = delete;
  AlignedBuf& operator=(const AlignedBuf&) = delete;
  template <typename T = unsigned char>
  T* as() const {
    return static_cast<T*>(p);
  }
};

}  // namespace cltest
