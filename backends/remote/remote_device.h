// A device of a manifold-server, as a device of this platform. It reports what the server's
// device reports (less what does not cross the network: images, SVM, host memory imports, native
// kernels, sub-devices), builds programs for the same compiler target here and loads them there,
// and keeps its buffers in the server's memory (a memory place of its own).
#pragma once

#include <memory>
#include <string>

#include "backends/remote/remote_link.h"
#include "core/device.h"
#include "core/memory.h"

namespace manifold::remote {

class RemoteDevice;

// A buffer's bytes on the server: made when a command first needs them there, released with the
// buffer.
class RemoteBacking final : public DeviceBacking {
 public:
  RemoteBacking(RemoteDevice& device, uint64_t id);
  ~RemoteBacking() override;
  uint64_t id() const { return id_; }
  const RemoteDevice& device() const { return device_; }
  // Throws CL_DEVICE_NOT_AVAILABLE (the server is gone) or the server's error.
  void read_to_host(void* host, size_t offset, size_t size) override;

 private:
  RemoteDevice& device_;
  const uint64_t id_;
};

// A program loaded on the server, released there with the last kernel that uses it.
class RemoteProgram final : public LoadedProgram {
 public:
  RemoteProgram(std::shared_ptr<ServerLink> link, uint64_t id, ProgramKernels kernels,
                bool uses_printf)
      : link_(std::move(link)), id_(id), kernels_(std::move(kernels)), uses_printf_(uses_printf) {}
  ~RemoteProgram() override;
  uint64_t id() const { return id_; }
  // The server's device's limits for the kernel (what its registers and memory allow).
  void refine_kernel_info(compiler::KernelInfo& info) const override;
  bool uses_printf() const override { return uses_printf_; }

 private:
  std::shared_ptr<ServerLink> link_;
  const uint64_t id_;
  const ProgramKernels kernels_;
  const bool uses_printf_;
};

class RemoteDevice final : public Device {
 public:
  RemoteDevice(std::shared_ptr<ServerLink> link, uint32_t index);

  const char* backend_name() const override { return "remote"; }
  const compiler::Target& compiler_target() const override { return target_; }
  std::shared_ptr<const LoadedProgram> load_program(std::span<const uint8_t> binary,
                                                    std::string* error) override;
  bool runs_partial_ranges() const override { return runs_partial_ranges_; }
  // Another device of the same server: the server copies between them itself.
  bool copies_directly_from(const Device& source) const override;
  void make_backing(MemObject& mem) override { backing(mem); }

  // `mem`'s root's backing on this device, made (on the server) where there is none yet. Throws
  // CL_MEM_OBJECT_ALLOCATION_FAILURE or CL_DEVICE_NOT_AVAILABLE.
  RemoteBacking& backing(MemObject& mem);
  // Where `mem`'s byte `offset` is on the server.
  Span at(MemObject& mem, size_t offset);

  ServerLink& link() const { return *link_; }
  const std::shared_ptr<ServerLink>& shared_link() const { return link_; }
  uint32_t index() const { return index_; }
  // The server is gone: the device reports itself unavailable. Thread: the link's dispatcher.
  void mark_unavailable() { info_.available = false; }

 private:
  std::shared_ptr<NativeQueue> create_native_queue_impl(bool out_of_order) override;

  std::shared_ptr<ServerLink> link_;
  const uint32_t index_;
  compiler::Target target_;
  bool runs_partial_ranges_ = false;  // the server's device's own answer
};

}  // namespace manifold::remote
