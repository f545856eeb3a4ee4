// Sub-devices of the Level Zero backend's devices, through the real loader and the test driver
// (ze_test_driver.cpp: a GPU with two tiles; ze_test_driver_one_tile: one tile): the partition
// queries, clCreateSubDevices by affinity domain (one sub-device per tile, with the tile's own
// properties), kernels of each tile on one buffer shared with the root device, and the errors.
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "ze_test_devices.h"

namespace {

using ze_test::device_text;

template <class T>
T info(cl_device_id device, cl_device_info what) {
  T value{};
  EXPECT_EQ(clGetDeviceInfo(device, what, sizeof value, &value, nullptr), CL_SUCCESS);
  return value;
}

std::vector<cl_device_partition_property> partition_info(cl_device_id device, cl_device_info what) {
  size_t size = 0;
  EXPECT_EQ(clGetDeviceInfo(device, what, 0, nullptr, &size), CL_SUCCESS);
  std::vector<cl_device_partition_property> out(size / sizeof(cl_device_partition_property));
  if (size) {
    EXPECT_EQ(clGetDeviceInfo(device, what, size, out.data(), nullptr), CL_SUCCESS);
  }
  return out;
}

// The test driver's root device.
cl_device_id test_gpu() { return ze_test::find_device(true); }

constexpr cl_uint kRootUnits =
    ze_test::kSlices * ze_test::kSubslicesPerSlice * ze_test::kEusPerSubslice;

class LevelZeroSubDevices : public ::testing::Test {
 protected:
  void SetUp() override {
    root = test_gpu();
    ASSERT_NE(root, nullptr) << "the test driver's device (ZE_ENABLE_ALT_DRIVERS)";
  }
  // clCreateSubDevices by `domain`: every tile, checked to be made.
  std::vector<cl_device_id> partition(cl_device_partition_property domain) {
    const cl_device_partition_property props[] = {CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN, domain,
                                                  0};
    cl_uint n = 0;
    EXPECT_EQ(clCreateSubDevices(root, props, 0, nullptr, &n), CL_SUCCESS);
    EXPECT_EQ(n, ze_test::kSubDevices);
    std::vector<cl_device_id> tiles(n);
    cl_uint made = 0;
    EXPECT_EQ(clCreateSubDevices(root, props, n, tiles.data(), &made), CL_SUCCESS);
    EXPECT_EQ(made, n);
    return tiles;
  }
  cl_device_id root = nullptr;
};

TEST_F(LevelZeroSubDevices, RootReportsOnePartitionByAffinityDomainPerTile) {
  EXPECT_EQ(info<cl_uint>(root, CL_DEVICE_PARTITION_MAX_SUB_DEVICES), ze_test::kSubDevices);
  const auto schemes = partition_info(root, CL_DEVICE_PARTITION_PROPERTIES);
  ASSERT_FALSE(schemes.empty());
  EXPECT_EQ(schemes[0], cl_device_partition_property(CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN));
  for (size_t i = 1; i < schemes.size(); ++i) EXPECT_EQ(schemes[i], 0) << "one scheme only";
  EXPECT_EQ(info<cl_device_affinity_domain>(root, CL_DEVICE_PARTITION_AFFINITY_DOMAIN),
            cl_device_affinity_domain(CL_DEVICE_AFFINITY_DOMAIN_NUMA |
                                      CL_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE));
  const auto type = partition_info(root, CL_DEVICE_PARTITION_TYPE);
  EXPECT_TRUE(type.empty() || type == std::vector<cl_device_partition_property>{0});
  EXPECT_EQ(info<cl_device_id>(root, CL_DEVICE_PARENT_DEVICE), nullptr);
}

TEST_F(LevelZeroSubDevices, NumaGivesOneSubDevicePerTileWithTheTilesProperties) {
  const std::vector<cl_device_id> tiles = partition(CL_DEVICE_AFFINITY_DOMAIN_NUMA);
  ASSERT_EQ(tiles.size(), ze_test::kSubDevices);
  EXPECT_NE(tiles[0], tiles[1]);
  for (cl_device_id tile : tiles) {
    EXPECT_NE(tile, root);
    EXPECT_EQ(device_text(tile, CL_DEVICE_NAME), ze_test::kTileName);
    EXPECT_EQ(info<cl_device_type>(tile, CL_DEVICE_TYPE), cl_device_type(CL_DEVICE_TYPE_GPU));
    EXPECT_EQ(info<cl_device_id>(tile, CL_DEVICE_PARENT_DEVICE), root);
    EXPECT_EQ(info<cl_uint>(tile, CL_DEVICE_MAX_COMPUTE_UNITS), kRootUnits / ze_test::kSubDevices);
    EXPECT_EQ(info<cl_ulong>(tile, CL_DEVICE_GLOBAL_MEM_SIZE),
              ze_test::kMemory / ze_test::kSubDevices);
    EXPECT_EQ(partition_info(tile, CL_DEVICE_PARTITION_TYPE),
              (std::vector<cl_device_partition_property>{CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN,
                                                         CL_DEVICE_AFFINITY_DOMAIN_NUMA, 0}));
    // A tile has no tiles of its own: it reports no partition scheme.
    EXPECT_EQ(info<cl_uint>(tile, CL_DEVICE_PARTITION_MAX_SUB_DEVICES), 0u);
    EXPECT_EQ(partition_info(tile, CL_DEVICE_PARTITION_PROPERTIES),
              std::vector<cl_device_partition_property>{0});
    EXPECT_EQ(info<cl_device_affinity_domain>(tile, CL_DEVICE_PARTITION_AFFINITY_DOMAIN), 0u);
    EXPECT_EQ(info<cl_uint>(tile, CL_DEVICE_REFERENCE_COUNT), 1u);
    EXPECT_EQ(clRetainDevice(tile), CL_SUCCESS);
    EXPECT_EQ(info<cl_uint>(tile, CL_DEVICE_REFERENCE_COUNT), 2u);
    EXPECT_EQ(clReleaseDevice(tile), CL_SUCCESS);
    EXPECT_EQ(info<cl_uint>(tile, CL_DEVICE_REFERENCE_COUNT), 1u);
  }
  // Different tiles, different UUIDs (each the tile's own).
  cl_uchar uuid[2][CL_UUID_SIZE_KHR] = {};
  for (int i = 0; i < 2; ++i)
    ASSERT_EQ(clGetDeviceInfo(tiles[i], CL_DEVICE_UUID_KHR, CL_UUID_SIZE_KHR, uuid[i], nullptr),
              CL_SUCCESS);
  EXPECT_NE(std::string(uuid[0], uuid[0] + CL_UUID_SIZE_KHR),
            std::string(uuid[1], uuid[1] + CL_UUID_SIZE_KHR));
  for (cl_device_id tile : tiles) EXPECT_EQ(clReleaseDevice(tile), CL_SUCCESS);
  // The root device is not reference counted: retain and release do nothing and succeed.
  EXPECT_EQ(clRetainDevice(root), CL_SUCCESS);
  EXPECT_EQ(clReleaseDevice(root), CL_SUCCESS);
}

TEST_F(LevelZeroSubDevices, NextPartitionableSplitsByTileAndNamesNuma) {
  const std::vector<cl_device_id> tiles = partition(CL_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE);
  ASSERT_EQ(tiles.size(), ze_test::kSubDevices);
  for (cl_device_id tile : tiles) {
    EXPECT_EQ(info<cl_device_id>(tile, CL_DEVICE_PARENT_DEVICE), root);
    // The spec: for NEXT_PARTITIONABLE, CL_DEVICE_PARTITION_TYPE names the domain used.
    EXPECT_EQ(partition_info(tile, CL_DEVICE_PARTITION_TYPE),
              (std::vector<cl_device_partition_property>{CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN,
                                                         CL_DEVICE_AFFINITY_DOMAIN_NUMA, 0}));
    EXPECT_EQ(clReleaseDevice(tile), CL_SUCCESS);
  }
}

TEST_F(LevelZeroSubDevices, UnsupportedPartitionsFailWithTheSpecsCodes) {
  cl_uint n = 99;
  cl_device_id out[4] = {};
  auto create = [&](std::vector<cl_device_partition_property> props) {
    return clCreateSubDevices(root, props.data(), 4, out, &n);
  };
  constexpr cl_device_partition_property by_domain = CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN;
  // The spec: CL_INVALID_VALUE if values specified in properties are not valid or if values
  // specified in properties are valid but not supported by the device.
  EXPECT_EQ(create({CL_DEVICE_PARTITION_EQUALLY, 8, 0}), CL_INVALID_VALUE);
  EXPECT_EQ(
      create({CL_DEVICE_PARTITION_BY_COUNTS, 8, 8, CL_DEVICE_PARTITION_BY_COUNTS_LIST_END, 0}),
      CL_INVALID_VALUE);
  EXPECT_EQ(create({by_domain, CL_DEVICE_AFFINITY_DOMAIN_L2_CACHE, 0}), CL_INVALID_VALUE);
  EXPECT_EQ(create({by_domain, CL_DEVICE_AFFINITY_DOMAIN_L1_CACHE, 0}), CL_INVALID_VALUE);
  EXPECT_EQ(create({by_domain, 0}), CL_INVALID_VALUE);
  EXPECT_EQ(create({by_domain, 0x1000, 0}), CL_INVALID_VALUE);
  EXPECT_EQ(
      create({by_domain,
              CL_DEVICE_AFFINITY_DOMAIN_NUMA | CL_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE, 0}),
      CL_INVALID_VALUE);
  // Only one scheme per call.
  EXPECT_EQ(create({by_domain, CL_DEVICE_AFFINITY_DOMAIN_NUMA, CL_DEVICE_PARTITION_EQUALLY, 2, 0}),
            CL_INVALID_VALUE);
  EXPECT_EQ(create({0x4099, 1, 0}), CL_INVALID_VALUE);
  EXPECT_EQ(clCreateSubDevices(root, nullptr, 4, out, &n), CL_INVALID_VALUE);
  EXPECT_EQ(n, 99u) << "a failed call reports no count";
  // The spec: CL_INVALID_VALUE if out_devices is not NULL and num_devices is less than the
  // number of sub-devices created by the partition scheme.
  const cl_device_partition_property numa[] = {by_domain, CL_DEVICE_AFFINITY_DOMAIN_NUMA, 0};
  EXPECT_EQ(clCreateSubDevices(root, numa, ze_test::kSubDevices - 1, out, &n), CL_INVALID_VALUE);
  EXPECT_EQ(out[0], nullptr);
  EXPECT_EQ(clCreateSubDevices(nullptr, numa, 4, out, &n), CL_INVALID_DEVICE);
  // The spec: CL_DEVICE_PARTITION_FAILED if the partition name is supported by the
  // implementation but in_device could not be further partitioned (a tile).
  const std::vector<cl_device_id> tiles = partition(CL_DEVICE_AFFINITY_DOMAIN_NUMA);
  ASSERT_FALSE(tiles.empty());
  cl_uint none = 0;
  EXPECT_EQ(clCreateSubDevices(tiles[0], numa, 0, nullptr, &none), CL_DEVICE_PARTITION_FAILED);
  const cl_device_partition_property next[] = {by_domain,
                                               CL_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE, 0};
  EXPECT_EQ(clCreateSubDevices(tiles[0], next, 0, nullptr, &none), CL_DEVICE_PARTITION_FAILED);
  // A scheme the root does not support either stays an invalid value on the tile.
  const cl_device_partition_property equally[] = {CL_DEVICE_PARTITION_EQUALLY, 2, 0};
  EXPECT_EQ(clCreateSubDevices(tiles[0], equally, 0, nullptr, &none), CL_INVALID_VALUE);
  for (cl_device_id tile : tiles) EXPECT_EQ(clReleaseDevice(tile), CL_SUCCESS);
}

// Each tile's kernel writes its half of a buffer the root device filled first, in one context of
// both tiles and the root; the root reads back both halves, and a tile reads what the other
// wrote: the tiles share the root's memory.
TEST_F(LevelZeroSubDevices, KernelsOfEachTileWriteTheirPartOfABufferSharedWithTheRoot) {
  std::vector<cl_device_id> devices = partition(CL_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE);
  ASSERT_EQ(devices.size(), 2u);
  devices.push_back(root);
  cl_int error = CL_SUCCESS;
  cl_context context =
      clCreateContext(nullptr, cl_uint(devices.size()), devices.data(), nullptr, nullptr, &error);
  ASSERT_EQ(error, CL_SUCCESS);
  const char* source =
      "kernel void mark(global int* p, int tile) {\n"
      "  size_t i = get_global_id(0);\n"
      "  p[i] = p[i] * 10 + tile;\n"
      "}\n";
  cl_program program = clCreateProgramWithSource(context, 1, &source, nullptr, &error);
  ASSERT_EQ(error, CL_SUCCESS);
  ASSERT_EQ(clBuildProgram(program, 0, nullptr, "", nullptr, nullptr), CL_SUCCESS);
  for (cl_device_id d : devices) {
    cl_build_status status = CL_BUILD_NONE;
    EXPECT_EQ(
        clGetProgramBuildInfo(program, d, CL_PROGRAM_BUILD_STATUS, sizeof status, &status, nullptr),
        CL_SUCCESS);
    EXPECT_EQ(status, CL_BUILD_SUCCESS);
  }
  constexpr size_t n = 4096, half = n / 2;
  std::vector<int> in(n);
  for (size_t i = 0; i < n; ++i) in[i] = int(i);
  cl_mem buffer = clCreateBuffer(context, CL_MEM_READ_WRITE, n * sizeof(int), nullptr, &error);
  ASSERT_EQ(error, CL_SUCCESS);
  cl_command_queue queues[3] = {};
  for (int i = 0; i < 3; ++i) {
    queues[i] = clCreateCommandQueueWithProperties(context, devices[i], nullptr, &error);
    ASSERT_EQ(error, CL_SUCCESS);
  }
  cl_event written = nullptr;
  ASSERT_EQ(clEnqueueWriteBuffer(queues[2], buffer, CL_FALSE, 0, n * sizeof(int), in.data(), 0,
                                 nullptr, &written),
            CL_SUCCESS);
  cl_event done[2] = {};
  for (int tile = 0; tile < 2; ++tile) {
    cl_kernel kernel = clCreateKernel(program, "mark", &error);
    ASSERT_EQ(error, CL_SUCCESS);
    const cl_int mark = tile + 1;
    ASSERT_EQ(clSetKernelArg(kernel, 0, sizeof buffer, &buffer), CL_SUCCESS);
    ASSERT_EQ(clSetKernelArg(kernel, 1, sizeof mark, &mark), CL_SUCCESS);
    const size_t offset = tile * half, global = half, local = 64;
    ASSERT_EQ(clEnqueueNDRangeKernel(queues[tile], kernel, 1, &offset, &global, &local, 1, &written,
                                     &done[tile]),
              CL_SUCCESS);
    clReleaseKernel(kernel);
  }
  std::vector<int> out(n, -1);
  ASSERT_EQ(clEnqueueReadBuffer(queues[2], buffer, CL_TRUE, 0, n * sizeof(int), out.data(), 2, done,
                                nullptr),
            CL_SUCCESS);
  for (size_t i = 0; i < n; ++i) {
    ASSERT_EQ(out[i], int(i) * 10 + (i < half ? 1 : 2)) << "at " << i;
  }
  // Tile 1 reads tile 0's half.
  std::vector<int> seen(half, -1);
  ASSERT_EQ(clEnqueueReadBuffer(queues[1], buffer, CL_TRUE, 0, half * sizeof(int), seen.data(), 0,
                                nullptr, nullptr),
            CL_SUCCESS);
  for (size_t i = 0; i < half; ++i) ASSERT_EQ(seen[i], int(i) * 10 + 1) << "at " << i;
  for (cl_event e : done) clReleaseEvent(e);
  clReleaseEvent(written);
  for (cl_command_queue q : queues) clReleaseCommandQueue(q);
  clReleaseMemObject(buffer);
  clReleaseProgram(program);
  clReleaseContext(context);
  for (int i = 0; i < 2; ++i) EXPECT_EQ(clReleaseDevice(devices[i]), CL_SUCCESS);
}

// A context of one tile only: its buffers, queue and programs work without the root.
TEST_F(LevelZeroSubDevices, ContextOfOneTile) {
  const std::vector<cl_device_id> tiles = partition(CL_DEVICE_AFFINITY_DOMAIN_NUMA);
  ASSERT_EQ(tiles.size(), ze_test::kSubDevices);
  cl_int error = CL_SUCCESS;
  cl_context context = clCreateContext(nullptr, 1, &tiles[1], nullptr, nullptr, &error);
  ASSERT_EQ(error, CL_SUCCESS);
  // The root is not in the context: no queue for it there.
  EXPECT_EQ(clCreateCommandQueueWithProperties(context, root, nullptr, &error), nullptr);
  EXPECT_EQ(error, CL_INVALID_DEVICE);
  cl_command_queue queue = clCreateCommandQueueWithProperties(context, tiles[1], nullptr, &error);
  ASSERT_EQ(error, CL_SUCCESS);
  constexpr size_t n = 1000;
  std::vector<int> in(n), out(n, 0);
  for (size_t i = 0; i < n; ++i) in[i] = int(3 * i + 1);
  cl_mem buffer = clCreateBuffer(context, CL_MEM_READ_WRITE, n * sizeof(int), nullptr, &error);
  ASSERT_EQ(error, CL_SUCCESS);
  const char* source = "kernel void twice(global int* p) { p[get_global_id(0)] *= 2; }";
  cl_program program = clCreateProgramWithSource(context, 1, &source, nullptr, &error);
  ASSERT_EQ(error, CL_SUCCESS);
  ASSERT_EQ(clBuildProgram(program, 1, &tiles[1], "", nullptr, nullptr), CL_SUCCESS);
  cl_kernel kernel = clCreateKernel(program, "twice", &error);
  ASSERT_EQ(error, CL_SUCCESS);
  ASSERT_EQ(clSetKernelArg(kernel, 0, sizeof buffer, &buffer), CL_SUCCESS);
  ASSERT_EQ(clEnqueueWriteBuffer(queue, buffer, CL_FALSE, 0, n * sizeof(int), in.data(), 0, nullptr,
                                 nullptr),
            CL_SUCCESS);
  const size_t global = n;
  ASSERT_EQ(
      clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, nullptr, 0, nullptr, nullptr),
      CL_SUCCESS);
  ASSERT_EQ(clEnqueueReadBuffer(queue, buffer, CL_TRUE, 0, n * sizeof(int), out.data(), 0, nullptr,
                                nullptr),
            CL_SUCCESS);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], 2 * in[i]) << "at " << i;
  clReleaseKernel(kernel);
  clReleaseProgram(program);
  clReleaseMemObject(buffer);
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  for (cl_device_id tile : tiles) EXPECT_EQ(clReleaseDevice(tile), CL_SUCCESS);
}

// Threads partition the root and release their sub-devices at once (TSan: label threads).
TEST_F(LevelZeroSubDevices, ConcurrentPartitions) {
  const cl_device_partition_property props[] = {CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN,
                                                CL_DEVICE_AFFINITY_DOMAIN_NUMA, 0};
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int round = 0; round < 10; ++round) {
        cl_device_id tiles[ze_test::kSubDevices] = {};
        if (clCreateSubDevices(root, props, ze_test::kSubDevices, tiles, nullptr) != CL_SUCCESS) {
          ++failures;
          continue;
        }
        for (cl_device_id tile : tiles) {
          cl_device_id parent = nullptr;
          clGetDeviceInfo(tile, CL_DEVICE_PARENT_DEVICE, sizeof parent, &parent, nullptr);
          if (parent != root) ++failures;
          if (clReleaseDevice(tile) != CL_SUCCESS) ++failures;
        }
      }
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
}

// The one-tile driver's GPU: no scheme splits it into two sub-devices, so it reports none.
TEST(OneTile, ReportsNoPartitionScheme) {
  cl_device_id root = test_gpu();
  ASSERT_NE(root, nullptr) << "the one-tile test driver's device (ZE_ENABLE_ALT_DRIVERS)";
  EXPECT_EQ(info<cl_uint>(root, CL_DEVICE_PARTITION_MAX_SUB_DEVICES), 0u);
  EXPECT_EQ(partition_info(root, CL_DEVICE_PARTITION_PROPERTIES),
            std::vector<cl_device_partition_property>{0});
  EXPECT_EQ(info<cl_device_affinity_domain>(root, CL_DEVICE_PARTITION_AFFINITY_DOMAIN), 0u);
  const cl_device_partition_property numa[] = {CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN,
                                               CL_DEVICE_AFFINITY_DOMAIN_NUMA, 0};
  cl_uint n = 0;
  EXPECT_EQ(clCreateSubDevices(root, numa, 0, nullptr, &n), CL_INVALID_VALUE);
}

}  // namespace
