// A device group over the CPUs of two manifold-servers (tests/backends/remote/with_server.sh with
// WITH_SERVERS=2, the client seeing its own CPU too): kernels split over both servers give what
// the local CPU gives, both members run a share of a kernel whose writes are provably disjoint,
// and a buffer written on one server is read right on the other; a group with a remote member has
// no SVM.
#include <CL/cl_manifold.h>

#include <cstring>
#include <map>

#include "cl_test.h"

namespace {

using namespace cltest;

const char* kSource = R"CLC(
kernel void add(global const float* a, global const float* b, global float* c) {
  size_t i = get_global_id(0);
  c[i] = a[i] + b[i];
}
kernel void group_ids(global int* out) {
  size_t i = get_global_id(0);
  out[i] = (int)(get_group_id(0) * 100000 + get_local_id(0) * 100 + get_num_groups(0));
}
kernel void local_sum(global const int* in, global int* out, local int* scratch) {
  size_t l = get_local_id(0);
  scratch[l] = in[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (size_t s = get_local_size(0) / 2; s > 0; s /= 2) {
    if (l < s) scratch[l] += scratch[l + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (l == 0) out[get_group_id(0)] = scratch[0];
}
kernel void scale(global const float* in, global float* out, float k) {
  size_t i = get_global_id(0);
  out[i] = in[i] * k;
}
)CLC";

std::string name_of(cl_device_id d) { return deviceString(d, CL_DEVICE_NAME); }

// "127.0.0.1:PORT" of a remote device's name ("127.0.0.1:PORT: device"), empty for others.
std::string server_of(cl_device_id d) {
  const std::string name = name_of(d);
  if (!name.starts_with("127.0.0.1:")) return {};
  return name.substr(0, name.find(':', 10));
}

// One kernel argument: a buffer made from `bytes` (read back when `out`), __local memory of
// `local` bytes, or a value.
struct Arg {
  enum Kind { Buffer, Local, Value } kind = Buffer;
  std::vector<uint8_t> bytes;
  bool out = false;
  size_t local = 0;
};
template <class T>
Arg buffer_of(const std::vector<T>& v, bool out = false) {
  Arg a;
  a.bytes.resize(v.size() * sizeof(T));
  std::memcpy(a.bytes.data(), v.data(), a.bytes.size());
  a.out = out;
  return a;
}

class RemoteGroups : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    platform_ = findPlatform(&why);
    ASSERT_NE(platform_, nullptr) << why;
    cl_uint n = 0;
    ASSERT_CL(CL_SUCCESS, clGetDeviceIDs(platform_, CL_DEVICE_TYPE_ALL, 0, nullptr, &n));
    std::vector<cl_device_id> all(n);
    ASSERT_CL(CL_SUCCESS, clGetDeviceIDs(platform_, CL_DEVICE_TYPE_ALL, n, all.data(), nullptr));
    std::map<std::string, cl_device_id> by_server;
    for (cl_device_id d : all) {
      const std::string server = server_of(d);
      if (!server.empty() && isCpuDevice(d))
        by_server.emplace(server, d);
      else if (server.empty() && !local_ && isCpuDevice(d) &&
               name_of(d).find("Manifold group") == std::string::npos)
        local_ = d;
    }
    for (auto& [server, d] : by_server) remote_.push_back(d);
    ASSERT_EQ(remote_.size(), 2u) << "needs the CPUs of two servers (WITH_SERVERS=2)";
    ASSERT_NE(local_, nullptr) << "needs the local CPU (MANIFOLD_DEVICES empty)";
    auto create = reinterpret_cast<clCreateDeviceGroupMFLD_fn>(
        clGetExtensionFunctionAddressForPlatform(platform_, "clCreateDeviceGroupMFLD"));
    ASSERT_NE(create, nullptr);
    cl_int err = -1;
    group_ = create(platform_, nullptr, 2, remote_.data(), &err);
    ASSERT_ERR(CL_SUCCESS, err);
  }
  void TearDown() override {
    if (group_) clReleaseDevice(group_);
  }

  // Runs kernel `name` over `global` work-items in groups of `local` on `device`; the bytes of the
  // output buffers, in argument order. `split`: the share each member of a group ran.
  std::vector<std::vector<uint8_t>> run(cl_device_id device, const char* name,
                                        const std::vector<Arg>& args, size_t global, size_t local,
                                        std::vector<cl_float>* split = nullptr) {
    cl_int err = -1;
    Context context(clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err));
    EXPECT_ERR(CL_SUCCESS, err);
    Queue queue(clCreateCommandQueueWithProperties(context, device, nullptr, &err));
    EXPECT_ERR(CL_SUCCESS, err);
    Program program(clCreateProgramWithSource(context, 1, &kSource, nullptr, &err));
    EXPECT_ERR(CL_SUCCESS, err);
    EXPECT_CL(CL_SUCCESS, clBuildProgram(program, 1, &device, "", nullptr, nullptr));
    Kernel kernel(clCreateKernel(program, name, &err));
    EXPECT_ERR(CL_SUCCESS, err);
    std::vector<Mem> mems(args.size());
    for (cl_uint i = 0; i < args.size(); ++i) {
      const Arg& a = args[i];
      if (a.kind == Arg::Buffer) {
        mems[i] = Mem(clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                     a.bytes.size(), const_cast<uint8_t*>(a.bytes.data()), &err));
        EXPECT_ERR(CL_SUCCESS, err);
        cl_mem m = mems[i];
        EXPECT_CL(CL_SUCCESS, clSetKernelArg(kernel, i, sizeof m, &m));
      } else if (a.kind == Arg::Local) {
        EXPECT_CL(CL_SUCCESS, clSetKernelArg(kernel, i, a.local, nullptr));
      } else {
        EXPECT_CL(CL_SUCCESS, clSetKernelArg(kernel, i, a.bytes.size(), a.bytes.data()));
      }
    }
    EXPECT_CL(CL_SUCCESS, clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, &local, 0,
                                                 nullptr, nullptr));
    std::vector<std::vector<uint8_t>> outputs;
    for (cl_uint i = 0; i < args.size(); ++i) {
      if (!args[i].out) continue;
      outputs.emplace_back(args[i].bytes.size());
      EXPECT_CL(CL_SUCCESS, clEnqueueReadBuffer(queue, mems[i], CL_TRUE, 0, outputs.back().size(),
                                                outputs.back().data(), 0, nullptr, nullptr));
    }
    if (split) {
      split->assign(2, 0.0f);
      EXPECT_CL(CL_SUCCESS, clGetKernelWorkGroupInfo(kernel, device, CL_KERNEL_GROUP_SPLIT_MFLD,
                                                     2 * sizeof(cl_float), split->data(), nullptr));
    }
    return outputs;
  }

  // The group's results are the local CPU's, byte for byte; the group's split.
  std::vector<cl_float> expect_as_local(const char* name, const std::vector<Arg>& args,
                                        size_t global, size_t local) {
    std::vector<cl_float> split;
    const auto expected = run(local_, name, args, global, local);
    const auto got = run(group_, name, args, global, local, &split);
    EXPECT_EQ(got.size(), expected.size());
    for (size_t o = 0; o < got.size() && o < expected.size(); ++o)
      EXPECT_TRUE(got[o] == expected[o]) << name << ": output " << o << " differs";
    return split;
  }

  cl_platform_id platform_ = nullptr;
  cl_device_id local_ = nullptr, group_ = nullptr;
  std::vector<cl_device_id> remote_;
};

TEST_F(RemoteGroups, MembersRunPartialRanges) {
  // Both members are the servers' CPUs, which run parts of NDRanges.
  std::vector<cl_device_id> members(2);
  ASSERT_CL(CL_SUCCESS, clGetDeviceInfo(group_, CL_DEVICE_GROUP_MEMBERS_MFLD,
                                        2 * sizeof(cl_device_id), members.data(), nullptr));
  EXPECT_EQ(members, remote_);
}

TEST_F(RemoteGroups, VectorAddSplitsOverBothServers) {
  constexpr size_t n = 1 << 16;
  std::vector<float> a(n), b(n), c(n, -1.0f);
  for (size_t i = 0; i < n; ++i) a[i] = float(i) * 0.5f, b[i] = 1.0f / float(i + 1);
  const std::vector<cl_float> split =
      expect_as_local("add", {buffer_of(a), buffer_of(b), buffer_of(c, true)}, n, 64);
  ASSERT_EQ(split.size(), 2u);
  EXPECT_GT(split[0], 0.0f) << "the first server ran no part";
  EXPECT_GT(split[1], 0.0f) << "the second server ran no part";
  EXPECT_NEAR(split[0] + split[1], 1.0f, 1e-5);
}

TEST_F(RemoteGroups, GroupIdsAreThoseOfTheWholeRange) {
  constexpr size_t n = 4096;
  const std::vector<int> out(n, -1);
  expect_as_local("group_ids", {buffer_of(out, true)}, n, 32);
  // The ids themselves, too: the local CPU's could be wrong in the same way.
  const auto got = run(group_, "group_ids", {buffer_of(out, true)}, n, 32);
  ASSERT_EQ(got.size(), 1u);
  std::vector<int> ids(n);
  std::memcpy(ids.data(), got[0].data(), n * sizeof(int));
  for (size_t i = 0; i < n; ++i)
    ASSERT_EQ(ids[i], int((i / 32) * 100000 + (i % 32) * 100 + n / 32)) << "at " << i;
}

TEST_F(RemoteGroups, LocalMemoryReduction) {
  constexpr size_t n = 8192, local = 128;
  std::vector<int> in(n);
  for (size_t i = 0; i < n; ++i) in[i] = int(i * 7 % 1000) - 300;
  const std::vector<int> out(n / local, 0);
  Arg scratch;
  scratch.kind = Arg::Local;
  scratch.local = local * sizeof(int);
  expect_as_local("local_sum", {buffer_of(in), buffer_of(out, true), scratch}, n, local);
  const auto got =
      run(group_, "local_sum", {buffer_of(in), buffer_of(out, true), scratch}, n, local);
  ASSERT_EQ(got.size(), 1u);
  std::vector<int> sums(n / local);
  std::memcpy(sums.data(), got[0].data(), sums.size() * sizeof(int));
  for (size_t g = 0; g < n / local; ++g) {
    int s = 0;
    for (size_t k = 0; k < local; ++k) s += in[g * local + k];
    ASSERT_EQ(sums[g], s) << "group " << g;
  }
}

// A buffer written by a kernel on one server and read by a kernel on the other: its bytes move
// between the servers.
TEST_F(RemoteGroups, ABufferMovesBetweenTheServers) {
  constexpr size_t n = 1 << 15;
  cl_int err = -1;
  Context context(clCreateContext(nullptr, 2, remote_.data(), nullptr, nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  Queue qa(clCreateCommandQueueWithProperties(context, remote_[0], nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  Queue qb(clCreateCommandQueueWithProperties(context, remote_[1], nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  Program program(clCreateProgramWithSource(context, 1, &kSource, nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  ASSERT_CL(CL_SUCCESS, clBuildProgram(program, 2, remote_.data(), "", nullptr, nullptr));
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) x[i] = float(i % 977) - 13.0f;
  Mem mx(clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * 4, x.data(), &err));
  ASSERT_ERR(CL_SUCCESS, err);
  Mem my(clCreateBuffer(context, CL_MEM_READ_WRITE, n * 4, nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  Mem mz(clCreateBuffer(context, CL_MEM_READ_WRITE, n * 4, nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  Kernel on_a(clCreateKernel(program, "scale", &err));
  ASSERT_ERR(CL_SUCCESS, err);
  Kernel on_b(clCreateKernel(program, "add", &err));
  ASSERT_ERR(CL_SUCCESS, err);
  const float k = 3.0f;
  cl_mem a_args[2] = {mx, my}, b_args[3] = {my, mx, mz};
  for (cl_uint i = 0; i < 2; ++i) ASSERT_CL(CL_SUCCESS, clSetKernelArg(on_a, i, 8, &a_args[i]));
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(on_a, 2, sizeof k, &k));
  for (cl_uint i = 0; i < 3; ++i) ASSERT_CL(CL_SUCCESS, clSetKernelArg(on_b, i, 8, &b_args[i]));
  Event wrote;
  ASSERT_CL(CL_SUCCESS,
            clEnqueueNDRangeKernel(qa, on_a, 1, nullptr, &n, nullptr, 0, nullptr, wrote.out()));
  cl_event after_a = wrote;
  ASSERT_CL(CL_SUCCESS,
            clEnqueueNDRangeKernel(qb, on_b, 1, nullptr, &n, nullptr, 1, &after_a, nullptr));
  std::vector<float> z(n, -1.0f), y(n, -1.0f);
  ASSERT_CL(CL_SUCCESS,
            clEnqueueReadBuffer(qb, mz, CL_TRUE, 0, n * 4, z.data(), 0, nullptr, nullptr));
  ASSERT_CL(CL_SUCCESS,
            clEnqueueReadBuffer(qb, my, CL_TRUE, 0, n * 4, y.data(), 0, nullptr, nullptr));
  for (size_t i = 0; i < n; ++i) {
    ASSERT_EQ(y[i], x[i] * k) << "at " << i;
    ASSERT_EQ(z[i], x[i] * k + x[i]) << "at " << i;
  }
}

// A remote device has no SVM: neither has a group with one among its members, even beside the
// local CPU, which has. The spec's errors on the group's queue, while the CPU's SVM works.
TEST_F(RemoteGroups, NoSvmWhereAMemberHasNone) {
  cl_device_svm_capabilities caps = ~cl_device_svm_capabilities(0);
  ASSERT_CL(CL_SUCCESS,
            clGetDeviceInfo(remote_[0], CL_DEVICE_SVM_CAPABILITIES, sizeof caps, &caps, nullptr));
  if (caps) GTEST_SKIP() << "the remote device reports SVM";
  auto create = reinterpret_cast<clCreateDeviceGroupMFLD_fn>(
      clGetExtensionFunctionAddressForPlatform(platform_, "clCreateDeviceGroupMFLD"));
  cl_device_id members[2] = {remote_[0], local_};
  cl_int err = -1;
  cl_device_id mixed = create(platform_, nullptr, 2, members, &err);
  ASSERT_ERR(CL_SUCCESS, err);
  caps = ~cl_device_svm_capabilities(0);
  EXPECT_CL(CL_SUCCESS,
            clGetDeviceInfo(mixed, CL_DEVICE_SVM_CAPABILITIES, sizeof caps, &caps, nullptr));
  EXPECT_EQ(caps, cl_device_svm_capabilities(0));
  cl_device_id devices[2] = {mixed, local_};
  {
    Context context(clCreateContext(nullptr, 2, devices, nullptr, nullptr, &err));
    ASSERT_ERR(CL_SUCCESS, err);
    Queue on_group(clCreateCommandQueueWithProperties(context, mixed, nullptr, &err));
    ASSERT_ERR(CL_SUCCESS, err);
    Queue on_cpu(clCreateCommandQueueWithProperties(context, local_, nullptr, &err));
    ASSERT_ERR(CL_SUCCESS, err);
    Program program(clCreateProgramWithSource(context, 1, &kSource, nullptr, &err));
    ASSERT_CL(CL_SUCCESS, clBuildProgram(program, 2, devices, "", nullptr, nullptr));
    Kernel scale(clCreateKernel(program, "scale", &err));
    ASSERT_ERR(CL_SUCCESS, err);
    constexpr size_t n = 256;
    auto* p = static_cast<float*>(clSVMAlloc(context, CL_MEM_READ_WRITE, n * 4, 0));
    ASSERT_NE(p, nullptr);
    const float one = 1.0f, k = 3.0f;
    EXPECT_CL(CL_INVALID_OPERATION,
              clEnqueueSVMMap(on_group, CL_TRUE, CL_MAP_READ, p, n * 4, 0, nullptr, nullptr));
    EXPECT_CL(CL_INVALID_OPERATION,
              clEnqueueSVMMemFill(on_group, p, &one, 4, n * 4, 0, nullptr, nullptr));
    ASSERT_CL(CL_SUCCESS, clSetKernelArgSVMPointer(scale, 0, p));
    ASSERT_CL(CL_SUCCESS, clSetKernelArgSVMPointer(scale, 1, p));
    ASSERT_CL(CL_SUCCESS, clSetKernelArg(scale, 2, sizeof k, &k));
    EXPECT_CL(CL_INVALID_OPERATION, clEnqueueNDRangeKernel(on_group, scale, 1, nullptr, &n, nullptr,
                                                           0, nullptr, nullptr));
    // The CPU's queue of the same context: SVM as ever.
    ASSERT_CL(CL_SUCCESS, clEnqueueSVMMemFill(on_cpu, p, &one, 4, n * 4, 0, nullptr, nullptr));
    ASSERT_CL(CL_SUCCESS,
              clEnqueueNDRangeKernel(on_cpu, scale, 1, nullptr, &n, nullptr, 0, nullptr, nullptr));
    ASSERT_CL(CL_SUCCESS,
              clEnqueueSVMMap(on_cpu, CL_TRUE, CL_MAP_READ, p, n * 4, 0, nullptr, nullptr));
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(p[i], k) << "at " << i;
    ASSERT_CL(CL_SUCCESS, clEnqueueSVMUnmap(on_cpu, p, 0, nullptr, nullptr));
    ASSERT_CL(CL_SUCCESS, clFinish(on_cpu));
    clSVMFree(context, p);
  }
  clReleaseDevice(mixed);
}

}  // namespace
