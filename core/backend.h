// The backend interface: what a vendor stack (CPU, CUDA, HIP, Level Zero) implements.
// Small and split by concern; OpenCL semantics (wait lists, out-of-order queues, user events,
// cross-device dependencies) live in scheduler/ and reach backends only through NativeQueue,
// Job and DeviceOps.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <CL/cl.h>

#include "core/object.h"

namespace manifold {

class Device;
class MemObject;
namespace compiler {
struct KernelInfo;
}

struct Transfer;
struct CopyOp;
struct CopyRectOp;
struct FillOp;
struct MapOp;
struct KernelOp;
struct NativeKernelOp;
struct HostFunctionOp;
struct OperationList;
class Event;
class Job;  // core/job.h
class NativeQueue;

// The device operations a backend implements, one virtual each, for one native in-order stream
// (AdaptiveCpp's inorder_queue shape). Each puts its work into the stream after everything put
// there before; the host may block only where the operation needs host memory finished. The
// shared executor (Job::run in core/executor.cpp) calls them in the order a job needs.
// A failure throws manifold::Error: the executor maps it to the job's status for every backend.
// Thread: whichever thread runs the stream's submission (never two at once for one stream).
class DeviceOps {
 public:
  // Moves a buffer's bytes into this device's memory (or host memory, for a mapping) from
  // wherever they are current: host memory, this backend's memory on any of its devices (a peer
  // copy where the hardware allows), or another backend's device (DeviceBacking::read_to_host).
  virtual void transfer(const Transfer&) = 0;
  virtual void copy(const CopyOp&) = 0;  // host<->device, device<->device (either may be host)
  virtual void copy_rect(const CopyRectOp&) = 0;
  virtual void fill(const FillOp&) = 0;
  // Readies a buffer's host memory for a mapping (the bytes came by transfer()).
  virtual void map(const MapOp&) = 0;
  // Makes `mem`'s backing on this device now (clEnqueueMigrateMemObjects).
  virtual void make_resident(MemObject& mem) = 0;
  virtual void launch(const KernelOp&) = 0;
  virtual void native_kernel(const NativeKernelOp&) = 0;
  // Runs a host function after everything before it in the stream has run.
  virtual void host_function(const HostFunctionOp&) = 0;
  // Puts a command buffer's recorded operations into the stream natively (one CUDA graph
  // launch), or returns false: the executor then calls the operations above one by one.
  virtual bool run_recorded(const OperationList&) { return false; }

 protected:
  ~DeviceOps() = default;
};

// An in-order stream of one device: CUDA/HIP stream, Level Zero immediate command list, or a
// worker of the CPU pool. Every job submitted runs after every job submitted earlier.
class NativeQueue : public std::enable_shared_from_this<NativeQueue> {
 public:
  virtual ~NativeQueue() = default;

  // Thread: the enqueueing application thread (direct path), or whichever thread completed the
  // job's last dependency. Must not block on device work. The backend runs the job (Job::run
  // with its DeviceOps), marks it running where it knows, and finishes it, from any thread.
  virtual void submit(Ref<Job> job) = 0;

  // False for a backend queue that runs its jobs concurrently (CPU out-of-order queues): then
  // submission order implies nothing.
  virtual bool orders_submissions() const { return true; }

  // Whether this queue can make its work wait, on the device, for work already submitted to
  // `source` (CUDA streams of any CUDA GPU: an event and cuStreamWaitEvent). A dependency on a
  // job submitted there is then resolved at once, with no host round trip, and submit() puts
  // the wait in front of the job (Job::native_waits()).
  virtual bool waits_natively_for(const NativeQueue& source) const { return false; }

  // Whether a job's failure is known once submit() has returned (the vendor refuses the work at
  // once). Where it is not (Level Zero appends on a worker, after submit()), the queue calls
  // Event::mark_accepted() once the job is on its way to the device: commands whose wait list
  // names the job go then, not at its submission, so that a refusal still fails them.
  virtual bool fails_at_submission() const { return true; }

  // Thread: application (clFlush, and before any blocking wait). Makes submitted work start.
  virtual void flush() {}

  // Thread: application, before it sleeps on a job of this queue. A backend may run queued
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
  // Whether a kernel of the program calls printf (where the backend tells printf kernels apart).
  virtual bool uses_printf() const { return false; }
};

// Discovers the devices of one vendor stack. A missing library or zero devices is not an error:
// the driver simply contributes no devices. Thread: called once, under the platform's init.
class Driver {
 public:
  virtual ~Driver() = default;
  virtual const char* name() const = 0;
  virtual std::vector<Device*> probe() = 0;
};

// A backend registers its driver with a static DriverRegistration in its own folder: nothing
// outside the folder names it. The platform probes the drivers by ascending `order` (the order
// their devices are listed in); one whose name MANIFOLD_DISABLE_<NAME> names is left out.
using DriverFactory = std::unique_ptr<Driver> (*)();
struct DriverRegistration {
  DriverRegistration(int order, DriverFactory make);
};
// The registered drivers, made in their order, disabled ones left out. Thread: platform init.
std::vector<std::unique_ptr<Driver>> make_registered_drivers();

// Work a layer above core does on the platform's devices once they are all found, before any is
// handed out (svm/ reserves the shared virtual range on them); registered like drivers.
using PlatformSetup = void (*)(std::span<Device* const> devices);
struct PlatformSetupRegistration {
  explicit PlatformSetupRegistration(PlatformSetup setup);
};
void run_platform_setups(std::span<Device* const> devices);

// Devices a layer above core makes of the platform's devices once they are all found and set up
// (scheduler/groups: the device groups of MANIFOLD_DEVICE_GROUPS), listed after them.
using DeviceComposer = std::vector<Device*> (*)(std::span<Device* const> devices);
struct DeviceComposerRegistration {
  explicit DeviceComposerRegistration(DeviceComposer compose);
};
std::vector<Device*> run_device_composers(std::span<Device* const> devices);

}  // namespace manifold
