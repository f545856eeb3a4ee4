// clGetDeviceIDs, clGetDeviceInfo (every OpenCL 3.0 query), version consistency,
// clGetDeviceAndHostTimer / clGetHostTimer, clRetainDevice / clReleaseDevice on a root device.
#include <map>
#include <set>

#include "cl_test.h"

using namespace cltest;

namespace {

enum class Kind {
  Uint,       // cl_uint
  Ulong,      // cl_ulong
  Size,       // size_t
  Bool,       // cl_bool
  Bitfield,   // cl_bitfield (cl_ulong)
  String,     // char[]
  SizeArray,  // size_t[]
  NameVersionArray,
  PartitionArray,  // cl_device_partition_property[]
  Ptr,             // a handle (cl_platform_id, cl_device_id)
};

struct Query {
  cl_device_info param;
  const char* name;
  Kind kind;
};

#define Q(p, k) \
  { p, #p, Kind::k }
const Query kQueries[] = {
    Q(CL_DEVICE_TYPE, Bitfield),
    Q(CL_DEVICE_VENDOR_ID, Uint),
    Q(CL_DEVICE_MAX_COMPUTE_UNITS, Uint),
    Q(CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS, Uint),
    Q(CL_DEVICE_MAX_WORK_ITEM_SIZES, SizeArray),
    Q(CL_DEVICE_MAX_WORK_GROUP_SIZE, Size),
    Q(CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR, Uint),
    Q(CL_DEVICE_PREFERRED_VECTOR_WIDTH_SHORT, Uint),
    Q(CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT, Uint),
    Q(CL_DEVICE_PREFERRED_VECTOR_WIDTH_LONG, Uint),
    Q(CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT, Uint),
    Q(CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE, Uint),
    Q(CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF, Uint),
    Q(CL_DEVICE_NATIVE_VECTOR_WIDTH_CHAR, Uint),
    Q(CL_DEVICE_NATIVE_VECTOR_WIDTH_SHORT, Uint),
    Q(CL_DEVICE_NATIVE_VECTOR_WIDTH_INT, Uint),
    Q(CL_DEVICE_NATIVE_VECTOR_WIDTH_LONG, Uint),
    Q(CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT, Uint),
    Q(CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE, Uint),
    Q(CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF, Uint),
    Q(CL_DEVICE_MAX_CLOCK_FREQUENCY, Uint),
    Q(CL_DEVICE_ADDRESS_BITS, Uint),
    Q(CL_DEVICE_MAX_MEM_ALLOC_SIZE, Ulong),
    Q(CL_DEVICE_IMAGE_SUPPORT, Bool),
    Q(CL_DEVICE_MAX_READ_IMAGE_ARGS, Uint),
    Q(CL_DEVICE_MAX_WRITE_IMAGE_ARGS, Uint),
    Q(CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS, Uint),
    Q(CL_DEVICE_IL_VERSION, String),
    Q(CL_DEVICE_ILS_WITH_VERSION, NameVersionArray),
    Q(CL_DEVICE_IMAGE2D_MAX_WIDTH, Size),
    Q(CL_DEVICE_IMAGE2D_MAX_HEIGHT, Size),
    Q(CL_DEVICE_IMAGE3D_MAX_WIDTH, Size),
    Q(CL_DEVICE_IMAGE3D_MAX_HEIGHT, Size),
    Q(CL_DEVICE_IMAGE3D_MAX_DEPTH, Size),
    Q(CL_DEVICE_IMAGE_MAX_BUFFER_SIZE, Size),
    Q(CL_DEVICE_IMAGE_MAX_ARRAY_SIZE, Size),
    Q(CL_DEVICE_MAX_SAMPLERS, Uint),
    Q(CL_DEVICE_IMAGE_PITCH_ALIGNMENT, Uint),
    Q(CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT, Uint),
    Q(CL_DEVICE_MAX_PIPE_ARGS, Uint),
    Q(CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS, Uint),
    Q(CL_DEVICE_PIPE_MAX_PACKET_SIZE, Uint),
    Q(CL_DEVICE_MAX_PARAMETER_SIZE, Size),
    Q(CL_DEVICE_MEM_BASE_ADDR_ALIGN, Uint),
    Q(CL_DEVICE_MIN_DATA_TYPE_ALIGN_SIZE, Uint),
    Q(CL_DEVICE_SINGLE_FP_CONFIG, Bitfield),
    Q(CL_DEVICE_DOUBLE_FP_CONFIG, Bitfield),
    Q(CL_DEVICE_GLOBAL_MEM_CACHE_TYPE, Uint),
    Q(CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE, Uint),
    Q(CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, Ulong),
    Q(CL_DEVICE_GLOBAL_MEM_SIZE, Ulong),
    Q(CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE, Ulong),
    Q(CL_DEVICE_MAX_CONSTANT_ARGS, Uint),
    Q(CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE, Size),
    Q(CL_DEVICE_GLOBAL_VARIABLE_PREFERRED_TOTAL_SIZE, Size),
    Q(CL_DEVICE_LOCAL_MEM_TYPE, Uint),
    Q(CL_DEVICE_LOCAL_MEM_SIZE, Ulong),
    Q(CL_DEVICE_ERROR_CORRECTION_SUPPORT, Bool),
    Q(CL_DEVICE_HOST_UNIFIED_MEMORY, Bool),
    Q(CL_DEVICE_PROFILING_TIMER_RESOLUTION, Size),
    Q(CL_DEVICE_ENDIAN_LITTLE, Bool),
    Q(CL_DEVICE_AVAILABLE, Bool),
    Q(CL_DEVICE_COMPILER_AVAILABLE, Bool),
    Q(CL_DEVICE_LINKER_AVAILABLE, Bool),
    Q(CL_DEVICE_EXECUTION_CAPABILITIES, Bitfield),
    Q(CL_DEVICE_QUEUE_PROPERTIES, Bitfield),
    Q(CL_DEVICE_QUEUE_ON_HOST_PROPERTIES, Bitfield),
    Q(CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES, Bitfield),
    Q(CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE, Uint),
    Q(CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE, Uint),
    Q(CL_DEVICE_MAX_ON_DEVICE_QUEUES, Uint),
    Q(CL_DEVICE_MAX_ON_DEVICE_EVENTS, Uint),
    Q(CL_DEVICE_BUILT_IN_KERNELS, String),
    Q(CL_DEVICE_BUILT_IN_KERNELS_WITH_VERSION, NameVersionArray),
    Q(CL_DEVICE_PLATFORM, Ptr),
    Q(CL_DEVICE_NAME, String),
    Q(CL_DEVICE_VENDOR, String),
    Q(CL_DRIVER_VERSION, String),
    Q(CL_DEVICE_PROFILE, String),
    Q(CL_DEVICE_VERSION, String),
    Q(CL_DEVICE_NUMERIC_VERSION, Uint),
    Q(CL_DEVICE_OPENCL_C_VERSION, String),
    Q(CL_DEVICE_OPENCL_C_ALL_VERSIONS, NameVersionArray),
    Q(CL_DEVICE_OPENCL_C_FEATURES, NameVersionArray),
    Q(CL_DEVICE_EXTENSIONS, String),
    Q(CL_DEVICE_EXTENSIONS_WITH_VERSION, NameVersionArray),
    Q(CL_DEVICE_PRINTF_BUFFER_SIZE, Size),
    Q(CL_DEVICE_PREFERRED_INTEROP_USER_SYNC, Bool),
    Q(CL_DEVICE_PARENT_DEVICE, Ptr),
    Q(CL_DEVICE_PARTITION_MAX_SUB_DEVICES, Uint),
    Q(CL_DEVICE_PARTITION_PROPERTIES, PartitionArray),
    Q(CL_DEVICE_PARTITION_AFFINITY_DOMAIN, Bitfield),
    Q(CL_DEVICE_PARTITION_TYPE, PartitionArray),
    Q(CL_DEVICE_REFERENCE_COUNT, Uint),
    Q(CL_DEVICE_SVM_CAPABILITIES, Bitfield),
    Q(CL_DEVICE_PREFERRED_PLATFORM_ATOMIC_ALIGNMENT, Uint),
    Q(CL_DEVICE_PREFERRED_GLOBAL_ATOMIC_ALIGNMENT, Uint),
    Q(CL_DEVICE_PREFERRED_LOCAL_ATOMIC_ALIGNMENT, Uint),
    Q(CL_DEVICE_MAX_NUM_SUB_GROUPS, Uint),
    Q(CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS, Bool),
    Q(CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES, Bitfield),
    Q(CL_DEVICE_ATOMIC_FENCE_CAPABILITIES, Bitfield),
    Q(CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT, Bool),
    Q(CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT, Bool),
    Q(CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT, Bool),
    Q(CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES, Bitfield),
    Q(CL_DEVICE_PIPE_SUPPORT, Bool),
    Q(CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, Size),
    Q(CL_DEVICE_LATEST_CONFORMANCE_VERSION_PASSED, String),
};
#undef Q

size_t fixedSize(Kind k) {
  switch (k) {
    case Kind::Uint:
      return sizeof(cl_uint);
    case Kind::Ulong:
      return sizeof(cl_ulong);
    case Kind::Size:
      return sizeof(size_t);
    case Kind::Bool:
      return sizeof(cl_bool);
    case Kind::Bitfield:
      return sizeof(cl_bitfield);
    case Kind::Ptr:
      return sizeof(void*);
    default:
      return 0;
  }
}
size_t elementSize(Kind k) {
  switch (k) {
    case Kind::String:
      return 1;
    case Kind::SizeArray:
      return sizeof(size_t);
    case Kind::NameVersionArray:
      return sizeof(cl_name_version);
    case Kind::PartitionArray:
      return sizeof(cl_device_partition_property);
    default:
      return fixedSize(k);
  }
}

class DeviceInfoTest : public DeviceTest, public ::testing::WithParamInterface<Query> {};

// Every query: the size query succeeds, fixed-size results report exactly sizeof(type), arrays a
// multiple of the element size, strings are NUL-terminated; a too-small buffer is CL_INVALID_VALUE.
TEST_P(DeviceInfoTest, SizeSemantics) {
  const Query& q = GetParam();
  if (q.param == CL_DEVICE_NUMERIC_VERSION || q.param == CL_DEVICE_OPENCL_C_ALL_VERSIONS ||
      q.param == CL_DEVICE_OPENCL_C_FEATURES || q.param == CL_DEVICE_EXTENSIONS_WITH_VERSION ||
      q.param == CL_DEVICE_ILS_WITH_VERSION || q.param == CL_DEVICE_BUILT_IN_KERNELS_WITH_VERSION ||
      q.param == CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES ||
      q.param == CL_DEVICE_ATOMIC_FENCE_CAPABILITIES ||
      q.param == CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT ||
      q.param == CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT ||
      q.param == CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT ||
      q.param == CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES || q.param == CL_DEVICE_PIPE_SUPPORT ||
      q.param == CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE ||
      q.param == CL_DEVICE_LATEST_CONFORMANCE_VERSION_PASSED) {
    if (!caps_.atLeast(3, 0)) GTEST_SKIP() << q.name << " is an OpenCL 3.0 query";
  }
  size_t size = 12345;
  ASSERT_CL(CL_SUCCESS, clGetDeviceInfo(device_, q.param, 0, nullptr, &size)) << q.name;
  size_t fixed = fixedSize(q.kind);
  if (fixed) {
    EXPECT_EQ(size, fixed) << q.name;
  } else {
    EXPECT_EQ(size % elementSize(q.kind), 0u) << q.name << " size " << size;
  }
  if (q.kind == Kind::String) {
    EXPECT_GE(size, 1u) << q.name << " must at least hold the NUL";
  }
  std::vector<unsigned char> buf(size + 64, 0xAB);
  size_t ret = 0;
  ASSERT_CL(CL_SUCCESS, clGetDeviceInfo(device_, q.param, size, size ? buf.data() : nullptr, &ret))
      << q.name;
  EXPECT_EQ(ret, size) << q.name;
  // Nothing was written past the reported size.
  for (size_t i = size; i < buf.size(); ++i)
    ASSERT_EQ(buf[i], 0xAB) << q.name << " wrote past size at " << i;
  if (q.kind == Kind::String) {
    EXPECT_EQ(buf[size - 1], 0) << q.name << " not NUL-terminated";
  }
  // A bigger buffer is fine and the reported size does not change.
  ret = 0;
  EXPECT_CL(CL_SUCCESS, clGetDeviceInfo(device_, q.param, buf.size(), buf.data(), &ret)) << q.name;
  EXPECT_EQ(ret, size) << q.name;
  // One byte too small -> CL_INVALID_VALUE.
  if (size > 0) {
    EXPECT_CL(CL_INVALID_VALUE, clGetDeviceInfo(device_, q.param, size - 1, buf.data(), nullptr))
        << q.name;
  }
}

INSTANTIATE_TEST_SUITE_P(AllQueries, DeviceInfoTest, ::testing::ValuesIn(kQueries),
                         [](const ::testing::TestParamInfo<Query>& i) {
                           return std::string(i.param.name).substr(3);
                         });

class DeviceQueries : public DeviceTest {};

TEST_F(DeviceQueries, InvalidParamName) {
  char buf[64];
  EXPECT_CL(CL_INVALID_VALUE, clGetDeviceInfo(device_, 0, sizeof(buf), buf, nullptr));
  EXPECT_CL(CL_INVALID_VALUE,
            clGetDeviceInfo(device_, CL_PLATFORM_NAME, sizeof(buf), buf, nullptr));
  EXPECT_CL(CL_INVALID_VALUE, clGetDeviceInfo(device_, 0x7fffffff, 0, nullptr, nullptr));
}

TEST_F(DeviceQueries, ExtensionQueryWithoutExtension) {
  // "CL_INVALID_VALUE if param_name is a value that is available as an extension and the
  // corresponding extension is not supported by the device."
  if (caps_.hasExtension("cl_khr_fp16")) {
    cl_device_fp_config c = deviceInfo<cl_device_fp_config>(device_, CL_DEVICE_HALF_FP_CONFIG);
    EXPECT_NE(c, 0u) << "cl_khr_fp16 reported but CL_DEVICE_HALF_FP_CONFIG is 0";
  } else {
    cl_device_fp_config c = 0;
    EXPECT_CL(CL_INVALID_VALUE,
              clGetDeviceInfo(device_, CL_DEVICE_HALF_FP_CONFIG, sizeof(c), &c, nullptr));
  }
}

TEST_F(DeviceQueries, SaneValues) {
  cl_device_type type = deviceInfo<cl_device_type>(device_, CL_DEVICE_TYPE);
  EXPECT_NE(type & (CL_DEVICE_TYPE_CPU | CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_ACCELERATOR |
                    CL_DEVICE_TYPE_CUSTOM),
            0u);
  EXPECT_EQ(type & ~(CL_DEVICE_TYPE_CPU | CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_ACCELERATOR |
                     CL_DEVICE_TYPE_CUSTOM | CL_DEVICE_TYPE_DEFAULT),
            0u);
  bool custom = (type & CL_DEVICE_TYPE_CUSTOM) != 0;
  std::string profile = deviceString(device_, CL_DEVICE_PROFILE);
  EXPECT_TRUE(profile == "FULL_PROFILE" || profile == "EMBEDDED_PROFILE") << profile;
  bool full = profile == "FULL_PROFILE";

  EXPECT_GE(deviceInfo<cl_uint>(device_, CL_DEVICE_MAX_COMPUTE_UNITS), 1u);
  cl_uint dims = deviceInfo<cl_uint>(device_, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS);
  if (!custom) {
    EXPECT_GE(dims, 3u);
  }
  auto sizes = infoVector<size_t>(clGetDeviceInfo, device_, CL_DEVICE_MAX_WORK_ITEM_SIZES);
  EXPECT_EQ(sizes.size(), dims);
  size_t wg = deviceInfo<size_t>(device_, CL_DEVICE_MAX_WORK_GROUP_SIZE);
  EXPECT_GE(wg, 1u);
  for (size_t s : sizes) {
    EXPECT_GE(s, 1u);
  }
  if (!sizes.empty()) {
    EXPECT_LE(sizes[0], std::max<size_t>(wg, sizes[0]));
  }

  cl_uint bits = deviceInfo<cl_uint>(device_, CL_DEVICE_ADDRESS_BITS);
  EXPECT_TRUE(bits == 32 || bits == 64) << bits;
  if (isCpuDevice(device_)) {
    EXPECT_EQ(bits, sizeof(void*) * 8) << "a CPU device shares the host's address size";
  }

  cl_ulong global = deviceInfo<cl_ulong>(device_, CL_DEVICE_GLOBAL_MEM_SIZE);
  cl_ulong maxAlloc = deviceInfo<cl_ulong>(device_, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
  EXPECT_GT(global, 0u);
  EXPECT_LE(maxAlloc, global);
  if (full && !custom) {
    // OpenCL 3.0 minimum: max(min(1 GiB, 1/4 of global memory), 32 MiB).
    EXPECT_GE(maxAlloc,
              std::max<cl_ulong>(std::min<cl_ulong>(1ull << 30, global / 4), 32ull << 20));
    EXPECT_GE(deviceInfo<cl_ulong>(device_, CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE), 64u * 1024);
    EXPECT_GE(deviceInfo<cl_uint>(device_, CL_DEVICE_MAX_CONSTANT_ARGS), 8u);
    EXPECT_GE(deviceInfo<cl_ulong>(device_, CL_DEVICE_LOCAL_MEM_SIZE), 32u * 1024);
    EXPECT_GE(deviceInfo<size_t>(device_, CL_DEVICE_MAX_PARAMETER_SIZE), 1024u);
    EXPECT_GE(deviceInfo<size_t>(device_, CL_DEVICE_PRINTF_BUFFER_SIZE), 1024u * 1024);
  }
  // Base address alignment in bits: at least the size of the largest built-in type (long16).
  if (full && !custom) {
    EXPECT_GE(deviceInfo<cl_uint>(device_, CL_DEVICE_MEM_BASE_ADDR_ALIGN), 1024u);
  }
  cl_uint align = deviceInfo<cl_uint>(device_, CL_DEVICE_MEM_BASE_ADDR_ALIGN);
  EXPECT_EQ(align & (align - 1), 0u) << "MEM_BASE_ADDR_ALIGN must be a power of two";

  cl_device_fp_config sp = deviceInfo<cl_device_fp_config>(device_, CL_DEVICE_SINGLE_FP_CONFIG);
  if (full && !custom) {
    EXPECT_EQ(sp & (CL_FP_ROUND_TO_NEAREST | CL_FP_INF_NAN),
              CL_FP_ROUND_TO_NEAREST | CL_FP_INF_NAN);
  }
  cl_device_fp_config dp = deviceInfo<cl_device_fp_config>(device_, CL_DEVICE_DOUBLE_FP_CONFIG);
  if (dp != 0) {
    cl_device_fp_config need = CL_FP_FMA | CL_FP_ROUND_TO_NEAREST | CL_FP_INF_NAN | CL_FP_DENORM;
    if (full) {
      EXPECT_EQ(dp & need, need) << "double support requires FMA|RTE|INF_NAN|DENORM";
    }
  }
  EXPECT_EQ(dp != 0, caps_.hasExtension("cl_khr_fp64"))
      << "cl_khr_fp64 iff CL_DEVICE_DOUBLE_FP_CONFIG != 0";
  if (dp == 0) {
    EXPECT_EQ(deviceInfo<cl_uint>(device_, CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE), 0u);
    EXPECT_EQ(deviceInfo<cl_uint>(device_, CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE), 0u);
  }
  if (!caps_.hasExtension("cl_khr_fp16")) {
    EXPECT_EQ(deviceInfo<cl_uint>(device_, CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF), 0u);
    EXPECT_EQ(deviceInfo<cl_uint>(device_, CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF), 0u);
  } else {
    // cl_khr_fp16's minimum: round to nearest or to zero, and infinities and NaNs.
    const auto hp = deviceInfo<cl_device_fp_config>(device_, CL_DEVICE_HALF_FP_CONFIG);
    EXPECT_NE(hp & (CL_FP_ROUND_TO_NEAREST | CL_FP_ROUND_TO_ZERO), 0u);
    EXPECT_NE(hp & CL_FP_INF_NAN, 0u);
    EXPECT_GE(deviceInfo<cl_uint>(device_, CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF), 1u);
    EXPECT_GE(deviceInfo<cl_uint>(device_, CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF), 1u);
  }
  for (cl_device_info p :
       {CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR, CL_DEVICE_PREFERRED_VECTOR_WIDTH_SHORT,
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT, CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT,
        CL_DEVICE_NATIVE_VECTOR_WIDTH_CHAR, CL_DEVICE_NATIVE_VECTOR_WIDTH_SHORT,
        CL_DEVICE_NATIVE_VECTOR_WIDTH_INT, CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT}) {
    EXPECT_GE(deviceInfo<cl_uint>(device_, p), 1u) << "0x" << std::hex << p;
  }
  // Applications compile with the vector type these name (hash crackers pick uintN from
  // them): a width OpenCL C has no type for (char64 on AVX-512) would break them.
  for (cl_device_info p :
       {CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR, CL_DEVICE_PREFERRED_VECTOR_WIDTH_SHORT,
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT, CL_DEVICE_PREFERRED_VECTOR_WIDTH_LONG,
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT, CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE,
        CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF, CL_DEVICE_NATIVE_VECTOR_WIDTH_CHAR,
        CL_DEVICE_NATIVE_VECTOR_WIDTH_SHORT, CL_DEVICE_NATIVE_VECTOR_WIDTH_INT,
        CL_DEVICE_NATIVE_VECTOR_WIDTH_LONG, CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT,
        CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE, CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF}) {
    const cl_uint width = deviceInfo<cl_uint>(device_, p);
    EXPECT_TRUE(width == 0 || width == 1 || width == 2 || width == 3 || width == 4 || width == 8 ||
                width == 16)
        << "0x" << std::hex << p << ": " << std::dec << width;
  }

  cl_uint cacheType =
      deviceInfo<cl_device_mem_cache_type>(device_, CL_DEVICE_GLOBAL_MEM_CACHE_TYPE);
  EXPECT_TRUE(cacheType == CL_NONE || cacheType == CL_READ_ONLY_CACHE ||
              cacheType == CL_READ_WRITE_CACHE);
  cl_uint localType = deviceInfo<cl_device_local_mem_type>(device_, CL_DEVICE_LOCAL_MEM_TYPE);
  EXPECT_TRUE(localType == CL_LOCAL || localType == CL_GLOBAL || (custom && localType == CL_NONE));

  EXPECT_EQ(deviceInfo<cl_bool>(device_, CL_DEVICE_AVAILABLE), (cl_bool)CL_TRUE);
  cl_bool little = deviceInfo<cl_bool>(device_, CL_DEVICE_ENDIAN_LITTLE);
  EXPECT_TRUE(little == CL_TRUE || little == CL_FALSE);
  if (full) {
    EXPECT_EQ(deviceInfo<cl_bool>(device_, CL_DEVICE_COMPILER_AVAILABLE), (cl_bool)CL_TRUE)
        << "FULL_PROFILE requires a compiler";
  }
  if (!caps_.compiler) {
    EXPECT_FALSE(caps_.linker) << "linker without compiler";
  }

  cl_device_exec_capabilities exec =
      deviceInfo<cl_device_exec_capabilities>(device_, CL_DEVICE_EXECUTION_CAPABILITIES);
  EXPECT_TRUE(exec & CL_EXEC_KERNEL);
  EXPECT_EQ(exec & ~(cl_device_exec_capabilities)(CL_EXEC_KERNEL | CL_EXEC_NATIVE_KERNEL), 0u);

  cl_command_queue_properties hostq =
      deviceInfo<cl_command_queue_properties>(device_, CL_DEVICE_QUEUE_ON_HOST_PROPERTIES);
  EXPECT_TRUE(hostq & CL_QUEUE_PROFILING_ENABLE) << "profiling is mandatory on host queues";
  EXPECT_EQ(hostq & ~(cl_command_queue_properties)(CL_QUEUE_PROFILING_ENABLE |
                                                   CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE),
            0u);
  EXPECT_EQ(deviceInfo<cl_command_queue_properties>(device_, CL_DEVICE_QUEUE_PROPERTIES), hostq)
      << "CL_DEVICE_QUEUE_PROPERTIES is the same query as QUEUE_ON_HOST_PROPERTIES";

  EXPECT_EQ(deviceInfo<cl_platform_id>(device_, CL_DEVICE_PLATFORM), platform_);
  EXPECT_EQ(deviceInfo<cl_device_id>(device_, CL_DEVICE_PARENT_DEVICE), nullptr) << "root device";
  EXPECT_EQ(deviceInfo<cl_uint>(device_, CL_DEVICE_REFERENCE_COUNT), 1u)
      << "root device reference count is 1";

  EXPECT_FALSE(deviceString(device_, CL_DEVICE_NAME).empty());
  EXPECT_FALSE(deviceString(device_, CL_DEVICE_VENDOR).empty());

  // Partition properties: a list terminated by 0, or a single 0 when partitioning is unsupported.
  auto pp = infoVector<cl_device_partition_property>(clGetDeviceInfo, device_,
                                                     CL_DEVICE_PARTITION_PROPERTIES);
  cl_uint maxSub = deviceInfo<cl_uint>(device_, CL_DEVICE_PARTITION_MAX_SUB_DEVICES);
  if (maxSub <= 1) {
    bool none = pp.empty() || (pp.size() == 1 && pp[0] == 0);
    EXPECT_TRUE(none) << "no partitioning (max sub-devices " << maxSub
                      << ") but partition properties reported";
  }
  for (auto p : pp) {
    EXPECT_TRUE(p == 0 || p == CL_DEVICE_PARTITION_EQUALLY || p == CL_DEVICE_PARTITION_BY_COUNTS ||
                p == CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN)
        << p;
  }
  // Root device: partition type is empty or a single 0.
  auto pt =
      infoVector<cl_device_partition_property>(clGetDeviceInfo, device_, CL_DEVICE_PARTITION_TYPE);
  EXPECT_TRUE(pt.empty() || (pt.size() == 1 && pt[0] == 0))
      << "root device CL_DEVICE_PARTITION_TYPE";

  if (!caps_.images) {
    // Image limits of a device without images must be 0 (3.0: "If image support is not
    // present ... 0").
    for (cl_device_info p : {CL_DEVICE_MAX_READ_IMAGE_ARGS, CL_DEVICE_MAX_WRITE_IMAGE_ARGS,
                             CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS, CL_DEVICE_MAX_SAMPLERS}) {
      EXPECT_EQ(deviceInfo<cl_uint>(device_, p), 0u) << "0x" << std::hex << p;
    }
  } else if (full) {
    EXPECT_GE(deviceInfo<cl_uint>(device_, CL_DEVICE_MAX_READ_IMAGE_ARGS), 128u);
    EXPECT_GE(deviceInfo<cl_uint>(device_, CL_DEVICE_MAX_WRITE_IMAGE_ARGS), 64u);
    EXPECT_GE(deviceInfo<size_t>(device_, CL_DEVICE_IMAGE2D_MAX_WIDTH), 16384u);
    EXPECT_GE(deviceInfo<size_t>(device_, CL_DEVICE_IMAGE2D_MAX_HEIGHT), 16384u);
    EXPECT_GE(deviceInfo<size_t>(device_, CL_DEVICE_IMAGE3D_MAX_WIDTH), 2048u);
    EXPECT_GE(deviceInfo<cl_uint>(device_, CL_DEVICE_MAX_SAMPLERS), 16u);
  }
  if (!caps_.pipes) {
    EXPECT_EQ(deviceInfo<cl_uint>(device_, CL_DEVICE_MAX_PIPE_ARGS), 0u);
    EXPECT_EQ(deviceInfo<cl_uint>(device_, CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS), 0u);
    EXPECT_EQ(deviceInfo<cl_uint>(device_, CL_DEVICE_PIPE_MAX_PACKET_SIZE), 0u);
  }
  if (caps_.deviceEnqueue == 0) {
    EXPECT_EQ(
        deviceInfo<cl_command_queue_properties>(device_, CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES), 0u);
    EXPECT_EQ(deviceInfo<cl_uint>(device_, CL_DEVICE_MAX_ON_DEVICE_QUEUES), 0u);
    EXPECT_EQ(deviceInfo<cl_uint>(device_, CL_DEVICE_MAX_ON_DEVICE_EVENTS), 0u);
  }
  cl_device_svm_capabilities svm = caps_.svm;
  EXPECT_EQ(
      svm & ~(cl_device_svm_capabilities)(CL_DEVICE_SVM_COARSE_GRAIN_BUFFER |
                                          CL_DEVICE_SVM_FINE_GRAIN_BUFFER |
                                          CL_DEVICE_SVM_FINE_GRAIN_SYSTEM | CL_DEVICE_SVM_ATOMICS),
      0u);
  if (svm & CL_DEVICE_SVM_ATOMICS) {
    EXPECT_TRUE(svm & CL_DEVICE_SVM_FINE_GRAIN_BUFFER) << "SVM atomics need fine grain";
  }
  if (svm & CL_DEVICE_SVM_FINE_GRAIN_BUFFER) {
    EXPECT_TRUE(svm & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER);
  }

  if (caps_.atLeast(3, 0)) {
    auto amc =
        deviceInfo<cl_device_atomic_capabilities>(device_, CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES);
    auto afc =
        deviceInfo<cl_device_atomic_capabilities>(device_, CL_DEVICE_ATOMIC_FENCE_CAPABILITIES);
    // Mandatory minimums (3.0): memory relaxed + work-group; fence relaxed + acq_rel + work-group.
    EXPECT_EQ(amc & (CL_DEVICE_ATOMIC_ORDER_RELAXED | CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP),
              (cl_device_atomic_capabilities)(CL_DEVICE_ATOMIC_ORDER_RELAXED |
                                              CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP));
    EXPECT_EQ(afc & (CL_DEVICE_ATOMIC_ORDER_RELAXED | CL_DEVICE_ATOMIC_ORDER_ACQ_REL |
                     CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP),
              (cl_device_atomic_capabilities)(CL_DEVICE_ATOMIC_ORDER_RELAXED |
                                              CL_DEVICE_ATOMIC_ORDER_ACQ_REL |
                                              CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP));
    size_t mult = deviceInfo<size_t>(device_, CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE);
    EXPECT_GE(mult, 1u);
    EXPECT_LE(mult, wg);
  }
}

TEST_F(DeviceQueries, VersionConsistency) {
  std::string ver = deviceString(device_, CL_DEVICE_VERSION);
  int M = 0, m = 0;
  ASSERT_TRUE(parseVersion(ver, "OpenCL ", M, m)) << "CL_DEVICE_VERSION '" << ver << "'";
  // Format "OpenCL<space><major.minor><space><vendor-specific information>".
  int M2, m2;
  char sp = 0;
  EXPECT_EQ(std::sscanf(ver.c_str(), "OpenCL %d.%d%c", &M2, &m2, &sp), 3);
  EXPECT_EQ(sp, ' ') << "'" << ver << "'";
  // The device version may not exceed the platform version.
  int PM = 0, Pm = 0;
  ASSERT_TRUE(parseVersion(platformString(platform_, CL_PLATFORM_VERSION), "OpenCL ", PM, Pm));
  EXPECT_LE(M * 10 + m, PM * 10 + Pm) << "device version " << ver << " above platform";
  if (M < 3) GTEST_SKIP() << "OpenCL 3.0 version queries";

  cl_version nv = deviceInfo<cl_version>(device_, CL_DEVICE_NUMERIC_VERSION);
  EXPECT_EQ(CL_VERSION_MAJOR(nv), (cl_uint)M);
  EXPECT_EQ(CL_VERSION_MINOR(nv), (cl_uint)m);

  auto all = infoVector<cl_name_version>(clGetDeviceInfo, device_, CL_DEVICE_OPENCL_C_ALL_VERSIONS);
  std::set<std::pair<cl_uint, cl_uint>> cver;
  for (auto& nv2 : all) {
    ASSERT_LT(strnlen(nv2.name, CL_NAME_VERSION_MAX_NAME_SIZE),
              (size_t)CL_NAME_VERSION_MAX_NAME_SIZE);
    EXPECT_STREQ(nv2.name, "OpenCL C")
        << "every CL_DEVICE_OPENCL_C_ALL_VERSIONS entry is named 'OpenCL C'";
    cver.insert({CL_VERSION_MAJOR(nv2.version), CL_VERSION_MINOR(nv2.version)});
  }
  if (caps_.compiler) {
    EXPECT_FALSE(all.empty());
    std::string cv = deviceString(device_, CL_DEVICE_OPENCL_C_VERSION);
    int CM = 0, Cm = 0;
    ASSERT_TRUE(parseVersion(cv, "OpenCL C ", CM, Cm))
        << "CL_DEVICE_OPENCL_C_VERSION '" << cv << "'";
    EXPECT_TRUE(cver.count({(cl_uint)CM, (cl_uint)Cm}))
        << "CL_DEVICE_OPENCL_C_VERSION " << cv
        << " must be listed in CL_DEVICE_OPENCL_C_ALL_VERSIONS";
    // An OpenCL 3.0 device supports at least OpenCL C 1.2, and lists OpenCL C 3.0.
    EXPECT_GE(CM * 10 + Cm, 12) << cv;
    EXPECT_TRUE(cver.count({1, 2})) << "OpenCL C 1.2 missing from ALL_VERSIONS";
    EXPECT_TRUE(cver.count({3, 0})) << "OpenCL C 3.0 missing from ALL_VERSIONS";
    // OpenCL C 1.2 includes the versions before it: programs with -cl-std=CL1.1 build too.
    EXPECT_TRUE(cver.count({1, 0})) << "OpenCL C 1.0 missing from ALL_VERSIONS";
    EXPECT_TRUE(cver.count({1, 1})) << "OpenCL C 1.1 missing from ALL_VERSIONS";
    for (auto [a, b] : cver)
      EXPECT_LE(a * 10 + b, (cl_uint)(M * 10 + m)) << "OpenCL C " << a << "." << b;
  }
}

TEST_F(DeviceQueries, ExtensionsWithVersionMatchString) {
  if (!caps_.atLeast(3, 0)) GTEST_SKIP() << "OpenCL 3.0 query";
  auto words = splitSpaces(deviceString(device_, CL_DEVICE_EXTENSIONS));
  std::set<std::string> fromString(words.begin(), words.end());
  EXPECT_EQ(fromString.size(), words.size()) << "duplicate extension names";
  auto list =
      infoVector<cl_name_version>(clGetDeviceInfo, device_, CL_DEVICE_EXTENSIONS_WITH_VERSION);
  std::set<std::string> fromList;
  for (auto& nv : list) {
    ASSERT_LT(strnlen(nv.name, CL_NAME_VERSION_MAX_NAME_SIZE),
              (size_t)CL_NAME_VERSION_MAX_NAME_SIZE);
    EXPECT_TRUE(fromList.insert(nv.name).second) << "duplicate " << nv.name;
  }
  EXPECT_EQ(fromString, fromList);
}

TEST_F(DeviceQueries, BuiltInKernelsAndILsConsistent) {
  if (!caps_.atLeast(3, 0)) GTEST_SKIP() << "OpenCL 3.0 query";
  // Built-in kernels: a semicolon-separated list vs. the name/version list.
  std::string bik = deviceString(device_, CL_DEVICE_BUILT_IN_KERNELS);
  std::set<std::string> fromString;
  size_t pos = 0;
  while (pos <= bik.size() && !bik.empty()) {
    size_t semi = bik.find(';', pos);
    std::string n = bik.substr(pos, semi == std::string::npos ? std::string::npos : semi - pos);
    if (!n.empty()) fromString.insert(n);
    if (semi == std::string::npos) break;
    pos = semi + 1;
  }
  std::set<std::string> fromList;
  for (auto& nv : infoVector<cl_name_version>(clGetDeviceInfo, device_,
                                              CL_DEVICE_BUILT_IN_KERNELS_WITH_VERSION))
    fromList.insert(nv.name);
  EXPECT_EQ(fromString, fromList);
  // ILs: IL_VERSION is a space-separated list of "<IL_Prefix>_<Major>.<Minor>".
  auto ils = splitSpaces(deviceString(device_, CL_DEVICE_IL_VERSION));
  auto ilList = infoVector<cl_name_version>(clGetDeviceInfo, device_, CL_DEVICE_ILS_WITH_VERSION);
  EXPECT_EQ(ils.size(), ilList.size()) << "CL_DEVICE_IL_VERSION vs CL_DEVICE_ILS_WITH_VERSION";
  for (auto& nv : ilList) {
    std::string want = std::string(nv.name) + "_" + std::to_string(CL_VERSION_MAJOR(nv.version)) +
                       "." + std::to_string(CL_VERSION_MINOR(nv.version));
    EXPECT_TRUE(std::find(ils.begin(), ils.end(), want) != ils.end())
        << want << " not in CL_DEVICE_IL_VERSION";
  }
}

TEST_F(DeviceQueries, OpenCLCFeaturesMatchQueries) {
  if (!caps_.atLeast(3, 0)) GTEST_SKIP() << "OpenCL 3.0 query";
  std::map<std::string, cl_version> f;
  for (auto& nv :
       infoVector<cl_name_version>(clGetDeviceInfo, device_, CL_DEVICE_OPENCL_C_FEATURES)) {
    ASSERT_LT(strnlen(nv.name, CL_NAME_VERSION_MAX_NAME_SIZE),
              (size_t)CL_NAME_VERSION_MAX_NAME_SIZE);
    EXPECT_EQ(std::string(nv.name).rfind("__opencl_c_", 0), 0u) << nv.name;
    f[nv.name] = nv.version;
  }
  if (!caps_.compiler) GTEST_SKIP() << "no compiler: OpenCL C features are not tied to queries";
  auto has = [&](const char* n) { return f.count(n) != 0; };
  EXPECT_EQ(has("__opencl_c_images"), caps_.images)
      << "__opencl_c_images vs CL_DEVICE_IMAGE_SUPPORT";
  if (has("__opencl_c_3d_image_writes")) {
    EXPECT_TRUE(caps_.images);
  }
  if (has("__opencl_c_read_write_images")) {
    EXPECT_GT(deviceInfo<cl_uint>(device_, CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS), 0u);
  }
  EXPECT_EQ(has("__opencl_c_pipes"), caps_.pipes) << "__opencl_c_pipes vs CL_DEVICE_PIPE_SUPPORT";
  EXPECT_EQ(has("__opencl_c_generic_address_space"),
            deviceInfo<cl_bool>(device_, CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT) == CL_TRUE);
  EXPECT_EQ(has("__opencl_c_device_enqueue"), caps_.deviceEnqueue != 0);
  EXPECT_EQ(
      has("__opencl_c_work_group_collective_functions"),
      deviceInfo<cl_bool>(device_, CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT) == CL_TRUE);
  EXPECT_EQ(has("__opencl_c_program_scope_global_variables"),
            deviceInfo<size_t>(device_, CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE) != 0);
  EXPECT_EQ(has("__opencl_c_subgroups"),
            deviceInfo<cl_uint>(device_, CL_DEVICE_MAX_NUM_SUB_GROUPS) != 0);
  EXPECT_EQ(has("__opencl_c_fp64"),
            deviceInfo<cl_device_fp_config>(device_, CL_DEVICE_DOUBLE_FP_CONFIG) != 0);
  if (deviceString(device_, CL_DEVICE_PROFILE) == "FULL_PROFILE") {
    EXPECT_TRUE(has("__opencl_c_int64"));
  }
  // Atomic features: a reported feature needs the matching capability bit. (The converse is not
  // required: PoCL, for one, reports ALL_DEVICES scope without
  // __opencl_c_atomic_scope_all_devices.)
  auto amc =
      deviceInfo<cl_device_atomic_capabilities>(device_, CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES);
  if (has("__opencl_c_atomic_order_acq_rel")) {
    EXPECT_TRUE(amc & CL_DEVICE_ATOMIC_ORDER_ACQ_REL);
  }
  if (has("__opencl_c_atomic_order_seq_cst")) {
    EXPECT_TRUE(amc & CL_DEVICE_ATOMIC_ORDER_SEQ_CST);
  }
  if (has("__opencl_c_atomic_scope_device")) {
    EXPECT_TRUE(amc & CL_DEVICE_ATOMIC_SCOPE_DEVICE);
  }
  if (has("__opencl_c_atomic_scope_all_devices")) {
    EXPECT_TRUE(amc & CL_DEVICE_ATOMIC_SCOPE_ALL_DEVICES);
  }
}

// ---------------------------------------------------------------------------------------------
// clGetDeviceIDs

TEST_F(DeviceQueries, GetDeviceIDsErrors) {
  cl_device_id d = nullptr;
  cl_uint n = 0;
  EXPECT_CL(CL_INVALID_DEVICE_TYPE, clGetDeviceIDs(platform_, 0x80000000ull, 1, &d, &n));
  EXPECT_CL(CL_INVALID_DEVICE_TYPE, clGetDeviceIDs(platform_, 0, 1, &d, &n));
  EXPECT_CL(CL_INVALID_VALUE, clGetDeviceIDs(platform_, CL_DEVICE_TYPE_ALL, 0, &d, &n));
  EXPECT_CL(CL_INVALID_VALUE, clGetDeviceIDs(platform_, CL_DEVICE_TYPE_ALL, 1, nullptr, nullptr));
  // A type no device has -> CL_DEVICE_NOT_FOUND.
  cl_device_type present = 0;
  cl_uint all = 0;
  ASSERT_CL(CL_SUCCESS, clGetDeviceIDs(platform_, CL_DEVICE_TYPE_ALL, 0, nullptr, &all));
  std::vector<cl_device_id> devs(all);
  ASSERT_CL(CL_SUCCESS, clGetDeviceIDs(platform_, CL_DEVICE_TYPE_ALL, all, devs.data(), nullptr));
  for (auto dv : devs) present |= deviceInfo<cl_device_type>(dv, CL_DEVICE_TYPE);
  for (cl_device_type t : {CL_DEVICE_TYPE_GPU, CL_DEVICE_TYPE_ACCELERATOR, CL_DEVICE_TYPE_CUSTOM,
                           CL_DEVICE_TYPE_CPU}) {
    if (present & t) continue;
    EXPECT_CL(CL_DEVICE_NOT_FOUND, clGetDeviceIDs(platform_, t, 1, &d, &n)) << "type " << t;
  }
}

TEST_F(DeviceQueries, GetDeviceIDsTypes) {
  cl_uint all = 0;
  ASSERT_CL(CL_SUCCESS, clGetDeviceIDs(platform_, CL_DEVICE_TYPE_ALL, 0, nullptr, &all));
  ASSERT_GE(all, 1u);
  // The default device exists, and is one of the platform's devices.
  cl_device_id def = nullptr;
  cl_uint ndef = 0;
  ASSERT_CL(CL_SUCCESS, clGetDeviceIDs(platform_, CL_DEVICE_TYPE_DEFAULT, 1, &def, &ndef));
  EXPECT_GE(ndef, 1u);
  std::vector<cl_device_id> devs(all);
  ASSERT_CL(CL_SUCCESS, clGetDeviceIDs(platform_, CL_DEVICE_TYPE_ALL, all, devs.data(), nullptr));
  EXPECT_NE(std::find(devs.begin(), devs.end(), def), devs.end());
  // Same handles on a second call.
  std::vector<cl_device_id> again(all);
  ASSERT_CL(CL_SUCCESS, clGetDeviceIDs(platform_, CL_DEVICE_TYPE_ALL, all, again.data(), nullptr));
  EXPECT_EQ(devs, again);
  // The device under test has the requested type.
  cl_device_type want = wantedDeviceType();
  if (want != CL_DEVICE_TYPE_ALL) {
    EXPECT_TRUE(deviceInfo<cl_device_type>(device_, CL_DEVICE_TYPE) & want);
  }
}

TEST_F(DeviceQueries, GetDeviceIDsWrongPlatformHandle) {
  cl_uint n = 0;
  EXPECT_CL(CL_INVALID_PLATFORM, clGetDeviceIDs(reinterpret_cast<cl_platform_id>(device_),
                                                CL_DEVICE_TYPE_ALL, 0, nullptr, &n));
}

TEST_F(DeviceQueries, GetDeviceInfoWrongHandle) {
  cl_uint v = 0;
  EXPECT_CL(CL_INVALID_DEVICE, clGetDeviceInfo(reinterpret_cast<cl_device_id>(platform_),
                                               CL_DEVICE_VENDOR_ID, sizeof(v), &v, nullptr));
  EXPECT_CL(CL_INVALID_DEVICE,
            clGetDeviceInfo(nullptr, CL_DEVICE_VENDOR_ID, sizeof(v), &v, nullptr));
}

// ---------------------------------------------------------------------------------------------
// Retain / release of a root device

TEST_F(DeviceQueries, RetainReleaseRootDevice) {
  EXPECT_CL(CL_SUCCESS, clRetainDevice(device_));
  EXPECT_EQ(deviceInfo<cl_uint>(device_, CL_DEVICE_REFERENCE_COUNT), 1u)
      << "root device count stays 1";
  EXPECT_CL(CL_SUCCESS, clReleaseDevice(device_));
  EXPECT_CL(CL_SUCCESS, clReleaseDevice(device_));
  EXPECT_CL(CL_SUCCESS, clReleaseDevice(device_));
  // Still usable after more releases than retains.
  EXPECT_EQ(deviceInfo<cl_uint>(device_, CL_DEVICE_REFERENCE_COUNT), 1u);
  EXPECT_FALSE(deviceString(device_, CL_DEVICE_NAME).empty());
}

TEST_F(DeviceQueries, RetainReleaseInvalidDevice) {
  EXPECT_CL(CL_INVALID_DEVICE, clRetainDevice(nullptr));
  EXPECT_CL(CL_INVALID_DEVICE, clReleaseDevice(nullptr));
  EXPECT_CL(CL_INVALID_DEVICE, clRetainDevice(reinterpret_cast<cl_device_id>(platform_)));
  EXPECT_CL(CL_INVALID_DEVICE, clReleaseDevice(reinterpret_cast<cl_device_id>(platform_)));
}

// ---------------------------------------------------------------------------------------------
// Timers

class TimerTest : public DeviceTest {
 protected:
  void SetUp() override {
    DeviceTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (!caps_.atLeast(2, 1)) GTEST_SKIP() << "clGetDeviceAndHostTimer is OpenCL 2.1";
    resolution_ = info<cl_ulong>(clGetPlatformInfo, platform_, CL_PLATFORM_HOST_TIMER_RESOLUTION);
  }
  cl_ulong resolution_ = 0;
};

TEST_F(TimerTest, UnsupportedIsInvalidOperation) {
  if (resolution_ != 0) GTEST_SKIP() << "the platform supports host/device timer synchronisation";
  // OpenCL 3.0: CL_INVALID_OPERATION if the platform does not support device and host timer
  // synchronization (CL_PLATFORM_HOST_TIMER_RESOLUTION == 0).
  cl_ulong d = 0, h = 0;
  EXPECT_CL(CL_INVALID_OPERATION, clGetDeviceAndHostTimer(device_, &d, &h));
  EXPECT_CL(CL_INVALID_OPERATION, clGetHostTimer(device_, &h));
}

TEST_F(TimerTest, DeviceAndHostTimer) {
  if (resolution_ == 0)
    GTEST_SKIP() << "CL_PLATFORM_HOST_TIMER_RESOLUTION is 0: no timer synchronisation";
  cl_ulong d1 = 0, h1 = 0, d2 = 0, h2 = 0;
  ASSERT_CL(CL_SUCCESS, clGetDeviceAndHostTimer(device_, &d1, &h1));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_CL(CL_SUCCESS, clGetDeviceAndHostTimer(device_, &d2, &h2));
  EXPECT_GT(d1, 0u);
  EXPECT_GT(h1, 0u);
  EXPECT_GT(d2, d1);
  EXPECT_GT(h2, h1);
  // Both advanced by about 20 ms (generous bounds: 10 ms .. 5 s).
  EXPECT_GE(d2 - d1, 10'000'000u);
  EXPECT_LE(d2 - d1, 5'000'000'000u);
  EXPECT_GE(h2 - h1, 10'000'000u);
  EXPECT_LE(h2 - h1, 5'000'000'000u);
  cl_ulong h3 = 0;
  ASSERT_CL(CL_SUCCESS, clGetHostTimer(device_, &h3));
  EXPECT_GE(h3, h2) << "clGetHostTimer shares the host timebase of clGetDeviceAndHostTimer";
}

TEST_F(TimerTest, TimerErrors) {
  cl_ulong d = 0, h = 0;
  EXPECT_CL(CL_INVALID_DEVICE, clGetDeviceAndHostTimer(nullptr, &d, &h));
  EXPECT_CL(CL_INVALID_DEVICE, clGetHostTimer(nullptr, &h));
  EXPECT_CL(CL_INVALID_DEVICE,
            clGetDeviceAndHostTimer(reinterpret_cast<cl_device_id>(platform_), &d, &h));
  EXPECT_CL(CL_INVALID_DEVICE, clGetHostTimer(reinterpret_cast<cl_device_id>(platform_), &h));
  if (resolution_ == 0)
    GTEST_SKIP() << "no timer synchronisation: NULL-argument errors not reachable";
  EXPECT_CL(CL_INVALID_VALUE, clGetDeviceAndHostTimer(device_, nullptr, &h));
  EXPECT_CL(CL_INVALID_VALUE, clGetDeviceAndHostTimer(device_, &d, nullptr));
  EXPECT_CL(CL_INVALID_VALUE, clGetHostTimer(device_, nullptr));
}

}  // namespace
