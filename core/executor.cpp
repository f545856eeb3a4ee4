// The one executor of every backend (Job::run, core/job.h): a command's transfers, then its
// operation, each as the DeviceOps call that carries it out (core/backend.h). Backends call it
// from their native queues; the scheduler's jobs (commands, the parts of a device group's
// launch) hand it plain data.
#include "core/error.h"
#include "core/job.h"

namespace manifold {
namespace {

// Each operation as the device operations that carry it out.
struct Dispatch {
  DeviceOps& ops;
  void operator()(const NoOp&) {}
  void operator()(const CopyOp& op) { ops.copy(op); }
  void operator()(const CopyRectOp& op) { ops.copy_rect(op); }
  void operator()(const FillOp& op) { ops.fill(op); }
  void operator()(const MapOp& op) { ops.map(op); }
  void operator()(const UnmapOp&) {}  // the mapping is the buffer's host memory: nothing moves
  void operator()(const MigrateOp& op) {
    // To host memory the transfers did it all; to the device its backing is made now.
    if (!(op.flags & CL_MIGRATE_MEM_OBJECT_HOST))
      for (auto& m : op.mems) ops.make_resident(*m);
  }
  void operator()(const KernelOp& op) { ops.launch(op); }
  void operator()(const NativeKernelOp& op) { ops.native_kernel(op); }
  void operator()(const HostFunctionOp& op) { ops.host_function(op); }
  // Each into the stream after the one before: the stream orders them (DeviceOps).
  void operator()(const SequenceOp& op) {
    if (ops.run_recorded(*op.list)) return;
    for (const Operation& o : op.list->ops) std::visit(*this, o);
  }
};

}  // namespace

cl_int Job::run(DeviceOps& ops) const noexcept {
  try {
    // Buffer bytes current elsewhere come first (their writers have completed or precede this
    // command in the stream: scheduler/migration.h).
    for (const Transfer& t : transfers_) ops.transfer(t);
    std::visit(Dispatch{ops}, op_);
    return CL_SUCCESS;
  } catch (...) {
    return status_of_current_exception(backend_name_);
  }
}

}  // namespace manifold
