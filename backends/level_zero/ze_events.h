// Level Zero events for command completion, taken from pools of the device's context and
// recycled: an event goes back (reset) when its last holder lets go of it, never while a
// command may still signal it or wait for it.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "backends/level_zero/ze_api.h"

namespace manifold::level_zero {

class LevelZeroDevice;

// One event of a pool. Held through SignalEvent by the job whose command signals it and by
// every job (of any queue of the device) that waits for it on the device.
struct ZeEvent {
  ze_event_handle_t handle;
  bool timestamped;  // from a kernel-timestamp pool: the command's start and end can be read
};
using SignalEvent = std::shared_ptr<const ZeEvent>;

// The events of one device's context. Thread-safe.
class EventPool {
 public:
  explicit EventPool(LevelZeroDevice& device);
  ~EventPool();
  EventPool(const EventPool&) = delete;
  EventPool& operator=(const EventPool&) = delete;

  // A reset event (timestamped: its command's times can be queried). Throws when the driver
  // cannot make more.
  SignalEvent take(bool timestamped);

 private:
  struct State;
  std::shared_ptr<State> state_;  // shared with the events given out
};

}  // namespace manifold::level_zero
