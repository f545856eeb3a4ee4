// Pipeline across devices of one context: the CPU produces (a kernel on a CPU queue), the GPU
// transforms (a kernel on a GPU queue; with two GPUs they take turns), the CPU consumes (a kernel
// on an out-of-order CPU queue that folds every result into an accumulator, so order matters),
// over a ring of buffers, with no host synchronisation inside the loop: only events. Checked
// against a host model at intervals (non-blocking reads) and at the end.
//
// Built twice: scheduler_pipeline_gpu (MANIFOLD_PIPELINE_GPU, label gpu: CPU + GPUs, skipped
// without a GPU) and scheduler_pipeline (CI: the transform runs on a second CPU queue).
// MANIFOLD_SCHED_ITERATIONS sets the number of iterations (default 300, 60 under sanitizers).
#include "sched_test.h"

namespace {

using namespace schedtest;

constexpr const char* kSource = R"CLC(
kernel void produce(global uint* x, uint iter) {
  uint i = (uint)get_global_id(0);
  x[i] = i * 7u + iter * 131u;
}
kernel void transform(global const uint* x, global uint* y) {
  uint i = (uint)get_global_id(0);
  y[i] = x[i] * x[i] + 3u;
}
kernel void consume(global const uint* y, global uint* acc, uint iter) {
  uint i = (uint)get_global_id(0);
  acc[i] = acc[i] * 31u + y[i] + iter;
}
)CLC";

constexpr size_t kElems = 4096;
constexpr size_t kBytes = kElems * 4;
constexpr int kSlots = 3;

#ifdef MANIFOLD_PIPELINE_GPU
constexpr bool kWithGpu = true;
#else
constexpr bool kWithGpu = false;
#endif

class Pipeline : public MultiDeviceTest {
 protected:
  void SetUp() override {
    setUpDevices(kWithGpu ? CL_DEVICE_TYPE_ALL : CL_DEVICE_TYPE_CPU);
    if (IsSkipped() || HasFatalFailure()) return;
    cpus_ = devicesOf(CL_DEVICE_TYPE_CPU);
    gpus_ = devicesOf(CL_DEVICE_TYPE_GPU);
    if (cpus_.empty()) GTEST_SKIP() << "no CPU device";
    if (kWithGpu && gpus_.empty())
      GTEST_SKIP() << "no GPU device: the CPU-only variant is scheduler_pipeline";
  }
  std::vector<cl_device_id> cpus_, gpus_;
};

TEST_F(Pipeline, CpuProducesTransformConsumes) {
  const int iterations =
      static_cast<int>(envLong("MANIFOLD_SCHED_ITERATIONS", kSanitized ? 60 : 300));
  cl_device_id cpu = cpus_.front();
  Queue produce_q = makeQueue(cpu, CL_QUEUE_PROFILING_ENABLE);
  Queue consume_q =
      makeQueue(cpu, supportsOutOfOrder(cpu) ? CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE : 0);
  std::vector<Queue> transform_qs;
  if (kWithGpu) {
    for (cl_device_id g : gpus_) transform_qs.push_back(makeQueue(g, CL_QUEUE_PROFILING_ENABLE));
  } else {
    transform_qs.push_back(
        makeQueue(cpu, supportsOutOfOrder(cpu) ? CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE : 0));
  }
  Program program = build(kSource);
  ASSERT_FALSE(HasFailure());
  Kernel produce = kernel(program, "produce"), transform = kernel(program, "transform"),
         consume = kernel(program, "consume");
  ASSERT_FALSE(HasFailure());
  std::vector<Mem> x, y;
  for (int s = 0; s < kSlots; ++s) {
    x.push_back(makeBuffer(kBytes));
    y.push_back(makeBuffer(kBytes));
  }
  std::vector<uint32_t> acc_model(kElems, 1);
  Mem acc = makeBuffer(kBytes, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, acc_model.data());
  ASSERT_FALSE(HasFailure());

  std::vector<Event> produced(iterations), transformed(iterations), consumed(iterations);
  struct Snapshot {
    int iteration;
    Event event;
    std::vector<uint32_t> got, expected;
  };
  std::vector<Snapshot> snapshots;
  snapshots.reserve(iterations / 25 + 2);
  const size_t global = kElems;
  for (int it = 0; it < iterations; ++it) {
    const int s = it % kSlots;
    const cl_uint iter = static_cast<cl_uint>(it);
    // produce(it) overwrites x[s]: the transform that read it kSlots iterations ago must be done.
    std::vector<cl_event> waits;
    if (it >= kSlots) waits.push_back(transformed[it - kSlots]);
    setArg(produce, 0, x[s].get());
    setArg(produce, 1, iter);
    ASSERT_CL(CL_SUCCESS,
              clEnqueueNDRangeKernel(produce_q, produce, 1, nullptr, &global, nullptr,
                                     static_cast<cl_uint>(waits.size()),
                                     waits.empty() ? nullptr : waits.data(), produced[it].out()));
    // transform(it) reads x[s] and overwrites y[s], which consume(it - kSlots) read.
    waits = {produced[it]};
    if (it >= kSlots) waits.push_back(consumed[it - kSlots]);
    setArg(transform, 0, x[s].get());
    setArg(transform, 1, y[s].get());
    cl_command_queue tq = transform_qs[it % transform_qs.size()];
    ASSERT_CL(CL_SUCCESS, clEnqueueNDRangeKernel(tq, transform, 1, nullptr, &global, nullptr,
                                                 static_cast<cl_uint>(waits.size()),
                                                 waits.empty() ? nullptr : waits.data(),
                                                 transformed[it].out()));
    // consume(it) folds y[s] into acc after consume(it - 1) (an out-of-order queue: say so).
    waits = {transformed[it]};
    if (it > 0) waits.push_back(consumed[it - 1]);
    setArg(consume, 0, y[s].get());
    setArg(consume, 1, acc.get());
    setArg(consume, 2, iter);
    ASSERT_CL(CL_SUCCESS,
              clEnqueueNDRangeKernel(consume_q, consume, 1, nullptr, &global, nullptr,
                                     static_cast<cl_uint>(waits.size()),
                                     waits.empty() ? nullptr : waits.data(), consumed[it].out()));
    for (size_t i = 0; i < kElems; ++i) {
      const uint32_t xi = static_cast<uint32_t>(i) * 7u + iter * 131u;
      acc_model[i] = acc_model[i] * 31u + (xi * xi + 3u) + iter;
    }
    if (it % 25 == 24) {
      // A read of the accumulator on the producer's queue, which knows nothing of the consumer
      // but this wait list.
      snapshots.push_back({it, Event(), std::vector<uint32_t>(kElems), acc_model});
      cl_event c = consumed[it];
      ASSERT_CL(CL_SUCCESS, clEnqueueReadBuffer(produce_q, acc, CL_FALSE, 0, kBytes,
                                                snapshots.back().got.data(), 1, &c,
                                                snapshots.back().event.out()));
    }
  }
  for (auto& q : transform_qs) EXPECT_CL_OK(clFlush(q));
  EXPECT_CL_OK(clFinish(consume_q));
  EXPECT_CL_OK(clFinish(produce_q));
  for (auto& q : transform_qs) EXPECT_CL_OK(clFinish(q));
  for (const Snapshot& snap : snapshots) {
    EXPECT_STATUS(CL_COMPLETE, eventStatus(snap.event));
    EXPECT_TRUE(snap.got == snap.expected)
        << "accumulator after iteration " << snap.iteration << " differs";
  }
  std::vector<uint32_t> final_acc(kElems);
  EXPECT_CL_OK(clEnqueueReadBuffer(consume_q, acc, CL_TRUE, 0, kBytes, final_acc.data(), 0, nullptr,
                                   nullptr));
  for (size_t i = 0; i < kElems; ++i)
    ASSERT_EQ(acc_model[i], final_acc[i])
        << "element " << i << " after " << iterations << " iterations";
  // Profiling: the transform starts after its producer ended (both have profiling on).
  if (kWithGpu) {
    int64_t worst = INT64_MIN;
    for (int it = 0; it < iterations; ++it) {
      cl_int e1, e2;
      const cl_ulong end = profilingInfo(produced[it], CL_PROFILING_COMMAND_END, &e1);
      const cl_ulong start = profilingInfo(transformed[it], CL_PROFILING_COMMAND_START, &e2);
      EXPECT_CL_OK(e1);
      EXPECT_CL_OK(e2);
      worst = std::max(worst, static_cast<int64_t>(end) - static_cast<int64_t>(start));
    }
    const int64_t skew = envLong("MANIFOLD_SCHED_SKEW_NS", 20000);
    EXPECT_LE(worst, skew)
        << "a transform started (GPU clock, converted) this many ns before its producer ended";
    std::printf("%d iterations over %zu GPU(s); worst producer END - transform START: %lld ns\n",
                iterations, gpus_.size(), static_cast<long long>(worst));
  }
}

}  // namespace
