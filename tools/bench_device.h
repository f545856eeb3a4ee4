// The plumbing of the per-device bench worker (tools/bench_worker.cpp): owning handles, the
// device under measurement, the protocol lines it prints and the OpenCL calls every benchmark
// family makes.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "cl_support.h"

namespace manifold_tool {

using Clock = std::chrono::steady_clock;

inline double seconds_between(Clock::time_point start, Clock::time_point end) {
  return std::chrono::duration<double>(end - start).count();
}

// Owning handles for OpenCL objects.
template <typename T, cl_int (*Release)(T)>
class Handle {
 public:
  Handle() = default;
  explicit Handle(T handle) : handle_(handle) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  Handle& operator=(Handle&& other) noexcept {
    reset();
    handle_ = std::exchange(other.handle_, nullptr);
    return *this;
  }
  ~Handle() { reset(); }
  void reset() {
    if (handle_) Release(handle_);
    handle_ = nullptr;
  }
  T get() const { return handle_; }
  operator T() const { return handle_; }

 private:
  T handle_ = nullptr;
};
using Context = Handle<cl_context, clReleaseContext>;
using Queue = Handle<cl_command_queue, clReleaseCommandQueue>;
using Buffer = Handle<cl_mem, clReleaseMemObject>;
using Program = Handle<cl_program, clReleaseProgram>;
using Kernel = Handle<cl_kernel, clReleaseKernel>;

// A benchmark's answer: a number, or why there is none.
struct Outcome {
  double value = 0;
  std::string failure;  // non-empty: the result was wrong
};

void emit(const char* metric, const std::string& value, const std::string& note = {});
void emit_info(const char* key, const std::string& value);

// Runs one measurement and prints its line, whatever happens inside. On a device group, also
// one line per kernel the measurement launched:
//   split<TAB>metric<TAB>kernel<TAB>global[/local]<TAB>fraction,fraction,...
// each member's fraction of the work-groups of the kernel's last launch.
void measure(const char* metric, const std::function<Outcome()>& body);

struct Device {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  Context context;
  Queue queue;
  bool group = false;  // a Manifold device group: measure() reports the splits it chose
};

// Finds the device the parent named (platform name + index) and opens a context and queue.
// `member` >= 0: that member of the device (a device group) instead.
Device open_device(const std::string& platform_name, int device_index, int member = -1);

Buffer make_buffer(const Device& device, cl_mem_flags flags, size_t bytes, void* host = nullptr);
std::string build_log(cl_program program, cl_device_id device);
Program build_program(const Device& device, const std::string& source);
// The same from C source with build options.
Program build_with_options(const Device& device, const char* source, const std::string& options);
// Whether the device is a GPU (the application-shaped kernels size their problems by it).
bool is_gpu(const Device& device);
bool has_spirv(const Device& device);
// The device's program from the SPIR-V module `words`, built.
Program build_il_program(const Device& device, const std::vector<uint32_t>& words);
Kernel make_kernel(cl_program program, const char* name);

template <typename T>
void set_arg(cl_kernel kernel, cl_uint index, const T& value) {
  cl_check(clSetKernelArg(kernel, index, sizeof(T), &value), "clSetKernelArg");
}

void run_ndrange(const Device& device, cl_kernel kernel, cl_uint dims, const size_t* global,
                 const size_t* local);
// A launch of `kernel` enqueued by hand: on a group, measure() then reports its split
// (run_ndrange notes its own launches).
void note_launch(const Device& device, cl_kernel kernel, cl_uint dims, const size_t* global,
                 const size_t* local);
void finish(const Device& device);
// Times `repeats` runs of `body` (after one warm-up run), each ended by clFinish; the median.
double timed_median(const Device& device, int repeats, const std::function<void()>& body);
void write_buffer(const Device& device, cl_mem buffer, size_t bytes, const void* data);
void read_buffer(const Device& device, cl_mem buffer, size_t bytes, void* data);
std::string mismatch(const char* what, size_t index, double expected, double got);

}  // namespace manifold_tool
