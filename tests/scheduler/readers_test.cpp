// Readers that no dependency orders, on several queues of one device and on different devices,
// of a buffer whose current bytes are elsewhere (host memory after CL_MEM_COPY_HOST_PTR, or
// another device after a kernel wrote it). OpenCL needs no ordering between commands that only
// read a buffer, so every reader must see the bytes, however the runtime moves them: a runtime
// that records a device's copy as current when it plans the move, before the bytes arrive, lets a
// second reader read (or copy from) memory that is still being filled.
//
// Meaningful where the context has devices with memory of their own (the "_mixed" build adds
// emulated GPUs; MANIFOLD_TEST_DEVICE_TYPE=all or gpu on a GPU machine); on the CPU alone the
// bytes never move and the tests check plain concurrent reads.
#include "sched_test.h"

namespace {

using namespace schedtest;

constexpr const char* kSource = R"CLC(
kernel void copy_in(const global uint* in, global uint* out) {
  size_t i = get_global_id(0);
  out[i] = in[i];
}
kernel void fill_index(global uint* out, uint salt) {
  size_t i = get_global_id(0);
  out[i] = (uint)i * 2654435761u + salt;
}
)CLC";

// Large enough that a move takes milliseconds, so that a second reader comes while it runs.
constexpr size_t kElems = size_t(4) << 20;  // 16 MiB of uint
constexpr size_t kBytes = kElems * 4;

class Readers : public MultiDeviceTest {
 protected:
  void SetUp() override {
    MultiDeviceTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    program_ = build(kSource);
    ASSERT_FALSE(HasFailure());
  }
  // First index where out differs from expected(i), or -1.
  template <typename F>
  long firstMismatch(cl_command_queue q, cl_mem out, F expected) {
    std::vector<uint32_t> v(kElems);
    EXPECT_CL_OK(clEnqueueReadBuffer(q, out, CL_TRUE, 0, kBytes, v.data(), 0, nullptr, nullptr));
    for (size_t i = 0; i < kElems; ++i)
      if (v[i] != expected(i)) return static_cast<long>(i);
    return -1;
  }
  cl_int copyIn(cl_command_queue q, cl_kernel k, cl_mem in, cl_mem out, cl_event wait,
                cl_event* done) {
    setArg(k, 0, in);
    setArg(k, 1, out);
    const size_t global = kElems;
    return clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, nullptr, wait ? 1 : 0,
                                  wait ? &wait : nullptr, done);
  }
  Program program_;
};

// Host memory holds the bytes; two queues of each device read them with kernels, unordered.
TEST_F(Readers, TwoQueuesOfOneDeviceReadHostInitialisedBuffer) {
  std::vector<uint32_t> init(kElems);
  for (size_t i = 0; i < kElems; ++i) init[i] = static_cast<uint32_t>(i * 7 + 1);
  for (cl_device_id d : devices_) {
    SCOPED_TRACE("device '" + deviceName(d) + "'");
    Mem in = makeBuffer(kBytes, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, init.data());
    Mem out1 = makeBuffer(kBytes), out2 = makeBuffer(kBytes);
    Queue q1 = makeQueue(d, 0), q2 = makeQueue(d, 0);
    Kernel k1 = kernel(program_, "copy_in"), k2 = kernel(program_, "copy_in");
    ASSERT_FALSE(HasFailure());
    ASSERT_CL(CL_SUCCESS, copyIn(q1, k1, in, out1, nullptr, nullptr));
    ASSERT_CL(CL_SUCCESS, copyIn(q2, k2, in, out2, nullptr, nullptr));
    EXPECT_CL_OK(clFinish(q1));
    EXPECT_CL_OK(clFinish(q2));
    auto expected = [&](size_t i) { return init[i]; };
    EXPECT_EQ(-1, firstMismatch(q1, out1, expected)) << "first reader";
    EXPECT_EQ(-1, firstMismatch(q1, out2, expected)) << "second reader, another queue";
  }
}

// A kernel on the first device writes the buffer; then, unordered among themselves, every other
// device reads it (each must fetch the bytes from the first device or host memory) and a
// clEnqueueReadBuffer on another queue reads it too.
TEST_F(Readers, EveryDeviceReadsWhatOneDeviceWrote) {
  if (devices_.size() < 2) GTEST_SKIP() << "needs two devices";
  // A few rounds: whether a second reader comes while the first one's move runs is timing.
  for (int round = 0; round < 3 && !HasFailure(); ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    Mem data = makeBuffer(kBytes);
    Queue writer = makeQueue(devices_[0], 0);
    Kernel fill = kernel(program_, "fill_index");
    ASSERT_FALSE(HasFailure());
    setArg(fill, 0, data.get());
    setArg(fill, 1, cl_uint(99));
    Event written;
    const size_t global = kElems;
    ASSERT_CL(CL_SUCCESS, clEnqueueNDRangeKernel(writer, fill, 1, nullptr, &global, nullptr, 0,
                                                 nullptr, written.out()));
    std::vector<Queue> queues;
    std::vector<Kernel> kernels;
    std::vector<Mem> outs;
    for (size_t i = 1; i < devices_.size(); ++i)
      for (int again = 0; again < 3; ++again) {
        queues.push_back(makeQueue(devices_[i], 0));
        kernels.push_back(kernel(program_, "copy_in"));
        outs.push_back(makeBuffer(kBytes));
        ASSERT_CL(CL_SUCCESS,
                  copyIn(queues.back(), kernels.back(), data, outs.back(), written, nullptr));
      }
    std::vector<uint32_t> host(kElems, 0);
    Queue reader = makeQueue(devices_.back(), 0);
    cl_event w = written;
    ASSERT_CL(CL_SUCCESS,
              clEnqueueReadBuffer(reader, data, CL_FALSE, 0, kBytes, host.data(), 1, &w, nullptr));
    for (auto& q : queues) EXPECT_CL_OK(clFinish(q));
    EXPECT_CL_OK(clFinish(reader));
    auto expected = [](size_t i) { return static_cast<uint32_t>(i) * 2654435761u + 99u; };
    for (size_t k = 0; k < outs.size(); ++k)
      EXPECT_EQ(-1, firstMismatch(writer, outs[k], expected)) << "reader kernel " << k;
    long bad = -1;
    for (size_t i = 0; i < kElems && bad < 0; ++i)
      if (host[i] != expected(i)) bad = static_cast<long>(i);
    EXPECT_EQ(-1, bad) << "clEnqueueReadBuffer";
  }
}

}  // namespace
