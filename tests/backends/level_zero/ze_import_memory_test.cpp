// cl_arm_import_memory on the Level Zero backend's device, through the real loader and the test
// driver, which imports host ranges as Intel's driver does (ze_test_driver_imports.cpp) and
// refuses kernels on host memory that is neither its own nor imported: malloc'ed and unaligned
// ranges changed in place by kernels, the driver's registry emptied by clReleaseMemObject, one
// range in a context with the CPU, with the device's tiles, and ranges overlapping an import.
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/fakes/level_zero/ze_test_driver_imports.h"
#include "ze_test_devices.h"

namespace {

using ze_test::device_text;
using ze_test::find_device;
using ze_test::manifold_platform;

bool has_word(const std::string& list, const std::string& word) {
  return (" " + list + " ").find(" " + word + " ") != std::string::npos;
}

// What the test driver (loaded by the loader from ZE_ENABLE_ALT_DRIVERS) has imported.
ze_test::ImportStats driver_imports() {
  static const ze_test::GetImportStats get = [] {
    const char* path = std::getenv("ZE_ENABLE_ALT_DRIVERS");
    void* driver = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : nullptr;
    return driver ? reinterpret_cast<ze_test::GetImportStats>(
                        dlsym(driver, ze_test::kImportStatsSymbol))
                  : nullptr;
  }();
  if (!get) {
    ADD_FAILURE() << "the test driver's " << ze_test::kImportStatsSymbol << " is not reachable";
    return {~size_t(0), 0, 0};
  }
  return get();
}

// The driver's ranges once `expected` (released buffers go when their last command's job ends,
// on the queue's completion thread: moments after clFinish).
size_t driver_ranges_once(size_t expected) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  size_t ranges = driver_imports().ranges;
  while (ranges != expected && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    ranges = driver_imports().ranges;
  }
  return ranges;
}

using ImportFn = cl_mem(CL_API_CALL*)(cl_context, cl_mem_flags, const cl_import_properties_arm*,
                                      void*, size_t, cl_int*);

class LevelZeroImport : public ::testing::Test {
 protected:
  void SetUp() override {
    device = find_device(true);
    ASSERT_NE(device, nullptr) << "the test driver's device (ZE_ENABLE_ALT_DRIVERS)";
    import_fn = reinterpret_cast<ImportFn>(
        clGetExtensionFunctionAddressForPlatform(manifold_platform(), "clImportMemoryARM"));
    ASSERT_NE(import_fn, nullptr);
    ASSERT_EQ(driver_ranges_once(0), 0u) << "an earlier test left an import behind";
    refused_before = driver_imports().refused;
    nested_before = driver_imports().nested_imports;
  }
  void TearDown() override {
    // The backend imports each range once per driver and releases exactly what it imported.
    EXPECT_EQ(driver_ranges_once(0), 0u);
    EXPECT_EQ(driver_imports().refused, refused_before) << "the driver refused an import/release";
    EXPECT_EQ(driver_imports().nested_imports, nested_before)
        << "the driver was asked to import a range it already had";
  }

  cl_mem import(cl_context context, void* memory, size_t size, cl_int* error) {
    return import_fn(context, CL_MEM_READ_WRITE, nullptr, memory, size, error);
  }

  // p[i] += v for i < n, on `queue`, finished.
  static void add(cl_context context, cl_device_id device, cl_command_queue queue, cl_mem buffer,
                  size_t n, cl_uchar v) {
    const char* source = "kernel void add(global uchar* p, uchar v) { p[get_global_id(0)] += v; }";
    cl_int error = CL_SUCCESS;
    cl_program program = clCreateProgramWithSource(context, 1, &source, nullptr, &error);
    ASSERT_EQ(error, CL_SUCCESS);
    ASSERT_EQ(clBuildProgram(program, 1, &device, "", nullptr, nullptr), CL_SUCCESS);
    cl_kernel kernel = clCreateKernel(program, "add", &error);
    ASSERT_EQ(error, CL_SUCCESS);
    EXPECT_EQ(clSetKernelArg(kernel, 0, sizeof buffer, &buffer), CL_SUCCESS);
    EXPECT_EQ(clSetKernelArg(kernel, 1, sizeof v, &v), CL_SUCCESS);
    EXPECT_EQ(clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &n, nullptr, 0, nullptr, nullptr),
              CL_SUCCESS);
    EXPECT_EQ(clFinish(queue), CL_SUCCESS);
    clReleaseKernel(kernel);
    clReleaseProgram(program);
  }

  // A context of `devices`, and one queue per device.
  struct Setup {
    cl_context context = nullptr;
    std::vector<cl_command_queue> queues;
    explicit Setup(const std::vector<cl_device_id>& devices) {
      cl_int error = CL_SUCCESS;
      context = clCreateContext(nullptr, cl_uint(devices.size()), devices.data(), nullptr, nullptr,
                                &error);
      EXPECT_EQ(error, CL_SUCCESS);
      for (cl_device_id d : devices) {
        queues.push_back(clCreateCommandQueueWithProperties(context, d, nullptr, &error));
        EXPECT_EQ(error, CL_SUCCESS);
      }
    }
    ~Setup() {
      for (cl_command_queue q : queues)
        if (q) clReleaseCommandQueue(q);
      if (context) clReleaseContext(context);
    }
  };

  cl_device_id device = nullptr;
  ImportFn import_fn = nullptr;
  size_t refused_before = 0, nested_before = 0;
};

TEST_F(LevelZeroImport, DeviceReportsHostImports) {
  const std::string extensions = device_text(device, CL_DEVICE_EXTENSIONS);
  EXPECT_TRUE(has_word(extensions, "cl_arm_import_memory")) << extensions;
  EXPECT_TRUE(has_word(extensions, "cl_arm_import_memory_host")) << extensions;
  EXPECT_FALSE(has_word(extensions, "cl_arm_import_memory_dma_buf")) << extensions;
}

TEST_F(LevelZeroImport, KernelChangesMallocedMemoryInPlaceUntilReleased) {
  const size_t n = (size_t{1} << 20) + 5;  // not a whole number of pages
  auto* host = static_cast<cl_uchar*>(std::malloc(n));
  ASSERT_NE(host, nullptr);
  for (size_t i = 0; i < n; ++i) host[i] = cl_uchar(i);
  {
    Setup s({device});
    cl_int error = CL_SUCCESS;
    cl_mem m = import(s.context, host, n, &error);
    ASSERT_EQ(error, CL_SUCCESS);
    EXPECT_EQ(driver_imports().ranges, 1u);
    add(s.context, device, s.queues[0], m, n, 3);
    // No read: the kernel wrote the application's own bytes.
    for (size_t i = 0; i < n; i += 4093) ASSERT_EQ(host[i], cl_uchar(i + 3)) << i;
    EXPECT_EQ(host[n - 1], cl_uchar(n - 1 + 3));
    // What the host writes now is what the next kernel sees.
    host[11] = 200;
    add(s.context, device, s.queues[0], m, n, 1);
    EXPECT_EQ(host[11], 201);
    EXPECT_EQ(clReleaseMemObject(m), CL_SUCCESS);
    EXPECT_EQ(driver_ranges_once(0), 0u) << "clReleaseMemObject releases the pages";
  }
  std::free(host);
}

TEST_F(LevelZeroImport, UnalignedRangesAndASubBuffer) {
  std::vector<cl_uchar> host(10000, 1);
  Setup s({device});
  cl_int error = CL_SUCCESS;
  // From the third byte, 9000 bytes: only they change.
  cl_mem m = import(s.context, host.data() + 3, 9000, &error);
  ASSERT_EQ(error, CL_SUCCESS);
  add(s.context, device, s.queues[0], m, 9000, 5);
  EXPECT_EQ(host[2], 1);
  EXPECT_EQ(host[3], 6);
  EXPECT_EQ(host[9002], 6);
  EXPECT_EQ(host[9003], 1);
  // A sub-buffer is the same memory, at its offset.
  cl_uint align_bits = 0;
  clGetDeviceInfo(device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, nullptr);
  const cl_buffer_region region{align_bits / 8, 100};
  cl_mem sub =
      clCreateSubBuffer(m, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &error);
  ASSERT_EQ(error, CL_SUCCESS);
  add(s.context, device, s.queues[0], sub, 100, 10);
  EXPECT_EQ(host[3 + region.origin], 16);
  EXPECT_EQ(host[3 + region.origin + 99], 16);
  EXPECT_EQ(host[3 + region.origin + 100], 6);
  // A second import inside the first (odd start and length): the driver keeps its one range.
  cl_mem inner = import(s.context, host.data() + 1001, 77, &error);
  ASSERT_EQ(error, CL_SUCCESS);
  EXPECT_EQ(driver_imports().ranges, 1u);
  clReleaseMemObject(sub);
  clReleaseMemObject(m);
  add(s.context, device, s.queues[0], inner, 77, 1);  // still imported for `inner`
  EXPECT_EQ(host[1000], 6);
  EXPECT_EQ(host[1001], 7);
  EXPECT_EQ(host[1077], 7);
  EXPECT_EQ(host[1078], 6);
  clReleaseMemObject(inner);
}

TEST_F(LevelZeroImport, CpuAndLevelZeroDeviceUseTheOneRange) {
  cl_device_id cpu = find_device(false);
  ASSERT_NE(cpu, nullptr);
  std::vector<cl_uchar> host(4096 + 17, 0);
  Setup s({cpu, device});
  cl_int error = CL_SUCCESS;
  cl_mem m = import(s.context, host.data(), host.size(), &error);
  ASSERT_EQ(error, CL_SUCCESS);
  EXPECT_EQ(driver_imports().ranges, 1u);
  // Each adds in turn, each sees the other's bytes: no copy anywhere.
  add(s.context, cpu, s.queues[0], m, host.size(), 1);
  add(s.context, device, s.queues[1], m, host.size(), 2);
  add(s.context, cpu, s.queues[0], m, host.size(), 4);
  EXPECT_EQ(host[0], 7);
  EXPECT_EQ(host[host.size() - 1], 7);
  clReleaseMemObject(m);
}

TEST_F(LevelZeroImport, RootAndTilesImportTheRangeOnce) {
  const cl_device_partition_property props[] = {CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN,
                                                CL_DEVICE_AFFINITY_DOMAIN_NUMA, 0};
  std::vector<cl_device_id> devices(ze_test::kSubDevices);
  cl_uint made = 0;
  ASSERT_EQ(clCreateSubDevices(device, props, cl_uint(devices.size()), devices.data(), &made),
            CL_SUCCESS);
  ASSERT_EQ(made, ze_test::kSubDevices);
  for (cl_device_id tile : devices)
    EXPECT_TRUE(has_word(device_text(tile, CL_DEVICE_EXTENSIONS), "cl_arm_import_memory_host"));
  devices.push_back(device);
  std::vector<cl_uchar> host(3000, 0);
  {
    Setup s(devices);
    cl_int error = CL_SUCCESS;
    cl_mem m = import(s.context, host.data() + 1, 2998, &error);
    ASSERT_EQ(error, CL_SUCCESS);
    EXPECT_EQ(driver_imports().ranges, 1u) << "one import for the driver of every device";
    for (size_t i = 0; i < devices.size(); ++i)
      add(s.context, devices[i], s.queues[i], m, 2998, cl_uchar(1 + i));
    const cl_uchar sum = cl_uchar(devices.size() * (devices.size() + 1) / 2);
    EXPECT_EQ(host[0], 0);
    EXPECT_EQ(host[1], sum);
    EXPECT_EQ(host[2998], sum);
    EXPECT_EQ(host[2999], 0);
    clReleaseMemObject(m);
  }
  for (size_t i = 0; i + 1 < devices.size(); ++i) clReleaseDevice(devices[i]);
}

TEST_F(LevelZeroImport, RangeOverlappingPartOfAnImportIsRefused) {
  std::vector<cl_uchar> host(8192, 0);
  Setup s({device});
  cl_int error = CL_SUCCESS;
  cl_mem m = import(s.context, host.data() + 1024, 4096, &error);
  ASSERT_EQ(error, CL_SUCCESS);
  // The driver keeps one allocation per range: a range over its end, or around it, is refused
  // (before the driver is asked: TearDown checks it refused nothing).
  for (auto [offset, size] : {std::pair<size_t, size_t>{4096, 2048}, {512, 1024}, {0, 8192}}) {
    cl_mem other = import(s.context, host.data() + offset, size, &error);
    EXPECT_EQ(other, nullptr) << offset << "+" << size;
    EXPECT_EQ(error, CL_INVALID_OPERATION) << offset << "+" << size;
    if (other) clReleaseMemObject(other);
  }
  // Next to it, not overlapping: a range of its own.
  cl_mem next = import(s.context, host.data() + 1024 + 4096, 100, &error);
  ASSERT_EQ(error, CL_SUCCESS);
  EXPECT_EQ(driver_imports().ranges, 2u);
  add(s.context, device, s.queues[0], next, 100, 1);
  add(s.context, device, s.queues[0], m, 4096, 2);
  EXPECT_EQ(host[1023], 0);
  EXPECT_EQ(host[1024], 2);
  EXPECT_EQ(host[5119], 2);
  EXPECT_EQ(host[5120], 1);
  EXPECT_EQ(host[5220], 0);
  clReleaseMemObject(next);
  clReleaseMemObject(m);
}

}  // namespace
