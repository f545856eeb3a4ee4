// clCreateSubBuffer: alignment, bounds, flag inheritance and conflicts, overlapping
// sub-buffers, info queries, lifetime of the parent.
#include "cl_test.h"

using namespace cltest;

namespace {

class SubBufferApi : public ContextTest {
 protected:
  void SetUp() override {
    ContextTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    align_ = deviceInfo<cl_uint>(device_, CL_DEVICE_MEM_BASE_ADDR_ALIGN) / 8;
    ASSERT_GT(align_, 0u);
  }
  Mem sub(cl_mem parent, size_t origin, size_t size, cl_mem_flags flags = 0,
          cl_int* err_out = nullptr) {
    cl_buffer_region r{origin, size};
    cl_int err = -1;
    cl_mem m = clCreateSubBuffer(parent, flags, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
    if (err_out)
      *err_out = err;
    else
      EXPECT_ERR(CL_SUCCESS, err) << "origin " << origin << " size " << size << " flags 0x"
                                  << std::hex << flags;
    return Mem(m);
  }
  size_t align_ = 0;
};

TEST_F(SubBufferApi, SharesTheParentsStorage) {
  const size_t n = 4 * align_;
  Mem parent = makeBuffer(n);
  std::vector<unsigned char> zeros(n, 0);
  write(parent, zeros.data(), n);
  Mem s = sub(parent, align_, align_);
  ASSERT_TRUE(s);
  std::vector<unsigned char> ones(align_, 1);
  write(s, ones.data(), align_);
  auto all = read(parent, n);
  for (size_t i = 0; i < n; ++i)
    ASSERT_EQ((i >= align_ && i < 2 * align_) ? 1 : 0, all[i]) << "byte " << i;
  // And the other way round.
  std::vector<unsigned char> twos(n, 2);
  write(parent, twos.data(), n);
  EXPECT_EQ(std::vector<unsigned char>(align_, 2), read(s, align_));
}

TEST_F(SubBufferApi, InfoQueries) {
  Mem parent = makeBuffer(4 * align_);
  Mem s = sub(parent, 2 * align_, align_ + 3);
  ASSERT_TRUE(s);
  EXPECT_EQ(parent.get(), memInfo<cl_mem>(s, CL_MEM_ASSOCIATED_MEMOBJECT));
  EXPECT_EQ(2 * align_, memInfo<size_t>(s, CL_MEM_OFFSET));
  EXPECT_EQ(align_ + 3, memInfo<size_t>(s, CL_MEM_SIZE));
  EXPECT_EQ(cl_mem_object_type(CL_MEM_OBJECT_BUFFER), memInfo<cl_mem_object_type>(s, CL_MEM_TYPE));
  EXPECT_EQ(context_.get(), memInfo<cl_context>(s, CL_MEM_CONTEXT));
}

TEST_F(SubBufferApi, UseHostPtrParentGivesHostPtrPlusOrigin) {
  AlignedBuf host(4 * align_, align_);
  Mem parent = makeBuffer(4 * align_, CL_MEM_USE_HOST_PTR, host.p);
  Mem s = sub(parent, align_, align_);
  ASSERT_TRUE(s);
  // The spec: CL_MEM_HOST_PTR of a sub-buffer of a USE_HOST_PTR buffer is host_ptr + origin.
  EXPECT_EQ(host.as<unsigned char>() + align_, memInfo<void*>(s, CL_MEM_HOST_PTR));
  // Host pointer flags are inherited.
  EXPECT_TRUE(memInfo<cl_mem_flags>(s, CL_MEM_FLAGS) & CL_MEM_USE_HOST_PTR);
}

TEST_F(SubBufferApi, Alignment) {
  Mem parent = makeBuffer(4 * align_);
  cl_int err = CL_SUCCESS;
  // The spec: CL_MISALIGNED_SUB_BUFFER_OFFSET if there are no devices in context associated
  // with buffer for which the origin field of the cl_buffer_region structure passed in
  // buffer_create_info is aligned to the CL_DEVICE_MEM_BASE_ADDR_ALIGN value.
  if (align_ > 1) {
    Mem s = sub(parent, 1, 16, 0, &err);
    EXPECT_ERR(CL_MISALIGNED_SUB_BUFFER_OFFSET, err);
    EXPECT_EQ(nullptr, s.get());
    Mem t = sub(parent, align_ / 2, 16, 0, &err);
    EXPECT_ERR(CL_MISALIGNED_SUB_BUFFER_OFFSET, err);
  }
  Mem ok = sub(parent, 3 * align_, 1);
  EXPECT_TRUE(ok);
}

TEST_F(SubBufferApi, Bounds) {
  Mem parent = makeBuffer(4 * align_);
  cl_int err = CL_SUCCESS;
  // The spec: CL_INVALID_VALUE if the region specified by the cl_buffer_region structure passed
  // in buffer_create_info is out of bounds of buffer.
  Mem a = sub(parent, 0, 4 * align_ + 1, 0, &err);
  EXPECT_ERR(CL_INVALID_VALUE, err);
  Mem b = sub(parent, 4 * align_, 1, 0, &err);
  EXPECT_ERR(CL_INVALID_VALUE, err);
  Mem c = sub(parent, 2 * align_, SIZE_MAX - align_, 0, &err);  // origin + size wraps
  EXPECT_ERR(CL_INVALID_VALUE, err);
  // The spec: CL_INVALID_BUFFER_SIZE if the size field of the cl_buffer_region structure is 0.
  Mem d = sub(parent, 0, 0, 0, &err);
  EXPECT_ERR(CL_INVALID_BUFFER_SIZE, err);
  // The whole buffer is a valid region.
  Mem whole = sub(parent, 0, 4 * align_);
  EXPECT_TRUE(whole);
}

TEST_F(SubBufferApi, CreateTypeAndInfo) {
  Mem parent = makeBuffer(4 * align_);
  cl_buffer_region r{0, 16};
  cl_int err = CL_SUCCESS;
  // The spec: CL_INVALID_VALUE if value specified in buffer_create_type is not valid, or if
  // buffer_create_info is NULL.
  EXPECT_EQ(nullptr, clCreateSubBuffer(parent, 0, 0x7777, &r, &err));
  EXPECT_ERR(CL_INVALID_VALUE, err);
  EXPECT_EQ(nullptr, clCreateSubBuffer(parent, 0, CL_BUFFER_CREATE_TYPE_REGION, nullptr, &err));
  EXPECT_ERR(CL_INVALID_VALUE, err);
  EXPECT_EQ(nullptr, clCreateSubBuffer(nullptr, 0, CL_BUFFER_CREATE_TYPE_REGION, &r, &err));
  EXPECT_ERR(CL_INVALID_MEM_OBJECT, err);
}

TEST_F(SubBufferApi, NoSubBufferOfASubBuffer) {
  Mem parent = makeBuffer(4 * align_);
  Mem s = sub(parent, 0, 2 * align_);
  ASSERT_TRUE(s);
  cl_int err = CL_SUCCESS;
  // The spec: CL_INVALID_MEM_OBJECT if buffer is a sub-buffer object.
  Mem ss = sub(s, 0, align_, 0, &err);
  EXPECT_ERR(CL_INVALID_MEM_OBJECT, err);
}

TEST_F(SubBufferApi, FlagsAreInheritedWhenNotGiven) {
  AlignedBuf host(4 * align_, align_);
  Mem parent = makeBuffer(4 * align_,
                          CL_MEM_READ_ONLY | CL_MEM_HOST_READ_ONLY | CL_MEM_USE_HOST_PTR, host.p);
  Mem s = sub(parent, 0, align_);
  ASSERT_TRUE(s);
  const cl_mem_flags f = memInfo<cl_mem_flags>(s, CL_MEM_FLAGS);
  EXPECT_TRUE(f & CL_MEM_READ_ONLY);
  EXPECT_TRUE(f & CL_MEM_HOST_READ_ONLY);
  EXPECT_TRUE(f & CL_MEM_USE_HOST_PTR);
  // The inherited host access flag is enforced.
  char data[16] = {};
  EXPECT_CL(CL_INVALID_OPERATION,
            clEnqueueWriteBuffer(queue_, s, CL_TRUE, 0, 16, data, 0, nullptr, nullptr));
  // Narrower access is allowed.
  Mem rw_parent = makeBuffer(4 * align_);
  Mem narrowed = sub(rw_parent, 0, align_, CL_MEM_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS);
  ASSERT_TRUE(narrowed);
  const cl_mem_flags g = memInfo<cl_mem_flags>(narrowed, CL_MEM_FLAGS);
  EXPECT_TRUE(g & CL_MEM_WRITE_ONLY);
  EXPECT_FALSE(g & CL_MEM_READ_WRITE);
  EXPECT_TRUE(g & CL_MEM_HOST_NO_ACCESS);
  EXPECT_CL(CL_INVALID_OPERATION,
            clEnqueueReadBuffer(queue_, narrowed, CL_TRUE, 0, 16, data, 0, nullptr, nullptr));
}

TEST_F(SubBufferApi, ConflictingFlags) {
  struct Case {
    cl_mem_flags parent, sub;
  } cases[] = {
      // The spec: CL_INVALID_VALUE if buffer was created with CL_MEM_WRITE_ONLY and flags
      // specifies CL_MEM_READ_WRITE or CL_MEM_READ_ONLY,
      {CL_MEM_WRITE_ONLY, CL_MEM_READ_WRITE},
      {CL_MEM_WRITE_ONLY, CL_MEM_READ_ONLY},
      // or if buffer was created with CL_MEM_READ_ONLY and flags specifies CL_MEM_READ_WRITE or
      // CL_MEM_WRITE_ONLY,
      {CL_MEM_READ_ONLY, CL_MEM_READ_WRITE},
      {CL_MEM_READ_ONLY, CL_MEM_WRITE_ONLY},
      // or if flags specifies CL_MEM_USE_HOST_PTR or CL_MEM_ALLOC_HOST_PTR or CL_MEM_COPY_HOST_PTR.
      {CL_MEM_READ_WRITE, CL_MEM_USE_HOST_PTR},
      {CL_MEM_READ_WRITE, CL_MEM_ALLOC_HOST_PTR},
      {CL_MEM_READ_WRITE, CL_MEM_COPY_HOST_PTR},
      // CL_INVALID_VALUE if buffer was created with CL_MEM_HOST_WRITE_ONLY and flags specify
      // CL_MEM_HOST_READ_ONLY, or with CL_MEM_HOST_READ_ONLY and flags specify
      // CL_MEM_HOST_WRITE_ONLY, or with CL_MEM_HOST_NO_ACCESS and flags specify
      // CL_MEM_HOST_READ_ONLY or CL_MEM_HOST_WRITE_ONLY.
      {CL_MEM_HOST_WRITE_ONLY, CL_MEM_HOST_READ_ONLY},
      {CL_MEM_HOST_READ_ONLY, CL_MEM_HOST_WRITE_ONLY},
      {CL_MEM_HOST_NO_ACCESS, CL_MEM_HOST_READ_ONLY},
      {CL_MEM_HOST_NO_ACCESS, CL_MEM_HOST_WRITE_ONLY},
      // Invalid flag combinations as such.
      {CL_MEM_READ_WRITE, CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY},
      {CL_MEM_READ_WRITE, CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_WRITE_ONLY},
      {CL_MEM_READ_WRITE, cl_mem_flags(1) << 40},
  };
  for (const Case& c : cases) {
    Mem parent = makeBuffer(4 * align_, c.parent);
    ASSERT_TRUE(parent);
    cl_int err = CL_SUCCESS;
    Mem s = sub(parent, 0, align_, c.sub, &err);
    EXPECT_ERR(CL_INVALID_VALUE, err) << "parent 0x" << std::hex << c.parent << " sub 0x" << c.sub;
    EXPECT_EQ(nullptr, s.get());
  }
}

TEST_F(SubBufferApi, OverlappingSubBuffersAndCopies) {
  Mem parent = makeBuffer(4 * align_);
  std::vector<unsigned char> init(4 * align_);
  for (size_t i = 0; i < init.size(); ++i) init[i] = static_cast<unsigned char>(i % 251);
  write(parent, init.data(), init.size());
  // Overlapping sub-buffers may be created.
  Mem a = sub(parent, 0, 2 * align_);
  Mem b = sub(parent, align_, 2 * align_);
  Mem c = sub(parent, 3 * align_, align_);
  ASSERT_TRUE(a && b && c);
  // The spec: CL_MEM_COPY_OVERLAP if src_buffer and dst_buffer are different sub-buffers of the
  // same associated buffer object and they overlap.
  EXPECT_CL(CL_MEM_COPY_OVERLAP,
            clEnqueueCopyBuffer(queue_, a, b, align_, 0, align_, 0, nullptr, nullptr));
  EXPECT_CL(CL_MEM_COPY_OVERLAP,
            clEnqueueCopyBuffer(queue_, a, parent, 0, 0, 1, 0, nullptr, nullptr));
  // Regions that do not overlap in the parent are fine even though the sub-buffers do.
  EXPECT_CL_OK(clEnqueueCopyBuffer(queue_, a, b, 0, align_, align_, 0, nullptr, nullptr));
  EXPECT_CL_OK(clEnqueueCopyBuffer(queue_, a, c, 0, 0, align_, 0, nullptr, nullptr));
  auto got = read(parent, 4 * align_);
  for (size_t i = 0; i < align_; ++i) {
    ASSERT_EQ(init[i], got[2 * align_ + i]);
    ASSERT_EQ(init[i], got[3 * align_ + i]);
  }
}

TEST_F(SubBufferApi, SubBufferKeepsParentAlive) {
  struct Flag {
    std::atomic<int> n{0};
  } destroyed;
  cl_mem parent = makeBuffer(4 * align_).take();
  ASSERT_CL(CL_SUCCESS,
            clSetMemObjectDestructorCallback(
                parent, [](cl_mem, void* u) { static_cast<Flag*>(u)->n++; }, &destroyed));
  Mem s = sub(parent, align_, align_);
  ASSERT_TRUE(s);
  EXPECT_CL_OK(clReleaseMemObject(parent));
  EXPECT_EQ(0, destroyed.n.load());
  // The sub-buffer still works on the parent's memory.
  std::vector<unsigned char> d(align_, 5);
  write(s, d.data(), align_);
  EXPECT_EQ(d, read(s, align_));
  s.reset();
  EXPECT_CL_OK(clFinish(queue_));
  EXPECT_EQ(1, destroyed.n.load());
}

TEST_F(SubBufferApi, TransfersAreBoundedBySubBufferSize) {
  Mem parent = makeBuffer(4 * align_);
  Mem s = sub(parent, align_, align_);
  ASSERT_TRUE(s);
  std::vector<unsigned char> d(align_ + 1, 1);
  // The spec: CL_INVALID_VALUE if the region being read or written specified by (offset, size)
  // is out of bounds.
  EXPECT_CL(CL_INVALID_VALUE,
            clEnqueueWriteBuffer(queue_, s, CL_TRUE, 0, align_ + 1, d.data(), 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE,
            clEnqueueReadBuffer(queue_, s, CL_TRUE, 1, align_, d.data(), 0, nullptr, nullptr));
}

}  // namespace
