// Runs of kernel launches into one stream, put there as one graph launch: a GPU driver's graph
// launch of K kernels costs the host far less than K stream launches, and less still when the
// graph is replayed unchanged (bench/launch_throughput/graph_batch.cu measures the three).
//
// The stream queue (stream_queue.h) decides what is staged and when a batch goes; this class
// keeps the staged launches and turns a full batch into one launch of a cached executable graph
// (a chain of K kernel nodes, made from the first full batch). Each node is updated only where
// its launch differs from what the node already holds: a loop that launches the same kernel with
// the same arguments replays the graph as it is. A partial batch goes as plain launches.
// Thread: whoever holds the stream queue's lock.
//
// Api must provide (all static), besides what stream_queue.h asks for:
//   using Chain;                                   // an executable graph: a chain of kernel nodes
//   bool has_graphs(Device&);                      // the queue makes no batch without
//   int prepare_launch(Device&, Job&, LaunchRecord&);     // CL_SUCCESS, kNotBatchable or error
//   cl_int launch(Device&, const LaunchRecord&, Stream);
//   cl_int make_chain(Device&, std::span<const LaunchRecord>, Chain&);   // instantiated
//   cl_int set_chain_node(Chain&, size_t index, const LaunchRecord&);
//   cl_int launch_chain(Chain&, Stream);
//   void destroy_chain(Device&, Chain&);
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include <CL/cl.h>

namespace manifold::gpu {

// Api::prepare_launch's answer for a command that cannot wait in a batch (not a plain launch):
// the queue executes it, after the batch.
constexpr int kNotBatchable = 1;

// One kernel launch as a vendor API takes it. Parameter i's bytes start at offsets[i] in
// `params` (8-byte aligned); records are reused, so their vectors keep their capacity.
struct LaunchRecord {
  void* function = nullptr;
  unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  unsigned shared = 0;
  std::vector<std::byte> params;
  std::vector<uint32_t> offsets;

  void clear_params() {
    params.clear();
    offsets.clear();
  }
  // Appends one parameter's bytes.
  void add_param(const void* bytes, size_t size) {
    const size_t at = (params.size() + 7) & ~size_t{7};
    params.resize(at + size);
    if (size) std::memcpy(params.data() + at, bytes, size);
    offsets.push_back(static_cast<uint32_t>(at));
  }
  // The pointer array a driver takes (kernelParams); `out` has offsets.size() entries.
  void param_pointers(void** out) const {
    for (size_t i = 0; i < offsets.size(); ++i)
      out[i] = const_cast<std::byte*>(params.data()) + offsets[i];
  }
  bool same_launch(const LaunchRecord& o) const {
    return function == o.function && std::memcmp(grid, o.grid, sizeof grid) == 0 &&
           std::memcmp(block, o.block, sizeof block) == 0 && shared == o.shared &&
           offsets == o.offsets && params == o.params;
  }
};

// Scratch space for the launch the calling thread is preparing, one per thread for every vendor
// (a thread prepares one launch at a time). Thread-local variables here and in the queues are in
// hidden functions: they bind within the ICD, so an access costs one __tls_get_addr at most.
[[gnu::visibility("hidden")]] inline LaunchRecord& thread_launch_record() {
  static thread_local LaunchRecord record;
  return record;
}
// The parameter pointers of a graph node being set (the driver copies the values in the call).
[[gnu::visibility("hidden")]] inline std::vector<void*>& thread_param_pointers() {
  static thread_local std::vector<void*> pointers;
  return pointers;
}

template <class Api>
class LaunchBatch {
  using Device = typename Api::Device;
  using Stream = typename Api::Stream;

 public:
  explicit LaunchBatch(size_t size) : slots_(size), nodes_(size) {}
  LaunchBatch(const LaunchBatch&) = delete;
  LaunchBatch& operator=(const LaunchBatch&) = delete;

  void destroy(Device& device) {
    if (built_) Api::destroy_chain(device, chain_);
    built_ = false;
  }

  size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  bool full() const { return count_ == slots_.size(); }
  // The record the next staged launch fills; commit() keeps it, else it is reused.
  LaunchRecord& next() { return slots_[count_]; }
  void commit() { ++count_; }

  // Puts every staged launch into `stream`, in order; statuses[i] is launch i's result. Empties
  // the batch.
  void launch(Device& device, Stream stream, std::span<cl_int> statuses) {
    const size_t n = count_;
    count_ = 0;
    if (n == slots_.size() && launch_as_graph(device, stream)) {
      for (size_t i = 0; i < n; ++i) statuses[i] = CL_SUCCESS;
      return;
    }
    for (size_t i = 0; i < n; ++i) statuses[i] = Api::launch(device, slots_[i], stream);
  }

 private:
  bool launch_as_graph(Device& device, Stream stream) {
    if (!built_) {
      if (Api::make_chain(device, slots_, chain_) != CL_SUCCESS) return false;
      built_ = true;
      for (size_t i = 0; i < slots_.size(); ++i) nodes_[i] = slots_[i];
    } else {
      for (size_t i = 0; i < slots_.size(); ++i) {
        if (slots_[i].same_launch(nodes_[i])) continue;
        if (Api::set_chain_node(chain_, i, slots_[i]) != CL_SUCCESS) {
          // The chain holds a mix of launches now: made afresh from the next full batch.
          destroy(device);
          return false;
        }
        nodes_[i] = slots_[i];  // copies into kept capacity
      }
    }
    return Api::launch_chain(chain_, stream) == CL_SUCCESS;
  }

  std::vector<LaunchRecord> slots_;  // staged launches [0, count_)
  std::vector<LaunchRecord> nodes_;  // what each node of the chain launches now
  size_t count_ = 0;
  typename Api::Chain chain_{};
  bool built_ = false;
};

}  // namespace manifold::gpu
