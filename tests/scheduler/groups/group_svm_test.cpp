// Coarse-grain SVM on device groups: the SVM commands on a group's queues, and
// kernels with SVM pointer arguments on the CPU's halves (one memory: they split like any kernel)
// and on two emulated GPUs (memories of their own: they split where the compiler proved the
// writes, else run whole on one member). Results are compared element by element with the CPU
// alone, and the allocation's bytes are checked on the host and on other devices afterwards.
#include <CL/cl_manifold.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <numeric>
#include <regex>
#include <set>
#include <tuple>

#include "group_svm_fixture.h"

using namespace group_test;

namespace {

// One line of the migration trace (MANIFOLD_TRACE_MIGRATION): how a command uses a range of one
// memory object at a place, and the copies it gets there (offset, size, from which place).
struct TracedUse {
  std::string mem;
  char access = 0;
  size_t offset = 0, size = 0;
  unsigned place = 0;
  std::set<std::tuple<size_t, size_t, unsigned>> moves;
};

// The trace lines the platform prints to stderr while `work` runs.
std::vector<TracedUse> traced(const std::function<void()>& work) {
  std::fflush(stderr);
  char path[] = "/tmp/manifold_group_svm_XXXXXX";
  const int file = mkstemp(path);
  const int saved = dup(2);
  EXPECT_GE(file, 0);
  EXPECT_GE(saved, 0);
  dup2(file, 2);
  work();
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  close(file);
  std::ifstream in(path);
  std::vector<TracedUse> uses;
  const std::regex line(R"(\[mig\] .* mem=(\S+) ([ROU]) \[(\d+),\+(\d+)\) at (\d+):(.*))");
  const std::regex move(R"(move\[(\d+),\+(\d+)\) from (\d+))");
  for (std::string text; std::getline(in, text);) {
    std::smatch m;
    if (!std::regex_match(text, m, line)) continue;
    TracedUse u{m[1], m[2].str()[0], std::stoul(m[3]), std::stoul(m[4]), unsigned(std::stoul(m[5])),
                {}};
    const std::string rest = m[6];
    for (std::sregex_iterator it(rest.begin(), rest.end(), move), end; it != end; ++it)
      u.moves.insert({std::stoul((*it)[1]), std::stoul((*it)[2]), unsigned(std::stoul((*it)[3]))});
    uses.push_back(std::move(u));
  }
  unlink(path);
  return uses;
}

TEST_F(GroupSvm, CommandsOnAGroupQueueAndTheirErrors) {
  GroupRef group;
  if (!emulated_pair(group)) GTEST_SKIP() << "needs two emulated GPUs";
  Session s = open({group.id});
  cl_command_queue q = s.queues[0];
  constexpr size_t n = 1000;
  auto* a = static_cast<cl_int*>(clSVMAlloc(s.context, CL_MEM_READ_WRITE, n * 4, 0));
  auto* b = static_cast<cl_int*>(clSVMAlloc(s.context, CL_MEM_READ_WRITE, n * 4, 0));
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  const cl_int pattern = 0x01020304;
  ASSERT_CL(CL_SUCCESS,
            clEnqueueSVMMemFill(q, a, &pattern, sizeof pattern, n * 4, 0, nullptr, nullptr));
  ASSERT_CL(CL_SUCCESS, clEnqueueSVMMemcpy(q, CL_FALSE, b, a, n * 4, 0, nullptr, nullptr));
  const cl_int seven = 7;
  ASSERT_CL(CL_SUCCESS,
            clEnqueueSVMMemFill(q, b + 10, &seven, sizeof seven, 4 * 4, 0, nullptr, nullptr));
  std::vector<cl_int> got = read(q, b, n);
  for (size_t i = 0; i < n; ++i)
    ASSERT_EQ(got[i], i >= 10 && i < 14 ? seven : pattern) << "at " << i;
  std::vector<cl_int> host(n);
  ASSERT_CL(CL_SUCCESS, clEnqueueSVMMemcpy(q, CL_TRUE, host.data(), b, n * 4, 0, nullptr, nullptr));
  EXPECT_EQ(host, got);

  // The spec's errors, on the group's queue as on any device's.
  EXPECT_CL(CL_INVALID_VALUE,
            clEnqueueSVMMap(q, CL_TRUE, CL_MAP_READ, nullptr, 4, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueSVMMap(q, CL_TRUE, CL_MAP_READ, a, 0, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueSVMMemcpy(q, CL_TRUE, nullptr, a, 4, 0, nullptr, nullptr));
  EXPECT_CL(CL_MEM_COPY_OVERLAP, clEnqueueSVMMemcpy(q, CL_TRUE, a + 1, a, 8, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueSVMMemFill(q, a, &pattern, 3, 12, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE,
            clEnqueueSVMMemFill(q, a, &pattern, sizeof pattern, n * 4 + 4, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_EVENT_WAIT_LIST, clEnqueueSVMUnmap(q, a, 1, nullptr, nullptr));
  Kernel k = kernel(s, "add");
  EXPECT_CL(CL_INVALID_ARG_INDEX, clSetKernelArgSVMPointer(k, 9, a));
  EXPECT_CL(CL_INVALID_VALUE,
            clSetKernelExecInfo(k, CL_KERNEL_EXEC_INFO_SVM_PTRS, 3, std::vector<void*>{a}.data()));
  clSVMFree(s.context, a);
  clSVMFree(s.context, b);
}

TEST_F(GroupSvm, CpuHalvesSplitSvmKernelsLikeTheCpuAlone) {
  GroupRef group;
  if (!cpu_halves(group)) GTEST_SKIP() << "needs a CPU of two compute units";
  expect_same_as_cpu_alone(group.id, 2);
}

TEST_F(GroupSvm, EmulatedGpusSplitSvmKernelsByProvenWrites) {
  GroupRef group;
  if (!emulated_pair(group)) GTEST_SKIP() << "needs two emulated GPUs";
  expect_same_as_cpu_alone(group.id, 2);
}

// Global atomics, data-dependent writes and allocations reached through memory keep an SVM kernel
// whole on one member of a group of memories of their own; on the CPU's halves atomics split.
TEST_F(GroupSvm, UnprovableSvmKernelsRunWholeOnMembersOfTheirOwnMemories) {
  GroupRef gpus, halves;
  if (!emulated_pair(gpus)) GTEST_SKIP() << "needs two emulated GPUs";
  cpu_halves(halves);  // where the CPU has two compute units
  constexpr size_t n = 4096;
  std::vector<cl_int> values(n), index(n);
  for (size_t i = 0; i < n; ++i) values[i] = cl_int((i * 7) % 23);
  std::iota(index.begin(), index.end(), 0);
  std::reverse(index.begin(), index.end());
  std::vector<cl_int> bins_expected(16, 0);
  for (cl_int v : values) ++bins_expected[size_t(v & 15)];
  for (cl_device_id group : {gpus.id, halves.id}) {
    if (!group) continue;
    SCOPED_TRACE(group == gpus.id ? "emulated GPUs" : "CPU halves");
    const size_t whole_members = group == gpus.id ? 1 : 2;
    Session s = open({group});
    cl_command_queue q = s.queues[0];
    auto* in = static_cast<cl_int*>(clSVMAlloc(s.context, CL_MEM_READ_WRITE, n * 4, 0));
    auto* bins = static_cast<cl_int*>(clSVMAlloc(s.context, CL_MEM_READ_WRITE, 16 * 4, 0));
    auto* out = static_cast<cl_int*>(clSVMAlloc(s.context, CL_MEM_READ_WRITE, n * 4, 0));
    ASSERT_TRUE(in && bins && out);
    write(q, in, values);
    write(q, bins, std::vector<cl_int>(16, 0));
    Kernel histogram = kernel(s, "histogram");
    ASSERT_CL(CL_SUCCESS, clSetKernelArgSVMPointer(histogram, 0, in));
    ASSERT_CL(CL_SUCCESS, clSetKernelArgSVMPointer(histogram, 1, bins));
    run(q, histogram, n, 64);
    EXPECT_EQ(read(q, bins, 16), bins_expected);
    EXPECT_EQ(members_with_work(histogram, group), whole_members);

    write(q, in, index);
    Kernel scatter = kernel(s, "scatter");
    ASSERT_CL(CL_SUCCESS, clSetKernelArgSVMPointer(scatter, 0, in));
    ASSERT_CL(CL_SUCCESS, clSetKernelArgSVMPointer(scatter, 1, out));
    run(q, scatter, n, 64);
    const std::vector<cl_int> scattered = read(q, out, n);
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(scattered[size_t(index[i])], cl_int(i)) << "at " << i;
    EXPECT_EQ(members_with_work(scatter, group), whole_members);

    // A proven kernel, but told it reaches an allocation through memory: whole where the
    // members' memories differ.
    auto* f = static_cast<float*>(clSVMAlloc(s.context, CL_MEM_READ_WRITE, n * 4, 0));
    ASSERT_NE(f, nullptr);
    std::vector<float> ramp(n);
    std::iota(ramp.begin(), ramp.end(), 0.5f);
    write(q, f, ramp);
    Kernel add = kernel(s, "add");
    const int count = int(n);
    ASSERT_CL(CL_SUCCESS, clSetKernelArgSVMPointer(add, 0, f));
    ASSERT_CL(CL_SUCCESS, clSetKernelArgSVMPointer(add, 1, f));
    ASSERT_CL(CL_SUCCESS, clSetKernelArgSVMPointer(add, 2, out));
    ASSERT_CL(CL_SUCCESS, clSetKernelArg(add, 3, sizeof count, &count));
    void* reached[] = {bins};
    ASSERT_CL(CL_SUCCESS,
              clSetKernelExecInfo(add, CL_KERNEL_EXEC_INFO_SVM_PTRS, sizeof reached, reached));
    run(q, add, n, 64);
    const std::vector<float> sums = read(q, reinterpret_cast<float*>(out), n);
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(sums[i], ramp[i] + ramp[i]) << "at " << i;
    EXPECT_EQ(members_with_work(add, group), whole_members);
    for (void* p : {static_cast<void*>(in), static_cast<void*>(bins), static_cast<void*>(out),
                    static_cast<void*>(f)})
      clSVMFree(s.context, p);
  }
}

// One context of the group, one of its members and the CPU: what the group's parts write is
// current for the member's kernels, the CPU's commands and the host, and what those write is
// current for the group's next launch.
TEST_F(GroupSvm, BytesStayValidOnEveryDeviceOfTheContext) {
  GroupRef group;
  if (!emulated_pair(group)) GTEST_SKIP() << "needs two emulated GPUs";
  Session s = open({group.id, emulated_[1], cpu_});
  cl_command_queue on_group = s.queues[0], on_member = s.queues[1], on_cpu = s.queues[2];
  constexpr size_t n = 5000, global = 5120, local = 128;
  auto* a = static_cast<float*>(clSVMAlloc(s.context, CL_MEM_READ_WRITE, n * 4, 0));
  auto* b = static_cast<float*>(clSVMAlloc(s.context, CL_MEM_READ_WRITE, n * 4, 0));
  auto* c = static_cast<float*>(clSVMAlloc(s.context, CL_MEM_READ_WRITE, n * 4, 0));
  ASSERT_TRUE(a && b && c);
  std::vector<float> va(n), vb(n);
  std::iota(va.begin(), va.end(), 0.0f);
  std::iota(vb.begin(), vb.end(), 100.0f);
  write(on_cpu, a, va);
  write(on_member, b, vb);
  Kernel add = kernel(s, "add");
  const int count = int(n);
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(add, 3, sizeof count, &count));
  const auto launch = [&](cl_command_queue q, float* x, float* y, float* out) {
    ASSERT_CL(CL_SUCCESS, clSetKernelArgSVMPointer(add, 0, x));
    ASSERT_CL(CL_SUCCESS, clSetKernelArgSVMPointer(add, 1, y));
    ASSERT_CL(CL_SUCCESS, clSetKernelArgSVMPointer(add, 2, out));
    run(q, add, global, local);
    ASSERT_CL(CL_SUCCESS, clFinish(q));
  };
  launch(on_group, a, b, c);  // c = a + b, in parts
  EXPECT_EQ(members_with_work(add, group.id), 2u);
  launch(on_member, c, a, b);  // b = c + a on the member alone
  launch(on_group, b, c, a);   // a = b + c, in parts again
  std::vector<float> expect_c(n), expect_b(n), expect_a(n);
  for (size_t i = 0; i < n; ++i) {
    expect_c[i] = va[i] + vb[i];
    expect_b[i] = expect_c[i] + va[i];
    expect_a[i] = expect_b[i] + expect_c[i];
  }
  EXPECT_EQ(read(on_cpu, a, n), expect_a);
  EXPECT_EQ(read(on_group, b, n), expect_b);
  std::vector<float> host(n);
  ASSERT_CL(CL_SUCCESS,
            clEnqueueSVMMemcpy(on_member, CL_TRUE, host.data(), c, n * 4, 0, nullptr, nullptr));
  EXPECT_EQ(host, expect_c);
  // The CPU overwrites a piece the group then reads.
  const float zero = 0.0f;
  ASSERT_CL(CL_SUCCESS,
            clEnqueueSVMMemFill(on_cpu, c + 1000, &zero, 4, 500 * 4, 0, nullptr, nullptr));
  ASSERT_CL(CL_SUCCESS, clFinish(on_cpu));
  launch(on_group, c, c, b);  // b = 2c
  const std::vector<float> doubled = read(on_member, b, n);
  for (size_t i = 0; i < n; ++i)
    ASSERT_EQ(doubled[i], i >= 1000 && i < 1500 ? 0.0f : 2 * expect_c[i]) << "at " << i;
  clSVMFree(s.context, a);
  clSVMFree(s.context, b);
  clSVMFree(s.context, c);
}

// Where the bytes are, from the migration trace (a ctest entry sets MANIFOLD_TRACE_MIGRATION): on
// emulated GPUs an allocation's copies share the host's pages, so only the residency shows whether
// each part left its writes current on its own member, at the offset of the kernel's pointer, and
// whether the host and a whole launch then copy each range from the member that wrote it.
TEST_F(GroupSvm, PartsLeaveTheirWritesCurrentOnTheirMembers) {
  if (!std::getenv("MANIFOLD_TRACE_MIGRATION")) GTEST_SKIP() << "needs MANIFOLD_TRACE_MIGRATION";
  GroupRef group;
  if (!emulated_pair(group)) GTEST_SKIP() << "needs two emulated GPUs";
  Session s = open({group.id});
  cl_command_queue q = s.queues[0];
  constexpr size_t kSkip = 64, n = 4096, local = 64;
  constexpr size_t bytes = (kSkip + n) * 4, half = n / 2 * 4, start = kSkip * 4;
  auto* a = static_cast<float*>(clSVMAlloc(s.context, CL_MEM_READ_WRITE, n * 4, 0));
  auto* out = static_cast<float*>(clSVMAlloc(s.context, CL_MEM_READ_WRITE, bytes, 0));
  auto* index = static_cast<cl_int*>(clSVMAlloc(s.context, CL_MEM_READ_WRITE, n * 4, 0));
  ASSERT_TRUE(a && out && index);
  std::vector<float> ramp(n);
  std::iota(ramp.begin(), ramp.end(), 1.0f);
  write(q, a, ramp);
  write(q, out, std::vector<float>(kSkip + n, -1.0f));
  std::vector<cl_int> reversed(n);
  for (size_t i = 0; i < n; ++i) reversed[i] = cl_int(kSkip + n - 1 - i);
  write(q, index, reversed);
  ASSERT_CL(CL_SUCCESS, clFinish(q));

  Kernel add = kernel(s, "add");
  const int count = int(n);
  ASSERT_CL(CL_SUCCESS, clSetKernelArgSVMPointer(add, 0, a));
  ASSERT_CL(CL_SUCCESS, clSetKernelArgSVMPointer(add, 1, a));
  ASSERT_CL(CL_SUCCESS, clSetKernelArgSVMPointer(add, 2, out + kSkip));
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(add, 3, sizeof count, &count));
  const std::vector<TracedUse> launch = traced([&] {
    run(q, add, n, local);
    ASSERT_CL(CL_SUCCESS, clFinish(q));
  });
  ASSERT_EQ(members_with_work(add, group.id), 2u);
  // Only `out` is written: one range per part, each half of what the pointer reaches.
  std::vector<TracedUse> writes;
  for (const TracedUse& u : launch)
    if (u.access != 'R') writes.push_back(u);
  ASSERT_EQ(writes.size(), 2u);
  std::sort(writes.begin(), writes.end(),
            [](const TracedUse& x, const TracedUse& y) { return x.offset < y.offset; });
  EXPECT_EQ(writes[0].access, 'O');
  EXPECT_EQ(writes[0].offset, start);
  EXPECT_EQ(writes[0].size, half);
  EXPECT_EQ(writes[1].offset, start + half);
  EXPECT_EQ(writes[1].size, half);
  const unsigned first = writes[0].place, second = writes[1].place;
  EXPECT_NE(first, 0u);
  EXPECT_NE(second, 0u);
  EXPECT_NE(first, second);
  const std::string out_mem = writes[0].mem;
  EXPECT_EQ(writes[1].mem, out_mem);

  // A whole launch (a data-dependent write) on one member gets the other member's half there.
  Kernel scatter = kernel(s, "scatter");
  ASSERT_CL(CL_SUCCESS, clSetKernelArgSVMPointer(scatter, 0, index));
  ASSERT_CL(CL_SUCCESS, clSetKernelArgSVMPointer(scatter, 1, out));
  const std::vector<TracedUse> whole = traced([&] {
    run(q, scatter, n, local);
    ASSERT_CL(CL_SUCCESS, clFinish(q));
  });
  ASSERT_EQ(members_with_work(scatter, group.id), 1u);
  std::vector<TracedUse> on_out;
  for (const TracedUse& u : whole)
    if (u.mem == out_mem) on_out.push_back(u);
  ASSERT_EQ(on_out.size(), 1u);
  const TracedUse& w = on_out[0];
  EXPECT_EQ(w.access, 'U');
  EXPECT_EQ(w.offset, 0u);
  EXPECT_EQ(w.size, bytes);
  ASSERT_TRUE(w.place == first || w.place == second) << "place " << w.place;
  const std::set<std::tuple<size_t, size_t, unsigned>> expected_moves =
      w.place == first
          ? std::set<std::tuple<size_t, size_t, unsigned>>{{0, start, 0},
                                                           {start + half, half, second}}
          : std::set<std::tuple<size_t, size_t, unsigned>>{{0, start, 0}, {start, half, first}};
  EXPECT_EQ(w.moves, expected_moves);

  // The host's map copies everything from that member.
  std::vector<cl_int> got;
  const std::vector<TracedUse> mapped =
      traced([&] { got = read(q, reinterpret_cast<cl_int*>(out), kSkip + n); });
  std::vector<TracedUse> map_out;
  for (const TracedUse& u : mapped)
    if (u.mem == out_mem) map_out.push_back(u);
  ASSERT_EQ(map_out.size(), 1u);
  EXPECT_EQ(map_out[0].place, 0u);
  EXPECT_EQ(map_out[0].moves,
            (std::set<std::tuple<size_t, size_t, unsigned>>{{0, bytes, w.place}}));
  // scatter wrote i at kSkip + n - 1 - i, over add's sums; the bytes before stay the host's.
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(got[kSkip + n - 1 - i], cl_int(i)) << "at " << i;
  const float minus_one = -1.0f;
  cl_int minus_one_bits = 0;
  std::memcpy(&minus_one_bits, &minus_one, 4);
  for (size_t i = 0; i < kSkip; ++i) ASSERT_EQ(got[i], minus_one_bits) << "at " << i;
  clSVMFree(s.context, a);
  clSVMFree(s.context, out);
  clSVMFree(s.context, index);
}

}  // namespace
