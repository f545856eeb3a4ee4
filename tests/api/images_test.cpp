// Images on the host side: clCreateImage* (every flag that matters, every error code),
// clGetSupportedImageFormats, clGetImageInfo / clGetMemObjectInfo, read / write / copy / fill /
// map of every image type, image <-> buffer copies, images made from buffers and images, image
// and sampler kernel arguments (clSetKernelArg only: kernels that read and write images are in
// image_kernels_test.cpp).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <numeric>
#include <set>
#include <thread>

#include "cl_test.h"

using namespace cltest;

namespace {

cl_image_desc makeDesc(cl_mem_object_type type, size_t w, size_t h = 0, size_t d = 0,
                       size_t array = 0, size_t row_pitch = 0, size_t slice_pitch = 0,
                       cl_mem buffer = nullptr) {
  cl_image_desc desc{};
  desc.image_type = type;
  desc.image_width = w;
  desc.image_height = h;
  desc.image_depth = d;
  desc.image_array_size = array;
  desc.image_row_pitch = row_pitch;
  desc.image_slice_pitch = slice_pitch;
  desc.mem_object = buffer;
  return desc;
}

const cl_image_format kRgba8{CL_RGBA, CL_UNORM_INT8};

class ImageApi : public ContextTest {
 protected:
  void SetUp() override {
    ContextTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (!caps_.images) GTEST_SKIP() << "the device does not support images";
  }

  Mem image(const cl_image_desc& desc, cl_image_format fmt = kRgba8,
            cl_mem_flags flags = CL_MEM_READ_WRITE, void* host = nullptr) {
    cl_int err = -1;
    cl_mem m = clCreateImage(context_, flags, &fmt, &desc, host, &err);
    EXPECT_ERR(CL_SUCCESS, err) << "clCreateImage type 0x" << std::hex << desc.image_type;
    return Mem(m);
  }
  cl_int createErr(const cl_image_desc* desc, const cl_image_format* fmt = &kRgba8,
                   cl_mem_flags flags = 0, void* host = nullptr) {
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateImage(context_, flags, fmt, desc, host, &err);
    EXPECT_EQ(nullptr, m);
    if (m) clReleaseMemObject(m);
    return err;
  }
  template <class T>
  T imageInfo(cl_mem m, cl_image_info p) {
    return info<T>(clGetImageInfo, m, p);
  }
  std::vector<unsigned char> readImage(cl_mem m, const size_t* origin, const size_t* region,
                                       size_t es, size_t row_pitch = 0, size_t slice_pitch = 0) {
    const size_t rp = row_pitch ? row_pitch : region[0] * es;
    const size_t sp = slice_pitch ? slice_pitch : rp * region[1];
    std::vector<unsigned char> v(sp * region[2], 0xEE);
    EXPECT_CL_OK(clEnqueueReadImage(queue_, m, CL_TRUE, origin, region, row_pitch, slice_pitch,
                                    v.data(), 0, nullptr, nullptr));
    return v;
  }
};

// ---- Formats ----

TEST_F(ImageApi, SupportedFormatsIncludeTheMinimumList) {
  for (cl_mem_object_type type :
       {CL_MEM_OBJECT_IMAGE1D, CL_MEM_OBJECT_IMAGE1D_BUFFER, CL_MEM_OBJECT_IMAGE1D_ARRAY,
        CL_MEM_OBJECT_IMAGE2D, CL_MEM_OBJECT_IMAGE2D_ARRAY, CL_MEM_OBJECT_IMAGE3D}) {
    for (cl_mem_flags flags :
         {cl_mem_flags(CL_MEM_READ_WRITE), cl_mem_flags(CL_MEM_READ_ONLY),
          cl_mem_flags(CL_MEM_WRITE_ONLY), cl_mem_flags(CL_MEM_KERNEL_READ_AND_WRITE)}) {
      cl_uint n = 0;
      ASSERT_CL(CL_SUCCESS, clGetSupportedImageFormats(context_, flags, type, 0, nullptr, &n));
      ASSERT_GT(n, 0u);
      std::vector<cl_image_format> f(n);
      ASSERT_CL(CL_SUCCESS,
                clGetSupportedImageFormats(context_, flags, type, n, f.data(), nullptr));
      std::set<std::pair<cl_uint, cl_uint>> have;
      for (auto& x : f) have.insert({x.image_channel_order, x.image_channel_data_type});
      EXPECT_EQ(have.size(), f.size()) << "duplicates in the list";
      // The full profile's minimum (kernel read or write).
      for (cl_channel_order o : {CL_R, CL_RGBA})
        for (cl_channel_type t :
             {CL_UNORM_INT8, CL_UNORM_INT16, CL_SNORM_INT8, CL_SNORM_INT16, CL_SIGNED_INT8,
              CL_SIGNED_INT16, CL_SIGNED_INT32, CL_UNSIGNED_INT8, CL_UNSIGNED_INT16,
              CL_UNSIGNED_INT32, CL_HALF_FLOAT, CL_FLOAT})
          EXPECT_TRUE(have.count({o, t})) << std::hex << o << " " << t;
      EXPECT_TRUE(have.count({CL_BGRA, CL_UNORM_INT8}));
      // Fewer entries than formats: only that many are written.
      std::vector<cl_image_format> two(3, cl_image_format{0xdead, 0xbeef});
      ASSERT_CL(CL_SUCCESS,
                clGetSupportedImageFormats(context_, flags, type, 2, two.data(), nullptr));
      EXPECT_EQ(0xdeadu, two[2].image_channel_order);
    }
  }
}

TEST_F(ImageApi, EverySupportedFormatCanBeCreatedWrittenAndRead) {
  cl_uint n = 0;
  ASSERT_CL(CL_SUCCESS, clGetSupportedImageFormats(context_, CL_MEM_READ_WRITE,
                                                   CL_MEM_OBJECT_IMAGE2D, 0, nullptr, &n));
  std::vector<cl_image_format> f(n);
  ASSERT_CL(CL_SUCCESS, clGetSupportedImageFormats(context_, CL_MEM_READ_WRITE,
                                                   CL_MEM_OBJECT_IMAGE2D, n, f.data(), nullptr));
  for (const cl_image_format& fmt : f) {
    SCOPED_TRACE(testing::Message()
                 << std::hex << fmt.image_channel_order << " " << fmt.image_channel_data_type);
    auto desc = makeDesc(CL_MEM_OBJECT_IMAGE2D, 5, 3);
    Mem m = image(desc, fmt);
    ASSERT_TRUE(m);
    const size_t es = imageInfo<size_t>(m, CL_IMAGE_ELEMENT_SIZE);
    ASSERT_TRUE(es == 1 || es == 2 || es == 4 || es == 8 || es == 16) << es;
    std::vector<unsigned char> data(5 * 3 * es);
    std::iota(data.begin(), data.end(), 1);
    const size_t origin[3] = {0, 0, 0}, region[3] = {5, 3, 1};
    ASSERT_CL(CL_SUCCESS, clEnqueueWriteImage(queue_, m, CL_TRUE, origin, region, 0, 0, data.data(),
                                              0, nullptr, nullptr));
    EXPECT_EQ(data, readImage(m, origin, region, es));
  }
}

TEST_F(ImageApi, SupportedFormatsErrors) {
  cl_uint n = 0;
  cl_image_format f[4];
  // The spec: CL_INVALID_VALUE if flags or image_type are not valid, or if num_entries is 0 and
  // image_formats is not NULL.
  EXPECT_CL(CL_INVALID_VALUE,
            clGetSupportedImageFormats(context_, 0, CL_MEM_OBJECT_BUFFER, 0, nullptr, &n));
  EXPECT_CL(CL_INVALID_VALUE,
            clGetSupportedImageFormats(context_, 0, CL_MEM_OBJECT_PIPE, 0, nullptr, &n));
  EXPECT_CL(CL_INVALID_VALUE, clGetSupportedImageFormats(context_, cl_mem_flags(1) << 40,
                                                         CL_MEM_OBJECT_IMAGE2D, 0, nullptr, &n));
  EXPECT_CL(CL_INVALID_VALUE,
            clGetSupportedImageFormats(context_, 0, CL_MEM_OBJECT_IMAGE2D, 0, f, &n));
  EXPECT_CL(CL_INVALID_CONTEXT,
            clGetSupportedImageFormats(nullptr, 0, CL_MEM_OBJECT_IMAGE2D, 4, f, &n));
  EXPECT_CL_OK(clGetSupportedImageFormats(context_, 0, CL_MEM_OBJECT_IMAGE2D, 0, nullptr, nullptr));
}

// ---- Creation ----

TEST_F(ImageApi, CreateEveryTypeAndQueryIt) {
  Mem buf = makeBuffer(4096);
  struct Case {
    cl_image_desc desc;
    size_t height, depth, array, slice_pitch, size;
  };
  const Case cases[] = {
      {makeDesc(CL_MEM_OBJECT_IMAGE1D, 7), 0, 0, 0, 0, 28},
      {makeDesc(CL_MEM_OBJECT_IMAGE1D_BUFFER, 7, 0, 0, 0, 0, 0, buf), 0, 0, 0, 0, 28},
      {makeDesc(CL_MEM_OBJECT_IMAGE1D_ARRAY, 7, 0, 0, 3), 0, 0, 3, 28, 84},
      {makeDesc(CL_MEM_OBJECT_IMAGE2D, 7, 5), 5, 0, 0, 0, 140},
      {makeDesc(CL_MEM_OBJECT_IMAGE2D_ARRAY, 7, 5, 0, 3), 5, 0, 3, 140, 420},
      {makeDesc(CL_MEM_OBJECT_IMAGE3D, 7, 5, 2), 5, 2, 0, 140, 280},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::Message() << "type 0x" << std::hex << c.desc.image_type);
    Mem m = image(c.desc);
    ASSERT_TRUE(m);
    auto fmt = imageInfo<cl_image_format>(m, CL_IMAGE_FORMAT);
    EXPECT_EQ(cl_uint(CL_RGBA), fmt.image_channel_order);
    EXPECT_EQ(cl_uint(CL_UNORM_INT8), fmt.image_channel_data_type);
    EXPECT_EQ(4u, imageInfo<size_t>(m, CL_IMAGE_ELEMENT_SIZE));
    EXPECT_EQ(28u, imageInfo<size_t>(m, CL_IMAGE_ROW_PITCH));
    EXPECT_EQ(c.slice_pitch, imageInfo<size_t>(m, CL_IMAGE_SLICE_PITCH));
    EXPECT_EQ(7u, imageInfo<size_t>(m, CL_IMAGE_WIDTH));
    EXPECT_EQ(c.height, imageInfo<size_t>(m, CL_IMAGE_HEIGHT));
    EXPECT_EQ(c.depth, imageInfo<size_t>(m, CL_IMAGE_DEPTH));
    EXPECT_EQ(c.array, imageInfo<size_t>(m, CL_IMAGE_ARRAY_SIZE));
    EXPECT_EQ(0u, imageInfo<cl_uint>(m, CL_IMAGE_NUM_MIP_LEVELS));
    EXPECT_EQ(0u, imageInfo<cl_uint>(m, CL_IMAGE_NUM_SAMPLES));
    const cl_mem expected_buffer =
        c.desc.image_type == CL_MEM_OBJECT_IMAGE1D_BUFFER ? buf.get() : nullptr;
    EXPECT_EQ(expected_buffer, imageInfo<cl_mem>(m, CL_IMAGE_BUFFER));
    EXPECT_EQ(c.desc.image_type, memInfo<cl_mem_object_type>(m, CL_MEM_TYPE));
    EXPECT_EQ(c.size, memInfo<size_t>(m, CL_MEM_SIZE));
    EXPECT_EQ(cl_mem_flags(CL_MEM_READ_WRITE), memInfo<cl_mem_flags>(m, CL_MEM_FLAGS));
    EXPECT_EQ(expected_buffer, memInfo<cl_mem>(m, CL_MEM_ASSOCIATED_MEMOBJECT));
    EXPECT_EQ(0u, memInfo<size_t>(m, CL_MEM_OFFSET));
    EXPECT_EQ(context_.get(), memInfo<cl_context>(m, CL_MEM_CONTEXT));
  }
  Mem m = image(makeDesc(CL_MEM_OBJECT_IMAGE2D, 2, 2));
  size_t v = 0;
  // The spec: CL_INVALID_VALUE if param_name is not valid, or if param_value_size is smaller
  // than the return type and param_value is not NULL.
  EXPECT_CL(CL_INVALID_VALUE, clGetImageInfo(m, 0x7777, sizeof(v), &v, nullptr));
  EXPECT_CL(CL_INVALID_VALUE, clGetImageInfo(m, CL_IMAGE_WIDTH, 1, &v, nullptr));
  // The spec: CL_INVALID_MEM_OBJECT if image is a not a valid image object.
  EXPECT_CL(CL_INVALID_MEM_OBJECT, clGetImageInfo(buf, CL_IMAGE_WIDTH, sizeof(v), &v, nullptr));
  EXPECT_CL(CL_INVALID_MEM_OBJECT, clGetImageInfo(nullptr, CL_IMAGE_WIDTH, sizeof(v), &v, nullptr));
}

TEST_F(ImageApi, CreateErrors) {
  auto d2 = makeDesc(CL_MEM_OBJECT_IMAGE2D, 4, 4);
  // The spec: CL_INVALID_CONTEXT if context is not a valid context.
  cl_int err = CL_SUCCESS;
  EXPECT_EQ(nullptr, clCreateImage(nullptr, 0, &kRgba8, &d2, nullptr, &err));
  EXPECT_ERR(CL_INVALID_CONTEXT, err);
  // The spec: CL_INVALID_VALUE if values specified in flags are not valid.
  EXPECT_EQ(Err(CL_INVALID_VALUE),
            Err(createErr(&d2, &kRgba8, CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY)));
  EXPECT_EQ(Err(CL_INVALID_VALUE), Err(createErr(&d2, &kRgba8, cl_mem_flags(1) << 40)));
  EXPECT_EQ(Err(CL_INVALID_VALUE),
            Err(createErr(&d2, &kRgba8, CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS)));
  // The spec: CL_INVALID_IMAGE_FORMAT_DESCRIPTOR if values specified in image_format are not
  // valid or if image_format is NULL.
  EXPECT_EQ(Err(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR), Err(createErr(&d2, nullptr)));
  for (cl_image_format bad :
       {cl_image_format{0x1234, CL_UNORM_INT8}, cl_image_format{CL_RGBA, 0x1234},
        cl_image_format{CL_RGB, CL_UNORM_INT8},        // RGB: packed types only
        cl_image_format{CL_RGBA, CL_UNORM_SHORT_565},  // 565: RGB/RGBx only
        cl_image_format{CL_INTENSITY, CL_UNSIGNED_INT8},
        cl_image_format{CL_LUMINANCE, CL_SIGNED_INT32}, cl_image_format{CL_BGRA, CL_FLOAT},
        cl_image_format{CL_ARGB, CL_UNORM_INT16},
        cl_image_format{CL_RGx, CL_UNORM_INT8}}) {  // 24 bits: not a power of two
    SCOPED_TRACE(testing::Message()
                 << std::hex << bad.image_channel_order << " " << bad.image_channel_data_type);
    EXPECT_EQ(Err(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR), Err(createErr(&d2, &bad)));
  }
  // Valid formats this implementation does not support: CL_IMAGE_FORMAT_NOT_SUPPORTED.
  const cl_image_format depth{CL_DEPTH, CL_FLOAT};
  EXPECT_EQ(Err(CL_IMAGE_FORMAT_NOT_SUPPORTED), Err(createErr(&d2, &depth)));
  // The spec: CL_INVALID_IMAGE_DESCRIPTOR if values specified in image_desc are not valid or if
  // image_desc is NULL.
  EXPECT_EQ(Err(CL_INVALID_IMAGE_DESCRIPTOR), Err(createErr(nullptr)));
  std::vector<cl_image_desc> bad_descs = {
      makeDesc(CL_MEM_OBJECT_BUFFER, 4, 4),
      makeDesc(CL_MEM_OBJECT_IMAGE2D, 0, 4),
      makeDesc(CL_MEM_OBJECT_IMAGE2D, 4, 0),
      makeDesc(CL_MEM_OBJECT_IMAGE3D, 4, 4, 0),
      makeDesc(CL_MEM_OBJECT_IMAGE2D_ARRAY, 4, 4, 0, 0),
      makeDesc(CL_MEM_OBJECT_IMAGE1D_ARRAY, 4, 0, 0, 0),
      makeDesc(CL_MEM_OBJECT_IMAGE2D, 4, 4, 0, 0, 16),     // row pitch without host_ptr
      makeDesc(CL_MEM_OBJECT_IMAGE3D, 4, 4, 2, 0, 0, 64),  // slice pitch without host_ptr
      makeDesc(CL_MEM_OBJECT_IMAGE1D_BUFFER, 4),           // no buffer
  };
  cl_image_desc mips = d2;
  mips.num_mip_levels = 2;
  bad_descs.push_back(mips);
  cl_image_desc samples = d2;
  samples.num_samples = 4;
  bad_descs.push_back(samples);
  for (const cl_image_desc& d : bad_descs) {
    SCOPED_TRACE(testing::Message() << "type 0x" << std::hex << d.image_type << " w "
                                    << d.image_width << " h " << d.image_height);
    EXPECT_EQ(Err(CL_INVALID_IMAGE_DESCRIPTOR), Err(createErr(&d)));
  }
  // mem_object with an image type that cannot take one.
  Mem buf = makeBuffer(4096);
  auto d3 = makeDesc(CL_MEM_OBJECT_IMAGE3D, 4, 4, 2, 0, 0, 0, buf);
  EXPECT_EQ(Err(CL_INVALID_IMAGE_DESCRIPTOR), Err(createErr(&d3)));
  // Pitches with a host_ptr: too small, not a multiple of the element size or row pitch.
  std::vector<unsigned char> host(4096);
  auto small_row = makeDesc(CL_MEM_OBJECT_IMAGE2D, 4, 4, 0, 0, 12);
  EXPECT_EQ(Err(CL_INVALID_IMAGE_DESCRIPTOR),
            Err(createErr(&small_row, &kRgba8, CL_MEM_COPY_HOST_PTR, host.data())));
  auto odd_row = makeDesc(CL_MEM_OBJECT_IMAGE2D, 4, 4, 0, 0, 18);
  EXPECT_EQ(Err(CL_INVALID_IMAGE_DESCRIPTOR),
            Err(createErr(&odd_row, &kRgba8, CL_MEM_USE_HOST_PTR, host.data())));
  auto small_slice = makeDesc(CL_MEM_OBJECT_IMAGE3D, 4, 4, 2, 0, 16, 48);
  EXPECT_EQ(Err(CL_INVALID_IMAGE_DESCRIPTOR),
            Err(createErr(&small_slice, &kRgba8, CL_MEM_COPY_HOST_PTR, host.data())));
  auto odd_slice = makeDesc(CL_MEM_OBJECT_IMAGE2D_ARRAY, 4, 4, 0, 2, 16, 72);
  EXPECT_EQ(Err(CL_INVALID_IMAGE_DESCRIPTOR),
            Err(createErr(&odd_slice, &kRgba8, CL_MEM_COPY_HOST_PTR, host.data())));
  // The spec: CL_INVALID_IMAGE_SIZE if image dimensions exceed the maximum image dimensions.
  const size_t max2d = deviceInfo<size_t>(device_, CL_DEVICE_IMAGE2D_MAX_WIDTH);
  const size_t max3d = deviceInfo<size_t>(device_, CL_DEVICE_IMAGE3D_MAX_DEPTH);
  const size_t max_array = deviceInfo<size_t>(device_, CL_DEVICE_IMAGE_MAX_ARRAY_SIZE);
  auto wide = makeDesc(CL_MEM_OBJECT_IMAGE2D, max2d + 1, 1);
  EXPECT_EQ(Err(CL_INVALID_IMAGE_SIZE), Err(createErr(&wide)));
  auto wide1d = makeDesc(CL_MEM_OBJECT_IMAGE1D, max2d + 1);
  EXPECT_EQ(Err(CL_INVALID_IMAGE_SIZE), Err(createErr(&wide1d)));
  auto deep = makeDesc(CL_MEM_OBJECT_IMAGE3D, 1, 1, max3d + 1);
  EXPECT_EQ(Err(CL_INVALID_IMAGE_SIZE), Err(createErr(&deep)));
  auto many = makeDesc(CL_MEM_OBJECT_IMAGE2D_ARRAY, 1, 1, 0, max_array + 1);
  EXPECT_EQ(Err(CL_INVALID_IMAGE_SIZE), Err(createErr(&many)));
  // The spec: CL_INVALID_HOST_PTR if host_ptr is NULL and USE_HOST_PTR or COPY_HOST_PTR are set,
  // or host_ptr is not NULL but they are not.
  EXPECT_EQ(Err(CL_INVALID_HOST_PTR), Err(createErr(&d2, &kRgba8, CL_MEM_USE_HOST_PTR)));
  EXPECT_EQ(Err(CL_INVALID_HOST_PTR), Err(createErr(&d2, &kRgba8, CL_MEM_COPY_HOST_PTR)));
  EXPECT_EQ(Err(CL_INVALID_HOST_PTR), Err(createErr(&d2, &kRgba8, 0, host.data())));
  // No image properties exist.
  const cl_mem_properties props[] = {0x4242, 1, 0};
  EXPECT_EQ(nullptr, clCreateImageWithProperties(context_, props, 0, &kRgba8, &d2, nullptr, &err));
  EXPECT_ERR(CL_INVALID_PROPERTY, err);
}

TEST_F(ImageApi, CreateWithPropertiesAndDeprecatedEntryPoints) {
  cl_int err = -1;
  auto d2 = makeDesc(CL_MEM_OBJECT_IMAGE2D, 4, 4);
  const cl_mem_properties empty[] = {0};
  Mem a(
      clCreateImageWithProperties(context_, empty, CL_MEM_READ_ONLY, &kRgba8, &d2, nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  EXPECT_EQ(cl_mem_flags(CL_MEM_READ_ONLY), memInfo<cl_mem_flags>(a, CL_MEM_FLAGS));
  size_t n = 99;
  EXPECT_CL_OK(clGetMemObjectInfo(a, CL_MEM_PROPERTIES, 0, nullptr, &n));
  EXPECT_EQ(sizeof(cl_mem_properties), n);
  std::vector<unsigned char> host(64 * 8 * 3);
  std::iota(host.begin(), host.end(), 0);
  Mem b(clCreateImage2D(context_, CL_MEM_COPY_HOST_PTR, &kRgba8, 8, 3, 64, host.data(), &err));
  ASSERT_ERR(CL_SUCCESS, err);
  EXPECT_EQ(cl_mem_object_type(CL_MEM_OBJECT_IMAGE2D), memInfo<cl_mem_object_type>(b, CL_MEM_TYPE));
  const size_t origin[3] = {0, 0, 0}, region[3] = {8, 3, 1};
  auto got = readImage(b, origin, region, 4);
  for (size_t y = 0; y < 3; ++y)
    EXPECT_EQ(0, std::memcmp(got.data() + y * 32, host.data() + y * 64, 32)) << "row " << y;
  Mem c(clCreateImage3D(context_, 0, &kRgba8, 8, 3, 2, 0, 0, nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  EXPECT_EQ(2u, imageInfo<size_t>(c, CL_IMAGE_DEPTH));
  // OpenCL 1.x: CL_INVALID_IMAGE_SIZE for zero sizes (and a depth of 1 for a 3D image).
  EXPECT_EQ(nullptr, clCreateImage2D(context_, 0, &kRgba8, 0, 3, 0, nullptr, &err));
  EXPECT_ERR(CL_INVALID_IMAGE_SIZE, err);
  EXPECT_EQ(nullptr, clCreateImage3D(context_, 0, &kRgba8, 8, 3, 1, 0, 0, nullptr, &err));
  EXPECT_ERR(CL_INVALID_IMAGE_SIZE, err);
  // OpenCL 1.1: CL_INVALID_IMAGE_SIZE too for pitches that break the rules.
  EXPECT_EQ(nullptr,
            clCreateImage2D(context_, CL_MEM_COPY_HOST_PTR, &kRgba8, 8, 3, 16, host.data(), &err));
  EXPECT_ERR(CL_INVALID_IMAGE_SIZE, err);
  EXPECT_EQ(nullptr, clCreateImage2D(context_, 0, &kRgba8, 8, 3, 64, nullptr, &err));
  EXPECT_ERR(CL_INVALID_IMAGE_SIZE, err);
}

TEST_F(ImageApi, UseHostPtrKeepsTheApplicationsPitches) {
  // A 3D image 5x3x2 of RGBA8 with row pitch 32 and slice pitch 128 (gaps in both).
  std::vector<unsigned char> host(128 * 2, 0xAB);
  auto desc = makeDesc(CL_MEM_OBJECT_IMAGE3D, 5, 3, 2, 0, 32, 128);
  Mem m = image(desc, kRgba8, CL_MEM_USE_HOST_PTR, host.data());
  ASSERT_TRUE(m);
  EXPECT_EQ(32u, imageInfo<size_t>(m, CL_IMAGE_ROW_PITCH));
  EXPECT_EQ(128u, imageInfo<size_t>(m, CL_IMAGE_SLICE_PITCH));
  EXPECT_EQ(static_cast<void*>(host.data()), memInfo<void*>(m, CL_MEM_HOST_PTR));
  std::vector<unsigned char> data(5 * 3 * 2 * 4);
  std::iota(data.begin(), data.end(), 0);
  const size_t origin[3] = {0, 0, 0}, region[3] = {5, 3, 2};
  ASSERT_CL(CL_SUCCESS, clEnqueueWriteImage(queue_, m, CL_TRUE, origin, region, 0, 0, data.data(),
                                            0, nullptr, nullptr));
  // Mapping returns the application's memory with its pitches; the gaps were not touched.
  size_t rp = 0, sp = 0;
  cl_int err = -1;
  auto* p = static_cast<unsigned char*>(clEnqueueMapImage(
      queue_, m, CL_TRUE, CL_MAP_READ, origin, region, &rp, &sp, 0, nullptr, nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  EXPECT_EQ(host.data(), p);
  EXPECT_EQ(32u, rp);
  EXPECT_EQ(128u, sp);
  for (size_t z = 0; z < 2; ++z)
    for (size_t y = 0; y < 3; ++y) {
      EXPECT_EQ(0, std::memcmp(p + z * 128 + y * 32, data.data() + (z * 3 + y) * 20, 20))
          << y << "," << z;
      EXPECT_EQ(0xAB, p[z * 128 + y * 32 + 20]) << "gap after row " << y << "," << z;
    }
  EXPECT_CL_OK(clEnqueueUnmapMemObject(queue_, m, p, 0, nullptr, nullptr));
  EXPECT_CL_OK(clFinish(queue_));
  EXPECT_EQ(0xAB, host[127]);
}

TEST_F(ImageApi, CopyHostPtrReadsTheApplicationsPitches) {
  // A 2D array 3x2x2 of R16 given with row pitch 10 and slice pitch 30.
  std::vector<uint16_t> host(15 * 2);
  std::iota(host.begin(), host.end(), 100);
  const cl_image_format r16{CL_R, CL_UNSIGNED_INT16};
  auto desc = makeDesc(CL_MEM_OBJECT_IMAGE2D_ARRAY, 3, 2, 0, 2, 10, 30);
  Mem m = image(desc, r16, CL_MEM_COPY_HOST_PTR | CL_MEM_HOST_READ_ONLY, host.data());
  ASSERT_TRUE(m);
  EXPECT_EQ(6u, imageInfo<size_t>(m, CL_IMAGE_ROW_PITCH));  // stored tightly
  EXPECT_EQ(12u, imageInfo<size_t>(m, CL_IMAGE_SLICE_PITCH));
  std::fill(host.begin(), host.end(), 0);  // only used at creation
  const size_t origin[3] = {0, 0, 0}, region[3] = {3, 2, 2};
  auto got = readImage(m, origin, region, 2);
  const uint16_t* g = reinterpret_cast<const uint16_t*>(got.data());
  for (size_t z = 0; z < 2; ++z)
    for (size_t y = 0; y < 2; ++y)
      for (size_t x = 0; x < 3; ++x) EXPECT_EQ(100 + z * 15 + y * 5 + x, g[(z * 2 + y) * 3 + x]);
  // The spec: CL_INVALID_OPERATION if clEnqueueWriteImage is called on an image created with
  // CL_MEM_HOST_READ_ONLY.
  EXPECT_CL(CL_INVALID_OPERATION, clEnqueueWriteImage(queue_, m, CL_TRUE, origin, region, 0, 0,
                                                      got.data(), 0, nullptr, nullptr));
}

TEST_F(ImageApi, AllocHostPtrAndHostAccessFlags) {
  auto desc = makeDesc(CL_MEM_OBJECT_IMAGE2D, 4, 4);
  Mem a = image(desc, kRgba8, CL_MEM_ALLOC_HOST_PTR | CL_MEM_HOST_WRITE_ONLY);
  Mem n = image(desc, kRgba8, CL_MEM_HOST_NO_ACCESS);
  ASSERT_TRUE(a && n);
  std::vector<unsigned char> d(64);
  const size_t origin[3] = {0, 0, 0}, region[3] = {4, 4, 1};
  size_t rp = 0;
  cl_int err = CL_SUCCESS;
  EXPECT_CL_OK(
      clEnqueueWriteImage(queue_, a, CL_TRUE, origin, region, 0, 0, d.data(), 0, nullptr, nullptr));
  // The spec: CL_INVALID_OPERATION for host reads of HOST_WRITE_ONLY / HOST_NO_ACCESS images,
  // host writes of HOST_NO_ACCESS ones, and maps likewise.
  EXPECT_CL(CL_INVALID_OPERATION, clEnqueueReadImage(queue_, a, CL_TRUE, origin, region, 0, 0,
                                                     d.data(), 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_OPERATION, clEnqueueReadImage(queue_, n, CL_TRUE, origin, region, 0, 0,
                                                     d.data(), 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_OPERATION, clEnqueueWriteImage(queue_, n, CL_TRUE, origin, region, 0, 0,
                                                      d.data(), 0, nullptr, nullptr));
  EXPECT_EQ(nullptr, clEnqueueMapImage(queue_, a, CL_TRUE, CL_MAP_READ, origin, region, &rp,
                                       nullptr, 0, nullptr, nullptr, &err));
  EXPECT_ERR(CL_INVALID_OPERATION, err);
  EXPECT_EQ(nullptr, clEnqueueMapImage(queue_, n, CL_TRUE, CL_MAP_WRITE, origin, region, &rp,
                                       nullptr, 0, nullptr, nullptr, &err));
  EXPECT_ERR(CL_INVALID_OPERATION, err);
  // Fill ignores the host flags (the spec).
  const cl_float color[4] = {1, 0, 0, 1};
  EXPECT_CL_OK(clEnqueueFillImage(queue_, n, color, origin, region, 0, nullptr, nullptr));
  EXPECT_CL_OK(clFinish(queue_));
}

// ---- Read / write with origins and regions, every type ----

struct TypeCase {
  cl_mem_object_type type;
  size_t w, h, d, array;  // as the desc takes them
  size_t ext[3];          // the image's extent in origin/region terms
};
const TypeCase kTypes[] = {
    {CL_MEM_OBJECT_IMAGE1D, 9, 0, 0, 0, {9, 1, 1}},
    {CL_MEM_OBJECT_IMAGE1D_ARRAY, 9, 0, 0, 4, {9, 4, 1}},
    {CL_MEM_OBJECT_IMAGE2D, 9, 5, 0, 0, {9, 5, 1}},
    {CL_MEM_OBJECT_IMAGE2D_ARRAY, 9, 5, 0, 3, {9, 5, 3}},
    {CL_MEM_OBJECT_IMAGE3D, 9, 5, 3, 0, {9, 5, 3}},
};

TEST_F(ImageApi, SubRegionWritesLandOnlyThereForEveryType) {
  const cl_image_format r32{CL_R, CL_UNSIGNED_INT32};
  for (const TypeCase& c : kTypes) {
    SCOPED_TRACE(testing::Message() << "type 0x" << std::hex << c.type);
    Mem m = image(makeDesc(c.type, c.w, c.h, c.d, c.array), r32);
    ASSERT_TRUE(m);
    const size_t* e = c.ext;
    const size_t total = e[0] * e[1] * e[2];
    std::vector<uint32_t> zero(total, 0);
    const size_t o0[3] = {0, 0, 0};
    ASSERT_CL(CL_SUCCESS, clEnqueueWriteImage(queue_, m, CL_TRUE, o0, e, 0, 0, zero.data(), 0,
                                              nullptr, nullptr));
    // A sub-region at an origin, written from host memory with wider pitches.
    const size_t origin[3] = {2, e[1] > 1 ? 1u : 0u, e[2] > 1 ? 1u : 0u};
    const size_t region[3] = {5, e[1] > 1 ? e[1] - 1 : 1, e[2] > 1 ? 2u : 1u};
    const bool one_d_array = c.type == CL_MEM_OBJECT_IMAGE1D_ARRAY;
    const bool slices =
        c.type == CL_MEM_OBJECT_IMAGE3D || c.type == CL_MEM_OBJECT_IMAGE2D_ARRAY || one_d_array;
    const size_t row_pitch = 8 * 4;  // 8 pixels for a row of 5
    const size_t rows_per_slice = one_d_array ? 1 : region[1];
    const size_t slice_pitch = slices ? row_pitch * rows_per_slice + 16 : 0;
    const size_t layers = one_d_array ? region[1] : region[2];
    std::vector<uint32_t> src((slices ? slice_pitch * layers : row_pitch * region[1]) / 4 + 8, 0);
    auto host_at = [&](size_t x, size_t y, size_t z) -> uint32_t& {
      if (one_d_array) return src[(y * slice_pitch + x * 4) / 4];
      return src[(z * slice_pitch + y * row_pitch + x * 4) / 4];
    };
    for (size_t z = 0; z < region[2]; ++z)
      for (size_t y = 0; y < region[1]; ++y)
        for (size_t x = 0; x < region[0]; ++x)
          host_at(x, y, z) = uint32_t(1 + x + 100 * y + 10000 * z);
    ASSERT_CL(CL_SUCCESS, clEnqueueWriteImage(queue_, m, CL_TRUE, origin, region, row_pitch,
                                              slice_pitch, src.data(), 0, nullptr, nullptr));
    std::vector<uint32_t> all(total, 7);
    ASSERT_CL(CL_SUCCESS,
              clEnqueueReadImage(queue_, m, CL_TRUE, o0, e, 0, 0, all.data(), 0, nullptr, nullptr));
    for (size_t z = 0; z < e[2]; ++z)
      for (size_t y = 0; y < e[1]; ++y)
        for (size_t x = 0; x < e[0]; ++x) {
          const bool inside = x >= origin[0] && x < origin[0] + region[0] && y >= origin[1] &&
                              y < origin[1] + region[1] && z >= origin[2] &&
                              z < origin[2] + region[2];
          const uint32_t want =
              inside
                  ? uint32_t(1 + (x - origin[0]) + 100 * (y - origin[1]) + 10000 * (z - origin[2]))
                  : 0;
          ASSERT_EQ(want, all[(z * e[1] + y) * e[0] + x]) << x << "," << y << "," << z;
        }
    // Reading the sub-region back with the same wide pitches gives the same bytes.
    std::vector<uint32_t> back(src.size(), 0);
    ASSERT_CL(CL_SUCCESS, clEnqueueReadImage(queue_, m, CL_TRUE, origin, region, row_pitch,
                                             slice_pitch, back.data(), 0, nullptr, nullptr));
    for (size_t z = 0; z < region[2]; ++z)
      for (size_t y = 0; y < region[1]; ++y)
        for (size_t x = 0; x < region[0]; ++x) {
          const size_t i = one_d_array ? (y * slice_pitch + x * 4) / 4
                                       : (z * slice_pitch + y * row_pitch + x * 4) / 4;
          ASSERT_EQ(src[i], back[i]);
        }
  }
}

TEST_F(ImageApi, OriginAndRegionRules) {
  Mem m1 = image(makeDesc(CL_MEM_OBJECT_IMAGE1D, 8));
  Mem m1a = image(makeDesc(CL_MEM_OBJECT_IMAGE1D_ARRAY, 8, 0, 0, 2));
  Mem m2 = image(makeDesc(CL_MEM_OBJECT_IMAGE2D, 8, 4));
  Mem m3 = image(makeDesc(CL_MEM_OBJECT_IMAGE3D, 8, 4, 2));
  std::vector<unsigned char> host(8 * 4 * 4 * 4);
  struct Bad {
    cl_mem m;
    size_t origin[3], region[3];
  };
  const Bad bad[] = {
      {m1, {0, 1, 0}, {1, 1, 1}},        {m1, {0, 0, 0}, {1, 2, 1}},  {m1, {0, 0, 1}, {1, 1, 1}},
      {m1, {0, 0, 0}, {9, 1, 1}},        {m1, {8, 0, 0}, {1, 1, 1}},  {m1, {0, 0, 0}, {0, 1, 1}},
      {m1a, {0, 2, 0}, {1, 1, 1}},       {m1a, {0, 0, 0}, {1, 3, 1}}, {m1a, {0, 0, 0}, {1, 1, 2}},
      {m2, {0, 0, 1}, {1, 1, 1}},        {m2, {0, 0, 0}, {1, 1, 2}},  {m2, {0, 3, 0}, {1, 2, 1}},
      {m2, {0, 0, 0}, {1, 0, 1}},        {m3, {0, 0, 1}, {1, 1, 2}},  {m3, {0, 0, 0}, {1, 1, 0}},
      {m3, {SIZE_MAX, 0, 0}, {2, 1, 1}},
  };
  for (const Bad& b : bad) {
    SCOPED_TRACE(testing::Message()
                 << "origin " << b.origin[0] << "," << b.origin[1] << "," << b.origin[2]
                 << " region " << b.region[0] << "," << b.region[1] << "," << b.region[2]);
    // The spec: CL_INVALID_VALUE if the region is out of bounds, or origin and region do not
    // follow the rules for the image type.
    EXPECT_CL(CL_INVALID_VALUE, clEnqueueReadImage(queue_, b.m, CL_TRUE, b.origin, b.region, 0, 0,
                                                   host.data(), 0, nullptr, nullptr));
    EXPECT_CL(CL_INVALID_VALUE, clEnqueueWriteImage(queue_, b.m, CL_TRUE, b.origin, b.region, 0, 0,
                                                    host.data(), 0, nullptr, nullptr));
    const cl_float color[4] = {};
    EXPECT_CL(CL_INVALID_VALUE,
              clEnqueueFillImage(queue_, b.m, color, b.origin, b.region, 0, nullptr, nullptr));
    size_t rp, sp;
    cl_int err = CL_SUCCESS;
    EXPECT_EQ(nullptr, clEnqueueMapImage(queue_, b.m, CL_TRUE, CL_MAP_READ, b.origin, b.region, &rp,
                                         &sp, 0, nullptr, nullptr, &err));
    EXPECT_ERR(CL_INVALID_VALUE, err);
  }
  const size_t o[3] = {0, 0, 0}, r[3] = {2, 2, 1};
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueReadImage(queue_, m2, CL_TRUE, nullptr, r, 0, 0, host.data(),
                                                 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueReadImage(queue_, m2, CL_TRUE, o, nullptr, 0, 0, host.data(),
                                                 0, nullptr, nullptr));
  // The spec: CL_INVALID_VALUE if ptr is NULL; row_pitch must be at least region[0] * element
  // size; slice_pitch at least row_pitch * height.
  EXPECT_CL(CL_INVALID_VALUE,
            clEnqueueReadImage(queue_, m2, CL_TRUE, o, r, 0, 0, nullptr, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE,
            clEnqueueWriteImage(queue_, m2, CL_TRUE, o, r, 4, 0, host.data(), 0, nullptr, nullptr));
  const size_t r3[3] = {2, 2, 2};
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueWriteImage(queue_, m3, CL_TRUE, o, r3, 8, 12, host.data(), 0,
                                                  nullptr, nullptr));
  EXPECT_CL_OK(
      clEnqueueWriteImage(queue_, m3, CL_TRUE, o, r3, 8, 16, host.data(), 0, nullptr, nullptr));
}

TEST_F(ImageApi, WrongObjectsAndContexts) {
  Mem img = image(makeDesc(CL_MEM_OBJECT_IMAGE2D, 4, 4));
  Mem buf = makeBuffer(256);
  std::vector<unsigned char> host(256);
  const size_t o[3] = {0, 0, 0}, r[3] = {4, 4, 1};
  // The spec: CL_INVALID_MEM_OBJECT if image is not a valid image object (a buffer is not).
  EXPECT_CL(CL_INVALID_MEM_OBJECT,
            clEnqueueReadImage(queue_, buf, CL_TRUE, o, r, 0, 0, host.data(), 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_MEM_OBJECT, clEnqueueWriteImage(queue_, buf, CL_TRUE, o, r, 0, 0,
                                                       host.data(), 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_MEM_OBJECT,
            clEnqueueCopyImage(queue_, buf, img, o, o, r, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_MEM_OBJECT,
            clEnqueueCopyImageToBuffer(queue_, buf, buf, o, r, 0, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_MEM_OBJECT,
            clEnqueueCopyBufferToImage(queue_, img, img, 0, o, r, 0, nullptr, nullptr));
  // ... and buffer commands need buffers.
  EXPECT_CL(CL_INVALID_MEM_OBJECT,
            clEnqueueReadBuffer(queue_, img, CL_TRUE, 0, 16, host.data(), 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_MEM_OBJECT,
            clEnqueueCopyBuffer(queue_, img, buf, 0, 0, 16, 0, nullptr, nullptr));
  cl_int err = CL_SUCCESS;
  EXPECT_EQ(nullptr, clEnqueueMapBuffer(queue_, img, CL_TRUE, CL_MAP_READ, 0, 16, 0, nullptr,
                                        nullptr, &err));
  EXPECT_ERR(CL_INVALID_MEM_OBJECT, err);
  cl_buffer_region region{0, 16};
  EXPECT_EQ(nullptr, clCreateSubBuffer(img, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &err));
  EXPECT_ERR(CL_INVALID_MEM_OBJECT, err);
  // The spec: CL_INVALID_CONTEXT if the queue and the image are in different contexts.
  Context other = makeOtherContext(device_);
  Mem foreign(clCreateImage(
      other, 0, &kRgba8, std::array<cl_image_desc, 1>{makeDesc(CL_MEM_OBJECT_IMAGE2D, 4, 4)}.data(),
      nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  EXPECT_CL(CL_INVALID_CONTEXT, clEnqueueReadImage(queue_, foreign, CL_TRUE, o, r, 0, 0,
                                                   host.data(), 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_CONTEXT,
            clEnqueueCopyImage(queue_, img, foreign, o, o, r, 0, nullptr, nullptr));
  // mem_object from another context.
  auto from_foreign = makeDesc(CL_MEM_OBJECT_IMAGE2D, 4, 4, 0, 0, 0, 0, foreign);
  EXPECT_EQ(Err(CL_INVALID_IMAGE_DESCRIPTOR), Err(createErr(&from_foreign)));
}

// ---- Copies ----

TEST_F(ImageApi, CopyImageBetweenTypesAndOverlap) {
  const cl_image_format r8{CL_R, CL_UNSIGNED_INT8};
  Mem a = image(makeDesc(CL_MEM_OBJECT_IMAGE2D, 8, 8), r8);
  Mem v = image(makeDesc(CL_MEM_OBJECT_IMAGE3D, 8, 8, 4), r8);
  Mem arr = image(makeDesc(CL_MEM_OBJECT_IMAGE1D_ARRAY, 8, 0, 0, 8), r8);
  std::vector<unsigned char> d(64);
  std::iota(d.begin(), d.end(), 0);
  const size_t o[3] = {0, 0, 0}, full[3] = {8, 8, 1};
  ASSERT_CL(CL_SUCCESS,
            clEnqueueWriteImage(queue_, a, CL_TRUE, o, full, 0, 0, d.data(), 0, nullptr, nullptr));
  // 2D image -> slice 2 of a 3D image, a 4x3 block at (1, 2) to (3, 4).
  const size_t so[3] = {1, 2, 0}, dz[3] = {3, 4, 2}, r[3] = {4, 3, 1};
  ASSERT_CL(CL_SUCCESS, clEnqueueCopyImage(queue_, a, v, so, dz, r, 0, nullptr, nullptr));
  auto got = readImage(v, dz, r, 1);
  for (size_t y = 0; y < 3; ++y)
    for (size_t x = 0; x < 4; ++x) EXPECT_EQ(d[(2 + y) * 8 + 1 + x], got[y * 4 + x]);
  // 2D image -> 1D image array: rows become array images.
  ASSERT_CL(CL_SUCCESS, clEnqueueCopyImage(queue_, a, arr, o, o, full, 0, nullptr, nullptr));
  EXPECT_EQ(d, readImage(arr, o, full, 1));
  // Within one image: disjoint regions copy, overlapping ones are CL_MEM_COPY_OVERLAP.
  const size_t src[3] = {0, 0, 0}, dst[3] = {4, 4, 0}, blk[3] = {4, 4, 1};
  ASSERT_CL(CL_SUCCESS, clEnqueueCopyImage(queue_, a, a, src, dst, blk, 0, nullptr, nullptr));
  auto after = readImage(a, o, full, 1);
  for (size_t y = 0; y < 4; ++y)
    for (size_t x = 0; x < 4; ++x) EXPECT_EQ(d[y * 8 + x], after[(4 + y) * 8 + 4 + x]);
  const size_t near[3] = {2, 2, 0};
  // The spec: CL_MEM_COPY_OVERLAP if src_image and dst_image are the same image object and the
  // source and destination regions overlap.
  EXPECT_CL(CL_MEM_COPY_OVERLAP,
            clEnqueueCopyImage(queue_, a, a, src, near, blk, 0, nullptr, nullptr));
  const size_t side[3] = {4, 0, 0};  // beside each other in the same rows: no overlap
  EXPECT_CL_OK(clEnqueueCopyImage(queue_, a, a, src, side, blk, 0, nullptr, nullptr));
  // The spec: CL_IMAGE_FORMAT_MISMATCH if the images do not use the same image format.
  Mem rgba = image(makeDesc(CL_MEM_OBJECT_IMAGE2D, 8, 8));
  EXPECT_CL(CL_IMAGE_FORMAT_MISMATCH,
            clEnqueueCopyImage(queue_, a, rgba, o, o, r, 0, nullptr, nullptr));
  // The spec: CL_INVALID_VALUE if a region lies outside either image, or breaks the type rules.
  const size_t big[3] = {8, 8, 2};
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueCopyImage(queue_, v, a, o, o, big, 0, nullptr, nullptr));
  const size_t late[3] = {5, 0, 0};
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueCopyImage(queue_, a, v, late, o, r, 0, nullptr, nullptr));
  EXPECT_CL_OK(clFinish(queue_));
}

TEST_F(ImageApi, CopyBetweenImagesAndBuffers) {
  const cl_image_format rg16{CL_RG, CL_UNSIGNED_INT16};  // 4 bytes a pixel
  Mem img = image(makeDesc(CL_MEM_OBJECT_IMAGE2D_ARRAY, 6, 4, 0, 3), rg16);
  Mem buf = makeBuffer(1024);
  std::vector<unsigned char> d(1024);
  for (size_t i = 0; i < d.size(); ++i) d[i] = static_cast<unsigned char>(i * 7);
  write(buf, d.data(), d.size());
  // Buffer at offset 12 -> a 3x2x2 block at (2, 1, 1): packed rows of 12 bytes.
  const size_t origin[3] = {2, 1, 1}, region[3] = {3, 2, 2};
  ASSERT_CL(CL_SUCCESS,
            clEnqueueCopyBufferToImage(queue_, buf, img, 12, origin, region, 0, nullptr, nullptr));
  auto got = readImage(img, origin, region, 4);
  EXPECT_EQ(0, std::memcmp(got.data(), d.data() + 12, 48));
  // And back, to offset 500 of the buffer.
  ASSERT_CL(CL_SUCCESS,
            clEnqueueCopyImageToBuffer(queue_, img, buf, origin, region, 500, 0, nullptr, nullptr));
  auto back = read(buf, 48, 500);
  EXPECT_EQ(0, std::memcmp(back.data(), d.data() + 12, 48));
  // The spec: CL_INVALID_VALUE if the buffer's side lies outside the buffer.
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueCopyImageToBuffer(queue_, img, buf, origin, region, 1000, 0,
                                                         nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueCopyBufferToImage(queue_, buf, img, 1000, origin, region, 0,
                                                         nullptr, nullptr));
  const size_t out[3] = {0, 0, 3};
  EXPECT_CL(CL_INVALID_VALUE,
            clEnqueueCopyBufferToImage(queue_, buf, img, 0, out, region, 0, nullptr, nullptr));
  // The spec: CL_INVALID_MEM_OBJECT if the image is a 1D image buffer made from the buffer.
  cl_image_desc ib = makeDesc(CL_MEM_OBJECT_IMAGE1D_BUFFER, 16, 0, 0, 0, 0, 0, buf);
  Mem view = image(ib, rg16);
  const size_t o[3] = {0, 0, 0}, r1[3] = {4, 1, 1};
  EXPECT_CL(CL_INVALID_MEM_OBJECT,
            clEnqueueCopyImageToBuffer(queue_, view, buf, o, r1, 512, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_MEM_OBJECT,
            clEnqueueCopyBufferToImage(queue_, buf, view, 512, o, r1, 0, nullptr, nullptr));
  EXPECT_CL_OK(clFinish(queue_));
}

// ---- Images made from buffers and images ----

TEST_F(ImageApi, ImageFromBufferSharesItsBytes) {
  Mem buf = makeBuffer(4096);
  std::vector<unsigned char> d(4096);
  std::iota(d.begin(), d.end(), 0);
  write(buf, d.data(), d.size());
  const cl_image_format r8{CL_R, CL_UNORM_INT8};
  // 1D image buffer: the buffer's first 100 bytes.
  Mem one = image(makeDesc(CL_MEM_OBJECT_IMAGE1D_BUFFER, 100, 0, 0, 0, 0, 0, buf), r8, 0);
  ASSERT_TRUE(one);
  EXPECT_EQ(buf.get(), memInfo<cl_mem>(one, CL_MEM_ASSOCIATED_MEMOBJECT));
  EXPECT_EQ(cl_mem_flags(CL_MEM_READ_WRITE),
            memInfo<cl_mem_flags>(one, CL_MEM_FLAGS));  // inherited
  const size_t o[3] = {0, 0, 0}, r1[3] = {100, 1, 1};
  EXPECT_EQ(std::vector<unsigned char>(d.begin(), d.begin() + 100), readImage(one, o, r1, 1));
  // 2D image from the buffer with a row pitch of 64: pixel (x, y) is byte y * 64 + x.
  Mem two = image(makeDesc(CL_MEM_OBJECT_IMAGE2D, 10, 20, 0, 0, 64, 0, buf), r8, CL_MEM_READ_ONLY);
  ASSERT_TRUE(two);
  EXPECT_EQ(64u, imageInfo<size_t>(two, CL_IMAGE_ROW_PITCH));
  const size_t o2[3] = {3, 5, 0}, r2[3] = {4, 2, 1};
  auto got = readImage(two, o2, r2, 1);
  for (size_t y = 0; y < 2; ++y)
    for (size_t x = 0; x < 4; ++x) EXPECT_EQ(d[(5 + y) * 64 + 3 + x], got[y * 4 + x]);
  // Writing through the image changes the buffer.
  const unsigned char px[2] = {0xF0, 0xF1};
  const size_t ow[3] = {50, 0, 0}, rw[3] = {2, 1, 1};
  ASSERT_CL(CL_SUCCESS,
            clEnqueueWriteImage(queue_, one, CL_TRUE, ow, rw, 0, 0, px, 0, nullptr, nullptr));
  auto b = read(buf, 2, 50);
  EXPECT_EQ(0xF0, b[0]);
  EXPECT_EQ(0xF1, b[1]);
  // A 2D view of a 2D image: same bytes, same pitch.
  Mem view = image(makeDesc(CL_MEM_OBJECT_IMAGE2D, 10, 20, 0, 0, 0, 0, two), r8, 0);
  ASSERT_TRUE(view);
  EXPECT_EQ(two.get(), memInfo<cl_mem>(view, CL_MEM_ASSOCIATED_MEMOBJECT));
  EXPECT_EQ(cl_mem_flags(CL_MEM_READ_ONLY), memInfo<cl_mem_flags>(view, CL_MEM_FLAGS));
  EXPECT_EQ(got, readImage(view, o2, r2, 1));
  // A 1D image buffer made from a sub-buffer (at the device's base address alignment) sees the
  // sub-buffer's bytes.
  const size_t align = deviceInfo<cl_uint>(device_, CL_DEVICE_MEM_BASE_ADDR_ALIGN) / 8;
  std::vector<unsigned char> e(align + 512);
  std::iota(e.begin(), e.end(), 0);
  Mem big = makeBuffer(e.size());
  write(big, e.data(), e.size());
  cl_buffer_region region{align, 512};
  cl_int err = -1;
  Mem sub(clCreateSubBuffer(big, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  Mem in_sub = image(makeDesc(CL_MEM_OBJECT_IMAGE1D_BUFFER, 128, 0, 0, 0, 0, 0, sub),
                     {CL_RGBA, CL_UNSIGNED_INT8}, 0);
  ASSERT_TRUE(in_sub);
  const size_t r4[3] = {128, 1, 1};
  EXPECT_EQ(std::vector<unsigned char>(e.begin() + align, e.end()), readImage(in_sub, o, r4, 4));
}

TEST_F(ImageApi, ImageFromBufferErrors) {
  Mem buf = makeBuffer(1024, CL_MEM_READ_ONLY | CL_MEM_HOST_READ_ONLY);
  const cl_image_format r8{CL_R, CL_UNORM_INT8};
  auto d1 = makeDesc(CL_MEM_OBJECT_IMAGE1D_BUFFER, 100, 0, 0, 0, 0, 0, buf);
  // The spec: CL_INVALID_VALUE if mem_object was created READ_ONLY and flags ask for writes, a
  // host-pointer flag is given, or host access conflicts.
  EXPECT_EQ(Err(CL_INVALID_VALUE), Err(createErr(&d1, &r8, CL_MEM_WRITE_ONLY)));
  EXPECT_EQ(Err(CL_INVALID_VALUE), Err(createErr(&d1, &r8, CL_MEM_READ_WRITE)));
  EXPECT_EQ(Err(CL_INVALID_VALUE), Err(createErr(&d1, &r8, CL_MEM_ALLOC_HOST_PTR)));
  EXPECT_EQ(Err(CL_INVALID_VALUE), Err(createErr(&d1, &r8, CL_MEM_HOST_WRITE_ONLY)));
  // Larger than the buffer.
  auto too_big = makeDesc(CL_MEM_OBJECT_IMAGE1D_BUFFER, 1025, 0, 0, 0, 0, 0, buf);
  EXPECT_EQ(Err(CL_INVALID_IMAGE_SIZE), Err(createErr(&too_big, &r8)));
  auto too_tall = makeDesc(CL_MEM_OBJECT_IMAGE2D, 16, 33, 0, 0, 32, 0, buf);
  EXPECT_EQ(Err(CL_INVALID_IMAGE_SIZE), Err(createErr(&too_tall, &r8)));
  // A buffer for a 1D image array: not allowed.
  auto arr = makeDesc(CL_MEM_OBJECT_IMAGE1D_ARRAY, 16, 0, 0, 2, 0, 0, buf);
  EXPECT_EQ(Err(CL_INVALID_IMAGE_DESCRIPTOR), Err(createErr(&arr, &r8)));
  // An image for a 1D image buffer: not allowed.
  Mem img = image(makeDesc(CL_MEM_OBJECT_IMAGE2D, 16, 16), r8);
  auto from_img = makeDesc(CL_MEM_OBJECT_IMAGE1D_BUFFER, 16, 0, 0, 0, 0, 0, img);
  EXPECT_EQ(Err(CL_INVALID_IMAGE_DESCRIPTOR), Err(createErr(&from_img, &r8)));
  // A view of an image: the descriptor must match, the data type too.
  auto wrong_size = makeDesc(CL_MEM_OBJECT_IMAGE2D, 8, 16, 0, 0, 0, 0, img);
  EXPECT_EQ(Err(CL_INVALID_IMAGE_DESCRIPTOR), Err(createErr(&wrong_size, &r8)));
  auto same = makeDesc(CL_MEM_OBJECT_IMAGE2D, 16, 16, 0, 0, 0, 0, img);
  const cl_image_format r8i{CL_R, CL_UNSIGNED_INT8};
  EXPECT_EQ(Err(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR), Err(createErr(&same, &r8i)));
  const cl_image_format a8{CL_A, CL_UNORM_INT8};
  EXPECT_EQ(Err(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR), Err(createErr(&same, &a8)));
  // A host_ptr with a mem_object.
  unsigned char host[16];
  EXPECT_EQ(Err(CL_INVALID_VALUE), Err(createErr(&d1, &r8, CL_MEM_COPY_HOST_PTR, host)));
  EXPECT_EQ(Err(CL_INVALID_HOST_PTR), Err(createErr(&d1, &r8, 0, host)));
}

// ---- Fill ----

TEST_F(ImageApi, FillConvertsTheColourToEveryFormat) {
  struct Case {
    cl_image_format fmt;
    unsigned char color[16];
    std::vector<unsigned char> pixel;
  };
  auto f4 = [](float r, float g, float b, float a) {
    Case c{};
    const float v[4] = {r, g, b, a};
    std::memcpy(c.color, v, 16);
    return c;
  };
  auto i4 = [](int32_t r, int32_t g, int32_t b, int32_t a) {
    Case c{};
    const int32_t v[4] = {r, g, b, a};
    std::memcpy(c.color, v, 16);
    return c;
  };
  auto bytes = [](std::initializer_list<uint64_t> v, size_t width) {
    std::vector<unsigned char> out;
    for (uint64_t x : v)
      for (size_t i = 0; i < width; ++i) out.push_back(static_cast<unsigned char>(x >> (8 * i)));
    return out;
  };
  std::vector<Case> cases;
  // Round to nearest even, saturation: 0.5 * 255 = 127.5 -> 128; > 1 and < 0 clamp.
  Case c = f4(0.5f, 2.0f, -1.0f, 1.0f);
  c.fmt = {CL_RGBA, CL_UNORM_INT8}, c.pixel = {128, 255, 0, 255};
  cases.push_back(c);
  c = f4(0.5f, 2.0f, -1.0f, 1.0f);
  c.fmt = {CL_BGRA, CL_UNORM_INT8}, c.pixel = {0, 255, 128, 255};
  cases.push_back(c);
  c = f4(0.5f, 2.0f, -1.0f, 1.0f);
  c.fmt = {CL_ARGB, CL_UNORM_INT8}, c.pixel = {255, 128, 255, 0};
  cases.push_back(c);
  c = f4(0.5f, -2.0f, 0.25f, 1.0f);
  c.fmt = {CL_RGBA, CL_SNORM_INT8}, c.pixel = {64, 0x81, 32, 127};  // 63.5 -> 64, -1 -> -127
  cases.push_back(c);
  c = f4(0.25f, 0, 0, 0.75f);
  c.fmt = {CL_RA, CL_UNORM_INT16}, c.pixel = bytes({16384, 49151}, 2);  // 16383.75, 49151.25
  cases.push_back(c);
  c = f4(1.0f, -2.0f, 65520.0f, 0.000061035156f);
  c.fmt = {CL_RGBA, CL_HALF_FLOAT}, c.pixel = bytes({0x3C00, 0xC000, 0x7C00, 0x0400}, 2);
  cases.push_back(c);
  c = f4(0.1f, 0, 0, 0.7f);
  c.fmt = {CL_A, CL_FLOAT}, c.pixel = bytes({0x3F333333}, 4);
  cases.push_back(c);
  c = i4(300, -5, 7, 255);
  c.fmt = {CL_RGBA, CL_UNSIGNED_INT8}, c.pixel = {255, 255, 7, 255};  // uint 0xFFFFFFFB saturates
  cases.push_back(c);
  c = i4(40000, -40000, 7, 0);
  c.fmt = {CL_RG, CL_SIGNED_INT16}, c.pixel = bytes({0x7FFF, 0x8000}, 2);
  cases.push_back(c);
  c = i4(-3, 0, 0, 0);
  c.fmt = {CL_R, CL_SIGNED_INT32}, c.pixel = bytes({0xFFFFFFFD}, 4);
  cases.push_back(c);
  c = f4(1.0f, 0.5f, 0.0f, 0.0f);
  c.fmt = {CL_RGB, CL_UNORM_SHORT_565},
  c.pixel = bytes({(31u << 11) | (32u << 5)}, 2);  // 31.5 -> 32
  cases.push_back(c);
  c = f4(1.0f, 0.0f, 1.0f, 0.0f);
  c.fmt = {CL_RGBx, CL_UNORM_INT_101010}, c.pixel = bytes({(1023u << 20) | 1023u}, 4);
  cases.push_back(c);
  c = f4(0.5f, 0, 0, 0);
  c.fmt = {CL_LUMINANCE, CL_UNORM_INT8}, c.pixel = {128};
  cases.push_back(c);
  for (const Case& k : cases) {
    SCOPED_TRACE(testing::Message()
                 << std::hex << k.fmt.image_channel_order << " " << k.fmt.image_channel_data_type);
    Mem m = image(makeDesc(CL_MEM_OBJECT_IMAGE2D, 4, 3), k.fmt);
    ASSERT_TRUE(m);
    const size_t es = k.pixel.size();
    ASSERT_EQ(es, imageInfo<size_t>(m, CL_IMAGE_ELEMENT_SIZE));
    std::vector<unsigned char> zero(4 * 3 * es, 0);
    const size_t o[3] = {0, 0, 0}, full[3] = {4, 3, 1};
    ASSERT_CL(CL_SUCCESS, clEnqueueWriteImage(queue_, m, CL_TRUE, o, full, 0, 0, zero.data(), 0,
                                              nullptr, nullptr));
    const size_t fo[3] = {1, 1, 0}, fr[3] = {2, 2, 1};
    ASSERT_CL(CL_SUCCESS, clEnqueueFillImage(queue_, m, k.color, fo, fr, 0, nullptr, nullptr));
    auto got = readImage(m, o, full, es);
    for (size_t y = 0; y < 3; ++y)
      for (size_t x = 0; x < 4; ++x) {
        const bool in = x >= 1 && x < 3 && y >= 1;
        std::vector<unsigned char> px(got.begin() + (y * 4 + x) * es,
                                      got.begin() + (y * 4 + x + 1) * es);
        EXPECT_EQ(in ? k.pixel : std::vector<unsigned char>(es, 0), px) << x << "," << y;
      }
  }
  // The spec: CL_INVALID_VALUE if fill_color is NULL.
  Mem m = image(makeDesc(CL_MEM_OBJECT_IMAGE2D, 4, 3));
  const size_t o[3] = {0, 0, 0}, r[3] = {1, 1, 1};
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueFillImage(queue_, m, nullptr, o, r, 0, nullptr, nullptr));
}

TEST_F(ImageApi, FillEveryTypeInARegion) {
  const cl_image_format r32{CL_R, CL_UNSIGNED_INT32};
  const cl_uint color[4] = {0xC0FFEE, 1, 2, 3};
  for (const TypeCase& c : kTypes) {
    SCOPED_TRACE(testing::Message() << "type 0x" << std::hex << c.type);
    Mem m = image(makeDesc(c.type, c.w, c.h, c.d, c.array), r32);
    const size_t* e = c.ext;
    const size_t o0[3] = {0, 0, 0};
    std::vector<uint32_t> zero(e[0] * e[1] * e[2], 0);
    ASSERT_CL(CL_SUCCESS, clEnqueueWriteImage(queue_, m, CL_TRUE, o0, e, 0, 0, zero.data(), 0,
                                              nullptr, nullptr));
    const size_t origin[3] = {1, e[1] > 1 ? 1u : 0u, e[2] > 1 ? 1u : 0u};
    const size_t region[3] = {e[0] - 2, e[1] > 1 ? e[1] - 1 : 1, e[2] > 1 ? e[2] - 1 : 1};
    ASSERT_CL(CL_SUCCESS,
              clEnqueueFillImage(queue_, m, color, origin, region, 0, nullptr, nullptr));
    std::vector<uint32_t> all(zero.size(), 7);
    ASSERT_CL(CL_SUCCESS,
              clEnqueueReadImage(queue_, m, CL_TRUE, o0, e, 0, 0, all.data(), 0, nullptr, nullptr));
    for (size_t z = 0; z < e[2]; ++z)
      for (size_t y = 0; y < e[1]; ++y)
        for (size_t x = 0; x < e[0]; ++x) {
          const bool in =
              x >= origin[0] && x < origin[0] + region[0] && y >= origin[1] && z >= origin[2];
          ASSERT_EQ(in ? 0xC0FFEEu : 0u, all[(z * e[1] + y) * e[0] + x])
              << x << "," << y << "," << z;
        }
  }
}

// Regions without gaps (every row whole) are filled as one pattern fill: every pixel size, every
// type, whole images and whole rows beside rows left alone.
TEST_F(ImageApi, FillOfWholeRowsSetsEveryPixelOfEverySize) {
  const cl_image_format formats[] = {{CL_R, CL_UNSIGNED_INT8},
                                     {CL_RG, CL_UNSIGNED_INT8},
                                     {CL_R, CL_UNSIGNED_INT32},
                                     {CL_RG, CL_UNSIGNED_INT32},
                                     {CL_RGBA, CL_UNSIGNED_INT32}};
  const cl_uint color[4] = {0xA1, 0xB2, 0xC3, 0xD4};
  for (const cl_image_format& format : formats)
    for (const TypeCase& c : kTypes) {
      SCOPED_TRACE(testing::Message()
                   << "type 0x" << std::hex << c.type << " order 0x" << format.image_channel_order
                   << " type 0x" << format.image_channel_data_type);
      Mem m = image(makeDesc(c.type, c.w, c.h, c.d, c.array), format);
      ASSERT_TRUE(m);
      const size_t es = imageInfo<size_t>(m, CL_IMAGE_ELEMENT_SIZE);
      const size_t* e = c.ext;
      const size_t o0[3] = {0, 0, 0};
      std::vector<unsigned char> zero(e[0] * e[1] * e[2] * es, 0);
      ASSERT_CL(CL_SUCCESS, clEnqueueWriteImage(queue_, m, CL_TRUE, o0, e, 0, 0, zero.data(), 0,
                                                nullptr, nullptr));
      // Whole rows from the second row (or slice) on; a 1D image from its second pixel.
      const bool rows = e[1] > 1, slices = e[2] > 1;
      const size_t origin[3] = {rows || slices ? 0u : 1u, rows && !slices ? 1u : 0u,
                                slices ? 1u : 0u};
      const size_t region[3] = {e[0] - origin[0], e[1] - origin[1], e[2] - origin[2]};
      ASSERT_CL(CL_SUCCESS,
                clEnqueueFillImage(queue_, m, color, origin, region, 0, nullptr, nullptr));
      std::vector<unsigned char> all(zero.size(), 7);
      ASSERT_CL(CL_SUCCESS, clEnqueueReadImage(queue_, m, CL_TRUE, o0, e, 0, 0, all.data(), 0,
                                               nullptr, nullptr));
      const size_t channel = format.image_channel_data_type == CL_UNSIGNED_INT8 ? 1 : 4;
      for (size_t z = 0; z < e[2]; ++z)
        for (size_t y = 0; y < e[1]; ++y)
          for (size_t x = 0; x < e[0]; ++x) {
            const bool in = x >= origin[0] && y >= origin[1] && z >= origin[2];
            for (size_t b = 0; b < es; ++b) {
              const unsigned char expected =
                  in && b % channel == 0 ? static_cast<unsigned char>(color[b / channel]) : 0;
              ASSERT_EQ(expected, all[((z * e[1] + y) * e[0] + x) * es + b])
                  << x << "," << y << "," << z << " byte " << b;
            }
          }
    }
  // A 1D image buffer of 16-byte pixels: its buffer's bytes change, and only the region's.
  Mem buf = makeBuffer(64 * 16);
  std::vector<uint32_t> words(64 * 4, 0);
  write(buf, words.data(), words.size() * 4);
  Mem view = image(makeDesc(CL_MEM_OBJECT_IMAGE1D_BUFFER, 64, 0, 0, 0, 0, 0, buf),
                   cl_image_format{CL_RGBA, CL_UNSIGNED_INT32}, 0);
  ASSERT_TRUE(view);
  const size_t origin[3] = {3, 0, 0}, region[3] = {60, 1, 1};
  ASSERT_CL(CL_SUCCESS,
            clEnqueueFillImage(queue_, view, color, origin, region, 0, nullptr, nullptr));
  ASSERT_CL(CL_SUCCESS, clEnqueueReadBuffer(queue_, buf, CL_TRUE, 0, words.size() * 4, words.data(),
                                            0, nullptr, nullptr));
  for (size_t x = 0; x < 64; ++x)
    for (size_t channel = 0; channel < 4; ++channel)
      ASSERT_EQ(x >= 3 && x < 63 ? color[channel] : 0u, words[x * 4 + channel]) << x;
}

// ---- Map ----

TEST_F(ImageApi, MapRegionsOfEveryType) {
  const cl_image_format r16{CL_R, CL_UNSIGNED_INT16};
  for (const TypeCase& c : kTypes) {
    SCOPED_TRACE(testing::Message() << "type 0x" << std::hex << c.type);
    Mem m = image(makeDesc(c.type, c.w, c.h, c.d, c.array), r16);
    const size_t* e = c.ext;
    const size_t o0[3] = {0, 0, 0};
    std::vector<uint16_t> d(e[0] * e[1] * e[2]);
    std::iota(d.begin(), d.end(), 1);
    ASSERT_CL(CL_SUCCESS,
              clEnqueueWriteImage(queue_, m, CL_TRUE, o0, e, 0, 0, d.data(), 0, nullptr, nullptr));
    const bool slices = c.type == CL_MEM_OBJECT_IMAGE3D || c.type == CL_MEM_OBJECT_IMAGE2D_ARRAY ||
                        c.type == CL_MEM_OBJECT_IMAGE1D_ARRAY;
    const size_t origin[3] = {2, e[1] > 1 ? 1u : 0u, e[2] > 1 ? 1u : 0u};
    const size_t region[3] = {3, e[1] > 1 ? 2u : 1u, e[2] > 1 ? 2u : 1u};
    size_t rp = 0, sp = 99;
    cl_int err = -1;
    auto* p = static_cast<unsigned char*>(
        clEnqueueMapImage(queue_, m, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, origin, region, &rp, &sp,
                          0, nullptr, nullptr, &err));
    ASSERT_ERR(CL_SUCCESS, err);
    EXPECT_EQ(imageInfo<size_t>(m, CL_IMAGE_ROW_PITCH), rp);
    EXPECT_EQ(slices ? imageInfo<size_t>(m, CL_IMAGE_SLICE_PITCH) : 0u, sp);
    EXPECT_EQ(1u, memInfo<cl_uint>(m, CL_MEM_MAP_COUNT));
    // Pixel (x, y, z) of the region is at p + z * slice + y * row (a 1D array's images: slices).
    const bool one_d_array = c.type == CL_MEM_OBJECT_IMAGE1D_ARRAY;
    auto at = [&](size_t x, size_t y, size_t z) {
      return reinterpret_cast<uint16_t*>(p + (one_d_array ? y * sp : z * sp + y * rp) + x * 2);
    };
    for (size_t z = 0; z < region[2]; ++z)
      for (size_t y = 0; y < region[1]; ++y)
        for (size_t x = 0; x < region[0]; ++x) {
          const size_t gx = origin[0] + x, gy = origin[1] + y, gz = origin[2] + z;
          ASSERT_EQ(d[(gz * e[1] + gy) * e[0] + gx], *at(x, y, z));
          *at(x, y, z) = 0xBEEF;
          d[(gz * e[1] + gy) * e[0] + gx] = 0xBEEF;
        }
    ASSERT_CL(CL_SUCCESS, clEnqueueUnmapMemObject(queue_, m, p, 0, nullptr, nullptr));
    std::vector<uint16_t> all(d.size());
    ASSERT_CL(CL_SUCCESS,
              clEnqueueReadImage(queue_, m, CL_TRUE, o0, e, 0, 0, all.data(), 0, nullptr, nullptr));
    EXPECT_EQ(d, all);
    EXPECT_EQ(0u, memInfo<cl_uint>(m, CL_MEM_MAP_COUNT));
  }
}

TEST_F(ImageApi, MapErrors) {
  Mem m2 = image(makeDesc(CL_MEM_OBJECT_IMAGE2D, 4, 4));
  Mem m3 = image(makeDesc(CL_MEM_OBJECT_IMAGE3D, 4, 4, 2));
  const size_t o[3] = {0, 0, 0}, r[3] = {4, 4, 1};
  size_t rp = 0, sp = 0;
  cl_int err = CL_SUCCESS;
  // The spec: CL_INVALID_VALUE if image_row_pitch is NULL.
  EXPECT_EQ(nullptr, clEnqueueMapImage(queue_, m2, CL_TRUE, CL_MAP_READ, o, r, nullptr, &sp, 0,
                                       nullptr, nullptr, &err));
  EXPECT_ERR(CL_INVALID_VALUE, err);
  // The spec: CL_INVALID_VALUE if image is a 3D image, 1D or 2D image array object and
  // image_slice_pitch is NULL.
  EXPECT_EQ(nullptr, clEnqueueMapImage(queue_, m3, CL_TRUE, CL_MAP_READ, o, r, &rp, nullptr, 0,
                                       nullptr, nullptr, &err));
  EXPECT_ERR(CL_INVALID_VALUE, err);
  // The spec: CL_INVALID_VALUE if values specified in map_flags are not valid.
  EXPECT_EQ(nullptr,
            clEnqueueMapImage(queue_, m2, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE_INVALIDATE_REGION, o,
                              r, &rp, nullptr, 0, nullptr, nullptr, &err));
  EXPECT_ERR(CL_INVALID_VALUE, err);
  EXPECT_EQ(nullptr, clEnqueueMapImage(queue_, m2, CL_TRUE, 0x100, o, r, &rp, nullptr, 0, nullptr,
                                       nullptr, &err));
  EXPECT_ERR(CL_INVALID_VALUE, err);
  // A 2D image may leave image_slice_pitch NULL.
  void* p = clEnqueueMapImage(queue_, m2, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, o, r, &rp,
                              nullptr, 0, nullptr, nullptr, &err);
  ASSERT_ERR(CL_SUCCESS, err);
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueUnmapMemObject(queue_, m3, p, 0, nullptr, nullptr));
  EXPECT_CL_OK(clEnqueueUnmapMemObject(queue_, m2, p, 0, nullptr, nullptr));
  EXPECT_CL_OK(clFinish(queue_));
}

// ---- Samplers and kernel arguments ----

TEST_F(ImageApi, SamplersCanBeCreated) {
  cl_int err = -1;
  Sampler s(clCreateSampler(context_, CL_TRUE, CL_ADDRESS_REPEAT, CL_FILTER_LINEAR, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  EXPECT_EQ(cl_addressing_mode(CL_ADDRESS_REPEAT),
            info<cl_addressing_mode>(clGetSamplerInfo, s, CL_SAMPLER_ADDRESSING_MODE));
  EXPECT_EQ(cl_filter_mode(CL_FILTER_LINEAR),
            info<cl_filter_mode>(clGetSamplerInfo, s, CL_SAMPLER_FILTER_MODE));
  EXPECT_EQ(cl_bool(CL_TRUE), info<cl_bool>(clGetSamplerInfo, s, CL_SAMPLER_NORMALIZED_COORDS));
  const cl_sampler_properties props[] = {CL_SAMPLER_NORMALIZED_COORDS, CL_FALSE, 0};
  Sampler t(clCreateSamplerWithProperties(context_, props, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  EXPECT_EQ(cl_addressing_mode(CL_ADDRESS_CLAMP),
            info<cl_addressing_mode>(clGetSamplerInfo, t, CL_SAMPLER_ADDRESSING_MODE));
  EXPECT_EQ(nullptr, clCreateSampler(context_, CL_TRUE, 0x7777, CL_FILTER_LINEAR, &err));
  EXPECT_ERR(CL_INVALID_VALUE, err);
}

TEST_F(ImageApi, DeviceReportsImageLimits) {
  EXPECT_GE(deviceInfo<cl_uint>(device_, CL_DEVICE_MAX_READ_IMAGE_ARGS), 128u);
  EXPECT_GE(deviceInfo<cl_uint>(device_, CL_DEVICE_MAX_WRITE_IMAGE_ARGS), 64u);
  EXPECT_GE(deviceInfo<size_t>(device_, CL_DEVICE_IMAGE2D_MAX_WIDTH), 16384u);
  EXPECT_GE(deviceInfo<size_t>(device_, CL_DEVICE_IMAGE2D_MAX_HEIGHT), 16384u);
  EXPECT_GE(deviceInfo<size_t>(device_, CL_DEVICE_IMAGE3D_MAX_WIDTH), 2048u);
  EXPECT_GE(deviceInfo<size_t>(device_, CL_DEVICE_IMAGE3D_MAX_HEIGHT), 2048u);
  EXPECT_GE(deviceInfo<size_t>(device_, CL_DEVICE_IMAGE3D_MAX_DEPTH), 2048u);
  EXPECT_GE(deviceInfo<size_t>(device_, CL_DEVICE_IMAGE_MAX_BUFFER_SIZE), 65536u);
  EXPECT_GE(deviceInfo<size_t>(device_, CL_DEVICE_IMAGE_MAX_ARRAY_SIZE), 2048u);
  EXPECT_GE(deviceInfo<cl_uint>(device_, CL_DEVICE_MAX_SAMPLERS), 16u);
  EXPECT_GE(deviceInfo<cl_uint>(device_, CL_DEVICE_IMAGE_PITCH_ALIGNMENT), 1u);
  EXPECT_GE(deviceInfo<cl_uint>(device_, CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT), 1u);
}

// Kernels with image and sampler arguments, built as OpenCL C 1.2 (where the image types need no
// feature macro and no builtin is called): clSetKernelArg's checks.
TEST_F(ImageApi, ImageAndSamplerKernelArguments) {
  const char* src =
      "kernel void k(read_only image2d_t in, write_only image2d_t out, sampler_t s,\n"
      "              global int* p, read_only image3d_t vol) { p[0] = 1; }\n";
  cl_int err = -1;
  Program prog(clCreateProgramWithSource(context_, 1, &src, nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  ASSERT_CL(CL_SUCCESS, clBuildProgram(prog, 1, &device_, "-cl-std=CL1.2 -cl-kernel-arg-info",
                                       nullptr, nullptr));
  Kernel k(clCreateKernel(prog, "k", &err));
  ASSERT_ERR(CL_SUCCESS, err);
  Mem rw = image(makeDesc(CL_MEM_OBJECT_IMAGE2D, 4, 4));
  Mem ro = image(makeDesc(CL_MEM_OBJECT_IMAGE2D, 4, 4), kRgba8, CL_MEM_READ_ONLY);
  Mem wo = image(makeDesc(CL_MEM_OBJECT_IMAGE2D, 4, 4), kRgba8, CL_MEM_WRITE_ONLY);
  Mem vol = image(makeDesc(CL_MEM_OBJECT_IMAGE3D, 4, 4, 2));
  Mem buf = makeBuffer(64);
  Sampler s(clCreateSampler(context_, CL_FALSE, CL_ADDRESS_CLAMP, CL_FILTER_NEAREST, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  cl_mem h;
  EXPECT_CL_OK(clSetKernelArg(k, 0, sizeof(cl_mem), &(h = rw.get())));
  EXPECT_CL_OK(clSetKernelArg(k, 0, sizeof(cl_mem), &(h = ro.get())));
  EXPECT_CL_OK(clSetKernelArg(k, 1, sizeof(cl_mem), &(h = rw.get())));
  EXPECT_CL_OK(clSetKernelArg(k, 1, sizeof(cl_mem), &(h = wo.get())));
  // The spec: CL_INVALID_ARG_VALUE for a read_only image argument given a CL_MEM_WRITE_ONLY
  // image, or a write_only one given a CL_MEM_READ_ONLY image.
  EXPECT_CL(CL_INVALID_ARG_VALUE, clSetKernelArg(k, 0, sizeof(cl_mem), &(h = wo.get())));
  EXPECT_CL(CL_INVALID_ARG_VALUE, clSetKernelArg(k, 1, sizeof(cl_mem), &(h = ro.get())));
  // An image of another type than the argument's.
  EXPECT_CL(CL_INVALID_ARG_VALUE, clSetKernelArg(k, 0, sizeof(cl_mem), &(h = vol.get())));
  EXPECT_CL_OK(clSetKernelArg(k, 4, sizeof(cl_mem), &(h = vol.get())));
  // The spec: CL_INVALID_MEM_OBJECT when the value is not a memory object (or not an image);
  // CL_INVALID_ARG_SIZE when arg_size != sizeof(cl_mem).
  EXPECT_CL(CL_INVALID_MEM_OBJECT, clSetKernelArg(k, 0, sizeof(cl_mem), &(h = buf.get())));
  cl_mem bogus = reinterpret_cast<cl_mem>(s.get());
  EXPECT_CL(CL_INVALID_MEM_OBJECT, clSetKernelArg(k, 0, sizeof(cl_mem), &bogus));
  EXPECT_CL(CL_INVALID_ARG_SIZE, clSetKernelArg(k, 0, 4, &(h = rw.get())));
  // A buffer argument does not take an image.
  EXPECT_CL(CL_INVALID_MEM_OBJECT, clSetKernelArg(k, 3, sizeof(cl_mem), &(h = rw.get())));
  cl_sampler sh = s.get();
  EXPECT_CL_OK(clSetKernelArg(k, 2, sizeof(cl_sampler), &sh));
  EXPECT_CL(CL_INVALID_SAMPLER, clSetKernelArg(k, 2, sizeof(cl_sampler), &(h = rw.get())));
  // CTS api negative_invalid_arg_sampler: no value is no valid sampler either.
  EXPECT_CL(CL_INVALID_SAMPLER, clSetKernelArg(k, 2, sizeof(cl_sampler), nullptr));
  EXPECT_CL_OK(clSetKernelArg(k, 3, sizeof(cl_mem), &(h = buf.get())));
  // Argument info of image arguments.
  cl_kernel_arg_access_qualifier access = 0;
  EXPECT_CL_OK(
      clGetKernelArgInfo(k, 0, CL_KERNEL_ARG_ACCESS_QUALIFIER, sizeof(access), &access, nullptr));
  EXPECT_EQ(cl_kernel_arg_access_qualifier(CL_KERNEL_ARG_ACCESS_READ_ONLY), access);
  EXPECT_CL_OK(
      clGetKernelArgInfo(k, 1, CL_KERNEL_ARG_ACCESS_QUALIFIER, sizeof(access), &access, nullptr));
  EXPECT_EQ(cl_kernel_arg_access_qualifier(CL_KERNEL_ARG_ACCESS_WRITE_ONLY), access);
  // The kernel runs (it uses no image builtin) and the images it was given stay intact.
  const size_t one = 1;
  ASSERT_CL(CL_SUCCESS,
            clEnqueueNDRangeKernel(queue_, k, 1, nullptr, &one, nullptr, 0, nullptr, nullptr));
  auto p = read(buf, 4);
  if (!kernelsComputeNothing(device_)) {
    EXPECT_EQ(1, p[0]);
  }
}

// ---- Threads ----

TEST_F(ImageApi, ConcurrentImageCommandsFromSeveralThreads) {
  const cl_image_format r32{CL_R, CL_UNSIGNED_INT32};
  Mem shared = image(makeDesc(CL_MEM_OBJECT_IMAGE2D, 64, 8), r32);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      cl_int err = CL_SUCCESS;
      cl_command_queue q = clCreateCommandQueueWithProperties(context_, device_, nullptr, &err);
      if (err != CL_SUCCESS) {
        ++failures;
        return;
      }
      auto desc = makeDesc(CL_MEM_OBJECT_IMAGE2D, 16, 16);
      for (int i = 0; i < 20; ++i) {
        cl_mem m = clCreateImage(context_, 0, &r32, &desc, nullptr, &err);
        const cl_uint color[4] = {cl_uint(t * 1000 + i), 0, 0, 0};
        const size_t o[3] = {0, 0, 0}, r[3] = {16, 16, 1};
        std::vector<cl_uint> got(256);
        if (err != CL_SUCCESS ||
            clEnqueueFillImage(q, m, color, o, r, 0, nullptr, nullptr) != CL_SUCCESS ||
            clEnqueueReadImage(q, m, CL_TRUE, o, r, 0, 0, got.data(), 0, nullptr, nullptr) !=
                CL_SUCCESS)
          ++failures;
        for (cl_uint v : got)
          if (v != color[0]) ++failures;
        // Each thread writes its own row of the shared image.
        const size_t so[3] = {0, size_t(t), 0}, sr[3] = {64, 1, 1};
        if (clEnqueueFillImage(q, shared, color, so, sr, 0, nullptr, nullptr) != CL_SUCCESS)
          ++failures;
        clReleaseMemObject(m);
      }
      clFinish(q);
      clReleaseCommandQueue(q);
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(0, failures.load());
  std::vector<cl_uint> all(64 * 8);
  const size_t o[3] = {0, 0, 0}, r[3] = {64, 8, 1};
  ASSERT_CL(CL_SUCCESS, clEnqueueReadImage(queue_, shared, CL_TRUE, o, r, 0, 0, all.data(), 0,
                                           nullptr, nullptr));
  for (size_t y = 0; y < 8; ++y)
    for (size_t x = 0; x < 64; ++x)
      ASSERT_EQ(cl_uint(y * 1000 + 19), all[y * 64 + x]) << x << "," << y;
}

}  // namespace
