// Images on the host: the fill colour of clEnqueueFillImage becomes one pixel here, with the
// conversion rules of the OpenCL C write_image* builtins (round to nearest even, saturation), and
// an image becomes the descriptor kernels receive (compiler/image_abi.h).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/memory.h"

namespace manifold {
namespace {

// Round to nearest even and saturate to [lo, hi]; NaN becomes 0.
int64_t round_sat(float f, int64_t lo, int64_t hi) {
  if (std::isnan(f)) return 0;
  if (f <= static_cast<float>(lo)) return lo;
  if (f >= static_cast<float>(hi)) return hi;
  return static_cast<int64_t>(std::nearbyint(f));  // the default rounding mode: to nearest even
}

uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof(x));
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  const uint32_t abs = x & 0x7fffffff;
  if (abs > 0x7f800000) return sign | 0x7e00 | static_cast<uint16_t>((abs >> 13) & 0x3ff);  // NaN
  if (abs >= 0x477ff000) return sign | 0x7c00;  // rounds to a value above 65504: infinity
  if (abs >= 0x38800000) {                      // normal half
    const uint32_t mant = abs & 0x7fffff;
    const uint32_t exp = (abs >> 23) - 127 + 15;
    uint32_t h = (exp << 10) | (mant >> 13);
    const uint32_t rest = mant & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) ++h;  // carries into the exponent correctly
    return sign | static_cast<uint16_t>(h);
  }
  if (abs < 0x33000000) return sign;  // below half the smallest subnormal: zero
  // Subnormal half: value = m * 2^-24.
  const uint32_t exp = abs >> 23;
  const uint32_t mant = (abs & 0x7fffff) | 0x800000;
  const uint32_t shift = 126 - exp;  // 14 .. 24 for this range
  uint32_t h = mant >> shift;
  const uint32_t rest = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
  if (rest > half || (rest == half && (h & 1))) ++h;
  return sign | static_cast<uint16_t>(h);
}

template <class T>
void store(std::byte* out, size_t index, T value) {
  std::memcpy(out + index * sizeof(T), &value, sizeof(T));
}

}  // namespace

bool image_pack_color(const ImageInfo& image, const void* color, std::byte* pixel) {
  const cl_channel_order order = image.format.image_channel_order;
  const cl_channel_type type = image.format.image_channel_data_type;
  // The colour's components in the order the channels are stored (indices into r, g, b, a).
  int map[4] = {0, 1, 2, 3};
  cl_uint n = image.num_channels;
  switch (order) {
    case CL_A:
      map[0] = 3;
      break;
    case CL_RA:
      map[1] = 3;
      break;
    case CL_BGRA:
    case CL_sBGRA:
      map[0] = 2;
      map[2] = 0;
      break;
    case CL_ARGB:
      map[0] = 3;
      map[1] = 0;
      map[2] = 1;
      map[3] = 2;
      break;
    case CL_ABGR:
      map[0] = 3;
      map[1] = 2;
      map[2] = 1;
      map[3] = 0;
      break;
    default:
      break;  // R, RG, RGB(x), RGBA, INTENSITY and LUMINANCE (r), Rx, RGx, DEPTH
  }
  float f[4];
  int32_t si[4];
  uint32_t ui[4];
  std::memcpy(f, color, sizeof(f));
  std::memcpy(si, color, sizeof(si));
  std::memcpy(ui, color, sizeof(ui));
  switch (type) {
    case CL_UNORM_SHORT_565:
    case CL_UNORM_SHORT_555:
    case CL_UNORM_INT_101010: {
      const float r = f[0], g = f[1], b = f[2];
      if (type == CL_UNORM_SHORT_565) {
        store<uint16_t>(
            pixel, 0,
            static_cast<uint16_t>(round_sat(r * 31.0f, 0, 31) << 11 |
                                  round_sat(g * 63.0f, 0, 63) << 5 | round_sat(b * 31.0f, 0, 31)));
      } else if (type == CL_UNORM_SHORT_555) {
        store<uint16_t>(
            pixel, 0,
            static_cast<uint16_t>(round_sat(r * 31.0f, 0, 31) << 10 |
                                  round_sat(g * 31.0f, 0, 31) << 5 | round_sat(b * 31.0f, 0, 31)));
      } else {
        store<uint32_t>(pixel, 0,
                        static_cast<uint32_t>(round_sat(r * 1023.0f, 0, 1023) << 20 |
                                              round_sat(g * 1023.0f, 0, 1023) << 10 |
                                              round_sat(b * 1023.0f, 0, 1023)));
      }
      return true;
    }
    case CL_UNORM_INT_101010_2:
      store<uint32_t>(pixel, 0,
                      static_cast<uint32_t>(round_sat(f[0] * 1023.0f, 0, 1023) << 22 |
                                            round_sat(f[1] * 1023.0f, 0, 1023) << 12 |
                                            round_sat(f[2] * 1023.0f, 0, 1023) << 2 |
                                            round_sat(f[3] * 3.0f, 0, 3)));
      return true;
    default:
      break;
  }
  for (cl_uint c = 0; c < n; ++c) {
    const int k = map[c];
    switch (type) {
      case CL_UNORM_INT8:
        store<uint8_t>(pixel, c, uint8_t(round_sat(f[k] * 255.0f, 0, 255)));
        break;
      case CL_UNORM_INT16:
        store<uint16_t>(pixel, c, uint16_t(round_sat(f[k] * 65535.0f, 0, 65535)));
        break;
      case CL_SNORM_INT8:
        store<int8_t>(pixel, c, int8_t(round_sat(f[k] * 127.0f, -127, 127)));
        break;
      case CL_SNORM_INT16:
        store<int16_t>(pixel, c, int16_t(round_sat(f[k] * 32767.0f, -32767, 32767)));
        break;
      case CL_HALF_FLOAT:
        store<uint16_t>(pixel, c, float_to_half(f[k]));
        break;
      case CL_FLOAT:
        store<float>(pixel, c, f[k]);
        break;
      // Unnormalized integers: the colour is an int4 or uint4, saturated to the channel type.
      case CL_SIGNED_INT8:
        store<int8_t>(pixel, c, int8_t(std::clamp<int32_t>(si[k], -128, 127)));
        break;
      case CL_SIGNED_INT16:
        store<int16_t>(pixel, c, int16_t(std::clamp<int32_t>(si[k], -32768, 32767)));
        break;
      case CL_SIGNED_INT32:
        store<int32_t>(pixel, c, si[k]);
        break;
      case CL_UNSIGNED_INT8:
        store<uint8_t>(pixel, c, uint8_t(std::min<uint32_t>(ui[k], 255)));
        break;
      case CL_UNSIGNED_INT16:
        store<uint16_t>(pixel, c, uint16_t(std::min<uint32_t>(ui[k], 65535)));
        break;
      case CL_UNSIGNED_INT32:
        store<uint32_t>(pixel, c, ui[k]);
        break;
      default:
        return false;
    }
  }
  return true;
}

ManifoldImage image_descriptor(const ImageInfo& image, uint64_t data) {
  ManifoldImage d{};
  d.data = data;
  d.row_pitch = image.row_pitch;
  d.slice_pitch = image.slice_pitch;
  d.width = static_cast<manifold_u32>(image.width);
  d.height = static_cast<manifold_u32>(image.height);
  d.depth = static_cast<manifold_u32>(image.depth);
  d.array_size = static_cast<manifold_u32>(image.array_size);
  d.image_type = image.type;
  d.channel_order = image.format.image_channel_order;
  d.channel_data_type = image.format.image_channel_data_type;
  d.element_size = static_cast<manifold_u32>(image.element_size);
  d.num_channels = image.num_channels;
  return d;
}

}  // namespace manifold
