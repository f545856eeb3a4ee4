// clCreateContext, clCreateContextFromType (properties, notify callback), clGetContextInfo,
// clRetainContext / clReleaseContext, clSetContextDestructorCallback.
#include <algorithm>
#include <vector>

#include "cl_test.h"

using namespace cltest;

namespace {

class ContextApi : public DeviceTest {
 protected:
  // {CL_CONTEXT_PLATFORM, platform, 0}: clCreateContextFromType goes through the loader by
  // that platform.
  const cl_context_properties* pp() {
    props_[0] = CL_CONTEXT_PLATFORM;
    props_[1] = reinterpret_cast<cl_context_properties>(platform_);
    props_[2] = 0;
    return props_;
  }
  cl_context_properties props_[3] = {};
};

void CL_CALLBACK noteNotify(const char*, const void*, size_t, void* user) {
  static_cast<std::atomic<int>*>(user)->fetch_add(1);
}

TEST_F(ContextApi, CreateWithoutProperties) {
  cl_int err = -1;
  Context c(clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  ASSERT_NE(c.get(), nullptr);
  EXPECT_EQ(1u, contextInfo<cl_uint>(c, CL_CONTEXT_NUM_DEVICES));
  EXPECT_EQ(device_, contextInfo<cl_device_id>(c, CL_CONTEXT_DEVICES));
  EXPECT_EQ(1u, refCount(c.get()));
  // The spec: if properties was NULL, param_value_size_ret for CL_CONTEXT_PROPERTIES is 0.
  size_t size = 99;
  EXPECT_CL_OK(clGetContextInfo(c, CL_CONTEXT_PROPERTIES, 0, nullptr, &size));
  EXPECT_EQ(0u, size);
}

TEST_F(ContextApi, ErrcodeRetMayBeNull) {
  Context c(clCreateContext(nullptr, 1, &device_, nullptr, nullptr, nullptr));
  EXPECT_NE(c.get(), nullptr);
}

TEST_F(ContextApi, PropertiesAreReturnedAsGiven) {
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)platform_, 0};
  cl_int err = -1;
  Context c(clCreateContext(props, 1, &device_, nullptr, nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  auto got = infoVector<cl_context_properties>(clGetContextInfo, c, CL_CONTEXT_PROPERTIES);
  ASSERT_EQ(3u, got.size());
  EXPECT_EQ(props[0], got[0]);
  EXPECT_EQ(props[1], got[1]);
  EXPECT_EQ(0, got[2]);
}

TEST_F(ContextApi, InteropUserSyncProperty) {
  cl_context_properties props[] = {CL_CONTEXT_INTEROP_USER_SYNC, CL_TRUE, 0};
  cl_int err = -1;
  Context c(clCreateContext(props, 1, &device_, nullptr, nullptr, &err));
  EXPECT_ERR(CL_SUCCESS, err);
}

TEST_F(ContextApi, DuplicateDevicesAreIgnored) {
  cl_device_id devs[] = {device_, device_};
  cl_int err = -1;
  Context c(clCreateContext(nullptr, 2, devs, nullptr, nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  // The spec: duplicate devices specified in devices are ignored.
  EXPECT_EQ(1u, contextInfo<cl_uint>(c, CL_CONTEXT_NUM_DEVICES));
}

TEST_F(ContextApi, InvalidArguments) {
  cl_int err = CL_SUCCESS;
  // The spec: CL_INVALID_VALUE if devices is NULL, if num_devices is 0.
  EXPECT_EQ(nullptr, clCreateContext(nullptr, 0, &device_, nullptr, nullptr, &err));
  EXPECT_ERR(CL_INVALID_VALUE, err);
  EXPECT_EQ(nullptr, clCreateContext(nullptr, 1, nullptr, nullptr, nullptr, &err));
  EXPECT_ERR(CL_INVALID_VALUE, err);
  // The spec: CL_INVALID_VALUE if pfn_notify is NULL but user_data is not NULL.
  int dummy = 0;
  EXPECT_EQ(nullptr, clCreateContext(nullptr, 1, &device_, nullptr, &dummy, &err));
  EXPECT_ERR(CL_INVALID_VALUE, err);
  // The spec: CL_INVALID_DEVICE if any device in devices is not a valid device.
  cl_device_id bad[] = {device_, nullptr};
  EXPECT_EQ(nullptr, clCreateContext(nullptr, 2, bad, nullptr, nullptr, &err));
  EXPECT_ERR(CL_INVALID_DEVICE, err);
}

TEST_F(ContextApi, InvalidProperties) {
  cl_int err = CL_SUCCESS;
  // The spec: CL_INVALID_PROPERTY if context property name in properties is not a supported
  // property name, or if the same property name is specified more than once.
  cl_context_properties unknown[] = {0x7fff, 1, 0};
  EXPECT_EQ(nullptr, clCreateContext(unknown, 1, &device_, nullptr, nullptr, &err));
  EXPECT_ERR(CL_INVALID_PROPERTY, err);
  // The spec: CL_INVALID_PROPERTY if the value specified for a supported property name is not
  // valid.
  cl_context_properties bad_sync[] = {CL_CONTEXT_INTEROP_USER_SYNC, 7, 0};
  EXPECT_EQ(nullptr, clCreateContext(bad_sync, 1, &device_, nullptr, nullptr, &err));
  EXPECT_ERR(CL_INVALID_PROPERTY, err);
  cl_context_properties twice[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)platform_,
                                   CL_CONTEXT_PLATFORM, (cl_context_properties)platform_, 0};
  EXPECT_EQ(nullptr, clCreateContext(twice, 1, &device_, nullptr, nullptr, &err));
  EXPECT_ERR(CL_INVALID_PROPERTY, err);
  // The spec: CL_INVALID_PLATFORM if the platform value specified in properties is not a valid
  // platform. A device handle is a Manifold object of the wrong type.
  cl_context_properties bad_platform[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)device_, 0};
  EXPECT_EQ(nullptr, clCreateContext(bad_platform, 1, &device_, nullptr, nullptr, &err));
  EXPECT_ERR(CL_INVALID_PLATFORM, err);
  // clCreateContextFromType: the loader needs CL_CONTEXT_PLATFORM to find the platform.
  cl_context_properties platform_then_unknown[] = {CL_CONTEXT_PLATFORM,
                                                   (cl_context_properties)platform_, 0x7fff, 1, 0};
  EXPECT_EQ(nullptr, clCreateContextFromType(platform_then_unknown, CL_DEVICE_TYPE_CPU, nullptr,
                                             nullptr, &err));
  EXPECT_ERR(CL_INVALID_PROPERTY, err);
}

TEST_F(ContextApi, FromTypeCpuAndDefaultAndAll) {
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)platform_, 0};
  for (cl_device_type type :
       {cl_device_type(CL_DEVICE_TYPE_CPU), cl_device_type(CL_DEVICE_TYPE_DEFAULT),
        cl_device_type(CL_DEVICE_TYPE_ALL)}) {
    cl_int err = -1;
    Context c(clCreateContextFromType(props, type, nullptr, nullptr, &err));
    ASSERT_ERR(CL_SUCCESS, err) << "device type " << type;
    auto devs = infoVector<cl_device_id>(clGetContextInfo, c, CL_CONTEXT_DEVICES);
    ASSERT_FALSE(devs.empty());
    EXPECT_EQ(devs.size(), contextInfo<cl_uint>(c, CL_CONTEXT_NUM_DEVICES));
    if (type == CL_DEVICE_TYPE_CPU) {
      for (cl_device_id d : devs) EXPECT_TRUE(isCpuDevice(d));
    }
    if (type == CL_DEVICE_TYPE_DEFAULT) {
      EXPECT_EQ(1u, devs.size());
    }
  }
}

TEST_F(ContextApi, FromTypeWithoutMatchingDevice) {
  cl_uint n = 0;
  if (clGetDeviceIDs(platform_, CL_DEVICE_TYPE_ACCELERATOR, 0, nullptr, &n) != CL_DEVICE_NOT_FOUND)
    GTEST_SKIP() << "the platform has an accelerator device";
  cl_int err = CL_SUCCESS;
  // The spec: CL_DEVICE_NOT_FOUND if no devices that match device_type are currently available.
  EXPECT_EQ(nullptr,
            clCreateContextFromType(pp(), CL_DEVICE_TYPE_ACCELERATOR, nullptr, nullptr, &err));
  EXPECT_ERR(CL_DEVICE_NOT_FOUND, err);
}

TEST_F(ContextApi, FromTypeInvalidType) {
  cl_int err = CL_SUCCESS;
  // The spec: CL_INVALID_DEVICE_TYPE if device_type is not a valid value.
  EXPECT_EQ(nullptr, clCreateContextFromType(pp(), 0, nullptr, nullptr, &err));
  EXPECT_ERR(CL_INVALID_DEVICE_TYPE, err);
  EXPECT_EQ(nullptr,
            clCreateContextFromType(pp(), cl_device_type(1) << 40, nullptr, nullptr, &err));
  EXPECT_ERR(CL_INVALID_DEVICE_TYPE, err);
  int dummy = 0;
  EXPECT_EQ(nullptr, clCreateContextFromType(pp(), CL_DEVICE_TYPE_CPU, nullptr, &dummy, &err));
  EXPECT_ERR(CL_INVALID_VALUE, err);
}

TEST_F(ContextApi, NotifyCallbackIsAcceptedAndQuietOnSuccess) {
  std::atomic<int> calls{0};
  cl_int err = -1;
  Context c(clCreateContext(nullptr, 1, &device_, noteNotify, &calls, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  Context t(clCreateContextFromType(pp(), CL_DEVICE_TYPE_CPU, noteNotify, &calls, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  // Plain successful work reports nothing.
  Queue q(clCreateCommandQueueWithProperties(c, device_, nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  Mem m(clCreateBuffer(c, 0, 64, nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  char data[64] = {};
  EXPECT_CL_OK(clEnqueueWriteBuffer(q, m, CL_TRUE, 0, 64, data, 0, nullptr, nullptr));
  EXPECT_CL_OK(clFinish(q));
  EXPECT_EQ(0, calls.load());
}

TEST_F(ContextApi, RetainRelease) {
  cl_int err = -1;
  cl_context c = clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &err);
  ASSERT_ERR(CL_SUCCESS, err);
  EXPECT_EQ(1u, refCount(c));
  EXPECT_CL_OK(clRetainContext(c));
  EXPECT_CL_OK(clRetainContext(c));
  EXPECT_EQ(3u, refCount(c));
  EXPECT_CL_OK(clReleaseContext(c));
  EXPECT_EQ(2u, refCount(c));
  EXPECT_CL_OK(clReleaseContext(c));
  EXPECT_CL_OK(clReleaseContext(c));
  EXPECT_CL(CL_INVALID_CONTEXT, clRetainContext(nullptr));
  EXPECT_CL(CL_INVALID_CONTEXT, clReleaseContext(nullptr));
}

TEST_F(ContextApi, InfoQueries) {
  cl_int err = -1;
  Context c(clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  size_t size = 0;
  EXPECT_CL_OK(clGetContextInfo(c, CL_CONTEXT_DEVICES, 0, nullptr, &size));
  EXPECT_EQ(sizeof(cl_device_id), size);
  // The spec: CL_INVALID_VALUE if param_name is not one of the supported values or if size in
  // bytes specified by param_value_size is < size of return type and param_value is not NULL.
  cl_uint small = 0;
  EXPECT_CL(CL_INVALID_VALUE, clGetContextInfo(c, CL_CONTEXT_DEVICES, 1, &small, nullptr));
  EXPECT_CL(CL_INVALID_VALUE, clGetContextInfo(c, 0x7777, sizeof(small), &small, nullptr));
  EXPECT_CL(CL_INVALID_CONTEXT,
            clGetContextInfo(nullptr, CL_CONTEXT_NUM_DEVICES, sizeof(small), &small, nullptr));
  // Size-only queries work for every parameter.
  for (cl_context_info p : {CL_CONTEXT_REFERENCE_COUNT, CL_CONTEXT_NUM_DEVICES, CL_CONTEXT_DEVICES,
                            CL_CONTEXT_PROPERTIES}) {
    EXPECT_CL_OK(clGetContextInfo(c, p, 0, nullptr, &size)) << "param 0x" << std::hex << p;
  }
}

struct DestructorLog {
  std::mutex m;
  std::vector<int> order;
  cl_context seen = nullptr;
};
struct DestructorTag {
  DestructorLog* log;
  int id;
};
void CL_CALLBACK contextDestroyed(cl_context c, void* user) {
  auto* tag = static_cast<DestructorTag*>(user);
  std::lock_guard<std::mutex> lock(tag->log->m);
  tag->log->order.push_back(tag->id);
  tag->log->seen = c;
}

TEST_F(ContextApi, DestructorCallbacksRunInReverseOrderAfterLastObject) {
  cl_int err = -1;
  cl_context c = clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &err);
  ASSERT_ERR(CL_SUCCESS, err);
  DestructorLog log;
  DestructorTag a{&log, 1}, b{&log, 2}, d{&log, 3};
  EXPECT_CL_OK(clSetContextDestructorCallback(c, contextDestroyed, &a));
  EXPECT_CL_OK(clSetContextDestructorCallback(c, contextDestroyed, &b));
  EXPECT_CL_OK(clSetContextDestructorCallback(c, contextDestroyed, &d));
  cl_mem m = clCreateBuffer(c, 0, 16, nullptr, &err);
  ASSERT_ERR(CL_SUCCESS, err);
  EXPECT_CL_OK(clReleaseContext(c));
  // The spec: the callbacks are called when the context is destroyed, which happens only once
  // every object created in it (the buffer here) is released.
  {
    std::lock_guard<std::mutex> lock(log.m);
    EXPECT_TRUE(log.order.empty());
  }
  EXPECT_CL_OK(clReleaseMemObject(m));
  std::lock_guard<std::mutex> lock(log.m);
  // The spec: the registered callbacks are called in the reverse order in which they were
  // registered.
  EXPECT_EQ((std::vector<int>{3, 2, 1}), log.order);
  EXPECT_EQ(c, log.seen);
}

TEST_F(ContextApi, DestructorCallbackInvalidArguments) {
  cl_int err = -1;
  Context c(clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  // The spec: CL_INVALID_VALUE if pfn_notify is NULL.
  EXPECT_CL(CL_INVALID_VALUE, clSetContextDestructorCallback(c, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_CONTEXT, clSetContextDestructorCallback(nullptr, contextDestroyed, nullptr));
}

bool supportsScheme(cl_device_id d, cl_device_partition_property scheme) {
  const auto schemes =
      infoVector<cl_device_partition_property>(clGetDeviceInfo, d, CL_DEVICE_PARTITION_PROPERTIES);
  return std::find(schemes.begin(), schemes.end(), scheme) != schemes.end();
}

// A partition the device supports: one sub-device of one compute unit by counts (the CPU), else
// by affinity domain along the next partitionable one (Level Zero tiles); empty when neither.
std::vector<cl_device_partition_property> someSplit(cl_device_id d) {
  if (supportsScheme(d, CL_DEVICE_PARTITION_BY_COUNTS))
    return {CL_DEVICE_PARTITION_BY_COUNTS, 1, CL_DEVICE_PARTITION_BY_COUNTS_LIST_END, 0};
  if (supportsScheme(d, CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN))
    return {CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN, CL_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE,
            0};
  return {};
}

TEST_F(ContextApi, ContextOfSubDevice) {
  if (caps_.maxSubDevices < 2) GTEST_SKIP() << "the device cannot be partitioned";
  const std::vector<cl_device_partition_property> props = someSplit(device_);
  if (props.empty()) GTEST_SKIP() << "no partition by counts or affinity domain";
  cl_uint n = 0;
  ASSERT_CL(CL_SUCCESS, clCreateSubDevices(device_, props.data(), 0, nullptr, &n));
  ASSERT_GE(n, 1u);
  std::vector<cl_device_id> sub(n);
  ASSERT_CL(CL_SUCCESS, clCreateSubDevices(device_, props.data(), n, sub.data(), nullptr));
  cl_int err = -1;
  {
    Context c(clCreateContext(nullptr, 1, &sub[0], nullptr, nullptr, &err));
    ASSERT_ERR(CL_SUCCESS, err);
    EXPECT_EQ(sub[0], contextInfo<cl_device_id>(c, CL_CONTEXT_DEVICES));
    // A device outside the context cannot get a queue in it.
    // The spec: CL_INVALID_DEVICE if device is not a valid device or is not associated with
    // context.
    EXPECT_EQ(nullptr, clCreateCommandQueueWithProperties(c, device_, nullptr, &err));
    EXPECT_ERR(CL_INVALID_DEVICE, err);
  }
  for (cl_device_id d : sub) EXPECT_CL_OK(clReleaseDevice(d));
}

// CTS device_partition: a program built for the parent device only serves the context's
// sub-devices too (the spec: a program binary built for a parent device can be used by all its
// sub-devices), in its build queries as in its launches; a device of one compute unit (or one
// tile) cannot be partitioned further.
TEST_F(ContextApi, ProgramBuiltForTheParentServesItsSubDevices) {
  if (caps_.maxSubDevices < 2) GTEST_SKIP() << "the device cannot be partitioned";
  const bool equally = supportsScheme(device_, CL_DEVICE_PARTITION_EQUALLY);
  std::vector<cl_device_partition_property> props{CL_DEVICE_PARTITION_EQUALLY, 1, 0};
  if (!equally) {
    if (!supportsScheme(device_, CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN))
      GTEST_SKIP() << "no partition equally or by affinity domain";
    props = {CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN, CL_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE,
             0};
  }
  cl_uint n = 0;
  ASSERT_CL(CL_SUCCESS, clCreateSubDevices(device_, props.data(), 0, nullptr, &n));
  ASSERT_GE(n, 2u);
  std::vector<cl_device_id> devices(n);
  ASSERT_CL(CL_SUCCESS, clCreateSubDevices(device_, props.data(), n, devices.data(), nullptr));
  cl_uint none = 0;
  EXPECT_CL(CL_DEVICE_PARTITION_FAILED,
            clCreateSubDevices(devices[0], props.data(), 0, nullptr, &none));
  if (equally) {
    cl_uint units = 0;
    ASSERT_CL(CL_SUCCESS, clGetDeviceInfo(devices[0], CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units,
                                          &units, nullptr));
    // One unit each, or the smallest part the device makes (a GPU's SMs come in groups).
    if (isCpuDevice(device_)) {
      EXPECT_EQ(1u, units);
    }
    EXPECT_GE(units, 1u);
    // CTS api negative_create_sub_devices: equally by every unit would give the device itself.
    cl_uint all_units = 0;
    ASSERT_CL(CL_SUCCESS, clGetDeviceInfo(device_, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof all_units,
                                          &all_units, nullptr));
    cl_device_partition_property whole[] = {CL_DEVICE_PARTITION_EQUALLY, all_units, 0};
    EXPECT_CL(CL_DEVICE_PARTITION_FAILED, clCreateSubDevices(device_, whole, 0, nullptr, &none));
    // ... and by more units than it has is an invalid count.
    cl_device_partition_property more[] = {CL_DEVICE_PARTITION_EQUALLY, all_units + 1, 0};
    EXPECT_CL(CL_INVALID_DEVICE_PARTITION_COUNT,
              clCreateSubDevices(device_, more, 0, nullptr, &none));
  }
  devices.push_back(device_);
  cl_int err = -1;
  {
    Context c(
        clCreateContext(nullptr, cl_uint(devices.size()), devices.data(), nullptr, nullptr, &err));
    ASSERT_ERR(CL_SUCCESS, err);
    const char* source = "kernel void k(global int* p) { p[get_global_id(0)] = 7; }";
    Program program(clCreateProgramWithSource(c, 1, &source, nullptr, &err));
    ASSERT_ERR(CL_SUCCESS, err);
    ASSERT_CL(CL_SUCCESS, clBuildProgram(program, 1, &device_, "", nullptr, nullptr));
    for (cl_device_id d : devices) {
      cl_build_status status = CL_BUILD_NONE;
      ASSERT_CL(CL_SUCCESS, clGetProgramBuildInfo(program, d, CL_PROGRAM_BUILD_STATUS,
                                                  sizeof status, &status, nullptr));
      EXPECT_EQ(CL_BUILD_SUCCESS, status);
    }
    Kernel k(clCreateKernel(program, "k", &err));
    ASSERT_ERR(CL_SUCCESS, err);
    Mem m(clCreateBuffer(c, CL_MEM_READ_WRITE, 64 * sizeof(int), nullptr, &err));
    ASSERT_ERR(CL_SUCCESS, err);
    cl_mem mem = m;
    ASSERT_CL(CL_SUCCESS, clSetKernelArg(k, 0, sizeof mem, &mem));
    Queue q(clCreateCommandQueueWithProperties(c, devices[1], nullptr, &err));
    ASSERT_ERR(CL_SUCCESS, err);
    const size_t global = 64;
    ASSERT_CL(CL_SUCCESS,
              clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr));
    std::vector<int> out(64, 0);
    ASSERT_CL(CL_SUCCESS, clEnqueueReadBuffer(q, m, CL_TRUE, 0, 64 * sizeof(int), out.data(), 0,
                                              nullptr, nullptr));
    EXPECT_EQ(std::vector<int>(64, 7), out);
  }
  for (size_t i = 0; i + 1 < devices.size(); ++i) EXPECT_CL_OK(clReleaseDevice(devices[i]));
}

}  // namespace
