// Shared virtual memory: clSVMAlloc pointers mean the same bytes on the host and on every device
// of a context. A linked list built by the host is walked and changed by kernels on each device in
// turn (the CPU, an emulated GPU with memory of its own, and over the simulated CUDA driver a CUDA
// device), SVM commands move the bytes where they are needed, and every error the spec names.
#include <atomic>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "cl_test.h"
// After cl_test.h, which chooses the OpenCL version of the headers.
#include <CL/cl_manifold.h>

using namespace cltest;

namespace {

// One emulated GPU (the CPU with memory of its own) joins the CPU in the all-devices context.
const bool kEmulated = [] { return setenv("MANIFOLD_EMULATED_GPUS", "1", /*overwrite=*/0) == 0; }();

cl_device_svm_capabilities svmCaps(cl_device_id d) {
  cl_device_svm_capabilities caps = 0;
  clGetDeviceInfo(d, CL_DEVICE_SVM_CAPABILITIES, sizeof caps, &caps, nullptr);
  return caps;
}

struct Node {
  Node* next;
  cl_int value;
  cl_int pad;
};

const char* kListSource = R"(
typedef struct Node { global struct Node* next; int value; int pad; } Node;
// Walks the list from `head`, adding `add` to every value.
kernel void walk(global Node* head, int add) {
  for (global Node* n = head; n; n = n->next) n->value += add;
}
kernel void fill_ints(global int* p, int v) { p[get_global_id(0)] = v + (int)get_global_id(0); }
typedef struct Tree { global struct Tree* left; global struct Tree* right; int value; int pad; } Tree;
// Adds `add` to every node of the tree at `root`, depth first with a stack of its own.
kernel void grow(global Tree* root, int add) {
  global Tree* stack[32];
  int top = 0;
  stack[top++] = root;
  while (top > 0) {
    global Tree* t = stack[--top];
    t->value += add;
    if (t->right) stack[top++] = t->right;
    if (t->left) stack[top++] = t->left;
  }
}
)";

struct Tree {
  Tree* left;
  Tree* right;
  cl_int value;
  cl_int pad;
};

class Svm : public ContextTest {
 protected:
  void SetUp() override {
    ContextTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (!(svmCaps(device_) & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER))
      GTEST_SKIP() << "the device reports no coarse-grain buffer SVM";
  }

  // Every device of the platform that reports SVM.
  std::vector<cl_device_id> svmDevices() {
    cl_uint count = 0;
    clGetDeviceIDs(platform_, CL_DEVICE_TYPE_ALL, 0, nullptr, &count);
    std::vector<cl_device_id> all(count), out;
    clGetDeviceIDs(platform_, CL_DEVICE_TYPE_ALL, count, all.data(), nullptr);
    for (cl_device_id d : all)
      if (svmCaps(d) & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER) out.push_back(d);
    return out;
  }

  Kernel build(cl_context context, std::vector<cl_device_id> devices, const char* name) {
    cl_int err = CL_SUCCESS;
    Program p(clCreateProgramWithSource(context, 1, &kListSource, nullptr, &err));
    EXPECT_CL(CL_SUCCESS, clBuildProgram(p, cl_uint(devices.size()), devices.data(), nullptr,
                                         nullptr, nullptr));
    Kernel k(clCreateKernel(p, name, &err));
    EXPECT_ERR(CL_SUCCESS, err);
    return k;
  }

  static void map(cl_command_queue q, void* p, size_t n, cl_map_flags flags) {
    ASSERT_CL(CL_SUCCESS, clEnqueueSVMMap(q, CL_TRUE, flags, p, n, 0, nullptr, nullptr));
  }
  static void unmap(cl_command_queue q, void* p) {
    ASSERT_CL(CL_SUCCESS, clEnqueueSVMUnmap(q, p, 0, nullptr, nullptr));
  }
};

TEST_F(Svm, CapabilitiesAreReportedPerDevice) {
  for (cl_device_id d : svmDevices()) {
    const cl_device_svm_capabilities caps = svmCaps(d);
    cl_device_type type = 0;
    clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof type, &type, nullptr);
    EXPECT_TRUE(caps & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER);
    // A device group (MANIFOLD_DEVICE_GROUPS) has what every member has.
    if (deviceString(d, CL_DEVICE_NAME).rfind("Manifold group", 0) == 0) {
      size_t size = 0;
      ASSERT_CL(CL_SUCCESS, clGetDeviceInfo(d, CL_DEVICE_GROUP_MEMBERS_MFLD, 0, nullptr, &size));
      std::vector<cl_device_id> members(size / sizeof(cl_device_id));
      ASSERT_FALSE(members.empty());
      ASSERT_CL(CL_SUCCESS,
                clGetDeviceInfo(d, CL_DEVICE_GROUP_MEMBERS_MFLD, size, members.data(), nullptr));
      cl_device_svm_capabilities common = ~cl_device_svm_capabilities(0);
      for (cl_device_id m : members) common &= svmCaps(m);
      EXPECT_EQ(caps, common);
    }
    // The CPU device is the host: every kind of SVM, system pointers and atomics included.
    else if (type == CL_DEVICE_TYPE_CPU)
      EXPECT_EQ(caps, cl_device_svm_capabilities(
                          CL_DEVICE_SVM_COARSE_GRAIN_BUFFER | CL_DEVICE_SVM_FINE_GRAIN_BUFFER |
                          CL_DEVICE_SVM_FINE_GRAIN_SYSTEM | CL_DEVICE_SVM_ATOMICS));
    else
      EXPECT_FALSE(caps & CL_DEVICE_SVM_FINE_GRAIN_SYSTEM);
  }
}

TEST_F(Svm, AllocationRulesAndBadFrees) {
  // The spec's reasons for NULL: bad flags, ATOMICS without FINE_GRAIN_BUFFER, size 0, an
  // alignment that is not a power of two.
  EXPECT_EQ(clSVMAlloc(context_, CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY, 64, 0), nullptr);
  EXPECT_EQ(clSVMAlloc(context_, CL_MEM_USE_HOST_PTR, 64, 0), nullptr);
  EXPECT_EQ(clSVMAlloc(context_, CL_MEM_READ_WRITE | CL_MEM_SVM_ATOMICS, 64, 0), nullptr);
  EXPECT_EQ(clSVMAlloc(context_, CL_MEM_READ_WRITE, 0, 0), nullptr);
  EXPECT_EQ(clSVMAlloc(context_, CL_MEM_READ_WRITE, 64, 3), nullptr);
  cl_ulong max_alloc = 0;
  clGetDeviceInfo(device_, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc, &max_alloc, nullptr);
  EXPECT_EQ(clSVMAlloc(context_, CL_MEM_READ_WRITE, size_t(max_alloc) + 1, 0), nullptr);
  // Alignment: the default is the largest type's (128 bytes), larger ones are honoured.
  std::vector<void*> ptrs;
  for (cl_uint align : {0u, 4096u, 1u << 16}) {
    void* p = clSVMAlloc(context_, CL_MEM_READ_WRITE, 100, align);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % (align ? align : 128), 0u);
    ptrs.push_back(p);
  }
  // Distinct allocations do not overlap.
  EXPECT_NE(ptrs[0], ptrs[1]);
  for (void* p : ptrs) clSVMFree(context_, p);
  // Undefined in the spec: NULL is a no-op; a double free, a pointer that is no allocation and
  // one from another context are logged and ignored (no crash).
  clSVMFree(context_, nullptr);
  clSVMFree(context_, ptrs[0]);
  int local = 0;
  clSVMFree(context_, &local);
}

TEST_F(Svm, MoreAllocationsThanTheProcessMayHaveMappings) {
  // Linux allows about 65000 mappings per process: allocations must not each cost one.
  std::vector<void*> many(70000);
  for (void*& p : many) {
    p = clSVMAlloc(context_, CL_MEM_READ_WRITE, 64, 0);
    ASSERT_NE(p, nullptr);
    static_cast<char*>(p)[0] = 1;
  }
  // Every other one freed: live and free pages alternate.
  for (size_t i = 1; i < many.size(); i += 2) clSVMFree(context_, many[i]);
  for (size_t i = 1; i < many.size(); i += 2) {
    many[i] = clSVMAlloc(context_, CL_MEM_READ_WRITE, 64, 0);
    ASSERT_NE(many[i], nullptr) << i;
    static_cast<char*>(many[i])[63] = 2;
  }
  for (void* p : many) clSVMFree(context_, p);
}

TEST_F(Svm, HostWritesAKernelReadsAtAnOffset) {
  SKIP_IF_KERNELS_COMPUTE_NOTHING(device_);
  const size_t n = 1024;
  auto* p = static_cast<cl_int*>(clSVMAlloc(context_, CL_MEM_READ_WRITE, n * sizeof(cl_int), 0));
  ASSERT_NE(p, nullptr);
  Kernel k = build(context_, {device_}, "fill_ints");
  // A pointer into the middle of the allocation is a valid argument.
  ASSERT_CL(CL_SUCCESS, clSetKernelArgSVMPointer(k, 0, p + 256));
  cl_int v = 1000;
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(k, 1, sizeof v, &v));
  const size_t global = 512;
  ASSERT_CL(CL_SUCCESS,
            clEnqueueNDRangeKernel(queue_, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr));
  map(queue_, p, n * sizeof(cl_int), CL_MAP_READ);
  EXPECT_EQ(p[256], 1000);
  EXPECT_EQ(p[767], 1511);
  unmap(queue_, p);
  ASSERT_CL(CL_SUCCESS, clFinish(queue_));
  clSVMFree(context_, p);
}

TEST_F(Svm, LinkedListWalkedByEveryDeviceInTurn) {
  // A list built by the host across two allocations (the second reached only through pointers
  // stored in memory: CL_KERNEL_EXEC_INFO_SVM_PTRS), changed by each SVM device in turn, many
  // rounds, with the same pointers everywhere.
  const std::vector<cl_device_id> devices = svmDevices();
  bool all_compute = true;
  for (cl_device_id d : devices) all_compute = all_compute && !kernelsComputeNothing(d);
  cl_int err = CL_SUCCESS;
  Context context(
      clCreateContext(nullptr, cl_uint(devices.size()), devices.data(), nullptr, nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  std::vector<Queue> queues;
  for (cl_device_id d : devices) {
    queues.emplace_back(clCreateCommandQueueWithProperties(context, d, nullptr, &err));
    ASSERT_ERR(CL_SUCCESS, err);
  }
  const size_t count = 64;
  auto* a = static_cast<Node*>(clSVMAlloc(context, CL_MEM_READ_WRITE, count * sizeof(Node), 0));
  auto* b = static_cast<Node*>(clSVMAlloc(context, CL_MEM_READ_WRITE, count * sizeof(Node), 0));
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  map(queues[0], a, count * sizeof(Node), CL_MAP_WRITE_INVALIDATE_REGION);
  map(queues[0], b, count * sizeof(Node), CL_MAP_WRITE_INVALIDATE_REGION);
  // a[0] -> b[0] -> a[1] -> b[1] -> ... -> b[count-1]
  for (size_t i = 0; i < count; ++i) {
    a[i] = {&b[i], cl_int(i), 0};
    b[i] = {i + 1 < count ? &a[i + 1] : nullptr, cl_int(1000 + i), 0};
  }
  unmap(queues[0], a);
  unmap(queues[0], b);
  Kernel k = build(context, devices, "walk");
  void* indirect[] = {b};
  ASSERT_CL(CL_SUCCESS,
            clSetKernelExecInfo(k, CL_KERNEL_EXEC_INFO_SVM_PTRS, sizeof indirect, indirect));
  const int rounds = 10;
  cl_int expected_add = 0;
  for (int round = 0; round < rounds; ++round)
    for (size_t q = 0; q < queues.size(); ++q) {
      // From the second node on, every other round: the offset pointer starts mid-allocation.
      Node* head = (round % 2) ? &a[1] : &a[0];
      ASSERT_CL(CL_SUCCESS, clSetKernelArgSVMPointer(k, 0, head));
      const cl_int add = cl_int(q + 1);
      ASSERT_CL(CL_SUCCESS, clSetKernelArg(k, 1, sizeof add, &add));
      const size_t one = 1;
      ASSERT_CL(CL_SUCCESS, clEnqueueNDRangeKernel(queues[q], k, 1, nullptr, &one, nullptr, 0,
                                                   nullptr, nullptr));
      ASSERT_CL(CL_SUCCESS, clFinish(queues[q]));
      if (round % 2 == 0) expected_add += add;
    }
  const cl_int every_round =
      cl_int(rounds * queues.size() * (queues.size() + 1) / 2);  // sum of adds over all rounds
  map(queues.back(), a, count * sizeof(Node), CL_MAP_READ);
  map(queues.back(), b, count * sizeof(Node), CL_MAP_READ);
  if (all_compute) {
    EXPECT_EQ(a[0].value, expected_add);  // only the rounds that started at a[0]
    EXPECT_EQ(b[0].value, 1000 + expected_add);
    EXPECT_EQ(a[5].value, 5 + every_round);
    EXPECT_EQ(b[count - 1].value, cl_int(1000 + count - 1) + every_round);
  }
  // The links are the host's pointers, unchanged by the devices.
  EXPECT_EQ(a[3].next, &b[3]);
  EXPECT_EQ(b[3].next, &a[4]);
  unmap(queues.back(), a);
  unmap(queues.back(), b);
  ASSERT_CL(CL_SUCCESS, clFinish(queues.back()));
  clSVMFree(context, a);
  clSVMFree(context, b);
}

TEST_F(Svm, TreeGrownByEveryDeviceInTurn) {
  // A complete binary tree of 255 nodes, linked in heap order but stored in a shuffled order in
  // one allocation, grown by each SVM device in turn.
  const std::vector<cl_device_id> devices = svmDevices();
  bool all_compute = true;
  for (cl_device_id d : devices) all_compute = all_compute && !kernelsComputeNothing(d);
  cl_int err = CL_SUCCESS;
  Context context(
      clCreateContext(nullptr, cl_uint(devices.size()), devices.data(), nullptr, nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  const size_t count = 255;
  auto* nodes = static_cast<Tree*>(clSVMAlloc(context, CL_MEM_READ_WRITE, count * sizeof(Tree), 0));
  ASSERT_NE(nodes, nullptr);
  // Heap index i lives at slot (i * 97) % count (97 and 255 are coprime).
  const auto at = [&](size_t i) { return &nodes[(i * 97) % count]; };
  std::vector<Queue> queues;
  for (cl_device_id d : devices) {
    queues.emplace_back(clCreateCommandQueueWithProperties(context, d, nullptr, &err));
    ASSERT_ERR(CL_SUCCESS, err);
  }
  map(queues[0], nodes, count * sizeof(Tree), CL_MAP_WRITE_INVALIDATE_REGION);
  for (size_t i = 0; i < count; ++i) {
    Tree* t = at(i);
    t->left = 2 * i + 1 < count ? at(2 * i + 1) : nullptr;
    t->right = 2 * i + 2 < count ? at(2 * i + 2) : nullptr;
    t->value = cl_int(i);
  }
  unmap(queues[0], nodes);
  Kernel k = build(context, devices, "grow");
  cl_int total_add = 0;
  for (int round = 0; round < 4; ++round)
    for (size_t q = 0; q < queues.size(); ++q) {
      ASSERT_CL(CL_SUCCESS, clSetKernelArgSVMPointer(k, 0, at(0)));
      const cl_int add = cl_int(10 * (q + 1));
      ASSERT_CL(CL_SUCCESS, clSetKernelArg(k, 1, sizeof add, &add));
      const size_t one = 1;
      ASSERT_CL(CL_SUCCESS, clEnqueueNDRangeKernel(queues[q], k, 1, nullptr, &one, nullptr, 0,
                                                   nullptr, nullptr));
      ASSERT_CL(CL_SUCCESS, clFinish(queues[q]));
      total_add += add;
    }
  map(queues.back(), nodes, count * sizeof(Tree), CL_MAP_READ);
  if (all_compute) {
    for (size_t i = 0; i < count; ++i) ASSERT_EQ(at(i)->value, cl_int(i) + total_add) << i;
  }
  EXPECT_EQ(at(3)->left, at(7));
  unmap(queues.back(), nodes);
  ASSERT_CL(CL_SUCCESS, clFinish(queues.back()));
  clSVMFree(context, nodes);
}

TEST_F(Svm, MemcpyFillMapAndMigrateMoveTheBytes) {
  const size_t n = 1 << 20;
  auto* p = static_cast<cl_uint*>(clSVMAlloc(context_, CL_MEM_READ_WRITE, n * 4, 0));
  auto* q = static_cast<cl_uint*>(clSVMAlloc(context_, CL_MEM_READ_WRITE, n * 4, 0));
  ASSERT_NE(p, nullptr);
  ASSERT_NE(q, nullptr);
  std::vector<cl_uint> host(n);
  for (size_t i = 0; i < n; ++i) host[i] = cl_uint(i * 7);
  const cl_uint pattern = 0xabcd1234;
  Event filled, copied;
  ASSERT_CL(CL_SUCCESS, clEnqueueSVMMemFill(queue_, q, &pattern, sizeof pattern, n * 4, 0, nullptr,
                                            filled.out()));
  ASSERT_CL(CL_SUCCESS,
            clEnqueueSVMMemcpy(queue_, CL_FALSE, p, host.data(), n * 4, 0, nullptr, copied.out()));
  // Migrate both to the device, part of one back, then copy SVM to SVM on the device.
  const void* both[] = {p, q};
  ASSERT_CL(CL_SUCCESS, clEnqueueSVMMigrateMem(queue_, 2, both, nullptr, 0, 0, nullptr, nullptr));
  const size_t part = 4096;
  ASSERT_CL(CL_SUCCESS, clEnqueueSVMMigrateMem(queue_, 1, both, &part, CL_MIGRATE_MEM_OBJECT_HOST,
                                               0, nullptr, nullptr));
  ASSERT_CL(CL_SUCCESS,
            clEnqueueSVMMemcpy(queue_, CL_TRUE, q + 16, p + 32, 64 * 4, 0, nullptr, nullptr));
  cl_command_type type = 0;
  clGetEventInfo(copied, CL_EVENT_COMMAND_TYPE, sizeof type, &type, nullptr);
  EXPECT_EQ(type, cl_command_type(CL_COMMAND_SVM_MEMCPY));
  clGetEventInfo(filled, CL_EVENT_COMMAND_TYPE, sizeof type, &type, nullptr);
  EXPECT_EQ(type, cl_command_type(CL_COMMAND_SVM_MEMFILL));
  map(queue_, q, n * 4, CL_MAP_READ);
  EXPECT_EQ(q[0], pattern);
  EXPECT_EQ(q[16], 32u * 7);
  EXPECT_EQ(q[79], 95u * 7);
  EXPECT_EQ(q[80], pattern);
  EXPECT_EQ(q[n - 1], pattern);
  unmap(queue_, q);
  // Back to the application's memory.
  std::vector<cl_uint> out(n);
  ASSERT_CL(CL_SUCCESS,
            clEnqueueSVMMemcpy(queue_, CL_TRUE, out.data(), p, n * 4, 0, nullptr, nullptr));
  EXPECT_EQ(out, host);
  clSVMFree(context_, p);
  clSVMFree(context_, q);
}

struct FreeRecord {
  std::atomic<int> calls{0};
  cl_command_queue queue = nullptr;
  std::vector<void*> pointers;
};

void CL_CALLBACK recordFree(cl_command_queue queue, cl_uint n, void* pointers[], void* user) {
  auto* r = static_cast<FreeRecord*>(user);
  r->queue = queue;
  r->pointers.assign(pointers, pointers + n);
  cl_context context = nullptr;
  clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof context, &context, nullptr);
  for (cl_uint i = 0; i < n; ++i) clSVMFree(context, pointers[i]);
  r->calls++;
}

TEST_F(Svm, EnqueueSvmFreeRunsTheCallbackAfterItsWaitList) {
  void* list[2] = {clSVMAlloc(context_, CL_MEM_READ_WRITE, 256, 0),
                   clSVMAlloc(context_, CL_MEM_READ_WRITE, 1 << 20, 0)};
  ASSERT_NE(list[0], nullptr);
  ASSERT_NE(list[1], nullptr);
  Event gate = makeUserEvent();
  FreeRecord record;
  Event freed;
  cl_event wait = gate.get();
  ASSERT_CL(CL_SUCCESS,
            clEnqueueSVMFree(queue_, 2, list, recordFree, &record, 1, &wait, freed.out()));
  list[0] = list[1] = nullptr;  // the list may be reused at once
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(record.calls.load(), 0) << "freed before its wait list completed";
  ASSERT_CL(CL_SUCCESS, clSetUserEventStatus(gate, CL_COMPLETE));
  cl_event freed_event = freed.get();
  ASSERT_CL(CL_SUCCESS, clWaitForEvents(1, &freed_event));
  EXPECT_EQ(record.calls.load(), 1);
  EXPECT_EQ(record.queue, queue_.get());
  ASSERT_EQ(record.pointers.size(), 2u);
  EXPECT_NE(record.pointers[0], nullptr);
  cl_command_type type = 0;
  clGetEventInfo(freed, CL_EVENT_COMMAND_TYPE, sizeof type, &type, nullptr);
  EXPECT_EQ(type, cl_command_type(CL_COMMAND_SVM_FREE));
  // Without a callback Manifold frees them itself.
  void* more[1] = {clSVMAlloc(context_, CL_MEM_READ_WRITE, 64, 0)};
  ASSERT_CL(CL_SUCCESS, clEnqueueSVMFree(queue_, 1, more, nullptr, nullptr, 0, nullptr, nullptr));
  ASSERT_CL(CL_SUCCESS, clFinish(queue_));
  // The spec's errors.
  EXPECT_CL(CL_INVALID_VALUE,
            clEnqueueSVMFree(queue_, 0, more, nullptr, nullptr, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE,
            clEnqueueSVMFree(queue_, 1, nullptr, nullptr, nullptr, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_EVENT_WAIT_LIST,
            clEnqueueSVMFree(queue_, 1, more, nullptr, nullptr, 1, nullptr, nullptr));
}

TEST_F(Svm, BufferMadeOnAnSvmPointerSharesItsBytes) {
  SKIP_IF_KERNELS_COMPUTE_NOTHING(device_);
  const size_t n = 256;
  auto* p = static_cast<cl_int*>(clSVMAlloc(context_, CL_MEM_READ_WRITE, 2 * n * 4, 0));
  ASSERT_NE(p, nullptr);
  Mem buffer = makeBuffer(n * 4, CL_MEM_USE_HOST_PTR | CL_MEM_READ_WRITE, p + n);
  cl_bool uses_svm = CL_FALSE;
  clGetMemObjectInfo(buffer, CL_MEM_USES_SVM_POINTER, sizeof uses_svm, &uses_svm, nullptr);
  EXPECT_EQ(uses_svm, CL_TRUE);
  void* host_ptr = nullptr;
  clGetMemObjectInfo(buffer, CL_MEM_HOST_PTR, sizeof host_ptr, &host_ptr, nullptr);
  EXPECT_EQ(host_ptr, p + n);
  cl_mem associated = nullptr;
  clGetMemObjectInfo(buffer, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof associated, &associated, nullptr);
  EXPECT_EQ(associated, nullptr);
  Kernel k = build(context_, {device_}, "fill_ints");
  cl_mem arg = buffer;
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(k, 0, sizeof arg, &arg));
  cl_int v = 7;
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(k, 1, sizeof v, &v));
  ASSERT_CL(CL_SUCCESS,
            clEnqueueNDRangeKernel(queue_, k, 1, nullptr, &n, nullptr, 0, nullptr, nullptr));
  map(queue_, p, 2 * n * 4, CL_MAP_READ);
  EXPECT_EQ(p[n], 7);
  EXPECT_EQ(p[2 * n - 1], cl_int(7 + n - 1));
  unmap(queue_, p);
  // The spec: a buffer larger than the rest of the allocation is CL_INVALID_BUFFER_SIZE.
  cl_int err = CL_SUCCESS;
  Mem bad(clCreateBuffer(context_, CL_MEM_USE_HOST_PTR, 2 * n * 4, p + n, &err));
  EXPECT_ERR(CL_INVALID_BUFFER_SIZE, err);
  // Unsetting the indirect pointers: an empty list.
  EXPECT_CL(CL_SUCCESS, clSetKernelExecInfo(k, CL_KERNEL_EXEC_INFO_SVM_PTRS, 0, nullptr));
  buffer.reset(nullptr);
  ASSERT_CL(CL_SUCCESS, clFinish(queue_));
  clSVMFree(context_, p);
}

TEST_F(Svm, CommandErrors) {
  auto* p = static_cast<char*>(clSVMAlloc(context_, CL_MEM_READ_WRITE, 4096, 0));
  ASSERT_NE(p, nullptr);
  EXPECT_CL(CL_MEM_COPY_OVERLAP,
            clEnqueueSVMMemcpy(queue_, CL_TRUE, p, p + 8, 64, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE,
            clEnqueueSVMMemcpy(queue_, CL_TRUE, nullptr, p, 64, 0, nullptr, nullptr));
  // A range past the end of the allocation, a map of size 0, bad map flags.
  EXPECT_CL(CL_INVALID_VALUE,
            clEnqueueSVMMap(queue_, CL_TRUE, CL_MAP_READ, p + 4000, 200, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE,
            clEnqueueSVMMap(queue_, CL_TRUE, CL_MAP_READ, p, 0, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE,
            clEnqueueSVMMap(queue_, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE_INVALIDATE_REGION, p, 64, 0,
                            nullptr, nullptr));
  const cl_uint pattern = 0;
  EXPECT_CL(CL_INVALID_VALUE,
            clEnqueueSVMMemFill(queue_, p + 2, &pattern, 4, 64, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueSVMMemFill(queue_, p, &pattern, 3, 63, 0, nullptr, nullptr));
  // A pointer of another context's allocation.
  cl_int err = CL_SUCCESS;
  Context other(clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  void* foreign = clSVMAlloc(other, CL_MEM_READ_WRITE, 64, 0);
  ASSERT_NE(foreign, nullptr);
  EXPECT_CL(CL_INVALID_VALUE,
            clEnqueueSVMMemcpy(queue_, CL_TRUE, p, foreign, 64, 0, nullptr, nullptr));
  // Nor as a kernel argument: inside the SVM range only live allocations of the kernel's context
  // have memory on the devices.
  Kernel k = build(context_, {device_}, "fill_ints");
  EXPECT_CL(CL_INVALID_ARG_VALUE, clSetKernelArgSVMPointer(k, 0, foreign));
  EXPECT_CL(CL_SUCCESS, clSetKernelArgSVMPointer(k, 0, p + 100));
  EXPECT_CL(CL_SUCCESS, clSetKernelArgSVMPointer(k, 0, nullptr));
  clSVMFree(context_, foreign);  // not this context's: ignored
  clSVMFree(other, foreign);
  clSVMFree(context_, p);
}

TEST_F(Svm, FineGrainBufferNeedsNoMapOnAnyDevice) {
  // Fine grain: the host writes and reads the allocation directly, no map, between kernels of
  // every device that reports fine-grain buffers (the host's pages, which GPUs map in place).
  std::vector<cl_device_id> devices;
  bool all_compute = true;
  for (cl_device_id d : svmDevices())
    if (svmCaps(d) & CL_DEVICE_SVM_FINE_GRAIN_BUFFER) {
      devices.push_back(d);
      all_compute = all_compute && !kernelsComputeNothing(d);
    }
  if (devices.empty()) GTEST_SKIP() << "no device reports fine-grain buffer SVM";
  cl_int err = CL_SUCCESS;
  Context context(
      clCreateContext(nullptr, cl_uint(devices.size()), devices.data(), nullptr, nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  const size_t n = 4096;
  auto* p = static_cast<cl_int*>(
      clSVMAlloc(context, CL_MEM_READ_WRITE | CL_MEM_SVM_FINE_GRAIN_BUFFER, n * sizeof(cl_int), 0));
  ASSERT_NE(p, nullptr);
  Kernel k = build(context, devices, "fill_ints");
  for (size_t i = 0; i < devices.size(); ++i) {
    Queue q(clCreateCommandQueueWithProperties(context, devices[i], nullptr, &err));
    ASSERT_ERR(CL_SUCCESS, err);
    p[0] = -1;  // the host's write, seen by nobody before the kernel overwrites it
    ASSERT_CL(CL_SUCCESS, clSetKernelArgSVMPointer(k, 0, p));
    const cl_int v = cl_int(100 * (i + 1));
    ASSERT_CL(CL_SUCCESS, clSetKernelArg(k, 1, sizeof v, &v));
    ASSERT_CL(CL_SUCCESS,
              clEnqueueNDRangeKernel(q, k, 1, nullptr, &n, nullptr, 0, nullptr, nullptr));
    ASSERT_CL(CL_SUCCESS, clFinish(q));
    if (all_compute) {
      EXPECT_EQ(p[0], v) << "device " << i;
      EXPECT_EQ(p[n - 1], v + cl_int(n - 1)) << "device " << i;
    }
  }
  clSVMFree(context, p);
}

TEST_F(Svm, FineGrainAtomicsAreSharedWithTheHost) {
  if (!(svmCaps(device_) & CL_DEVICE_SVM_ATOMICS)) GTEST_SKIP() << "no SVM atomics";
  SKIP_IF_KERNELS_COMPUTE_NOTHING(device_);
  auto* counter = static_cast<std::atomic<cl_int>*>(clSVMAlloc(
      context_, CL_MEM_READ_WRITE | CL_MEM_SVM_FINE_GRAIN_BUFFER | CL_MEM_SVM_ATOMICS, 64, 0));
  ASSERT_NE(counter, nullptr);
  counter->store(0);
  const char* source = R"(
    kernel void bump(global atomic_int* c, int times) {
      for (int i = 0; i < times; ++i)
        atomic_fetch_add_explicit(c, 1, memory_order_relaxed, memory_scope_all_svm_devices);
    })";
  cl_int err = CL_SUCCESS;
  Program program(clCreateProgramWithSource(context_, 1, &source, nullptr, &err));
  ASSERT_CL(CL_SUCCESS, clBuildProgram(program, 1, &device_, "-cl-std=CL3.0", nullptr, nullptr));
  Kernel k(clCreateKernel(program, "bump", &err));
  ASSERT_ERR(CL_SUCCESS, err);
  const cl_int times = 10000;
  ASSERT_CL(CL_SUCCESS, clSetKernelArgSVMPointer(k, 0, counter));
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(k, 1, sizeof times, &times));
  const size_t global = 64;
  ASSERT_CL(CL_SUCCESS,
            clEnqueueNDRangeKernel(queue_, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr));
  clFlush(queue_);
  for (int i = 0; i < times; ++i) counter->fetch_add(1);  // while the kernel runs
  ASSERT_CL(CL_SUCCESS, clFinish(queue_));
  EXPECT_EQ(counter->load(), times * cl_int(global + 1));
  clSVMFree(context_, counter);
}

}  // namespace
