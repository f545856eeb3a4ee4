// What the SVM tests of device groups share: groups the application makes with equal shares
// (the CPU's halves, two emulated GPUs), a context with one queue per device and a program of
// small kernels, SVM reads and writes through maps, and a stencil over two allocations whose
// result is compared with the CPU alone.
#pragma once

#include <algorithm>
#include <vector>

#include "group_fixture.h"

namespace group_test {

inline const char* kSource = R"CLC(
kernel void add(global const float* a, global const float* b, global float* out, int n) {
  int i = get_global_id(0);
  if (i < n) out[i] = a[i] + b[i];
}
kernel void blur(global const float* in, global float* out, int n) {
  int i = get_global_id(0);
  if (i >= n) return;
  float left = i > 0 ? in[i - 1] : in[i];
  float right = i + 1 < n ? in[i + 1] : in[i];
  out[i] = (left + in[i] + right) / 3.0f;
}
kernel void histogram(global const int* in, global int* bins) {
  atomic_add(&bins[in[get_global_id(0)] & 15], 1);
}
kernel void scatter(global const int* index, global int* out) {
  int i = get_global_id(0);
  out[index[i]] = i;
}
)CLC";

inline cl_device_svm_capabilities svm_caps(cl_device_id d) {
  cl_device_svm_capabilities caps = ~cl_device_svm_capabilities(0);
  EXPECT_CL(CL_SUCCESS,
            clGetDeviceInfo(d, CL_DEVICE_SVM_CAPABILITIES, sizeof caps, &caps, nullptr));
  return caps;
}

// A group released at the end of the scope.
struct GroupRef {
  cl_device_id id = nullptr;
  ~GroupRef() {
    if (id) clReleaseDevice(id);
  }
};

class GroupSvm : public GroupFixture {
 protected:
  void SetUp() override {
    GroupFixture::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (!(svm_caps(cpu_) & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER)) GTEST_SKIP() << "no SVM";
  }

  // A group of `members` with equal fixed shares (every member takes a part where it can).
  void make_group(GroupRef& group, std::vector<cl_device_id> members) {
    std::vector<cl_float> shares(members.size(), 1.0f);
    cl_device_group_properties_mfld props[3] = {CL_DEVICE_GROUP_SHARES_MFLD,
                                                cl_device_group_properties_mfld(shares.data()), 0};
    cl_int err = -1;
    group.id = create_(platform_, props, cl_uint(members.size()), members.data(), &err);
    ASSERT_ERR(CL_SUCCESS, err);
  }
  bool cpu_halves(GroupRef& group) {
    const std::vector<cl_device_id> halves = GroupFixture::cpu_halves();
    if (halves.size() < 2) return false;
    make_group(group, halves);
    // The group holds its members.
    for (cl_device_id half : halves) clReleaseDevice(half);
    return group.id != nullptr;
  }
  bool emulated_pair(GroupRef& group) {
    if (emulated_.size() < 2) return false;
    make_group(group, {emulated_[0], emulated_[1]});
    return group.id != nullptr;
  }

  struct Session {
    Context context;
    std::vector<Queue> queues;  // one per device, in order
    Program program;
  };
  static Session open(std::vector<cl_device_id> devices) {
    Session s;
    cl_int err = -1;
    s.context = Context(
        clCreateContext(nullptr, cl_uint(devices.size()), devices.data(), nullptr, nullptr, &err));
    EXPECT_ERR(CL_SUCCESS, err);
    for (cl_device_id d : devices) {
      s.queues.emplace_back(clCreateCommandQueueWithProperties(s.context, d, nullptr, &err));
      EXPECT_ERR(CL_SUCCESS, err);
    }
    s.program = Program(clCreateProgramWithSource(s.context, 1, &kSource, nullptr, &err));
    EXPECT_ERR(CL_SUCCESS, err);
    EXPECT_CL(CL_SUCCESS, clBuildProgram(s.program, cl_uint(devices.size()), devices.data(), "",
                                         nullptr, nullptr));
    return s;
  }
  static Kernel kernel(const Session& s, const char* name) {
    cl_int err = -1;
    Kernel k(clCreateKernel(s.program, name, &err));
    EXPECT_ERR(CL_SUCCESS, err);
    return k;
  }
  static size_t members_with_work(cl_kernel kernel, cl_device_id group) {
    std::vector<cl_float> split(8, 0.0f);
    size_t size = 0;
    EXPECT_CL(CL_SUCCESS,
              clGetKernelWorkGroupInfo(kernel, group, CL_KERNEL_GROUP_SPLIT_MFLD,
                                       split.size() * sizeof(cl_float), split.data(), &size));
    split.resize(size / sizeof(cl_float));
    return size_t(std::count_if(split.begin(), split.end(), [](cl_float f) { return f > 0; }));
  }
  static void run(cl_command_queue q, cl_kernel k, size_t global, size_t local) {
    ASSERT_CL(CL_SUCCESS,
              clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, &local, 0, nullptr, nullptr));
  }
  template <class T>
  static void write(cl_command_queue q, T* p, const std::vector<T>& values) {
    ASSERT_CL(CL_SUCCESS, clEnqueueSVMMap(q, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, p,
                                          values.size() * sizeof(T), 0, nullptr, nullptr));
    std::copy(values.begin(), values.end(), p);
    ASSERT_CL(CL_SUCCESS, clEnqueueSVMUnmap(q, p, 0, nullptr, nullptr));
  }
  template <class T>
  static std::vector<T> read(cl_command_queue q, const T* p, size_t n) {
    EXPECT_CL(CL_SUCCESS, clEnqueueSVMMap(q, CL_TRUE, CL_MAP_READ, const_cast<T*>(p), n * sizeof(T),
                                          0, nullptr, nullptr));
    std::vector<T> out(p, p + n);
    EXPECT_CL(CL_SUCCESS, clEnqueueSVMUnmap(q, const_cast<T*>(p), 0, nullptr, nullptr));
    return out;
  }

  // `steps` rounds of blur back and forth between two SVM allocations on `device`, the kernel's
  // pointers kSkip floats into them (bytes before those stay as the host wrote them); every
  // float of the first allocation afterwards. `members` gets how many members ran the last
  // launch where `device` is a group.
  std::vector<float> stencil(cl_device_id device, int steps, size_t* members = nullptr) {
    constexpr size_t kSkip = 64, kN = 3000, kLocal = 64, kGlobal = 3008;
    Session s = open({device});
    cl_command_queue q = s.queues[0];
    const size_t bytes = (kSkip + kN) * sizeof(float);
    auto* a = static_cast<float*>(clSVMAlloc(s.context, CL_MEM_READ_WRITE, bytes, 0));
    auto* b = static_cast<float*>(clSVMAlloc(s.context, CL_MEM_READ_WRITE, bytes, 0));
    EXPECT_NE(a, nullptr);
    EXPECT_NE(b, nullptr);
    if (!a || !b) return {};
    std::vector<float> init(kSkip + kN);
    for (size_t i = 0; i < init.size(); ++i) init[i] = i < kSkip ? -7.0f : float((i * 37) % 101);
    write(q, a, init);
    write(q, b, std::vector<float>(kSkip + kN, -9.0f));
    Kernel k = kernel(s, "blur");
    const int n = int(kN);
    EXPECT_CL(CL_SUCCESS, clSetKernelArg(k, 2, sizeof n, &n));
    for (int step = 0; step < steps; ++step) {
      EXPECT_CL(CL_SUCCESS, clSetKernelArgSVMPointer(k, 0, a + kSkip));
      EXPECT_CL(CL_SUCCESS, clSetKernelArgSVMPointer(k, 1, b + kSkip));
      run(q, k, kGlobal, kLocal);
      EXPECT_CL(CL_SUCCESS, clSetKernelArgSVMPointer(k, 0, b + kSkip));
      EXPECT_CL(CL_SUCCESS, clSetKernelArgSVMPointer(k, 1, a + kSkip));
      run(q, k, kGlobal, kLocal);
    }
    std::vector<float> out = read(q, a, kSkip + kN);
    const std::vector<float> other = read(q, b, kSkip);
    for (size_t i = 0; i < kSkip; ++i) EXPECT_EQ(other[i], -9.0f) << "before b's pointer, at " << i;
    if (members) *members = members_with_work(k, device);
    clSVMFree(s.context, a);
    clSVMFree(s.context, b);
    return out;
  }
  void expect_same_as_cpu_alone(cl_device_id group, size_t expected_members) {
    size_t members = 0;
    const std::vector<float> on_group = stencil(group, 5, &members);
    const std::vector<float> alone = stencil(cpu_, 5);
    ASSERT_EQ(on_group.size(), alone.size());
    for (size_t i = 0; i < alone.size(); ++i) ASSERT_FLOAT_EQ(on_group[i], alone[i]) << "at " << i;
    for (size_t i = 0; i < 64; ++i) ASSERT_EQ(on_group[i], -7.0f) << "before the pointer, at " << i;
    EXPECT_EQ(members, expected_members);
  }
};
}  // namespace group_test
