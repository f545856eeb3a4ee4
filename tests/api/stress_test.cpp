// Many threads on the same objects at once, at the API boundary: one program built, rebuilt and
// queried while kernels are made from it, buffers created, filled, copied, read and released while
// commands on them are in flight, queues finished from several threads, events waited on and
// released by threads that did not make them, info queries on everything throughout. Every call
// must return CL_SUCCESS or an error the spec allows for that race, and every thread's own data
// must come back right. Run on each backend CI has (the CPU here; the simulated CUDA driver, the
// HIP shim and the Level Zero test driver through the same binary) and under ThreadSanitizer.
// Deterministic per thread (a fixed seed each), bounded by an operation count.
#include <algorithm>
#include <random>
#include <set>

#include "cl_test.h"

using namespace cltest;

namespace {

constexpr int kThreads = 4;
constexpr int kOperations = 150;
constexpr size_t kWords = 256;

const char* kSource = R"(
kernel void add(global uint* data, uint value) { data[get_global_id(0)] += value; }
kernel void copy(global const uint* in, global uint* out) {
  out[get_global_id(0)] = in[get_global_id(0)];
})";

class Stress : public ContextTest {
 protected:
  void SetUp() override {
    ContextTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    computes_ = !kernelsComputeNothing(device_);
    cl_int err = CL_SUCCESS;
    program_ = clCreateProgramWithSource(context_, 1, &kSource, nullptr, &err);
    ASSERT_EQ(Err(CL_SUCCESS), Err(err));
    ASSERT_EQ(Err(CL_SUCCESS), Err(clBuildProgram(program_, 1, &device_, "", nullptr, nullptr)));
    ooo_ = makeQueue(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
    // Each thread's slice starts where a sub-buffer may (CL_DEVICE_MEM_BASE_ADDR_ALIGN, in bits).
    cl_uint align_bits = 0;
    ASSERT_EQ(Err(CL_SUCCESS), Err(clGetDeviceInfo(device_, CL_DEVICE_MEM_BASE_ADDR_ALIGN,
                                                   sizeof align_bits, &align_bits, nullptr)));
    slice_stride_ = std::max<size_t>(kWords * sizeof(cl_uint), align_bits / 8);
    shared_ = makeBuffer(slice_stride_ * kThreads);
  }
  void TearDown() override {
    if (ooo_) clFinish(ooo_);
    ContextTest::TearDown();
    if (program_) clReleaseProgram(program_);
  }

 public:
  // Records a call's result when it is not one of `allowed`.
  void check(cl_int result, std::initializer_list<cl_int> allowed, const char* call) {
    for (cl_int a : allowed)
      if (result == a) return;
    std::lock_guard lock(mutex_);
    unexpected_.insert(std::string(call) + " -> " + errorName(result));
  }

 protected:
  cl_program program_ = nullptr;
  Queue ooo_;
  Mem shared_;
  bool computes_ = true;
  size_t slice_stride_ = 0;
  std::mutex mutex_;
  std::set<std::string> unexpected_;
  std::atomic<int> wrong_data_{0};
};

// Info queries that any thread may make on shared objects at any time.
void query_everything(Stress* t, cl_context context, cl_command_queue queue, cl_mem mem,
                      cl_program program, cl_kernel kernel, cl_event event) {
  cl_uint count = 0;
  size_t size = 0;
  t->check(clGetContextInfo(context, CL_CONTEXT_REFERENCE_COUNT, sizeof count, &count, nullptr),
           {CL_SUCCESS}, "clGetContextInfo");
  t->check(clGetCommandQueueInfo(queue, CL_QUEUE_REFERENCE_COUNT, sizeof count, &count, nullptr),
           {CL_SUCCESS}, "clGetCommandQueueInfo");
  t->check(clGetMemObjectInfo(mem, CL_MEM_SIZE, sizeof size, &size, nullptr), {CL_SUCCESS},
           "clGetMemObjectInfo");
  cl_build_status status = CL_BUILD_NONE;
  cl_device_id device = nullptr;
  t->check(clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof device, &device, nullptr),
           {CL_SUCCESS}, "clGetCommandQueueInfo(DEVICE)");
  t->check(clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_STATUS, sizeof status, &status,
                                 nullptr),
           {CL_SUCCESS}, "clGetProgramBuildInfo");
  t->check(clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size),
           {CL_SUCCESS}, "clGetProgramBuildInfo(LOG)");
  t->check(clGetProgramInfo(program, CL_PROGRAM_NUM_KERNELS, sizeof size, &size, nullptr),
           {CL_SUCCESS, CL_INVALID_PROGRAM_EXECUTABLE}, "clGetProgramInfo(NUM_KERNELS)");
  if (kernel) {
    t->check(clGetKernelInfo(kernel, CL_KERNEL_NUM_ARGS, sizeof count, &count, nullptr),
             {CL_SUCCESS}, "clGetKernelInfo");
    t->check(clGetKernelWorkGroupInfo(kernel, device, CL_KERNEL_WORK_GROUP_SIZE, sizeof size, &size,
                                      nullptr),
             {CL_SUCCESS}, "clGetKernelWorkGroupInfo");
  }
  if (event) {
    cl_int execution = 0;
    t->check(clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof execution, &execution,
                            nullptr),
             {CL_SUCCESS}, "clGetEventInfo");
  }
}

TEST_F(Stress, ThreadsShareEveryKindOfObject) {
  // Events handed from one thread to another, to be waited on and released there.
  std::mutex handoff_mutex;
  std::vector<cl_event> handoff;
  std::atomic<int> go{0};
  std::vector<std::thread> threads;
  for (int id = 0; id < kThreads; ++id)
    threads.emplace_back([&, id] {
      std::mt19937 random(1000 + id);
      go.fetch_add(1);
      while (go.load() < kThreads) std::this_thread::yield();
      const size_t base = size_t(id) * slice_stride_;
      // What this thread's slice of the shared buffer holds, as far as it knows.
      std::vector<cl_uint> model(kWords, 0);
      bool model_known = false;
      for (int op = 0; op < kOperations; ++op) {
        cl_command_queue queue = (random() & 1) ? queue_.get() : ooo_.get();
        cl_int err = CL_SUCCESS;
        switch (random() % 9) {
          case 0: {  // a kernel of the shared program, its arguments set, launched on the slice
            cl_kernel kernel = clCreateKernel(program_, "add", &err);
            check(err, {CL_SUCCESS, CL_INVALID_PROGRAM_EXECUTABLE}, "clCreateKernel");
            if (!kernel) break;
            cl_buffer_region region{base, kWords * sizeof(cl_uint)};
            cl_mem slice_buffer =
                clCreateSubBuffer(shared_, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
            check(err, {CL_SUCCESS}, "clCreateSubBuffer");
            const cl_uint value = cl_uint(random() % 100);
            check(clSetKernelArg(kernel, 0, sizeof(cl_mem), &slice_buffer), {CL_SUCCESS},
                  "clSetKernelArg(0)");
            check(clSetKernelArg(kernel, 1, sizeof value, &value), {CL_SUCCESS},
                  "clSetKernelArg(1)");
            // Wrong sizes are refused whatever else is going on.
            check(clSetKernelArg(kernel, 1, 2, &value), {CL_INVALID_ARG_SIZE},
                  "clSetKernelArg(wrong size)");
            const size_t global = kWords;
            // The in-order queue keeps this thread's commands in order; the out-of-order one
            // would not, so kernels go to the in-order queue and the model stays exact.
            check(clEnqueueNDRangeKernel(queue_, kernel, 1, nullptr, &global, nullptr, 0, nullptr,
                                         nullptr),
                  {CL_SUCCESS}, "clEnqueueNDRangeKernel");
            if (computes_)  // the simulated CUDA driver runs no kernel code
              for (cl_uint& word : model) word += value;
            query_everything(this, context_, queue_, shared_, program_, kernel, nullptr);
            clReleaseMemObject(slice_buffer);
            clReleaseKernel(kernel);
            break;
          }
          case 1: {  // a blocking write of the slice through either queue
            for (size_t i = 0; i < kWords; ++i) model[i] = cl_uint(random());
            check(clFinish(queue_), {CL_SUCCESS}, "clFinish");
            check(clEnqueueWriteBuffer(queue, shared_, CL_TRUE, base, kWords * sizeof(cl_uint),
                                       model.data(), 0, nullptr, nullptr),
                  {CL_SUCCESS}, "clEnqueueWriteBuffer");
            model_known = true;
            break;
          }
          case 2: {  // a read of the slice, checked against the model
            std::vector<cl_uint> back(kWords);
            cl_event done = nullptr;
            check(clEnqueueReadBuffer(queue_, shared_, CL_FALSE, base, kWords * sizeof(cl_uint),
                                      back.data(), 0, nullptr, &done),
                  {CL_SUCCESS}, "clEnqueueReadBuffer");
            if (!done) break;
            check(clWaitForEvents(1, &done), {CL_SUCCESS}, "clWaitForEvents");
            clReleaseEvent(done);
            if (model_known && back != model) ++wrong_data_;
            break;
          }
          case 3: {  // a buffer of its own: fill, copy into it, release while in flight
            cl_mem own = clCreateBuffer(context_, 0, kWords * sizeof(cl_uint), nullptr, &err);
            check(err, {CL_SUCCESS}, "clCreateBuffer");
            if (!own) break;
            const cl_uint pattern = 7;
            check(clEnqueueFillBuffer(queue, own, &pattern, sizeof pattern, 0,
                                      kWords * sizeof(cl_uint), 0, nullptr, nullptr),
                  {CL_SUCCESS}, "clEnqueueFillBuffer");
            check(clEnqueueCopyBuffer(queue_, shared_, own, base, 0, kWords * sizeof(cl_uint), 0,
                                      nullptr, nullptr),
                  {CL_SUCCESS}, "clEnqueueCopyBuffer");
            query_everything(this, context_, queue, own, program_, nullptr, nullptr);
            clReleaseMemObject(own);
            break;
          }
          case 4: {  // an event for another thread to wait on and release
            cl_event marker = nullptr;
            check(clEnqueueMarkerWithWaitList(queue, 0, nullptr, &marker), {CL_SUCCESS},
                  "clEnqueueMarkerWithWaitList");
            if (marker) {
              std::lock_guard lock(handoff_mutex);
              handoff.push_back(marker);
            }
            break;
          }
          case 5: {  // waits on and releases an event another thread made
            cl_event theirs = nullptr;
            {
              std::lock_guard lock(handoff_mutex);
              if (!handoff.empty()) {
                theirs = handoff.back();
                handoff.pop_back();
              }
            }
            if (!theirs) break;
            query_everything(this, context_, queue, shared_, program_, nullptr, theirs);
            check(clWaitForEvents(1, &theirs), {CL_SUCCESS}, "clWaitForEvents(handed over)");
            clReleaseEvent(theirs);
            break;
          }
          case 6:  // finishes a queue other threads are enqueueing into
            check(clFinish(queue), {CL_SUCCESS}, "clFinish");
            break;
          case 7: {  // a program of its own built from source while the shared one is in use
            cl_program own = clCreateProgramWithSource(context_, 1, &kSource, nullptr, &err);
            check(err, {CL_SUCCESS}, "clCreateProgramWithSource");
            if (!own) break;
            check(clBuildProgram(own, 1, &device_, "-DUNUSED=1", nullptr, nullptr), {CL_SUCCESS},
                  "clBuildProgram");
            cl_kernel kernel = clCreateKernel(own, "copy", &err);
            check(err, {CL_SUCCESS}, "clCreateKernel(own)");
            clReleaseProgram(own);  // the kernel keeps it
            if (kernel) {
              query_everything(this, context_, queue, shared_, own, kernel, nullptr);
              clReleaseKernel(kernel);
            }
            break;
          }
          default: {  // retains and releases of shared objects
            clRetainContext(context_);
            clRetainCommandQueue(queue);
            clRetainMemObject(shared_);
            clRetainProgram(program_);
            query_everything(this, context_, queue, shared_, program_, nullptr, nullptr);
            clReleaseProgram(program_);
            clReleaseMemObject(shared_);
            clReleaseCommandQueue(queue);
            clReleaseContext(context_);
          }
        }
      }
      check(clFinish(queue_), {CL_SUCCESS}, "clFinish(end)");
      std::vector<cl_uint> back(kWords);
      check(clEnqueueReadBuffer(queue_, shared_, CL_TRUE, base, kWords * sizeof(cl_uint),
                                back.data(), 0, nullptr, nullptr),
            {CL_SUCCESS}, "clEnqueueReadBuffer(end)");
      if (model_known && back != model) ++wrong_data_;
    });
  for (std::thread& thread : threads) thread.join();
  for (cl_event event : handoff) {
    EXPECT_CL_OK(clWaitForEvents(1, &event));
    clReleaseEvent(event);
  }
  EXPECT_CL_OK(clFinish(ooo_));
  EXPECT_CL_OK(clFinish(queue_));
  for (const std::string& call : unexpected_) ADD_FAILURE() << "unexpected result: " << call;
  EXPECT_EQ(wrong_data_.load(), 0) << "a thread read back other data than it wrote";
}

// A program rebuilt by one thread while others make kernels from it, query it and launch: each
// call succeeds or reports what the spec says for a program being built or with kernels attached.
TEST_F(Stress, ProgramRebuiltWhileOthersUseIt) {
  std::atomic<bool> stop{false};
  std::thread rebuilder([&] {
    for (int i = 0; i < 20 && !stop.load(); ++i)
      check(clBuildProgram(program_, 1, &device_, (i & 1) ? "-DX=1" : "", nullptr, nullptr),
            {CL_SUCCESS, CL_INVALID_OPERATION}, "clBuildProgram(rebuild)");
  });
  std::vector<std::thread> users;
  for (int id = 0; id < kThreads - 1; ++id)
    users.emplace_back([&] {
      Mem buffer = makeBuffer(kWords * sizeof(cl_uint));
      for (int i = 0; i < 40; ++i) {
        cl_int err = CL_SUCCESS;
        cl_kernel kernel = clCreateKernel(program_, "add", &err);
        check(err, {CL_SUCCESS, CL_INVALID_PROGRAM_EXECUTABLE}, "clCreateKernel(during rebuild)");
        if (kernel) {
          const cl_uint value = 1;
          cl_mem raw = buffer.get();
          check(clSetKernelArg(kernel, 0, sizeof raw, &raw), {CL_SUCCESS}, "clSetKernelArg(0)");
          check(clSetKernelArg(kernel, 1, sizeof value, &value), {CL_SUCCESS}, "clSetKernelArg(1)");
          const size_t global = kWords;
          check(clEnqueueNDRangeKernel(queue_, kernel, 1, nullptr, &global, nullptr, 0, nullptr,
                                       nullptr),
                {CL_SUCCESS}, "clEnqueueNDRangeKernel(during rebuild)");
          clReleaseKernel(kernel);
        }
        query_everything(this, context_, queue_, buffer, program_, nullptr, nullptr);
      }
    });
  for (std::thread& user : users) user.join();
  stop = true;
  rebuilder.join();
  EXPECT_CL_OK(clFinish(queue_));
  for (const std::string& call : unexpected_) ADD_FAILURE() << "unexpected result: " << call;
}

}  // namespace
