// cl_khr_command_buffer 0.9.8, cl_khr_command_buffer_mutable_dispatch 0.9.5 and
// cl_khr_command_buffer_multi_device 0.9.2: the entry points reached through
// clGetExtensionFunctionAddressForPlatform, the queries, the state machine (recording,
// executable), every argument error the spec lists that Manifold can meet, replays with data
// that changes between enqueues, mutable updates between enqueues, and one command buffer over
// the CPU and emulated GPUs (MANIFOLD_EMULATED_GPUS) with sync points across devices.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <vector>

#include "cl_test.h"
#include "core/cl_khr_command_buffer.h"

using namespace cltest;

namespace {

// Two emulated GPUs (the CPU with memory of its own) join the CPU in the all-devices context,
// unless the tests are about GPUs (MANIFOLD_TEST_DEVICE_TYPE=gpu: the simulated CUDA driver or
// real GPUs): then the first GPU is a CUDA device, and the CPU and it make the multi-device case.
const bool kEmulated = [] {
  const char* wanted = std::getenv("MANIFOLD_TEST_DEVICE_TYPE");
  if (wanted && std::string(wanted) == "gpu") return true;
  return setenv("MANIFOLD_EMULATED_GPUS", "2", /*overwrite=*/0) == 0;
}();

const char* kSource = R"CLC(
kernel void add(global int* p, int v) { p[get_global_id(0)] += v; }
kernel void copy_plus(const global int* in, global int* out, int v) {
  size_t i = get_global_id(0);
  out[i] = in[i] + v;
}
)CLC";

// The address of a handle for calls that read it (cltest::Ref::out() releases what it holds):
// valid until the end of the full expression.
template <class R>
const auto* in(const R& r, decltype(r.get())&& h = {}) {
  h = r.get();
  return &h;
}

// The extension's functions of one platform.
struct Khr {
  explicit Khr(cl_platform_id p) {
#define LOAD(name) \
  name = reinterpret_cast<name##_t*>(clGetExtensionFunctionAddressForPlatform(p, #name))
    LOAD(clCreateCommandBufferKHR);
    LOAD(clFinalizeCommandBufferKHR);
    LOAD(clRetainCommandBufferKHR);
    LOAD(clReleaseCommandBufferKHR);
    LOAD(clEnqueueCommandBufferKHR);
    LOAD(clCommandBarrierWithWaitListKHR);
    LOAD(clCommandCopyBufferKHR);
    LOAD(clCommandCopyBufferRectKHR);
    LOAD(clCommandCopyBufferToImageKHR);
    LOAD(clCommandCopyImageKHR);
    LOAD(clCommandCopyImageToBufferKHR);
    LOAD(clCommandFillBufferKHR);
    LOAD(clCommandFillImageKHR);
    LOAD(clCommandNDRangeKernelKHR);
    LOAD(clCommandSVMMemcpyKHR);
    LOAD(clCommandSVMMemFillKHR);
    LOAD(clGetCommandBufferInfoKHR);
    LOAD(clRemapCommandBufferKHR);
    LOAD(clUpdateMutableCommandsKHR);
    LOAD(clGetMutableCommandInfoKHR);
#undef LOAD
  }
  bool complete() const {
    const void* all[] = {
        (void*)clCreateCommandBufferKHR,      (void*)clFinalizeCommandBufferKHR,
        (void*)clRetainCommandBufferKHR,      (void*)clReleaseCommandBufferKHR,
        (void*)clEnqueueCommandBufferKHR,     (void*)clCommandBarrierWithWaitListKHR,
        (void*)clCommandCopyBufferKHR,        (void*)clCommandCopyBufferRectKHR,
        (void*)clCommandCopyBufferToImageKHR, (void*)clCommandCopyImageKHR,
        (void*)clCommandCopyImageToBufferKHR, (void*)clCommandFillBufferKHR,
        (void*)clCommandFillImageKHR,         (void*)clCommandNDRangeKernelKHR,
        (void*)clCommandSVMMemcpyKHR,         (void*)clCommandSVMMemFillKHR,
        (void*)clGetCommandBufferInfoKHR,     (void*)clRemapCommandBufferKHR,
        (void*)clUpdateMutableCommandsKHR,    (void*)clGetMutableCommandInfoKHR};
    return std::all_of(std::begin(all), std::end(all), [](const void* f) { return f != nullptr; });
  }
  clCreateCommandBufferKHR_t* clCreateCommandBufferKHR;
  clFinalizeCommandBufferKHR_t* clFinalizeCommandBufferKHR;
  clRetainCommandBufferKHR_t* clRetainCommandBufferKHR;
  clReleaseCommandBufferKHR_t* clReleaseCommandBufferKHR;
  clEnqueueCommandBufferKHR_t* clEnqueueCommandBufferKHR;
  clCommandBarrierWithWaitListKHR_t* clCommandBarrierWithWaitListKHR;
  clCommandCopyBufferKHR_t* clCommandCopyBufferKHR;
  clCommandCopyBufferRectKHR_t* clCommandCopyBufferRectKHR;
  clCommandCopyBufferToImageKHR_t* clCommandCopyBufferToImageKHR;
  clCommandCopyImageKHR_t* clCommandCopyImageKHR;
  clCommandCopyImageToBufferKHR_t* clCommandCopyImageToBufferKHR;
  clCommandFillBufferKHR_t* clCommandFillBufferKHR;
  clCommandFillImageKHR_t* clCommandFillImageKHR;
  clCommandNDRangeKernelKHR_t* clCommandNDRangeKernelKHR;
  clCommandSVMMemcpyKHR_t* clCommandSVMMemcpyKHR;
  clCommandSVMMemFillKHR_t* clCommandSVMMemFillKHR;
  clGetCommandBufferInfoKHR_t* clGetCommandBufferInfoKHR;
  clRemapCommandBufferKHR_t* clRemapCommandBufferKHR;
  clUpdateMutableCommandsKHR_t* clUpdateMutableCommandsKHR;
  clGetMutableCommandInfoKHR_t* clGetMutableCommandInfoKHR;
};

// Owns a command buffer (released through the extension's function).
class CommandBuffer {
 public:
  CommandBuffer() = default;
  CommandBuffer(const Khr* khr, cl_command_buffer_khr cb) : khr_(khr), cb_(cb) {}
  CommandBuffer(CommandBuffer&& o) noexcept : khr_(o.khr_), cb_(std::exchange(o.cb_, nullptr)) {}
  CommandBuffer& operator=(CommandBuffer&& o) noexcept {
    std::swap(khr_, o.khr_);
    std::swap(cb_, o.cb_);
    return *this;
  }
  ~CommandBuffer() {
    if (cb_) khr_->clReleaseCommandBufferKHR(cb_);
  }
  operator cl_command_buffer_khr() const { return cb_; }
  cl_command_buffer_khr get() const { return cb_; }
  cl_command_buffer_khr release() { return std::exchange(cb_, nullptr); }

 private:
  const Khr* khr_ = nullptr;
  cl_command_buffer_khr cb_ = nullptr;
};

class CommandBufferTest : public ContextTest {
 protected:
  void SetUp() override {
    ContextTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    khr_ = std::make_unique<Khr>(platform_);
    const std::string extensions = deviceString(device_, CL_DEVICE_EXTENSIONS);
    if (!hasWord(extensions, "cl_khr_command_buffer"))
      GTEST_SKIP() << "the device does not report cl_khr_command_buffer";
    ASSERT_TRUE(khr_->complete()) << "an entry point is not reachable";
    cl_int err = CL_SUCCESS;
    program_ = Program(clCreateProgramWithSource(context_, 1, &kSource, nullptr, &err));
    ASSERT_ERR(CL_SUCCESS, err);
    ASSERT_CL(CL_SUCCESS, clBuildProgram(program_, 1, &device_, nullptr, nullptr, nullptr));
  }

  CommandBuffer create(const cl_command_buffer_properties_khr* properties = nullptr,
                       cl_command_queue queue = nullptr) {
    cl_command_queue q = queue ? queue : queue_.get();
    cl_int err = CL_SUCCESS;
    CommandBuffer cb(khr_.get(), khr_->clCreateCommandBufferKHR(1, &q, properties, &err));
    EXPECT_ERR(CL_SUCCESS, err);
    return cb;
  }
  CommandBuffer createMutable() {
    const cl_command_buffer_properties_khr props[] = {CL_COMMAND_BUFFER_FLAGS_KHR,
                                                      CL_COMMAND_BUFFER_MUTABLE_KHR, 0};
    return create(props);
  }
  cl_int createError(cl_uint n, const cl_command_queue* queues,
                     const cl_command_buffer_properties_khr* properties) {
    cl_int err = CL_SUCCESS;
    cl_command_buffer_khr cb = khr_->clCreateCommandBufferKHR(n, queues, properties, &err);
    EXPECT_EQ(cb == nullptr, err != CL_SUCCESS);
    if (cb) khr_->clReleaseCommandBufferKHR(cb);
    return err;
  }
  Kernel kernel(const char* name) {
    cl_int err = CL_SUCCESS;
    Kernel k(clCreateKernel(program_, name, &err));
    EXPECT_ERR(CL_SUCCESS, err);
    return k;
  }
  Mem ints(const std::vector<cl_int>& values) {
    Mem m = makeBuffer(values.size() * sizeof(cl_int));
    write(m, values.data(), values.size() * sizeof(cl_int));
    return m;
  }
  std::vector<cl_int> readInts(cl_mem m, size_t n) {
    std::vector<cl_int> v(n);
    EXPECT_CL(CL_SUCCESS, clEnqueueReadBuffer(queue_, m, CL_TRUE, 0, n * sizeof(cl_int), v.data(),
                                              0, nullptr, nullptr));
    return v;
  }
  cl_int enqueue(cl_command_buffer_khr cb, cl_event* event = nullptr) {
    return khr_->clEnqueueCommandBufferKHR(0, nullptr, cb, 0, nullptr, event);
  }
  template <class T>
  T info(cl_command_buffer_khr cb, cl_command_buffer_info_khr name) {
    T value{};
    size_t size = 0;
    EXPECT_CL(CL_SUCCESS, khr_->clGetCommandBufferInfoKHR(cb, name, sizeof value, &value, &size));
    EXPECT_EQ(size, sizeof value);
    return value;
  }

  std::unique_ptr<Khr> khr_;
  Program program_;
};

// ---- Extension, device and platform queries ----

TEST_F(CommandBufferTest, DeviceAndPlatformReportTheExtensionsAtTheCurrentRevisions) {
  size_t size = 0;
  ASSERT_CL(CL_SUCCESS,
            clGetDeviceInfo(device_, CL_DEVICE_EXTENSIONS_WITH_VERSION, 0, nullptr, &size));
  std::vector<cl_name_version> versions(size / sizeof(cl_name_version));
  ASSERT_CL(CL_SUCCESS, clGetDeviceInfo(device_, CL_DEVICE_EXTENSIONS_WITH_VERSION, size,
                                        versions.data(), nullptr));
  auto version_of = [&](const char* name) {
    for (const cl_name_version& v : versions)
      if (std::strcmp(v.name, name) == 0) return v.version;
    return cl_version{0};
  };
  EXPECT_EQ(version_of("cl_khr_command_buffer"), CL_MAKE_VERSION(0, 9, 8));
  EXPECT_EQ(version_of("cl_khr_command_buffer_mutable_dispatch"), CL_MAKE_VERSION(0, 9, 5));
  EXPECT_EQ(version_of("cl_khr_command_buffer_multi_device"), CL_MAKE_VERSION(0, 9, 2));

  cl_device_command_buffer_capabilities_khr caps = 0;
  ASSERT_CL(CL_SUCCESS, clGetDeviceInfo(device_, CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR,
                                        sizeof caps, &caps, nullptr));
  EXPECT_TRUE(caps & CL_COMMAND_BUFFER_CAPABILITY_SIMULTANEOUS_USE_KHR);
  EXPECT_TRUE(caps & CL_COMMAND_BUFFER_CAPABILITY_MULTIPLE_QUEUE_KHR);
  cl_command_queue_properties supported = 0, required = 1;
  ASSERT_CL(CL_SUCCESS,
            clGetDeviceInfo(device_, CL_DEVICE_COMMAND_BUFFER_SUPPORTED_QUEUE_PROPERTIES_KHR,
                            sizeof supported, &supported, nullptr));
  EXPECT_TRUE(supported & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  ASSERT_CL(CL_SUCCESS,
            clGetDeviceInfo(device_, CL_DEVICE_COMMAND_BUFFER_REQUIRED_QUEUE_PROPERTIES_KHR,
                            sizeof required, &required, nullptr));
  EXPECT_EQ(required, 0u);
  cl_mutable_dispatch_fields_khr mutable_caps = 0;
  ASSERT_CL(CL_SUCCESS, clGetDeviceInfo(device_, CL_DEVICE_MUTABLE_DISPATCH_CAPABILITIES_KHR,
                                        sizeof mutable_caps, &mutable_caps, nullptr));
  EXPECT_EQ(mutable_caps & CL_MUTABLE_DISPATCH_ARGUMENTS_KHR, CL_MUTABLE_DISPATCH_ARGUMENTS_KHR);
  // Device-side sync: at least the device itself.
  cl_uint sync_devices = 0;
  ASSERT_CL(CL_SUCCESS, clGetDeviceInfo(device_, CL_DEVICE_COMMAND_BUFFER_NUM_SYNC_DEVICES_KHR,
                                        sizeof sync_devices, &sync_devices, nullptr));
  std::vector<cl_device_id> synced(sync_devices);
  ASSERT_CL(CL_SUCCESS,
            clGetDeviceInfo(device_, CL_DEVICE_COMMAND_BUFFER_SYNC_DEVICES_KHR,
                            synced.size() * sizeof(cl_device_id), synced.data(), nullptr));
  EXPECT_NE(std::find(synced.begin(), synced.end(), device_), synced.end());

  cl_platform_command_buffer_capabilities_khr platform_caps = 0;
  ASSERT_CL(CL_SUCCESS, clGetPlatformInfo(platform_, CL_PLATFORM_COMMAND_BUFFER_CAPABILITIES_KHR,
                                          sizeof platform_caps, &platform_caps, nullptr));
  EXPECT_TRUE(platform_caps & CL_COMMAND_BUFFER_PLATFORM_UNIVERSAL_SYNC_KHR);
  EXPECT_TRUE(platform_caps & CL_COMMAND_BUFFER_PLATFORM_REMAP_QUEUES_KHR);
}

// ---- Creation ----

TEST_F(CommandBufferTest, CreationErrors) {
  cl_command_queue q = queue_.get();
  EXPECT_EQ(createError(1, nullptr, nullptr), CL_INVALID_VALUE);
  EXPECT_EQ(createError(0, &q, nullptr), CL_INVALID_VALUE);
  cl_command_queue bad = reinterpret_cast<cl_command_queue>(context_.get());
  EXPECT_EQ(createError(1, &bad, nullptr), CL_INVALID_COMMAND_QUEUE);
  const cl_command_buffer_properties_khr unknown[] = {0x7777, 0, 0};
  EXPECT_EQ(createError(1, &q, unknown), CL_INVALID_VALUE);
  const cl_command_buffer_properties_khr twice[] = {CL_COMMAND_BUFFER_FLAGS_KHR, 0,
                                                    CL_COMMAND_BUFFER_FLAGS_KHR, 0, 0};
  EXPECT_EQ(createError(1, &q, twice), CL_INVALID_VALUE);
  const cl_command_buffer_properties_khr bad_flags[] = {CL_COMMAND_BUFFER_FLAGS_KHR, 1u << 20, 0};
  EXPECT_EQ(createError(1, &q, bad_flags), CL_INVALID_VALUE);
  Context other = makeOtherContext(device_);
  cl_int err = CL_SUCCESS;
  Queue other_queue(clCreateCommandQueueWithProperties(other, device_, nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  cl_command_queue mixed[] = {q, other_queue.get()};
  EXPECT_EQ(createError(2, mixed, nullptr), CL_INVALID_CONTEXT);
  // Two queues of one device: CL_COMMAND_BUFFER_CAPABILITY_MULTIPLE_QUEUE_KHR is reported.
  Queue second = makeQueue(0);
  cl_command_queue two[] = {q, second.get()};
  EXPECT_EQ(createError(2, two, nullptr), CL_SUCCESS);
}

TEST_F(CommandBufferTest, QueriesAnswerWhatTheBufferWasCreatedWith) {
  const cl_command_buffer_properties_khr props[] = {CL_COMMAND_BUFFER_FLAGS_KHR,
                                                    CL_COMMAND_BUFFER_SIMULTANEOUS_USE_KHR, 0};
  CommandBuffer cb = create(props);
  EXPECT_EQ(info<cl_uint>(cb, CL_COMMAND_BUFFER_NUM_QUEUES_KHR), 1u);
  EXPECT_EQ(info<cl_command_queue>(cb, CL_COMMAND_BUFFER_QUEUES_KHR), queue_.get());
  EXPECT_EQ(info<cl_context>(cb, CL_COMMAND_BUFFER_CONTEXT_KHR), context_.get());
  EXPECT_EQ(info<cl_uint>(cb, CL_COMMAND_BUFFER_REFERENCE_COUNT_KHR), 1u);
  ASSERT_CL(CL_SUCCESS, khr_->clRetainCommandBufferKHR(cb));
  EXPECT_EQ(info<cl_uint>(cb, CL_COMMAND_BUFFER_REFERENCE_COUNT_KHR), 2u);
  ASSERT_CL(CL_SUCCESS, khr_->clReleaseCommandBufferKHR(cb));
  EXPECT_EQ(info<cl_command_buffer_state_khr>(cb, CL_COMMAND_BUFFER_STATE_KHR),
            cl_command_buffer_state_khr(CL_COMMAND_BUFFER_STATE_RECORDING_KHR));
  size_t size = 0;
  ASSERT_CL(CL_SUCCESS, khr_->clGetCommandBufferInfoKHR(cb, CL_COMMAND_BUFFER_PROPERTIES_ARRAY_KHR,
                                                        0, nullptr, &size));
  ASSERT_EQ(size, sizeof props);
  cl_command_buffer_properties_khr got[3] = {};
  ASSERT_CL(CL_SUCCESS, khr_->clGetCommandBufferInfoKHR(cb, CL_COMMAND_BUFFER_PROPERTIES_ARRAY_KHR,
                                                        size, got, nullptr));
  EXPECT_TRUE(std::equal(std::begin(props), std::end(props), got));
  // Without properties: none to report.
  CommandBuffer plain = create();
  ASSERT_CL(CL_SUCCESS, khr_->clGetCommandBufferInfoKHR(
                            plain, CL_COMMAND_BUFFER_PROPERTIES_ARRAY_KHR, 0, nullptr, &size));
  EXPECT_EQ(size, 0u);
  cl_uint small = 0;
  EXPECT_CL(CL_INVALID_VALUE,
            khr_->clGetCommandBufferInfoKHR(cb, CL_COMMAND_BUFFER_QUEUES_KHR, 1, &small, nullptr));
  EXPECT_CL(CL_INVALID_VALUE, khr_->clGetCommandBufferInfoKHR(cb, 0x7777, 0, nullptr, &size));
  cl_command_buffer_khr bad = reinterpret_cast<cl_command_buffer_khr>(queue_.get());
  EXPECT_CL(CL_INVALID_COMMAND_BUFFER_KHR,
            khr_->clGetCommandBufferInfoKHR(bad, CL_COMMAND_BUFFER_STATE_KHR, 0, nullptr, &size));
  EXPECT_CL(CL_INVALID_COMMAND_BUFFER_KHR, khr_->clRetainCommandBufferKHR(nullptr));
  EXPECT_CL(CL_INVALID_COMMAND_BUFFER_KHR, khr_->clReleaseCommandBufferKHR(bad));
  EXPECT_CL(CL_INVALID_COMMAND_BUFFER_KHR, khr_->clFinalizeCommandBufferKHR(nullptr));
}

// ---- State machine ----

TEST_F(CommandBufferTest, RecordingThenExecutableAndNothingElse) {
  CommandBuffer cb = create();
  Mem a = makeBuffer(64), b = makeBuffer(64);
  EXPECT_CL(CL_INVALID_OPERATION, enqueue(cb));
  ASSERT_CL(CL_SUCCESS, khr_->clCommandCopyBufferKHR(cb, nullptr, nullptr, a, b, 0, 0, 64, 0,
                                                     nullptr, nullptr, nullptr));
  ASSERT_CL(CL_SUCCESS, khr_->clFinalizeCommandBufferKHR(cb));
  EXPECT_EQ(info<cl_command_buffer_state_khr>(cb, CL_COMMAND_BUFFER_STATE_KHR),
            cl_command_buffer_state_khr(CL_COMMAND_BUFFER_STATE_EXECUTABLE_KHR));
  EXPECT_CL(CL_INVALID_OPERATION, khr_->clFinalizeCommandBufferKHR(cb));
  EXPECT_CL(CL_INVALID_OPERATION, khr_->clCommandCopyBufferKHR(cb, nullptr, nullptr, a, b, 0, 0, 64,
                                                               0, nullptr, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_OPERATION, khr_->clCommandBarrierWithWaitListKHR(cb, nullptr, nullptr, 0,
                                                                        nullptr, nullptr, nullptr));
  EXPECT_CL(CL_SUCCESS, enqueue(cb));
  EXPECT_CL(CL_SUCCESS, enqueue(cb));
  EXPECT_CL(CL_SUCCESS, clFinish(queue_));
  // An empty command buffer can be finalized and enqueued.
  CommandBuffer empty = create();
  ASSERT_CL(CL_SUCCESS, khr_->clFinalizeCommandBufferKHR(empty));
  Event done;
  ASSERT_CL(CL_SUCCESS, enqueue(empty, done.out()));
  EXPECT_CL(CL_SUCCESS, clWaitForEvents(1, in(done)));
}

// ---- Recording errors ----

TEST_F(CommandBufferTest, RecordingErrors) {
  CommandBuffer cb = create();
  Mem a = makeBuffer(64), b = makeBuffer(64);
  auto copy = [&](cl_command_queue q, const cl_command_properties_khr* props, cl_uint n,
                  const cl_sync_point_khr* waits, cl_mutable_command_khr* handle,
                  size_t src_offset = 0, cl_mem src = nullptr) {
    return khr_->clCommandCopyBufferKHR(cb, q, props, src ? src : a.get(), b, src_offset, 0, 32, n,
                                        waits, nullptr, handle);
  };
  cl_sync_point_khr first = 99;
  ASSERT_CL(CL_SUCCESS, khr_->clCommandCopyBufferKHR(cb, nullptr, nullptr, a, b, 0, 0, 64, 0,
                                                     nullptr, &first, nullptr));
  EXPECT_NE(first, 99u);
  EXPECT_CL(CL_SUCCESS, copy(nullptr, nullptr, 1, &first, nullptr));
  EXPECT_CL(CL_SUCCESS, copy(queue_, nullptr, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_SYNC_POINT_WAIT_LIST_KHR, copy(nullptr, nullptr, 1, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_SYNC_POINT_WAIT_LIST_KHR, copy(nullptr, nullptr, 0, &first, nullptr));
  const cl_sync_point_khr unknown = 1000;
  EXPECT_CL(CL_INVALID_SYNC_POINT_WAIT_LIST_KHR, copy(nullptr, nullptr, 1, &unknown, nullptr));
  const cl_command_properties_khr props[] = {CL_MUTABLE_DISPATCH_UPDATABLE_FIELDS_KHR, 0, 0};
  EXPECT_CL(CL_INVALID_VALUE, copy(nullptr, props, 0, nullptr, nullptr));
  cl_mutable_command_khr handle = nullptr;
  EXPECT_CL(CL_INVALID_VALUE, copy(nullptr, nullptr, 0, nullptr, &handle));
  Queue other = makeQueue(0);
  EXPECT_CL(CL_INVALID_COMMAND_QUEUE, copy(other, nullptr, 0, nullptr, nullptr));
  // clEnqueueCopyBuffer's own errors.
  EXPECT_CL(CL_INVALID_VALUE, copy(nullptr, nullptr, 0, nullptr, nullptr, 40));
  EXPECT_CL(CL_MEM_COPY_OVERLAP, khr_->clCommandCopyBufferKHR(cb, nullptr, nullptr, a, a, 0, 8, 16,
                                                              0, nullptr, nullptr, nullptr));
  Context other_context = makeOtherContext(device_);
  cl_int err = CL_SUCCESS;
  Mem foreign(clCreateBuffer(other_context, CL_MEM_READ_WRITE, 64, nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  EXPECT_CL(CL_INVALID_CONTEXT, copy(nullptr, nullptr, 0, nullptr, nullptr, 0, foreign));
  const cl_int pattern = 7;
  EXPECT_CL(CL_INVALID_VALUE, khr_->clCommandFillBufferKHR(cb, nullptr, nullptr, a, &pattern, 3, 0,
                                                           12, 0, nullptr, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_COMMAND_BUFFER_KHR,
            khr_->clCommandFillBufferKHR(nullptr, nullptr, nullptr, a, &pattern, 4, 0, 16, 0,
                                         nullptr, nullptr, nullptr));
  // SVM commands: the SVM enqueues' errors (NULL pointers, misaligned fills, overlap); on a
  // device without SVM (HIP devices) every one is CL_INVALID_OPERATION.
  cl_device_svm_capabilities svm = 0;
  clGetDeviceInfo(device_, CL_DEVICE_SVM_CAPABILITIES, sizeof svm, &svm, nullptr);
  const auto svm_error = [&](cl_int error) { return svm ? error : CL_INVALID_OPERATION; };
  EXPECT_CL(svm_error(CL_INVALID_VALUE),
            khr_->clCommandSVMMemFillKHR(cb, nullptr, nullptr, nullptr, &pattern, 4, 16, 0, nullptr,
                                         nullptr, nullptr));
  EXPECT_CL(svm_error(CL_INVALID_VALUE),
            khr_->clCommandSVMMemcpyKHR(cb, nullptr, nullptr, nullptr, b.get(), 16, 0, nullptr,
                                        nullptr, nullptr));
  std::vector<char> host(64);
  EXPECT_CL(svm_error(CL_MEM_COPY_OVERLAP),
            khr_->clCommandSVMMemcpyKHR(cb, nullptr, nullptr, host.data(), host.data() + 8, 16, 0,
                                        nullptr, nullptr, nullptr));
  EXPECT_CL(svm_error(CL_INVALID_VALUE),
            khr_->clCommandSVMMemFillKHR(cb, nullptr, nullptr, host.data() + 1, &pattern, 4, 16, 0,
                                         nullptr, nullptr, nullptr));
}

// SVM fills, copies and a kernel on an SVM pointer, recorded once and replayed with changing
// data (the allocation migrates to the queue's device and back at each replay).
TEST_F(CommandBufferTest, SvmCommandsReplay) {
  cl_device_svm_capabilities caps = 0;
  clGetDeviceInfo(device_, CL_DEVICE_SVM_CAPABILITIES, sizeof caps, &caps, nullptr);
  if (!(caps & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER)) GTEST_SKIP() << "no SVM";
  SKIP_IF_KERNELS_COMPUTE_NOTHING(device_);
  const size_t n = 256, bytes = n * sizeof(cl_int);
  auto* a = static_cast<cl_int*>(clSVMAlloc(context_, CL_MEM_READ_WRITE, bytes, 0));
  auto* b = static_cast<cl_int*>(clSVMAlloc(context_, CL_MEM_READ_WRITE, bytes, 0));
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  std::vector<cl_int> in(n), out(n);
  Kernel k = kernel("add");
  ASSERT_CL(CL_SUCCESS, clSetKernelArgSVMPointer(k, 0, b));
  const cl_int v = 5;
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(k, 1, sizeof v, &v));
  CommandBuffer cb = create();
  const cl_int one = 1;
  cl_sync_point_khr filled = 0, copied = 0, added = 0;
  // a = 1; b = in (host memory); b += a... as: copy in -> b, kernel b += 5, copy b -> out.
  ASSERT_CL(CL_SUCCESS, khr_->clCommandSVMMemFillKHR(cb, nullptr, nullptr, a, &one, sizeof one,
                                                     bytes, 0, nullptr, &filled, nullptr));
  ASSERT_CL(CL_SUCCESS, khr_->clCommandSVMMemcpyKHR(cb, nullptr, nullptr, b, in.data(), bytes, 1,
                                                    &filled, &copied, nullptr));
  ASSERT_CL(CL_SUCCESS, khr_->clCommandNDRangeKernelKHR(cb, nullptr, nullptr, k, 1, nullptr, &n,
                                                        nullptr, 1, &copied, &added, nullptr));
  ASSERT_CL(CL_SUCCESS, khr_->clCommandSVMMemcpyKHR(cb, nullptr, nullptr, out.data(), b, bytes, 1,
                                                    &added, nullptr, nullptr));
  ASSERT_CL(CL_SUCCESS, khr_->clFinalizeCommandBufferKHR(cb));
  for (int round = 0; round < 5; ++round) {
    std::iota(in.begin(), in.end(), round * 100);
    ASSERT_CL(CL_SUCCESS, enqueue(cb));
    ASSERT_CL(CL_SUCCESS, clFinish(queue_));
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], cl_int(round * 100 + i) + v) << i;
  }
  ASSERT_CL(CL_SUCCESS,
            clEnqueueSVMMap(queue_, CL_TRUE, CL_MAP_READ, a, bytes, 0, nullptr, nullptr));
  EXPECT_EQ(a[n - 1], 1);
  ASSERT_CL(CL_SUCCESS, clEnqueueSVMUnmap(queue_, a, 0, nullptr, nullptr));
  ASSERT_CL(CL_SUCCESS, clFinish(queue_));
  cb = CommandBuffer();
  clSVMFree(context_, a);
  clSVMFree(context_, b);
}

// The spec: a kernel that calls printf is recorded only where the device reports
// CL_COMMAND_BUFFER_CAPABILITY_KERNEL_PRINTF_KHR (the CPU does; CUDA devices do not).
TEST_F(CommandBufferTest, PrintfKernelsWhereTheDeviceRecordsThem) {
  cl_device_command_buffer_capabilities_khr caps = 0;
  ASSERT_CL(CL_SUCCESS, clGetDeviceInfo(device_, CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR,
                                        sizeof caps, &caps, nullptr));
  const char* source =
      "kernel void say(int v) { if (get_global_id(0) == 0) printf(\"%d\\n\", v); }";
  cl_int err = CL_SUCCESS;
  Program p(clCreateProgramWithSource(context_, 1, &source, nullptr, &err));
  ASSERT_CL(CL_SUCCESS, clBuildProgram(p, 1, &device_, nullptr, nullptr, nullptr));
  Kernel k(clCreateKernel(p, "say", &err));
  ASSERT_ERR(CL_SUCCESS, err);
  const cl_int v = 42;
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(k, 0, sizeof v, &v));
  CommandBuffer cb = create();
  const size_t n = 4;
  EXPECT_CL(
      caps & CL_COMMAND_BUFFER_CAPABILITY_KERNEL_PRINTF_KHR ? CL_SUCCESS : CL_INVALID_OPERATION,
      khr_->clCommandNDRangeKernelKHR(cb, nullptr, nullptr, k, 1, nullptr, &n, nullptr, 0, nullptr,
                                      nullptr, nullptr));
  // A kernel without printf is recorded everywhere.
  Kernel add = kernel("add");
  Mem m = makeBuffer(n * sizeof(cl_int));
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(add, 0, sizeof(cl_mem), in(m)));
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(add, 1, sizeof v, &v));
  EXPECT_CL(CL_SUCCESS, khr_->clCommandNDRangeKernelKHR(cb, nullptr, nullptr, add, 1, nullptr, &n,
                                                        nullptr, 0, nullptr, nullptr, nullptr));
}

TEST_F(CommandBufferTest, KernelRecordingErrors) {
  CommandBuffer cb = create();
  Kernel k = kernel("add");
  const size_t n = 16;
  // Arguments not set.
  EXPECT_CL(CL_INVALID_KERNEL_ARGS,
            khr_->clCommandNDRangeKernelKHR(cb, nullptr, nullptr, k, 1, nullptr, &n, nullptr, 0,
                                            nullptr, nullptr, nullptr));
  Mem m = makeBuffer(n * sizeof(cl_int));
  const cl_int v = 1;
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(k, 0, sizeof(cl_mem), in(m)));
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(k, 1, sizeof v, &v));
  EXPECT_CL(CL_INVALID_WORK_DIMENSION,
            khr_->clCommandNDRangeKernelKHR(cb, nullptr, nullptr, k, 0, nullptr, &n, nullptr, 0,
                                            nullptr, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_KERNEL,
            khr_->clCommandNDRangeKernelKHR(cb, nullptr, nullptr, nullptr, 1, nullptr, &n, nullptr,
                                            0, nullptr, nullptr, nullptr));
  const size_t local = 5;
  EXPECT_CL(CL_INVALID_WORK_GROUP_SIZE,
            khr_->clCommandNDRangeKernelKHR(cb, nullptr, nullptr, k, 1, nullptr, &n, &local, 0,
                                            nullptr, nullptr, nullptr));
  const cl_command_properties_khr unknown[] = {0x7777, 0, 0};
  EXPECT_CL(CL_INVALID_VALUE,
            khr_->clCommandNDRangeKernelKHR(cb, nullptr, unknown, k, 1, nullptr, &n, nullptr, 0,
                                            nullptr, nullptr, nullptr));
  // Every field the device reports is updatable, exec info (SVM pointers) included.
  const cl_command_properties_khr exec_info[] = {CL_MUTABLE_DISPATCH_UPDATABLE_FIELDS_KHR,
                                                 CL_MUTABLE_DISPATCH_EXEC_INFO_KHR, 0};
  EXPECT_CL(CL_SUCCESS, khr_->clCommandNDRangeKernelKHR(cb, nullptr, exec_info, k, 1, nullptr, &n,
                                                        nullptr, 0, nullptr, nullptr, nullptr));
  const cl_command_properties_khr asserts[] = {
      CL_MUTABLE_DISPATCH_ASSERTS_KHR, CL_MUTABLE_DISPATCH_ASSERT_NO_ADDITIONAL_WORK_GROUPS_KHR, 0};
  EXPECT_CL(CL_INVALID_VALUE,
            khr_->clCommandNDRangeKernelKHR(cb, nullptr, asserts, k, 1, nullptr, &n, nullptr, 0,
                                            nullptr, nullptr, nullptr));
  Context other = makeOtherContext(device_);
  cl_int err = CL_SUCCESS;
  Program p(clCreateProgramWithSource(other, 1, &kSource, nullptr, &err));
  ASSERT_CL(CL_SUCCESS, clBuildProgram(p, 1, &device_, nullptr, nullptr, nullptr));
  Kernel foreign(clCreateKernel(p, "add", &err));
  ASSERT_ERR(CL_SUCCESS, err);
  EXPECT_CL(CL_INVALID_CONTEXT,
            khr_->clCommandNDRangeKernelKHR(cb, nullptr, nullptr, foreign, 1, nullptr, &n, nullptr,
                                            0, nullptr, nullptr, nullptr));
}

// ---- Enqueueing ----

TEST_F(CommandBufferTest, EnqueueErrors) {
  CommandBuffer cb = create();
  ASSERT_CL(CL_SUCCESS, khr_->clFinalizeCommandBufferKHR(cb));
  cl_command_queue q = queue_.get();
  EXPECT_CL(CL_INVALID_COMMAND_BUFFER_KHR,
            khr_->clEnqueueCommandBufferKHR(0, nullptr, nullptr, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE, khr_->clEnqueueCommandBufferKHR(1, nullptr, cb, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE, khr_->clEnqueueCommandBufferKHR(0, &q, cb, 0, nullptr, nullptr));
  cl_command_queue two[] = {q, q};
  EXPECT_CL(CL_INVALID_VALUE, khr_->clEnqueueCommandBufferKHR(2, two, cb, 0, nullptr, nullptr));
  cl_command_queue bad = reinterpret_cast<cl_command_queue>(context_.get());
  EXPECT_CL(CL_INVALID_COMMAND_QUEUE,
            khr_->clEnqueueCommandBufferKHR(1, &bad, cb, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_EVENT_WAIT_LIST,
            khr_->clEnqueueCommandBufferKHR(0, nullptr, cb, 1, nullptr, nullptr));
  Context other = makeOtherContext(device_);
  cl_int err = CL_SUCCESS;
  Event foreign(clCreateUserEvent(other, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  EXPECT_CL(CL_INVALID_CONTEXT,
            khr_->clEnqueueCommandBufferKHR(0, nullptr, cb, 1, in(foreign), nullptr));
  Queue other_queue(clCreateCommandQueueWithProperties(other, device_, nullptr, &err));
  cl_command_queue oq = other_queue.get();
  EXPECT_CL(CL_INVALID_CONTEXT, khr_->clEnqueueCommandBufferKHR(1, &oq, cb, 0, nullptr, nullptr));
  // A compatible substitute queue (same device and context) is fine.
  Queue substitute = makeQueue(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  cl_command_queue sq = substitute.get();
  EXPECT_CL(CL_SUCCESS, khr_->clEnqueueCommandBufferKHR(1, &sq, cb, 0, nullptr, nullptr));
  EXPECT_CL(CL_SUCCESS, clFinish(sq));
}

TEST_F(CommandBufferTest, EventWaitsForTheWaitListAndNamesTheCommandBuffer) {
  const size_t n = 256;
  std::vector<cl_int> host(n);
  std::iota(host.begin(), host.end(), 0);
  Mem src = ints(host), dst = makeBuffer(n * sizeof(cl_int));
  CommandBuffer cb = create();
  ASSERT_CL(CL_SUCCESS,
            khr_->clCommandCopyBufferKHR(cb, nullptr, nullptr, src, dst, 0, 0, n * sizeof(cl_int),
                                         0, nullptr, nullptr, nullptr));
  ASSERT_CL(CL_SUCCESS, khr_->clFinalizeCommandBufferKHR(cb));
  Event gate = makeUserEvent();
  Event done;
  ASSERT_CL(CL_SUCCESS, khr_->clEnqueueCommandBufferKHR(0, nullptr, cb, 1, in(gate), done.out()));
  EXPECT_EQ(eventInfo<cl_command_type>(done, CL_EVENT_COMMAND_TYPE),
            cl_command_type(CL_COMMAND_COMMAND_BUFFER_KHR));
  EXPECT_EQ(eventInfo<cl_command_queue>(done, CL_EVENT_COMMAND_QUEUE), queue_.get());
  EXPECT_GT(eventStatus(done), CL_COMPLETE);  // still waiting for the gate
  ASSERT_CL(CL_SUCCESS, clSetUserEventStatus(gate, CL_COMPLETE));
  ASSERT_CL(CL_SUCCESS, clWaitForEvents(1, in(done)));
  EXPECT_EQ(readInts(dst, n), host);
}

// Many enqueues of one buffer, the input changing in between: every replay reads current data.
TEST_F(CommandBufferTest, ReplaysSeeTheDataOfTheirTime) {
  const size_t n = 1024;
  Mem src = makeBuffer(n * sizeof(cl_int)), mid = makeBuffer(n * sizeof(cl_int)),
      dst = makeBuffer(n * sizeof(cl_int));
  CommandBuffer cb = create();
  cl_sync_point_khr copied = 0;
  ASSERT_CL(CL_SUCCESS,
            khr_->clCommandCopyBufferKHR(cb, nullptr, nullptr, src, mid, 0, 0, n * sizeof(cl_int),
                                         0, nullptr, &copied, nullptr));
  // Rect copy of the whole thing as 32 rows of 32 ints.
  const size_t origin[3] = {0, 0, 0}, region[3] = {32 * sizeof(cl_int), 32, 1};
  ASSERT_CL(CL_SUCCESS,
            khr_->clCommandCopyBufferRectKHR(cb, nullptr, nullptr, mid, dst, origin, origin, region,
                                             0, 0, 0, 0, 1, &copied, nullptr, nullptr));
  ASSERT_CL(CL_SUCCESS, khr_->clFinalizeCommandBufferKHR(cb));
  for (int round = 0; round < 20; ++round) {
    std::vector<cl_int> host(n);
    std::iota(host.begin(), host.end(), round * 1000);
    write(src, host.data(), n * sizeof(cl_int));
    ASSERT_CL(CL_SUCCESS, enqueue(cb));
    ASSERT_EQ(readInts(dst, n), host) << "round " << round;
  }
}

TEST_F(CommandBufferTest, KernelArgumentsAreTakenAtRecording) {
  SKIP_IF_KERNELS_COMPUTE_NOTHING(device_);
  const size_t n = 64;
  Mem m = ints(std::vector<cl_int>(n, 0));
  Kernel k = kernel("add");
  cl_int v = 3;
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(k, 0, sizeof(cl_mem), in(m)));
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(k, 1, sizeof v, &v));
  CommandBuffer cb = create();
  ASSERT_CL(CL_SUCCESS, khr_->clCommandNDRangeKernelKHR(cb, nullptr, nullptr, k, 1, nullptr, &n,
                                                        nullptr, 0, nullptr, nullptr, nullptr));
  ASSERT_CL(CL_SUCCESS, khr_->clFinalizeCommandBufferKHR(cb));
  v = 100;  // later settings do not change the recorded command
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(k, 1, sizeof v, &v));
  for (int i = 0; i < 5; ++i) ASSERT_CL(CL_SUCCESS, enqueue(cb));
  EXPECT_EQ(readInts(m, n), std::vector<cl_int>(n, 15));
}

// An out-of-order queue: only sync points and barriers order the recorded commands.
TEST_F(CommandBufferTest, SyncPointsAndBarriersOrderAnOutOfOrderQueue) {
  const size_t bytes = 1 << 20;
  Queue ooo = makeQueue(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  CommandBuffer cb = create(nullptr, ooo);
  Mem a = makeBuffer(bytes), b = makeBuffer(bytes), c = makeBuffer(bytes), d = makeBuffer(bytes);
  const cl_uchar one = 1, two = 2;
  cl_sync_point_khr filled = 0, copied = 0;
  ASSERT_CL(CL_SUCCESS, khr_->clCommandFillBufferKHR(cb, ooo, nullptr, a, &one, 1, 0, bytes, 0,
                                                     nullptr, &filled, nullptr));
  ASSERT_CL(CL_SUCCESS, khr_->clCommandCopyBufferKHR(cb, ooo, nullptr, a, b, 0, 0, bytes, 1,
                                                     &filled, &copied, nullptr));
  ASSERT_CL(CL_SUCCESS, khr_->clCommandFillBufferKHR(cb, ooo, nullptr, c, &two, 1, 0, bytes, 0,
                                                     nullptr, nullptr, nullptr));
  // Waits for everything before it; the copy after it sees b and c complete.
  ASSERT_CL(CL_SUCCESS,
            khr_->clCommandBarrierWithWaitListKHR(cb, ooo, nullptr, 0, nullptr, nullptr, nullptr));
  ASSERT_CL(CL_SUCCESS, khr_->clCommandCopyBufferKHR(cb, ooo, nullptr, b, d, 0, 0, bytes / 2, 0,
                                                     nullptr, nullptr, nullptr));
  ASSERT_CL(CL_SUCCESS, khr_->clCommandCopyBufferKHR(cb, ooo, nullptr, c, d, 0, bytes / 2,
                                                     bytes / 2, 0, nullptr, nullptr, nullptr));
  ASSERT_CL(CL_SUCCESS, khr_->clFinalizeCommandBufferKHR(cb));
  for (int round = 0; round < 3; ++round) {
    const cl_uchar zero = 0;
    for (cl_mem m : {a.get(), b.get(), c.get(), d.get()})
      ASSERT_CL(CL_SUCCESS,
                clEnqueueFillBuffer(queue_, m, &zero, 1, 0, bytes, 0, nullptr, nullptr));
    ASSERT_CL(CL_SUCCESS, clFinish(queue_));
    Event done;
    ASSERT_CL(CL_SUCCESS, enqueue(cb, done.out()));
    ASSERT_CL(CL_SUCCESS, clWaitForEvents(1, in(done)));
    std::vector<unsigned char> got = read(d, bytes);
    ASSERT_EQ(std::count(got.begin(), got.begin() + bytes / 2, 1), long(bytes / 2));
    ASSERT_EQ(std::count(got.begin() + bytes / 2, got.end(), 2), long(bytes / 2));
  }
}

TEST_F(CommandBufferTest, ReleasedWhileRunningStillCompletes) {
  const size_t bytes = 1 << 20;
  Mem a = makeBuffer(bytes), b = makeBuffer(bytes);
  const cl_uchar seven = 7;
  CommandBuffer cb = create();
  ASSERT_CL(CL_SUCCESS, khr_->clCommandFillBufferKHR(cb, nullptr, nullptr, a, &seven, 1, 0, bytes,
                                                     0, nullptr, nullptr, nullptr));
  ASSERT_CL(CL_SUCCESS, khr_->clCommandCopyBufferKHR(cb, nullptr, nullptr, a, b, 0, 0, bytes, 0,
                                                     nullptr, nullptr, nullptr));
  ASSERT_CL(CL_SUCCESS, khr_->clFinalizeCommandBufferKHR(cb));
  Event gate = makeUserEvent();
  ASSERT_CL(CL_SUCCESS, khr_->clEnqueueCommandBufferKHR(0, nullptr, cb, 1, in(gate), nullptr));
  ASSERT_CL(CL_SUCCESS, khr_->clReleaseCommandBufferKHR(cb.release()));
  ASSERT_CL(CL_SUCCESS, clSetUserEventStatus(gate, CL_COMPLETE));
  std::vector<unsigned char> got = read(b, bytes);
  EXPECT_EQ(std::count(got.begin(), got.end(), 7), long(bytes));
}

TEST_F(CommandBufferTest, SimultaneousUseRunsInstancesSideBySide) {
  const cl_command_buffer_properties_khr props[] = {CL_COMMAND_BUFFER_FLAGS_KHR,
                                                    CL_COMMAND_BUFFER_SIMULTANEOUS_USE_KHR, 0};
  Queue ooo = makeQueue(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  CommandBuffer cb = create(props, ooo);
  Mem a = makeBuffer(4096);
  const cl_int pattern = 0x01020304;
  ASSERT_CL(CL_SUCCESS, khr_->clCommandFillBufferKHR(cb, nullptr, nullptr, a, &pattern, 4, 0, 4096,
                                                     0, nullptr, nullptr, nullptr));
  ASSERT_CL(CL_SUCCESS, khr_->clFinalizeCommandBufferKHR(cb));
  Event gate = makeUserEvent();
  Event first, second;
  ASSERT_CL(CL_SUCCESS, khr_->clEnqueueCommandBufferKHR(0, nullptr, cb, 1, in(gate), first.out()));
  // The first instance is still waiting: the second does not wait for it.
  ASSERT_CL(CL_SUCCESS, khr_->clEnqueueCommandBufferKHR(0, nullptr, cb, 0, nullptr, second.out()));
  ASSERT_CL(CL_SUCCESS, clWaitForEvents(1, in(second)));
  EXPECT_GT(eventStatus(first), CL_COMPLETE);
  ASSERT_CL(CL_SUCCESS, clSetUserEventStatus(gate, CL_COMPLETE));
  ASSERT_CL(CL_SUCCESS, clWaitForEvents(1, in(first)));
}

TEST_F(CommandBufferTest, ImagesCopiedAndFilled) {
  if (!caps_.images) GTEST_SKIP() << "no image support";
  cl_image_format format{CL_RGBA, CL_UNSIGNED_INT8};
  cl_image_desc desc{};
  desc.image_type = CL_MEM_OBJECT_IMAGE2D;
  desc.image_width = 16;
  desc.image_height = 8;
  cl_int err = CL_SUCCESS;
  Mem src(clCreateImage(context_, CL_MEM_READ_WRITE, &format, &desc, nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  Mem dst(clCreateImage(context_, CL_MEM_READ_WRITE, &format, &desc, nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  const size_t bytes = 16 * 8 * 4;
  Mem out = makeBuffer(bytes), in = ints(std::vector<cl_int>(bytes / 4, 0x05050505));
  CommandBuffer cb = create();
  const size_t origin[3] = {0, 0, 0}, region[3] = {16, 8, 1};
  const cl_uint color[4] = {1, 2, 3, 4};
  cl_sync_point_khr filled = 0, copied = 0, back = 0;
  ASSERT_CL(CL_SUCCESS, khr_->clCommandFillImageKHR(cb, nullptr, nullptr, src, color, origin,
                                                    region, 0, nullptr, &filled, nullptr));
  ASSERT_CL(CL_SUCCESS, khr_->clCommandCopyImageKHR(cb, nullptr, nullptr, src, dst, origin, origin,
                                                    region, 1, &filled, &copied, nullptr));
  ASSERT_CL(CL_SUCCESS, khr_->clCommandCopyImageToBufferKHR(cb, nullptr, nullptr, dst, out, origin,
                                                            region, 0, 1, &copied, &back, nullptr));
  const size_t half[3] = {16, 4, 1};
  ASSERT_CL(CL_SUCCESS,
            khr_->clCommandCopyBufferToImageKHR(cb, nullptr, nullptr, in, src, 0, origin, half, 1,
                                                &back, nullptr, nullptr));
  ASSERT_CL(CL_SUCCESS, khr_->clFinalizeCommandBufferKHR(cb));
  ASSERT_CL(CL_SUCCESS, enqueue(cb));
  std::vector<unsigned char> got = read(out, bytes);
  for (size_t i = 0; i < bytes; ++i) ASSERT_EQ(got[i], i % 4 + 1) << i;
  std::vector<unsigned char> pixels(bytes);
  ASSERT_CL(CL_SUCCESS, clEnqueueReadImage(queue_, src, CL_TRUE, origin, region, 0, 0,
                                           pixels.data(), 0, nullptr, nullptr));
  EXPECT_EQ(pixels[0], 5);
  EXPECT_EQ(pixels[bytes - 1], 4);
}

// ---- Mutable dispatch ----

class MutableDispatch : public CommandBufferTest {
 protected:
  void SetUp() override {
    CommandBufferTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (!hasWord(deviceString(device_, CL_DEVICE_EXTENSIONS),
                 "cl_khr_command_buffer_mutable_dispatch"))
      GTEST_SKIP() << "no cl_khr_command_buffer_mutable_dispatch";
    data_ = ints(std::vector<cl_int>(kN, 0));
    k_ = kernel("add");
    ASSERT_CL(CL_SUCCESS, clSetKernelArg(k_, 0, sizeof(cl_mem), in(data_)));
    const cl_int one = 1;
    ASSERT_CL(CL_SUCCESS, clSetKernelArg(k_, 1, sizeof one, &one));
    cb_ = createMutable();
    const size_t global = kN / 2;
    ASSERT_CL(CL_SUCCESS,
              khr_->clCommandNDRangeKernelKHR(cb_, nullptr, nullptr, k_, 1, nullptr, &global,
                                              nullptr, 0, nullptr, nullptr, &handle_));
    ASSERT_NE(handle_, nullptr);
  }
  cl_int update(const manifold::khr::MutableDispatchConfig& config,
                cl_command_buffer_khr cb = nullptr) {
    const cl_command_buffer_update_type_khr type = CL_STRUCTURE_TYPE_MUTABLE_DISPATCH_CONFIG_KHR;
    const void* configs[] = {&config};
    return khr_->clUpdateMutableCommandsKHR(cb ? cb : cb_.get(), 1, &type, configs);
  }
  manifold::khr::MutableDispatchConfig config() {
    manifold::khr::MutableDispatchConfig c{};
    c.command = handle_;
    return c;
  }

  static constexpr size_t kN = 64;
  Mem data_;
  Kernel k_;
  CommandBuffer cb_;
  cl_mutable_command_khr handle_ = nullptr;
};

TEST_F(MutableDispatch, UpdatesBetweenEnqueuesChangeLaterRunsOnly) {
  SKIP_IF_KERNELS_COMPUTE_NOTHING(device_);
  ASSERT_CL(CL_SUCCESS, khr_->clFinalizeCommandBufferKHR(cb_));
  ASSERT_CL(CL_SUCCESS, enqueue(cb_));  // first half += 1
  // A new value argument, the whole range.
  const cl_int ten = 10;
  cl_mutable_dispatch_arg_khr arg{1, sizeof ten, &ten};
  const size_t global = kN;
  auto c = config();
  c.num_args = 1;
  c.arg_list = &arg;
  c.global_work_size = &global;
  ASSERT_CL(CL_SUCCESS, update(c));
  ASSERT_CL(CL_SUCCESS, enqueue(cb_));  // all += 10
  std::vector<cl_int> want(kN, 10);
  for (size_t i = 0; i < kN / 2; ++i) want[i] = 11;
  EXPECT_EQ(readInts(data_, kN), want);
  // A new buffer argument and an offset: the second half of another buffer.
  Mem other = ints(std::vector<cl_int>(kN, 100));
  cl_mem other_mem = other.get();
  cl_mutable_dispatch_arg_khr buffer_arg{0, sizeof(cl_mem), &other_mem};
  const size_t offset = kN / 2, half = kN / 2;
  c = config();
  c.num_args = 1;
  c.arg_list = &buffer_arg;
  c.global_work_offset = &offset;
  c.global_work_size = &half;
  ASSERT_CL(CL_SUCCESS, update(c));
  ASSERT_CL(CL_SUCCESS, enqueue(cb_));
  std::vector<cl_int> other_want(kN, 100);
  for (size_t i = kN / 2; i < kN; ++i) other_want[i] = 110;
  EXPECT_EQ(readInts(other, kN), other_want);
  EXPECT_EQ(readInts(data_, kN), want);  // untouched now
  // The kernel object itself kept its own settings.
  cl_int err = CL_SUCCESS;
  ASSERT_CL(CL_SUCCESS,
            clEnqueueNDRangeKernel(queue_, k_, 1, nullptr, &global, nullptr, 0, nullptr, nullptr));
  for (cl_int& w : want) w += 1;
  EXPECT_EQ(readInts(data_, kN), want);
  (void)err;
}

TEST_F(MutableDispatch, SvmArgumentsAndExecInfo) {
  cl_device_svm_capabilities caps = 0;
  clGetDeviceInfo(device_, CL_DEVICE_SVM_CAPABILITIES, sizeof caps, &caps, nullptr);
  if (!(caps & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER)) GTEST_SKIP() << "no SVM";
  SKIP_IF_KERNELS_COMPUTE_NOTHING(device_);
  ASSERT_CL(CL_SUCCESS, khr_->clFinalizeCommandBufferKHR(cb_));
  auto* p = static_cast<cl_int*>(clSVMAlloc(context_, CL_MEM_READ_WRITE, kN * sizeof(cl_int), 0));
  ASSERT_NE(p, nullptr);
  const cl_int zero = 0;
  ASSERT_CL(CL_SUCCESS, clEnqueueSVMMemFill(queue_, p, &zero, sizeof zero, kN * sizeof(cl_int), 0,
                                            nullptr, nullptr));
  // The buffer argument becomes an SVM pointer into the middle of the allocation, which is also
  // listed as reached indirectly (exec info).
  cl_mutable_dispatch_arg_khr svm_arg{0, 0, p + 8};
  void* indirect[] = {p};
  cl_mutable_dispatch_exec_info_khr info{CL_KERNEL_EXEC_INFO_SVM_PTRS, sizeof indirect, indirect};
  auto c = config();
  c.num_svm_args = 1;
  c.arg_svm_list = &svm_arg;
  c.num_exec_infos = 1;
  c.exec_info_list = &info;
  ASSERT_CL(CL_SUCCESS, update(c));
  ASSERT_CL(CL_SUCCESS, enqueue(cb_));
  ASSERT_CL(CL_SUCCESS, enqueue(cb_));
  ASSERT_CL(CL_SUCCESS, clEnqueueSVMMap(queue_, CL_TRUE, CL_MAP_READ, p, kN * sizeof(cl_int), 0,
                                        nullptr, nullptr));
  for (size_t i = 0; i < kN; ++i) EXPECT_EQ(p[i], i >= 8 && i < 8 + kN / 2 ? 2 : 0) << i;
  ASSERT_CL(CL_SUCCESS, clEnqueueSVMUnmap(queue_, p, 0, nullptr, nullptr));
  // A pointer inside the SVM range that is no live allocation is refused.
  int on_stack = 0;
  cl_mutable_dispatch_arg_khr host_arg{0, 0, &on_stack};
  c = config();
  c.num_svm_args = 1;
  c.arg_svm_list = &host_arg;
  EXPECT_CL(CL_SUCCESS, update(c));  // a host pointer is the CPU's fine-grain system SVM
  cl_mutable_dispatch_arg_khr outside{0, 0, p + kN * 4096};
  c.arg_svm_list = &outside;
  EXPECT_CL(CL_INVALID_ARG_VALUE, update(c));
  ASSERT_CL(CL_SUCCESS, clFinish(queue_));
  cb_ = CommandBuffer();  // the recorded launch held the allocation
  clSVMFree(context_, p);
  EXPECT_EQ(readInts(data_, kN), std::vector<cl_int>(kN, 0));
}

TEST_F(MutableDispatch, ArgumentsSetAfterFinalize) {
  Kernel k = kernel("add");
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(k, 0, sizeof(cl_mem), in(data_)));
  CommandBuffer cb = createMutable();
  const size_t global = kN;
  // Without the ARGUMENTS property the unset argument is an error.
  EXPECT_CL(CL_INVALID_KERNEL_ARGS,
            khr_->clCommandNDRangeKernelKHR(cb, nullptr, nullptr, k, 1, nullptr, &global, nullptr,
                                            0, nullptr, nullptr, nullptr));
  const cl_command_properties_khr props[] = {CL_MUTABLE_DISPATCH_UPDATABLE_FIELDS_KHR,
                                             CL_MUTABLE_DISPATCH_ARGUMENTS_KHR, 0};
  cl_mutable_command_khr handle = nullptr;
  ASSERT_CL(CL_SUCCESS, khr_->clCommandNDRangeKernelKHR(cb, nullptr, props, k, 1, nullptr, &global,
                                                        nullptr, 0, nullptr, nullptr, &handle));
  ASSERT_CL(CL_SUCCESS, khr_->clFinalizeCommandBufferKHR(cb));
  EXPECT_EQ(info<cl_command_buffer_state_khr>(cb, CL_COMMAND_BUFFER_STATE_KHR),
            cl_command_buffer_state_khr(CL_COMMAND_BUFFER_STATE_FINALIZED_KHR));
  EXPECT_CL(CL_INVALID_OPERATION, enqueue(cb));
  const cl_int five = 5;
  cl_mutable_dispatch_arg_khr arg{1, sizeof five, &five};
  auto c = config();
  c.command = handle;
  c.num_args = 1;
  c.arg_list = &arg;
  ASSERT_CL(CL_SUCCESS, update(c, cb));
  EXPECT_EQ(info<cl_command_buffer_state_khr>(cb, CL_COMMAND_BUFFER_STATE_KHR),
            cl_command_buffer_state_khr(CL_COMMAND_BUFFER_STATE_EXECUTABLE_KHR));
  ASSERT_CL(CL_SUCCESS, enqueue(cb));
  ASSERT_CL(CL_SUCCESS, clFinish(queue_));
  if (!kernelsComputeNothing(device_)) {
    EXPECT_EQ(readInts(data_, kN), std::vector<cl_int>(kN, 5));
  }
}

TEST_F(MutableDispatch, QueriesOfTheMutableCommand) {
  auto get = [&](cl_mutable_command_info_khr name, size_t size, void* value) {
    size_t ret = 0;
    EXPECT_CL(CL_SUCCESS, khr_->clGetMutableCommandInfoKHR(handle_, name, size, value, &ret));
    return ret;
  };
  cl_command_queue q = nullptr;
  get(CL_MUTABLE_COMMAND_COMMAND_QUEUE_KHR, sizeof q, &q);
  EXPECT_EQ(q, queue_.get());
  cl_command_buffer_khr owner = nullptr;
  get(CL_MUTABLE_COMMAND_COMMAND_BUFFER_KHR, sizeof owner, &owner);
  EXPECT_EQ(owner, cb_.get());
  cl_command_type type = 0;
  get(CL_MUTABLE_COMMAND_COMMAND_TYPE_KHR, sizeof type, &type);
  EXPECT_EQ(type, cl_command_type(CL_COMMAND_NDRANGE_KERNEL));
  EXPECT_EQ(get(CL_MUTABLE_COMMAND_PROPERTIES_ARRAY_KHR, 0, nullptr), 0u);
  cl_kernel kernel = nullptr;
  get(CL_MUTABLE_DISPATCH_KERNEL_KHR, sizeof kernel, &kernel);
  EXPECT_EQ(kernel, k_.get());
  cl_uint dims = 0;
  get(CL_MUTABLE_DISPATCH_DIMENSIONS_KHR, sizeof dims, &dims);
  EXPECT_EQ(dims, 1u);
  size_t size = 0;
  EXPECT_EQ(get(CL_MUTABLE_DISPATCH_GLOBAL_WORK_SIZE_KHR, sizeof size, &size), sizeof size);
  EXPECT_EQ(size, kN / 2);
  get(CL_MUTABLE_DISPATCH_GLOBAL_WORK_OFFSET_KHR, sizeof size, &size);
  EXPECT_EQ(size, 0u);
  get(CL_MUTABLE_DISPATCH_LOCAL_WORK_SIZE_KHR, sizeof size, &size);
  EXPECT_EQ(size, 0u);  // not set
  EXPECT_CL(CL_INVALID_VALUE,
            khr_->clGetMutableCommandInfoKHR(handle_, 0x7777, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_MUTABLE_COMMAND_KHR,
            khr_->clGetMutableCommandInfoKHR(nullptr, CL_MUTABLE_DISPATCH_KERNEL_KHR, 0, nullptr,
                                             nullptr));
  // After an update the queries answer the new values.
  ASSERT_CL(CL_SUCCESS, khr_->clFinalizeCommandBufferKHR(cb_));
  const size_t global = 8;
  auto c = config();
  c.global_work_size = &global;
  ASSERT_CL(CL_SUCCESS, update(c));
  get(CL_MUTABLE_DISPATCH_GLOBAL_WORK_SIZE_KHR, sizeof size, &size);
  EXPECT_EQ(size, 8u);
}

TEST_F(MutableDispatch, UpdateErrors) {
  const cl_command_buffer_update_type_khr type = CL_STRUCTURE_TYPE_MUTABLE_DISPATCH_CONFIG_KHR;
  auto c = config();
  const void* configs[] = {&c};
  // Not finalized yet.
  EXPECT_CL(CL_INVALID_OPERATION, khr_->clUpdateMutableCommandsKHR(cb_, 1, &type, configs));
  ASSERT_CL(CL_SUCCESS, khr_->clFinalizeCommandBufferKHR(cb_));
  EXPECT_CL(CL_SUCCESS, khr_->clUpdateMutableCommandsKHR(cb_, 1, &type, configs));
  EXPECT_CL(CL_SUCCESS, khr_->clUpdateMutableCommandsKHR(cb_, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE, khr_->clUpdateMutableCommandsKHR(cb_, 1, nullptr, configs));
  EXPECT_CL(CL_INVALID_VALUE, khr_->clUpdateMutableCommandsKHR(cb_, 1, &type, nullptr));
  EXPECT_CL(CL_INVALID_VALUE, khr_->clUpdateMutableCommandsKHR(cb_, 0, &type, nullptr));
  const cl_command_buffer_update_type_khr unknown = 77;
  EXPECT_CL(CL_INVALID_VALUE, khr_->clUpdateMutableCommandsKHR(cb_, 1, &unknown, configs));
  const void* null_config[] = {nullptr};
  EXPECT_CL(CL_INVALID_VALUE, khr_->clUpdateMutableCommandsKHR(cb_, 1, &type, null_config));
  EXPECT_CL(CL_INVALID_COMMAND_BUFFER_KHR,
            khr_->clUpdateMutableCommandsKHR(nullptr, 1, &type, configs));
  // The handle must be a mutable command of this buffer.
  auto bad = config();
  bad.command = nullptr;
  EXPECT_CL(CL_INVALID_MUTABLE_COMMAND_KHR, update(bad));
  // work_dim other than the recorded one.
  bad = config();
  bad.work_dim = 2;
  EXPECT_CL(CL_INVALID_OPERATION, update(bad));
  // List and count disagree.
  bad = config();
  bad.num_args = 1;
  EXPECT_CL(CL_INVALID_VALUE, update(bad));
  // clSetKernelArg's errors.
  const cl_int v = 0;
  cl_mutable_dispatch_arg_khr wrong_index{9, sizeof v, &v};
  bad = config();
  bad.num_args = 1;
  bad.arg_list = &wrong_index;
  EXPECT_CL(CL_INVALID_ARG_INDEX, update(bad));
  cl_mutable_dispatch_arg_khr wrong_size{1, 2, &v};
  bad.arg_list = &wrong_size;
  EXPECT_CL(CL_INVALID_ARG_SIZE, update(bad));
  // clEnqueueNDRangeKernel's: a local size of 0.
  const size_t zero_local = 0;
  bad = config();
  bad.local_work_size = &zero_local;
  EXPECT_CL(CL_INVALID_WORK_GROUP_SIZE, update(bad));
  // A local size that does not divide the global size: refused by uniform work-groups, or
  // (non-uniform allowed) as a change of uniformity.
  const size_t odd_local = 5;
  bad.local_work_size = &odd_local;
  const cl_int odd = update(bad);
  EXPECT_TRUE(odd == CL_INVALID_WORK_GROUP_SIZE || odd == CL_INVALID_OPERATION) << errorName(odd);
  // Nothing of a failed call is kept: a good config followed by a bad one.
  const size_t eight = 8;
  auto good = config();
  good.global_work_size = &eight;
  auto later_bad = config();
  later_bad.work_dim = 3;
  const void* both[] = {&good, &later_bad};
  const cl_command_buffer_update_type_khr types[] = {type, type};
  EXPECT_CL(CL_INVALID_OPERATION, khr_->clUpdateMutableCommandsKHR(cb_, 2, types, both));
  size_t size = 0;
  ASSERT_CL(CL_SUCCESS,
            khr_->clGetMutableCommandInfoKHR(handle_, CL_MUTABLE_DISPATCH_GLOBAL_WORK_SIZE_KHR,
                                             sizeof size, &size, nullptr));
  EXPECT_EQ(size, kN / 2);
}

TEST_F(MutableDispatch, FieldsNotRecordedAsMutableAndImmutableBuffers) {
  // Only the global size may change for this command.
  const cl_command_properties_khr props[] = {CL_MUTABLE_DISPATCH_UPDATABLE_FIELDS_KHR,
                                             CL_MUTABLE_DISPATCH_GLOBAL_SIZE_KHR, 0};
  const size_t global = kN;
  cl_mutable_command_khr limited = nullptr;
  ASSERT_CL(CL_SUCCESS,
            khr_->clCommandNDRangeKernelKHR(cb_, nullptr, props, k_, 1, nullptr, &global, nullptr,
                                            0, nullptr, nullptr, &limited));
  ASSERT_CL(CL_SUCCESS, khr_->clFinalizeCommandBufferKHR(cb_));
  size_t size = 0;
  ASSERT_CL(CL_SUCCESS, khr_->clGetMutableCommandInfoKHR(
                            limited, CL_MUTABLE_COMMAND_PROPERTIES_ARRAY_KHR, 0, nullptr, &size));
  EXPECT_EQ(size, sizeof props);
  auto c = config();
  c.command = limited;
  const size_t offset = 1;
  c.global_work_offset = &offset;
  EXPECT_CL(CL_INVALID_OPERATION, update(c));
  c = config();
  c.command = limited;
  const cl_int v = 0;
  cl_mutable_dispatch_arg_khr arg{1, sizeof v, &v};
  c.num_args = 1;
  c.arg_list = &arg;
  EXPECT_CL(CL_INVALID_OPERATION, update(c));
  c = config();
  c.command = limited;
  c.global_work_size = &global;
  EXPECT_CL(CL_SUCCESS, update(c));

  // A command buffer without CL_COMMAND_BUFFER_MUTABLE_KHR refuses updates.
  CommandBuffer fixed = create();
  cl_mutable_command_khr fixed_handle = nullptr;
  ASSERT_CL(CL_SUCCESS,
            khr_->clCommandNDRangeKernelKHR(fixed, nullptr, nullptr, k_, 1, nullptr, &global,
                                            nullptr, 0, nullptr, nullptr, &fixed_handle));
  ASSERT_CL(CL_SUCCESS, khr_->clFinalizeCommandBufferKHR(fixed));
  c = config();
  c.command = fixed_handle;
  EXPECT_CL(CL_INVALID_OPERATION, update(c, fixed));
  // A handle of another command buffer.
  c = config();
  c.command = fixed_handle;
  EXPECT_CL(CL_INVALID_MUTABLE_COMMAND_KHR, update(c));
}

// ---- Several devices: the CPU and emulated GPUs ----

class MultiDeviceCommandBuffer : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(kEmulated);
    std::string why;
    platform_ = findPlatform(&why);
    if (!platform_) GTEST_SKIP() << why;
    cl_uint n = 0;
    ASSERT_CL(CL_SUCCESS, clGetDeviceIDs(platform_, CL_DEVICE_TYPE_ALL, 0, nullptr, &n));
    devices_.resize(n);
    ASSERT_CL(CL_SUCCESS,
              clGetDeviceIDs(platform_, CL_DEVICE_TYPE_ALL, n, devices_.data(), nullptr));
    if (devices_.size() < 2) GTEST_SKIP() << "needs two devices";
    khr_ = std::make_unique<Khr>(platform_);
    if (!hasWord(platformString(platform_, CL_PLATFORM_EXTENSIONS),
                 "cl_khr_command_buffer_multi_device"))
      GTEST_SKIP() << "no cl_khr_command_buffer_multi_device";
    cl_int err = CL_SUCCESS;
    context_ = Context(clCreateContext(nullptr, n, devices_.data(), nullptr, nullptr, &err));
    ASSERT_ERR(CL_SUCCESS, err);
    for (cl_device_id d : devices_) {
      queues_.emplace_back(clCreateCommandQueueWithProperties(context_, d, nullptr, &err));
      ASSERT_ERR(CL_SUCCESS, err);
    }
    program_ = Program(clCreateProgramWithSource(context_, 1, &kSource, nullptr, &err));
    ASSERT_ERR(CL_SUCCESS, err);
    ASSERT_CL(CL_SUCCESS, clBuildProgram(program_, 0, nullptr, nullptr, nullptr, nullptr));
  }
  bool aDeviceComputesNothing() const {
    return std::any_of(devices_.begin(), devices_.end(), kernelsComputeNothing);
  }
  Kernel kernel(const char* name) {
    cl_int err = CL_SUCCESS;
    Kernel k(clCreateKernel(program_, name, &err));
    EXPECT_ERR(CL_SUCCESS, err);
    return k;
  }
  Mem buffer(size_t bytes) {
    cl_int err = CL_SUCCESS;
    Mem m(clCreateBuffer(context_, CL_MEM_READ_WRITE, bytes, nullptr, &err));
    EXPECT_ERR(CL_SUCCESS, err);
    return m;
  }
  // CL_COMMAND_BUFFER_NUM_QUEUES_KHR
  cl_uint info(cl_command_buffer_khr cb) {
    cl_uint n = 0;
    EXPECT_CL(CL_SUCCESS, khr_->clGetCommandBufferInfoKHR(cb, CL_COMMAND_BUFFER_NUM_QUEUES_KHR,
                                                          sizeof n, &n, nullptr));
    return n;
  }

  cl_platform_id platform_ = nullptr;
  std::vector<cl_device_id> devices_;
  Context context_;
  std::vector<Queue> queues_;
  Program program_;
  std::unique_ptr<Khr> khr_;
};

// A chain through every device: device i adds i+1 to the previous device's output. Sync points
// order it across devices; the input changes between enqueues.
TEST_F(MultiDeviceCommandBuffer, SyncPointsChainEveryDeviceAcrossEnqueues) {
  if (aDeviceComputesNothing()) GTEST_SKIP() << "a device's kernels compute nothing";
  const size_t n = 4096;
  std::vector<cl_command_queue> qs;
  for (const Queue& q : queues_) qs.push_back(q.get());
  cl_int err = CL_SUCCESS;
  CommandBuffer cb(khr_.get(), khr_->clCreateCommandBufferKHR(static_cast<cl_uint>(qs.size()),
                                                              qs.data(), nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  EXPECT_EQ(
      khr_->clCommandBarrierWithWaitListKHR(cb, nullptr, nullptr, 0, nullptr, nullptr, nullptr),
      CL_INVALID_COMMAND_QUEUE);  // several queues: each command names one
  std::vector<Mem> stages;
  for (size_t i = 0; i <= qs.size(); ++i) stages.push_back(buffer(n * sizeof(cl_int)));
  std::vector<Kernel> kernels;
  cl_sync_point_khr previous = 0;
  for (size_t i = 0; i < qs.size(); ++i) {
    kernels.push_back(kernel("copy_plus"));
    Kernel& k = kernels.back();
    const cl_int add = static_cast<cl_int>(i + 1);
    ASSERT_CL(CL_SUCCESS, clSetKernelArg(k, 0, sizeof(cl_mem), in(stages[i])));
    ASSERT_CL(CL_SUCCESS, clSetKernelArg(k, 1, sizeof(cl_mem), in(stages[i + 1])));
    ASSERT_CL(CL_SUCCESS, clSetKernelArg(k, 2, sizeof add, &add));
    cl_sync_point_khr self = 0;
    ASSERT_CL(CL_SUCCESS,
              khr_->clCommandNDRangeKernelKHR(cb, qs[i], nullptr, k, 1, nullptr, &n, nullptr,
                                              i ? 1 : 0, i ? &previous : nullptr, &self, nullptr));
    previous = self;
  }
  ASSERT_CL(CL_SUCCESS, khr_->clFinalizeCommandBufferKHR(cb));
  const cl_int total = static_cast<cl_int>(qs.size() * (qs.size() + 1) / 2);
  for (int round = 0; round < 4; ++round) {
    std::vector<cl_int> host(n);
    std::iota(host.begin(), host.end(), round * 7);
    ASSERT_CL(CL_SUCCESS, clEnqueueWriteBuffer(qs[0], stages[0], CL_TRUE, 0, n * sizeof(cl_int),
                                               host.data(), 0, nullptr, nullptr));
    Event done;
    ASSERT_CL(CL_SUCCESS, khr_->clEnqueueCommandBufferKHR(0, nullptr, cb, 0, nullptr, done.out()));
    std::vector<cl_int> got(n);
    ASSERT_CL(CL_SUCCESS,
              clEnqueueReadBuffer(qs.back(), stages.back(), CL_TRUE, 0, n * sizeof(cl_int),
                                  got.data(), 1, in(done), nullptr));
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(got[i], host[i] + total) << "round " << round;
  }

  // Remapped: every command on the first queue's device (explicit), then automatically.
  std::vector<cl_command_queue> first(qs.size(), qs[0]);
  CommandBuffer on_first(
      khr_.get(), khr_->clRemapCommandBufferKHR(cb, CL_FALSE, static_cast<cl_uint>(qs.size()),
                                                first.data(), 0, nullptr, nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  EXPECT_EQ(khr_->clEnqueueCommandBufferKHR(0, nullptr, on_first, 0, nullptr, nullptr), CL_SUCCESS);
  std::vector<cl_int> got(n);
  ASSERT_CL(CL_SUCCESS, clEnqueueReadBuffer(qs[0], stages.back(), CL_TRUE, 0, n * sizeof(cl_int),
                                            got.data(), 0, nullptr, nullptr));
  cl_int base = 0;
  ASSERT_CL(CL_SUCCESS, clEnqueueReadBuffer(qs[0], stages[0], CL_TRUE, 0, sizeof base, &base, 0,
                                            nullptr, nullptr));
  EXPECT_EQ(got[0], base + total);
  CommandBuffer automatic(khr_.get(), khr_->clRemapCommandBufferKHR(cb, CL_TRUE, 1, qs.data(), 0,
                                                                    nullptr, nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  EXPECT_EQ(khr_->clEnqueueCommandBufferKHR(0, nullptr, automatic, 0, nullptr, nullptr),
            CL_SUCCESS);
  EXPECT_CL(CL_SUCCESS, clFinish(qs[0]));
}

TEST_F(MultiDeviceCommandBuffer, EnqueueAndRemapErrors) {
  std::vector<cl_command_queue> qs{queues_[0].get(), queues_[1].get()};
  cl_int err = CL_SUCCESS;
  CommandBuffer cb(khr_.get(), khr_->clCreateCommandBufferKHR(2, qs.data(), nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  Mem a = buffer(64), b = buffer(64);
  cl_sync_point_khr on_first = 0;
  ASSERT_CL(CL_SUCCESS, khr_->clCommandCopyBufferKHR(cb, qs[0], nullptr, a, b, 0, 0, 64, 0, nullptr,
                                                     &on_first, nullptr));
  ASSERT_CL(CL_SUCCESS, khr_->clCommandCopyBufferKHR(cb, qs[1], nullptr, b, a, 0, 0, 64, 1,
                                                     &on_first, nullptr, nullptr));
  ASSERT_CL(CL_SUCCESS, khr_->clFinalizeCommandBufferKHR(cb));
  EXPECT_EQ(info(cb), 2u);
  // Each queue of an enqueue must match the device at its index.
  std::vector<cl_command_queue> swapped{qs[1], qs[0]};
  EXPECT_CL(CL_INVALID_DEVICE,
            khr_->clEnqueueCommandBufferKHR(2, swapped.data(), cb, 0, nullptr, nullptr));
  EXPECT_CL(CL_SUCCESS, khr_->clEnqueueCommandBufferKHR(2, qs.data(), cb, 0, nullptr, nullptr));
  EXPECT_CL(CL_SUCCESS, clFinish(qs[0]));
  EXPECT_CL(CL_SUCCESS, clFinish(qs[1]));

  cl_command_buffer_khr none = nullptr;
  none = khr_->clRemapCommandBufferKHR(cb, CL_FALSE, 1, qs.data(), 0, nullptr, nullptr, &err);
  EXPECT_EQ(none, nullptr);
  EXPECT_ERR(CL_INVALID_VALUE, err);  // explicit remap: one queue per queue
  none = khr_->clRemapCommandBufferKHR(cb, CL_FALSE, 0, nullptr, 0, nullptr, nullptr, &err);
  EXPECT_ERR(CL_INVALID_VALUE, err);
  cl_mutable_command_khr handle_ret = nullptr;
  none = khr_->clRemapCommandBufferKHR(cb, CL_FALSE, 2, qs.data(), 1, nullptr, &handle_ret, &err);
  EXPECT_ERR(CL_INVALID_VALUE, err);
  none = khr_->clRemapCommandBufferKHR(nullptr, CL_FALSE, 2, qs.data(), 0, nullptr, nullptr, &err);
  EXPECT_ERR(CL_INVALID_COMMAND_BUFFER_KHR, err);
  // Swapped queues are a valid remap: the copy runs its commands on the other devices.
  CommandBuffer remapped(khr_.get(), khr_->clRemapCommandBufferKHR(cb, CL_FALSE, 2, swapped.data(),
                                                                   0, nullptr, nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  EXPECT_EQ(info(remapped), 2u);
  cl_command_buffer_state_khr state = 0;
  ASSERT_CL(CL_SUCCESS, khr_->clGetCommandBufferInfoKHR(remapped, CL_COMMAND_BUFFER_STATE_KHR,
                                                        sizeof state, &state, nullptr));
  EXPECT_EQ(state, cl_command_buffer_state_khr(CL_COMMAND_BUFFER_STATE_EXECUTABLE_KHR));
  EXPECT_CL(CL_SUCCESS, khr_->clEnqueueCommandBufferKHR(0, nullptr, remapped, 0, nullptr, nullptr));
  EXPECT_CL(CL_SUCCESS, clFinish(qs[0]));
  EXPECT_CL(CL_SUCCESS, clFinish(qs[1]));
}

}  // namespace
