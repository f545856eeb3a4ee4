// Image and sampler builtins (compiler/builtins/image.cl) on the CPU pipeline: kernels run over
// ManifoldImage descriptors (compiler/image_abi.h) built here on host arrays, and their results
// are checked against values worked out by hand or by the spec's formulas written out below.
#include <CL/cl.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "backends/cpu/cpu_executable.h"
#include "compiler/compiler.h"
#include "compiler/image_abi.h"
#include "jit_test_util.h"

namespace manifold::compiler {
namespace {

using cpu::CpuExecutable;

using jit_test::build_and_load;

// An image over host memory (tightly packed rows, slices and layers).
struct HostImage {
  std::vector<uint8_t> bytes;
  ManifoldImage desc{};
  ManifoldImage* pointer = &desc;

  HostImage(cl_mem_object_type type, uint32_t order, uint32_t data_type, uint32_t element_size,
            uint32_t width, uint32_t height = 1, uint32_t depth = 1, uint32_t layers = 1) {
    const uint64_t rows = uint64_t(height) * depth * layers;
    bytes.assign(rows * width * element_size, 0);
    desc.data = reinterpret_cast<uint64_t>(bytes.data());
    desc.row_pitch = uint64_t(width) * element_size;
    desc.slice_pitch = desc.row_pitch * height;
    desc.width = width;
    desc.height = height;
    desc.depth = depth;
    desc.array_size = layers;
    desc.image_type = type;
    desc.channel_order = order;
    desc.channel_data_type = data_type;
    desc.element_size = element_size;
    desc.num_channels = 0;  // the builtins do not need it
  }
  template <typename T>
  T* texel(uint32_t x, uint32_t y = 0, uint32_t z = 0) {
    return reinterpret_cast<T*>(bytes.data() + z * desc.slice_pitch + y * desc.row_pitch +
                                x * desc.element_size);
  }
};

NDRange range(size_t x, size_t y = 1, size_t lx = 1, size_t ly = 1) {
  NDRange r;
  r.work_dim = y > 1 ? 2 : 1;
  r.global_size[0] = x;
  r.global_size[1] = y;
  r.local_size[0] = lx;
  r.local_size[1] = ly;
  return r;
}

// ---- Formats: reads convert each data type and channel order as the spec says.

TEST(Images, ReadConvertsFormatsAndChannelOrders) {
  auto exe = build_and_load(R"(
    kernel void k(read_only image2d_t img, global float4* out) {
      out[0] = read_imagef(img, (int2)(1, 0));
    })");
  ASSERT_NE(exe, nullptr);
  auto read = [&](HostImage& image) {
    float out[4] = {-9, -9, -9, -9};
    void* pout = out;
    const void* args[] = {&image.pointer, &pout};
    exe->run("k", range(1), args, nullptr);
    return std::vector<float>(out, out + 4);
  };
  using V = std::vector<float>;
  {
    HostImage image(CL_MEM_OBJECT_IMAGE2D, CL_RGBA, CL_UNORM_INT8, 4, 2);
    const uint8_t v[4] = {0, 255, 128, 51};
    std::memcpy(image.texel<uint8_t>(1), v, 4);
    EXPECT_EQ(read(image), (V{0.0f, 1.0f, 128.0f / 255.0f, 0.2f}));
    image.desc.channel_order = CL_BGRA;
    EXPECT_EQ(read(image), (V{128.0f / 255.0f, 1.0f, 0.0f, 0.2f}));
    image.desc.channel_order = CL_ARGB;
    EXPECT_EQ(read(image), (V{1.0f, 128.0f / 255.0f, 0.2f, 0.0f}));
    image.desc.channel_order = CL_ABGR;
    EXPECT_EQ(read(image), (V{0.2f, 128.0f / 255.0f, 1.0f, 0.0f}));
  }
  {
    HostImage image(CL_MEM_OBJECT_IMAGE2D, CL_R, CL_UNORM_INT8, 1, 2);
    *image.texel<uint8_t>(1) = 51;
    EXPECT_EQ(read(image), (V{0.2f, 0, 0, 1}));
    image.desc.channel_order = CL_A;
    EXPECT_EQ(read(image), (V{0, 0, 0, 0.2f}));
    image.desc.channel_order = CL_INTENSITY;
    EXPECT_EQ(read(image), (V{0.2f, 0.2f, 0.2f, 0.2f}));
    image.desc.channel_order = CL_LUMINANCE;
    EXPECT_EQ(read(image), (V{0.2f, 0.2f, 0.2f, 1}));
  }
  {
    HostImage image(CL_MEM_OBJECT_IMAGE2D, CL_RG, CL_SNORM_INT8, 2, 2);
    const int8_t v[2] = {-128, 127};
    std::memcpy(image.texel<int8_t>(1), v, 2);
    EXPECT_EQ(read(image), (V{-1, 1, 0, 1}));
    image.desc.channel_order = CL_RA;
    EXPECT_EQ(read(image), (V{-1, 0, 0, 1}));
  }
  {
    HostImage image(CL_MEM_OBJECT_IMAGE2D, CL_RA, CL_SNORM_INT16, 4, 2);
    const int16_t v[2] = {-32767, 16384};
    std::memcpy(image.texel<int16_t>(1), v, 4);
    EXPECT_EQ(read(image), (V{-1, 0, 0, 16384.0f / 32767.0f}));
  }
  {
    HostImage image(CL_MEM_OBJECT_IMAGE2D, CL_RGBA, CL_UNORM_INT16, 8, 2);
    const uint16_t v[4] = {0, 65535, 1, 32768};
    std::memcpy(image.texel<uint16_t>(1), v, 8);
    EXPECT_EQ(read(image), (V{0, 1, 1.0f / 65535.0f, 32768.0f / 65535.0f}));
  }
  {
    HostImage image(CL_MEM_OBJECT_IMAGE2D, CL_RGB, CL_UNORM_SHORT_565, 2, 2);
    *image.texel<uint16_t>(1) = (31u << 11) | (21u << 5) | 3u;
    EXPECT_EQ(read(image), (V{1, 21.0f / 63.0f, 3.0f / 31.0f, 1}));
    image.desc.channel_data_type = CL_UNORM_SHORT_555;
    *image.texel<uint16_t>(1) = (1u << 10) | (31u << 5) | 0u;
    EXPECT_EQ(read(image), (V{1.0f / 31.0f, 1, 0, 1}));
  }
  {
    HostImage image(CL_MEM_OBJECT_IMAGE2D, CL_RGB, CL_UNORM_INT_101010, 4, 2);
    *image.texel<uint32_t>(1) = (1023u << 20) | (512u << 10) | 0u;
    EXPECT_EQ(read(image), (V{1, 512.0f / 1023.0f, 0, 1}));
  }
  {
    HostImage image(CL_MEM_OBJECT_IMAGE2D, CL_RGBA, CL_HALF_FLOAT, 8, 2);
    const uint16_t v[4] = {0x3C00, 0xC000, 0x3555, 0x7C00};  // 1, -2, 0.333251953125, inf
    std::memcpy(image.texel<uint16_t>(1), v, 8);
    EXPECT_EQ(read(image), (V{1, -2, 0.333251953125f, INFINITY}));
  }
  {
    // sRGB: colour decoded to linear, alpha linear as stored.
    auto linear = [](int c) {
      const double v = c / 255.0;
      return float(v <= 0.04045 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4));
    };
    HostImage image(CL_MEM_OBJECT_IMAGE2D, CL_sRGBA, CL_UNORM_INT8, 4, 2);
    const uint8_t v[4] = {0, 255, 188, 128};
    std::memcpy(image.texel<uint8_t>(1), v, 4);
    EXPECT_EQ(read(image), (V{0, 1, linear(188), 128.0f / 255.0f}));
    image.desc.channel_order = CL_sBGRA;
    EXPECT_EQ(read(image), (V{linear(188), 1, 0, 128.0f / 255.0f}));
    image.desc.channel_order = CL_sRGBx;
    EXPECT_EQ(read(image), (V{0, 1, linear(188), 1}));
    HostImage three(CL_MEM_OBJECT_IMAGE2D, CL_sRGB, CL_UNORM_INT8, 3, 2);
    std::memcpy(three.texel<uint8_t>(1), v, 3);
    EXPECT_EQ(read(three), (V{0, 1, linear(188), 1}));
    EXPECT_NE(linear(188), 188.0f / 255.0f);
  }
  {
    HostImage image(CL_MEM_OBJECT_IMAGE2D, CL_RG, CL_FLOAT, 8, 2);
    const float v[2] = {1.5f, -3.25f};
    std::memcpy(image.texel<float>(1), v, 8);
    EXPECT_EQ(read(image), (V{1.5f, -3.25f, 0, 1}));
  }
}

TEST(Images, IntegerFormatsSignAndZeroExtend) {
  auto exe = build_and_load(R"(
    kernel void k(read_only image1d_t img, global int4* i, global uint4* u) {
      i[0] = read_imagei(img, 0);
      u[0] = read_imageui(img, 0);
    })");
  ASSERT_NE(exe, nullptr);
  auto run = [&](HostImage& image, int32_t* i, uint32_t* u) {
    void* pi = i;
    void* pu = u;
    const void* args[] = {&image.pointer, &pi, &pu};
    exe->run("k", range(1), args, nullptr);
  };
  {
    HostImage image(CL_MEM_OBJECT_IMAGE1D, CL_RGBA, CL_SIGNED_INT16, 8, 1);
    const int16_t v[4] = {-32768, -1, 7, 32767};
    std::memcpy(image.texel<int16_t>(0), v, 8);
    int32_t i[4];
    uint32_t u[4];
    run(image, i, u);
    EXPECT_EQ(std::vector<int32_t>(i, i + 4), (std::vector<int32_t>{-32768, -1, 7, 32767}));
  }
  {
    HostImage image(CL_MEM_OBJECT_IMAGE1D, CL_RG, CL_UNSIGNED_INT16, 4, 1);
    const uint16_t v[2] = {65535, 3};
    std::memcpy(image.texel<uint16_t>(0), v, 4);
    int32_t i[4];
    uint32_t u[4];
    run(image, i, u);
    EXPECT_EQ(std::vector<uint32_t>(u, u + 4), (std::vector<uint32_t>{65535, 3, 0, 1}));
  }
  {
    HostImage image(CL_MEM_OBJECT_IMAGE1D, CL_ARGB, CL_UNSIGNED_INT32, 16, 1);
    const uint32_t v[4] = {4000000000u, 1, 2, 3};  // a, r, g, b
    std::memcpy(image.texel<uint32_t>(0), v, 16);
    int32_t i[4];
    uint32_t u[4];
    run(image, i, u);
    EXPECT_EQ(std::vector<uint32_t>(u, u + 4), (std::vector<uint32_t>{1, 2, 3, 4000000000u}));
  }
  {
    HostImage image(CL_MEM_OBJECT_IMAGE1D, CL_R, CL_SIGNED_INT8, 1, 1);
    *image.texel<int8_t>(0) = -100;
    int32_t i[4];
    uint32_t u[4];
    run(image, i, u);
    EXPECT_EQ(std::vector<int32_t>(i, i + 4), (std::vector<int32_t>{-100, 0, 0, 1}));
  }
}

// ---- Writes: round to nearest even, saturate; integer writes saturate.

TEST(Images, WritesRoundToNearestEvenAndSaturate) {
  auto exe = build_and_load(R"(
    kernel void f(write_only image2d_t img, float4 color) { write_imagef(img, (int2)(1, 1), color); }
    kernel void i(write_only image2d_t img, int4 color) { write_imagei(img, (int2)(1, 1), color); }
    kernel void u(write_only image2d_t img, uint4 color) { write_imageui(img, (int2)(1, 1), color); }
  )");
  ASSERT_NE(exe, nullptr);
  auto write = [&](const char* kernel, HostImage& image, const void* color) {
    const void* args[] = {&image.pointer, color};
    exe->run(kernel, range(1), args, nullptr);
  };
  {
    HostImage image(CL_MEM_OBJECT_IMAGE2D, CL_RGBA, CL_UNORM_INT8, 4, 2, 2);
    const float color[4] = {127.5f / 255.0f, 1.5f, -0.25f, NAN};
    write("f", image, color);
    EXPECT_EQ(std::vector<uint8_t>(image.texel<uint8_t>(1, 1), image.texel<uint8_t>(1, 1) + 4),
              (std::vector<uint8_t>{128, 255, 0, 0}));
    image.desc.channel_order = CL_BGRA;
    const float color2[4] = {0.2f, 0.4f, 0.6f, 1.0f};
    write("f", image, color2);
    EXPECT_EQ(std::vector<uint8_t>(image.texel<uint8_t>(1, 1), image.texel<uint8_t>(1, 1) + 4),
              (std::vector<uint8_t>{153, 102, 51, 255}));
    // Nothing else was touched.
    EXPECT_EQ(*image.texel<uint32_t>(0, 1), 0u);
    EXPECT_EQ(*image.texel<uint32_t>(1, 0), 0u);
  }
  {
    // sRGB: linear 0.5 encodes to 0.7354 (187.516 -> 188), 0.002 to 12.92 * 0.002 (6.59 -> 7);
    // alpha stays linear.
    HostImage image(CL_MEM_OBJECT_IMAGE2D, CL_sBGRA, CL_UNORM_INT8, 4, 2, 2);
    const float color[4] = {0.5f, 0.002f, 2.0f, 0.5f};
    write("f", image, color);
    EXPECT_EQ(std::vector<uint8_t>(image.texel<uint8_t>(1, 1), image.texel<uint8_t>(1, 1) + 4),
              (std::vector<uint8_t>{255, 7, 188, 128}));
  }
  {
    HostImage image(CL_MEM_OBJECT_IMAGE2D, CL_RG, CL_SNORM_INT8, 2, 2, 2);
    const float color[4] = {-2.0f, 2.5f / 127.0f, 9, 9};
    write("f", image, color);
    EXPECT_EQ(image.texel<int8_t>(1, 1)[0], -128);
    EXPECT_EQ(image.texel<int8_t>(1, 1)[1], 2);  // 2.5 -> 2 (even)
  }
  {
    HostImage image(CL_MEM_OBJECT_IMAGE2D, CL_A, CL_UNORM_INT16, 2, 2, 2);
    const float color[4] = {0, 0, 0, 0.5f};
    write("f", image, color);
    EXPECT_EQ(*image.texel<uint16_t>(1, 1), 32768);  // 32767.5 -> 32768 (even)
  }
  {
    HostImage image(CL_MEM_OBJECT_IMAGE2D, CL_RGBA, CL_HALF_FLOAT, 8, 2, 2);
    const float color[4] = {1.0f / 3.0f, -65520.0f, 1e-8f, 0.5f};
    write("f", image, color);
    const uint16_t* h = image.texel<uint16_t>(1, 1);
    EXPECT_EQ(h[0], 0x3555);
    EXPECT_EQ(h[1], 0xFC00);  // rounds to -inf
    EXPECT_EQ(h[2], 0x0000);  // 1e-8 is below half the smallest denormal
    EXPECT_EQ(h[3], 0x3800);
  }
  {
    HostImage image(CL_MEM_OBJECT_IMAGE2D, CL_RGB, CL_UNORM_SHORT_565, 2, 2, 2);
    const float color[4] = {1.0f, 0.5f, 2.0f / 31.0f, 0};
    write("f", image, color);
    EXPECT_EQ(*image.texel<uint16_t>(1, 1), (31u << 11) | (32u << 5) | 2u);  // 31.5 -> 32
    image.desc.channel_data_type = CL_UNORM_INT_101010;
    image.desc.element_size = 4;
    image.desc.row_pitch = 8;
    image.desc.slice_pitch = 16;
    image.bytes.assign(16, 0);
    image.desc.data = reinterpret_cast<uint64_t>(image.bytes.data());
    const float color2[4] = {1.0f, 0.0f, 0.5f, 0};
    write("f", image, color2);
    EXPECT_EQ(*image.texel<uint32_t>(1, 1), (1023u << 20) | 512u);  // 511.5 -> 512
  }
  {
    HostImage image(CL_MEM_OBJECT_IMAGE2D, CL_RGBA, CL_SIGNED_INT8, 4, 2, 2);
    const int32_t color[4] = {300, -300, -5, 127};
    write("i", image, color);
    EXPECT_EQ(std::vector<int8_t>(image.texel<int8_t>(1, 1), image.texel<int8_t>(1, 1) + 4),
              (std::vector<int8_t>{127, -128, -5, 127}));
  }
  {
    HostImage image(CL_MEM_OBJECT_IMAGE2D, CL_RG, CL_UNSIGNED_INT16, 4, 2, 2);
    const uint32_t color[4] = {70000, 65535, 1, 1};
    write("u", image, color);
    EXPECT_EQ(image.texel<uint16_t>(1, 1)[0], 65535);
    EXPECT_EQ(image.texel<uint16_t>(1, 1)[1], 65535);
    image.desc.channel_order = CL_RA;
    const uint32_t color2[4] = {9, 70000, 1, 4};
    write("u", image, color2);
    EXPECT_EQ(image.texel<uint16_t>(1, 1)[0], 9);
    EXPECT_EQ(image.texel<uint16_t>(1, 1)[1], 4);
  }
}

// ---- Samplers: the spec's addressing and filtering formulas, written out on the host.

struct Axis {
  int i0, i1;  // nearest: i0 only
  float a;
  bool near_boundary;  // the coordinate sits too close to a texel edge to compare exactly
};

bool close_to_integer(double u) { return std::fabs(u - std::nearbyint(u)) < 1e-3; }

Axis reference_axis(float s, int size, int address, bool normalized, bool linear) {
  Axis r{};
  double u;
  if (address == CL_ADDRESS_REPEAT)
    u = (s - std::floor(s)) * size;
  else if (address == CL_ADDRESS_MIRRORED_REPEAT)
    u = std::fabs(s - 2.0 * std::nearbyint(0.5 * s)) * size;
  else
    u = normalized ? double(s) * size : s;
  r.near_boundary = close_to_integer(linear ? u - 0.5 : u) ||
                    (normalized && close_to_integer(2.0 * s)) || close_to_integer(s);
  if (!linear) {
    int i = int(std::floor(u));
    if (address == CL_ADDRESS_REPEAT) {
      if (i > size - 1) i -= size;
    } else if (address == CL_ADDRESS_MIRRORED_REPEAT) {
      i = std::min(i, size - 1);
    } else if (address == CL_ADDRESS_CLAMP) {
      i = std::clamp(i, -1, size);
    } else {
      i = std::clamp(i, 0, size - 1);
    }
    r.i0 = i;
    return r;
  }
  int i0 = int(std::floor(u - 0.5));
  int i1 = i0 + 1;
  if (address == CL_ADDRESS_REPEAT) {
    if (i0 < 0) i0 += size;
    if (i1 > size - 1) i1 -= size;
  } else if (address == CL_ADDRESS_MIRRORED_REPEAT) {
    i0 = std::max(i0, 0);
    i1 = std::min(i1, size - 1);
  } else if (address == CL_ADDRESS_CLAMP) {
    i0 = std::clamp(i0, -1, size);
    i1 = std::clamp(i1, -1, size);
  } else {
    i0 = std::clamp(i0, 0, size - 1);
    i1 = std::clamp(i1, 0, size - 1);
  }
  r.i0 = i0;
  r.i1 = i1;
  r.a = float((u - 0.5) - std::floor(u - 0.5));
  return r;
}

// Texel value of the test images: distinct per texel and component; border outside.
float texel_value(int x, int y, int z, int c, int w, int h, int d) {
  if (x < 0 || y < 0 || z < 0 || x >= w || y >= h || z >= d) return 0.0f;  // RGBA border
  return float(x + 10 * y + 100 * z) + 0.25f * c;
}

void fill(HostImage& image, int w, int h, int d) {
  for (int z = 0; z < d; ++z)
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x)
        for (int c = 0; c < 4; ++c)
          image.texel<float>(x, y, z)[c] = texel_value(x, y, z, c, w, h, d);
}

struct SamplerCase {
  int address;
  bool normalized;
  bool linear;
};

std::vector<SamplerCase> sampler_cases() {
  std::vector<SamplerCase> cases;
  for (bool linear : {false, true}) {
    for (int address : {CL_ADDRESS_NONE, CL_ADDRESS_CLAMP_TO_EDGE, CL_ADDRESS_CLAMP})
      for (bool normalized : {false, true}) cases.push_back({address, normalized, linear});
    cases.push_back({CL_ADDRESS_REPEAT, true, linear});
    cases.push_back({CL_ADDRESS_MIRRORED_REPEAT, true, linear});
  }
  return cases;
}

uint64_t sampler_bits(const SamplerCase& c) {
  const uint64_t address = uint64_t(c.address - CL_ADDRESS_NONE) * 2;  // CLK_ADDRESS_* values
  return (c.normalized ? 1 : 0) | address | (c.linear ? 0x20 : 0x10);
}

// Coordinates spread over [-1.5, 2.5] of the image (normalized) or [-2, size + 2] texels.
std::vector<float> sweep(int size, bool normalized) {
  std::vector<float> v;
  for (int k = 0; k < 97; ++k) {
    const double t = -0.5 + k * (3.9 / 96) + 0.0013;
    v.push_back(normalized ? float(t - 1.0 + 0.5) : float(t * (size + 4) / 3.9 - 2 + 0.5));
  }
  return v;
}

TEST(Images, SamplerAddressingAndFilteringOn2DImages) {
  auto exe = build_and_load(R"(
    kernel void k(read_only image2d_t img, sampler_t s, global const float2* coords,
                  global float4* out) {
      size_t i = get_global_id(0);
      out[i] = read_imagef(img, s, coords[i]);
    })");
  ASSERT_NE(exe, nullptr);
  const int w = 5, h = 3;
  HostImage image(CL_MEM_OBJECT_IMAGE2D, CL_RGBA, CL_FLOAT, 16, w, h);
  fill(image, w, h, 1);
  int compared = 0;
  for (const SamplerCase& c : sampler_cases()) {
    std::vector<float> xs = sweep(w, c.normalized), ys = sweep(h, c.normalized);
    std::vector<float> coords;
    for (size_t k = 0; k < xs.size(); ++k) {
      coords.push_back(xs[k]);
      coords.push_back(ys[(k * 7) % ys.size()]);
    }
    const size_t n = xs.size();
    std::vector<float> out(n * 4, -1.0f);
    uint64_t bits = sampler_bits(c);
    void* pc = coords.data();
    void* po = out.data();
    const void* args[] = {&image.pointer, &bits, &pc, &po};
    exe->run("k", range(n, 1, 1), args, nullptr);
    for (size_t k = 0; k < n; ++k) {
      const Axis ax = reference_axis(coords[2 * k], w, c.address, c.normalized, c.linear);
      const Axis ay = reference_axis(coords[2 * k + 1], h, c.address, c.normalized, c.linear);
      if (ax.near_boundary || ay.near_boundary) continue;
      for (int ch = 0; ch < 4; ++ch) {
        float expected;
        if (!c.linear) {
          expected = texel_value(ax.i0, ay.i0, 0, ch, w, h, 1);
          if (ch == 3 && c.address == CL_ADDRESS_CLAMP &&
              (ax.i0 < 0 || ax.i0 >= w || ay.i0 < 0 || ay.i0 >= h))
            expected = 0.0f;
        } else {
          auto t = [&](int x, int y) { return texel_value(x, y, 0, ch, w, h, 1); };
          expected = (1 - ax.a) * (1 - ay.a) * t(ax.i0, ay.i0) +
                     ax.a * (1 - ay.a) * t(ax.i1, ay.i0) + (1 - ax.a) * ay.a * t(ax.i0, ay.i1) +
                     ax.a * ay.a * t(ax.i1, ay.i1);
        }
        EXPECT_NEAR(out[4 * k + ch], expected, 1e-3)
            << "address " << std::hex << c.address << std::dec << " normalized " << c.normalized
            << " linear " << c.linear << " at (" << coords[2 * k] << ", " << coords[2 * k + 1]
            << ") channel " << ch;
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 3000);
}

// A few cases worked out by hand (1D, width 5, texel i holds i).
TEST(Images, SamplerSpotChecks) {
  auto exe = build_and_load(R"(
    kernel void k(read_only image1d_t img, sampler_t s, float x, global float4* out) {
      out[0] = read_imagef(img, s, x);
    })");
  ASSERT_NE(exe, nullptr);
  HostImage image(CL_MEM_OBJECT_IMAGE1D, CL_R, CL_FLOAT, 4, 5);
  for (int i = 0; i < 5; ++i) *image.texel<float>(i) = float(i);
  auto read = [&](uint64_t bits, float x) {
    float out[4] = {-9, -9, -9, -9};
    void* po = out;
    const void* args[] = {&image.pointer, &bits, &x, &po};
    exe->run("k", range(1), args, nullptr);
    return std::vector<float>(out, out + 4);
  };
  using V = std::vector<float>;
  const uint64_t norm = 1, nearest = 0x10, linear = 0x20;
  const uint64_t clamp_to_edge = 2, clamp = 4, repeat = 6, mirrored = 8;
  EXPECT_EQ(read(norm | repeat | nearest, 1.1f), (V{0, 0, 0, 1}));     // u = 0.5
  EXPECT_EQ(read(norm | repeat | nearest, -0.1f), (V{4, 0, 0, 1}));    // u = 4.5
  EXPECT_EQ(read(norm | mirrored | nearest, 1.1f), (V{4, 0, 0, 1}));   // |1.1 - 2| * 5 = 4.5
  EXPECT_EQ(read(norm | mirrored | nearest, -0.3f), (V{1, 0, 0, 1}));  // 0.3 * 5 = 1.5
  EXPECT_EQ(read(norm | clamp | nearest, -0.1f), (V{0, 0, 0, 1}));     // border (no alpha)
  EXPECT_EQ(read(clamp | nearest, 7.0f), (V{0, 0, 0, 1}));
  EXPECT_EQ(read(clamp_to_edge | nearest, 7.0f), (V{4, 0, 0, 1}));
  EXPECT_EQ(read(clamp_to_edge | linear, 1.0f), (V{0.5f, 0, 0, 1}));
  EXPECT_EQ(read(clamp_to_edge | linear, 0.25f), (V{0, 0, 0, 1}));
  EXPECT_EQ(read(clamp | linear, 0.25f), (V{0, 0, 0, 1}));         // 0.25 border + 0.75 * 0
  EXPECT_EQ(read(clamp | linear, 5.0f), (V{2, 0, 0, 1}));          // half texel 4, half border
  EXPECT_EQ(read(norm | repeat | linear, 0.0f), (V{2, 0, 0, 1}));  // half 4, half 0
  EXPECT_EQ(read(norm | mirrored | linear, 0.0f), (V{0, 0, 0, 1}));
  // CL_A keeps alpha in the border: (0, 0, 0, 0).
  image.desc.channel_order = CL_A;
  EXPECT_EQ(read(clamp | nearest, -1.0f), (V{0, 0, 0, 0}));
  EXPECT_EQ(read(clamp | nearest, 3.0f), (V{0, 0, 0, 3}));
}

// Trilinear filtering on a 3D image, and layers picked by rint on a 2D array.
TEST(Images, ThreeDimensionalAndArrayFiltering) {
  auto exe = build_and_load(R"(
    kernel void k3(read_only image3d_t img, sampler_t s, global const float4* c, global float4* out) {
      size_t i = get_global_id(0);
      out[i] = read_imagef(img, s, c[i]);
    }
    kernel void ka(read_only image2d_array_t img, sampler_t s, global const float4* c,
                   global float4* out) {
      size_t i = get_global_id(0);
      out[i] = read_imagef(img, s, c[i]);
    })");
  ASSERT_NE(exe, nullptr);
  const int w = 4, h = 3, d = 3;
  for (bool array : {false, true}) {
    HostImage image(array ? CL_MEM_OBJECT_IMAGE2D_ARRAY : CL_MEM_OBJECT_IMAGE3D, CL_RGBA, CL_FLOAT,
                    16, w, h, array ? 1 : d, array ? d : 1);
    fill(image, w, h, d);
    int compared = 0;
    for (const SamplerCase& c : sampler_cases()) {
      if (c.normalized && array) continue;  // keeps the layer arithmetic simple below
      std::vector<float> xs = sweep(w, c.normalized), ys = sweep(h, c.normalized),
                         zs = sweep(d, c.normalized && !array);
      std::vector<float> coords;
      for (size_t k = 0; k < xs.size(); ++k) {
        coords.insert(coords.end(),
                      {xs[k], ys[(k * 7) % ys.size()], zs[(k * 13) % zs.size()], 0.0f});
      }
      const size_t n = xs.size();
      std::vector<float> out(n * 4);
      uint64_t bits = sampler_bits(c);
      void* pc = coords.data();
      void* po = out.data();
      const void* args[] = {&image.pointer, &bits, &pc, &po};
      exe->run(array ? "ka" : "k3", range(n), args, nullptr);
      for (size_t k = 0; k < n; ++k) {
        const Axis ax = reference_axis(coords[4 * k], w, c.address, c.normalized, c.linear);
        const Axis ay = reference_axis(coords[4 * k + 1], h, c.address, c.normalized, c.linear);
        Axis az;
        if (array) {
          const float layer = coords[4 * k + 2];
          az = {std::clamp(int(std::nearbyint(layer)), 0, d - 1), 0, 0.0f,
                close_to_integer(layer - 0.5)};
          az.i1 = az.i0;
        } else {
          az = reference_axis(coords[4 * k + 2], d, c.address, c.normalized, c.linear);
        }
        if (ax.near_boundary || ay.near_boundary || az.near_boundary) continue;
        for (int ch = 0; ch < 4; ++ch) {
          auto t = [&](int x, int y, int z) { return texel_value(x, y, z, ch, w, h, d); };
          float expected;
          if (!c.linear) {
            expected = t(ax.i0, ay.i0, az.i0);
          } else {
            float v[2];
            for (int zi = 0; zi < 2; ++zi) {
              const int z = zi ? az.i1 : az.i0;
              v[zi] = (1 - ax.a) * (1 - ay.a) * t(ax.i0, ay.i0, z) +
                      ax.a * (1 - ay.a) * t(ax.i1, ay.i0, z) +
                      (1 - ax.a) * ay.a * t(ax.i0, ay.i1, z) + ax.a * ay.a * t(ax.i1, ay.i1, z);
            }
            expected = (1 - az.a) * v[0] + az.a * v[1];
          }
          EXPECT_NEAR(out[4 * k + ch], expected, 1e-2)
              << (array ? "array" : "3d") << " address " << std::hex << c.address << std::dec
              << " normalized " << c.normalized << " linear " << c.linear << " at ("
              << coords[4 * k] << ", " << coords[4 * k + 1] << ", " << coords[4 * k + 2] << ")";
          ++compared;
        }
      }
    }
    EXPECT_GT(compared, 1500);
  }
}

// ---- Every image type: writes, reads back, queries; literal samplers in the source.

TEST(Images, EveryImageTypeWritesReadsAndQueries) {
  auto exe = build_and_load(R"(
    const sampler_t nearest = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP | CLK_FILTER_NEAREST;
    kernel void w1(write_only image1d_t img) {
      int x = get_global_id(0);
      write_imagef(img, x, (float4)(x, 0, 0, 1));
    }
    kernel void wb(write_only image1d_buffer_t img) {
      int x = get_global_id(0);
      write_imageui(img, x, (uint4)(x + 1, 0, 0, 1));
    }
    kernel void wa1(write_only image1d_array_t img) {
      int x = get_global_id(0), l = get_global_id(1);
      write_imagei(img, (int2)(x, l), (int4)(x - 10 * l, 0, 0, 1));
    }
    kernel void wa2(write_only image2d_array_t img) {
      int x = get_global_id(0), y = get_global_id(1);
      for (int l = 0; l < get_image_array_size(img); ++l)
        write_imagef(img, (int4)(x, y, l, 0), (float4)(x + 10 * y + 100 * l, 0, 0, 1));
    }
    kernel void w3(write_only image3d_t img) {
      int x = get_global_id(0), y = get_global_id(1);
      for (int z = 0; z < get_image_depth(img); ++z)
        write_imagef(img, (int4)(x, y, z, 0), (float4)(x + 10 * y + 100 * z, 0, 0, 1));
    }
    kernel void r(read_only image1d_t i1, read_only image1d_buffer_t ib, read_only image1d_array_t ia1,
                  read_only image2d_array_t ia2, read_only image3d_t i3, global float* out) {
      const sampler_t edge = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE |
                             CLK_FILTER_NEAREST;
      out[0] = read_imagef(i1, 3).x;
      out[1] = read_imagef(i1, nearest, 9).w;            // border of CL_R: alpha 1
      out[2] = read_imageui(ib, 2).x;
      out[3] = read_imagei(ia1, (int2)(2, 1)).x;
      out[4] = read_imagei(ia1, edge, (float2)(2.5f, 7.0f)).x;  // layer clamps to 1
      out[5] = read_imagef(ia2, (int4)(1, 2, 1, 0)).x;
      out[6] = read_imagef(ia2, nearest, (float4)(1.5f, 2.5f, 0.6f, 0)).x;  // layer rint(0.6) = 1
      out[7] = read_imagef(i3, (int4)(3, 1, 2, 0)).x;
      out[8] = read_imagef(i3, edge, (float4)(3.5f, 1.5f, 2.5f, 0)).x;
      out[9] = get_image_width(i1);
      out[10] = get_image_width(ib);
      out[11] = get_image_array_size(ia1);
      out[12] = get_image_dim(ia2).y;
      out[13] = get_image_array_size(ia2);
      int4 d = get_image_dim(i3);
      out[14] = d.x * 100 + d.y * 10 + d.z;
      out[15] = get_image_height(i3) + get_image_depth(i3);
      out[16] = get_image_channel_order(ia1) == CLK_R;
      out[17] = get_image_channel_data_type(ia1) == CLK_SIGNED_INT16;
    })");
  ASSERT_NE(exe, nullptr);
  HostImage i1(CL_MEM_OBJECT_IMAGE1D, CL_R, CL_FLOAT, 4, 6);
  HostImage ib(CL_MEM_OBJECT_IMAGE1D_BUFFER, CL_RG, CL_UNSIGNED_INT8, 2, 5);
  HostImage ia1(CL_MEM_OBJECT_IMAGE1D_ARRAY, CL_R, CL_SIGNED_INT16, 2, 4, 1, 1, 2);
  HostImage ia2(CL_MEM_OBJECT_IMAGE2D_ARRAY, CL_RGBA, CL_FLOAT, 16, 3, 4, 1, 2);
  HostImage i3(CL_MEM_OBJECT_IMAGE3D, CL_RG, CL_FLOAT, 8, 4, 2, 3);
  auto run1 = [&](const char* kernel, HostImage& image, NDRange r) {
    const void* args[] = {&image.pointer};
    exe->run(kernel, r, args, nullptr);
  };
  run1("w1", i1, range(6));
  run1("wb", ib, range(5));
  run1("wa1", ia1, range(4, 2));
  run1("wa2", ia2, range(3, 4));
  run1("w3", i3, range(4, 2));
  EXPECT_EQ(*i1.texel<float>(5), 5.0f);
  EXPECT_EQ(ib.texel<uint8_t>(4)[0], 5);
  EXPECT_EQ(ib.texel<uint8_t>(4)[1], 0);
  EXPECT_EQ(*ia1.texel<int16_t>(3, 0, 1), 3 - 10);
  EXPECT_EQ(*ia2.texel<float>(2, 3, 1), 2 + 30 + 100);
  EXPECT_EQ(ia2.texel<float>(2, 3, 1)[3], 1.0f);
  EXPECT_EQ(*i3.texel<float>(3, 1, 2), 3 + 10 + 200);
  EXPECT_EQ(i3.texel<float>(3, 1, 2)[1], 0.0f);

  std::vector<float> out(18, -1.0f);
  void* po = out.data();
  const void* args[] = {&i1.pointer, &ib.pointer, &ia1.pointer, &ia2.pointer, &i3.pointer, &po};
  exe->run("r", range(1), args, nullptr);
  const std::vector<float> expected = {
      3, 1, 3, 2 - 10, 2 - 10, 1 + 20 + 100, 1 + 20 + 100, 213, 213, 6, 5, 2, 4, 2, 423, 5, 1, 1};
  EXPECT_EQ(out, expected);
}

// Kernels with barriers and several work-items per group (the work-group pass's loops and
// vectorization): a tile is read into local memory, then written out mirrored.
TEST(Images, BarriersAndWorkGroupsWithImages) {
  auto exe = build_and_load(R"(
    float4 fetch(read_only image2d_t img, sampler_t s, int x, int y) {
      return read_imagef(img, s, (int2)(x, y));
    }
    kernel void mirror(read_only image2d_t src, write_only image2d_t dst, local float4* tile) {
      const sampler_t s = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;
      int x = get_global_id(0), y = get_global_id(1);
      int lx = get_local_id(0), n = get_local_size(0);
      tile[lx] = fetch(src, s, x, y);
      barrier(CLK_LOCAL_MEM_FENCE);
      int gx = get_group_id(0) * n + (n - 1 - lx);
      // The image, the sampler and the coordinates are still needed after the barrier.
      write_imagef(dst, (int2)(gx, y), tile[lx] * 2.0f + fetch(src, s, gx, y));
    }
    kernel void sizes(read_only image2d_t img, global int* out) {
      int i = get_global_id(0);
      out[i] = i * get_image_width(img) + get_image_height(img);
    })");
  ASSERT_NE(exe, nullptr);
  auto rw_exe = build_and_load(R"(
    kernel void copy_rw(read_write image2d_t img) {
      int x = get_global_id(0), y = get_global_id(1);
      uint4 v = read_imageui(img, (int2)(x, y));
      write_imageui(img, (int2)(x, y), v + (uint4)(1, 2, 3, 4));
    })",
                               "-cl-std=CL3.0");
  ASSERT_NE(rw_exe, nullptr);
  const int w = 64, h = 3;
  HostImage src(CL_MEM_OBJECT_IMAGE2D, CL_RGBA, CL_UNORM_INT8, 4, w, h);
  HostImage dst(CL_MEM_OBJECT_IMAGE2D, CL_RGBA, CL_FLOAT, 16, w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 4; ++c) src.texel<uint8_t>(x, y)[c] = uint8_t(x + y * 64 + c);
  const void* args[] = {&src.pointer, &dst.pointer, nullptr};
  const size_t local_sizes[] = {0, 0, 16 * 16};
  exe->run("mirror", range(w, h, 16, 1), args, local_sizes);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const int sx = (x / 16) * 16 + (15 - x % 16);
      for (int c = 0; c < 4; ++c)
        ASSERT_EQ(dst.texel<float>(x, y)[c],
                  float(sx + y * 64 + c) / 255.0f * 2.0f + float(x + y * 64 + c) / 255.0f)
            << x << "," << y << "," << c;
    }
  std::vector<int32_t> sizes(256, -1);
  void* ps = sizes.data();
  const void* size_args[] = {&src.pointer, &ps};
  exe->run("sizes", range(256, 1, 64, 1), size_args, nullptr);
  for (int i = 0; i < 256; ++i) ASSERT_EQ(sizes[i], i * w + h);

  HostImage rw(CL_MEM_OBJECT_IMAGE2D, CL_RGBA, CL_UNSIGNED_INT32, 16, 32, 2);
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 32; ++x)
      for (int c = 0; c < 4; ++c) rw.texel<uint32_t>(x, y)[c] = uint32_t(x * 4 + c + y * 1000);
  const void* rw_args[] = {&rw.pointer};
  rw_exe->run("copy_rw", range(32, 2, 8, 2), rw_args, nullptr);
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 32; ++x)
      for (int c = 0; c < 4; ++c)
        ASSERT_EQ(rw.texel<uint32_t>(x, y)[c], uint32_t(x * 4 + c + y * 1000 + c + 1));
}

// OpenCL C 1.2 programs (the default) see images too, with __IMAGE_SUPPORT__.
TEST(Images, OpenCLC12ProgramsAndImageSupportMacro) {
  auto exe = build_and_load(R"(
    #ifndef __IMAGE_SUPPORT__
    #error no image support
    #endif
    __constant sampler_t s = CLK_NORMALIZED_COORDS_TRUE | CLK_ADDRESS_REPEAT | CLK_FILTER_LINEAR;
    kernel void k(image2d_t img, global float4* out) {
      out[0] = read_imagef(img, s, (float2)(0.0f, 0.25f));
    })",
                            "-cl-std=CL1.2");
  ASSERT_NE(exe, nullptr);
  HostImage image(CL_MEM_OBJECT_IMAGE2D, CL_R, CL_UNORM_INT16, 2, 2, 2);
  const uint16_t v[4] = {0, 65535, 65535, 65535};  // (0,0) (1,0) / (0,1) (1,1)
  std::memcpy(image.bytes.data(), v, 8);
  float out[4];
  void* po = out;
  const void* args[] = {&image.pointer, &po};
  exe->run("k", range(1), args, nullptr);
  // x: u = 0 -> texels 1 and 0, half each; y: v = 0.5 -> texel 0 only.
  EXPECT_NEAR(out[0], 0.5f, 1e-6);
  EXPECT_EQ(out[3], 1.0f);
}

// Every image builtin clang declares, for every image type and access qualifier, links: the
// library defines each overload under the name -fdeclare-opencl-builtins makes programs call.
TEST(Images, EveryOverloadIsDefined) {
  struct Type {
    const char* name;
    const char* icoord;
    const char* fcoord;  // nullptr: no sampler reads (image1d_buffer_t)
    bool height, depth, array, dim2;
    bool depth_image = false;  // image2d_depth_t, image2d_array_depth_t: float values only
  };
  const Type types[] = {
      {"image1d_t", "int", "float", false, false, false, false},
      {"image1d_buffer_t", "int", nullptr, false, false, false, false},
      {"image1d_array_t", "int2", "float2", false, false, true, false},
      {"image2d_t", "int2", "float2", true, false, false, true},
      {"image2d_array_t", "int4", "float4", true, false, true, true},
      {"image3d_t", "int4", "float4", true, true, false, false},
      {"image2d_depth_t", "int2", "float2", true, false, false, true, true},
      {"image2d_array_depth_t", "int4", "float4", true, false, true, true, true},
  };
  std::string source = "const sampler_t s = CLK_FILTER_NEAREST;\n";
  int n = 0;
  for (const Type& t : types) {
    for (const char* access : {"read_only", "write_only", "read_write"}) {
      const std::string a = access;
      source += "kernel void k" + std::to_string(n++) + "(" + a + " " + t.name +
                " img, sampler_t arg, global int* out) {\n";
      source +=
          "  int r = get_image_width(img) + get_image_channel_data_type(img) +\n"
          "          get_image_channel_order(img);\n";
      if (t.height) source += "  r += get_image_height(img);\n";
      if (t.depth) source += "  r += get_image_depth(img) + get_image_dim(img).z;\n";
      if (t.dim2) source += "  r += get_image_dim(img).y;\n";
      if (t.array) source += "  r += get_image_array_size(img);\n";
      const std::string ic = std::string("(") + t.icoord + ")(0)";
      if (t.depth_image) {
        if (a != "write_only") source += "  r += read_imagef(img, " + ic + ");\n";
        if (a == "read_only")
          for (const char* smp : {"s", "arg"})
            source += std::string("  r += read_imagef(img, ") + smp + ", " + ic +
                      ") + read_imagef(img, " + smp + ", (" + t.fcoord + ")(0));\n";
        if (a != "read_only") source += "  write_imagef(img, " + ic + ", 0.5f);\n";
        source += "  *out = r;\n}\n";
        continue;
      }
      if (a != "write_only") {
        source += "  r += read_imagef(img, " + ic + ").x + read_imagei(img, " + ic +
                  ").x + read_imageui(img, " + ic + ").x;\n";
      }
      if (a == "read_only" && t.fcoord) {
        const std::string fc = std::string("(") + t.fcoord + ")(0)";
        for (const char* smp : {"s", "arg"})
          for (const std::string& c : {ic, fc})
            source += std::string("  r += read_imagef(img, ") + smp + ", " + c +
                      ").x + read_imagei(img, " + smp + ", " + c + ").x + read_imageui(img, " +
                      smp + ", " + c + ").x;\n";
      }
      if (a != "read_only") {
        source += "  write_imagef(img, " + ic + ", (float4)(0));\n";
        source += "  write_imagei(img, " + ic + ", (int4)(0));\n";
        source += "  write_imageui(img, " + ic + ", (uint4)(0));\n";
      }
      source += "  *out = r;\n}\n";
    }
  }
  // Linking is what is checked: -cl-opt-disable keeps the build short. Depth images need
  // cl_khr_depth_images, which the host CPU target leaves out (see DepthImages below).
  Target target = jit_test::host();
  target.extensions.push_back("cl_khr_depth_images");
  BuildOutput out = build(source, "-cl-std=CL3.0 -cl-opt-disable", target);
  EXPECT_TRUE(out.success) << out.log << source;
}

// Depth images (cl_khr_depth_images, on a target that has the extension): read_imagef returns
// the one depth value, write_imagef takes it.
TEST(Images, DepthImagesOnATargetWithTheExtension) {
  Target target = jit_test::host();
  target.extensions.push_back("cl_khr_depth_images");
  BuildOutput out = build(R"(
    kernel void k(read_only image2d_depth_t d, read_only image2d_array_depth_t a,
                  write_only image2d_depth_t w, sampler_t s, global float* out) {
      out[0] = read_imagef(d, (int2)(1, 0));
      out[1] = read_imagef(d, s, (float2)(1.0f, 0.5f));
      out[2] = read_imagef(a, (int4)(1, 0, 1, 0));
      out[3] = get_image_array_size(a) * 10 + (get_image_channel_order(d) == CLK_DEPTH);
      write_imagef(w, (int2)(1, 1), 0.25f);
    })",
                          "-cl-std=CL2.0", target);
  ASSERT_TRUE(out.success) << out.log;
  std::string error;
  auto exe = CpuExecutable::load(out.binary, target, &error);
  ASSERT_NE(exe, nullptr) << error;
  HostImage d(CL_MEM_OBJECT_IMAGE2D, CL_DEPTH, CL_FLOAT, 4, 2, 2);
  const float dv[4] = {0.5f, 0.75f, 0.1f, 0.2f};
  std::memcpy(d.bytes.data(), dv, sizeof dv);
  HostImage a(CL_MEM_OBJECT_IMAGE2D_ARRAY, CL_DEPTH, CL_UNORM_INT16, 2, 2, 1, 1, 2);
  *a.texel<uint16_t>(1, 0, 1) = 65535;
  HostImage w(CL_MEM_OBJECT_IMAGE2D, CL_DEPTH, CL_UNORM_INT16, 2, 2, 2);
  uint64_t linear_edge = 0x20 | 2;  // CLK_FILTER_LINEAR | CLK_ADDRESS_CLAMP_TO_EDGE
  float results[4] = {-1, -1, -1, -1};
  void* pr = results;
  const void* args[] = {&d.pointer, &a.pointer, &w.pointer, &linear_edge, &pr};
  exe->run("k", range(1), args, nullptr);
  EXPECT_EQ(results[0], 0.75f);
  EXPECT_EQ(results[1], 0.625f);  // halfway between texels (0, 0) and (1, 0)
  EXPECT_EQ(results[2], 1.0f);
  EXPECT_EQ(results[3], 21.0f);
  EXPECT_EQ(*w.texel<uint16_t>(1, 1), 16384);  // 16383.75
  EXPECT_EQ(*w.texel<uint16_t>(0, 1), 0);
}

}  // namespace
}  // namespace manifold::compiler
