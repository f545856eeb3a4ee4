// A corpus of realistic kernels, each checked against a host computation, run on every device
// of the platform under test through the public API only: the same code serves the CPU device
// and the GPU backends (the harness: device_session.h).
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>

#include "device_session.h"

namespace {

using namespace corpus;

// ---- tiled sgemm ----

const char* kTiledSgemm = R"CL(
#define TILE 16
kernel void sgemm(int M, int N, int K, global const float* A, global const float* B,
                  global float* C) {
  local float As[TILE][TILE];
  local float Bs[TILE][TILE];
  int lx = get_local_id(0), ly = get_local_id(1);
  int col = get_global_id(0), row = get_global_id(1);
  float acc = 0.0f;
  for (int t = 0; t < K; t += TILE) {
    As[ly][lx] = A[row * K + t + lx];
    Bs[ly][lx] = B[(t + ly) * N + col];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < TILE; ++k) acc += As[ly][k] * Bs[k][lx];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  C[row * N + col] = acc;
}
)CL";

TEST_F(KernelCorpus, TiledSgemm) {
  const int M = 48, N = 64, K = 80;
  const std::vector<float> a = random_floats(M * K, 1), b = random_floats(K * N, 2);
  std::vector<double> expected(M * N, 0.0);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j)
      for (int k = 0; k < K; ++k) expected[i * N + j] += double(a[i * K + k]) * b[k * N + j];
  for_each_device([&](DeviceSession& s) {
    Program program = s.build(kTiledSgemm);
    if (!program) return;
    Kernel kernel = s.kernel(program, "sgemm");
    Mem A = s.buffer(a), B = s.buffer(b), C = s.buffer(M * N * sizeof(float));
    s.set_args(kernel.get(), M, N, K, A, B, C);
    const size_t global[2] = {size_t(N), size_t(M)}, local[2] = {16, 16};
    s.run(kernel.get(), 2, global, local);
    std::vector<float> c = s.read<float>(C.get(), M * N);
    for (int i = 0; i < M * N; ++i) ASSERT_NEAR(c[i], expected[i], 1e-4 * K) << "element " << i;
  });
}

// ---- reduction: local-memory tree, one partial sum per group ----

const char* kReduction = R"CL(
kernel void reduce(global const int* in, global int* partial, local int* scratch, uint n) {
  uint lid = get_local_id(0), gid = get_global_id(0), size = get_local_size(0);
  scratch[lid] = gid < n ? in[gid] : 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint stride = size / 2; stride > 0; stride /= 2) {
    if (lid < stride) scratch[lid] += scratch[lid + stride];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) partial[get_group_id(0)] = scratch[0];
}
)CL";

TEST_F(KernelCorpus, Reduction) {
  const cl_uint n = 100000;
  const std::vector<uint32_t> raw = random_uints(n, 3, 2001);
  std::vector<int32_t> in(raw.begin(), raw.end());
  for (int32_t& v : in) v -= 1000;
  const int64_t expected = std::accumulate(in.begin(), in.end(), int64_t(0));
  for_each_device([&](DeviceSession& s) {
    Program program = s.build(kReduction);
    if (!program) return;
    Kernel kernel = s.kernel(program, "reduce");
    const size_t local = std::min<size_t>(128, s.max_work_group_size());
    const size_t groups = (n + local - 1) / local, global = groups * local;
    Mem In = s.buffer(in), Partial = s.buffer(groups * sizeof(int32_t));
    s.set_args(kernel.get(), In, Partial, DeviceSession::LocalBytes{local * sizeof(int32_t)}, n);
    s.run(kernel.get(), 1, &global, &local);
    std::vector<int32_t> partial = s.read<int32_t>(Partial.get(), groups);
    EXPECT_EQ(std::accumulate(partial.begin(), partial.end(), int64_t(0)), expected);
  });
}

// ---- prefix sum: work-group scan (Hillis-Steele, double-buffered), then the group offsets ----

const char* kPrefixSum = R"CL(
kernel void scan_groups(global const uint* in, global uint* out, global uint* group_sums,
                        local uint* a, local uint* b) {
  uint lid = get_local_id(0), size = get_local_size(0);
  a[lid] = in[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  local uint* src = a;
  local uint* dst = b;
  for (uint offset = 1; offset < size; offset *= 2) {
    dst[lid] = lid >= offset ? src[lid] + src[lid - offset] : src[lid];
    barrier(CLK_LOCAL_MEM_FENCE);
    local uint* t = src; src = dst; dst = t;
  }
  out[get_global_id(0)] = src[lid];  // inclusive scan within the group
  if (lid == size - 1) group_sums[get_group_id(0)] = src[lid];
}
kernel void add_offsets(global uint* out, global const uint* group_offsets) {
  out[get_global_id(0)] += group_offsets[get_group_id(0)];
}
)CL";

TEST_F(KernelCorpus, PrefixSum) {
  const size_t local = 64, groups = 37, n = local * groups;
  const std::vector<uint32_t> in = random_uints(n, 4, 1000);
  std::vector<uint32_t> expected(n);
  std::inclusive_scan(in.begin(), in.end(), expected.begin());
  for_each_device([&](DeviceSession& s) {
    Program program = s.build(kPrefixSum);
    if (!program) return;
    Kernel scan = s.kernel(program, "scan_groups"), add = s.kernel(program, "add_offsets");
    Mem In = s.buffer(in), Out = s.buffer(n * 4), Sums = s.buffer(groups * 4);
    const DeviceSession::LocalBytes bytes{local * 4};
    s.set_args(scan.get(), In, Out, Sums, bytes, bytes);
    s.run(scan.get(), 1, &n, &local);
    std::vector<uint32_t> sums = s.read<uint32_t>(Sums.get(), groups);
    std::vector<uint32_t> offsets(groups, 0);
    std::exclusive_scan(sums.begin(), sums.end(), offsets.begin(), 0u);
    Mem Offsets = s.buffer(offsets);
    s.set_args(add.get(), Out, Offsets);
    s.run(add.get(), 1, &n, &local);
    EXPECT_EQ(s.read<uint32_t>(Out.get(), n), expected);
  });
}

// ---- n-body: one integration step, positions tiled through local memory ----

const char* kNBody = R"CL(
kernel void nbody_step(global const float4* pos, global const float4* vel, global float4* new_pos,
                       global float4* new_vel, local float4* tile, float dt, float softening) {
  size_t i = get_global_id(0), lid = get_local_id(0), size = get_local_size(0);
  size_t n = get_global_size(0);
  float4 p = pos[i];
  float3 acc = (float3)(0.0f);
  for (size_t base = 0; base < n; base += size) {
    tile[lid] = pos[base + lid];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t j = 0; j < size; ++j) {
      float4 q = tile[j];
      float3 d = q.xyz - p.xyz;
      float inv = rsqrt(dot(d, d) + softening);
      acc += q.w * inv * inv * inv * d;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  float4 v = vel[i];
  v.xyz += acc * dt;
  p.xyz += v.xyz * dt;
  new_pos[i] = p;
  new_vel[i] = v;
}
)CL";

TEST_F(KernelCorpus, NBody) {
  const size_t n = 256, local = 32;
  const float dt = 0.01f, softening = 0.01f;
  std::vector<float> pos = random_floats(4 * n, 5), vel = random_floats(4 * n, 6, -0.1f, 0.1f);
  for (size_t i = 0; i < n; ++i) pos[4 * i + 3] = std::fabs(pos[4 * i + 3]) + 0.5f;  // mass
  std::vector<double> expected_pos(4 * n), expected_vel(4 * n);
  for (size_t i = 0; i < n; ++i) {
    double acc[3] = {0, 0, 0};
    for (size_t j = 0; j < n; ++j) {
      double d[3], d2 = softening;
      for (int k = 0; k < 3; ++k) d[k] = double(pos[4 * j + k]) - pos[4 * i + k], d2 += d[k] * d[k];
      const double inv = 1.0 / std::sqrt(d2);
      for (int k = 0; k < 3; ++k) acc[k] += pos[4 * j + 3] * inv * inv * inv * d[k];
    }
    for (int k = 0; k < 3; ++k) {
      expected_vel[4 * i + k] = vel[4 * i + k] + acc[k] * dt;
      expected_pos[4 * i + k] = pos[4 * i + k] + expected_vel[4 * i + k] * dt;
    }
  }
  for_each_device([&](DeviceSession& s) {
    Program program = s.build(kNBody);
    if (!program) return;
    Kernel kernel = s.kernel(program, "nbody_step");
    Mem Pos = s.buffer(pos), Vel = s.buffer(vel), NewPos = s.buffer(pos.size() * 4),
        NewVel = s.buffer(vel.size() * 4);
    s.set_args(kernel.get(), Pos, Vel, NewPos, NewVel,
               DeviceSession::LocalBytes{local * 4 * sizeof(float)}, dt, softening);
    s.run(kernel.get(), 1, &n, &local);
    std::vector<float> new_pos = s.read<float>(NewPos.get(), 4 * n);
    std::vector<float> new_vel = s.read<float>(NewVel.get(), 4 * n);
    for (size_t i = 0; i < n; ++i) {
      for (int k = 0; k < 3; ++k) {
        // rsqrt is allowed 2 ulp; the sum over n bodies amplifies it a little.
        const double scale = std::fabs(expected_vel[4 * i + k] - vel[4 * i + k]) + 1e-3;
        ASSERT_NEAR(new_vel[4 * i + k], expected_vel[4 * i + k], 1e-3 * scale + 1e-5) << i;
        ASSERT_NEAR(new_pos[4 * i + k], expected_pos[4 * i + k], 1e-5) << i;
      }
      EXPECT_EQ(new_pos[4 * i + 3], pos[4 * i + 3]);
    }
  });
}

// ---- bitonic sort: one launch per merge step ----

const char* kBitonic = R"CL(
kernel void bitonic_step(global uint* data, uint stage, uint pass) {
  uint i = get_global_id(0);
  uint partner = i ^ pass;
  if (partner > i) {
    bool ascending = (i & stage) == 0;
    uint a = data[i], b = data[partner];
    if ((a > b) == ascending) {
      data[i] = b;
      data[partner] = a;
    }
  }
}
)CL";

TEST_F(KernelCorpus, BitonicSort) {
  const size_t n = 4096;
  const std::vector<uint32_t> in = random_uints(n, 7, 1u << 31);
  std::vector<uint32_t> expected = in;
  std::sort(expected.begin(), expected.end());
  for_each_device([&](DeviceSession& s) {
    Program program = s.build(kBitonic);
    if (!program) return;
    Kernel kernel = s.kernel(program, "bitonic_step");
    Mem Data = s.buffer(in);
    for (cl_uint stage = 2; stage <= n; stage *= 2)
      for (cl_uint pass = stage / 2; pass > 0; pass /= 2) {
        s.set_args(kernel.get(), Data, stage, pass);
        s.run(kernel.get(), 1, &n, nullptr);  // the device picks the local size
      }
    EXPECT_EQ(s.read<uint32_t>(Data.get(), n), expected);
  });
}

// ---- histogram: local atomics per group, merged with global atomics ----

const char* kHistogram = R"CL(
#define BINS 64
kernel void histogram(global const uchar* data, uint n, global uint* bins) {
  local uint counts[BINS];
  for (uint b = get_local_id(0); b < BINS; b += get_local_size(0)) counts[b] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint i = get_global_id(0); i < n; i += get_global_size(0))
    atomic_inc(&counts[data[i] % BINS]);
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint b = get_local_id(0); b < BINS; b += get_local_size(0))
    if (counts[b]) atomic_add(&bins[b], counts[b]);
}
)CL";

TEST_F(KernelCorpus, HistogramWithAtomics) {
  const cl_uint n = 200000;
  const std::vector<uint32_t> raw = random_uints(n, 8, 256);
  const std::vector<uint8_t> data(raw.begin(), raw.end());
  std::vector<uint32_t> expected(64, 0);
  for (uint8_t v : data) ++expected[v % 64];
  for_each_device([&](DeviceSession& s) {
    Program program = s.build(kHistogram);
    if (!program) return;
    Kernel kernel = s.kernel(program, "histogram");
    Mem Data = s.buffer(data), Bins = s.buffer(std::vector<uint32_t>(64, 0));
    s.set_args(kernel.get(), Data, n, Bins);
    const size_t global = 64 * 32, local = 64;
    s.run(kernel.get(), 1, &global, &local);
    EXPECT_EQ(s.read<uint32_t>(Bins.get(), 64), expected);
  });
}

// ---- 2-D five-point stencil with a halo read from global memory ----

const char* kStencil = R"CL(
kernel void stencil(global const float* in, global float* out, int width, int height) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  float center = in[y * width + x];
  float left = x > 0 ? in[y * width + x - 1] : center;
  float right = x + 1 < width ? in[y * width + x + 1] : center;
  float up = y > 0 ? in[(y - 1) * width + x] : center;
  float down = y + 1 < height ? in[(y + 1) * width + x] : center;
  out[y * width + x] = 0.5f * center + 0.125f * (left + right + up + down);
}
)CL";

TEST_F(KernelCorpus, Stencil2D) {
  const int width = 123, height = 77;  // not multiples of any group size
  const std::vector<float> in = random_floats(width * height, 9);
  std::vector<float> expected(width * height);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      const float c = in[y * width + x];
      const float l = x > 0 ? in[y * width + x - 1] : c,
                  r = x + 1 < width ? in[y * width + x + 1] : c;
      const float u = y > 0 ? in[(y - 1) * width + x] : c,
                  d = y + 1 < height ? in[(y + 1) * width + x] : c;
      expected[y * width + x] = 0.5f * c + 0.125f * (l + r + u + d);
    }
  for_each_device([&](DeviceSession& s) {
    Program program = s.build(kStencil);
    if (!program) return;
    Kernel kernel = s.kernel(program, "stencil");
    Mem In = s.buffer(in), Out = s.buffer(in.size() * 4);
    s.set_args(kernel.get(), In, Out, width, height);
    const size_t global[2] = {128, 80}, local[2] = {16, 8};
    s.run(kernel.get(), 2, global, local);
    std::vector<float> out = s.read<float>(Out.get(), in.size());
    for (size_t i = 0; i < out.size(); ++i) ASSERT_NEAR(out[i], expected[i], 1e-6f) << i;
  });
}

// ---- matrix transpose through a padded local tile ----

const char* kTranspose = R"CL(
#define TILE 16
kernel void transpose(global const float* in, global float* out, int width, int height) {
  local float tile[TILE][TILE + 1];
  int gx = get_group_id(0) * TILE, gy = get_group_id(1) * TILE;
  int lx = get_local_id(0), ly = get_local_id(1);
  if (gx + lx < width && gy + ly < height) tile[ly][lx] = in[(gy + ly) * width + gx + lx];
  barrier(CLK_LOCAL_MEM_FENCE);
  if (gy + lx < height && gx + ly < width) out[(gx + ly) * height + gy + lx] = tile[lx][ly];
}
)CL";

TEST_F(KernelCorpus, TransposeThroughLocalMemory) {
  const int width = 100, height = 52;
  const std::vector<float> in = random_floats(width * height, 10);
  std::vector<float> expected(width * height);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) expected[x * height + y] = in[y * width + x];
  for_each_device([&](DeviceSession& s) {
    Program program = s.build(kTranspose);
    if (!program) return;
    Kernel kernel = s.kernel(program, "transpose");
    Mem In = s.buffer(in), Out = s.buffer(in.size() * 4);
    s.set_args(kernel.get(), In, Out, width, height);
    const size_t global[2] = {112, 64}, local[2] = {16, 16};
    s.run(kernel.get(), 2, global, local);
    EXPECT_EQ(s.read<float>(Out.get(), in.size()), expected);
  });
}

// ---- work-group collectives (OpenCL C 2.0+ devices that report them) ----

const char* kCollectives = R"CL(
kernel void collectives(global const int* in, global int* sums, global int* scans,
                        global int* maxima, global int* broadcasts) {
  int v = in[get_global_id(0)];
  int sum = work_group_reduce_add(v);
  scans[get_global_id(0)] = work_group_scan_exclusive_add(v);
  int mx = work_group_reduce_max(v);
  int first = work_group_broadcast(v, 0);
  if (get_local_id(0) == 0) {
    sums[get_group_id(0)] = sum;
    maxima[get_group_id(0)] = mx;
    broadcasts[get_group_id(0)] = first;
  }
}
)CL";

TEST_F(KernelCorpus, WorkGroupCollectives) {
  const size_t local = 64, groups = 9, n = local * groups;
  const std::vector<uint32_t> raw = random_uints(n, 11, 1000);
  const std::vector<int32_t> in(raw.begin(), raw.end());
  for (const DeviceUnderTest& device : devices_) {
    SCOPED_TRACE("device: " + device.name);
    cl_bool supported = CL_FALSE;
    clGetDeviceInfo(device.id, CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT, sizeof supported,
                    &supported, nullptr);
    if (!supported) continue;
    DeviceSession s(device.id);
    Program program = s.build(kCollectives, "-cl-std=CL3.0");
    if (!program) continue;
    Kernel kernel = s.kernel(program, "collectives");
    Mem In = s.buffer(in), Sums = s.buffer(groups * 4), Scans = s.buffer(n * 4),
        Maxima = s.buffer(groups * 4), Broadcasts = s.buffer(groups * 4);
    s.set_args(kernel.get(), In, Sums, Scans, Maxima, Broadcasts);
    s.run(kernel.get(), 1, &n, &local);
    std::vector<int32_t> sums = s.read<int32_t>(Sums.get(), groups),
                         scans = s.read<int32_t>(Scans.get(), n),
                         maxima = s.read<int32_t>(Maxima.get(), groups),
                         broadcasts = s.read<int32_t>(Broadcasts.get(), groups);
    for (size_t g = 0; g < groups; ++g) {
      int32_t running = 0, largest = INT32_MIN;
      for (size_t i = g * local; i < (g + 1) * local; ++i) {
        ASSERT_EQ(scans[i], running) << i;
        running += in[i];
        largest = std::max(largest, in[i]);
      }
      EXPECT_EQ(sums[g], running) << g;
      EXPECT_EQ(maxima[g], largest) << g;
      EXPECT_EQ(broadcasts[g], in[g * local]) << g;
    }
  }
}

}  // namespace

// ---- Saturating conversions of special values: NaN -> 0, infinities and out-of-range values
// clamp, each rounding mode (CTS spirv_new decorate_saturated_conversion_double_to_int found NaN
// -> INT_MIN on the H100: libclc left NaN to the hardware's conversion) ----

const char* kSaturatingConversions = R"CL(
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
kernel void saturate(global const double* d, global const float* f, global int* out) {
  size_t i = get_global_id(0);
  out[i * 8 + 0] = convert_int_sat(d[i]);
  out[i * 8 + 1] = convert_int_sat_rte(d[i]);
  out[i * 8 + 2] = convert_int_sat_rtp(d[i]);
  out[i * 8 + 3] = (int)convert_uchar_sat_rtn(f[i]);
  out[i * 8 + 4] = (int)convert_short_sat(f[i]);
  out[i * 8 + 5] = (int)convert_uint_sat(d[i]);
  long2 l = convert_long2_sat(f[i] * (float2)(1.0f, -1.0f));
  out[i * 8 + 6] = l.x == LONG_MAX ? 1 : l.x == LONG_MIN ? -1 : (int)l.x;
  out[i * 8 + 7] = l.y == LONG_MAX ? 1 : l.y == LONG_MIN ? -1 : (int)l.y;
}
)CL";

TEST_F(KernelCorpus, SaturatingConversionsOfSpecialValues) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> d = {std::nan(""), -std::nan(""), inf, -inf, 3e9, -3e9, 2.5, -2.5};
  std::vector<float> f(d.begin(), d.end());
  // Per input: int_sat, int_sat_rte, int_sat_rtp, uchar_sat_rtn, short_sat, uint_sat, long2_sat
  // of (f, -f) with LONG_MAX / LONG_MIN written as 1 / -1 (other longs truncated to int).
  const int max = INT32_MAX, min = INT32_MIN, umax = -1;  // umax: UINT_MAX read back as int
  const std::vector<int32_t> expected = {
      0, 0, 0, 0, 0, 0, 0, 0,                  // NaN
      0, 0, 0, 0, 0, 0, 0, 0,                  // -NaN
      max, max, max, 255, 32767, umax, 1, -1,  // +inf
      min, min, min, 0, -32768, 0, -1, 1,      // -inf
      // 3e9: uint 3000000000 and long 3000000000 read back as int
      max, max, max, 255, 32767, -1294967296, -1294967296, 1294967296, min, min, min, 0, -32768, 0,
      1294967296, -1294967296,      // -3e9
      2, 2, 3, 2, 2, 2, 2, -2,      // 2.5: rte -> 2, rtp -> 3, rtn -> 2
      -2, -2, -2, 0, -2, 0, -2, 2,  // -2.5: rtn -> -3 -> uchar 0
  };
  for_each_device([&](DeviceSession& s) {
    if (!s.has_extension("cl_khr_fp64")) return;
    Program program = s.build(kSaturatingConversions);
    if (!program) return;
    Kernel kernel = s.kernel(program, "saturate");
    Mem D = s.buffer(d), F = s.buffer(f), Out = s.buffer(std::vector<int32_t>(8 * d.size(), 7));
    s.set_args(kernel.get(), D, F, Out);
    const size_t global = d.size();
    s.run(kernel.get(), 1, &global, nullptr);
    EXPECT_EQ(s.read<int32_t>(Out.get(), expected.size()), expected);
  });
}

// ---- Math builtins of special values on every device: NaN, infinities, zeros and tiny or
// huge arguments (on CUDA, libclc's cosh(double) of NaN read far outside its table and faulted;
// its lgamma(float) of tiny negative arguments was inf) ----

const char* kMathOfSpecialValues = R"CL(
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
kernel void special(global const double* d, global double* out_d, global const float* f,
                    global float* out_f) {
  size_t i = get_global_id(0);
  out_d[i * 4 + 0] = cosh(d[i]);
  out_d[i * 4 + 1] = sinh(d[i]);
  out_d[i * 4 + 2] = tanh(d[i]);
  out_d[i * 4 + 3] = lgamma(d[i]);
  out_f[i * 4 + 0] = cosh(f[i]);
  out_f[i * 4 + 1] = lgamma(f[i]);
  out_f[i * 4 + 2] = exp(f[i]);
  out_f[i * 4 + 3] = erfc(f[i]);
}
// As the CTS's vector kernels: a lane of constant NaN beside the argument.
kernel void special_vectors(global const double* d, global double* out) {
  size_t i = get_global_id(0);
  const double3 s = sinh((double3)(NAN, d[i], NAN)), c = cosh((double3)(d[i], NAN, NAN));
  const double16 t = tanh((double16)(NAN, d[i], NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN,
                                     NAN, NAN, NAN, NAN));
  out[i * 4 + 0] = s.y;
  out[i * 4 + 1] = c.x;
  out[i * 4 + 2] = t.s1;
  out[i * 4 + 3] = isnan(s.x) && isnan(c.y) && isnan(t.s0) ? 1.0 : 0.0;
}
)CL";

TEST_F(KernelCorpus, MathBuiltinsOfSpecialValues) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  const std::vector<double> d = {nan, -nan, inf, -inf, 0.0, -0.0, 1e300, -8.47e-22, 3e9, 2.5};
  const std::vector<float> f(d.begin(), d.end());
  // Within the spec's bounds for these arguments (a few ulp): compared with a relative slack.
  auto near = [](double got, double want) {
    if (std::isnan(want)) return std::isnan(got);
    if (std::isinf(want) || want == 0) return got == want;
    return std::fabs(got - want) <= 1e-5 * std::fabs(want);
  };
  for_each_device([&](DeviceSession& s) {
    if (!s.has_extension("cl_khr_fp64")) return;
    Program program = s.build(kMathOfSpecialValues);
    if (!program) return;
    Kernel kernel = s.kernel(program, "special");
    const size_t n = d.size();
    Mem D = s.buffer(d), F = s.buffer(f), OutD = s.buffer(n * 4 * 8), OutF = s.buffer(n * 4 * 4);
    s.set_args(kernel.get(), D, OutD, F, OutF);
    s.run(kernel.get(), 1, &n, nullptr);
    const std::vector<double> out_d = s.read<double>(OutD.get(), n * 4);
    const std::vector<float> out_f = s.read<float>(OutF.get(), n * 4);
    for (size_t i = 0; i < n; ++i) {
      const double x = d[i];
      EXPECT_TRUE(near(out_d[i * 4 + 0], std::cosh(x))) << "cosh(" << x << ") " << out_d[i * 4];
      EXPECT_TRUE(near(out_d[i * 4 + 1], std::sinh(x))) << "sinh(" << x << ") " << out_d[i * 4 + 1];
      EXPECT_TRUE(near(out_d[i * 4 + 2], std::tanh(x))) << "tanh(" << x << ") " << out_d[i * 4 + 2];
      EXPECT_TRUE(near(out_d[i * 4 + 3], std::lgamma(x)))
          << "lgamma(" << x << ") " << out_d[i * 4 + 3];
      const float y = f[i];
      EXPECT_TRUE(near(out_f[i * 4 + 0], std::cosh(double(y))))
          << "coshf(" << y << ") " << out_f[i * 4];
      EXPECT_TRUE(near(out_f[i * 4 + 1], std::lgamma(double(y))))
          << "lgammaf(" << y << ") " << out_f[i * 4 + 1];
      // Results past float's range are +inf; below its normals 0 or the denormal.
      const double e = std::exp(double(y));
      EXPECT_TRUE(e < 0x1p-126 ? out_f[i * 4 + 2] >= 0 && out_f[i * 4 + 2] < 0x1p-126f
                               : near(out_f[i * 4 + 2], e > FLT_MAX ? inf : e))
          << "expf(" << y << ") " << out_f[i * 4 + 2];
      const double c = std::erfc(double(y));
      EXPECT_TRUE(c < 0x1p-126 ? out_f[i * 4 + 3] >= 0 && out_f[i * 4 + 3] < 0x1p-126f
                               : near(out_f[i * 4 + 3], c))
          << "erfcf(" << y << ") " << out_f[i * 4 + 3];
    }
    Kernel vectors = s.kernel(program, "special_vectors");
    Mem OutV = s.buffer(n * 4 * 8);
    s.set_args(vectors.get(), D, OutV);
    s.run(vectors.get(), 1, &n, nullptr);
    const std::vector<double> out_v = s.read<double>(OutV.get(), n * 4);
    for (size_t i = 0; i < n; ++i) {
      const double x = d[i];
      EXPECT_TRUE(near(out_v[i * 4 + 0], std::sinh(x))) << "sinh(double3 lane " << x << ")";
      EXPECT_TRUE(near(out_v[i * 4 + 1], std::cosh(x))) << "cosh(double3 lane " << x << ")";
      EXPECT_TRUE(near(out_v[i * 4 + 2], std::tanh(x))) << "tanh(double16 lane " << x << ")";
      EXPECT_EQ(out_v[i * 4 + 3], 1.0) << "the NaN lanes beside " << x;
    }
  });
}

// ---- sincos through every pointer address space and vector width, within the spec's 4 ulp of
// the exact sine and cosine and the same whichever form is called (on CUDA, libdevice's
// sincos: one argument reduction for both) ----

const char* kSincos = R"CL(
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
kernel void sincos_forms(global const float* x, global float* out, global const double* dx,
                         global double* out_d) {
  local float shared_cosine[64];
  const size_t i = get_global_id(0), n = get_global_size(0), l = get_local_id(0);
  float private_cosine;
  out[i] = sincos(x[i], &private_cosine);
  out[n + i] = private_cosine;
  out[2 * n + i] = sincos(x[i], out + 3 * n + i);
  out[4 * n + i] = sincos(x[i], shared_cosine + l);
  out[5 * n + i] = shared_cosine[l];
  // Lane 2 of a float4 and lane 9 of a float16 hold x[i].
  float4 c4;
  const float4 s4 = sincos((float4)(0.5f, -1.0f, x[i], 2.0f), &c4);
  out[6 * n + i] = s4.z;
  out[7 * n + i] = c4.z;
  float16 c16;
  float16 v16 = (float16)(x[i] + 1.0f);
  v16.s9 = x[i];
  const float16 s16 = sincos(v16, &c16);
  out[8 * n + i] = s16.s9;
  out[9 * n + i] = c16.s9;
  double cosine_d;
  out_d[i] = sincos(dx[i], &cosine_d);
  out_d[n + i] = cosine_d;
  double2 c2;
  const double2 s2 = sincos((double2)(dx[i], 0.25), &c2);
  out_d[2 * n + i] = s2.x;
  out_d[3 * n + i] = c2.x;
}
)CL";

TEST_F(KernelCorpus, SincosInEveryFormWithinFourUlp) {
  std::vector<double> d = {
      0.0, -0.0, 1e-30, 0.5,    -1.5707963267948966, 3.141592653589793, 100.25, -2047.75,
      1e6, 3e9,  1e30,  -7.5e37};
  while (d.size() < 64) d.push_back(std::ldexp(double(d.size() * 37 % 101) - 50.0, -3));
  const std::vector<float> f(d.begin(), d.end());
  const size_t n = d.size();
  // The spec's bound, in ulp of the exact result (of the float argument for floats).
  auto within_4_ulp = [](double got, long double exact, bool is_float) {
    const int exponent = std::ilogb(exact == 0 ? 1e-300L : exact);
    const long double ulp =
        std::ldexp(1.0L, std::max(exponent, is_float ? -126 : -1022) - (is_float ? 23 : 52));
    return std::fabs(got - exact) <= 4 * ulp;
  };
  for_each_device([&](DeviceSession& s) {
    if (!s.has_extension("cl_khr_fp64")) return;
    Program program = s.build(kSincos);
    if (!program) return;
    Kernel kernel = s.kernel(program, "sincos_forms");
    Mem X = s.buffer(f), Out = s.buffer(n * 10 * 4), DX = s.buffer(d), OutD = s.buffer(n * 4 * 8);
    s.set_args(kernel.get(), X, Out, DX, OutD);
    const size_t local = 16;
    s.run(kernel.get(), 1, &n, &local);
    const std::vector<float> out = s.read<float>(Out.get(), n * 10);
    const std::vector<double> out_d = s.read<double>(OutD.get(), n * 4);
    for (size_t i = 0; i < n; ++i) {
      const long double sine = std::sin((long double)f[i]), cosine = std::cos((long double)f[i]);
      EXPECT_TRUE(within_4_ulp(out[i], sine, true)) << "sin of " << f[i] << ": " << out[i];
      EXPECT_TRUE(within_4_ulp(out[n + i], cosine, true))
          << "cos of " << f[i] << ": " << out[n + i];
      for (size_t form = 1; form < 5; ++form) {
        EXPECT_EQ(out[2 * form * n + i], out[i]) << "sine, form " << form << ", x = " << f[i];
        EXPECT_EQ(out[(2 * form + 1) * n + i], out[n + i])
            << "cosine, form " << form << ", x = " << f[i];
      }
      const long double sine_d = std::sin((long double)d[i]),
                        cosine_d = std::cos((long double)d[i]);
      EXPECT_TRUE(within_4_ulp(out_d[i], sine_d, false)) << "sin of " << d[i] << ": " << out_d[i];
      EXPECT_TRUE(within_4_ulp(out_d[n + i], cosine_d, false))
          << "cos of " << d[i] << ": " << out_d[n + i];
      EXPECT_EQ(out_d[2 * n + i], out_d[i]) << "double2 sine, x = " << d[i];
      EXPECT_EQ(out_d[3 * n + i], out_d[n + i]) << "double2 cosine, x = " << d[i];
    }
  });
}

#include "half_corpus.inc"

// ---- Sub-groups (__opencl_c_subgroups and the cl_khr_subgroup_* extensions) against a host
// model. Manifold's devices cut each work-group into sub-groups of consecutive local linear ids
// (the CPU's vector width, a warp on CUDA), the last one partial; the width is what
// clGetKernelSubGroupInfo reports for the local size, so the same tests check every width.
// Kernels index their outputs by the global linear id (GID); the shapes cover partial
// sub-groups, groups smaller than a sub-group, 2D and 3D groups and non-uniform NDRanges. ----

namespace {

constexpr const char* kSubGroupPrelude = R"CL(
#define GID ((get_global_id(2) * get_global_size(1) + get_global_id(1)) * get_global_size(0) + \
             get_global_id(0))
#define ITEMS (get_global_size(0) * get_global_size(1) * get_global_size(2))
)CL";

struct Shape {
  const char* name;
  cl_uint dims;
  size_t global[3];
  size_t local[3];
  size_t items() const { return global[0] * global[1] * global[2]; }
  bool uniform() const {
    return global[0] % local[0] == 0 && global[1] % local[1] == 0 && global[2] % local[2] == 0;
  }
};

const Shape kSubGroupShapes[] = {
    {"1D 64", 1, {128, 1, 1}, {64, 1, 1}},
    {"1D 70 (partial sub-group)", 1, {140, 1, 1}, {70, 1, 1}},
    {"1D 13", 1, {39, 1, 1}, {13, 1, 1}},
    {"1D 1", 1, {3, 1, 1}, {1, 1, 1}},
    {"1D 256", 1, {512, 1, 1}, {256, 1, 1}},
    {"2D 6x5", 2, {12, 10, 1}, {6, 5, 1}},
    {"3D 3x4x5", 3, {6, 4, 5}, {3, 4, 5}},
    {"1D 100 in groups of 64 (non-uniform)", 1, {100, 1, 1}, {64, 1, 1}},
};

// A sub-group of the host model: its work-items in lane order (as GIDs), its id in its group
// and the group's number of sub-groups.
struct SubGroup {
  std::vector<size_t> lanes;
  size_t id;
  size_t count;
  size_t size() const { return lanes.size(); }
};

// The sub-groups of an NDRange for sub-groups `width` wide.
std::vector<SubGroup> sub_groups_of(const Shape& s, size_t width) {
  std::vector<SubGroup> out;
  size_t groups[3];
  for (int d = 0; d < 3; ++d) groups[d] = (s.global[d] + s.local[d] - 1) / s.local[d];
  for (size_t gz = 0; gz < groups[2]; ++gz)
    for (size_t gy = 0; gy < groups[1]; ++gy)
      for (size_t gx = 0; gx < groups[0]; ++gx) {
        const size_t g[3] = {gx, gy, gz};
        size_t size[3];
        for (int d = 0; d < 3; ++d) size[d] = std::min(s.local[d], s.global[d] - g[d] * s.local[d]);
        std::vector<size_t> group;
        for (size_t lz = 0; lz < size[2]; ++lz)
          for (size_t ly = 0; ly < size[1]; ++ly)
            for (size_t lx = 0; lx < size[0]; ++lx) {
              const size_t x = gx * s.local[0] + lx, y = gy * s.local[1] + ly,
                           z = gz * s.local[2] + lz;
              group.push_back((z * s.global[1] + y) * s.global[0] + x);
            }
        const size_t count = (group.size() + width - 1) / width;
        for (size_t id = 0; id < count; ++id)
          out.push_back(
              {std::vector<size_t>(group.begin() + id * width,
                                   group.begin() + std::min(group.size(), (id + 1) * width)),
               id, count});
      }
  return out;
}

size_t max_sub_group_size(cl_kernel kernel, cl_device_id device, const Shape& s) {
  size_t width = 0;
  EXPECT_EQ(Err(CL_SUCCESS), Err(clGetKernelSubGroupInfo(
                                 kernel, device, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE,
                                 s.dims * sizeof(size_t), s.local, sizeof width, &width, nullptr)));
  return width;
}

class SubGroups : public KernelCorpus {
 public:
  // Runs `body` on each device that reports sub-groups and every extension named, builds of
  // OpenCL C 3.0. Says which devices it passed over; skips the test when no device ran it.
  void for_each_sub_group_device(std::initializer_list<const char*> extensions,
                                 const std::function<void(DeviceSession&, cl_device_id)>& body) {
    size_t ran = 0;
    for (const DeviceUnderTest& device : devices_) {
      SCOPED_TRACE("device: " + device.name);
      std::string missing;
      if (deviceInfo<cl_uint>(device.id, CL_DEVICE_MAX_NUM_SUB_GROUPS) == 0) missing = "sub-groups";
      const std::string reported = " " + deviceString(device.id, CL_DEVICE_EXTENSIONS) + " ";
      for (const char* extension : extensions)
        if (reported.find(std::string(" ") + extension + " ") == std::string::npos)
          missing += std::string(missing.empty() ? "" : ", ") + extension;
      if (!missing.empty()) {
        std::printf("[   INFO   ] %s: not reported (%s), not run\n", device.name.c_str(),
                    missing.c_str());
        continue;
      }
      DeviceSession session(device.id);
      if (!session.ok()) continue;
      ++ran;
      body(session, device.id);
    }
    if (ran == 0) GTEST_SKIP() << "no device reports what this test needs";
  }

  // Builds `source` (after the prelude) with -cl-std=CL3.0 and `defines`.
  Program build(DeviceSession& s, const char* source, const std::string& defines = "") {
    const std::string text = std::string(kSubGroupPrelude) + source;
    return s.build(text.c_str(), ("-cl-std=CL3.0 " + defines).c_str());
  }

  // The shapes a device runs: non-uniform NDRanges only where it supports them.
  static std::vector<Shape> shapes_for(cl_device_id device) {
    std::vector<Shape> out;
    const bool non_uniform =
        deviceInfo<cl_bool>(device, CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT) == CL_TRUE;
    for (const Shape& shape : kSubGroupShapes)
      if (shape.uniform() || non_uniform) out.push_back(shape);
    return out;
  }

  static void run(DeviceSession& s, cl_kernel kernel, const Shape& shape) {
    s.run(kernel, shape.dims, shape.global, shape.local);
  }
};

// ---- work-item functions ----

const char* kSubGroupQueries = R"CL(
kernel void queries(global uint* out) {
  size_t g = GID;
  size_t linear = (get_local_id(2) * get_local_size(1) + get_local_id(1)) * get_local_size(0) +
                  get_local_id(0);
  out[6 * g + 0] = get_sub_group_id();
  out[6 * g + 1] = get_sub_group_local_id();
  out[6 * g + 2] = get_sub_group_size();
  out[6 * g + 3] = get_max_sub_group_size();
  out[6 * g + 4] = get_num_sub_groups();
  out[6 * g + 5] = get_enqueued_num_sub_groups() * 65536 + (uint)linear;
}
)CL";

TEST_F(SubGroups, WorkItemFunctions) {
  for_each_sub_group_device({}, [&](DeviceSession& s, cl_device_id device) {
    Program program = build(s, kSubGroupQueries);
    if (!program) return;
    Kernel kernel = s.kernel(program, "queries");
    for (const Shape& shape : shapes_for(device)) {
      SCOPED_TRACE(shape.name);
      const size_t width = max_sub_group_size(kernel.get(), device, shape);
      const size_t enqueued = shape.local[0] * shape.local[1] * shape.local[2];
      ASSERT_GE(width, 1u);
      ASSERT_LE(width, enqueued);
      size_t count = 0;
      ASSERT_EQ(Err(CL_SUCCESS),
                Err(clGetKernelSubGroupInfo(
                    kernel.get(), device, CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE,
                    shape.dims * sizeof(size_t), shape.local, sizeof count, &count, nullptr)));
      EXPECT_EQ(count, (enqueued + width - 1) / width);
      Mem out = s.buffer(std::vector<uint32_t>(6 * shape.items(), 0xdeadbeef));
      s.set_args(kernel.get(), out);
      run(s, kernel.get(), shape);
      const std::vector<uint32_t> got = s.read<uint32_t>(out.get(), 6 * shape.items());
      for (const SubGroup& sub_group : sub_groups_of(shape, width)) {
        for (size_t lane = 0; lane < sub_group.size(); ++lane) {
          const uint32_t* r = &got[6 * sub_group.lanes[lane]];
          SCOPED_TRACE("GID " + std::to_string(sub_group.lanes[lane]));
          EXPECT_EQ(r[0], sub_group.id);
          EXPECT_EQ(r[1], lane);
          EXPECT_EQ(r[2], sub_group.size());
          EXPECT_EQ(r[3], width);
          EXPECT_EQ(r[4], sub_group.count);
          EXPECT_EQ(r[5] >> 16, count);
          // Consecutive local linear ids, sub-group after sub-group.
          EXPECT_EQ(r[5] & 0xffff, sub_group.id * width + lane);
          if (::testing::Test::HasFailure()) return;
        }
      }
    }
  });
}

// ---- reductions, scans, broadcasts and votes (the core functions) ----

const char* kSubGroupCore = R"CL(
kernel void core(global const T* in, global T* out, global int* votes) {
  size_t g = GID, n = ITEMS;
  T x = in[g];
  out[g + 0 * n] = sub_group_reduce_add(x);
  out[g + 1 * n] = sub_group_reduce_min(x);
  out[g + 2 * n] = sub_group_reduce_max(x);
  out[g + 3 * n] = sub_group_scan_inclusive_add(x);
  out[g + 4 * n] = sub_group_scan_inclusive_min(x);
  out[g + 5 * n] = sub_group_scan_inclusive_max(x);
  out[g + 6 * n] = sub_group_scan_exclusive_add(x);
  out[g + 7 * n] = sub_group_scan_exclusive_min(x);
  out[g + 8 * n] = sub_group_scan_exclusive_max(x);
  out[g + 9 * n] = sub_group_broadcast(x, get_sub_group_id() % get_sub_group_size());
  votes[2 * g] = sub_group_all(x > (T)0) != 0;
  votes[2 * g + 1] = sub_group_any(x > (T)40) != 0;
}
)CL";

template <class T>
T lowest_of() {
  if constexpr (std::is_floating_point_v<T>) return -std::numeric_limits<T>::infinity();
  return std::numeric_limits<T>::lowest();
}
template <class T>
T highest_of() {
  if constexpr (std::is_floating_point_v<T>) return std::numeric_limits<T>::infinity();
  return std::numeric_limits<T>::max();
}

// Values whose sums stay exact: integers in [-50, 50] ([0, 100] unsigned), scaled to use the
// upper bits of 64-bit types.
template <class T>
std::vector<T> sub_group_inputs(size_t count, uint32_t seed) {
  std::mt19937 engine(seed);
  std::vector<T> out(count);
  for (T& v : out) {
    int64_t base = int64_t(engine() % 101) - (std::is_signed_v<T> ? 50 : 0);
    if constexpr (sizeof(T) == 8) base *= int64_t(1) << 33;
    v = static_cast<T>(base);
  }
  return out;
}

template <class T>
void check_core_collectives(SubGroups& test, const char* type_name, uint32_t seed) {
  SCOPED_TRACE(type_name);
  test.for_each_sub_group_device({}, [&](DeviceSession& s, cl_device_id device) {
    if (sizeof(T) == 8 && std::is_floating_point_v<T> && !s.has_extension("cl_khr_fp64")) return;
    if (sizeof(T) < 4 && !s.has_extension("cl_khr_subgroup_extended_types")) return;
    const std::string defines = std::string("-DT=") + type_name;
    Program program = test.build(s, kSubGroupCore, defines);
    if (!program) return;
    Kernel kernel = s.kernel(program, "core");
    for (const Shape& shape : SubGroups::shapes_for(device)) {
      SCOPED_TRACE(shape.name);
      const size_t n = shape.items();
      const std::vector<T> in = sub_group_inputs<T>(n, seed + uint32_t(n));
      Mem In = s.buffer(in), Out = s.buffer(10 * n * sizeof(T)), Votes = s.buffer(2 * n * 4);
      s.set_args(kernel.get(), In, Out, Votes);
      SubGroups::run(s, kernel.get(), shape);
      const std::vector<T> out = s.read<T>(Out.get(), 10 * n);
      const std::vector<int32_t> votes = s.read<int32_t>(Votes.get(), 2 * n);
      const size_t width = max_sub_group_size(kernel.get(), device, shape);
      for (const SubGroup& sub_group : sub_groups_of(shape, width)) {
        T sum = 0, low = highest_of<T>(), high = lowest_of<T>();
        bool all = true, any = false;
        for (size_t g : sub_group.lanes) {
          sum += in[g];
          low = std::min(low, in[g]);
          high = std::max(high, in[g]);
          all = all && in[g] > T(0);
          any = any || in[g] > T(40);
        }
        const T broadcast = in[sub_group.lanes[sub_group.id % sub_group.size()]];
        T running_sum = 0, running_low = highest_of<T>(), running_high = lowest_of<T>();
        for (size_t lane = 0; lane < sub_group.size(); ++lane) {
          const size_t g = sub_group.lanes[lane];
          SCOPED_TRACE("GID " + std::to_string(g) + ", lane " + std::to_string(lane));
          const T exclusive[3] = {running_sum, running_low, running_high};
          running_sum += in[g];
          running_low = std::min(running_low, in[g]);
          running_high = std::max(running_high, in[g]);
          const T expected[10] = {sum,          low,          high,         running_sum,
                                  running_low,  running_high, exclusive[0], exclusive[1],
                                  exclusive[2], broadcast};
          for (int f = 0; f < 10; ++f) ASSERT_EQ(out[g + f * n], expected[f]) << "function " << f;
          ASSERT_EQ(votes[2 * g], all ? 1 : 0);
          ASSERT_EQ(votes[2 * g + 1], any ? 1 : 0);
        }
      }
    }
  });
}

TEST_F(SubGroups, CoreCollectivesInt) { check_core_collectives<int32_t>(*this, "int", 21); }
TEST_F(SubGroups, CoreCollectivesUint) { check_core_collectives<uint32_t>(*this, "uint", 22); }
TEST_F(SubGroups, CoreCollectivesLong) { check_core_collectives<int64_t>(*this, "long", 23); }
TEST_F(SubGroups, CoreCollectivesUlong) { check_core_collectives<uint64_t>(*this, "ulong", 24); }
TEST_F(SubGroups, CoreCollectivesFloat) { check_core_collectives<float>(*this, "float", 25); }
TEST_F(SubGroups, CoreCollectivesDouble) { check_core_collectives<double>(*this, "double", 26); }
// cl_khr_subgroup_extended_types: the same functions on 8- and 16-bit integers (sums wrap).
TEST_F(SubGroups, ExtendedTypesChar) { check_core_collectives<int8_t>(*this, "char", 27); }
TEST_F(SubGroups, ExtendedTypesUchar) { check_core_collectives<uint8_t>(*this, "uchar", 28); }
TEST_F(SubGroups, ExtendedTypesShort) { check_core_collectives<int16_t>(*this, "short", 29); }
TEST_F(SubGroups, ExtendedTypesUshort) { check_core_collectives<uint16_t>(*this, "ushort", 30); }

// cl_khr_subgroup_extended_types: broadcasts of vectors (and non-uniform ones with ballots).
const char* kSubGroupVectorBroadcast = R"CL(
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define V CAT(E, N)
kernel void vectors(global const E* in, global E* out) {
  size_t g = GID;
  V x = CAT(vload, N)(g, in);
  V r = sub_group_broadcast(x, (get_sub_group_id() * 3 + 1) % get_sub_group_size());
  CAT(vstore, N)(r, g, out);
#ifdef NON_UNIFORM
  if (get_sub_group_local_id() % 2 == 1)
    CAT(vstore, N)(sub_group_non_uniform_broadcast(x, 1), g + ITEMS, out);
#endif
}
)CL";

template <class E>
void check_vector_broadcast(SubGroups& test, const char* element, int width_n, uint32_t seed) {
  SCOPED_TRACE(std::string(element) + std::to_string(width_n));
  test.for_each_sub_group_device(
      {"cl_khr_subgroup_extended_types"}, [&](DeviceSession& s, cl_device_id device) {
        if (std::is_same_v<E, double> && !s.has_extension("cl_khr_fp64")) return;
        const bool ballot = s.has_extension("cl_khr_subgroup_ballot");
        std::string defines = std::string("-DE=") + element + " -DN=" + std::to_string(width_n);
        if (ballot) defines += " -DNON_UNIFORM";
        Program program = test.build(s, kSubGroupVectorBroadcast, defines);
        if (!program) return;
        Kernel kernel = s.kernel(program, "vectors");
        for (const Shape& shape : SubGroups::shapes_for(device)) {
          SCOPED_TRACE(shape.name);
          const size_t n = shape.items(), k = size_t(width_n);
          const std::vector<E> in = sub_group_inputs<E>(n * k, seed);
          Mem In = s.buffer(in), Out = s.buffer(std::vector<E>(2 * n * k, E(7)));
          s.set_args(kernel.get(), In, Out);
          SubGroups::run(s, kernel.get(), shape);
          const std::vector<E> out = s.read<E>(Out.get(), 2 * n * k);
          const size_t width = max_sub_group_size(kernel.get(), device, shape);
          for (const SubGroup& sub_group : sub_groups_of(shape, width)) {
            const size_t source = sub_group.lanes[(sub_group.id * 3 + 1) % sub_group.size()];
            for (size_t lane = 0; lane < sub_group.size(); ++lane) {
              const size_t g = sub_group.lanes[lane];
              for (size_t c = 0; c < k; ++c) {
                ASSERT_EQ(out[g * k + c], in[source * k + c]) << "GID " << g << ", component " << c;
                if (ballot && lane % 2 == 1) {
                  ASSERT_EQ(out[(n + g) * k + c], in[sub_group.lanes[1] * k + c])
                      << "non-uniform, GID " << g << ", component " << c;
                }
              }
            }
          }
        }
      });
}

TEST_F(SubGroups, ExtendedTypesVectorBroadcasts) {
  check_vector_broadcast<int8_t>(*this, "char", 16, 81);
  check_vector_broadcast<uint16_t>(*this, "ushort", 3, 82);
  check_vector_broadcast<int32_t>(*this, "int", 4, 83);
  check_vector_broadcast<uint64_t>(*this, "ulong", 8, 84);
  check_vector_broadcast<float>(*this, "float", 2, 85);
  check_vector_broadcast<double>(*this, "double", 16, 86);
}

// ---- sub-group functions in code only some sub-groups of a work-group run ----

const char* kSubGroupUniformBranches = R"CL(
kernel void branches(global const int* in, global int* out, local int* tmp) {
  size_t g = GID;
  int x = in[g];
  uint id = get_sub_group_id(), lane = get_sub_group_local_id(), size = get_sub_group_size();
  size_t linear = get_local_linear_id();
  int r;
  if (id % 2 == 0) {
    tmp[linear] = x;
    sub_group_barrier(CLK_LOCAL_MEM_FENCE);
    r = tmp[linear - lane + (size - 1 - lane)] + sub_group_reduce_add(x);
  } else {
    r = 0;
    for (uint i = 0; i <= id; ++i) r += sub_group_scan_exclusive_add(x + (int)i);
  }
  out[g] = r;
}
)CL";

TEST_F(SubGroups, FunctionsInWorkGroupDivergentCode) {
  for_each_sub_group_device({}, [&](DeviceSession& s, cl_device_id device) {
    Program program = build(s, kSubGroupUniformBranches);
    if (!program) return;
    Kernel kernel = s.kernel(program, "branches");
    for (const Shape& shape : shapes_for(device)) {
      SCOPED_TRACE(shape.name);
      const size_t n = shape.items();
      const std::vector<int32_t> in = sub_group_inputs<int32_t>(n, 31);
      Mem In = s.buffer(in), Out = s.buffer(n * 4);
      const size_t group_items = shape.local[0] * shape.local[1] * shape.local[2];
      s.set_args(kernel.get(), In, Out, DeviceSession::LocalBytes{group_items * 4});
      run(s, kernel.get(), shape);
      const std::vector<int32_t> out = s.read<int32_t>(Out.get(), n);
      for (const SubGroup& sub_group :
           sub_groups_of(shape, max_sub_group_size(kernel.get(), device, shape))) {
        int32_t sum = 0;
        for (size_t g : sub_group.lanes) sum += in[g];
        int32_t prefix = 0;
        for (size_t lane = 0; lane < sub_group.size(); ++lane) {
          const size_t g = sub_group.lanes[lane];
          const int32_t id = int32_t(sub_group.id), l = int32_t(lane);
          const int32_t expected = sub_group.id % 2 == 0
                                       ? in[sub_group.lanes[sub_group.size() - 1 - lane]] + sum
                                       : (id + 1) * prefix + l * id * (id + 1) / 2;
          ASSERT_EQ(out[g], expected) << "GID " << g << ", sub-group " << id << ", lane " << l;
          prefix += in[g];
        }
      }
    }
  });
}

// ---- a work-group reduction through sub-groups, in a loop with work-group barriers: each
// sub-group reduces its values, the first sub-group reduces their sums ----

const char* kSubGroupWorkGroupReduction = R"CL(
kernel void group_sums(global const int* in, global int* out, local int* partial) {
  int x = in[GID];
  uint lane = get_sub_group_local_id(), size = get_sub_group_size();
  for (int round = 0; round < 3; ++round) {
    int sum = sub_group_reduce_add(x);
    if (lane == 0) partial[get_sub_group_id()] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_sub_group_id() == 0) {
      int v = 0;
      for (uint i = lane; i < get_num_sub_groups(); i += size) v += partial[i];
      v = sub_group_reduce_add(v);
      if (lane == 0) out[3 * get_group_id(0) + round] = v;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    x = sub_group_broadcast(x, 0) + x;
  }
}
)CL";

TEST_F(SubGroups, WorkGroupReductionThroughSubGroups) {
  for_each_sub_group_device({}, [&](DeviceSession& s, cl_device_id device) {
    Program program = build(s, kSubGroupWorkGroupReduction);
    if (!program) return;
    Kernel kernel = s.kernel(program, "group_sums");
    for (const Shape& shape : shapes_for(device)) {
      if (shape.dims != 1 || !shape.uniform()) continue;
      SCOPED_TRACE(shape.name);
      const size_t n = shape.items(), groups = n / shape.local[0];
      const std::vector<int32_t> in = sub_group_inputs<int32_t>(n, 91);
      Mem In = s.buffer(in), Out = s.buffer(3 * groups * 4);
      s.set_args(kernel.get(), In, Out, DeviceSession::LocalBytes{shape.local[0] * 4});
      run(s, kernel.get(), shape);
      const std::vector<int32_t> out = s.read<int32_t>(Out.get(), 3 * groups);
      std::vector<int32_t> x = in;
      const auto sub_groups = sub_groups_of(shape, max_sub_group_size(kernel.get(), device, shape));
      for (int round = 0; round < 3; ++round) {
        std::vector<int32_t> sums(groups, 0);
        for (size_t i = 0; i < n; ++i) sums[i / shape.local[0]] += x[i];
        for (size_t g = 0; g < groups; ++g)
          ASSERT_EQ(out[3 * g + size_t(round)], sums[g]) << "group " << g << ", round " << round;
        std::vector<int32_t> next = x;
        for (const SubGroup& sub_group : sub_groups)
          for (size_t lane : sub_group.lanes) next[lane] = x[sub_group.lanes[0]] + x[lane];
        x = next;
      }
    }
  });
}

// ---- divergent code within sub-groups: the active work-items of each call are those that
// took the same path (cl_khr_subgroup_non_uniform_arithmetic, _non_uniform_vote) ----

const char* kSubGroupDivergent = R"CL(
kernel void divergent(global const int* in, global const int* taken, global const int* trips,
                      global int* out) {
  size_t g = GID;
  int x = in[g];
  int r0, r1, r2;
  if (taken[g]) {
    r0 = sub_group_non_uniform_reduce_add(x);
    r1 = sub_group_non_uniform_scan_inclusive_max(x);
    r2 = sub_group_elect() != 0;
  } else {
    r0 = sub_group_non_uniform_scan_exclusive_add(x);
    r1 = sub_group_non_uniform_all(x > -45) != 0;
    r2 = sub_group_non_uniform_reduce_min(x);
  }
  // Each iteration's active work-items are those still looping that take the branch: work-items
  // that skip it meet the others in their next iteration, not in this one.
  int sum = 0;
  for (int i = 0; i < trips[g]; ++i)
    if ((get_sub_group_local_id() + i) % 2 == 0) sum += sub_group_non_uniform_reduce_add(x) * (i + 1);
  out[4 * g + 0] = r0;
  out[4 * g + 1] = r1;
  out[4 * g + 2] = r2;
  out[4 * g + 3] = sum;
}
)CL";

TEST_F(SubGroups, NonUniformFunctionsInDivergentCode) {
  for_each_sub_group_device(
      {"cl_khr_subgroup_non_uniform_arithmetic", "cl_khr_subgroup_non_uniform_vote"},
      [&](DeviceSession& s, cl_device_id device) {
        Program program = build(s, kSubGroupDivergent);
        if (!program) return;
        Kernel kernel = s.kernel(program, "divergent");
        for (const Shape& shape : shapes_for(device)) {
          SCOPED_TRACE(shape.name);
          const size_t n = shape.items();
          const std::vector<int32_t> in = sub_group_inputs<int32_t>(n, 41);
          std::vector<int32_t> taken(n), trips(n);
          std::mt19937 engine(42);
          for (size_t i = 0; i < n; ++i) {
            taken[i] = engine() % 3 == 0;
            trips[i] = int32_t(engine() % 5);
          }
          Mem In = s.buffer(in), Taken = s.buffer(taken), Trips = s.buffer(trips),
              Out = s.buffer(4 * n * 4);
          s.set_args(kernel.get(), In, Taken, Trips, Out);
          run(s, kernel.get(), shape);
          const std::vector<int32_t> out = s.read<int32_t>(Out.get(), 4 * n);
          const size_t width = max_sub_group_size(kernel.get(), device, shape);
          for (const SubGroup& sub_group : sub_groups_of(shape, width)) {
            int32_t sum_taken = 0, low_other = INT32_MAX;
            bool all_other = true;
            size_t first_taken = SIZE_MAX;
            for (size_t lane = 0; lane < sub_group.size(); ++lane) {
              const size_t g = sub_group.lanes[lane];
              if (taken[g]) {
                sum_taken += in[g];
                if (first_taken == SIZE_MAX) first_taken = lane;
              } else {
                low_other = std::min(low_other, in[g]);
                all_other = all_other && in[g] > -45;
              }
            }
            int32_t max_taken = INT32_MIN, prefix_other = 0;
            for (size_t lane = 0; lane < sub_group.size(); ++lane) {
              const size_t g = sub_group.lanes[lane];
              SCOPED_TRACE("GID " + std::to_string(g) + ", lane " + std::to_string(lane));
              int32_t expected[4];
              if (taken[g]) {
                max_taken = std::max(max_taken, in[g]);
                expected[0] = sum_taken;
                expected[1] = max_taken;
                expected[2] = lane == first_taken;
              } else {
                expected[0] = prefix_other;
                expected[1] = all_other;
                expected[2] = low_other;
                prefix_other += in[g];
              }
              expected[3] = 0;
              for (int32_t i = 0; i < trips[g]; ++i) {
                if ((lane + size_t(i)) % 2 != 0) continue;
                int32_t looping = 0;
                for (size_t l = 0; l < sub_group.size(); ++l)
                  if (trips[sub_group.lanes[l]] > i && (l + size_t(i)) % 2 == 0)
                    looping += in[sub_group.lanes[l]];
                expected[3] += looping * (i + 1);
              }
              for (int k = 0; k < 4; ++k) ASSERT_EQ(out[4 * g + k], expected[k]) << "result " << k;
            }
          }
        }
      });
}

// ---- cl_khr_subgroup_ballot ----

const char* kSubGroupBallot = R"CL(
kernel void ballots(global const int* in, global uint* out) {
  size_t g = GID;
  int x = in[g];
  global uint* o = out + 24 * g;
  uint lane = get_sub_group_local_id(), size = get_sub_group_size();
  uint4 b = sub_group_ballot(x > 10);
  o[0] = b.x; o[1] = b.y; o[2] = b.z; o[3] = b.w;
  o[4] = sub_group_inverse_ballot(b) != 0;
  o[5] = sub_group_ballot_bit_extract(b, (lane + 1) % size) != 0;
  o[6] = sub_group_ballot_bit_count(b);
  o[7] = sub_group_ballot_inclusive_scan(b);
  o[8] = sub_group_ballot_exclusive_scan(b);
  o[9] = sub_group_ballot_find_lsb(b);
  o[10] = sub_group_ballot_find_msb(b);
  uint4 masks[5] = {get_sub_group_eq_mask(), get_sub_group_ge_mask(), get_sub_group_gt_mask(),
                    get_sub_group_le_mask(), get_sub_group_lt_mask()};
  for (int i = 0; i < 5; ++i) {
    o[11 + 2 * i] = masks[i].x;
    o[12 + 2 * i] = masks[i].y;
  }
  o[21] = sub_group_broadcast_first(x);
  o[22] = sub_group_non_uniform_broadcast(x, size - 1);
  o[23] = 0xdeadbeef;
  if (x % 3 == 0) {
    // The first active work-item here, from a ballot taken in this branch.
    uint first = sub_group_ballot_find_lsb(sub_group_ballot(1));
    o[23] = sub_group_non_uniform_broadcast(x + 1000, first) + 17 * sub_group_broadcast_first(x);
  }
}
)CL";

TEST_F(SubGroups, Ballot) {
  for_each_sub_group_device({"cl_khr_subgroup_ballot"}, [&](DeviceSession& s, cl_device_id device) {
    Program program = build(s, kSubGroupBallot);
    if (!program) return;
    Kernel kernel = s.kernel(program, "ballots");
    for (const Shape& shape : shapes_for(device)) {
      SCOPED_TRACE(shape.name);
      const size_t n = shape.items();
      const std::vector<int32_t> in = sub_group_inputs<int32_t>(n, 51);
      Mem In = s.buffer(in), Out = s.buffer(24 * n * 4);
      s.set_args(kernel.get(), In, Out);
      run(s, kernel.get(), shape);
      const std::vector<uint32_t> out = s.read<uint32_t>(Out.get(), 24 * n);
      const size_t width = max_sub_group_size(kernel.get(), device, shape);
      ASSERT_LE(width, 128u);
      auto bit = [](const uint32_t* words, size_t i) { return (words[i / 32] >> (i % 32)) & 1; };
      for (const SubGroup& sub_group : sub_groups_of(shape, width)) {
        uint32_t ballot[4] = {0, 0, 0, 0};
        size_t first_third = SIZE_MAX;
        for (size_t lane = 0; lane < sub_group.size(); ++lane) {
          const int32_t x = in[sub_group.lanes[lane]];
          if (x > 10) ballot[lane / 32] |= 1u << (lane % 32);
          if (x % 3 == 0 && first_third == SIZE_MAX) first_third = lane;
        }
        // Bits of the sub-group's lanes: as wide as the widest sub-group.
        uint32_t count = 0, lsb = 0, msb = 0;
        for (size_t i = 0; i < width; ++i)
          if (bit(ballot, i)) {
            if (count++ == 0) lsb = uint32_t(i);
            msb = uint32_t(i);
          }
        for (size_t lane = 0; lane < sub_group.size(); ++lane) {
          const size_t g = sub_group.lanes[lane];
          SCOPED_TRACE("GID " + std::to_string(g) + ", lane " + std::to_string(lane));
          const uint32_t* o = &out[24 * g];
          for (int w = 0; w < 4; ++w) ASSERT_EQ(o[w], ballot[w]) << "ballot word " << w;
          ASSERT_EQ(o[4], bit(ballot, lane));
          ASSERT_EQ(o[5], bit(ballot, (lane + 1) % sub_group.size()));
          ASSERT_EQ(o[6], count);
          uint32_t up_to = 0;
          for (size_t i = 0; i <= lane; ++i) up_to += bit(ballot, i);
          ASSERT_EQ(o[7], up_to);
          ASSERT_EQ(o[8], up_to - bit(ballot, lane));
          if (count) {
            ASSERT_EQ(o[9], lsb);
            ASSERT_EQ(o[10], msb);
          }
          for (int m = 0; m < 5; ++m) {
            uint64_t expected = 0;
            for (size_t i = 0; i < std::min<size_t>(width, 64); ++i) {
              const bool set = m == 0   ? i == lane
                               : m == 1 ? i >= lane
                               : m == 2 ? i > lane
                               : m == 3 ? i <= lane
                                        : i < lane;
              if (set) expected |= uint64_t(1) << i;
            }
            ASSERT_EQ(o[11 + 2 * m] | uint64_t(o[12 + 2 * m]) << 32, expected) << "mask " << m;
          }
          ASSERT_EQ(int32_t(o[21]), in[sub_group.lanes[0]]);
          ASSERT_EQ(int32_t(o[22]), in[sub_group.lanes.back()]);
          if (in[g] % 3 == 0) {
            const int32_t first = in[sub_group.lanes[first_third]];
            ASSERT_EQ(int32_t(o[23]), first + 1000 + 17 * first);
          } else {
            ASSERT_EQ(o[23], 0xdeadbeefu);
          }
        }
      }
    }
  });
}

// ---- cl_khr_subgroup_shuffle and _shuffle_relative ----

const char* kSubGroupShuffles = R"CL(
kernel void shuffles(global const T* in, global T* out) {
  size_t g = GID;
  T x = in[g];
  uint lane = get_sub_group_local_id(), size = get_sub_group_size();
  out[4 * g + 0] = sub_group_shuffle(x, (lane * 7 + 3) % size);
  out[4 * g + 1] = sub_group_shuffle_xor(x, 5);
  out[4 * g + 2] = sub_group_shuffle_up(x, 2);
  out[4 * g + 3] = sub_group_shuffle_down(x, 3);
}
)CL";

template <class T>
void check_shuffles(SubGroups& test, const char* type_name, uint32_t seed) {
  SCOPED_TRACE(type_name);
  test.for_each_sub_group_device(
      {"cl_khr_subgroup_shuffle", "cl_khr_subgroup_shuffle_relative"},
      [&](DeviceSession& s, cl_device_id device) {
        if (std::is_same_v<T, double> && !s.has_extension("cl_khr_fp64")) return;
        if (sizeof(T) < 4 && !s.has_extension("cl_khr_subgroup_extended_types")) return;
        Program program = test.build(s, kSubGroupShuffles, std::string("-DT=") + type_name);
        if (!program) return;
        Kernel kernel = s.kernel(program, "shuffles");
        for (const Shape& shape : SubGroups::shapes_for(device)) {
          SCOPED_TRACE(shape.name);
          const size_t n = shape.items();
          const std::vector<T> in = sub_group_inputs<T>(n, seed);
          Mem In = s.buffer(in), Out = s.buffer(4 * n * sizeof(T));
          s.set_args(kernel.get(), In, Out);
          SubGroups::run(s, kernel.get(), shape);
          const std::vector<T> out = s.read<T>(Out.get(), 4 * n);
          const size_t width = max_sub_group_size(kernel.get(), device, shape);
          for (const SubGroup& sub_group : sub_groups_of(shape, width)) {
            const size_t size = sub_group.size();
            for (size_t lane = 0; lane < size; ++lane) {
              const size_t g = sub_group.lanes[lane];
              SCOPED_TRACE("GID " + std::to_string(g) + ", lane " + std::to_string(lane));
              auto at = [&](size_t l) { return in[sub_group.lanes[l]]; };
              ASSERT_EQ(out[4 * g + 0], at((lane * 7 + 3) % size));
              // Sources outside the sub-group give undefined values.
              if ((lane ^ 5) < size) {
                ASSERT_EQ(out[4 * g + 1], at(lane ^ 5));
              }
              if (lane >= 2) {
                ASSERT_EQ(out[4 * g + 2], at(lane - 2));
              }
              if (lane + 3 < size) {
                ASSERT_EQ(out[4 * g + 3], at(lane + 3));
              }
            }
          }
        }
      });
}

TEST_F(SubGroups, ShufflesInt) { check_shuffles<int32_t>(*this, "int", 61); }
TEST_F(SubGroups, ShufflesUlong) { check_shuffles<uint64_t>(*this, "ulong", 62); }
TEST_F(SubGroups, ShufflesFloat) { check_shuffles<float>(*this, "float", 63); }
TEST_F(SubGroups, ShufflesDouble) { check_shuffles<double>(*this, "double", 64); }
TEST_F(SubGroups, ShufflesChar) { check_shuffles<int8_t>(*this, "char", 65); }
TEST_F(SubGroups, ShufflesUshort) { check_shuffles<uint16_t>(*this, "ushort", 66); }

// ---- every operation of cl_khr_subgroup_non_uniform_arithmetic and _clustered_reduce ----

// One kernel per type: the ten operations of the extensions, their reduction, inclusive and
// exclusive scans over the work-items that take a branch, and their clustered reductions.
const char* kSubGroupArithmetic = R"CL(
#define INTEGER_OPS(M) M(and, 3) M(or, 4) M(xor, 5)
#define LOGICAL_OPS(M) M(logical_and, 6) M(logical_or, 7) M(logical_xor, 8)
#define ALL_OPS(M) M(add, 0) M(mul, 1) M(min, 2) M(max, 9) EXTRA_OPS(M)

#define NON_UNIFORM(op, k)                                                     \
  o[3 * k + 0] = sub_group_non_uniform_reduce_##op(x);                        \
  o[3 * k + 1] = sub_group_non_uniform_scan_inclusive_##op(x);                \
  o[3 * k + 2] = sub_group_non_uniform_scan_exclusive_##op(x);
#define CLUSTERED(op, k)                                                       \
  switch (cluster) {                                                           \
    case 1: c[k] = sub_group_clustered_reduce_##op(x, 1); break;               \
    case 2: c[k] = sub_group_clustered_reduce_##op(x, 2); break;               \
    case 4: c[k] = sub_group_clustered_reduce_##op(x, 4); break;               \
    case 8: c[k] = sub_group_clustered_reduce_##op(x, 8); break;               \
    case 16: c[k] = sub_group_clustered_reduce_##op(x, 16); break;             \
    case 32: c[k] = sub_group_clustered_reduce_##op(x, 32); break;             \
    case 64: c[k] = sub_group_clustered_reduce_##op(x, 64); break;             \
    case 128: c[k] = sub_group_clustered_reduce_##op(x, 128); break;           \
  }

kernel void arithmetic(global const T* in, global const int* taken, global T* out,
                       global T* clustered, uint cluster) {
  size_t g = GID;
  T x = in[g];
  global T* o = out + 30 * g;
  global T* c = clustered + 10 * g;
  if (taken[g]) {
    ALL_OPS(NON_UNIFORM)
  }
  ALL_OPS(CLUSTERED)
}
)CL";

// Wrapping integer arithmetic, logical operations on truth values, as the host model computes.
template <class T>
T apply_op(int op, T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (op == 0) return a + b;
    if (op == 1) return a * b;
  } else {
    using Wide = std::make_unsigned_t<std::common_type_t<T, int>>;
    switch (op) {
      case 0:
        return T(Wide(a) + Wide(b));
      case 1:
        return T(Wide(a) * Wide(b));
      case 3:
        return T(a & b);
      case 4:
        return T(a | b);
      case 5:
        return T(a ^ b);
    }
  }
  switch (op) {
    case 2:
      return std::min(a, b);
    case 9:
      return std::max(a, b);
    case 6:
      return T(a && b);
    case 7:
      return T(a || b);
    case 8:
      return T(!a != !b);
  }
  return T(0);
}

template <class T>
T identity_of(int op) {
  switch (op) {
    case 1:
      return T(1);
    case 2:
      return highest_of<T>();
    case 9:
      return lowest_of<T>();
    case 3:
      return T(~uint64_t(0));
    case 6:
      return T(1);
  }
  return T(0);
}

template <class T>
void check_arithmetic(SubGroups& test, const char* type_name, uint32_t seed) {
  SCOPED_TRACE(type_name);
  constexpr bool kInteger = std::is_integral_v<T>;
  std::vector<int> ops = {0, 1, 2, 9};
  if (kInteger) ops.insert(ops.end(), {3, 4, 5});
  if (std::is_same_v<T, int32_t>) ops.insert(ops.end(), {6, 7, 8});
  std::string defines = std::string("-DT=") + type_name + " \"-DEXTRA_OPS(M)=";
  if (kInteger) defines += "INTEGER_OPS(M) ";
  if (std::is_same_v<T, int32_t>) defines += "LOGICAL_OPS(M)";
  defines += "\"";
  test.for_each_sub_group_device(
      {"cl_khr_subgroup_non_uniform_arithmetic", "cl_khr_subgroup_clustered_reduce"},
      [&](DeviceSession& s, cl_device_id device) {
        if (std::is_same_v<T, double> && !s.has_extension("cl_khr_fp64")) return;
        if (sizeof(T) < 4 && !s.has_extension("cl_khr_subgroup_extended_types")) return;
        Program program = test.build(s, kSubGroupArithmetic, defines);
        if (!program) return;
        Kernel kernel = s.kernel(program, "arithmetic");
        for (const Shape& shape : SubGroups::shapes_for(device)) {
          SCOPED_TRACE(shape.name);
          const size_t n = shape.items();
          // Small values keep products and sums exact: 1, 2, -1, 0 and a few others.
          std::mt19937 engine(seed);
          std::vector<T> in(n);
          std::vector<int32_t> taken(n);
          // Powers of two for floating point: every order of combining gives the same bits.
          const double choices[] = {1, 2, 1, std::is_floating_point_v<T> ? 0.5 : 3,
                                    0, 1, 1, std::is_signed_v<T> ? -1 : 5};
          for (size_t i = 0; i < n; ++i) {
            in[i] = T(choices[engine() % 8]);
            taken[i] = engine() % 4 != 0;
          }
          const size_t width = max_sub_group_size(kernel.get(), device, shape);
          for (uint32_t cluster = 1; cluster <= width; cluster *= 2) {
            SCOPED_TRACE("cluster " + std::to_string(cluster));
            Mem In = s.buffer(in), Taken = s.buffer(taken),
                Out = s.buffer(std::vector<T>(30 * n, T(0))),
                Clustered = s.buffer(10 * n * sizeof(T));
            s.set_args(kernel.get(), In, Taken, Out, Clustered, cluster);
            SubGroups::run(s, kernel.get(), shape);
            const std::vector<T> out = s.read<T>(Out.get(), 30 * n);
            const std::vector<T> clustered = s.read<T>(Clustered.get(), 10 * n);
            for (const SubGroup& sub_group : sub_groups_of(shape, width)) {
              for (size_t lane = 0; lane < sub_group.size(); ++lane) {
                const size_t g = sub_group.lanes[lane];
                for (int op : ops) {
                  // Logical operations see truth values.
                  auto value = [&](size_t l) {
                    const T v = in[sub_group.lanes[l]];
                    return op >= 6 && op <= 8 ? T(v != T(0)) : v;
                  };
                  T reduce = identity_of<T>(op), inclusive = reduce, exclusive = reduce,
                    cluster_result = reduce;
                  for (size_t l = 0; l < sub_group.size(); ++l) {
                    if (l / cluster == lane / cluster)
                      cluster_result = apply_op(op, cluster_result, value(l));
                    if (!taken[sub_group.lanes[l]]) continue;
                    reduce = apply_op(op, reduce, value(l));
                    if (l <= lane) inclusive = apply_op(op, inclusive, value(l));
                    if (l < lane) exclusive = apply_op(op, exclusive, value(l));
                  }
                  const auto where = [&] {
                    return "operation " + std::to_string(op) + ", GID " + std::to_string(g) +
                           ", lane " + std::to_string(lane);
                  };
                  ASSERT_EQ(clustered[10 * g + op], cluster_result) << "clustered, " << where();
                  if (cluster > 1 || !taken[g]) continue;  // one run checks the others
                  ASSERT_EQ(out[30 * g + 3 * op + 0], reduce) << "reduce, " << where();
                  ASSERT_EQ(out[30 * g + 3 * op + 1], inclusive) << "inclusive scan, " << where();
                  ASSERT_EQ(out[30 * g + 3 * op + 2], exclusive) << "exclusive scan, " << where();
                }
              }
            }
          }
        }
      });
}

TEST_F(SubGroups, NonUniformArithmeticAndClusteredInt) {
  check_arithmetic<int32_t>(*this, "int", 71);
}
TEST_F(SubGroups, NonUniformArithmeticAndClusteredUint) {
  check_arithmetic<uint32_t>(*this, "uint", 72);
}
TEST_F(SubGroups, NonUniformArithmeticAndClusteredLong) {
  check_arithmetic<int64_t>(*this, "long", 73);
}
TEST_F(SubGroups, NonUniformArithmeticAndClusteredFloat) {
  check_arithmetic<float>(*this, "float", 74);
}
TEST_F(SubGroups, NonUniformArithmeticAndClusteredDouble) {
  check_arithmetic<double>(*this, "double", 75);
}
TEST_F(SubGroups, NonUniformArithmeticAndClusteredChar) {
  check_arithmetic<int8_t>(*this, "char", 76);
}
TEST_F(SubGroups, NonUniformArithmeticAndClusteredUshort) {
  check_arithmetic<uint16_t>(*this, "ushort", 77);
}

}  // namespace
