// clGetPlatformIDs, clGetPlatformInfo, clGetExtensionFunctionAddressForPlatform,
// clUnloadPlatformCompiler.
#include <set>

#include "cl_test.h"

using namespace cltest;

namespace {

class PlatformTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    platform_ = findPlatform(&why);
    ASSERT_NE(platform_, nullptr) << why;
    std::string v = platformString(platform_, CL_PLATFORM_VERSION);
    ASSERT_TRUE(parseVersion(v, "OpenCL ", major_, minor_)) << "CL_PLATFORM_VERSION '" << v << "'";
  }
  bool atLeast30() const { return major_ >= 3; }
  cl_platform_id platform_ = nullptr;
  int major_ = 0, minor_ = 0;
};

TEST(PlatformIDs, CountThenList) {
  cl_uint n = 0;
  ASSERT_CL(CL_SUCCESS, clGetPlatformIDs(0, nullptr, &n));
  ASSERT_GE(n, 1u);
  std::vector<cl_platform_id> v(n, nullptr);
  cl_uint n2 = 0;
  ASSERT_CL(CL_SUCCESS, clGetPlatformIDs(n, v.data(), &n2));
  EXPECT_EQ(n, n2);
  for (auto p : v) EXPECT_NE(p, nullptr);
  // Asking for fewer entries than available returns that many and still reports the total.
  cl_platform_id one = nullptr;
  n2 = 0;
  ASSERT_CL(CL_SUCCESS, clGetPlatformIDs(1, &one, &n2));
  EXPECT_EQ(n, n2);
  EXPECT_EQ(one, v[0]);
}

TEST(PlatformIDs, ListWithoutCount) {
  cl_platform_id p = nullptr;
  EXPECT_CL(CL_SUCCESS, clGetPlatformIDs(1, &p, nullptr));
  EXPECT_NE(p, nullptr);
}

TEST(PlatformIDs, Errors) {
  cl_platform_id p = nullptr;
  // num_entries == 0 and platforms != NULL.
  EXPECT_CL(CL_INVALID_VALUE, clGetPlatformIDs(0, &p, nullptr));
  // platforms == NULL and num_platforms == NULL.
  EXPECT_CL(CL_INVALID_VALUE, clGetPlatformIDs(0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE, clGetPlatformIDs(1, nullptr, nullptr));
}

TEST_F(PlatformTest, StringQueries) {
  std::string profile = platformString(platform_, CL_PLATFORM_PROFILE);
  EXPECT_TRUE(profile == "FULL_PROFILE" || profile == "EMBEDDED_PROFILE") << profile;
  std::string version = platformString(platform_, CL_PLATFORM_VERSION);
  EXPECT_EQ(version.rfind("OpenCL ", 0), 0u) << version;
  // "OpenCL<space><major.minor><space><platform-specific information>"
  int M = 0, m = 0;
  char after = 0;
  EXPECT_EQ(std::sscanf(version.c_str(), "OpenCL %d.%d%c", &M, &m, &after), 3) << version;
  EXPECT_EQ(after, ' ') << "version must be followed by a space: '" << version << "'";
  EXPECT_FALSE(platformString(platform_, CL_PLATFORM_NAME).empty());
  EXPECT_FALSE(platformString(platform_, CL_PLATFORM_VENDOR).empty());
  std::string ext = platformString(platform_, CL_PLATFORM_EXTENSIONS);
  // A platform loaded through the ICD loader must implement cl_khr_icd.
  EXPECT_TRUE(hasWord(ext, "cl_khr_icd")) << "CL_PLATFORM_EXTENSIONS: '" << ext << "'";
}

TEST_F(PlatformTest, ManifoldIsOpenCL30) {
  if (envOr("MANIFOLD_TEST_PLATFORM", "Manifold") != "Manifold")
    GTEST_SKIP() << "only checked for the Manifold platform";
  EXPECT_EQ(major_, 3);
  EXPECT_EQ(minor_, 0);
}

TEST_F(PlatformTest, NumericVersionMatchesString) {
  if (!atLeast30()) GTEST_SKIP() << "CL_PLATFORM_NUMERIC_VERSION is OpenCL 3.0";
  cl_version v = info<cl_version>(clGetPlatformInfo, platform_, CL_PLATFORM_NUMERIC_VERSION);
  EXPECT_EQ(CL_VERSION_MAJOR(v), (cl_uint)major_);
  EXPECT_EQ(CL_VERSION_MINOR(v), (cl_uint)minor_);
}

TEST_F(PlatformTest, ExtensionsWithVersionMatchExtensionString) {
  if (!atLeast30()) GTEST_SKIP() << "CL_PLATFORM_EXTENSIONS_WITH_VERSION is OpenCL 3.0";
  auto words = splitSpaces(platformString(platform_, CL_PLATFORM_EXTENSIONS));
  std::set<std::string> fromString(words.begin(), words.end());
  EXPECT_EQ(fromString.size(), words.size()) << "duplicate names in CL_PLATFORM_EXTENSIONS";
  auto list = infoVector<cl_name_version>(clGetPlatformInfo, platform_,
                                          CL_PLATFORM_EXTENSIONS_WITH_VERSION);
  std::set<std::string> fromList;
  for (auto& nv : list) {
    size_t len = strnlen(nv.name, CL_NAME_VERSION_MAX_NAME_SIZE);
    ASSERT_LT(len, (size_t)CL_NAME_VERSION_MAX_NAME_SIZE) << "name not NUL-terminated";
    fromList.insert(nv.name);
  }
  EXPECT_EQ(fromString, fromList);
}

TEST_F(PlatformTest, HostTimerResolution) {
  if (major_ < 2 || (major_ == 2 && minor_ < 1)) GTEST_SKIP() << "OpenCL 2.1 query";
  cl_ulong r = info<cl_ulong>(clGetPlatformInfo, platform_, CL_PLATFORM_HOST_TIMER_RESOLUTION);
  // Any value is legal (0 = no host/device timer synchronisation); just a sanity bound (1 s).
  EXPECT_LE(r, 1000000000ull);
}

TEST_F(PlatformTest, IcdSuffix) {
  std::string s = platformString(platform_, CL_PLATFORM_ICD_SUFFIX_KHR);
  EXPECT_FALSE(s.empty()) << "cl_khr_icd requires a non-empty CL_PLATFORM_ICD_SUFFIX_KHR";
  for (char c : s) EXPECT_TRUE(std::isalnum((unsigned char)c)) << "suffix '" << s << "'";
}

TEST_F(PlatformTest, SizeSemantics) {
  size_t size = 0;
  ASSERT_CL(CL_SUCCESS, clGetPlatformInfo(platform_, CL_PLATFORM_NAME, 0, nullptr, &size));
  ASSERT_GT(size, 1u);
  std::vector<char> buf(size + 16, '\x7f');
  // Too small (and param_value non-NULL) -> CL_INVALID_VALUE.
  EXPECT_CL(CL_INVALID_VALUE,
            clGetPlatformInfo(platform_, CL_PLATFORM_NAME, size - 1, buf.data(), nullptr));
  EXPECT_CL(CL_INVALID_VALUE,
            clGetPlatformInfo(platform_, CL_PLATFORM_NAME, 1, buf.data(), nullptr));
  // Larger than needed is fine; size_ret is the actual size.
  size_t ret = 0;
  EXPECT_CL(CL_SUCCESS,
            clGetPlatformInfo(platform_, CL_PLATFORM_NAME, buf.size(), buf.data(), &ret));
  EXPECT_EQ(ret, size);
  EXPECT_EQ(buf[size - 1], '\0');
  // param_value NULL with a nonzero size: the size is ignored.
  EXPECT_CL(CL_SUCCESS, clGetPlatformInfo(platform_, CL_PLATFORM_NAME, 1, nullptr, &ret));
  // Nothing at all requested is not an error.
  EXPECT_CL(CL_SUCCESS, clGetPlatformInfo(platform_, CL_PLATFORM_NAME, 0, nullptr, nullptr));
  if (atLeast30()) {
    cl_version v = 0;
    EXPECT_CL(CL_INVALID_VALUE, clGetPlatformInfo(platform_, CL_PLATFORM_NUMERIC_VERSION,
                                                  sizeof(v) - 1, &v, nullptr));
    ret = 0;
    EXPECT_CL(CL_SUCCESS,
              clGetPlatformInfo(platform_, CL_PLATFORM_NUMERIC_VERSION, 0, nullptr, &ret));
    EXPECT_EQ(ret, sizeof(cl_version));
  }
  cl_ulong r = 0;
  ret = 0;
  EXPECT_CL(CL_SUCCESS,
            clGetPlatformInfo(platform_, CL_PLATFORM_HOST_TIMER_RESOLUTION, sizeof(r), &r, &ret));
  EXPECT_EQ(ret, sizeof(cl_ulong));
  EXPECT_CL(CL_INVALID_VALUE,
            clGetPlatformInfo(platform_, CL_PLATFORM_HOST_TIMER_RESOLUTION, 4, &r, nullptr));
}

TEST_F(PlatformTest, InvalidParamName) {
  char buf[256];
  size_t ret = 0;
  EXPECT_CL(CL_INVALID_VALUE, clGetPlatformInfo(platform_, 0x0, sizeof(buf), buf, &ret));
  EXPECT_CL(CL_INVALID_VALUE, clGetPlatformInfo(platform_, 0x08FF, sizeof(buf), buf, &ret));
  EXPECT_CL(CL_INVALID_VALUE, clGetPlatformInfo(platform_, CL_DEVICE_NAME, sizeof(buf), buf, &ret));
  EXPECT_CL(CL_INVALID_VALUE, clGetPlatformInfo(platform_, 0x7fffffff, 0, nullptr, &ret));
}

TEST_F(PlatformTest, WrongHandleType) {
  // A valid object of another type, dispatched by the loader to the platform's own entry point.
  cl_device_id dev = nullptr;
  ASSERT_CL(CL_SUCCESS, clGetDeviceIDs(platform_, CL_DEVICE_TYPE_ALL, 1, &dev, nullptr));
  char buf[256];
  EXPECT_CL(CL_INVALID_PLATFORM, clGetPlatformInfo(reinterpret_cast<cl_platform_id>(dev),
                                                   CL_PLATFORM_NAME, sizeof(buf), buf, nullptr));
  cl_int err = 0;
  Context ctx(clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  EXPECT_CL(CL_INVALID_PLATFORM, clGetPlatformInfo(reinterpret_cast<cl_platform_id>(ctx.get()),
                                                   CL_PLATFORM_NAME, sizeof(buf), buf, nullptr));
}

TEST_F(PlatformTest, ExtensionFunctionAddress) {
  EXPECT_EQ(clGetExtensionFunctionAddressForPlatform(platform_, "clThisFunctionDoesNotExistKHR"),
            nullptr);
  EXPECT_EQ(clGetExtensionFunctionAddressForPlatform(platform_, ""), nullptr);
  // cl_khr_icd's entry point is exported by every ICD platform.
  EXPECT_NE(clGetExtensionFunctionAddressForPlatform(platform_, "clIcdGetPlatformIDsKHR"), nullptr);
}

TEST_F(PlatformTest, ExtensionFunctionsOfReportedExtensions) {
  // Entry points of extensions the device reports must be obtainable.
  cl_device_id dev = nullptr;
  ASSERT_CL(CL_SUCCESS, clGetDeviceIDs(platform_, CL_DEVICE_TYPE_ALL, 1, &dev, nullptr));
  std::string ext = deviceString(dev, CL_DEVICE_EXTENSIONS) + " " +
                    platformString(platform_, CL_PLATFORM_EXTENSIONS);
  struct {
    const char* ext;
    const char* fn;
  } known[] = {
      {"cl_khr_il_program", "clCreateProgramWithILKHR"},
      {"cl_khr_command_buffer", "clCreateCommandBufferKHR"},
      {"cl_khr_command_buffer", "clFinalizeCommandBufferKHR"},
      {"cl_khr_command_buffer", "clEnqueueCommandBufferKHR"},
      {"cl_khr_create_command_queue", "clCreateCommandQueueWithPropertiesKHR"},
      {"cl_khr_suggested_local_work_size", "clGetKernelSuggestedLocalWorkSizeKHR"},
      {"cl_arm_import_memory", "clImportMemoryARM"},
      {"cl_khr_external_memory", "clEnqueueAcquireExternalMemObjectsKHR"},
      {"cl_khr_semaphore", "clCreateSemaphoreWithPropertiesKHR"},
      {"cl_khr_subgroups", "clGetKernelSubGroupInfoKHR"},
  };
  int checked = 0;
  for (auto& k : known) {
    if (!hasWord(ext, k.ext)) continue;
    ++checked;
    EXPECT_NE(clGetExtensionFunctionAddressForPlatform(platform_, k.fn), nullptr)
        << k.ext << ": " << k.fn;
  }
  if (!checked) GTEST_SKIP() << "no reported extension with entry points known to this test";
}

TEST_F(PlatformTest, UnloadPlatformCompiler) {
  EXPECT_CL(CL_SUCCESS, clUnloadPlatformCompiler(platform_));
  // The platform keeps working afterwards.
  cl_device_id dev = nullptr;
  EXPECT_CL(CL_SUCCESS, clGetDeviceIDs(platform_, CL_DEVICE_TYPE_ALL, 1, &dev, nullptr));
}

TEST_F(PlatformTest, UnloadPlatformCompilerWrongHandle) {
  cl_device_id dev = nullptr;
  ASSERT_CL(CL_SUCCESS, clGetDeviceIDs(platform_, CL_DEVICE_TYPE_ALL, 1, &dev, nullptr));
  EXPECT_CL(CL_INVALID_PLATFORM, clUnloadPlatformCompiler(reinterpret_cast<cl_platform_id>(dev)));
}

TEST_F(PlatformTest, DevicesBelongToPlatform) {
  cl_uint n = 0;
  ASSERT_CL(CL_SUCCESS, clGetDeviceIDs(platform_, CL_DEVICE_TYPE_ALL, 0, nullptr, &n));
  ASSERT_GE(n, 1u);
  std::vector<cl_device_id> devs(n);
  ASSERT_CL(CL_SUCCESS, clGetDeviceIDs(platform_, CL_DEVICE_TYPE_ALL, n, devs.data(), nullptr));
  for (auto d : devs) EXPECT_EQ(deviceInfo<cl_platform_id>(d, CL_DEVICE_PLATFORM), platform_);
}

}  // namespace
