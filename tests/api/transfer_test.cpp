// clEnqueueReadBuffer, clEnqueueWriteBuffer, clEnqueueCopyBuffer, clEnqueueFillBuffer:
// blocking and non-blocking, bounds, overlap, pattern sizes, wait lists and contexts.
#include "cl_test.h"

using namespace cltest;

namespace {

class TransferApi : public ContextTest {};

std::vector<unsigned char> iota(size_t n, int seed = 0) {
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>((i * 31 + seed) % 253);
  return v;
}

TEST_F(TransferApi, BlockingWriteThenRead) {
  const size_t n = 1 << 20;
  Mem m = makeBuffer(n);
  auto src = iota(n);
  ASSERT_CL(CL_SUCCESS,
            clEnqueueWriteBuffer(queue_, m, CL_TRUE, 0, n, src.data(), 0, nullptr, nullptr));
  // The spec: after a blocking write returns, ptr may be reused.
  std::fill(src.begin(), src.end(), 0);
  std::vector<unsigned char> dst(n, 1);
  ASSERT_CL(CL_SUCCESS,
            clEnqueueReadBuffer(queue_, m, CL_TRUE, 0, n, dst.data(), 0, nullptr, nullptr));
  EXPECT_EQ(iota(n), dst);
}

TEST_F(TransferApi, NonBlockingWithEvents) {
  const size_t n = 1 << 16;
  Mem m = makeBuffer(n);
  auto src = iota(n, 3);
  std::vector<unsigned char> dst(n, 0);
  Event w, r;
  ASSERT_CL(CL_SUCCESS,
            clEnqueueWriteBuffer(queue_, m, CL_FALSE, 0, n, src.data(), 0, nullptr, w.out()));
  cl_event we = w;
  ASSERT_CL(CL_SUCCESS,
            clEnqueueReadBuffer(queue_, m, CL_FALSE, 0, n, dst.data(), 1, &we, r.out()));
  cl_event re = r;
  ASSERT_CL(CL_SUCCESS, clWaitForEvents(1, &re));
  EXPECT_EQ(src, dst);
  EXPECT_EQ(cl_command_type(CL_COMMAND_WRITE_BUFFER),
            eventInfo<cl_command_type>(w, CL_EVENT_COMMAND_TYPE));
  EXPECT_EQ(cl_command_type(CL_COMMAND_READ_BUFFER),
            eventInfo<cl_command_type>(r, CL_EVENT_COMMAND_TYPE));
  EXPECT_EQ(queue_.get(), eventInfo<cl_command_queue>(r, CL_EVENT_COMMAND_QUEUE));
  EXPECT_EQ(context_.get(), eventInfo<cl_context>(r, CL_EVENT_CONTEXT));
}

TEST_F(TransferApi, PartialReadWriteWithOffsets) {
  Mem m = makeBuffer(256);
  std::vector<unsigned char> zeros(256, 0);
  write(m, zeros.data(), 256);
  auto part = iota(50, 9);
  write(m, part.data(), 50, 100);
  auto all = read(m, 256);
  for (size_t i = 0; i < 256; ++i)
    ASSERT_EQ((i >= 100 && i < 150) ? part[i - 100] : 0, all[i]) << i;
  EXPECT_EQ(part, read(m, 50, 100));
  // The last byte.
  unsigned char last = 0x77;
  write(m, &last, 1, 255);
  EXPECT_EQ(0x77, read(m, 1, 255)[0]);
}

TEST_F(TransferApi, ReadWriteBounds) {
  Mem m = makeBuffer(128);
  std::vector<unsigned char> d(256);
  // The spec: CL_INVALID_VALUE if the region being read or written specified by (offset, size)
  // is out of bounds or if ptr is a NULL value.
  EXPECT_CL(CL_INVALID_VALUE,
            clEnqueueReadBuffer(queue_, m, CL_TRUE, 0, 129, d.data(), 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE,
            clEnqueueReadBuffer(queue_, m, CL_TRUE, 128, 1, d.data(), 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE,
            clEnqueueReadBuffer(queue_, m, CL_TRUE, 1, SIZE_MAX, d.data(), 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE,
            clEnqueueReadBuffer(queue_, m, CL_TRUE, 0, 16, nullptr, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE,
            clEnqueueWriteBuffer(queue_, m, CL_TRUE, 100, 29, d.data(), 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE,
            clEnqueueWriteBuffer(queue_, m, CL_TRUE, SIZE_MAX, 2, d.data(), 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE,
            clEnqueueWriteBuffer(queue_, m, CL_TRUE, 0, 16, nullptr, 0, nullptr, nullptr));
  // Invalid objects.
  EXPECT_CL(CL_INVALID_MEM_OBJECT,
            clEnqueueReadBuffer(queue_, nullptr, CL_TRUE, 0, 16, d.data(), 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_COMMAND_QUEUE,
            clEnqueueReadBuffer(nullptr, m, CL_TRUE, 0, 16, d.data(), 0, nullptr, nullptr));
  // Nothing was enqueued by the failed calls.
  EXPECT_CL_OK(clFinish(queue_));
}

TEST_F(TransferApi, WaitListValidation) {
  Mem m = makeBuffer(64);
  char d[64];
  Event e = makeUserEvent();
  cl_event ev = e;
  // The spec: CL_INVALID_EVENT_WAIT_LIST if event_wait_list is NULL and
  // num_events_in_wait_list > 0, or event_wait_list is not NULL and num_events_in_wait_list is 0,
  // or if event objects in event_wait_list are not valid events.
  EXPECT_CL(CL_INVALID_EVENT_WAIT_LIST,
            clEnqueueReadBuffer(queue_, m, CL_FALSE, 0, 8, d, 1, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_EVENT_WAIT_LIST,
            clEnqueueReadBuffer(queue_, m, CL_FALSE, 0, 8, d, 0, &ev, nullptr));
  cl_event bad[] = {ev, nullptr};
  EXPECT_CL(CL_INVALID_EVENT_WAIT_LIST,
            clEnqueueWriteBuffer(queue_, m, CL_FALSE, 0, 8, d, 2, bad, nullptr));
  cl_event wrong_type[] = {reinterpret_cast<cl_event>(m.get())};
  EXPECT_CL(CL_INVALID_EVENT_WAIT_LIST,
            clEnqueueCopyBuffer(queue_, m, m, 0, 32, 8, 1, wrong_type, nullptr));
  EXPECT_CL_OK(clSetUserEventStatus(e, CL_COMPLETE));
  EXPECT_CL_OK(clFinish(queue_));
}

TEST_F(TransferApi, ObjectsOfAnotherContext) {
  Context other = makeOtherContext(device_);
  cl_int err = -1;
  Mem foreign(clCreateBuffer(other, 0, 64, nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  Event foreign_event(clCreateUserEvent(other, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  Mem m = makeBuffer(64);
  char d[64] = {};
  // The spec: CL_INVALID_CONTEXT if the context associated with command_queue and buffer are
  // not the same or if the context associated with command_queue and events in
  // event_wait_list are not the same.
  EXPECT_CL(CL_INVALID_CONTEXT,
            clEnqueueReadBuffer(queue_, foreign, CL_TRUE, 0, 8, d, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_CONTEXT,
            clEnqueueWriteBuffer(queue_, foreign, CL_TRUE, 0, 8, d, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_CONTEXT,
            clEnqueueCopyBuffer(queue_, m, foreign, 0, 0, 8, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_CONTEXT,
            clEnqueueCopyBuffer(queue_, foreign, m, 0, 0, 8, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_CONTEXT,
            clEnqueueFillBuffer(queue_, foreign, d, 1, 0, 8, 0, nullptr, nullptr));
  cl_event fe = foreign_event;
  EXPECT_CL(CL_INVALID_CONTEXT, clEnqueueReadBuffer(queue_, m, CL_FALSE, 0, 8, d, 1, &fe, nullptr));
  EXPECT_CL_OK(clSetUserEventStatus(foreign_event, CL_COMPLETE));
}

TEST_F(TransferApi, CopyBuffer) {
  const size_t n = 4096;
  Mem a = makeBuffer(n), b = makeBuffer(n);
  auto src = iota(n, 5);
  write(a, src.data(), n);
  std::vector<unsigned char> zeros(n, 0);
  write(b, zeros.data(), n);
  Event e;
  ASSERT_CL(CL_SUCCESS, clEnqueueCopyBuffer(queue_, a, b, 100, 1000, 2000, 0, nullptr, e.out()));
  EXPECT_EQ(cl_command_type(CL_COMMAND_COPY_BUFFER),
            eventInfo<cl_command_type>(e, CL_EVENT_COMMAND_TYPE));
  auto got = read(b, n);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ((i >= 1000 && i < 3000) ? src[i - 900] : 0, got[i]) << i;
}

TEST_F(TransferApi, CopyWithinOneBuffer) {
  const size_t n = 1024;
  Mem a = makeBuffer(n);
  auto src = iota(n, 1);
  write(a, src.data(), n);
  // Adjacent regions do not overlap.
  EXPECT_CL_OK(clEnqueueCopyBuffer(queue_, a, a, 0, 512, 512, 0, nullptr, nullptr));
  auto got = read(a, n);
  for (size_t i = 0; i < 512; ++i) ASSERT_EQ(src[i], got[512 + i]);
  // The spec: CL_MEM_COPY_OVERLAP if src_buffer and dst_buffer are the same buffer or
  // sub-buffer object and the source and destination regions overlap: src_offset <= dst_offset
  // <= src_offset + size - 1 or dst_offset <= src_offset <= dst_offset + size - 1.
  EXPECT_CL(CL_MEM_COPY_OVERLAP,
            clEnqueueCopyBuffer(queue_, a, a, 0, 511, 512, 0, nullptr, nullptr));
  EXPECT_CL(CL_MEM_COPY_OVERLAP,
            clEnqueueCopyBuffer(queue_, a, a, 511, 0, 512, 0, nullptr, nullptr));
  EXPECT_CL(CL_MEM_COPY_OVERLAP,
            clEnqueueCopyBuffer(queue_, a, a, 100, 100, 1, 0, nullptr, nullptr));
  EXPECT_CL_OK(clEnqueueCopyBuffer(queue_, a, a, 100, 101, 1, 0, nullptr, nullptr));
}

TEST_F(TransferApi, CopyBounds) {
  Mem a = makeBuffer(128), b = makeBuffer(64);
  // The spec: CL_INVALID_VALUE if src_offset, dst_offset, size, src_offset + size or
  // dst_offset + size require accessing elements outside the src_buffer and dst_buffer buffer
  // objects respectively.
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueCopyBuffer(queue_, a, b, 0, 0, 65, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueCopyBuffer(queue_, a, b, 100, 0, 29, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueCopyBuffer(queue_, a, b, 0, 64, 1, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE,
            clEnqueueCopyBuffer(queue_, a, b, SIZE_MAX, 0, 2, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueCopyBuffer(queue_, a, b, 0, 0, 0, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_MEM_OBJECT,
            clEnqueueCopyBuffer(queue_, a, nullptr, 0, 0, 1, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_MEM_OBJECT,
            clEnqueueCopyBuffer(queue_, nullptr, b, 0, 0, 1, 0, nullptr, nullptr));
  EXPECT_CL_OK(clEnqueueCopyBuffer(queue_, a, b, 64, 0, 64, 0, nullptr, nullptr));
  EXPECT_CL_OK(clFinish(queue_));
}

TEST_F(TransferApi, FillEveryPatternSize) {
  const size_t n = 1024;
  Mem m = makeBuffer(n);
  for (size_t ps : {1, 2, 4, 8, 16, 32, 64, 128}) {
    std::vector<unsigned char> zeros(n, 0);
    write(m, zeros.data(), n);
    auto pattern = iota(ps, static_cast<int>(ps));
    const size_t offset = ps * 2, size = n - ps * 4;
    Event e;
    ASSERT_CL(CL_SUCCESS,
              clEnqueueFillBuffer(queue_, m, pattern.data(), ps, offset, size, 0, nullptr, e.out()))
        << "pattern size " << ps;
    EXPECT_EQ(cl_command_type(CL_COMMAND_FILL_BUFFER),
              eventInfo<cl_command_type>(e, CL_EVENT_COMMAND_TYPE));
    auto got = read(m, n);
    for (size_t i = 0; i < n; ++i) {
      const unsigned char want =
          (i >= offset && i < offset + size) ? pattern[(i - offset) % ps] : 0;
      ASSERT_EQ(want, got[i]) << "pattern size " << ps << " byte " << i;
    }
  }
}

TEST_F(TransferApi, FillValidation) {
  Mem m = makeBuffer(256);
  unsigned char pattern[256] = {};
  // The spec: CL_INVALID_VALUE if pattern is NULL or if pattern_size is 0 or if pattern_size is
  // not one of {1, 2, 4, 8, 16, 32, 64, 128}.
  EXPECT_CL(CL_INVALID_VALUE,
            clEnqueueFillBuffer(queue_, m, nullptr, 4, 0, 16, 0, nullptr, nullptr));
  for (size_t bad : {0, 3, 6, 12, 256})
    EXPECT_CL(CL_INVALID_VALUE,
              clEnqueueFillBuffer(queue_, m, pattern, bad, 0, 0, 0, nullptr, nullptr))
        << "pattern size " << bad;
  // The spec: CL_INVALID_VALUE if offset and size are not a multiple of pattern_size.
  EXPECT_CL(CL_INVALID_VALUE,
            clEnqueueFillBuffer(queue_, m, pattern, 4, 2, 16, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE,
            clEnqueueFillBuffer(queue_, m, pattern, 4, 0, 18, 0, nullptr, nullptr));
  // The spec: CL_INVALID_VALUE if offset or offset + size require accessing elements outside
  // the buffer buffer object respectively.
  EXPECT_CL(CL_INVALID_VALUE,
            clEnqueueFillBuffer(queue_, m, pattern, 4, 0, 260, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE,
            clEnqueueFillBuffer(queue_, m, pattern, 4, 256, 4, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_MEM_OBJECT,
            clEnqueueFillBuffer(queue_, nullptr, pattern, 4, 0, 4, 0, nullptr, nullptr));
  EXPECT_CL_OK(clEnqueueFillBuffer(queue_, m, pattern, 128, 128, 128, 0, nullptr, nullptr));
  EXPECT_CL_OK(clFinish(queue_));
}

TEST_F(TransferApi, PatternIsCopiedAtEnqueue) {
  Mem m = makeBuffer(64);
  Event gate = makeUserEvent();
  cl_event g = gate;
  cl_uint pattern = 0x01020304;
  ASSERT_CL(CL_SUCCESS, clEnqueueFillBuffer(queue_, m, &pattern, 4, 0, 64, 1, &g, nullptr));
  // The spec: the memory associated with pattern can be reused or freed after the function
  // returns.
  pattern = 0;
  EXPECT_CL_OK(clSetUserEventStatus(gate, CL_COMPLETE));
  auto got = read(m, 64);
  cl_uint first;
  std::memcpy(&first, got.data(), 4);
  EXPECT_EQ(0x01020304u, first);
}

TEST_F(TransferApi, BlockingReadAfterFailedEvent) {
  Mem m = makeBuffer(64);
  Event gate = makeUserEvent();
  cl_event g = gate;
  std::thread setter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    clSetUserEventStatus(g, -1234);
  });
  char d[64];
  // The spec: CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST if the read and write operations are
  // blocking and the execution status of any of the events in event_wait_list is a negative
  // integer value.
  EXPECT_CL(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST,
            clEnqueueReadBuffer(queue_, m, CL_TRUE, 0, 64, d, 1, &g, nullptr));
  setter.join();
  // The queue keeps working.
  EXPECT_CL(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST,
            clEnqueueWriteBuffer(queue_, m, CL_TRUE, 0, 64, d, 1, &g, nullptr));
  EXPECT_CL_OK(clEnqueueWriteBuffer(queue_, m, CL_TRUE, 0, 64, d, 0, nullptr, nullptr));
  EXPECT_CL_OK(clFinish(queue_));
}

TEST_F(TransferApi, OutOfOrderQueueTransfers) {
  Queue q = makeQueue(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  ASSERT_TRUE(q);
  const size_t n = 1 << 14;
  Mem a = makeBuffer(n), b = makeBuffer(n);
  auto src = iota(n, 11);
  std::vector<unsigned char> dst(n, 0);
  Event w, c, r;
  ASSERT_CL(CL_SUCCESS,
            clEnqueueWriteBuffer(q, a, CL_FALSE, 0, n, src.data(), 0, nullptr, w.out()));
  cl_event we = w;
  ASSERT_CL(CL_SUCCESS, clEnqueueCopyBuffer(q, a, b, 0, 0, n, 1, &we, c.out()));
  cl_event ce = c;
  ASSERT_CL(CL_SUCCESS, clEnqueueReadBuffer(q, b, CL_TRUE, 0, n, dst.data(), 1, &ce, r.out()));
  EXPECT_EQ(src, dst);
}

}  // namespace
