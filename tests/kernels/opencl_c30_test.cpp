// OpenCL C 3.0's optional language features, on every device that reports them: the
// generic address space, C11 atomics with every order and scope, program-scope variables,
// work-group collectives and non-uniform work-groups, each checked against a host model. A device
// that does not report a feature skips its test with a message.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "device_session.h"

namespace {

using namespace corpus;

class OpenCLC30 : public KernelCorpus {
 protected:
  // Runs `body` on each device that reports every feature in `features`.
  void for_each_device_with(std::initializer_list<const char*> features,
                            const std::function<void(DeviceSession&)>& body) {
    for_each_device([&](DeviceSession& s) {
      for (const char* feature : features)
        if (!s.has_feature(feature)) {
          std::printf("[ SKIPPED  ] %s: %s not reported\n",
                      deviceString(s.device(), CL_DEVICE_NAME).c_str(), feature);
          return;
        }
      body(s);
    });
  }
};

constexpr const char* kCL30 = "-cl-std=CL3.0";
// OpenCL C's cl_mem_fence_flags (opencl-c-base.h), as get_fence returns them.
constexpr int32_t kLocalFence = 1, kGlobalFence = 2;

// ---- generic address space ----

const char* kGenericPointers = R"CL(
int read_through(generic int* p) { return *p; }
kernel void where(global int* data, global int* out) {
  local int shared_value;
  int private_value = 3 + (int)get_local_id(0);
  if (get_local_id(0) == 0) shared_value = 2 + (int)get_group_id(0);
  barrier(CLK_LOCAL_MEM_FENCE);
  size_t i = get_global_id(0);
  generic int* pointers[3] = {data + i, &shared_value, &private_value};
  for (int k = 0; k < 3; ++k) {
    generic int* p = pointers[k];
    out[i * 9 + k * 3 + 0] =
        (to_global(p) != NULL) | (to_local(p) != NULL) << 1 | (to_private(p) != NULL) << 2;
    out[i * 9 + k * 3 + 1] = get_fence(p);
    out[i * 9 + k * 3 + 2] = read_through(p);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  global int* back = (global int*)pointers[0];  // an explicit cast back to the named space
  *back += 100;
}
)CL";

TEST_F(OpenCLC30, GenericPointersKnowWhereTheyPoint) {
  const size_t n = 256, local = 64;
  std::vector<int32_t> data(n);
  for (size_t i = 0; i < n; ++i) data[i] = int32_t(i * 7 + 1);
  for_each_device_with({"__opencl_c_generic_address_space"}, [&](DeviceSession& s) {
    Program program = s.build(kGenericPointers, kCL30);
    if (!program) return;
    Kernel kernel = s.kernel(program, "where");
    Mem Data = s.buffer(data), Out = s.buffer(n * 9 * sizeof(int32_t));
    s.set_args(kernel.get(), Data, Out);
    s.run(kernel.get(), 1, &n, &local);
    const std::vector<int32_t> out = s.read<int32_t>(Out.get(), n * 9);
    const std::vector<int32_t> after = s.read<int32_t>(Data.get(), n);
    for (size_t i = 0; i < n; ++i) {
      SCOPED_TRACE("work-item " + std::to_string(i));
      const int32_t* o = &out[i * 9];
      EXPECT_EQ(o[0], 1) << "global pointer: to_global only";
      EXPECT_EQ(o[1], kGlobalFence);
      EXPECT_EQ(o[2], data[i]);
      EXPECT_EQ(o[3], 2) << "local pointer: to_local only";
      EXPECT_EQ(o[4], kLocalFence);
      EXPECT_EQ(o[5], int32_t(2 + i / local));
      EXPECT_EQ(o[6], 4) << "private pointer: to_private only";
      EXPECT_EQ(o[7] & ~(kGlobalFence | kLocalFence), 0) << "a valid fence";
      EXPECT_EQ(o[8], int32_t(3 + i % local));
      EXPECT_EQ(after[i], data[i] + 100);
    }
  });
}

// CTS generic_address_space language_struct on the CPU: a work-item reads a pointer another
// work-item (of another work-group: on the CPU another thread) wrote; to_private/to_local must
// answer for that other work-item's memory too. Here: private pointers published by one launch
// and classified by other work-items in the next (where they point is all that is asked).
const char* kPublishedPointers = R"CL(
kernel void publish(global ulong* slots) {
  int private_value = (int)get_global_id(0);
  slots[get_global_id(0)] = (ulong)(uintptr_t)(generic int*)&private_value;
}
kernel void classify(global const ulong* slots, global int* out, uint n) {
  size_t i = get_global_id(0);
  generic int* p = (generic int*)(uintptr_t)slots[(i * 7 + n / 2) % n];
  out[i] = (to_private(p) != NULL) | (to_global(p) != NULL) << 1 | (to_local(p) != NULL) << 2;
}
// The CTS kernel: every work-item writes its pointers into one program-scope struct and reads
// back what is there, which may be another work-item's.
typedef struct {
  global int* g;
  local int* l;
  private int* p;
} Pointers;
global Pointers shared_pointers;
global int gint = 1;
kernel void race(global int* out) {
  local int lint;
  lint = 2;
  int pint = 3;
  shared_pointers.g = &gint;
  shared_pointers.l = &lint;
  shared_pointers.p = &pint;
  out[get_global_id(0)] = (to_global(shared_pointers.g) != NULL) +
                          (to_local(shared_pointers.l) != NULL) +
                          (to_private(shared_pointers.p) != NULL);
}
)CL";

TEST_F(OpenCLC30, GenericPointersOfOtherWorkGroupsKnowWhereTheyPoint) {
  const cl_uint n = 4096;
  const size_t global = n, local = 16;
  for_each_device_with(
      {"__opencl_c_generic_address_space", "__opencl_c_program_scope_global_variables"},
      [&](DeviceSession& s) {
        Program program = s.build(kPublishedPointers, kCL30);
        if (!program) return;
        Kernel publish = s.kernel(program, "publish"), classify = s.kernel(program, "classify"),
               race = s.kernel(program, "race");
        Mem Slots = s.buffer(n * sizeof(uint64_t)), Out = s.buffer(n * sizeof(int32_t));
        s.set_args(publish.get(), Slots);
        s.run(publish.get(), 1, &global, &local);
        s.set_args(classify.get(), Slots, Out, n);
        s.run(classify.get(), 1, &global, &local);
        EXPECT_EQ(s.read<int32_t>(Out.get(), n), std::vector<int32_t>(n, 1))
            << "another work-item's private pointer: to_private only";
        s.set_args(race.get(), Out);
        for (int round = 0; round < 4; ++round) {
          s.run(race.get(), 1, &global, &local);
          ASSERT_EQ(s.read<int32_t>(Out.get(), n), std::vector<int32_t>(n, 3)) << "round " << round;
        }
      });
}

// ---- C11 atomics: every order and scope, 32 and 64 bits, global and local memory ----

const char* kAtomicCounters = R"CL(
#define ORDERS(F, object, scope, base) \
  F(object + base + 0, memory_order_relaxed, scope); \
  F(object + base + 1, memory_order_acquire, scope); \
  F(object + base + 2, memory_order_release, scope); \
  F(object + base + 3, memory_order_acq_rel, scope); \
  F(object + base + 4, memory_order_seq_cst, scope)
#define ADD(object, order, scope) atomic_fetch_add_explicit(object, 1, order, scope)
#define SUB(object, order, scope) atomic_fetch_sub_explicit(object, 1, order, scope)
// Read-modify-writes by compare-exchange: each adds 1 in the end.
#define CAS(object, order, scope) do { \
    T seen = atomic_load_explicit(object, memory_order_relaxed, scope); \
    while (!atomic_compare_exchange_weak_explicit(object, &seen, seen + 1, order, \
                                                  memory_order_relaxed, scope)) {} \
  } while (0)
// 15 counters per scope and type: add, sub (from 0: the count below zero), compare-exchange.
#define COUNTERS(object, scope, base) \
  ORDERS(ADD, object, scope, base); ORDERS(SUB, object, scope, base + 5); \
  ORDERS(CAS, object, scope, base + 10)

#define KERNEL(T, A, NAME) \
kernel void NAME(global A* shared_counters, global A* group_counters, global T* local_totals, \
                 global A* extremes) { \
  local A counters[30]; \
  size_t lid = get_local_linear_id(), group = get_group_id(0); \
  for (size_t c = lid; c < 30; c += get_local_size(0)) atomic_init(&counters[c], 0); \
  work_group_barrier(CLK_LOCAL_MEM_FENCE); \
  /* across the NDRange: device and all-devices scopes; per group: the work-group scope */ \
  COUNTERS(shared_counters, memory_scope_device, 0); \
  COUNTERS(shared_counters, memory_scope_all_svm_devices, 15); \
  COUNTERS(group_counters + group * 15, memory_scope_work_group, 0); \
  COUNTERS(counters, memory_scope_work_group, 0); \
  COUNTERS(counters, memory_scope_device, 15); \
  T id = (T)get_global_id(0); \
  atomic_fetch_max_explicit(extremes + 0, id, memory_order_acq_rel, memory_scope_device); \
  atomic_fetch_min_explicit(extremes + 1, id, memory_order_seq_cst, memory_scope_device); \
  atomic_fetch_or_explicit(extremes + 2, (T)1 << (id % 8 * 4), memory_order_release, \
                           memory_scope_all_svm_devices); \
  atomic_fetch_xor_explicit(extremes + 3, id, memory_order_acquire, memory_scope_device); \
  atomic_fetch_and_explicit(extremes + 4, ~((T)1 << (id % 16)), memory_order_relaxed, \
                            memory_scope_device); \
  work_group_barrier(CLK_LOCAL_MEM_FENCE); \
  for (size_t c = lid; c < 30; c += get_local_size(0)) \
    local_totals[group * 30 + c] = atomic_load_explicit(&counters[c], memory_order_acquire, \
                                                        memory_scope_work_group); \
}
#define T int
KERNEL(int, atomic_int, counters_int)
#undef T
#define T long
KERNEL(long, atomic_long, counters_long)
)CL";

template <typename T>
void check_counters(DeviceSession& s, cl_program program, const char* name) {
  SCOPED_TRACE(name);
  const size_t local = 64, groups = 16, n = local * groups;
  Kernel kernel = s.kernel(program, name);
  Mem Shared = s.buffer(std::vector<T>(30, 0)), Groups = s.buffer(std::vector<T>(15 * groups, 0)),
      Totals = s.buffer(30 * groups * sizeof(T));
  const T ones = T(~T(0));
  Mem Extremes = s.buffer(std::vector<T>{0, std::numeric_limits<T>::max(), 0, 0, ones});
  s.set_args(kernel.get(), Shared, Groups, Totals, Extremes);
  s.run(kernel.get(), 1, &n, &local);
  // add: +count, sub: -count, compare-exchange: +count.
  auto expected = [](size_t counter, T count) { return counter % 15 / 5 == 1 ? T(-count) : count; };
  const std::vector<T> shared = s.read<T>(Shared.get(), 30);
  for (size_t c = 0; c < 30; ++c) EXPECT_EQ(shared[c], expected(c, T(n))) << "counter " << c;
  const std::vector<T> per_group = s.read<T>(Groups.get(), 15 * groups);
  for (size_t c = 0; c < 15 * groups; ++c)
    EXPECT_EQ(per_group[c], expected(c % 15, T(local))) << "group counter " << c;
  const std::vector<T> totals = s.read<T>(Totals.get(), 30 * groups);
  for (size_t c = 0; c < 30 * groups; ++c)
    EXPECT_EQ(totals[c], expected(c % 30 % 15, T(local))) << "local counter " << c;
  const std::vector<T> extremes = s.read<T>(Extremes.get(), 5);
  T all_or = 0, all_xor = 0, all_and = ones;
  for (size_t i = 0; i < n; ++i) {
    all_or |= T(1) << (i % 8 * 4);
    all_xor ^= T(i);
    all_and &= T(~(T(1) << (i % 16)));
  }
  EXPECT_EQ(extremes[0], T(n - 1));
  EXPECT_EQ(extremes[1], T(0));
  EXPECT_EQ(extremes[2], all_or);
  EXPECT_EQ(extremes[3], all_xor);
  EXPECT_EQ(extremes[4], all_and);
}

TEST_F(OpenCLC30, AtomicsWithEveryOrderAndScopeCount) {
  for_each_device_with(
      {"__opencl_c_atomic_order_acq_rel", "__opencl_c_atomic_order_seq_cst",
       "__opencl_c_atomic_scope_device", "__opencl_c_atomic_scope_all_devices", "__opencl_c_int64"},
      [&](DeviceSession& s) {
        if (!s.has_extension("cl_khr_int64_base_atomics") ||
            !s.has_extension("cl_khr_int64_extended_atomics"))
          return;
        Program program = s.build(kAtomicCounters, kCL30);
        if (!program) return;
        check_counters<int32_t>(s, program, "counters_int");
        check_counters<int64_t>(s, program, "counters_long");
      });
}

// atomic_flag: exactly one work-item finds each flag clear; and message passing, where a reader
// that sees a writer's flag (acquire) must see the data written before it (release), through
// global memory across work-groups and through __local memory within one. Readers never wait:
// whether a flag is seen yet depends on the device's timing, what it guards must not.
const char* kFlagsAndMessages = R"CL(
kernel void flags(global atomic_flag* flags, global atomic_int* winners, global int* group_wins) {
  local atomic_flag group_flag;
  local atomic_int group_winners;
  if (get_local_id(0) == 0) {
    atomic_flag_clear_explicit(&group_flag, memory_order_relaxed, memory_scope_work_group);
    atomic_init(&group_winners, 0);
  }
  work_group_barrier(CLK_LOCAL_MEM_FENCE);
  size_t i = get_global_id(0);
  if (!atomic_flag_test_and_set_explicit(&flags[i % 8], memory_order_acq_rel, memory_scope_device))
    atomic_fetch_add(&winners[i % 8], 1);
  if (!atomic_flag_test_and_set_explicit(&group_flag, memory_order_seq_cst,
                                         memory_scope_work_group))
    atomic_fetch_add_explicit(&group_winners, 1, memory_order_relaxed, memory_scope_work_group);
  work_group_barrier(CLK_LOCAL_MEM_FENCE);
  if (get_local_id(0) == 0)
    group_wins[get_group_id(0)] =
        atomic_load_explicit(&group_winners, memory_order_relaxed, memory_scope_work_group);
}

kernel void messages(global int* data, global atomic_int* ready, global int* seen,
                     global int* local_seen) {
  local int local_data[256];
  local atomic_int local_ready[256];
  size_t i = get_global_id(0), n = get_global_size(0);
  size_t lid = get_local_id(0), size = get_local_size(0);
  atomic_init(&local_ready[lid], 0);
  work_group_barrier(CLK_LOCAL_MEM_FENCE);
  // Write, then publish: a release store, or a release fence and a relaxed store.
  data[i] = (int)i * 3 + 1;
  local_data[lid] = (int)lid * 5 + 2;
  if (i % 2)
    atomic_store_explicit(&ready[i], 1, memory_order_release, memory_scope_device);
  else {
    atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE, memory_order_release, memory_scope_device);
    atomic_store_explicit(&ready[i], 1, memory_order_relaxed, memory_scope_device);
  }
  atomic_store_explicit(&local_ready[lid], 1, memory_order_seq_cst, memory_scope_work_group);
  // Read another work-item's: an acquire load, or a relaxed load and an acquire fence.
  size_t j = (i + n / 2 + 1) % n, k = (lid + size / 2 + 1) % size;
  int flag;
  if (i % 3) {
    flag = atomic_load_explicit(&ready[j], memory_order_acquire, memory_scope_device);
  } else {
    flag = atomic_load_explicit(&ready[j], memory_order_relaxed, memory_scope_device);
    atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE, memory_order_acquire, memory_scope_device);
  }
  seen[i] = flag ? data[j] : -1;
  local_seen[i] = atomic_load_explicit(&local_ready[k], memory_order_acquire,
                                       memory_scope_work_group) ? local_data[k] : -1;
}
)CL";

TEST_F(OpenCLC30, AtomicFlagsAndMessagePassing) {
  const size_t local = 64, groups = 32, n = local * groups;
  for_each_device_with(
      {"__opencl_c_atomic_order_acq_rel", "__opencl_c_atomic_order_seq_cst",
       "__opencl_c_atomic_scope_device"},
      [&](DeviceSession& s) {
        Program program = s.build(kFlagsAndMessages, kCL30);
        if (!program) return;
        Kernel flags = s.kernel(program, "flags"), messages = s.kernel(program, "messages");
        Mem Flags = s.buffer(std::vector<int32_t>(8, 0)),
            Winners = s.buffer(std::vector<int32_t>(8, 0)),
            GroupWins = s.buffer(groups * sizeof(int32_t));
        s.set_args(flags.get(), Flags, Winners, GroupWins);
        s.run(flags.get(), 1, &n, &local);
        EXPECT_EQ(s.read<int32_t>(Winners.get(), 8), std::vector<int32_t>(8, 1));
        EXPECT_EQ(s.read<int32_t>(GroupWins.get(), groups), std::vector<int32_t>(groups, 1));

        Mem Data = s.buffer(n * sizeof(int32_t)), Ready = s.buffer(std::vector<int32_t>(n, 0)),
            Seen = s.buffer(n * sizeof(int32_t)), LocalSeen = s.buffer(n * sizeof(int32_t));
        s.set_args(messages.get(), Data, Ready, Seen, LocalSeen);
        s.run(messages.get(), 1, &n, &local);
        const std::vector<int32_t> seen = s.read<int32_t>(Seen.get(), n),
                                   local_seen = s.read<int32_t>(LocalSeen.get(), n);
        size_t published = 0, published_locally = 0;
        for (size_t i = 0; i < n; ++i) {
          const size_t j = (i + n / 2 + 1) % n, k = (i % local + local / 2 + 1) % local;
          if (seen[i] != -1) {
            ++published;
            EXPECT_EQ(seen[i], int32_t(j * 3 + 1))
                << "work-item " << i << " saw " << j << "'s flag";
          }
          if (local_seen[i] != -1) {
            ++published_locally;
            EXPECT_EQ(local_seen[i], int32_t(k * 5 + 2)) << "work-item " << i;
          }
        }
        std::printf("%s: %zu of %zu flags seen across work-groups, %zu within\n",
                    deviceString(s.device(), CL_DEVICE_NAME).c_str(), published, n,
                    published_locally);
      });
}

// ---- program-scope variables ----

const char* kProgramScopeVariables = R"CL(
global int counter = 5;
global float table[4] = {1.5f, 2.5f, 3.5f, 4.5f};
global int* global pointer_to_counter = &counter;
static global long hidden = -1;
global uint hits;  // zero-initialized
int next_ticket(void) {
  static global int ticket = 100;
  return ticket++;
}
kernel void bump(void) {
  atomic_inc(&hits);
  if (get_global_id(0) == 0) {
    *pointer_to_counter += 1;
    table[0] += 1.0f;
    hidden -= 1;
  }
}
kernel void read_back(global float* out) {
  out[0] = counter;
  out[1] = hits;
  for (int k = 0; k < 4; ++k) out[2 + k] = table[k];
  out[6] = hidden;
  out[7] = next_ticket();
}
)CL";

TEST_F(OpenCLC30, ProgramScopeVariablesAreInitializedAndPersistAcrossLaunches) {
  for_each_device_with({"__opencl_c_program_scope_global_variables"}, [&](DeviceSession& s) {
    Program program = s.build(kProgramScopeVariables, kCL30);
    if (!program) return;
    size_t bytes = 0;
    EXPECT_EQ(Err(CL_SUCCESS), Err(clGetProgramBuildInfo(
                                   program, s.device(), CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE,
                                   sizeof bytes, &bytes, nullptr)));
    EXPECT_GE(bytes, 4u + 16 + 8 + 8 + 4 + 4);
    Kernel bump = s.kernel(program, "bump"), read_back = s.kernel(program, "read_back");
    Mem Out = s.buffer(8 * sizeof(float));
    s.set_args(read_back.get(), Out);
    s.run(read_back.get(), 1, std::array<size_t, 1>{1}.data(), nullptr);
    EXPECT_EQ(s.read<float>(Out.get(), 8),
              (std::vector<float>{5, 0, 1.5f, 2.5f, 3.5f, 4.5f, -1, 100}));
    const size_t n = 64;
    for (int launch = 0; launch < 3; ++launch) s.run(bump.get(), 1, &n, nullptr);
    s.run(read_back.get(), 1, std::array<size_t, 1>{1}.data(), nullptr);
    EXPECT_EQ(s.read<float>(Out.get(), 8),
              (std::vector<float>{8, 192, 4.5f, 2.5f, 3.5f, 4.5f, -4, 101}));
  });
}

// An extern variable of one program defined by another of a clLinkProgram link; static variables
// of the same name stay each program's own.
const char* kDeclaringProgram = R"CL(
extern global int total;
static global int calls;
int add(int v) {
  ++calls;
  total += v;
  return calls;
}
)CL";
const char* kDefiningProgram = R"CL(
global int total = 40;
static global int calls = 7;
int add(int v);
kernel void use(global int* out) {
  out[0] = add(2);
  out[1] = total;
  out[2] = calls;
}
)CL";

TEST_F(OpenCLC30, ProgramScopeVariablesAcrossLinkedPrograms) {
  for_each_device_with({"__opencl_c_program_scope_global_variables"}, [&](DeviceSession& s) {
    auto compile = [&](const char* source) {
      cl_int err = CL_SUCCESS;
      Program program(clCreateProgramWithSource(s.context(), 1, &source, nullptr, &err));
      EXPECT_EQ(Err(CL_SUCCESS), Err(err));
      cl_device_id device = s.device();
      err = clCompileProgram(program, 1, &device, kCL30, 0, nullptr, nullptr, nullptr, nullptr);
      EXPECT_EQ(Err(CL_SUCCESS), Err(err)) << s.build_log(program);
      return program;
    };
    Program declaring = compile(kDeclaringProgram), defining = compile(kDefiningProgram);
    cl_program inputs[] = {declaring, defining};
    cl_device_id device = s.device();
    cl_int err = CL_SUCCESS;
    Program linked(clLinkProgram(s.context(), 1, &device, "", 2, inputs, nullptr, nullptr, &err));
    ASSERT_EQ(Err(CL_SUCCESS), Err(err));
    Kernel use = s.kernel(linked, "use");
    Mem Out = s.buffer(3 * sizeof(int32_t));
    s.set_args(use.get(), Out);
    const size_t one = 1;
    s.run(use.get(), 1, &one, nullptr);
    EXPECT_EQ(s.read<int32_t>(Out.get(), 3), (std::vector<int32_t>{1, 42, 7}));
    s.run(use.get(), 1, &one, nullptr);
    EXPECT_EQ(s.read<int32_t>(Out.get(), 3), (std::vector<int32_t>{2, 44, 7}));
  });
}

// ---- work-group collectives against a host model ----

// The NDRange shapes: several local sizes (not multiples of a warp, one work-item, non-uniform
// last groups in each dimension).
struct Shape {
  cl_uint dims;
  std::array<size_t, 3> global, local;
  bool uniform() const {
    for (cl_uint d = 0; d < dims; ++d)
      if (global[d] % local[d]) return false;
    return true;
  }
};
const Shape kShapes[] = {
    {1, {64, 1, 1}, {64, 1, 1}}, {1, {300, 1, 1}, {64, 1, 1}},   {1, {200, 1, 1}, {100, 1, 1}},
    {1, {7, 1, 1}, {7, 1, 1}},   {1, {1000, 1, 1}, {256, 1, 1}}, {1, {33, 1, 1}, {32, 1, 1}},
    {1, {5, 1, 1}, {1, 1, 1}},   {2, {20, 9, 1}, {8, 4, 1}},     {3, {6, 5, 4}, {4, 2, 3}},
};

// Per work-item: the nine reductions and scans, the broadcast of the group's last work-item, and
// work_group_all(x != 3), work_group_any(x == 2). T: the type computed in; S: the buffers' (half
// travels as float).
const char* kCollectivesTemplate = R"CL(
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#ifdef HALF
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#endif
kernel void collectives(global const S* in, global S* out, global int* predicates) {
  size_t i = get_global_linear_id();
  T x = (T)in[i];
  global S* o = out + i * 10;
  o[0] = work_group_reduce_add(x);
  o[1] = work_group_reduce_min(x);
  o[2] = work_group_reduce_max(x);
  o[3] = work_group_scan_inclusive_add(x);
  o[4] = work_group_scan_inclusive_min(x);
  o[5] = work_group_scan_inclusive_max(x);
  o[6] = work_group_scan_exclusive_add(x);
  o[7] = work_group_scan_exclusive_min(x);
  o[8] = work_group_scan_exclusive_max(x);
  size_t lx = get_local_size(0) - 1, ly = get_local_size(1) - 1, lz = get_local_size(2) - 1;
  if (get_work_dim() == 1) o[9] = work_group_broadcast(x, lx);
  else if (get_work_dim() == 2) o[9] = work_group_broadcast(x, lx, ly);
  else o[9] = work_group_broadcast(x, lx, ly, lz);
  predicates[i * 2] = work_group_all(x != (T)3);
  predicates[i * 2 + 1] = work_group_any(x == (T)2);
}
)CL";

// The work-items of each group in local linear order, as global linear indices.
std::vector<std::vector<size_t>> groups_of(const Shape& shape) {
  std::array<size_t, 3> global = shape.global, local = shape.local, count{};
  for (int d = 0; d < 3; ++d) count[d] = (global[d] + local[d] - 1) / local[d];
  std::vector<std::vector<size_t>> groups;
  for (size_t gz = 0; gz < count[2]; ++gz)
    for (size_t gy = 0; gy < count[1]; ++gy)
      for (size_t gx = 0; gx < count[0]; ++gx) {
        std::vector<size_t> items;
        for (size_t z = gz * local[2]; z < std::min(global[2], (gz + 1) * local[2]); ++z)
          for (size_t y = gy * local[1]; y < std::min(global[1], (gy + 1) * local[1]); ++y)
            for (size_t x = gx * local[0]; x < std::min(global[0], (gx + 1) * local[0]); ++x)
              items.push_back((z * global[1] + y) * global[0] + x);
        groups.push_back(std::move(items));
      }
  return groups;
}

// T: the host type of the values (float for half). `values`: inputs are drawn from
// [0, values) (shifted to [-values/2, values/2) for signed types): every sum of a group exact.
template <typename T>
void check_collectives(DeviceSession& s, const char* type_name, uint32_t values = 50) {
  SCOPED_TRACE(type_name);
  const bool half = std::string(type_name) == "half";
  const std::string source = std::string("#define T ") + type_name + "\n#define S " +
                             (half ? "float\n#define HALF\n" : std::string(type_name) + "\n") +
                             kCollectivesTemplate;
  Program program = s.build(source.c_str(), kCL30);
  if (!program) return;
  Kernel kernel = s.kernel(program, "collectives");
  cl_bool non_uniform = CL_FALSE;
  clGetDeviceInfo(s.device(), CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT, sizeof non_uniform,
                  &non_uniform, nullptr);
  uint32_t seed = 20;
  for (const Shape& shape : kShapes) {
    if (!shape.uniform() && !non_uniform) continue;
    const size_t n = shape.global[0] * shape.global[1] * shape.global[2];
    SCOPED_TRACE("global " + std::to_string(shape.global[0]) + "x" +
                 std::to_string(shape.global[1]) + "x" + std::to_string(shape.global[2]) +
                 ", local " + std::to_string(shape.local[0]) + "x" +
                 std::to_string(shape.local[1]) + "x" + std::to_string(shape.local[2]));
    // Small integers, exact in every type: sums of a group fit, and float sums do not round.
    const std::vector<uint32_t> raw = random_uints(n, seed++, values);
    std::vector<T> in(n);
    for (size_t i = 0; i < n; ++i)
      in[i] = std::numeric_limits<T>::is_signed ? T(int(raw[i]) - int(values / 2)) : T(raw[i]);
    Mem In = s.buffer(in), Out = s.buffer(n * 10 * sizeof(T)),
        Predicates = s.buffer(n * 2 * sizeof(int32_t));
    s.set_args(kernel.get(), In, Out, Predicates);
    s.run(kernel.get(), shape.dims, shape.global.data(), shape.local.data());
    const std::vector<T> out = s.read<T>(Out.get(), n * 10);
    const std::vector<int32_t> predicates = s.read<int32_t>(Predicates.get(), n * 2);
    for (const std::vector<size_t>& items : groups_of(shape)) {
      T sum = 0, low = std::numeric_limits<T>::max(), high = std::numeric_limits<T>::lowest();
      bool all = true, any = false;
      for (size_t i : items) {
        sum += in[i];
        low = std::min(low, in[i]);
        high = std::max(high, in[i]);
        all = all && in[i] != T(3);
        any = any || in[i] == T(2);
      }
      // The exclusive scans' identities: the type's largest and smallest values, infinities for
      // floating-point types.
      constexpr bool floating = std::numeric_limits<T>::has_infinity;
      T running_sum = 0,
        running_low = floating ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max(),
        running_high =
            floating ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
      for (size_t i : items) {
        const T* o = &out[i * 10];
        const std::vector<T> got(o, o + 10);
        const T next_sum = running_sum + in[i], next_low = std::min(running_low, in[i]),
                next_high = std::max(running_high, in[i]);
        const std::vector<T> want = {
            sum,       low,         high,        next_sum,     next_low,
            next_high, running_sum, running_low, running_high, in[items.back()]};
        ASSERT_EQ(got, want) << "work-item " << i
                             << " (reduce add/min/max, inclusive add/min/max, exclusive "
                                "add/min/max, broadcast)";
        ASSERT_EQ(predicates[i * 2] != 0, all) << "work_group_all, work-item " << i;
        ASSERT_EQ(predicates[i * 2 + 1] != 0, any) << "work_group_any, work-item " << i;
        running_sum = next_sum;
        running_low = next_low;
        running_high = next_high;
      }
    }
  }
}

TEST_F(OpenCLC30, WorkGroupCollectivesMatchAHostModel) {
  for_each_device_with({"__opencl_c_work_group_collective_functions"}, [&](DeviceSession& s) {
    check_collectives<int32_t>(s, "int");
    check_collectives<uint32_t>(s, "uint");
    check_collectives<int64_t>(s, "long");
    check_collectives<uint64_t>(s, "ulong");
    check_collectives<float>(s, "float");
    if (s.has_extension("cl_khr_fp64")) check_collectives<double>(s, "double");
    // Sums of at most 256 values in [-4, 4) stay within half's exact integers.
    if (s.has_extension("cl_khr_fp16")) check_collectives<float>(s, "half", 8);
  });
}

// ---- non-uniform work-groups: every work-item query of the smaller last groups ----

const char* kWorkItemQueries = R"CL(
kernel void queries(global ulong* out) {
  global ulong* o = out + get_global_linear_id() * 24;
  for (uint d = 0; d < 3; ++d) {
    o[d * 7 + 0] = get_global_id(d);
    o[d * 7 + 1] = get_local_id(d);
    o[d * 7 + 2] = get_local_size(d);
    o[d * 7 + 3] = get_enqueued_local_size(d);
    o[d * 7 + 4] = get_group_id(d);
    o[d * 7 + 5] = get_num_groups(d);
    o[d * 7 + 6] = get_global_size(d);
  }
  o[21] = get_local_linear_id();
  o[22] = get_global_offset(0) + get_global_offset(1) * 100 + get_global_offset(2) * 10000;
  o[23] = get_work_dim();
}
)CL";

TEST_F(OpenCLC30, NonUniformWorkGroupsAnswerEveryWorkItemQuery) {
  struct Case {
    cl_uint dims;
    std::array<size_t, 3> global, local, offset;
  };
  const Case cases[] = {{1, {100, 1, 1}, {32, 1, 1}, {3, 0, 0}},
                        {2, {37, 10, 1}, {8, 4, 1}, {1, 2, 0}},
                        {3, {5, 6, 7}, {2, 4, 3}, {0, 0, 0}},
                        {2, {3, 70, 1}, {4, 16, 1}, {0, 5, 0}}};  // global below local in x
  for_each_device([&](DeviceSession& s) {
    cl_bool supported = CL_FALSE;
    clGetDeviceInfo(s.device(), CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT, sizeof supported,
                    &supported, nullptr);
    if (!supported) {
      std::printf("[ SKIPPED  ] %s: no non-uniform work-groups\n",
                  deviceString(s.device(), CL_DEVICE_NAME).c_str());
      return;
    }
    Program program = s.build(kWorkItemQueries, kCL30);
    if (!program) return;
    Kernel kernel = s.kernel(program, "queries");
    for (const Case& c : cases) {
      SCOPED_TRACE(std::to_string(c.dims) + "-D, global " + std::to_string(c.global[0]) + "x" +
                   std::to_string(c.global[1]) + "x" + std::to_string(c.global[2]));
      const size_t n = c.global[0] * c.global[1] * c.global[2];
      Mem Out = s.buffer(n * 24 * sizeof(uint64_t));
      s.set_args(kernel.get(), Out);
      s.run(kernel.get(), c.dims, c.global.data(), c.local.data(), c.offset.data());
      const std::vector<uint64_t> out = s.read<uint64_t>(Out.get(), n * 24);
      for (size_t z = 0; z < c.global[2]; ++z)
        for (size_t y = 0; y < c.global[1]; ++y)
          for (size_t x = 0; x < c.global[0]; ++x) {
            const size_t at[3] = {x, y, z};
            const size_t linear = (z * c.global[1] + y) * c.global[0] + x;
            std::vector<uint64_t> want(24);
            size_t local_size[3], local_id[3];
            for (int d = 0; d < 3; ++d) {
              const size_t group = at[d] / c.local[d],
                           groups = (c.global[d] + c.local[d] - 1) / c.local[d];
              local_id[d] = at[d] % c.local[d];
              local_size[d] = std::min(c.local[d], c.global[d] - group * c.local[d]);
              want[d * 7 + 0] = at[d] + c.offset[d];
              want[d * 7 + 1] = local_id[d];
              want[d * 7 + 2] = local_size[d];
              want[d * 7 + 3] = c.local[d];
              want[d * 7 + 4] = group;
              want[d * 7 + 5] = groups;
              want[d * 7 + 6] = c.global[d];
            }
            want[21] = (local_id[2] * local_size[1] + local_id[1]) * local_size[0] + local_id[0];
            want[22] = c.offset[0] + c.offset[1] * 100 + c.offset[2] * 10000;
            want[23] = c.dims;
            const std::vector<uint64_t> got(out.begin() + linear * 24,
                                            out.begin() + (linear + 1) * 24);
            ASSERT_EQ(got, want) << "work-item (" << x << ", " << y << ", " << z << ")";
          }
    }
  });
}

}  // namespace
