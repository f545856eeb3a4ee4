// Image and sampler builtins (OpenCL C 3.0 section 6.15.15) over the ManifoldImage descriptor of
// compiler/image_abi.h. An image value is, in LLVM IR, a pointer to its descriptor and a sampler
// value a pointer whose integer value is the CLK_* bits: image_glue.ll turns them into what this
// file works with (and defines __translate_sampler_initializer). Descriptor fields are read with
// invariant loads, so the work-group pass's loops keep them out of the work-item loop.
//
// Coordinates are handled as (x, y, z) plus a layer: a 1D array's layer is its y coordinate, a
// 2D array's its z; a layer lies slice_pitch bytes from the next, like a 3D slice. Reads out of
// range without a sampler (undefined in the spec) read the nearest texel; writes out of range
// (undefined too) write nothing.

#include "image_texels.h"

// ---- Coordinates. An image's extent as (width, height, depth) and its layer count; dims is
// 1, 2 or 3 and `layered` says whether it is an array (constants after inlining).

INL int4 extent(Img im, int dims) {
  return (int4)(IM_WIDTH(im), dims >= 2 ? IM_HEIGHT(im) : 1, dims == 3 ? IM_DEPTH(im) : 1, 1);
}

// (x, y, z) of a texel from integer coordinates: spatial ones, then the layer.
INL int4 texel_coords(int4 coord, int dims, int layered) {
  int4 t = (int4)(coord.x, dims >= 2 ? coord.y : 0, dims == 3 ? coord.z : 0, 0);
  if (layered) t.z = dims == 1 ? coord.y : coord.z;
  return t;
}

INL int clamp_layer(Img im, int layer) { return clamp(layer, 0, IM_LAYERS(im) - 1); }

INL float4 border_f(Img im) {
  switch (IM_ORDER(im)) {
    case CLK_A:
    case CLK_INTENSITY:
    case CLK_RA:
    case CLK_ARGB:
    case CLK_BGRA:
    case CLK_RGBA:
    case CLK_ABGR:
    case CLK_sRGBA:
    case CLK_sBGRA:
      return (float4)(0.0f);
    default:
      return (float4)(0.0f, 0.0f, 0.0f, 1.0f);
  }
}

INL int4 border_i(Img im) {
  const float4 b = border_f(im);
  return (int4)(0, 0, 0, (int)b.w);
}

// The texel at t (x, y, z/layer), or the border colour when t lies outside the image (only
// CLK_ADDRESS_CLAMP produces such coordinates).
INL float4 fetch_f(Img im, int4 t, int4 size) {
  if ((uint)t.x >= (uint)size.x || (uint)t.y >= (uint)size.y || (uint)t.z >= (uint)size.z)
    return border_f(im);
  return decode_f(im, texel_address(im, t.x, t.y, t.z));
}

INL int4 fetch_i(Img im, int4 t, int4 size) {
  if ((uint)t.x >= (uint)size.x || (uint)t.y >= (uint)size.y || (uint)t.z >= (uint)size.z)
    return border_i(im);
  return decode_i(im, texel_address(im, t.x, t.y, t.z));
}

// floor(u) as an int, kept within [-2, size + 1] (NaN -> -2) so the conversion is defined and
// floor(u) + 1 still lies outside when floor(u) does.
INL int index_of(float u, int size) { return (int)fmin(fmax(floor(u), -2.0f), (float)(size + 1)); }

// Nearest texel index along one axis (OpenCL C 3.0 section 8.2, CLK_FILTER_NEAREST).
INL int nearest_index(float s, int size, uint sampler) {
  const uint address = sampler & MANIFOLD_SAMPLER_ADDRESS_MASK;
  const float fsize = (float)size;
  if (address == CLK_ADDRESS_REPEAT) {
    const int i = index_of((s - floor(s)) * fsize, size);
    return clamp(i > size - 1 ? i - size : i, 0, size - 1);
  }
  if (address == CLK_ADDRESS_MIRRORED_REPEAT) {
    const float mirrored = fabs(s - 2.0f * rint(0.5f * s));
    return clamp(index_of(mirrored * fsize, size), 0, size - 1);
  }
  const float u = (sampler & MANIFOLD_SAMPLER_NORMALIZED_COORDS) ? s * fsize : s;
  const int i = index_of(u, size);
  // CLAMP keeps -1 and size (the border); NONE (undefined out of range) clamps like
  // CLAMP_TO_EDGE.
  return address == CLK_ADDRESS_CLAMP ? clamp(i, -1, size) : clamp(i, 0, size - 1);
}

// The two texels around s along one axis and the weight of the second (CLK_FILTER_LINEAR).
INL float linear_indices(float s, int size, uint sampler, int* i0, int* i1) {
  const uint address = sampler & MANIFOLD_SAMPLER_ADDRESS_MASK;
  const float fsize = (float)size;
  float u;
  if (address == CLK_ADDRESS_REPEAT) {
    u = (s - floor(s)) * fsize;
  } else if (address == CLK_ADDRESS_MIRRORED_REPEAT) {
    u = fabs(s - 2.0f * rint(0.5f * s)) * fsize;
  } else {
    u = (sampler & MANIFOLD_SAMPLER_NORMALIZED_COORDS) ? s * fsize : s;
  }
  const float shifted = u - 0.5f;
  int a = index_of(shifted, size);
  int b = a + 1;
  if (address == CLK_ADDRESS_REPEAT) {
    if (a < 0) a += size;
    if (b > size - 1) b -= size;
    a = clamp(a, 0, size - 1);
    b = clamp(b, 0, size - 1);
  } else if (address == CLK_ADDRESS_CLAMP) {
    a = clamp(a, -1, size);
    b = clamp(b, -1, size);
  } else {
    a = clamp(a, 0, size - 1);
    b = clamp(b, 0, size - 1);
  }
  *i0 = a;
  *i1 = b;
  return shifted - floor(shifted);
}

// ---- Reads and writes, generic over the image type.

INL int4 clamp_texel(Img im, int4 t, int dims, int layered) {
  const int4 size = extent(im, dims);
  t.x = clamp(t.x, 0, size.x - 1);
  if (dims >= 2) t.y = clamp(t.y, 0, size.y - 1);
  if (dims == 3) t.z = clamp(t.z, 0, size.z - 1);
  if (layered) t.z = clamp_layer(im, t.z);
  return t;
}

// Without a sampler (and with a sampler and integer coordinates, where the sampler only
// decides what lies outside the image).
INL float4 read_f(Img im, int4 coord, int dims, int layered) {
  const int4 t = clamp_texel(im, texel_coords(coord, dims, layered), dims, layered);
  return decode_f(im, texel_address(im, t.x, t.y, t.z));
}

INL int4 read_i(Img im, int4 coord, int dims, int layered) {
  const int4 t = clamp_texel(im, texel_coords(coord, dims, layered), dims, layered);
  return decode_i(im, texel_address(im, t.x, t.y, t.z));
}

INL int4 layer_extent(Img im, int dims, int layered) {
  int4 size = extent(im, dims);
  if (layered) size.z = IM_LAYERS(im);
  return size;
}

INL float4 read_f_int_sampled(Img im, uint sampler, int4 coord, int dims, int layered) {
  if ((sampler & MANIFOLD_SAMPLER_ADDRESS_MASK) != CLK_ADDRESS_CLAMP)
    return read_f(im, coord, dims, layered);
  int4 t = texel_coords(coord, dims, layered);
  if (layered) t.z = clamp_layer(im, t.z);
  return fetch_f(im, t, layer_extent(im, dims, layered));
}

INL int4 read_i_int_sampled(Img im, uint sampler, int4 coord, int dims, int layered) {
  if ((sampler & MANIFOLD_SAMPLER_ADDRESS_MASK) != CLK_ADDRESS_CLAMP)
    return read_i(im, coord, dims, layered);
  int4 t = texel_coords(coord, dims, layered);
  if (layered) t.z = clamp_layer(im, t.z);
  return fetch_i(im, t, layer_extent(im, dims, layered));
}

// Nearest texel for float coordinates (x, y, z/layer).
INL int4 nearest_texel(Img im, uint sampler, float4 coord, int dims, int layered) {
  const int4 size = extent(im, dims);
  int4 t = (int4)(nearest_index(coord.x, size.x, sampler), 0, 0, 0);
  if (dims >= 2) t.y = nearest_index(coord.y, size.y, sampler);
  if (dims == 3) t.z = nearest_index(coord.z, size.z, sampler);
  if (layered) {
    const float layer = dims == 1 ? coord.y : coord.z;
    t.z = clamp_layer(im, (int)fmin(fmax(rint(layer), -1.0f), (float)IM_LAYERS(im)));
  }
  return t;
}

INL float4 read_f_float_sampled(Img im, uint sampler, float4 coord, int dims, int layered) {
  const int4 size = layer_extent(im, dims, layered);
  if ((sampler & MANIFOLD_SAMPLER_FILTER_MASK) != CLK_FILTER_LINEAR)
    return fetch_f(im, nearest_texel(im, sampler, coord, dims, layered), size);
  const int4 space = extent(im, dims);
  int x0, x1, y0 = 0, y1 = 0, z0 = 0, z1 = 0;
  const float a = linear_indices(coord.x, space.x, sampler, &x0, &x1);
  float b = 0.0f, c = 0.0f;
  if (dims >= 2) b = linear_indices(coord.y, space.y, sampler, &y0, &y1);
  if (dims == 3) c = linear_indices(coord.z, space.z, sampler, &z0, &z1);
  if (layered) {
    const float layer = dims == 1 ? coord.y : coord.z;
    z0 = z1 = clamp_layer(im, (int)fmin(fmax(rint(layer), -1.0f), (float)IM_LAYERS(im)));
  }
  if (dims == 1) {
    return (1.0f - a) * fetch_f(im, (int4)(x0, 0, z0, 0), size) +
           a * fetch_f(im, (int4)(x1, 0, z0, 0), size);
  }
  const float4 t00 = fetch_f(im, (int4)(x0, y0, z0, 0), size);
  const float4 t10 = fetch_f(im, (int4)(x1, y0, z0, 0), size);
  const float4 t01 = fetch_f(im, (int4)(x0, y1, z0, 0), size);
  const float4 t11 = fetch_f(im, (int4)(x1, y1, z0, 0), size);
  const float4 front =
      (1.0f - a) * (1.0f - b) * t00 + a * (1.0f - b) * t10 + (1.0f - a) * b * t01 + a * b * t11;
  if (dims == 2) return front;
  const float4 u00 = fetch_f(im, (int4)(x0, y0, z1, 0), size);
  const float4 u10 = fetch_f(im, (int4)(x1, y0, z1, 0), size);
  const float4 u01 = fetch_f(im, (int4)(x0, y1, z1, 0), size);
  const float4 u11 = fetch_f(im, (int4)(x1, y1, z1, 0), size);
  const float4 back =
      (1.0f - a) * (1.0f - b) * u00 + a * (1.0f - b) * u10 + (1.0f - a) * b * u01 + a * b * u11;
  return (1.0f - c) * front + c * back;
}

// read_imagei/ui with float coordinates: always nearest (linear is undefined for them).
INL int4 read_i_float_sampled(Img im, uint sampler, float4 coord, int dims, int layered) {
  return fetch_i(im, nearest_texel(im, sampler, coord, dims, layered),
                 layer_extent(im, dims, layered));
}

INL bool texel_in_range(Img im, int4 t, int dims, int layered) {
  const int4 size = layer_extent(im, dims, layered);
  return (uint)t.x < (uint)size.x && (uint)t.y < (uint)size.y && (uint)t.z < (uint)size.z;
}

INL void write_f(Img im, int4 coord, int dims, int layered, float4 color) {
  const int4 t = texel_coords(coord, dims, layered);
  if (texel_in_range(im, t, dims, layered)) encode_f(im, texel_address(im, t.x, t.y, t.z), color);
}

INL void write_i(Img im, int4 coord, int dims, int layered, int4 color) {
  const int4 t = texel_coords(coord, dims, layered);
  if (texel_in_range(im, t, dims, layered)) encode_i(im, texel_address(im, t.x, t.y, t.z), color);
}

INL void write_ui(Img im, int4 coord, int dims, int layered, uint4 color) {
  const int4 t = texel_coords(coord, dims, layered);
  if (texel_in_range(im, t, dims, layered)) encode_ui(im, texel_address(im, t.x, t.y, t.z), color);
}

// ---- The builtins. Coordinates widen to 4 components. read_imageh and write_imageh
// (cl_khr_fp16) are read_imagef and write_imagef with the color converted: half to float is
// exact, float to half rounds to nearest even.
INL int4 widen_i1(int c) { return (int4)(c, 0, 0, 0); }
INL int4 widen_i2(int2 c) { return (int4)(c, 0, 0); }
INL int4 widen_i4(int4 c) { return c; }
INL float4 widen_f1(float c) { return (float4)(c, 0.0f, 0.0f, 0.0f); }
INL float4 widen_f2(float2 c) { return (float4)(c, 0.0f, 0.0f); }
INL float4 widen_f4(float4 c) { return c; }

// TYPE, integer and float coordinate types (their widths), dims, layered.
#define SAMPLED_READS(TYPE, IC, IN, FC, FN, DIMS, LAYERED)                                     \
  OVL float4 read_imagef(read_only TYPE image, sampler_t sampler, IC coord) {                  \
    return read_f_int_sampled(__manifold_image(image), __manifold_sampler(sampler),            \
                              widen_i##IN(coord), DIMS, LAYERED);                              \
  }                                                                                            \
  OVL float4 read_imagef(read_only TYPE image, sampler_t sampler, FC coord) {                  \
    return read_f_float_sampled(__manifold_image(image), __manifold_sampler(sampler),          \
                                widen_f##FN(coord), DIMS, LAYERED);                            \
  }                                                                                            \
  OVL int4 read_imagei(read_only TYPE image, sampler_t sampler, IC coord) {                    \
    return read_i_int_sampled(__manifold_image(image), __manifold_sampler(sampler),            \
                              widen_i##IN(coord), DIMS, LAYERED);                              \
  }                                                                                            \
  OVL int4 read_imagei(read_only TYPE image, sampler_t sampler, FC coord) {                    \
    return read_i_float_sampled(__manifold_image(image), __manifold_sampler(sampler),          \
                                widen_f##FN(coord), DIMS, LAYERED);                            \
  }                                                                                            \
  OVL uint4 read_imageui(read_only TYPE image, sampler_t sampler, IC coord) {                  \
    return as_uint4(read_i_int_sampled(__manifold_image(image), __manifold_sampler(sampler),   \
                                       widen_i##IN(coord), DIMS, LAYERED));                    \
  }                                                                                            \
  OVL uint4 read_imageui(read_only TYPE image, sampler_t sampler, FC coord) {                  \
    return as_uint4(read_i_float_sampled(__manifold_image(image), __manifold_sampler(sampler), \
                                         widen_f##FN(coord), DIMS, LAYERED));                  \
  }                                                                                            \
  OVL half4 read_imageh(read_only TYPE image, sampler_t sampler, IC coord) {                   \
    return __builtin_convertvector(read_imagef(image, sampler, coord), half4);                 \
  }                                                                                            \
  OVL half4 read_imageh(read_only TYPE image, sampler_t sampler, FC coord) {                   \
    return __builtin_convertvector(read_imagef(image, sampler, coord), half4);                 \
  }

#define PLAIN_READS(ACCESS, TYPE, IC, IN, DIMS, LAYERED)                                 \
  OVL float4 read_imagef(ACCESS TYPE image, IC coord) {                                  \
    return read_f(__manifold_image(image), widen_i##IN(coord), DIMS, LAYERED);           \
  }                                                                                      \
  OVL int4 read_imagei(ACCESS TYPE image, IC coord) {                                    \
    return read_i(__manifold_image(image), widen_i##IN(coord), DIMS, LAYERED);           \
  }                                                                                      \
  OVL uint4 read_imageui(ACCESS TYPE image, IC coord) {                                  \
    return as_uint4(read_i(__manifold_image(image), widen_i##IN(coord), DIMS, LAYERED)); \
  }                                                                                      \
  OVL half4 read_imageh(ACCESS TYPE image, IC coord) {                                   \
    return __builtin_convertvector(read_imagef(image, coord), half4);                    \
  }

#define WRITES(ACCESS, TYPE, IC, IN, DIMS, LAYERED)                              \
  OVL void write_imagef(ACCESS TYPE image, IC coord, float4 color) {             \
    write_f(__manifold_image(image), widen_i##IN(coord), DIMS, LAYERED, color);  \
  }                                                                              \
  OVL void write_imagei(ACCESS TYPE image, IC coord, int4 color) {               \
    write_i(__manifold_image(image), widen_i##IN(coord), DIMS, LAYERED, color);  \
  }                                                                              \
  OVL void write_imageui(ACCESS TYPE image, IC coord, uint4 color) {             \
    write_ui(__manifold_image(image), widen_i##IN(coord), DIMS, LAYERED, color); \
  }                                                                              \
  OVL void write_imageh(ACCESS TYPE image, IC coord, half4 color) {              \
    write_imagef(image, coord, __builtin_convertvector(color, float4));          \
  }

#define QUERIES_COMMON(ACCESS, TYPE)                                                        \
  OVLC int get_image_width(ACCESS TYPE image) { return IM_WIDTH(__manifold_image(image)); } \
  OVLC int get_image_channel_data_type(ACCESS TYPE image) {                                 \
    return (int)IM_TYPE(__manifold_image(image));                                           \
  }                                                                                         \
  OVLC int get_image_channel_order(ACCESS TYPE image) {                                     \
    return (int)IM_ORDER(__manifold_image(image));                                          \
  }
#define QUERIES_HEIGHT(ACCESS, TYPE) \
  OVLC int get_image_height(ACCESS TYPE image) { return IM_HEIGHT(__manifold_image(image)); }
#define QUERIES_ARRAY(ACCESS, TYPE)                              \
  OVLC size_t get_image_array_size(ACCESS TYPE image) {          \
    return (size_t)FIELD32(__manifold_image(image), array_size); \
  }
#define QUERIES_DIM2(ACCESS, TYPE)              \
  OVLC int2 get_image_dim(ACCESS TYPE image) {  \
    Img im = __manifold_image(image);           \
    return (int2)(IM_WIDTH(im), IM_HEIGHT(im)); \
  }

#define ALL_FOR_ACCESS(ACCESS)                                                                   \
  QUERIES_COMMON(ACCESS, image1d_t)                                                              \
  QUERIES_COMMON(ACCESS, image1d_buffer_t)                                                       \
  QUERIES_COMMON(ACCESS, image1d_array_t)                                                        \
  QUERIES_COMMON(ACCESS, image2d_t)                                                              \
  QUERIES_COMMON(ACCESS, image2d_array_t)                                                        \
  QUERIES_COMMON(ACCESS, image3d_t)                                                              \
  QUERIES_HEIGHT(ACCESS, image2d_t)                                                              \
  QUERIES_HEIGHT(ACCESS, image2d_array_t)                                                        \
  QUERIES_HEIGHT(ACCESS, image3d_t)                                                              \
  QUERIES_ARRAY(ACCESS, image1d_array_t)                                                         \
  QUERIES_ARRAY(ACCESS, image2d_array_t)                                                         \
  QUERIES_DIM2(ACCESS, image2d_t)                                                                \
  QUERIES_DIM2(ACCESS, image2d_array_t)                                                          \
  OVLC int get_image_depth(ACCESS image3d_t image) { return IM_DEPTH(__manifold_image(image)); } \
  OVLC int4 get_image_dim(ACCESS image3d_t image) {                                              \
    Img im = __manifold_image(image);                                                            \
    return (int4)(IM_WIDTH(im), IM_HEIGHT(im), IM_DEPTH(im), 0);                                 \
  }

ALL_FOR_ACCESS(read_only)
ALL_FOR_ACCESS(write_only)
ALL_FOR_ACCESS(read_write)

SAMPLED_READS(image1d_t, int, 1, float, 1, 1, 0)
SAMPLED_READS(image1d_array_t, int2, 2, float2, 2, 1, 1)
SAMPLED_READS(image2d_t, int2, 2, float2, 2, 2, 0)
SAMPLED_READS(image2d_array_t, int4, 4, float4, 4, 2, 1)
SAMPLED_READS(image3d_t, int4, 4, float4, 4, 3, 0)

#define PLAIN_READS_ALL(ACCESS)                       \
  PLAIN_READS(ACCESS, image1d_t, int, 1, 1, 0)        \
  PLAIN_READS(ACCESS, image1d_buffer_t, int, 1, 1, 0) \
  PLAIN_READS(ACCESS, image1d_array_t, int2, 2, 1, 1) \
  PLAIN_READS(ACCESS, image2d_t, int2, 2, 2, 0)       \
  PLAIN_READS(ACCESS, image2d_array_t, int4, 4, 2, 1) \
  PLAIN_READS(ACCESS, image3d_t, int4, 4, 3, 0)
PLAIN_READS_ALL(read_only)
PLAIN_READS_ALL(read_write)

#define WRITES_ALL(ACCESS)                       \
  WRITES(ACCESS, image1d_t, int, 1, 1, 0)        \
  WRITES(ACCESS, image1d_buffer_t, int, 1, 1, 0) \
  WRITES(ACCESS, image1d_array_t, int2, 2, 1, 1) \
  WRITES(ACCESS, image2d_t, int2, 2, 2, 0)       \
  WRITES(ACCESS, image2d_array_t, int4, 4, 2, 1) \
  WRITES(ACCESS, image3d_t, int4, 4, 3, 0)
WRITES_ALL(write_only)
WRITES_ALL(read_write)

// ---- Depth images (cl_khr_depth_images; CL_DEPTH with CL_UNORM_INT16 or CL_FLOAT): one float.
#define DEPTH_READS(ACCESS, TYPE, IC, IN, LAYERED)                            \
  OVL float read_imagef(ACCESS TYPE image, IC coord) {                        \
    return read_f(__manifold_image(image), widen_i##IN(coord), 2, LAYERED).x; \
  }
#define DEPTH_SAMPLED_READS(TYPE, IC, IN, FC, FN, LAYERED)                            \
  OVL float read_imagef(read_only TYPE image, sampler_t sampler, IC coord) {          \
    return read_f_int_sampled(__manifold_image(image), __manifold_sampler(sampler),   \
                              widen_i##IN(coord), 2, LAYERED)                         \
        .x;                                                                           \
  }                                                                                   \
  OVL float read_imagef(read_only TYPE image, sampler_t sampler, FC coord) {          \
    return read_f_float_sampled(__manifold_image(image), __manifold_sampler(sampler), \
                                widen_f##FN(coord), 2, LAYERED)                       \
        .x;                                                                           \
  }
#define DEPTH_WRITES(ACCESS, TYPE, IC, IN, LAYERED)                  \
  OVL void write_imagef(ACCESS TYPE image, IC coord, float depth) {  \
    write_f(__manifold_image(image), widen_i##IN(coord), 2, LAYERED, \
            (float4)(depth, 0.0f, 0.0f, 1.0f));                      \
  }
#define DEPTH_ALL_FOR_ACCESS(ACCESS)            \
  QUERIES_COMMON(ACCESS, image2d_depth_t)       \
  QUERIES_COMMON(ACCESS, image2d_array_depth_t) \
  QUERIES_HEIGHT(ACCESS, image2d_depth_t)       \
  QUERIES_HEIGHT(ACCESS, image2d_array_depth_t) \
  QUERIES_DIM2(ACCESS, image2d_depth_t)         \
  QUERIES_DIM2(ACCESS, image2d_array_depth_t)   \
  QUERIES_ARRAY(ACCESS, image2d_array_depth_t)
DEPTH_ALL_FOR_ACCESS(read_only)
DEPTH_ALL_FOR_ACCESS(write_only)
DEPTH_ALL_FOR_ACCESS(read_write)
DEPTH_SAMPLED_READS(image2d_depth_t, int2, 2, float2, 2, 0)
DEPTH_SAMPLED_READS(image2d_array_depth_t, int4, 4, float4, 4, 1)
DEPTH_READS(read_only, image2d_depth_t, int2, 2, 0)
DEPTH_READS(read_only, image2d_array_depth_t, int4, 4, 1)
DEPTH_READS(read_write, image2d_depth_t, int2, 2, 0)
DEPTH_READS(read_write, image2d_array_depth_t, int4, 4, 1)
DEPTH_WRITES(write_only, image2d_depth_t, int2, 2, 0)
DEPTH_WRITES(write_only, image2d_array_depth_t, int4, 4, 1)
DEPTH_WRITES(read_write, image2d_depth_t, int2, 2, 0)
DEPTH_WRITES(read_write, image2d_array_depth_t, int4, 4, 1)
