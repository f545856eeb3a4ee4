// clCreateBuffer / clCreateBufferWithProperties: every memory flag combination, host pointers
// (USE_HOST_PTR zero-copy on the CPU, COPY/ALLOC_HOST_PTR), host access flags, destructor
// callbacks, clGetMemObjectInfo, retain/release.
#include "cl_test.h"

using namespace cltest;

namespace {

class BufferApi : public ContextTest {};

constexpr cl_mem_flags kAccess = CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY;
constexpr cl_mem_flags kHostAccess =
    CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS;
constexpr cl_mem_flags kAllFlags[] = {
    CL_MEM_READ_WRITE,      CL_MEM_WRITE_ONLY,     CL_MEM_READ_ONLY,
    CL_MEM_USE_HOST_PTR,    CL_MEM_ALLOC_HOST_PTR, CL_MEM_COPY_HOST_PTR,
    CL_MEM_HOST_WRITE_ONLY, CL_MEM_HOST_READ_ONLY, CL_MEM_HOST_NO_ACCESS};

int bits(cl_mem_flags f) { return __builtin_popcountll(f); }

// The memory flags table: at most one of the access flags, at most one of the host access flags,
// CL_MEM_USE_HOST_PTR excludes CL_MEM_ALLOC_HOST_PTR and CL_MEM_COPY_HOST_PTR.
bool validFlags(cl_mem_flags f) {
  if (bits(f & kAccess) > 1 || bits(f & kHostAccess) > 1) return false;
  if ((f & CL_MEM_USE_HOST_PTR) && (f & (CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR)))
    return false;
  return true;
}

TEST_F(BufferApi, EveryFlagCombination) {
  AlignedBuf host(256);
  std::memset(host.p, 0x5a, 256);
  int valid = 0;
  for (unsigned mask = 0; mask < (1u << 9); ++mask) {
    cl_mem_flags f = 0;
    for (int i = 0; i < 9; ++i)
      if (mask & (1u << i)) f |= kAllFlags[i];
    const bool needs_ptr = f & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR);
    cl_int err = -1;
    Mem m(clCreateBuffer(context_, f, 256, needs_ptr ? host.p : nullptr, &err));
    if (!validFlags(f)) {
      // The spec: CL_INVALID_VALUE if values specified in flags are not valid as defined in the
      // memory flags table.
      EXPECT_ERR(CL_INVALID_VALUE, err) << "flags 0x" << std::hex << f;
      EXPECT_EQ(nullptr, m.get());
      continue;
    }
    ++valid;
    ASSERT_ERR(CL_SUCCESS, err) << "flags 0x" << std::hex << f;
    ASSERT_NE(nullptr, m.get());
    const cl_mem_flags got = memInfo<cl_mem_flags>(m, CL_MEM_FLAGS);
    EXPECT_EQ(f, got & f) << "CL_MEM_FLAGS must contain the flags given";
    EXPECT_EQ(256u, memInfo<size_t>(m, CL_MEM_SIZE));
    if (f & (CL_MEM_COPY_HOST_PTR | CL_MEM_USE_HOST_PTR)) {
      // Host-readable buffers show the host data.
      if (!(f & (CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS))) {
        auto v = read(m, 256);
        EXPECT_EQ(0x5a, v[0]);
        EXPECT_EQ(0x5a, v[255]);
      }
    }
    // The spec: CL_MEM_HOST_PTR is host_ptr if the buffer was created with USE_HOST_PTR,
    // otherwise NULL.
    EXPECT_EQ((f & CL_MEM_USE_HOST_PTR) ? host.p : nullptr, memInfo<void*>(m, CL_MEM_HOST_PTR));
  }
  EXPECT_GT(valid, 50);
}

TEST_F(BufferApi, UnknownFlagBits) {
  cl_int err = CL_SUCCESS;
  EXPECT_EQ(nullptr, clCreateBuffer(context_, cl_mem_flags(1) << 40, 64, nullptr, &err));
  EXPECT_ERR(CL_INVALID_VALUE, err);
  // CL_MEM_KERNEL_READ_AND_WRITE is only for image formats queries.
  EXPECT_EQ(nullptr, clCreateBuffer(context_, CL_MEM_KERNEL_READ_AND_WRITE, 64, nullptr, &err));
  EXPECT_ERR(CL_INVALID_VALUE, err);
  // SVM flags belong to clSVMAlloc.
  EXPECT_EQ(nullptr, clCreateBuffer(context_, CL_MEM_SVM_FINE_GRAIN_BUFFER, 64, nullptr, &err));
  EXPECT_ERR(CL_INVALID_VALUE, err);
}

TEST_F(BufferApi, HostPointerRules) {
  char host[64] = {};
  cl_int err = CL_SUCCESS;
  // The spec: CL_INVALID_HOST_PTR if host_ptr is NULL and CL_MEM_USE_HOST_PTR or
  // CL_MEM_COPY_HOST_PTR are set in flags or if host_ptr is not NULL but CL_MEM_COPY_HOST_PTR
  // or CL_MEM_USE_HOST_PTR are not set in flags.
  EXPECT_EQ(nullptr, clCreateBuffer(context_, CL_MEM_USE_HOST_PTR, 64, nullptr, &err));
  EXPECT_ERR(CL_INVALID_HOST_PTR, err);
  EXPECT_EQ(nullptr, clCreateBuffer(context_, CL_MEM_COPY_HOST_PTR, 64, nullptr, &err));
  EXPECT_ERR(CL_INVALID_HOST_PTR, err);
  EXPECT_EQ(nullptr, clCreateBuffer(context_, CL_MEM_READ_WRITE, 64, host, &err));
  EXPECT_ERR(CL_INVALID_HOST_PTR, err);
  EXPECT_EQ(nullptr, clCreateBuffer(context_, CL_MEM_ALLOC_HOST_PTR, 64, host, &err));
  EXPECT_ERR(CL_INVALID_HOST_PTR, err);
}

TEST_F(BufferApi, SizeRules) {
  cl_int err = CL_SUCCESS;
  // The spec: CL_INVALID_BUFFER_SIZE if size is 0, or greater than
  // CL_DEVICE_MAX_MEM_ALLOC_SIZE for all devices in context.
  EXPECT_EQ(nullptr, clCreateBuffer(context_, 0, 0, nullptr, &err));
  EXPECT_ERR(CL_INVALID_BUFFER_SIZE, err);
  const cl_ulong max = deviceInfo<cl_ulong>(device_, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
  ASSERT_GT(max, 0u);
  EXPECT_EQ(nullptr, clCreateBuffer(context_, 0, static_cast<size_t>(max) + 1, nullptr, &err));
  EXPECT_ERR(CL_INVALID_BUFFER_SIZE, err);
  EXPECT_EQ(nullptr, clCreateBuffer(context_, 0, SIZE_MAX, nullptr, &err));
  EXPECT_ERR(CL_INVALID_BUFFER_SIZE, err);
  EXPECT_EQ(nullptr, clCreateBuffer(nullptr, 0, 64, nullptr, &err));
  EXPECT_ERR(CL_INVALID_CONTEXT, err);
  // Odd sizes are fine.
  Mem odd = makeBuffer(3);
  EXPECT_EQ(3u, memInfo<size_t>(odd, CL_MEM_SIZE));
}

TEST_F(BufferApi, UseHostPtrIsZeroCopyOnCpu) {
  if (!isCpuDevice(device_) || !deviceInfo<cl_bool>(device_, CL_DEVICE_HOST_UNIFIED_MEMORY))
    GTEST_SKIP() << "zero-copy is a property of CPU devices in this machine's memory";
  AlignedBuf host(4096);
  auto* h = host.as<unsigned char>();
  for (int i = 0; i < 4096; ++i) h[i] = static_cast<unsigned char>(i);
  Mem m = makeBuffer(4096, CL_MEM_USE_HOST_PTR, host.p);
  std::vector<unsigned char> ones(100, 0xee);
  write(m, ones.data(), ones.size(), 1000);
  // The device works in the application's memory: the write lands there.
  EXPECT_EQ(0xee, h[1000]);
  EXPECT_EQ(0xee, h[1099]);
  EXPECT_EQ(static_cast<unsigned char>(1100), h[1100]);
  // The spec: mapping a USE_HOST_PTR buffer returns host_ptr + offset.
  cl_int err = -1;
  void* p =
      clEnqueueMapBuffer(queue_, m, CL_TRUE, CL_MAP_READ, 512, 256, 0, nullptr, nullptr, &err);
  ASSERT_ERR(CL_SUCCESS, err);
  EXPECT_EQ(h + 512, p);
  EXPECT_CL_OK(clEnqueueUnmapMemObject(queue_, m, p, 0, nullptr, nullptr));
  EXPECT_CL_OK(clFinish(queue_));
}

TEST_F(BufferApi, UseHostPtrUnalignedPointerWorks) {
  std::vector<unsigned char> host(1027, 3);
  Mem m = makeBuffer(1025, CL_MEM_USE_HOST_PTR, host.data() + 1);
  auto v = read(m, 1025);
  EXPECT_EQ(std::vector<unsigned char>(1025, 3), v);
}

TEST_F(BufferApi, CopyHostPtrTakesASnapshot) {
  std::vector<unsigned char> host(512, 1);
  Mem m = makeBuffer(512, CL_MEM_COPY_HOST_PTR, host.data());
  std::fill(host.begin(), host.end(), 2);
  EXPECT_EQ(std::vector<unsigned char>(512, 1), read(m, 512));
  EXPECT_EQ(nullptr, memInfo<void*>(m, CL_MEM_HOST_PTR));
}

TEST_F(BufferApi, AllocHostPtrWithCopyHostPtr) {
  std::vector<unsigned char> host(512, 9);
  Mem m = makeBuffer(512, CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR, host.data());
  EXPECT_EQ(host, read(m, 512));
  Mem n = makeBuffer(512, CL_MEM_ALLOC_HOST_PTR);
  std::vector<unsigned char> d(512, 4);
  write(n, d.data(), 512);
  EXPECT_EQ(d, read(n, 512));
}

TEST_F(BufferApi, HostAccessFlagsAreEnforced) {
  char data[64] = {};
  Mem wo = makeBuffer(64, CL_MEM_HOST_WRITE_ONLY);
  Mem ro = makeBuffer(64, CL_MEM_HOST_READ_ONLY);
  Mem na = makeBuffer(64, CL_MEM_HOST_NO_ACCESS);
  // The spec: CL_INVALID_OPERATION if clEnqueueReadBuffer is called on buffer which has been
  // created with CL_MEM_HOST_WRITE_ONLY or CL_MEM_HOST_NO_ACCESS (and writes likewise with
  // CL_MEM_HOST_READ_ONLY or CL_MEM_HOST_NO_ACCESS).
  EXPECT_CL(CL_INVALID_OPERATION,
            clEnqueueReadBuffer(queue_, wo, CL_TRUE, 0, 64, data, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_OPERATION,
            clEnqueueReadBuffer(queue_, na, CL_TRUE, 0, 64, data, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_OPERATION,
            clEnqueueWriteBuffer(queue_, ro, CL_TRUE, 0, 64, data, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_OPERATION,
            clEnqueueWriteBuffer(queue_, na, CL_TRUE, 0, 64, data, 0, nullptr, nullptr));
  EXPECT_CL_OK(clEnqueueWriteBuffer(queue_, wo, CL_TRUE, 0, 64, data, 0, nullptr, nullptr));
  EXPECT_CL_OK(clEnqueueReadBuffer(queue_, ro, CL_TRUE, 0, 64, data, 0, nullptr, nullptr));
  // Maps follow the same rules.
  cl_int err = CL_SUCCESS;
  EXPECT_EQ(nullptr,
            clEnqueueMapBuffer(queue_, wo, CL_TRUE, CL_MAP_READ, 0, 64, 0, nullptr, nullptr, &err));
  EXPECT_ERR(CL_INVALID_OPERATION, err);
  EXPECT_EQ(nullptr, clEnqueueMapBuffer(queue_, ro, CL_TRUE, CL_MAP_WRITE, 0, 64, 0, nullptr,
                                        nullptr, &err));
  EXPECT_ERR(CL_INVALID_OPERATION, err);
  EXPECT_EQ(nullptr, clEnqueueMapBuffer(queue_, ro, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, 0, 64,
                                        0, nullptr, nullptr, &err));
  EXPECT_ERR(CL_INVALID_OPERATION, err);
  EXPECT_EQ(nullptr,
            clEnqueueMapBuffer(queue_, na, CL_TRUE, CL_MAP_READ, 0, 64, 0, nullptr, nullptr, &err));
  EXPECT_ERR(CL_INVALID_OPERATION, err);
  // Copies and fills are device-side and allowed.
  cl_uchar pat = 1;
  EXPECT_CL_OK(clEnqueueFillBuffer(queue_, na, &pat, 1, 0, 64, 0, nullptr, nullptr));
  EXPECT_CL_OK(clEnqueueCopyBuffer(queue_, na, wo, 0, 0, 64, 0, nullptr, nullptr));
  EXPECT_CL_OK(clFinish(queue_));
}

TEST_F(BufferApi, InfoQueries) {
  Mem m = makeBuffer(100, CL_MEM_READ_ONLY);
  EXPECT_EQ(cl_mem_object_type(CL_MEM_OBJECT_BUFFER), memInfo<cl_mem_object_type>(m, CL_MEM_TYPE));
  EXPECT_EQ(100u, memInfo<size_t>(m, CL_MEM_SIZE));
  EXPECT_EQ(0u, memInfo<cl_uint>(m, CL_MEM_MAP_COUNT));
  EXPECT_EQ(1u, refCount(m.get()));
  EXPECT_EQ(context_.get(), memInfo<cl_context>(m, CL_MEM_CONTEXT));
  EXPECT_EQ(nullptr, memInfo<cl_mem>(m, CL_MEM_ASSOCIATED_MEMOBJECT));
  EXPECT_EQ(0u, memInfo<size_t>(m, CL_MEM_OFFSET));
  EXPECT_EQ(cl_bool(CL_FALSE), memInfo<cl_bool>(m, CL_MEM_USES_SVM_POINTER));
  EXPECT_TRUE(memInfo<cl_mem_flags>(m, CL_MEM_FLAGS) & CL_MEM_READ_ONLY);
  // The spec: CL_MEM_PROPERTIES of a buffer made by clCreateBuffer has size 0.
  size_t size = 99;
  EXPECT_CL_OK(clGetMemObjectInfo(m, CL_MEM_PROPERTIES, 0, nullptr, &size));
  EXPECT_EQ(0u, size);
  cl_uint v = 0;
  EXPECT_CL(CL_INVALID_VALUE, clGetMemObjectInfo(m, 0x7777, sizeof(v), &v, nullptr));
  EXPECT_CL(CL_INVALID_VALUE, clGetMemObjectInfo(m, CL_MEM_SIZE, 1, &v, nullptr));
  EXPECT_CL(CL_INVALID_MEM_OBJECT,
            clGetMemObjectInfo(nullptr, CL_MEM_SIZE, sizeof(size), &size, nullptr));
  // A buffer is not an image.
  EXPECT_NE(Err(CL_SUCCESS), Err(clGetImageInfo(m, CL_IMAGE_WIDTH, sizeof(size), &size, nullptr)));
}

TEST_F(BufferApi, CreateWithProperties) {
  cl_int err = -1;
  Mem a(clCreateBufferWithProperties(context_, nullptr, 0, 64, nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  size_t size = 99;
  EXPECT_CL_OK(clGetMemObjectInfo(a, CL_MEM_PROPERTIES, 0, nullptr, &size));
  EXPECT_EQ(0u, size);
  cl_mem_properties empty[] = {0};
  Mem b(clCreateBufferWithProperties(context_, empty, CL_MEM_READ_ONLY, 64, nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  auto props = infoVector<cl_mem_properties>(clGetMemObjectInfo, b, CL_MEM_PROPERTIES);
  // The spec: the properties given are returned as given (here the lone terminator).
  ASSERT_EQ(1u, props.size());
  EXPECT_EQ(0u, props[0]);
  // The spec: CL_INVALID_PROPERTY if a property name in properties is not a supported property
  // name.
  cl_mem_properties bogus[] = {0x7777, 1, 0};
  EXPECT_EQ(nullptr, clCreateBufferWithProperties(context_, bogus, 0, 64, nullptr, &err));
  EXPECT_ERR(CL_INVALID_PROPERTY, err);
  // The flag and size rules are those of clCreateBuffer.
  EXPECT_EQ(nullptr,
            clCreateBufferWithProperties(context_, nullptr, CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY,
                                         64, nullptr, &err));
  EXPECT_ERR(CL_INVALID_VALUE, err);
  EXPECT_EQ(nullptr, clCreateBufferWithProperties(context_, nullptr, 0, 0, nullptr, &err));
  EXPECT_ERR(CL_INVALID_BUFFER_SIZE, err);
  char host[8];
  EXPECT_EQ(nullptr,
            clCreateBufferWithProperties(context_, nullptr, CL_MEM_USE_HOST_PTR, 8, nullptr, &err));
  EXPECT_ERR(CL_INVALID_HOST_PTR, err);
  Mem c(clCreateBufferWithProperties(context_, nullptr, CL_MEM_USE_HOST_PTR, 8, host, &err));
  EXPECT_ERR(CL_SUCCESS, err);
}

TEST_F(BufferApi, RetainRelease) {
  cl_mem m = makeBuffer(64).take();
  EXPECT_CL_OK(clRetainMemObject(m));
  EXPECT_EQ(2u, refCount(m));
  EXPECT_CL_OK(clReleaseMemObject(m));
  EXPECT_EQ(1u, refCount(m));
  EXPECT_CL_OK(clReleaseMemObject(m));
  EXPECT_CL(CL_INVALID_MEM_OBJECT, clRetainMemObject(nullptr));
  EXPECT_CL(CL_INVALID_MEM_OBJECT, clReleaseMemObject(nullptr));
}

struct CallbackLog {
  std::mutex m;
  std::vector<int> order;
  std::vector<cl_mem> objects;
};
struct CallbackTag {
  CallbackLog* log;
  int id;
};
void CL_CALLBACK memDestroyed(cl_mem mem, void* user) {
  auto* tag = static_cast<CallbackTag*>(user);
  std::lock_guard<std::mutex> lock(tag->log->m);
  tag->log->order.push_back(tag->id);
  tag->log->objects.push_back(mem);
}

TEST_F(BufferApi, DestructorCallbacksRunOnceInReverseOrder) {
  CallbackLog log;
  CallbackTag t1{&log, 1}, t2{&log, 2}, t3{&log, 3};
  cl_mem m = makeBuffer(64).take();
  EXPECT_CL_OK(clSetMemObjectDestructorCallback(m, memDestroyed, &t1));
  EXPECT_CL_OK(clSetMemObjectDestructorCallback(m, memDestroyed, &t2));
  EXPECT_CL_OK(clSetMemObjectDestructorCallback(m, memDestroyed, &t3));
  EXPECT_CL_OK(clRetainMemObject(m));
  EXPECT_CL_OK(clReleaseMemObject(m));
  {
    std::lock_guard<std::mutex> lock(log.m);
    EXPECT_TRUE(log.order.empty());
  }
  EXPECT_CL_OK(clReleaseMemObject(m));
  std::lock_guard<std::mutex> lock(log.m);
  // The spec: the registered callbacks are called in the reverse order in which they were
  // registered.
  EXPECT_EQ((std::vector<int>{3, 2, 1}), log.order);
  for (cl_mem x : log.objects) EXPECT_EQ(m, x);
}

TEST_F(BufferApi, DestructorCallbackUseHostPtrMemoryReusableAfterwards) {
  // The spec: the callback is the point from which a USE_HOST_PTR region may be reused; a map
  // makes its contents current.
  struct State {
    std::vector<unsigned char>* host;
    bool ok = false;
  };
  std::vector<unsigned char> host(256, 0);
  State st{&host};
  cl_mem m = makeBuffer(256, CL_MEM_USE_HOST_PTR, host.data()).take();
  std::vector<unsigned char> data(256, 0x42);
  ASSERT_CL(CL_SUCCESS,
            clEnqueueWriteBuffer(queue_, m, CL_FALSE, 0, 256, data.data(), 0, nullptr, nullptr));
  cl_int err = CL_SUCCESS;
  void* mapped =
      clEnqueueMapBuffer(queue_, m, CL_FALSE, CL_MAP_READ, 0, 256, 0, nullptr, nullptr, &err);
  ASSERT_CL(CL_SUCCESS, err);
  ASSERT_CL(CL_SUCCESS, clEnqueueUnmapMemObject(queue_, m, mapped, 0, nullptr, nullptr));
  EXPECT_CL_OK(clSetMemObjectDestructorCallback(
      m,
      [](cl_mem, void* user) {
        auto* s = static_cast<State*>(user);
        s->ok = (*s->host)[0] == 0x42 && (*s->host)[255] == 0x42;
      },
      &st));
  // Released while the commands may still be queued: the callback runs once they have finished.
  EXPECT_CL_OK(clReleaseMemObject(m));
  EXPECT_CL_OK(clFinish(queue_));
  EXPECT_TRUE(st.ok);
}

// CTS mem_host_flags and buffers free a USE_HOST_PTR region before they release its buffer;
// the release must not write into it (on GPUs a write-back of the device copy corrupted the
// heap). The region is reused here with other bytes, which must stay.
TEST_F(BufferApi, ReleaseWritesNothingIntoAUseHostPtrRegion) {
  for (cl_bool blocking : {CL_TRUE, CL_FALSE}) {
    std::vector<unsigned char> host(4096, 0);
    cl_mem m =
        makeBuffer(host.size(), CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR | CL_MEM_HOST_WRITE_ONLY,
                   host.data())
            .take();
    std::vector<unsigned char> data(host.size(), 0x42);
    ASSERT_CL(CL_SUCCESS, clEnqueueWriteBuffer(queue_, m, blocking, 0, data.size(), data.data(), 0,
                                               nullptr, nullptr));
    ASSERT_CL(CL_SUCCESS, clFinish(queue_));
    std::fill(host.begin(), host.end(), 0x17);  // the application reuses its memory
    EXPECT_CL_OK(clReleaseMemObject(m));
    EXPECT_CL_OK(clFinish(queue_));
    EXPECT_EQ(std::count(host.begin(), host.end(), 0x17), ptrdiff_t(host.size()));
  }
}

TEST_F(BufferApi, DestructorCallbackInvalidArguments) {
  Mem m = makeBuffer(64);
  // The spec: CL_INVALID_VALUE if pfn_notify is NULL.
  EXPECT_CL(CL_INVALID_VALUE, clSetMemObjectDestructorCallback(m, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_MEM_OBJECT,
            clSetMemObjectDestructorCallback(nullptr, memDestroyed, nullptr));
}

TEST_F(BufferApi, ImagesAndPipesAreNotSupported) {
  if (caps_.images) GTEST_SKIP() << "the device supports images";
  cl_image_format fmt{CL_RGBA, CL_UNORM_INT8};
  cl_image_desc desc{};
  desc.image_type = CL_MEM_OBJECT_IMAGE2D;
  desc.image_width = 4;
  desc.image_height = 4;
  cl_int err = CL_SUCCESS;
  // The spec: CL_INVALID_OPERATION if there are no devices in context that support images.
  EXPECT_EQ(nullptr, clCreateImage(context_, 0, &fmt, &desc, nullptr, &err));
  EXPECT_ERR(CL_INVALID_OPERATION, err);
  cl_uint n = 99;
  EXPECT_CL_OK(clGetSupportedImageFormats(context_, 0, CL_MEM_OBJECT_IMAGE2D, 0, nullptr, &n));
  EXPECT_EQ(0u, n);
  if (!caps_.pipes) {
    EXPECT_EQ(nullptr, clCreatePipe(context_, 0, 4, 4, nullptr, &err));
    EXPECT_ERR(CL_INVALID_OPERATION, err);
  }
}

}  // namespace
