// A corpus of realistic kernels, each checked against a host computation, run on every device
// of the platform under test through the public API only: the same code serves the CPU device
// and the GPU backends (the harness: device_session.h).
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

#include "half_corpus.inc"
