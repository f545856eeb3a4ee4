// Kernels that read and write images through the OpenCL C builtins (read_image*, write_image*,
// get_image_*) with samplers from arguments and from the source. These need both halves of
// image support: the runtime (image arguments reach the kernel as ManifoldImage descriptors,
// compiler/image_abi.h) and the builtin library (compiler/builtins/image.cl). They fail, with the
// build log in the message, on a tree that has only the runtime half.
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

class ImageKernels : public ContextTest {
 protected:
  void SetUp() override {
    ContextTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (!caps_.images) GTEST_SKIP() << "the device does not support images";
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

TEST_F(ImageKernels, DeviceAdvertisesImageFeatures) {
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

// An image written by a kernel on an emulated GPU (private memory) is read by a kernel on the
// CPU: the image's bytes migrate like a buffer's.
TEST_F(ImageKernels, KernelsOnTwoDevicesShareAnImage) {
  ASSERT_TRUE(kEmulated);
  cl_uint n = 0;
  ASSERT_CL(CL_SUCCESS, clGetDeviceIDs(platform_, CL_DEVICE_TYPE_GPU, 0, nullptr, &n));
  std::vector<cl_device_id> gpus(n);
  if (n) {
    ASSERT_CL(CL_SUCCESS, clGetDeviceIDs(platform_, CL_DEVICE_TYPE_GPU, n, gpus.data(), nullptr));
  }
  cl_device_id gpu = nullptr;
  for (cl_device_id d : gpus)
    if (deviceInfo<cl_bool>(d, CL_DEVICE_IMAGE_SUPPORT)) gpu = d;
  if (!gpu) GTEST_SKIP() << "no second device with images (MANIFOLD_EMULATED_GPUS)";
  cl_device_id devs[2] = {device_, gpu};
  cl_int err = -1;
  Context ctx(clCreateContext(nullptr, 2, devs, nullptr, nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  Queue qc(clCreateCommandQueueWithProperties(ctx, device_, nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  Queue qg(clCreateCommandQueueWithProperties(ctx, gpu, nullptr, &err));
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
  for (cl_uint round = 0; round < 3; ++round) {
    // Written on one device, read on the other, in turn.
    cl_command_queue writer = round % 2 ? qc.get() : qg.get(),
                     reader = round % 2 ? qg.get() : qc.get();
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
  }
}

}  // namespace
