// The device operations of one job on a remote queue, as messages to the server. Data the host
// holds goes with the message (lent, not copied, where it stays valid until the job ends); data
// read back lands in its destination before the job's Done.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "backends/remote/remote_device.h"
#include "core/backend.h"
#include "core/operations.h"

namespace manifold::remote {

// A job sent to the server and not yet ended (or a fence: a marker the worker waits for).
struct PendingJob {
  uint64_t job = 0;                          // its EndJob's id
  Ref<Job> owner;                            // null for a fence
  cl_int status = CL_SUCCESS;                // a failure found here, before the server saw the end
  std::vector<uint64_t> reads;               // tags of its reads' Data
  std::vector<std::function<void()>> after;  // host steps once its bytes are back (unpacking)
  std::vector<std::shared_ptr<std::vector<std::byte>>> staging;  // packed rectangles
  PrintfSink printf_sink;  // where its kernels' printf output goes (none: the standard output)
  bool sent = false;
  bool fence = false, fence_done = false;
  cl_int fence_status = CL_COMPLETE;
};

class RemoteOps final : public DeviceOps {
 public:
  RemoteOps(RemoteDevice& device, uint32_t queue, PendingJob& job, std::function<void()> drain)
      : device_(device), queue_(queue), job_(job), drain_(std::move(drain)) {}

  void transfer(const Transfer& t) override;
  void copy(const CopyOp& op) override;
  void copy_rect(const CopyRectOp& op) override;
  void fill(const FillOp& op) override;
  void map(const MapOp& op) override { device_.backing(*op.mem); }
  void make_resident(MemObject& mem) override { device_.backing(mem); }
  void launch(const KernelOp& op) override;
  void native_kernel(const NativeKernelOp&) override;
  void host_function(const HostFunctionOp& op) override;

 private:
  void send(OutgoingMessage m);
  // Reads into `host` `size` bytes at `from`, and writes them from `host`: in pieces.
  void read(const Span& from, size_t size, void* host);
  void write(const Span& to, const std::byte* host, size_t size);

  RemoteDevice& device_;
  const uint32_t queue_;
  PendingJob& job_;
  std::function<void()> drain_;
};

}  // namespace manifold::remote
