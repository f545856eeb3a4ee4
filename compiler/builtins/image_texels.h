// Texel addresses and formats of the image builtins (image.cl): the descriptor fields of
// compiler/image_abi.h, the glue's entry points (image_glue.ll), and the encoding and decoding of
// every channel order and data type.
#pragma once
#include "../image_abi.h"
#include "common.h"

#pragma OPENCL EXTENSION cl_khr_fp16 : enable

typedef __global const ManifoldImage* Img;
#define INL static inline __attribute__((always_inline))

// ---- Glue (image_glue.ll).
#define DECLARE_IMAGE_GLUE(ACCESS, TYPE) Img OVLC __manifold_image(ACCESS TYPE image);
#define FOR_EACH_IMAGE_TYPE(M, ACCESS) \
  M(ACCESS, image1d_t)                 \
  M(ACCESS, image1d_buffer_t)          \
  M(ACCESS, image1d_array_t)           \
  M(ACCESS, image2d_t)                 \
  M(ACCESS, image2d_array_t)           \
  M(ACCESS, image3d_t)
#define FOR_EACH_DEPTH_IMAGE_TYPE(M, ACCESS) \
  M(ACCESS, image2d_depth_t)                 \
  M(ACCESS, image2d_array_depth_t)
FOR_EACH_IMAGE_TYPE(DECLARE_IMAGE_GLUE, read_only)
FOR_EACH_IMAGE_TYPE(DECLARE_IMAGE_GLUE, write_only)
FOR_EACH_IMAGE_TYPE(DECLARE_IMAGE_GLUE, read_write)
FOR_EACH_DEPTH_IMAGE_TYPE(DECLARE_IMAGE_GLUE, read_only)
FOR_EACH_DEPTH_IMAGE_TYPE(DECLARE_IMAGE_GLUE, write_only)
FOR_EACH_DEPTH_IMAGE_TYPE(DECLARE_IMAGE_GLUE, read_write)
uint OVLC __manifold_sampler(sampler_t sampler);
uint __manifold_image_u32(Img image, uint offset) __attribute__((const));
ulong __manifold_image_u64(Img image, uint offset) __attribute__((const));

#define FIELD32(im, f) __manifold_image_u32(im, (uint) __builtin_offsetof(ManifoldImage, f))
#define FIELD64(im, f) __manifold_image_u64(im, (uint) __builtin_offsetof(ManifoldImage, f))
#define IM_WIDTH(im) ((int)FIELD32(im, width))
#define IM_HEIGHT(im) ((int)FIELD32(im, height))
#define IM_DEPTH(im) ((int)FIELD32(im, depth))
#define IM_LAYERS(im) ((int)FIELD32(im, array_size))
#define IM_ORDER(im) FIELD32(im, channel_order)
#define IM_TYPE(im) FIELD32(im, channel_data_type)

// ---- Texel addresses and formats.

INL __global uchar* texel_address(Img im, int x, int y, int z) {
  return (__global uchar*)FIELD64(im, data) + (size_t)(uint)x * FIELD32(im, element_size) +
         (size_t)(uint)y * FIELD64(im, row_pitch) + (size_t)(uint)z * FIELD64(im, slice_pitch);
}

// Components stored per texel for the non-packed data types (from the element size, so sRGB's
// three bytes need no special case).
INL uint component_count(Img im, uint type) {
  const uint size = FIELD32(im, element_size);
  switch (type) {
    case CLK_SNORM_INT8:
    case CLK_UNORM_INT8:
    case CLK_SIGNED_INT8:
    case CLK_UNSIGNED_INT8:
      return size;
    case CLK_SNORM_INT16:
    case CLK_UNORM_INT16:
    case CLK_SIGNED_INT16:
    case CLK_UNSIGNED_INT16:
    case CLK_HALF_FLOAT:
      return size >> 1;
    default:
      return size >> 2;
  }
}

// N components of type T at p, widened to R4 (missing components 0).
#define DEFINE_LOAD(T, R)                                          \
  INL R##4 load_##T(__global const uchar* p, uint n) {             \
    __global const T* q = (__global const T*)p;                    \
    if (n >= 4) return convert_##R##4(vload4(0, q));               \
    if (n == 3) return (R##4)(convert_##R##3(vload3(0, q)), 0);    \
    if (n == 2) return (R##4)(convert_##R##2(vload2(0, q)), 0, 0); \
    return (R##4)((R)q[0], 0, 0, 0);                               \
  }
DEFINE_LOAD(uchar, int)
DEFINE_LOAD(char, int)
DEFINE_LOAD(ushort, int)
DEFINE_LOAD(short, int)
DEFINE_LOAD(int, int)
DEFINE_LOAD(float, float)

INL float4 load_half(__global const uchar* p, uint n) {
  __global const half* q = (__global const half*)p;
  if (n >= 4) return vload_half4(0, q);
  if (n == 3) return (float4)(vload_half3(0, q), 0.0f);
  if (n == 2) return (float4)(vload_half2(0, q), 0.0f, 0.0f);
  return (float4)(vload_half(0, q), 0.0f, 0.0f, 0.0f);
}

#define DEFINE_STORE(T, V)                                \
  INL void store_##T(__global uchar* p, uint n, V##4 v) { \
    __global T* q = (__global T*)p;                       \
    if (n >= 4)                                           \
      vstore4(v, 0, q);                                   \
    else if (n == 3)                                      \
      vstore3(v.xyz, 0, q);                               \
    else if (n == 2)                                      \
      vstore2(v.xy, 0, q);                                \
    else                                                  \
      q[0] = v.x;                                         \
  }
DEFINE_STORE(uchar, uchar)
DEFINE_STORE(char, char)
DEFINE_STORE(ushort, ushort)
DEFINE_STORE(short, short)
DEFINE_STORE(int, int)
DEFINE_STORE(float, float)

// Stored components (in storage order) -> (r, g, b, a), missing ones (0, 0, 0, 1).
#define DEFINE_TO_RGBA(V, ONE)                                   \
  INL V##4 to_rgba_##V(V##4 c, uint order) {                     \
    switch (order) {                                             \
      case CLK_R:                                                \
      case CLK_Rx:                                               \
        return (V##4)(c.x, 0, 0, ONE);                           \
      case CLK_A:                                                \
        return (V##4)(0, 0, 0, c.x);                             \
      case CLK_RG:                                               \
      case CLK_RGx:                                              \
        return (V##4)(c.x, c.y, 0, ONE);                         \
      case CLK_RA:                                               \
        return (V##4)(c.x, 0, 0, c.y);                           \
      case CLK_RGB:                                              \
      case CLK_RGBx:                                             \
      case CLK_sRGB:                                             \
      case CLK_sRGBx:                                            \
        return (V##4)(c.x, c.y, c.z, ONE);                       \
      case CLK_BGRA:                                             \
      case CLK_sBGRA:                                            \
        return c.zyxw;                                           \
      case CLK_ARGB:                                             \
        return c.yzwx;                                           \
      case CLK_ABGR:                                             \
        return c.wzyx;                                           \
      case CLK_INTENSITY:                                        \
        return c.xxxx;                                           \
      case CLK_LUMINANCE:                                        \
        return (V##4)(c.x, c.x, c.x, ONE);                       \
      default:                                                   \
        return c;                                                \
    }                                                            \
  }                                                              \
  /* (r, g, b, a) -> the components stored, in storage order. */ \
  INL V##4 from_rgba_##V(V##4 c, uint order) {                   \
    switch (order) {                                             \
      case CLK_A:                                                \
        return c.wwww;                                           \
      case CLK_RA:                                               \
        return c.xwxw;                                           \
      case CLK_BGRA:                                             \
      case CLK_sBGRA:                                            \
        return c.zyxw;                                           \
      case CLK_ARGB:                                             \
        return c.wxyz;                                           \
      case CLK_ABGR:                                             \
        return c.wzyx;                                           \
      default:                                                   \
        return c;                                                \
    }                                                            \
  }
DEFINE_TO_RGBA(float, 1.0f)
DEFINE_TO_RGBA(int, 1)

// sRGB (CL_sRGB, CL_sRGBx, CL_sRGBA, CL_sBGRA with CL_UNORM_INT8): the colour components are
// stored sRGB-encoded, alpha linearly. Decoding is exact, from a table of the 256 values
// (((c / 255 + 0.055) / 1.055)^2.4, or c / 255 / 12.92 below 0.04045, rounded to float).
__constant float srgb_to_linear[256] = {
    0.0f,           0.000303526991f, 0.000607053982f, 0.000910580973f, 0.00121410796f,
    0.00151763496f, 0.00182116195f,  0.00212468882f,  0.00242821593f,  0.0027317428f,
    0.00303526991f, 0.00334653584f,  0.00367650739f,  0.00402471703f,  0.00439144205f,
    0.00477695325f, 0.00518151652f,  0.00560539169f,  0.00604883302f,  0.00651209056f,
    0.00699541019f, 0.00749903219f,  0.00802319311f,  0.00856812578f,  0.00913405884f,
    0.00972121768f, 0.010329823f,    0.0109600937f,   0.0116122449f,   0.012286488f,
    0.0129830325f,  0.0137020834f,   0.0144438436f,   0.0152085144f,   0.0159962941f,
    0.0168073755f,  0.0176419541f,   0.01850022f,     0.0193823613f,   0.0202885624f,
    0.0212190095f,  0.0221738853f,   0.0231533665f,   0.0241576321f,   0.0251868591f,
    0.0262412224f,  0.0273208916f,   0.02842604f,     0.0295568351f,   0.0307134446f,
    0.0318960324f,  0.0331047662f,   0.0343398079f,   0.0356013142f,   0.0368894488f,
    0.0382043719f,  0.0395462364f,   0.0409151986f,   0.0423114114f,   0.043735031f,
    0.045186203f,   0.0466650873f,   0.0481718257f,   0.0497065671f,   0.0512694567f,
    0.0528606474f,  0.054480277f,    0.0561284907f,   0.0578054301f,   0.0595112368f,
    0.0612460524f,  0.0630100146f,   0.064803265f,    0.0666259378f,   0.0684781671f,
    0.0703600943f,  0.0722718537f,   0.0742135718f,   0.0761853829f,   0.078187421f,
    0.0802198201f,  0.0822827071f,   0.0843762085f,   0.0865004584f,   0.0886555836f,
    0.0908417106f,  0.0930589661f,   0.0953074694f,   0.097587347f,    0.0998987257f,
    0.102241732f,   0.104616486f,    0.107023105f,    0.10946171f,     0.111932427f,
    0.114435375f,   0.116970666f,    0.119538426f,    0.122138776f,    0.124771819f,
    0.127437681f,   0.130136475f,    0.13286832f,     0.135633335f,    0.138431609f,
    0.141263291f,   0.144128472f,    0.147027269f,    0.149959788f,    0.152926147f,
    0.155926466f,   0.158960834f,    0.162029371f,    0.165132195f,    0.168269396f,
    0.171441108f,   0.174647406f,    0.177888423f,    0.18116425f,     0.18447499f,
    0.187820777f,   0.191201687f,    0.194617838f,    0.198069319f,    0.20155625f,
    0.205078736f,   0.208636865f,    0.212230757f,    0.215860501f,    0.219526201f,
    0.223227963f,   0.226965874f,    0.230740055f,    0.23455058f,     0.238397568f,
    0.242281124f,   0.246201321f,    0.25015828f,     0.254152089f,    0.258182853f,
    0.262250662f,   0.266355604f,    0.270497799f,    0.274677306f,    0.278894275f,
    0.283148736f,   0.287440836f,    0.291770637f,    0.296138257f,    0.300543785f,
    0.304987311f,   0.309468925f,    0.313988715f,    0.318546772f,    0.323143214f,
    0.327778101f,   0.332451522f,    0.337163627f,    0.341914415f,    0.346704066f,
    0.351532608f,   0.356400132f,    0.361306787f,    0.366252601f,    0.371237695f,
    0.376262128f,   0.38132602f,     0.386429429f,    0.391572475f,    0.396755219f,
    0.401977777f,   0.407240212f,    0.412542611f,    0.417885065f,    0.423267663f,
    0.428690493f,   0.434153646f,    0.439657182f,    0.445201188f,    0.450785786f,
    0.456411034f,   0.462076992f,    0.467783809f,    0.473531485f,    0.479320168f,
    0.48514995f,    0.491020858f,    0.496932983f,    0.502886474f,    0.50888133f,
    0.514917672f,   0.520995557f,    0.527115107f,    0.533276379f,    0.539479494f,
    0.545724452f,   0.55201143f,     0.558340371f,    0.564711511f,    0.571124852f,
    0.577580452f,   0.584078431f,    0.590618849f,    0.597201765f,    0.603827357f,
    0.610495567f,   0.617206573f,    0.623960376f,    0.630757153f,    0.637596846f,
    0.644479692f,   0.651405632f,    0.658374846f,    0.665387273f,    0.672443151f,
    0.679542482f,   0.686685324f,    0.693871737f,    0.701101899f,    0.708375752f,
    0.715693474f,   0.723055124f,    0.730460763f,    0.73791039f,     0.745404184f,
    0.752942204f,   0.760524511f,    0.768151164f,    0.775822222f,    0.783537805f,
    0.791297913f,   0.799102724f,    0.806952238f,    0.814846575f,    0.822785735f,
    0.830769897f,   0.838799f,       0.846873224f,    0.854992628f,    0.863157213f,
    0.871367097f,   0.8796224f,      0.887923121f,    0.896269381f,    0.904661179f,
    0.913098633f,   0.921581864f,    0.930110872f,    0.938685715f,    0.947306514f,
    0.955973327f,   0.964686275f,    0.973445296f,    0.982250571f,    0.991102099f,
    1.0f,
};

INL bool is_srgb(uint order) {
  return order == CLK_sRGB || order == CLK_sRGBx || order == CLK_sRGBA || order == CLK_sBGRA;
}

INL float4 decode_srgb(__global const uchar* p, uint n) {
  const int4 c = load_uchar(p, n);
  return (float4)(srgb_to_linear[c.x], srgb_to_linear[c.y], srgb_to_linear[c.z],
                  (float)c.w / 255.0f);
}

INL float linear_to_srgb(float c) {
  c = fmin(fmax(c, 0.0f), 1.0f);  // NaN -> 0
  return c <= 0.0031308f ? 12.92f * c : 1.055f * pow(c, 1.0f / 2.4f) - 0.055f;
}

// The general format conversions are functions of their own, called (not inlined: see
// kOutlinedBuiltinPrefix in compiler/stages.h) from every read and write, with the common formats
// inlined before them: a kernel with many reads (a filter, trilinear reads of eight texels)
// stays small and quick to compile.
#define OUTLINED __attribute__((noinline))

// Texel at p as read_imagef returns it (normalized, half and float data types).
OUTLINED float4 __manifold_outlined_decode_f(Img im, __global const uchar* p) {
  const uint type = IM_TYPE(im);
  const uint order = IM_ORDER(im);
  if (is_srgb(order) && type == CLK_UNORM_INT8)
    return to_rgba_float(decode_srgb(p, FIELD32(im, element_size)), order);
  float4 c;
  switch (type) {
    case CLK_UNORM_SHORT_565: {
      const uint v = *(__global const ushort*)p;
      c = (float4)((float)((v >> 11) & 31) / 31.0f, (float)((v >> 5) & 63) / 63.0f,
                   (float)(v & 31) / 31.0f, 0.0f);
      break;
    }
    case CLK_UNORM_SHORT_555: {
      const uint v = *(__global const ushort*)p;
      c = (float4)((float)((v >> 10) & 31), (float)((v >> 5) & 31), (float)(v & 31), 0.0f) / 31.0f;
      break;
    }
    case CLK_UNORM_INT_101010: {
      const uint v = *(__global const uint*)p;
      c = (float4)((float)((v >> 20) & 1023), (float)((v >> 10) & 1023), (float)(v & 1023), 0.0f) /
          1023.0f;
      break;
    }
    case CLK_UNORM_INT_101010_2: {
      const uint v = *(__global const uint*)p;
      c = (float4)((float)(v >> 22) / 1023.0f, (float)((v >> 12) & 1023) / 1023.0f,
                   (float)((v >> 2) & 1023) / 1023.0f, (float)(v & 3) / 3.0f);
      break;
    }
    default: {
      const uint n = component_count(im, type);
      switch (type) {
        case CLK_UNORM_INT8:
          c = convert_float4(load_uchar(p, n)) / 255.0f;
          break;
        case CLK_SNORM_INT8:
          c = fmax(convert_float4(load_char(p, n)) / 127.0f, -1.0f);
          break;
        case CLK_UNORM_INT16:
          c = convert_float4(load_ushort(p, n)) / 65535.0f;
          break;
        case CLK_SNORM_INT16:
          c = fmax(convert_float4(load_short(p, n)) / 32767.0f, -1.0f);
          break;
        case CLK_HALF_FLOAT:
          c = load_half(p, n);
          break;
        case CLK_FLOAT:
          c = load_float(p, n);
          break;
        // Integer data types: undefined for read_imagef; the values converted.
        case CLK_SIGNED_INT8:
          c = convert_float4(load_char(p, n));
          break;
        case CLK_UNSIGNED_INT8:
          c = convert_float4(load_uchar(p, n));
          break;
        case CLK_SIGNED_INT16:
          c = convert_float4(load_short(p, n));
          break;
        case CLK_UNSIGNED_INT16:
          c = convert_float4(load_ushort(p, n));
          break;
        case CLK_SIGNED_INT32:
          c = convert_float4(load_int(p, n));
          break;
        case CLK_UNSIGNED_INT32:
          c = convert_float4(as_uint4(load_int(p, n)));
          break;
        default:
          c = 0.0f;
          break;
      }
      break;
    }
  }
  return to_rgba_float(c, order);
}

INL float4 decode_f(Img im, __global const uchar* p) {
  if (IM_ORDER(im) == CLK_RGBA) {
    const uint type = IM_TYPE(im);
    if (type == CLK_FLOAT) return vload4(0, (__global const float*)p);
    if (type == CLK_UNORM_INT8) return convert_float4(vload4(0, p)) / 255.0f;
  }
  return __manifold_outlined_decode_f(im, p);
}

// Texel at p as read_imagei / read_imageui return it (the bits of the integer components;
// other data types are undefined there and read as 0).
OUTLINED int4 __manifold_outlined_decode_i(Img im, __global const uchar* p) {
  const uint type = IM_TYPE(im);
  const uint order = IM_ORDER(im);
  const uint n = component_count(im, type);
  int4 c;
  switch (type) {
    case CLK_SIGNED_INT8:
      c = load_char(p, n);
      break;
    case CLK_UNSIGNED_INT8:
      c = load_uchar(p, n);
      break;
    case CLK_SIGNED_INT16:
      c = load_short(p, n);
      break;
    case CLK_UNSIGNED_INT16:
      c = load_ushort(p, n);
      break;
    case CLK_SIGNED_INT32:
    case CLK_UNSIGNED_INT32:
      c = load_int(p, n);
      break;
    default:
      c = 0;
      break;
  }
  return to_rgba_int(c, order);
}

INL int4 decode_i(Img im, __global const uchar* p) {
  if (IM_ORDER(im) == CLK_RGBA) {
    const uint type = IM_TYPE(im);
    if (type == CLK_SIGNED_INT32 || type == CLK_UNSIGNED_INT32)
      return vload4(0, (__global const int*)p);
    if (type == CLK_UNSIGNED_INT8) return convert_int4(vload4(0, p));
    if (type == CLK_SIGNED_INT8) return convert_int4(vload4(0, (__global const char*)p));
  }
  return __manifold_outlined_decode_i(im, p);
}

// Round to nearest even and saturate to [lo, hi] (NaN -> 0), as convert_T_sat_rte does.
INL float4 quantize(float4 v, float scale, float lo, float hi) {
  return fmin(fmax(rint(v * scale), lo), hi);
}

OUTLINED void __manifold_outlined_encode_f(Img im, __global uchar* p, float4 color) {
  const uint type = IM_TYPE(im);
  const uint order = IM_ORDER(im);
  float4 c = from_rgba_float(color, order);
  if (is_srgb(order) && type == CLK_UNORM_INT8) {
    c = (float4)(linear_to_srgb(c.x), linear_to_srgb(c.y), linear_to_srgb(c.z), c.w);
    store_uchar(p, FIELD32(im, element_size), convert_uchar4(quantize(c, 255.0f, 0.0f, 255.0f)));
    return;
  }
  switch (type) {
    case CLK_UNORM_SHORT_565: {
      const float4 top = (float4)(31.0f, 63.0f, 31.0f, 0.0f);
      const uint4 q = convert_uint4(fmin(fmax(rint(c * top), 0.0f), top));
      *(__global ushort*)p = (ushort)((q.x << 11) | (q.y << 5) | q.z);
      return;
    }
    case CLK_UNORM_SHORT_555: {
      const uint4 q = convert_uint4(quantize(c, 31.0f, 0.0f, 31.0f));
      *(__global ushort*)p = (ushort)((q.x << 10) | (q.y << 5) | q.z);
      return;
    }
    case CLK_UNORM_INT_101010: {
      const uint4 q = convert_uint4(quantize(c, 1023.0f, 0.0f, 1023.0f));
      *(__global uint*)p = (q.x << 20) | (q.y << 10) | q.z;
      return;
    }
    case CLK_UNORM_INT_101010_2: {
      const uint4 q = convert_uint4(quantize(c, 1023.0f, 0.0f, 1023.0f));
      const uint a = (uint)fmin(fmax(rint(c.w * 3.0f), 0.0f), 3.0f);
      *(__global uint*)p = (q.x << 22) | (q.y << 12) | (q.z << 2) | a;
      return;
    }
    default:
      break;
  }
  const uint n = component_count(im, type);
  switch (type) {
    case CLK_UNORM_INT8:
      store_uchar(p, n, convert_uchar4(quantize(c, 255.0f, 0.0f, 255.0f)));
      return;
    case CLK_SNORM_INT8:
      store_char(p, n, convert_char4(quantize(c, 127.0f, -128.0f, 127.0f)));
      return;
    case CLK_UNORM_INT16:
      store_ushort(p, n, convert_ushort4(quantize(c, 65535.0f, 0.0f, 65535.0f)));
      return;
    case CLK_SNORM_INT16:
      store_short(p, n, convert_short4(quantize(c, 32767.0f, -32768.0f, 32767.0f)));
      return;
    case CLK_HALF_FLOAT: {
      __global half* q = (__global half*)p;
      vstore_half_rte(c.x, 0, q);
      if (n >= 2) vstore_half_rte(c.y, 1, q);
      if (n >= 3) vstore_half_rte(c.z, 2, q);
      if (n >= 4) vstore_half_rte(c.w, 3, q);
      return;
    }
    case CLK_FLOAT:
      store_float(p, n, c);
      return;
    default:
      return;  // integer data types: undefined for write_imagef
  }
}

INL void encode_f(Img im, __global uchar* p, float4 color) {
  if (IM_ORDER(im) == CLK_RGBA) {
    const uint type = IM_TYPE(im);
    if (type == CLK_FLOAT) {
      vstore4(color, 0, (__global float*)p);
      return;
    }
    if (type == CLK_UNORM_INT8) {
      vstore4(convert_uchar4(quantize(color, 255.0f, 0.0f, 255.0f)), 0, p);
      return;
    }
  }
  __manifold_outlined_encode_f(im, p, color);
}

OUTLINED void __manifold_outlined_encode_i(Img im, __global uchar* p, int4 color) {
  const uint type = IM_TYPE(im);
  const int4 c = from_rgba_int(color, IM_ORDER(im));
  const uint n = component_count(im, type);
  switch (type) {
    case CLK_SIGNED_INT8:
      store_char(p, n, convert_char4_sat(c));
      return;
    case CLK_SIGNED_INT16:
      store_short(p, n, convert_short4_sat(c));
      return;
    case CLK_SIGNED_INT32:
      store_int(p, n, c);
      return;
    default:
      return;
  }
}

INL void encode_i(Img im, __global uchar* p, int4 color) {
  if (IM_ORDER(im) == CLK_RGBA) {
    const uint type = IM_TYPE(im);
    if (type == CLK_SIGNED_INT32) {
      vstore4(color, 0, (__global int*)p);
      return;
    }
    if (type == CLK_SIGNED_INT8) {
      vstore4(convert_char4_sat(color), 0, (__global char*)p);
      return;
    }
  }
  __manifold_outlined_encode_i(im, p, color);
}

OUTLINED void __manifold_outlined_encode_ui(Img im, __global uchar* p, uint4 color) {
  const uint type = IM_TYPE(im);
  const uint4 c = as_uint4(from_rgba_int(as_int4(color), IM_ORDER(im)));
  const uint n = component_count(im, type);
  switch (type) {
    case CLK_UNSIGNED_INT8:
      store_uchar(p, n, convert_uchar4_sat(c));
      return;
    case CLK_UNSIGNED_INT16:
      store_ushort(p, n, convert_ushort4_sat(c));
      return;
    case CLK_UNSIGNED_INT32:
      store_int(p, n, as_int4(c));
      return;
    default:
      return;
  }
}

INL void encode_ui(Img im, __global uchar* p, uint4 color) {
  if (IM_ORDER(im) == CLK_RGBA) {
    const uint type = IM_TYPE(im);
    if (type == CLK_UNSIGNED_INT32) {
      vstore4(color, 0, (__global uint*)p);
      return;
    }
    if (type == CLK_UNSIGNED_INT8) {
      vstore4(convert_uchar4_sat(color), 0, p);
      return;
    }
  }
  __manifold_outlined_encode_ui(im, p, color);
}
