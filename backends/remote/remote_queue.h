// Command submission to a remote device: each native queue is an in-order queue on the server.
// A worker thread turns each job's operations into messages and sends them without waiting
// (commands are pipelined); the job ends when the server's Done for it comes back, in order. A
// step that needs the host (a host function, bytes from another backend's device) first waits
// for everything sent before it to have run on the server.
#pragma once

#include <memory>
#include <thread>

#include "backends/remote/remote_device.h"
#include "core/backend.h"
#include "core/job.h"

namespace manifold::remote {

class RemoteQueue final : public NativeQueue {
 public:
  explicit RemoteQueue(RemoteDevice& device);
  ~RemoteQueue() override;
  void submit(Ref<Job> job) override;
  // Jobs go to the server from the queue's worker, after submit() returned.
  bool fails_at_submission() const override { return false; }

  struct State;

 private:
  std::shared_ptr<State> state_;
  std::thread worker_;
};

}  // namespace manifold::remote
