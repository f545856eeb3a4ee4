// The kernel corpus's harness (tests/kernels): every device of the platform under test, one
// session (context, queue, helpers) per device, and random inputs. Shared by the corpus's files.
//
// Devices: every device of MANIFOLD_TEST_DEVICE_TYPE (cpu | gpu | all; default all) of the
// platform cl_test.h selects. Each test runs its kernel on each device in turn (SCOPED_TRACE
// names the device on failure).
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "cl_test.h"

namespace corpus {

using namespace cltest;

struct DeviceUnderTest {
  cl_device_id id;
  std::string name;
};

inline std::vector<DeviceUnderTest> devices_under_test(cl_platform_id platform) {
  const std::string type = envOr("MANIFOLD_TEST_DEVICE_TYPE", "all");
  cl_device_type wanted = CL_DEVICE_TYPE_ALL;
  if (type == "cpu") wanted = CL_DEVICE_TYPE_CPU;
  if (type == "gpu") wanted = CL_DEVICE_TYPE_GPU;
  cl_uint count = 0;
  if (clGetDeviceIDs(platform, wanted, 0, nullptr, &count) != CL_SUCCESS || count == 0) return {};
  std::vector<cl_device_id> ids(count);
  clGetDeviceIDs(platform, wanted, count, ids.data(), nullptr);
  std::vector<DeviceUnderTest> out;
  for (cl_device_id id : devicesNamed(ids)) out.push_back({id, deviceString(id, CL_DEVICE_NAME)});
  return out;
}

// One device's context, queue and helpers.
class DeviceSession {
 public:
  explicit DeviceSession(cl_device_id device) : device_(device) {
    cl_int err = CL_SUCCESS;
    context_.reset(clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &err));
    EXPECT_EQ(Err(CL_SUCCESS), Err(err)) << "clCreateContext";
    queue_.reset(clCreateCommandQueueWithProperties(context_, device_, nullptr, &err));
    EXPECT_EQ(Err(CL_SUCCESS), Err(err)) << "clCreateCommandQueueWithProperties";
  }
  bool ok() const { return context_.get() && queue_.get(); }
  bool has_extension(const char* name) const {
    return (" " + deviceString(device_, CL_DEVICE_EXTENSIONS) + " ")
               .find(std::string(" ") + name + " ") != std::string::npos;
  }
  // An OpenCL C 3.0 feature macro the device reports (CL_DEVICE_OPENCL_C_FEATURES).
  bool has_feature(const char* name) const {
    for (const cl_name_version& f :
         infoVector<cl_name_version>(clGetDeviceInfo, device_, CL_DEVICE_OPENCL_C_FEATURES))
      if (std::string(f.name) == name) return true;
    return false;
  }

  // Builds `source`; on failure records the build log and returns an empty program.
  Program build(const char* source, const char* options = "") {
    cl_int err = CL_SUCCESS;
    Program program(clCreateProgramWithSource(context_, 1, &source, nullptr, &err));
    EXPECT_EQ(Err(CL_SUCCESS), Err(err)) << "clCreateProgramWithSource";
    if (!program) return program;
    err = clBuildProgram(program, 1, &device_, options, nullptr, nullptr);
    if (err != CL_SUCCESS) {
      ADD_FAILURE() << "clBuildProgram: " << errorName(err) << "\n" << build_log(program);
      return Program();
    }
    return program;
  }
  std::string build_log(cl_program program) const {
    size_t size = 0;
    clGetProgramBuildInfo(program, device_, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
    std::string log(size, '\0');
    clGetProgramBuildInfo(program, device_, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
    return log;
  }
  Kernel kernel(cl_program program, const char* name) {
    cl_int err = CL_SUCCESS;
    Kernel kernel(clCreateKernel(program, name, &err));
    EXPECT_EQ(Err(CL_SUCCESS), Err(err)) << "clCreateKernel(" << name << ")";
    return kernel;
  }
  template <class T>
  Mem buffer(const std::vector<T>& data) {
    cl_int err = CL_SUCCESS;
    Mem mem(clCreateBuffer(context_, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                           data.size() * sizeof(T), const_cast<T*>(data.data()), &err));
    EXPECT_EQ(Err(CL_SUCCESS), Err(err)) << "clCreateBuffer";
    return mem;
  }
  Mem buffer(size_t bytes) {
    cl_int err = CL_SUCCESS;
    Mem mem(clCreateBuffer(context_, CL_MEM_READ_WRITE, bytes, nullptr, &err));
    EXPECT_EQ(Err(CL_SUCCESS), Err(err)) << "clCreateBuffer";
    return mem;
  }
  template <class T>
  std::vector<T> read(cl_mem mem, size_t count) {
    std::vector<T> out(count);
    EXPECT_EQ(Err(CL_SUCCESS), Err(clEnqueueReadBuffer(queue_, mem, CL_TRUE, 0, count * sizeof(T),
                                                       out.data(), 0, nullptr, nullptr)));
    return out;
  }
  // Sets the arguments in order: cl_mem, a LocalBytes, or any trivially copyable value.
  struct LocalBytes {
    size_t bytes;
  };
  template <class... Args>
  void set_args(cl_kernel kernel, const Args&... args) {
    cl_uint index = 0;
    (set_one(kernel, index++, args), ...);
  }
  void run(cl_kernel kernel, cl_uint dims, const size_t* global, const size_t* local,
           const size_t* offset = nullptr) {
    EXPECT_EQ(Err(CL_SUCCESS), Err(clEnqueueNDRangeKernel(queue_, kernel, dims, offset, global,
                                                          local, 0, nullptr, nullptr)));
  }
  size_t max_work_group_size() const {
    size_t size = 0;
    clGetDeviceInfo(device_, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof size, &size, nullptr);
    return size;
  }
  cl_command_queue queue() const { return queue_; }
  cl_context context() const { return context_; }
  cl_device_id device() const { return device_; }

 private:
  void set_one(cl_kernel kernel, cl_uint index, const Mem& mem) {
    cl_mem handle = mem.get();
    EXPECT_EQ(Err(CL_SUCCESS), Err(clSetKernelArg(kernel, index, sizeof handle, &handle)))
        << "argument " << index;
  }
  void set_one(cl_kernel kernel, cl_uint index, const LocalBytes& local) {
    EXPECT_EQ(Err(CL_SUCCESS), Err(clSetKernelArg(kernel, index, local.bytes, nullptr)))
        << "argument " << index;
  }
  template <class T>
  void set_one(cl_kernel kernel, cl_uint index, const T& value) {
    EXPECT_EQ(Err(CL_SUCCESS), Err(clSetKernelArg(kernel, index, sizeof value, &value)))
        << "argument " << index;
  }

  cl_device_id device_;
  Context context_;
  Queue queue_;
};

class KernelCorpus : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    platform_ = findPlatform(&why);
    ASSERT_NE(platform_, nullptr) << why;
    devices_ = devices_under_test(platform_);
    ASSERT_FALSE(devices_.empty()) << "the platform has no device of MANIFOLD_TEST_DEVICE_TYPE";
  }
  // Runs `body` once per device.
  void for_each_device(const std::function<void(DeviceSession&)>& body) {
    for (const DeviceUnderTest& device : devices_) {
      SCOPED_TRACE("device: " + device.name);
      DeviceSession session(device.id);
      if (!session.ok()) continue;
      body(session);
    }
  }

  cl_platform_id platform_ = nullptr;
  std::vector<DeviceUnderTest> devices_;
};

inline std::vector<float> random_floats(size_t count, uint32_t seed, float low = -1,
                                        float high = 1) {
  std::mt19937 engine(seed);
  std::uniform_real_distribution<float> distribution(low, high);
  std::vector<float> out(count);
  for (float& v : out) v = distribution(engine);
  return out;
}

inline std::vector<uint32_t> random_uints(size_t count, uint32_t seed, uint32_t bound) {
  std::mt19937 engine(seed);
  std::vector<uint32_t> out(count);
  for (uint32_t& v : out) v = engine() % bound;
  return out;
}

}  // namespace corpus
