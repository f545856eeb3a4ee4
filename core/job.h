// What a native queue runs, in order: one command's migrations and operation, as plain data
// (core/operations.h). The backend sees only this, never the scheduler's Command: it decides
// when the work goes into its stream (run: the one executor of every backend, in core), and
// reports RUNNING (where it knows) and the end (finish).
#pragma once

#include <memory>
#include <variant>
#include <vector>

#include "core/backend.h"
#include "core/operations.h"

namespace manifold {

class Job {
 public:
  virtual void retain() = 0;
  virtual void release() = 0;

  // Puts the migrations, then the operation, into `ops`' stream: the one executor of every
  // backend (core/executor.cpp). CL_SUCCESS, or the status the job fails with (nothing after the
  // failing step was put into the stream).
  cl_int run(DeviceOps& ops) const noexcept;
  // A kernel launch that moves no memory first (it may wait in a GPU launch batch); else null.
  const KernelOp* plain_launch() const {
    return transfers_.empty() ? std::get_if<KernelOp>(&op_) : nullptr;
  }

  // Filled by the scheduler before the job goes to its native queue: the operation, and what
  // must move into its memory place first (planned at submission, scheduler/migration.h).
  Operation& operation() { return op_; }
  std::vector<Transfer>& transfers() { return transfers_; }

  virtual Event& event() const = 0;
  // Whether the job's queue records profiling times.
  virtual bool profiling() const = 0;
  // Whether the job went to its native queue from the enqueueing thread, inside the enqueue (the
  // direct path), rather than later, from whichever thread resolved its last dependency. A
  // backend may leave completion of direct submissions to the application's own next wait.
  virtual bool submitted_directly() const = 0;
  // Other native queues whose submitted work this job must wait for on the device (only those
  // for which waits_natively_for() said yes); the target queue inserts the waits.
  virtual const std::vector<std::shared_ptr<NativeQueue>>& native_waits() const = 0;
  void running();  // the event becomes CL_RUNNING
  // Ends the job: CL_COMPLETE or a negative error. Thread: any.
  virtual void finish(cl_int status) = 0;

 protected:
  // `backend_name`: the device's backend, for the message of an unexpected failure.
  explicit Job(const char* backend_name) : backend_name_(backend_name) {}
  ~Job() = default;
  // Releases what the operation holds (a buffer the application released meanwhile goes here).
  void drop_work() {
    op_ = NoOp{};
    transfers_.clear();
  }

 private:
  const char* backend_name_;
  Operation op_;
  std::vector<Transfer> transfers_;
};

}  // namespace manifold
