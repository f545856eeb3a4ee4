// Remote devices end to end, through the ICD loader: a manifold-server on 127.0.0.1, or in a
// network namespace of its own (started by tests/backends/remote/with_server.sh, which sets
// MANIFOLD_REMOTE and MANIFOLD_REMOTE_TOKEN) serves this machine's CPU; the client sees it as one
// more device, next to its own CPU.
#include <signal.h>

#include "cl_test.h"

namespace {

using namespace cltest;

struct Devices {
  cl_platform_id platform = nullptr;
  cl_device_id remote = nullptr, local = nullptr;
};

// "host:" of the server, as its devices' names begin.
std::string server_prefix() {
  const char* remote = std::getenv("MANIFOLD_REMOTE");
  std::string host = remote ? remote : "127.0.0.1:0";
  return host.substr(0, host.rfind(':') + 1);
}

std::string device_name(cl_device_id d) {
  char name[512] = {};
  clGetDeviceInfo(d, CL_DEVICE_NAME, sizeof name - 1, name, nullptr);
  return name;
}

Devices find_devices() {
  Devices found;
  cl_uint n = 0;
  clGetPlatformIDs(0, nullptr, &n);
  std::vector<cl_platform_id> platforms(n);
  clGetPlatformIDs(n, platforms.data(), nullptr);
  for (cl_platform_id p : platforms) {
    char name[256] = {};
    clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof name - 1, name, nullptr);
    if (std::string(name).find("Manifold") == std::string::npos) continue;
    found.platform = p;
    cl_uint count = 0;
    clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &count);
    std::vector<cl_device_id> devices(count);
    clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, count, devices.data(), nullptr);
    for (cl_device_id d : devices) {
      if (device_name(d).starts_with(server_prefix())) {
        if (!found.remote) found.remote = d;
      } else if (!found.local) {
        found.local = d;
      }
    }
  }
  return found;
}

const char* kAddSource = R"(
kernel void add(global const float* a, global const float* b, global float* c, float k) {
  size_t i = get_global_id(0);
  c[i] = a[i] + b[i] * k;
}
kernel void increment(global int* x) { x[get_global_id(0)] += 1; }
kernel void spin(global int* x, int rounds) {
  int v = x[get_global_id(0)];
  for (int r = 0; r < rounds; ++r) v = v * 1103515245 + 12345;
  x[get_global_id(0)] = v;
}
)";

class RemoteDevices : public ::testing::Test {
 protected:
  void SetUp() override {
    devices_ = find_devices();
    ASSERT_NE(devices_.remote, nullptr) << "no device of the server at " << server_prefix();
  }
  // A context of `devices` with a program of kAddSource built for them.
  void make_context(std::vector<cl_device_id> devices) {
    cl_int err = CL_SUCCESS;
    context_ =
        clCreateContext(nullptr, cl_uint(devices.size()), devices.data(), nullptr, nullptr, &err);
    ASSERT_EQ(err, CL_SUCCESS);
    program_ = clCreateProgramWithSource(context_, 1, &kAddSource, nullptr, &err);
    ASSERT_EQ(err, CL_SUCCESS);
    err = clBuildProgram(program_, 0, nullptr, "", nullptr, nullptr);
    if (err != CL_SUCCESS) {
      char log[8192] = {};
      clGetProgramBuildInfo(program_, devices[0], CL_PROGRAM_BUILD_LOG, sizeof log - 1, log,
                            nullptr);
      FAIL() << "build failed: " << errorName(err) << "\n" << log;
    }
  }
  cl_command_queue queue_on(cl_device_id d, cl_command_queue_properties properties = 0) {
    cl_int err = CL_SUCCESS;
    const cl_queue_properties p[] = {CL_QUEUE_PROPERTIES, properties, 0};
    cl_command_queue q = clCreateCommandQueueWithProperties(context_, d, p, &err);
    EXPECT_EQ(err, CL_SUCCESS);
    queues_.push_back(q);
    return q;
  }
  cl_mem buffer(size_t size, const void* data = nullptr) {
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateBuffer(context_, CL_MEM_READ_WRITE | (data ? CL_MEM_COPY_HOST_PTR : 0), size,
                              const_cast<void*>(data), &err);
    EXPECT_EQ(err, CL_SUCCESS);
    mems_.push_back(m);
    return m;
  }
  cl_kernel kernel(const char* name) {
    cl_int err = CL_SUCCESS;
    cl_kernel k = clCreateKernel(program_, name, &err);
    EXPECT_EQ(err, CL_SUCCESS);
    kernels_.push_back(k);
    return k;
  }
  void TearDown() override {
    for (cl_command_queue q : queues_) clFinish(q), clReleaseCommandQueue(q);
    for (cl_kernel k : kernels_) clReleaseKernel(k);
    for (cl_mem m : mems_) clReleaseMemObject(m);
    if (program_) clReleaseProgram(program_);
    if (context_) clReleaseContext(context_);
  }

  Devices devices_;
  cl_context context_ = nullptr;
  cl_program program_ = nullptr;
  std::vector<cl_command_queue> queues_;
  std::vector<cl_kernel> kernels_;
  std::vector<cl_mem> mems_;
};

TEST_F(RemoteDevices, AreNamedAfterTheirServerAndReportWhatCrossesTheNetwork) {
  EXPECT_TRUE(device_name(devices_.remote).starts_with(server_prefix()));
  cl_bool images = CL_TRUE, available = CL_FALSE;
  clGetDeviceInfo(devices_.remote, CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, nullptr);
  clGetDeviceInfo(devices_.remote, CL_DEVICE_AVAILABLE, sizeof available, &available, nullptr);
  EXPECT_EQ(images, CL_FALSE);
  EXPECT_EQ(available, CL_TRUE);
  cl_device_svm_capabilities svm = 1;
  clGetDeviceInfo(devices_.remote, CL_DEVICE_SVM_CAPABILITIES, sizeof svm, &svm, nullptr);
  EXPECT_EQ(svm, 0u);
  // Without images, every image limit is 0 (CTS api min_max_image_*, consistency_2d_image_*).
  for (cl_device_info param :
       {CL_DEVICE_IMAGE2D_MAX_WIDTH, CL_DEVICE_IMAGE2D_MAX_HEIGHT, CL_DEVICE_IMAGE3D_MAX_WIDTH,
        CL_DEVICE_IMAGE3D_MAX_HEIGHT, CL_DEVICE_IMAGE3D_MAX_DEPTH, CL_DEVICE_IMAGE_MAX_BUFFER_SIZE,
        CL_DEVICE_IMAGE_MAX_ARRAY_SIZE}) {
    size_t value = 1;
    clGetDeviceInfo(devices_.remote, param, sizeof value, &value, nullptr);
    EXPECT_EQ(value, 0u) << "param 0x" << std::hex << param;
  }
  cl_uint pitch = 1;
  clGetDeviceInfo(devices_.remote, CL_DEVICE_IMAGE_PITCH_ALIGNMENT, sizeof pitch, &pitch, nullptr);
  EXPECT_EQ(pitch, 0u);
}

// A command queued behind a running one has not started (CTS events waitlists): the server runs
// a queue's commands in order, so the next one runs only once the one before it has ended.
TEST_F(RemoteDevices, ACommandBehindARunningOneIsNotRunning) {
  make_context({devices_.remote});
  constexpr size_t n = 1024;
  std::vector<int> x(n, 1);
  cl_mem mx = buffer(n * 4, x.data());
  cl_kernel spin = kernel("spin"), inc = kernel("increment");
  const int rounds = 1 << 18;
  clSetKernelArg(spin, 0, sizeof mx, &mx);
  clSetKernelArg(spin, 1, sizeof rounds, &rounds);
  clSetKernelArg(inc, 0, sizeof mx, &mx);
  cl_command_queue q = queue_on(devices_.remote);
  cl_event first = nullptr, second = nullptr;
  ASSERT_EQ(clEnqueueNDRangeKernel(q, spin, 1, nullptr, &n, nullptr, 0, nullptr, &first),
            CL_SUCCESS);
  ASSERT_EQ(clEnqueueNDRangeKernel(q, inc, 1, nullptr, &n, nullptr, 0, nullptr, &second),
            CL_SUCCESS);
  clFlush(q);
  cl_int first_status = CL_COMPLETE, second_status = CL_COMPLETE;
  clGetEventInfo(second, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof second_status, &second_status,
                 nullptr);
  clGetEventInfo(first, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof first_status, &first_status,
                 nullptr);
  if (first_status != CL_COMPLETE) {
    EXPECT_GT(second_status, CL_RUNNING);
  }
  EXPECT_EQ(clWaitForEvents(1, &second), CL_SUCCESS);
  clReleaseEvent(first);
  clReleaseEvent(second);
}

// The server serves this machine's CPU: what the remote device reports is what the local one does,
// but for what does not cross the network.
TEST_F(RemoteDevices, ReportTheServersDeviceInfo) {
  ASSERT_NE(devices_.local, nullptr);
  const cl_device_info same[] = {CL_DEVICE_TYPE,
                                 CL_DEVICE_VENDOR_ID,
                                 CL_DEVICE_MAX_COMPUTE_UNITS,
                                 CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS,
                                 CL_DEVICE_MAX_WORK_ITEM_SIZES,
                                 CL_DEVICE_MAX_WORK_GROUP_SIZE,
                                 CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT,
                                 CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE,
                                 CL_DEVICE_MAX_MEM_ALLOC_SIZE,
                                 CL_DEVICE_GLOBAL_MEM_SIZE,
                                 CL_DEVICE_LOCAL_MEM_SIZE,
                                 CL_DEVICE_MAX_PARAMETER_SIZE,
                                 CL_DEVICE_MEM_BASE_ADDR_ALIGN,
                                 CL_DEVICE_SINGLE_FP_CONFIG,
                                 CL_DEVICE_DOUBLE_FP_CONFIG,
                                 CL_DEVICE_VERSION,
                                 CL_DEVICE_OPENCL_C_VERSION,
                                 CL_DEVICE_PROFILE,
                                 CL_DEVICE_VENDOR,
                                 CL_DRIVER_VERSION,
                                 CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES,
                                 CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS,
                                 CL_DEVICE_MAX_NUM_SUB_GROUPS,
                                 CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT,
                                 CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
                                 CL_DEVICE_IL_VERSION,
                                 CL_DEVICE_QUEUE_ON_HOST_PROPERTIES,
                                 CL_DEVICE_PRINTF_BUFFER_SIZE};
  for (cl_device_info param : same) {
    size_t local_size = 0, remote_size = 0;
    ASSERT_EQ(clGetDeviceInfo(devices_.local, param, 0, nullptr, &local_size), CL_SUCCESS);
    ASSERT_EQ(clGetDeviceInfo(devices_.remote, param, 0, nullptr, &remote_size), CL_SUCCESS);
    std::vector<char> a(local_size), b(remote_size);
    clGetDeviceInfo(devices_.local, param, local_size, a.data(), nullptr);
    clGetDeviceInfo(devices_.remote, param, remote_size, b.data(), nullptr);
    EXPECT_EQ(a, b) << "param 0x" << std::hex << param;
  }
  EXPECT_NE(device_name(devices_.remote).find(device_name(devices_.local)), std::string::npos);
}

TEST_F(RemoteDevices, RunKernelsOnTheServersDevice) {
  make_context({devices_.remote});
  constexpr size_t n = 4096;
  std::vector<float> a(n), b(n), c(n, -1.0f);
  for (size_t i = 0; i < n; ++i) a[i] = float(i), b[i] = float(2 * i);
  cl_mem ma = buffer(n * 4, a.data()), mb = buffer(n * 4, b.data()), mc = buffer(n * 4);
  cl_kernel k = kernel("add");
  const float scale = 0.5f;
  clSetKernelArg(k, 0, sizeof ma, &ma);
  clSetKernelArg(k, 1, sizeof mb, &mb);
  clSetKernelArg(k, 2, sizeof mc, &mc);
  clSetKernelArg(k, 3, sizeof scale, &scale);
  cl_command_queue q = queue_on(devices_.remote);
  ASSERT_EQ(clEnqueueNDRangeKernel(q, k, 1, nullptr, &n, nullptr, 0, nullptr, nullptr), CL_SUCCESS);
  ASSERT_EQ(clEnqueueReadBuffer(q, mc, CL_TRUE, 0, n * 4, c.data(), 0, nullptr, nullptr),
            CL_SUCCESS);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(c[i], a[i] + b[i] * scale) << i;
}

// A kernel's printf output comes back with its Done: it is on the client's standard output by the
// time the kernel's event completes, in the order of the work-items' calls within each group.
TEST_F(RemoteDevices, PrintfOutputAppearsOnTheClient) {
  make_context({devices_.remote});
  const char* source = R"CLC(
kernel void count(int base) {
  printf("remote item %d\n", base + (int)get_global_id(0));
}
)CLC";
  cl_int err = CL_SUCCESS;
  cl_program program = clCreateProgramWithSource(context_, 1, &source, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  ASSERT_EQ(clBuildProgram(program, 1, &devices_.remote, "", nullptr, nullptr), CL_SUCCESS);
  cl_kernel k = clCreateKernel(program, "count", &err);
  ASSERT_EQ(err, CL_SUCCESS);
  cl_command_queue q = queue_on(devices_.remote);
  std::string printed;
  {
    CapturedStdout captured;
    for (int base : {0, 1000}) {
      ASSERT_EQ(clSetKernelArg(k, 0, sizeof base, &base), CL_SUCCESS);
      const size_t global = 16, local = 16;
      cl_event done = nullptr;
      ASSERT_EQ(clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, &local, 0, nullptr, &done),
                CL_SUCCESS);
      ASSERT_EQ(clWaitForEvents(1, &done), CL_SUCCESS);
      clReleaseEvent(done);
    }
    printed = captured.text();
  }
  for (int base : {0, 1000})
    for (int i = 0; i < 16; ++i) {
      const std::string line = "remote item " + std::to_string(base + i) + "\n";
      EXPECT_NE(printed.find(line), std::string::npos) << "missing: " << line << printed;
    }
  clReleaseKernel(k);
  clReleaseProgram(program);
}

TEST_F(RemoteDevices, PipelineManyCommandsInOrder) {
  make_context({devices_.remote});
  constexpr size_t n = 256;
  constexpr int rounds = 500;
  std::vector<int> x(n, 0);
  cl_mem mx = buffer(n * 4, x.data());
  cl_kernel k = kernel("increment");
  clSetKernelArg(k, 0, sizeof mx, &mx);
  cl_command_queue q = queue_on(devices_.remote);
  for (int r = 0; r < rounds; ++r)
    ASSERT_EQ(clEnqueueNDRangeKernel(q, k, 1, nullptr, &n, nullptr, 0, nullptr, nullptr),
              CL_SUCCESS);
  ASSERT_EQ(clEnqueueReadBuffer(q, mx, CL_TRUE, 0, n * 4, x.data(), 0, nullptr, nullptr),
            CL_SUCCESS);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(x[i], rounds) << i;
}

TEST_F(RemoteDevices, ShareBuffersAndEventsWithLocalDevices) {
  ASSERT_NE(devices_.local, nullptr);
  make_context({devices_.local, devices_.remote});
  constexpr size_t n = 1000;
  std::vector<int> x(n, 5);
  cl_mem mx = buffer(n * 4, x.data());
  cl_kernel k = kernel("increment");
  clSetKernelArg(k, 0, sizeof mx, &mx);
  cl_command_queue local = queue_on(devices_.local), remote = queue_on(devices_.remote);
  // Alternating devices: each launch waits for the other device's last one, and the buffer's
  // bytes move between this machine and the server every time.
  cl_event last = nullptr;
  for (int r = 0; r < 10; ++r) {
    cl_event done = nullptr;
    ASSERT_EQ(clEnqueueNDRangeKernel(r % 2 ? local : remote, k, 1, nullptr, &n, nullptr,
                                     last ? 1 : 0, last ? &last : nullptr, &done),
              CL_SUCCESS);
    if (last) clReleaseEvent(last);
    last = done;
  }
  ASSERT_EQ(clEnqueueReadBuffer(local, mx, CL_TRUE, 0, n * 4, x.data(), 1, &last, nullptr),
            CL_SUCCESS);
  clReleaseEvent(last);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(x[i], 15) << i;
}

TEST_F(RemoteDevices, CopyFillAndRectanglesOnTheServer) {
  make_context({devices_.remote});
  cl_command_queue q = queue_on(devices_.remote);
  std::vector<uint8_t> data(64 * 64);
  for (size_t i = 0; i < data.size(); ++i) data[i] = uint8_t(i * 7);
  cl_mem a = buffer(data.size(), data.data()), b = buffer(data.size());
  const uint32_t pattern = 0xA5A5A5A5u;
  ASSERT_EQ(clEnqueueFillBuffer(q, b, &pattern, 4, 0, data.size(), 0, nullptr, nullptr),
            CL_SUCCESS);
  ASSERT_EQ(clEnqueueCopyBuffer(q, a, b, 128, 256, 512, 0, nullptr, nullptr), CL_SUCCESS);
  std::vector<uint8_t> out(data.size());
  ASSERT_EQ(clEnqueueReadBuffer(q, b, CL_TRUE, 0, out.size(), out.data(), 0, nullptr, nullptr),
            CL_SUCCESS);
  for (size_t i = 0; i < out.size(); ++i)
    ASSERT_EQ(out[i], i >= 256 && i < 768 ? data[i - 128] : 0xA5) << i;
  // A 10x5 rectangle at (3, 2) of the 64-byte rows, into a host rectangle of 16-byte rows.
  const size_t buffer_origin[3] = {3, 2, 0}, host_origin[3] = {1, 1, 0}, region[3] = {10, 5, 1};
  std::vector<uint8_t> host(16 * 8, 0);
  ASSERT_EQ(clEnqueueReadBufferRect(q, a, CL_TRUE, buffer_origin, host_origin, region, 64, 0, 16, 0,
                                    host.data(), 0, nullptr, nullptr),
            CL_SUCCESS);
  for (size_t y = 0; y < 5; ++y)
    for (size_t x = 0; x < 10; ++x)
      ASSERT_EQ(host[(y + 1) * 16 + x + 1], data[(y + 2) * 64 + x + 3]) << x << "," << y;
  std::vector<uint8_t> ones(16 * 8, 1);
  ASSERT_EQ(clEnqueueWriteBufferRect(q, a, CL_TRUE, buffer_origin, host_origin, region, 64, 0, 16,
                                     0, ones.data(), 0, nullptr, nullptr),
            CL_SUCCESS);
  ASSERT_EQ(clEnqueueReadBuffer(q, a, CL_TRUE, 0, out.size(), out.data(), 0, nullptr, nullptr),
            CL_SUCCESS);
  for (size_t i = 0; i < out.size(); ++i) {
    const size_t x = i % 64, y = i / 64;
    const bool inside = x >= 3 && x < 13 && y >= 2 && y < 7;
    ASSERT_EQ(out[i], inside ? 1 : data[i]) << i;
  }
}

TEST_F(RemoteDevices, ProfilingTimesAreInTheClientsTimeBase) {
  make_context({devices_.remote});
  cl_command_queue q = queue_on(devices_.remote, CL_QUEUE_PROFILING_ENABLE);
  constexpr size_t n = 1024;
  std::vector<int> x(n, 1);
  cl_mem mx = buffer(n * 4, x.data());
  cl_kernel k = kernel("spin");
  const int rounds = 20000;
  clSetKernelArg(k, 0, sizeof mx, &mx);
  clSetKernelArg(k, 1, sizeof rounds, &rounds);
  cl_event e = nullptr;
  ASSERT_EQ(clEnqueueNDRangeKernel(q, k, 1, nullptr, &n, nullptr, 0, nullptr, &e), CL_SUCCESS);
  ASSERT_EQ(clWaitForEvents(1, &e), CL_SUCCESS);
  cl_ulong queued = 0, submitted = 0, start = 0, end = 0;
  clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_QUEUED, sizeof queued, &queued, nullptr);
  clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_SUBMIT, sizeof submitted, &submitted, nullptr);
  clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof start, &start, nullptr);
  clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr);
  clReleaseEvent(e);
  EXPECT_LE(queued, submitted);
  EXPECT_LE(submitted, start);
  EXPECT_LT(start, end);
}

// Program-scope variables belong to their program object: two programs built from the same
// source (one binary, which the server might load once) keep their own (CTS basic
// progvar_prog_scope_*).
TEST_F(RemoteDevices, ProgramsOfOneBinaryKeepTheirOwnGlobalVariables) {
  cl_int err = CL_SUCCESS;
  context_ = clCreateContext(nullptr, 1, &devices_.remote, nullptr, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  const char* source = R"(
global int counter;
kernel void bump(global int* out) { counter += 1; out[0] = counter; }
)";
  cl_command_queue q = queue_on(devices_.remote);
  cl_mem out = buffer(sizeof(cl_int));
  for (int program_index = 0; program_index < 2; ++program_index) {
    cl_program p = clCreateProgramWithSource(context_, 1, &source, nullptr, &err);
    ASSERT_EQ(err, CL_SUCCESS);
    ASSERT_EQ(clBuildProgram(p, 0, nullptr, "-cl-std=CL3.0", nullptr, nullptr), CL_SUCCESS);
    cl_kernel k = clCreateKernel(p, "bump", &err);
    ASSERT_EQ(err, CL_SUCCESS);
    clSetKernelArg(k, 0, sizeof out, &out);
    const size_t one = 1;
    for (int launch = 1; launch <= 3; ++launch) {
      ASSERT_EQ(clEnqueueNDRangeKernel(q, k, 1, nullptr, &one, nullptr, 0, nullptr, nullptr),
                CL_SUCCESS);
      cl_int value = 0;
      ASSERT_EQ(clEnqueueReadBuffer(q, out, CL_TRUE, 0, sizeof value, &value, 0, nullptr, nullptr),
                CL_SUCCESS);
      EXPECT_EQ(value, launch) << "program " << program_index;
    }
    clReleaseKernel(k);
    clReleaseProgram(p);
  }
}

TEST_F(RemoteDevices, FailBuildsWithTheBuildStatus) {
  cl_int err = CL_SUCCESS;
  context_ = clCreateContext(nullptr, 1, &devices_.remote, nullptr, nullptr, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  const char* bad = "kernel void f(global int* x) { x[0] = undefined_thing; }";
  program_ = clCreateProgramWithSource(context_, 1, &bad, nullptr, &err);
  EXPECT_EQ(clBuildProgram(program_, 0, nullptr, "", nullptr, nullptr), CL_BUILD_PROGRAM_FAILURE);
}

// Run alone (its own ctest entry): the server dies mid-run; the client fails what depended on it
// with CL_DEVICE_NOT_AVAILABLE, never hangs, and its own devices keep working.
TEST_F(RemoteDevices, AServerThatDiesFailsItsCommandsAndLocalDevicesGoOn) {
  const char* pid_text = std::getenv("MANIFOLD_TEST_SERVER_PID");
  if (!pid_text)
    GTEST_SKIP() << "needs MANIFOLD_TEST_SERVER_PID (tests/backends/remote/with_server.sh)";
  ASSERT_NE(devices_.local, nullptr);
  make_context({devices_.local, devices_.remote});
  constexpr size_t n = 4096;
  std::vector<int> x(n, 1);
  cl_mem mx = buffer(n * 4, x.data());
  cl_kernel k = kernel("spin");
  const int rounds = 1 << 30;  // far longer than the test: the server dies first
  clSetKernelArg(k, 0, sizeof mx, &mx);
  clSetKernelArg(k, 1, sizeof rounds, &rounds);
  cl_command_queue remote = queue_on(devices_.remote), local = queue_on(devices_.local);
  cl_event e = nullptr;
  ASSERT_EQ(clEnqueueNDRangeKernel(remote, k, 1, nullptr, &n, nullptr, 0, nullptr, &e), CL_SUCCESS);
  clFlush(remote);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ASSERT_EQ(kill(pid_t(std::atoi(pid_text)), SIGKILL), 0);
  const auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(clWaitForEvents(1, &e), CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
  cl_int status = CL_COMPLETE;
  clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr);
  EXPECT_EQ(status, CL_DEVICE_NOT_AVAILABLE);
  clReleaseEvent(e);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(30));
  cl_bool available = CL_TRUE;
  clGetDeviceInfo(devices_.remote, CL_DEVICE_AVAILABLE, sizeof available, &available, nullptr);
  EXPECT_EQ(available, CL_FALSE);
  // Later commands on the remote device fail at once; the local device still computes.
  ASSERT_EQ(clEnqueueNDRangeKernel(remote, k, 1, nullptr, &n, nullptr, 0, nullptr, &e), CL_SUCCESS);
  EXPECT_EQ(clWaitForEvents(1, &e), CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
  clReleaseEvent(e);
  cl_mem fresh = buffer(n * 4, x.data());
  cl_kernel inc = kernel("increment");
  clSetKernelArg(inc, 0, sizeof fresh, &fresh);
  ASSERT_EQ(clEnqueueNDRangeKernel(local, inc, 1, nullptr, &n, nullptr, 0, nullptr, nullptr),
            CL_SUCCESS);
  std::vector<int> out(n);
  ASSERT_EQ(clEnqueueReadBuffer(local, fresh, CL_TRUE, 0, n * 4, out.data(), 0, nullptr, nullptr),
            CL_SUCCESS);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], 2) << i;
  queues_.erase(std::find(queues_.begin(), queues_.end(), remote));
  clReleaseCommandQueue(remote);
}

// Run with a token other than the server's (MANIFOLD_TEST_EXPECT_REFUSAL): the server lists
// nothing to such a client, and the client's own devices are there as ever.
TEST(RemoteServers, RefuseClientsWithAnotherToken) {
  if (!std::getenv("MANIFOLD_TEST_EXPECT_REFUSAL")) GTEST_SKIP() << "needs another token";
  const Devices found = find_devices();
  EXPECT_EQ(found.remote, nullptr);
  EXPECT_NE(found.local, nullptr);
}

}  // namespace
