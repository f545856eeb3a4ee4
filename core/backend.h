// The backend interface: what a vendor stack (CPU, CUDA, HIP, Level Zero) implements.
// Small and split by concern; OpenCL semantics (wait lists, out-of-order queues, user events,
// cross-device dependencies) live in scheduler/ and reach backends only through NativeQueue.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/object.h"

namespace manifold {

class Command;
class Device;
namespace compiler {
struct KernelInfo;
}

// An in-order stream of one device: CUDA/HIP stream, Level Zero immediate command list, or a
// worker of the CPU pool. Every command submitted runs after every command submitted earlier.
class NativeQueue : public std::enable_shared_from_this<NativeQueue> {
 public:
  virtual ~NativeQueue() = default;

  // Thread: the enqueueing application thread (direct path), or whichever thread completed the
  // command's last dependency. Must not block on device work. The backend marks the command's
  // event RUNNING and then COMPLETE (or an error) from any thread it likes, via Command::finish.
  virtual void submit(Ref<Command> command) = 0;

  // False for a backend queue that runs its commands concurrently (CPU out-of-order queues):
  // then submission order implies nothing.
  virtual bool orders_submissions() const { return true; }

  // Whether this queue can make its work wait, on the device, for work already submitted to
  // `source` (CUDA streams of any CUDA GPU: an event and cuStreamWaitEvent). A dependency on a
  // command submitted there is then resolved at once, with no host round trip, and submit()
  // puts the wait in front of the command (Command::native_waits()).
  virtual bool waits_natively_for(const NativeQueue& source) const { return false; }

  // Thread: application (clFlush, and before any blocking wait). Makes submitted work start.
  virtual void flush() {}

  // Thread: application, before it sleeps on a command of this queue. A backend may run queued
  // work on the calling thread instead of waking a worker (the CPU backend does: latency).
  virtual void help_until_idle() {}
};

// A program in the form a device runs it (CPU: JIT-compiled code; CUDA: a module).
class LoadedProgram {
 public:
  virtual ~LoadedProgram() = default;
  // Adds what only the loaded form knows to a kernel's metadata (a GPU: the work-group limit
  // its registers allow, its static local and private memory). Thread: application.
  virtual void refine_kernel_info(compiler::KernelInfo&) const {}
  // The backend's own handle of kernel `name`, found once when a kernel object is made and
  // handed back with every launch (KernelOp::launch); null where the backend has none.
  // Thread: application.
  virtual const void* kernel_handle(std::string_view /*name*/) const { return nullptr; }
};

// Discovers the devices of one vendor stack. A missing library or zero devices is not an error:
// the driver simply contributes no devices. Thread: called once, under the platform's init.
class Driver {
 public:
  virtual ~Driver() = default;
  virtual const char* name() const = 0;
  virtual std::vector<Device*> probe() = 0;
};

// Every compiled-in driver; defined in backends/drivers.cpp.
std::vector<std::unique_ptr<Driver>> make_drivers();

}  // namespace manifold
