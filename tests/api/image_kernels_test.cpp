// Kernels that read and write images through the OpenCL C builtins (read_image*, write_image*,
// get_image_*) with samplers from arguments and from the source. These need both halves of
// image support: the runtime (image arguments reach the kernel as ManifoldImage descriptors,
// compiler/image_abi.h) and the builtin library (compiler/builtins/image.cl). They fail, with the
// build log in the message, on a tree that has only the runtime half.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <numeric>

#include "cl_test.h"

using namespace cltest;

namespace {

// Emulated GPUs (CPU devices with memory of their own) for the migration test at the end; set
// before the platform is first opened. The other tests use the CPU device.
const bool kEmulated = [] { return setenv("MANIFOLD_EMULATED_GPUS", "1", /*overwrite=*/0) == 0; }();

cl_image_desc makeDesc(cl_mem_object_type type, size_t w, size_t h = 0, size_t d = 0,
                       size_t array = 0, cl_mem buffer = nullptr) {
  cl_image_desc desc{};
  desc.image_type = type;
  desc.image_width = w;
  desc.image_height = h;
  desc.image_depth = d;
  desc.image_array_size = array;
  desc.mem_object = buffer;
  return desc;
}

// A device with images, kernels or not.
class ImageDevice : public ContextTest {
 protected:
  void SetUp() override {
    ContextTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (!caps_.images) GTEST_SKIP() << "the device does not support images";
  }
};

// Kernels whose results are checked: the device must compute them.
class ImageKernels : public ImageDevice {
 protected:
  void SetUp() override {
    ImageDevice::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    SKIP_IF_KERNELS_COMPUTE_NOTHING(device_);
  }

  // Builds `src` (OpenCL C 1.2 unless options say otherwise) and returns kernel `name`; the
  // build log is the failure message.
  Kernel build(const char* src, const char* name, const char* options = "") {
    cl_int err = -1;
    program_ = Program(clCreateProgramWithSource(context_, 1, &src, nullptr, &err));
    EXPECT_ERR(CL_SUCCESS, err);
    if (clBuildProgram(program_, 1, &device_, options, nullptr, nullptr) != CL_SUCCESS) {
      size_t n = 0;
      clGetProgramBuildInfo(program_, device_, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n);
      std::string log(n, '\0');
      clGetProgramBuildInfo(program_, device_, CL_PROGRAM_BUILD_LOG, n, log.data(), nullptr);
      if (!log.empty() && log.back() == '\0') log.pop_back();
      ADD_FAILURE() << "build failed:\n" << log;
      return Kernel();
    }
    Kernel k(clCreateKernel(program_, name, &err));
    EXPECT_ERR(CL_SUCCESS, err);
    return k;
  }
  Mem image(const cl_image_desc& desc, cl_image_format fmt, cl_mem_flags flags = CL_MEM_READ_WRITE,
            void* host = nullptr) {
    cl_int err = -1;
    Mem m(clCreateImage(context_, flags, &fmt, &desc, host, &err));
    EXPECT_ERR(CL_SUCCESS, err);
    return m;
  }
  void setMem(cl_kernel k, cl_uint i, cl_mem m) {
    ASSERT_CL(CL_SUCCESS, clSetKernelArg(k, i, sizeof(cl_mem), &m));
  }
  void run(cl_kernel k, size_t x, size_t y = 1, size_t z = 1) {
    const size_t global[3] = {x, y, z};
    ASSERT_CL(CL_SUCCESS,
              clEnqueueNDRangeKernel(queue_, k, 3, nullptr, global, nullptr, 0, nullptr, nullptr));
    ASSERT_CL(CL_SUCCESS, clFinish(queue_));
  }

  Program program_;
};

TEST_F(ImageDevice, AdvertisesImageFeatures) {
  const std::string ext = deviceString(device_, CL_DEVICE_EXTENSIONS);
  EXPECT_NE(std::string::npos, ext.find("cl_khr_3d_image_writes")) << ext;
  size_t n = 0;
  ASSERT_CL(CL_SUCCESS, clGetDeviceInfo(device_, CL_DEVICE_OPENCL_C_FEATURES, 0, nullptr, &n));
  std::vector<cl_name_version> f(n / sizeof(cl_name_version));
  ASSERT_CL(CL_SUCCESS,
            clGetDeviceInfo(device_, CL_DEVICE_OPENCL_C_FEATURES, n, f.data(), nullptr));
  bool images = false, rw = false;
  for (auto& x : f) {
    images = images || std::string(x.name) == "__opencl_c_images";
    rw = rw || std::string(x.name) == "__opencl_c_read_write_images";
  }
  EXPECT_TRUE(images);
  EXPECT_EQ(rw, deviceInfo<cl_uint>(device_, CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS) > 0);
}

TEST_F(ImageKernels, WriteImagefThenReadOnTheHost) {
  const char* src = R"CLC(
    kernel void w(write_only image2d_t img) {
      int2 c = (int2)(get_global_id(0), get_global_id(1));
      write_imagef(img, c, (float4)(c.x / 255.0f, c.y / 255.0f, 0.5f, 1.0f));
    })CLC";
  Kernel k = build(src, "w");
  ASSERT_TRUE(k);
  Mem img =
      image(makeDesc(CL_MEM_OBJECT_IMAGE2D, 13, 7), {CL_RGBA, CL_UNORM_INT8}, CL_MEM_WRITE_ONLY);
  setMem(k, 0, img);
  run(k, 13, 7);
  std::vector<unsigned char> got(13 * 7 * 4);
  const size_t o[3] = {0, 0, 0}, r[3] = {13, 7, 1};
  ASSERT_CL(CL_SUCCESS,
            clEnqueueReadImage(queue_, img, CL_TRUE, o, r, 0, 0, got.data(), 0, nullptr, nullptr));
  for (size_t y = 0; y < 7; ++y)
    for (size_t x = 0; x < 13; ++x) {
      const unsigned char* p = &got[(y * 13 + x) * 4];
      EXPECT_EQ(x, p[0]);
      EXPECT_EQ(y, p[1]);
      EXPECT_EQ(128, p[2]);
      EXPECT_EQ(255, p[3]);
    }
}

TEST_F(ImageKernels, ReadImagefWithASamplerArgument) {
  const char* src = R"CLC(
    kernel void r(read_only image2d_t img, sampler_t s, global float4* out, int w) {
      int x = get_global_id(0), y = get_global_id(1);
      out[y * w + x] = read_imagef(img, s, (int2)(x - 1, y));  // x = 0 reads outside: clamp
    })CLC";
  Kernel k = build(src, "r");
  ASSERT_TRUE(k);
  std::vector<float> px(6 * 4 * 4);
  std::iota(px.begin(), px.end(), 0.0f);
  Mem img = image(makeDesc(CL_MEM_OBJECT_IMAGE2D, 6, 4), {CL_RGBA, CL_FLOAT},
                  CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, px.data());
  cl_int err = -1;
  Sampler s(clCreateSampler(context_, CL_FALSE, CL_ADDRESS_CLAMP_TO_EDGE, CL_FILTER_NEAREST, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  Mem out = makeBuffer(px.size() * sizeof(float));
  setMem(k, 0, img);
  cl_sampler sh = s.get();
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(k, 1, sizeof(sh), &sh));
  setMem(k, 2, out);
  const int w = 6;
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(k, 3, sizeof(w), &w));
  run(k, 6, 4);
  std::vector<float> got(px.size());
  ASSERT_CL(CL_SUCCESS, clEnqueueReadBuffer(queue_, out, CL_TRUE, 0, got.size() * 4, got.data(), 0,
                                            nullptr, nullptr));
  for (size_t y = 0; y < 4; ++y)
    for (size_t x = 0; x < 6; ++x)
      for (size_t c = 0; c < 4; ++c) {
        const size_t sx = x == 0 ? 0 : x - 1;
        EXPECT_EQ(px[(y * 6 + sx) * 4 + c], got[(y * 6 + x) * 4 + c]) << x << "," << y << "," << c;
      }
}

TEST_F(ImageKernels, SamplerFromTheSourceAndLinearFiltering) {
  const char* src = R"CLC(
    const sampler_t s = CLK_NORMALIZED_COORDS_TRUE | CLK_ADDRESS_REPEAT | CLK_FILTER_LINEAR;
    kernel void r(read_only image2d_t img, global float* out) {
      // Halfway between the centres of pixels 0 and 1 of row 0, and at pixel 3's centre.
      out[0] = read_imagef(img, s, (float2)(1.0f / 4.0f, 0.5f / 2.0f)).x;
      out[1] = read_imagef(img, s, (float2)(3.5f / 4.0f, 0.5f / 2.0f)).x;
      out[2] = read_imagef(img, s, (float2)(1.0f + 3.5f / 4.0f, 0.5f / 2.0f)).x;  // repeats
    })CLC";
  Kernel k = build(src, "r");
  ASSERT_TRUE(k);
  float px[8] = {0.0f, 1.0f, 2.0f, 3.0f, 10.0f, 11.0f, 12.0f, 13.0f};
  Mem img = image(makeDesc(CL_MEM_OBJECT_IMAGE2D, 4, 2), {CL_R, CL_FLOAT},
                  CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, px);
  Mem out = makeBuffer(3 * sizeof(float));
  setMem(k, 0, img);
  setMem(k, 1, out);
  run(k, 1);
  float got[3] = {};
  ASSERT_CL(CL_SUCCESS,
            clEnqueueReadBuffer(queue_, out, CL_TRUE, 0, sizeof(got), got, 0, nullptr, nullptr));
  EXPECT_NEAR(0.5f, got[0], 1e-4f);
  EXPECT_NEAR(3.0f, got[1], 1e-4f);
  EXPECT_NEAR(3.0f, got[2], 1e-4f);
}

TEST_F(ImageKernels, ImageQueriesOfEveryType) {
  const char* src = R"CLC(
    kernel void q(read_only image1d_t a, read_only image1d_array_t b, read_only image2d_t c,
                  read_only image2d_array_t d, read_only image3d_t e,
                  read_only image1d_buffer_t f, global int* out) {
      out[0] = get_image_width(a);
      out[1] = get_image_width(b);  out[2] = (int)get_image_array_size(b);
      out[3] = get_image_width(c);  out[4] = get_image_height(c);
      out[5] = get_image_dim(d).y;  out[6] = (int)get_image_array_size(d);
      out[7] = get_image_depth(e);  out[8] = get_image_dim(e).z;
      out[9] = get_image_width(f);
      out[10] = get_image_channel_order(c) == CLK_BGRA;
      out[11] = get_image_channel_data_type(c) == CLK_UNORM_INT8;
      out[12] = get_image_channel_order(e) == CLK_R;
      out[13] = get_image_channel_data_type(e) == CLK_SIGNED_INT16;
    })CLC";
  Kernel k = build(src, "q");
  ASSERT_TRUE(k);
  const cl_image_format bgra{CL_BGRA, CL_UNORM_INT8}, r16{CL_R, CL_SIGNED_INT16};
  Mem buf = makeBuffer(4096);
  Mem a = image(makeDesc(CL_MEM_OBJECT_IMAGE1D, 11), bgra);
  Mem b = image(makeDesc(CL_MEM_OBJECT_IMAGE1D_ARRAY, 12, 0, 0, 3), bgra);
  Mem c = image(makeDesc(CL_MEM_OBJECT_IMAGE2D, 13, 4), bgra);
  Mem d = image(makeDesc(CL_MEM_OBJECT_IMAGE2D_ARRAY, 14, 5, 0, 6), bgra);
  Mem e = image(makeDesc(CL_MEM_OBJECT_IMAGE3D, 15, 6, 7), r16);
  Mem f = image(makeDesc(CL_MEM_OBJECT_IMAGE1D_BUFFER, 16, 0, 0, 0, buf), bgra);
  Mem out = makeBuffer(14 * sizeof(int));
  cl_mem args[] = {a, b, c, d, e, f, out};
  for (cl_uint i = 0; i < 7; ++i) setMem(k, i, args[i]);
  run(k, 1);
  int got[14] = {};
  ASSERT_CL(CL_SUCCESS,
            clEnqueueReadBuffer(queue_, out, CL_TRUE, 0, sizeof(got), got, 0, nullptr, nullptr));
  const int want[14] = {11, 12, 3, 13, 4, 5, 6, 7, 7, 16, 1, 1, 1, 1};
  for (int i = 0; i < 14; ++i) EXPECT_EQ(want[i], got[i]) << "out[" << i << "]";
}

TEST_F(ImageKernels, IntegerImagesIn3DWritesAndReads) {
  const char* src = R"CLC(
    kernel void w(write_only image3d_t img) {
      int4 c = (int4)(get_global_id(0), get_global_id(1), get_global_id(2), 0);
      write_imageui(img, c, (uint4)(c.x + 10 * c.y + 100 * c.z, 7, 0, 0));
    }
    kernel void r(read_only image3d_t img, global uint* out) {
      int4 c = (int4)(get_global_id(0), get_global_id(1), get_global_id(2), 0);
      uint4 v = read_imageui(img, c);
      out[(c.z * get_image_height(img) + c.y) * get_image_width(img) + c.x] = v.x * 100 + v.y;
    })CLC";
  Kernel kw = build(src, "w");
  ASSERT_TRUE(kw);
  cl_int err = -1;
  Kernel kr(clCreateKernel(program_, "r", &err));
  ASSERT_ERR(CL_SUCCESS, err);
  Mem img = image(makeDesc(CL_MEM_OBJECT_IMAGE3D, 5, 4, 3), {CL_RG, CL_UNSIGNED_INT16});
  Mem out = makeBuffer(60 * sizeof(cl_uint));
  setMem(kw, 0, img);
  run(kw, 5, 4, 3);
  setMem(kr, 0, img);
  setMem(kr, 1, out);
  run(kr, 5, 4, 3);
  std::vector<cl_uint> got(60);
  ASSERT_CL(CL_SUCCESS,
            clEnqueueReadBuffer(queue_, out, CL_TRUE, 0, 240, got.data(), 0, nullptr, nullptr));
  for (cl_uint z = 0; z < 3; ++z)
    for (cl_uint y = 0; y < 4; ++y)
      for (cl_uint x = 0; x < 5; ++x)
        EXPECT_EQ((x + 10 * y + 100 * z) * 100 + 7, got[(z * 4 + y) * 5 + x])
            << x << "," << y << "," << z;
}

TEST_F(ImageKernels, ReadWriteImageAndImageFromABuffer) {
  if (deviceInfo<cl_uint>(device_, CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS) == 0)
    GTEST_SKIP() << "no read_write images";
  const char* src = R"CLC(
    kernel void inc(read_write image1d_buffer_t img) {
      int x = get_global_id(0);
      int4 v = read_imagei(img, x);
      write_imagei(img, x, v + (int4)(1, 2, 3, 4));
    })CLC";
  Kernel k = build(src, "inc", "-cl-std=CL3.0");
  ASSERT_TRUE(k);
  std::vector<int8_t> d(64 * 4);
  for (size_t i = 0; i < d.size(); ++i) d[i] = static_cast<int8_t>(i % 100);
  Mem buf = makeBuffer(d.size(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, d.data());
  Mem img =
      image(makeDesc(CL_MEM_OBJECT_IMAGE1D_BUFFER, 64, 0, 0, 0, buf), {CL_RGBA, CL_SIGNED_INT8}, 0);
  setMem(k, 0, img);
  run(k, 64);
  auto got = read(buf, d.size());
  for (size_t i = 0; i < d.size(); ++i) EXPECT_EQ(int8_t(d[i] + 1 + i % 4), int8_t(got[i])) << i;
}

// ---- Sampled reads against a model of the spec's addressing and filtering (OpenCL 3.0,
// "Image Addressing and Filtering"), on every image type, with every sampler a kernel may use.

// One axis of a sampled read: the texels to blend and the weight of the second.
struct Axis {
  int i0 = 0, i1 = 0;
  float a = 0.0f;
};

Axis sampleAxis(float s, int n, bool normalized, cl_addressing_mode mode, bool linear) {
  Axis r;
  const auto frac = [](float x) { return x - std::floor(x); };
  if (mode == CL_ADDRESS_REPEAT) {
    const float u = (s - std::floor(s)) * n;
    if (!linear) {
      r.i0 = static_cast<int>(std::floor(u));
      if (r.i0 > n - 1) r.i0 -= n;
      return r;
    }
    r.i0 = static_cast<int>(std::floor(u - 0.5f));
    r.i1 = r.i0 + 1;
    if (r.i0 < 0) r.i0 += n;
    if (r.i1 > n - 1) r.i1 -= n;
    r.a = frac(u - 0.5f);
    return r;
  }
  if (mode == CL_ADDRESS_MIRRORED_REPEAT) {
    const float u = std::fabs(s - 2.0f * std::rint(0.5f * s)) * n;
    if (!linear) {
      r.i0 = std::min(static_cast<int>(std::floor(u)), n - 1);
      return r;
    }
    r.i0 = std::max(static_cast<int>(std::floor(u - 0.5f)), 0);
    r.i1 = std::min(static_cast<int>(std::floor(u - 0.5f)) + 1, n - 1);
    r.a = frac(u - 0.5f);
    return r;
  }
  const float u = normalized ? s * n : s;
  const auto address = [&](int i) {
    if (mode == CL_ADDRESS_CLAMP_TO_EDGE) return std::clamp(i, 0, n - 1);
    if (mode == CL_ADDRESS_CLAMP) return std::clamp(i, -1, n);  // -1 and n: the border
    return i;                                                   // CL_ADDRESS_NONE: in range
  };
  if (!linear) {
    r.i0 = address(static_cast<int>(std::floor(u)));
    return r;
  }
  r.i0 = address(static_cast<int>(std::floor(u - 0.5f)));
  r.i1 = address(static_cast<int>(std::floor(u - 0.5f)) + 1);
  r.a = frac(u - 0.5f);
  return r;
}

struct ImageType {
  const char* name;  // OpenCL C type
  cl_mem_object_type type;
  int dims;           // of the coordinates that address texels
  bool layered;       // plus a layer (1D array: y, 2D array: z)
  const char* coord;  // the read's coordinate from a float4 c
};

const ImageType kImageTypes[] = {
    {"image1d_t", CL_MEM_OBJECT_IMAGE1D, 1, false, "c.x"},
    {"image1d_array_t", CL_MEM_OBJECT_IMAGE1D_ARRAY, 1, true, "c.xy"},
    {"image2d_t", CL_MEM_OBJECT_IMAGE2D, 2, false, "c.xy"},
    {"image2d_array_t", CL_MEM_OBJECT_IMAGE2D_ARRAY, 2, true, "c"},
    {"image3d_t", CL_MEM_OBJECT_IMAGE3D, 3, false, "c"},
};

// An RGBA float image's texels on the host: extent (w, h, d) and layers.
struct TexelModel {
  int size[3] = {1, 1, 1};
  int layers = 1;
  std::vector<float> px;
  float value(int x, int y, int z, int c) const {
    return x + 10.0f * y + 100.0f * z + 1000.0f * c + 0.25f;
  }
  void fill() {
    px.clear();
    for (int z = 0; z < size[2] * layers; ++z)
      for (int y = 0; y < size[1]; ++y)
        for (int x = 0; x < size[0]; ++x)
          for (int c = 0; c < 4; ++c) px.push_back(value(x, y, z, c));
  }
  // Texel (x, y, z) of `layer`; outside the image: the border colour (0, 0, 0, 0).
  void texel(int x, int y, int z, int layer, float* out) const {
    if (x < 0 || y < 0 || z < 0 || x >= size[0] || y >= size[1] || z >= size[2]) {
      std::fill(out, out + 4, 0.0f);
      return;
    }
    const size_t i = ((size_t(layer * size[2] + z) * size[1] + y) * size[0] + x) * 4;
    std::copy(px.begin() + i, px.begin() + i + 4, out);
  }
  void sample(const ImageType& t, const float* c, bool normalized, cl_addressing_mode mode,
              bool linear, float* out) const {
    Axis axes[3];
    for (int d = 0; d < 3; ++d)
      axes[d] = d < t.dims ? sampleAxis(c[d], size[d], normalized, mode, linear) : Axis{};
    int layer = 0;
    if (t.layered) layer = std::clamp(static_cast<int>(std::rint(c[t.dims])), 0, layers - 1);
    std::fill(out, out + 4, 0.0f);
    for (int corner = 0; corner < 8; ++corner) {
      float weight = 1.0f;
      int at[3];
      bool skip = false;
      for (int d = 0; d < 3; ++d) {
        const bool second = (corner >> d) & 1;
        if (second && (d >= t.dims || !linear)) skip = true;
        at[d] = second ? axes[d].i1 : axes[d].i0;
        if (d < t.dims && linear) weight *= second ? axes[d].a : 1.0f - axes[d].a;
      }
      if (skip) continue;
      float v[4];
      texel(at[0], at[1], at[2], layer, v);
      for (int k = 0; k < 4; ++k) out[k] += weight * v[k];
    }
  }
};

TEST_F(ImageKernels, SampledReadsFollowTheSpecOnEveryImageType) {
  const struct {
    cl_bool normalized;
    cl_addressing_mode mode;
  } addressings[] = {{CL_FALSE, CL_ADDRESS_NONE},         {CL_FALSE, CL_ADDRESS_CLAMP_TO_EDGE},
                     {CL_FALSE, CL_ADDRESS_CLAMP},        {CL_TRUE, CL_ADDRESS_NONE},
                     {CL_TRUE, CL_ADDRESS_CLAMP_TO_EDGE}, {CL_TRUE, CL_ADDRESS_CLAMP},
                     {CL_TRUE, CL_ADDRESS_REPEAT},        {CL_TRUE, CL_ADDRESS_MIRRORED_REPEAT}};
  for (const ImageType& t : kImageTypes) {
    SCOPED_TRACE(t.name);
    const std::string src =
        std::string("kernel void r(read_only ") + t.name +
        " img, sampler_t s, global const float4* coords, global float4* out) {\n"
        "  size_t i = get_global_id(0);\n  float4 c = coords[i];\n"
        "  out[i] = read_imagef(img, s, " +
        t.coord + ");\n}\n";
    Kernel k = build(src.c_str(), "r");
    ASSERT_TRUE(k);
    TexelModel m;
    const int extent[3] = {5, 4, 3};
    for (int d = 0; d < t.dims; ++d) m.size[d] = extent[d];
    m.layers = t.layered ? 3 : 1;
    m.fill();
    cl_image_desc desc{};
    desc.image_type = t.type;
    desc.image_width = size_t(m.size[0]);
    desc.image_height = t.dims >= 2 ? size_t(m.size[1]) : 0;
    desc.image_depth = t.dims == 3 ? size_t(m.size[2]) : 0;
    desc.image_array_size = t.layered ? size_t(m.layers) : 0;
    Mem img =
        image(desc, {CL_RGBA, CL_FLOAT}, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, m.px.data());
    for (const auto& addressing : addressings) {
      for (cl_filter_mode filter : {CL_FILTER_NEAREST, CL_FILTER_LINEAR}) {
        const bool linear = filter == CL_FILTER_LINEAR;
        SCOPED_TRACE(testing::Message()
                     << "normalized " << addressing.normalized << " addressing 0x" << std::hex
                     << addressing.mode << " filter 0x" << filter);
        // Texel-space positions per axis, clear of the places where floor() or rint() would
        // turn on rounding: inside the image only for CL_ADDRESS_NONE (undefined outside).
        auto positions = [&](int n) {
          if (addressing.mode == CL_ADDRESS_NONE) return std::vector<float>{0.7f, 1.2f, n - 1.3f};
          return std::vector<float>{-n - 0.2f, -1.3f,    0.2f,     0.7f,
                                    1.8f,      n - 0.3f, n + 0.6f, 2 * n + 0.3f};
        };
        std::vector<float> coords;
        std::vector<float> axis[3];
        for (int d = 0; d < 3; ++d) {
          if (d < t.dims) {
            for (float p : positions(m.size[d]))
              axis[d].push_back(addressing.normalized ? p / m.size[d] : p);
          } else if (t.layered && d == t.dims) {
            axis[d] = {-0.7f, 0.2f, 1.3f, 2.6f, 5.2f};  // layers: rounded, then clamped
          } else {
            axis[d] = {0.0f};
          }
        }
        for (float z : axis[2])
          for (float y : axis[1])
            for (float x : axis[0]) coords.insert(coords.end(), {x, y, z, 0.0f});
        const size_t count = coords.size() / 4;
        Mem cbuf = makeBuffer(coords.size() * sizeof(float),
                              CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, coords.data());
        Mem out = makeBuffer(coords.size() * sizeof(float));
        cl_int err = -1;
        Sampler s(clCreateSampler(context_, addressing.normalized, addressing.mode, filter, &err));
        ASSERT_ERR(CL_SUCCESS, err);
        cl_sampler sh = s.get();
        setMem(k, 0, img);
        ASSERT_CL(CL_SUCCESS, clSetKernelArg(k, 1, sizeof(sh), &sh));
        setMem(k, 2, cbuf);
        setMem(k, 3, out);
        run(k, count);
        std::vector<float> got(coords.size());
        ASSERT_CL(CL_SUCCESS, clEnqueueReadBuffer(queue_, out, CL_TRUE, 0, got.size() * 4,
                                                  got.data(), 0, nullptr, nullptr));
        int failures = 0;
        for (size_t i = 0; i < count && failures < 8; ++i) {
          float want[4];
          m.sample(t, &coords[i * 4], addressing.normalized, addressing.mode, linear, want);
          for (int c = 0; c < 4; ++c) {
            const float tolerance = linear ? 1e-3f + 2e-4f * std::fabs(want[c]) : 0.0f;
            if (std::fabs(got[i * 4 + c] - want[c]) > tolerance) {
              ++failures;
              ADD_FAILURE() << "coordinate (" << coords[i * 4] << ", " << coords[i * 4 + 1] << ", "
                            << coords[i * 4 + 2] << ") component " << c << ": got "
                            << got[i * 4 + c] << ", want " << want[c];
            }
          }
        }
      }
    }
  }
}

// Normalized and integer formats through samplers: read_imagef converts (BGRA's channels swapped),
// read_imagei/ui return the stored integers; integer reads are nearest whatever the coordinates.
TEST_F(ImageKernels, NormalizedAndIntegerFormatsThroughSamplers) {
  const char* src = R"CLC(
    const sampler_t nearest = CLK_NORMALIZED_COORDS_TRUE | CLK_ADDRESS_REPEAT | CLK_FILTER_NEAREST;
    const sampler_t edge = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;
    kernel void r(read_only image2d_t unorm, read_only image2d_t sint, read_only image2d_t uint8,
                  sampler_t linear, global float4* f, global int4* i, global uint4* u) {
      int x = get_global_id(0), y = get_global_id(1), at = y * 4 + x;
      f[2 * at] = read_imagef(unorm, edge, (int2)(x, y));
      f[2 * at + 1] = read_imagef(unorm, linear, (float2)((x + 0.75f) / 4.0f, (y + 0.5f) / 3.0f));
      i[at] = read_imagei(sint, nearest, (float2)((x + 4.3f) / 4.0f, (y + 0.4f) / 3.0f));
      u[at] = read_imageui(uint8, edge, (float2)(x + 0.9f, y - 7.0f));
    })CLC";
  Kernel k = build(src, "r");
  ASSERT_TRUE(k);
  const size_t w = 4, h = 3;
  std::vector<unsigned char> bgra(w * h * 4);
  std::vector<cl_short> rg(w * h * 2);
  std::vector<unsigned char> r8(w * h);
  for (size_t p = 0; p < w * h; ++p) {
    for (size_t c = 0; c < 4; ++c) bgra[p * 4 + c] = static_cast<unsigned char>(p * 20 + c * 3);
    rg[p * 2] = static_cast<cl_short>(-1000 * int(p));
    rg[p * 2 + 1] = static_cast<cl_short>(7 + int(p));
    r8[p] = static_cast<unsigned char>(200 + p);
  }
  const cl_mem_flags ro = CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR;
  Mem unorm =
      image(makeDesc(CL_MEM_OBJECT_IMAGE2D, w, h), {CL_BGRA, CL_UNORM_INT8}, ro, bgra.data());
  Mem sint = image(makeDesc(CL_MEM_OBJECT_IMAGE2D, w, h), {CL_RG, CL_SIGNED_INT16}, ro, rg.data());
  Mem uint8 = image(makeDesc(CL_MEM_OBJECT_IMAGE2D, w, h), {CL_R, CL_UNSIGNED_INT8}, ro, r8.data());
  cl_int err = -1;
  Sampler linear(
      clCreateSampler(context_, CL_TRUE, CL_ADDRESS_CLAMP_TO_EDGE, CL_FILTER_LINEAR, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  Mem f = makeBuffer(w * h * 2 * 16), i = makeBuffer(w * h * 16), u = makeBuffer(w * h * 16);
  setMem(k, 0, unorm);
  setMem(k, 1, sint);
  setMem(k, 2, uint8);
  cl_sampler sh = linear.get();
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(k, 3, sizeof(sh), &sh));
  setMem(k, 4, f);
  setMem(k, 5, i);
  setMem(k, 6, u);
  run(k, w, h);
  std::vector<float> gf(w * h * 8);
  std::vector<cl_int> gi(w * h * 4);
  std::vector<cl_uint> gu(w * h * 4);
  ASSERT_CL(CL_SUCCESS, clEnqueueReadBuffer(queue_, f, CL_TRUE, 0, gf.size() * 4, gf.data(), 0,
                                            nullptr, nullptr));
  ASSERT_CL(CL_SUCCESS, clEnqueueReadBuffer(queue_, i, CL_TRUE, 0, gi.size() * 4, gi.data(), 0,
                                            nullptr, nullptr));
  ASSERT_CL(CL_SUCCESS, clEnqueueReadBuffer(queue_, u, CL_TRUE, 0, gu.size() * 4, gu.data(), 0,
                                            nullptr, nullptr));
  // (r, g, b, a) of a BGRA texel, normalized.
  auto rgba = [&](size_t x, size_t y, int c) {
    static const int from[4] = {2, 1, 0, 3};
    return bgra[(y * w + x) * 4 + from[c]] / 255.0f;
  };
  for (size_t y = 0; y < h; ++y)
    for (size_t x = 0; x < w; ++x) {
      const size_t at = y * w + x;
      for (int c = 0; c < 4; ++c) {
        EXPECT_NEAR(rgba(x, y, c), gf[at * 8 + c], 1e-6f) << x << "," << y << " c" << c;
        // Linear at x + 0.75: a quarter of the way to the next texel (clamped at the edge).
        const size_t x1 = std::min(x + 1, w - 1);
        EXPECT_NEAR(0.75f * rgba(x, y, c) + 0.25f * rgba(x1, y, c), gf[at * 8 + 4 + c], 1e-4f)
            << "linear " << x << "," << y << " c" << c;
      }
      // Repeat: x + 4.3 texels is texel x again.
      EXPECT_EQ(rg[at * 2], gi[at * 4]) << x << "," << y;
      EXPECT_EQ(rg[at * 2 + 1], gi[at * 4 + 1]);
      EXPECT_EQ(0, gi[at * 4 + 2]);
      EXPECT_EQ(1, gi[at * 4 + 3]);
      // Clamped to row 0; x + 0.9 is texel x.
      EXPECT_EQ(cl_uint{r8[x]}, gu[at * 4]) << x << "," << y;
      EXPECT_EQ(0u, gu[at * 4 + 1]);
      EXPECT_EQ(1u, gu[at * 4 + 3]);
    }
}

// Writes to every image type (3D included: cl_khr_3d_image_writes) convert to the format as the
// spec says: normalized values rounded to nearest even and saturated, integers saturated.
TEST_F(ImageKernels, WritesToEveryTypeConvertToTheFormat) {
  const char* src = R"CLC(
    #pragma OPENCL EXTENSION cl_khr_3d_image_writes : enable
    kernel void w(write_only image1d_t a, write_only image1d_array_t b, write_only image2d_array_t c,
                  write_only image3d_t d, write_only image1d_buffer_t e) {
      int x = get_global_id(0);
      float4 f = (float4)(0.5f, 1.2f, -0.1f, 0.2f) + (float4)(0.0f, 0.0f, 0.0f, x / 255.0f);
      write_imagef(a, x, f);
      write_imagei(b, (int2)(x, 1), (int4)(300, -300, x, -x));
      write_imageui(c, (int4)(x, 1, 2, 0), (uint4)(70000, x, 3, 4));
      write_imagef(d, (int4)(x, 2, 1, 0), (float4)(x + 0.5f, -2.0f, 0.0f, 1.0f));
      write_imagef(e, x, f);
    })CLC";
  Kernel k = build(src, "w");
  ASSERT_TRUE(k);
  const size_t n = 6;
  Mem buf = makeBuffer(n * 4);
  Mem a = image(makeDesc(CL_MEM_OBJECT_IMAGE1D, n), {CL_RGBA, CL_UNORM_INT8}, CL_MEM_WRITE_ONLY);
  Mem b = image(makeDesc(CL_MEM_OBJECT_IMAGE1D_ARRAY, n, 0, 0, 2), {CL_RGBA, CL_SIGNED_INT8},
                CL_MEM_WRITE_ONLY);
  Mem c = image(makeDesc(CL_MEM_OBJECT_IMAGE2D_ARRAY, n, 2, 0, 3), {CL_RGBA, CL_UNSIGNED_INT16},
                CL_MEM_WRITE_ONLY);
  Mem d = image(makeDesc(CL_MEM_OBJECT_IMAGE3D, n, 3, 2), {CL_RG, CL_FLOAT}, CL_MEM_WRITE_ONLY);
  Mem e = image(makeDesc(CL_MEM_OBJECT_IMAGE1D_BUFFER, n, 0, 0, 0, buf), {CL_BGRA, CL_UNORM_INT8},
                CL_MEM_WRITE_ONLY);
  cl_mem args[] = {a, b, c, d, e};
  for (cl_uint i = 0; i < 5; ++i) setMem(k, i, args[i]);
  run(k, n);
  auto readImage = [&](cl_mem m, size_t bytes, const size_t* origin, const size_t* region) {
    std::vector<unsigned char> v(bytes);
    EXPECT_CL(CL_SUCCESS, clEnqueueReadImage(queue_, m, CL_TRUE, origin, region, 0, 0, v.data(), 0,
                                             nullptr, nullptr));
    return v;
  };
  const size_t o0[3] = {0, 0, 0};
  const size_t row[3] = {n, 1, 1};
  auto ga = readImage(a, n * 4, o0, row);
  auto ge = read(buf, n * 4);
  const size_t o1[3] = {0, 1, 0};
  auto gb = readImage(b, n * 4, o1, row);
  const size_t o2[3] = {0, 1, 2};
  auto gc = readImage(c, n * 8, o2, row);
  const size_t o3[3] = {0, 2, 1};
  auto gd = readImage(d, n * 8, o3, row);
  for (size_t x = 0; x < n; ++x) {
    // 0.5 * 255 = 127.5 rounds to even (128); 1.2 and -0.1 saturate; 0.2 * 255 + x = 51 + x.
    const unsigned char want[4] = {128, 255, 0, static_cast<unsigned char>(51 + x)};
    for (int ch = 0; ch < 4; ++ch) {
      EXPECT_EQ(want[ch], ga[x * 4 + ch]) << "image1d " << x << " c" << ch;
      static const int bgra[4] = {2, 1, 0, 3};
      EXPECT_EQ(want[bgra[ch]], ge[x * 4 + ch]) << "image1d_buffer " << x << " c" << ch;
    }
    const signed char wantb[4] = {127, -128, static_cast<signed char>(x),
                                  static_cast<signed char>(-int(x))};
    for (int ch = 0; ch < 4; ++ch)
      EXPECT_EQ(wantb[ch], static_cast<signed char>(gb[x * 4 + ch])) << "image1d_array " << x;
    cl_ushort gotc[4];
    std::memcpy(gotc, &gc[x * 8], 8);
    EXPECT_EQ(65535, gotc[0]) << "image2d_array " << x;
    EXPECT_EQ(static_cast<cl_ushort>(x), gotc[1]);
    EXPECT_EQ(3, gotc[2]);
    EXPECT_EQ(4, gotc[3]);
    float gotd[2];
    std::memcpy(gotd, &gd[x * 8], 8);
    EXPECT_EQ(x + 0.5f, gotd[0]) << "image3d " << x;
    EXPECT_EQ(-2.0f, gotd[1]);
  }
}

// A 2D image made from a buffer (cl_khr_image2d_from_buffer) with a row pitch of its own: kernels
// read and write the buffer's bytes at that pitch, and read_write access sees its own writes.
TEST_F(ImageKernels, TwoDImageFromABufferWithARowPitch) {
  if (!caps_.hasExtension("cl_khr_image2d_from_buffer"))
    GTEST_SKIP() << "no 2D images from buffers";
  const bool rw = deviceInfo<cl_uint>(device_, CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS) > 0;
  const char* src = R"CLC(
    kernel void copy(read_only image2d_t in, write_only image2d_t out) {
      int2 c = (int2)(get_global_id(0), get_global_id(1));
      write_imageui(out, c, read_imageui(in, c) + (uint4)(1, 2, 3, 4));
    }
    #if __OPENCL_C_VERSION__ >= 200
    kernel void twice(read_write image2d_t img) {
      int2 c = (int2)(get_global_id(0), get_global_id(1));
      for (int i = 0; i < 2; ++i) {
        write_imageui(img, c, read_imageui(img, c) * 2u);
        atomic_work_item_fence(CLK_IMAGE_MEM_FENCE, memory_order_acq_rel, memory_scope_work_item);
      }
    }
    #endif)CLC";
  Kernel k = build(src, "copy", rw ? "-cl-std=CL3.0" : "");
  ASSERT_TRUE(k);
  const size_t w = 5, h = 3, pitch = 32;  // 20 bytes of pixels in each 32-byte row
  std::vector<unsigned char> bytes(pitch * h);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>(i);
  Mem in_buf = makeBuffer(bytes.size(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes.data());
  Mem out_buf = makeBuffer(bytes.size(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes.data());
  cl_image_desc desc = makeDesc(CL_MEM_OBJECT_IMAGE2D, w, h, 0, 0, in_buf);
  desc.image_row_pitch = pitch;
  Mem in = image(desc, {CL_RGBA, CL_UNSIGNED_INT8}, CL_MEM_READ_ONLY);
  desc.mem_object = out_buf;
  Mem out = image(desc, {CL_RGBA, CL_UNSIGNED_INT8}, rw ? CL_MEM_READ_WRITE : CL_MEM_WRITE_ONLY);
  setMem(k, 0, in);
  setMem(k, 1, out);
  run(k, w, h);
  auto got = read(out_buf, bytes.size());
  for (size_t y = 0; y < h; ++y)
    for (size_t x = 0; x < pitch; ++x) {
      const size_t i = y * pitch + x;
      // Pixels changed, the padding at the end of each row not.
      const unsigned char want =
          x < w * 4 ? static_cast<unsigned char>(bytes[i] + 1 + x % 4) : bytes[i];
      EXPECT_EQ(want, got[i]) << x << "," << y;
    }
  if (!rw) return;
  cl_int err = -1;
  Kernel twice(clCreateKernel(program_, "twice", &err));
  ASSERT_ERR(CL_SUCCESS, err);
  setMem(twice, 0, out);
  run(twice, w, h);
  auto doubled = read(out_buf, bytes.size());
  // Doubled twice, each write saturating at 255.
  for (size_t y = 0; y < h; ++y)
    for (size_t x = 0; x < w * 4; ++x)
      EXPECT_EQ(std::min(std::min(got[y * pitch + x] * 2, 255) * 2, 255), doubled[y * pitch + x])
          << x << "," << y;
}

// Kernels on two devices of one context write and read one image in turn: its bytes migrate
// between the devices like a buffer's.
void shareImageBetween(cl_device_id first, cl_device_id second) {
  cl_device_id devs[2] = {first, second};
  cl_int err = -1;
  Context ctx(clCreateContext(nullptr, 2, devs, nullptr, nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  Queue q1(clCreateCommandQueueWithProperties(ctx, first, nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  Queue q2(clCreateCommandQueueWithProperties(ctx, second, nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  const char* src = R"CLC(
    kernel void w(write_only image2d_t img, uint add) {
      int2 c = (int2)(get_global_id(0), get_global_id(1));
      write_imageui(img, c, (uint4)(c.x + 100 * c.y + add, 0, 0, 0));
    }
    kernel void r(read_only image2d_t img, global uint* out) {
      int2 c = (int2)(get_global_id(0), get_global_id(1));
      out[c.y * get_image_width(img) + c.x] = read_imageui(img, c).x;
    })CLC";
  Program prog(clCreateProgramWithSource(ctx, 1, &src, nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  ASSERT_CL(CL_SUCCESS, clBuildProgram(prog, 2, devs, nullptr, nullptr, nullptr));
  Kernel kw(clCreateKernel(prog, "w", &err));
  ASSERT_ERR(CL_SUCCESS, err);
  Kernel kr(clCreateKernel(prog, "r", &err));
  ASSERT_ERR(CL_SUCCESS, err);
  const cl_image_format fmt{CL_R, CL_UNSIGNED_INT32};
  const cl_image_desc desc = makeDesc(CL_MEM_OBJECT_IMAGE2D, 16, 8);
  Mem img(clCreateImage(ctx, CL_MEM_READ_WRITE, &fmt, &desc, nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  Mem out(clCreateBuffer(ctx, CL_MEM_READ_WRITE, 16 * 8 * 4, nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  cl_mem h = img;
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(kw, 0, sizeof(h), &h));
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(kr, 0, sizeof(h), &h));
  h = out;
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(kr, 1, sizeof(h), &h));
  const size_t global[2] = {16, 8};
  for (cl_uint round = 0; round < 4; ++round) {
    // Written on one device, read on the other, in turn.
    cl_command_queue writer = round % 2 ? q1.get() : q2.get(),
                     reader = round % 2 ? q2.get() : q1.get();
    ASSERT_CL(CL_SUCCESS, clSetKernelArg(kw, 1, sizeof(round), &round));
    ASSERT_CL(CL_SUCCESS,
              clEnqueueNDRangeKernel(writer, kw, 2, nullptr, global, nullptr, 0, nullptr, nullptr));
    ASSERT_CL(CL_SUCCESS, clFinish(writer));
    ASSERT_CL(CL_SUCCESS,
              clEnqueueNDRangeKernel(reader, kr, 2, nullptr, global, nullptr, 0, nullptr, nullptr));
    std::vector<cl_uint> got(16 * 8);
    ASSERT_CL(CL_SUCCESS, clEnqueueReadBuffer(reader, out, CL_TRUE, 0, got.size() * 4, got.data(),
                                              0, nullptr, nullptr));
    for (cl_uint y = 0; y < 8; ++y)
      for (cl_uint x = 0; x < 16; ++x)
        ASSERT_EQ(x + 100 * y + round, got[y * 16 + x]) << x << "," << y << " round " << round;
    // And the host reads what the writer left, through either queue.
    std::vector<cl_uint> pixels(16 * 8);
    const size_t o[3] = {0, 0, 0}, r[3] = {16, 8, 1};
    ASSERT_CL(CL_SUCCESS, clEnqueueReadImage(round % 2 ? reader : writer, img, CL_TRUE, o, r, 0, 0,
                                             pixels.data(), 0, nullptr, nullptr));
    EXPECT_EQ(got, pixels) << "round " << round;
  }
}

// The GPU devices with images that compute kernels: emulated ones (CPU devices with memory of
// their own) when `emulated`, else the others (CUDA).
std::vector<cl_device_id> imageGpus(cl_platform_id platform, bool emulated) {
  cl_uint n = 0;
  if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_GPU, 0, nullptr, &n) != CL_SUCCESS || n == 0)
    return {};
  std::vector<cl_device_id> gpus(n), found;
  clGetDeviceIDs(platform, CL_DEVICE_TYPE_GPU, n, gpus.data(), nullptr);
  for (cl_device_id d : gpus) {
    const bool is_emulated =
        deviceString(d, CL_DEVICE_NAME).find("(emulated GPU") != std::string::npos;
    if (deviceInfo<cl_bool>(d, CL_DEVICE_IMAGE_SUPPORT) && is_emulated == emulated &&
        !kernelsComputeNothing(d))
      found.push_back(d);
  }
  return found;
}

cl_device_id cpuDevice(cl_platform_id platform) {
  cl_device_id cpu = nullptr;
  cl_uint n = 0;
  if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_CPU, 1, &cpu, &n) != CL_SUCCESS) return nullptr;
  return cpu;
}

// An image written by a kernel on an emulated GPU (private memory) is read by a kernel on the
// CPU, and the other way round.
TEST_F(ImageKernels, KernelsOnTheCpuAndAnEmulatedGpuShareAnImage) {
  ASSERT_TRUE(kEmulated);
  const std::vector<cl_device_id> gpus = imageGpus(platform_, true);
  cl_device_id cpu = cpuDevice(platform_);
  if (gpus.empty() || !cpu) GTEST_SKIP() << "no CPU and emulated GPU (MANIFOLD_EMULATED_GPUS)";
  shareImageBetween(cpu, gpus[0]);
}

// The same between the CPU and a CUDA GPU: the image's pixels move between host memory and the
// GPU's, and the GPU's descriptor of it (compiler/image_abi.h) points at its copy.
TEST_F(ImageKernels, KernelsOnTheCpuAndACudaGpuShareAnImage) {
  const std::vector<cl_device_id> gpus = imageGpus(platform_, false);
  cl_device_id cpu = cpuDevice(platform_);
  if (gpus.empty() || !cpu) GTEST_SKIP() << "no CPU and GPU with images that computes kernels";
  shareImageBetween(cpu, gpus[0]);
}

}  // namespace
