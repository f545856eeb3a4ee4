// Fine-grain SVM and imported host memory on device groups: a group reports the SVM every member
// has, every member maps the pages in place, and kernels over them split without moving a byte:
// on two emulated GPUs (memories of their own) what the parts write meets in the host's pages,
// which the host reads without a map. Global atomics still keep a kernel whole on one member.
#include <CL/cl_manifold.h>

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "group_svm_fixture.h"

using namespace group_test;

namespace {

constexpr cl_svm_mem_flags kFineGrain = CL_MEM_READ_WRITE | CL_MEM_SVM_FINE_GRAIN_BUFFER;

class GroupFineSvm : public GroupSvm {
 protected:
  void SetUp() override {
    GroupSvm::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (emulated_.size() < 2) GTEST_SKIP() << "needs two emulated GPUs";
    if (!(svm_caps(emulated_[0]) & CL_DEVICE_SVM_FINE_GRAIN_BUFFER))
      GTEST_SKIP() << "the emulated GPUs have no fine-grain SVM";
  }

  // The blur of kSource `steps` times back and forth over `n` floats, as the host computes it.
  static std::vector<float> blurred(std::vector<float> a, int steps) {
    std::vector<float> b(a.size());
    const auto once = [](const std::vector<float>& in, std::vector<float>& out) {
      const size_t n = in.size();
      for (size_t i = 0; i < n; ++i) {
        const float left = i > 0 ? in[i - 1] : in[i];
        const float right = i + 1 < n ? in[i + 1] : in[i];
        out[i] = (left + in[i] + right) / 3.0f;
      }
    };
    for (int step = 0; step < steps; ++step) {
      once(a, b);
      once(b, a);
    }
    return a;
  }
};

TEST_F(GroupFineSvm, ReportsTheSvmEveryMemberHas) {
  GroupRef halves, gpus, mixed;
  ASSERT_TRUE(emulated_pair(gpus));
  EXPECT_EQ(svm_caps(gpus.id), svm_caps(emulated_[0]) & svm_caps(emulated_[1]));
  EXPECT_TRUE(svm_caps(gpus.id) & CL_DEVICE_SVM_FINE_GRAIN_BUFFER);
  make_group(mixed, {emulated_[0], cpu_});
  EXPECT_EQ(svm_caps(mixed.id), svm_caps(emulated_[0]) & svm_caps(cpu_));
  if (cpu_halves(halves)) {
    // One memory: the halves keep all the CPU's kinds, system pointers and atomics included.
    EXPECT_EQ(svm_caps(halves.id), svm_caps(cpu_));
  }
  // Imported host memory where every member imports it.
  const auto has_import = [](cl_device_id d) {
    return hasWord(deviceString(d, CL_DEVICE_EXTENSIONS), "cl_arm_import_memory");
  };
  EXPECT_EQ(has_import(gpus.id), has_import(emulated_[0]) && has_import(emulated_[1]));
  // The query's own rules hold for a group too.
  cl_device_svm_capabilities caps = 0;
  size_t size = 0;
  EXPECT_CL(CL_SUCCESS, clGetDeviceInfo(gpus.id, CL_DEVICE_SVM_CAPABILITIES, 0, nullptr, &size));
  EXPECT_EQ(size, sizeof caps);
  EXPECT_CL(CL_INVALID_VALUE,
            clGetDeviceInfo(gpus.id, CL_DEVICE_SVM_CAPABILITIES, 1, &caps, nullptr));
}

// The host writes and reads the allocations directly, never mapping them; a copy on a member's
// own memory would leave the host's pages as they were.
TEST_F(GroupFineSvm, KernelsSplitOverMembersOfTheirOwnMemoriesInPlace) {
  GroupRef gpus, mixed;
  ASSERT_TRUE(emulated_pair(gpus));
  make_group(mixed, {emulated_[0], cpu_});
  constexpr size_t kN = 3000, kLocal = 64, kGlobal = 3008;
  constexpr int kSteps = 5;
  std::vector<float> init(kN);
  for (size_t i = 0; i < kN; ++i) init[i] = float((i * 37) % 101);
  const std::vector<float> expected = blurred(init, kSteps);
  for (cl_device_id group : {gpus.id, mixed.id}) {
    SCOPED_TRACE(group == gpus.id ? "emulated GPUs" : "emulated GPU and CPU");
    Session s = open({group});
    auto* a = static_cast<float*>(clSVMAlloc(s.context, kFineGrain, kN * sizeof(float), 0));
    auto* b = static_cast<float*>(clSVMAlloc(s.context, kFineGrain, kN * sizeof(float), 0));
    ASSERT_NE(a, nullptr);
    ASSERT_NE(b, nullptr);
    std::copy(init.begin(), init.end(), a);
    std::fill(b, b + kN, -9.0f);
    Kernel k = kernel(s, "blur");
    const int n = int(kN);
    ASSERT_CL(CL_SUCCESS, clSetKernelArg(k, 2, sizeof n, &n));
    for (int step = 0; step < kSteps; ++step) {
      ASSERT_CL(CL_SUCCESS, clSetKernelArgSVMPointer(k, 0, a));
      ASSERT_CL(CL_SUCCESS, clSetKernelArgSVMPointer(k, 1, b));
      run(s.queues[0], k, kGlobal, kLocal);
      ASSERT_CL(CL_SUCCESS, clSetKernelArgSVMPointer(k, 0, b));
      ASSERT_CL(CL_SUCCESS, clSetKernelArgSVMPointer(k, 1, a));
      run(s.queues[0], k, kGlobal, kLocal);
    }
    ASSERT_CL(CL_SUCCESS, clFinish(s.queues[0]));
    for (size_t i = 0; i < kN; ++i) ASSERT_FLOAT_EQ(a[i], expected[i]) << "at " << i;
    EXPECT_EQ(members_with_work(k, group), 2u);
    clSVMFree(s.context, a);
    clSVMFree(s.context, b);
  }
}

// Writes at indices the compiler cannot prove need no proof in pages every member shares; into
// coarse-grain memory the same kernel runs whole. Global atomics run whole either way.
TEST_F(GroupFineSvm, UnprovenWritesSplitAndAtomicsRunWhole) {
  GroupRef gpus;
  ASSERT_TRUE(emulated_pair(gpus));
  Session s = open({gpus.id});
  cl_command_queue q = s.queues[0];
  constexpr size_t n = 4096, local = 64;
  auto* index = static_cast<cl_int*>(clSVMAlloc(s.context, kFineGrain, n * 4, 0));
  auto* out = static_cast<cl_int*>(clSVMAlloc(s.context, kFineGrain, n * 4, 0));
  auto* coarse = static_cast<cl_int*>(clSVMAlloc(s.context, CL_MEM_READ_WRITE, n * 4, 0));
  auto* bins = static_cast<cl_int*>(clSVMAlloc(s.context, kFineGrain, 16 * 4, 0));
  ASSERT_TRUE(index && out && coarse && bins);
  // A permutation that sends each work-group's items into other groups' slots.
  for (size_t i = 0; i < n; ++i) index[i] = cl_int((i * 1031) % n);
  std::fill(out, out + n, -1);
  Kernel scatter = kernel(s, "scatter");
  ASSERT_CL(CL_SUCCESS, clSetKernelArgSVMPointer(scatter, 0, index));
  ASSERT_CL(CL_SUCCESS, clSetKernelArgSVMPointer(scatter, 1, out));
  run(q, scatter, n, local);
  ASSERT_CL(CL_SUCCESS, clFinish(q));
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(out[size_t(index[i])], cl_int(i)) << "item " << i;
  EXPECT_EQ(members_with_work(scatter, gpus.id), 2u);

  write(q, coarse, std::vector<cl_int>(n, -1));
  ASSERT_CL(CL_SUCCESS, clSetKernelArgSVMPointer(scatter, 1, coarse));
  run(q, scatter, n, local);
  const std::vector<cl_int> got = read(q, coarse, n);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(got[size_t(index[i])], cl_int(i)) << "item " << i;
  EXPECT_EQ(members_with_work(scatter, gpus.id), 1u);

  std::fill(bins, bins + 16, 0);
  std::vector<cl_int> expected(16, 0);
  for (size_t i = 0; i < n; ++i) ++expected[size_t(index[i] & 15)];
  Kernel histogram = kernel(s, "histogram");
  ASSERT_CL(CL_SUCCESS, clSetKernelArgSVMPointer(histogram, 0, index));
  ASSERT_CL(CL_SUCCESS, clSetKernelArgSVMPointer(histogram, 1, bins));
  run(q, histogram, n, local);
  ASSERT_CL(CL_SUCCESS, clFinish(q));
  EXPECT_EQ(std::vector<cl_int>(bins, bins + 16), expected);
  EXPECT_EQ(members_with_work(histogram, gpus.id), 1u);
  for (void* p : {static_cast<void*>(index), static_cast<void*>(out), static_cast<void*>(coarse),
                  static_cast<void*>(bins)})
    clSVMFree(s.context, p);
}

// Allocations a kernel reaches only through clSetKernelExecInfo: fine-grain ones are the members'
// pages too, so the kernel is not held whole for them.
TEST_F(GroupFineSvm, ExecInfoPointersToFineGrainAllocationsAreReached) {
  GroupRef gpus;
  ASSERT_TRUE(emulated_pair(gpus));
  Session s = open({gpus.id});
  constexpr size_t n = 2048;
  auto* a = static_cast<float*>(clSVMAlloc(s.context, kFineGrain, n * 4, 0));
  auto* b = static_cast<float*>(clSVMAlloc(s.context, kFineGrain, n * 4, 0));
  auto* sum = static_cast<float*>(clSVMAlloc(s.context, kFineGrain, n * 4, 0));
  ASSERT_TRUE(a && b && sum);
  for (size_t i = 0; i < n; ++i) {
    a[i] = float(i);
    b[i] = float(3 * i + 1);
    sum[i] = -1;
  }
  Kernel add = kernel(s, "add");
  void* reached[] = {a, b, sum};
  ASSERT_CL(CL_SUCCESS,
            clSetKernelExecInfo(add, CL_KERNEL_EXEC_INFO_SVM_PTRS, sizeof reached, reached));
  ASSERT_CL(CL_SUCCESS, clSetKernelArgSVMPointer(add, 0, a));
  ASSERT_CL(CL_SUCCESS, clSetKernelArgSVMPointer(add, 1, b));
  ASSERT_CL(CL_SUCCESS, clSetKernelArgSVMPointer(add, 2, sum));
  const int count = int(n);
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(add, 3, sizeof count, &count));
  run(s.queues[0], add, n, 64);
  ASSERT_CL(CL_SUCCESS, clFinish(s.queues[0]));
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(sum[i], float(4 * i + 1)) << "at " << i;
  EXPECT_EQ(members_with_work(add, gpus.id), 2u);
  for (void* p : {static_cast<void*>(a), static_cast<void*>(b), static_cast<void*>(sum)})
    clSVMFree(s.context, p);
}

// cl_arm_import_memory on a group: the application's pages are each member's, used in place.
TEST_F(GroupFineSvm, ImportedHostMemoryIsUsedInPlaceByEveryMember) {
  GroupRef gpus;
  ASSERT_TRUE(emulated_pair(gpus));
  if (!hasWord(deviceString(gpus.id, CL_DEVICE_EXTENSIONS), "cl_arm_import_memory"))
    GTEST_SKIP() << "the emulated GPUs do not import host memory";
  using ImportFn = cl_mem(CL_API_CALL*)(cl_context, cl_mem_flags, const cl_import_properties_arm*,
                                        void*, size_t, cl_int*);
  const auto import = reinterpret_cast<ImportFn>(
      clGetExtensionFunctionAddressForPlatform(platform_, "clImportMemoryARM"));
  ASSERT_NE(import, nullptr);
  Session s = open({gpus.id});
  constexpr size_t n = 4096, bytes = n * sizeof(float);
  void* pages =
      mmap(nullptr, 3 * bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(pages, MAP_FAILED);
  auto* a = static_cast<float*>(pages);
  float* b = a + n;
  float* sum = b + n;
  for (size_t i = 0; i < n; ++i) {
    a[i] = float(i);
    b[i] = 0.5f * float(i);
    sum[i] = -1;
  }
  cl_int err = -1;
  Mem in_a(import(s.context, CL_MEM_READ_WRITE, nullptr, a, bytes, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  Mem in_b(import(s.context, CL_MEM_READ_WRITE, nullptr, b, bytes, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  Mem out(import(s.context, CL_MEM_READ_WRITE, nullptr, sum, bytes, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  Kernel add = kernel(s, "add");
  cl_mem args[] = {in_a, in_b, out};
  for (cl_uint i = 0; i < 3; ++i)
    ASSERT_CL(CL_SUCCESS, clSetKernelArg(add, i, sizeof(cl_mem), &args[i]));
  const int count = int(n);
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(add, 3, sizeof count, &count));
  run(s.queues[0], add, n, 64);
  ASSERT_CL(CL_SUCCESS, clFinish(s.queues[0]));
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(sum[i], 1.5f * float(i)) << "at " << i;
  EXPECT_EQ(members_with_work(add, gpus.id), 2u);
  in_a.reset();
  in_b.reset();
  out.reset();
  munmap(pages, 3 * bytes);
}

// The CPU's halves reach any host pointer: system SVM splits like any kernel.
TEST_F(GroupFineSvm, CpuHalvesSplitKernelsOverSystemPointers) {
  GroupRef halves;
  if (!cpu_halves(halves)) GTEST_SKIP() << "needs a CPU of two compute units";
  if (!(svm_caps(halves.id) & CL_DEVICE_SVM_FINE_GRAIN_SYSTEM)) GTEST_SKIP() << "no system SVM";
  Session s = open({halves.id});
  constexpr size_t n = 4096;
  std::vector<float> a(n), b(n), sum(n, -1);
  std::iota(a.begin(), a.end(), 0.0f);
  for (size_t i = 0; i < n; ++i) b[i] = float(n - i);
  Kernel add = kernel(s, "add");
  ASSERT_CL(CL_SUCCESS, clSetKernelArgSVMPointer(add, 0, a.data()));
  ASSERT_CL(CL_SUCCESS, clSetKernelArgSVMPointer(add, 1, b.data()));
  ASSERT_CL(CL_SUCCESS, clSetKernelArgSVMPointer(add, 2, sum.data()));
  const int count = int(n);
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(add, 3, sizeof count, &count));
  run(s.queues[0], add, n, 64);
  ASSERT_CL(CL_SUCCESS, clFinish(s.queues[0]));
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(sum[i], float(n)) << "at " << i;
  EXPECT_EQ(members_with_work(add, halves.id), 2u);
}

}  // namespace
