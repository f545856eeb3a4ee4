#include "backends/level_zero/ze_events.h"

#include "backends/level_zero/ze_device.h"

namespace manifold::level_zero {
namespace {
// Events per driver pool: pools are made as the number of commands in flight grows.
constexpr uint32_t kEventsPerPool = 64;
}  // namespace

struct EventPool::State {
  const Api& api;
  ze_context_handle_t context;
  ze_device_handle_t device;
  std::mutex mutex;
  bool closed = false;  // the device is going: events given back are destroyed with their pools
  std::vector<ze_event_pool_handle_t> pools;
  std::vector<ZeEvent*> free[2];  // [timestamped]

  void give_back(ZeEvent* event) {
    std::lock_guard lock(mutex);
    if (closed) {  // its pool is gone (the device went before a queue let go of it)
      delete event;
      return;
    }
    // Its commands have completed and nothing waits for it any more: reset for the next use.
    api.zeEventHostReset(event->handle);
    free[event->timestamped].push_back(event);
  }

  // Under mutex.
  void grow(bool timestamped) {
    ze_event_pool_desc_t desc;
    desc.flags =
        ZE_EVENT_POOL_FLAG_HOST_VISIBLE | (timestamped ? ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP : 0u);
    desc.count = kEventsPerPool;
    ze_event_pool_handle_t pool = nullptr;
    ze_device_handle_t devices[] = {device};
    check_ze(api.zeEventPoolCreate(context, &desc, 1, devices, &pool), CL_OUT_OF_RESOURCES,
             "zeEventPoolCreate");
    pools.push_back(pool);
    for (uint32_t i = 0; i < kEventsPerPool; ++i) {
      ze_event_desc_t event_desc;
      event_desc.index = i;
      event_desc.signal = event_desc.wait = ZE_EVENT_SCOPE_FLAG_HOST;
      ze_event_handle_t event = nullptr;
      check_ze(api.zeEventCreate(pool, &event_desc, &event), CL_OUT_OF_RESOURCES, "zeEventCreate");
      free[timestamped].push_back(new ZeEvent{event, timestamped});
    }
  }
};

EventPool::EventPool(LevelZeroDevice& device)
    : state_(std::make_shared<State>(device.api(), device.context(), device.handle())) {}

EventPool::~EventPool() {
  std::lock_guard lock(state_->mutex);
  state_->closed = true;
  for (auto& list : state_->free)
    for (ZeEvent* event : list) {
      state_->api.zeEventDestroy(event->handle);
      delete event;
    }
  for (ze_event_pool_handle_t pool : state_->pools) state_->api.zeEventPoolDestroy(pool);
}

SignalEvent EventPool::take(bool timestamped) {
  ZeEvent* event;
  {
    std::lock_guard lock(state_->mutex);
    std::vector<ZeEvent*>& list = state_->free[timestamped];
    if (list.empty()) state_->grow(timestamped);
    event = list.back();
    list.pop_back();
  }
  return SignalEvent(
      event, [state = state_](const ZeEvent* e) { state->give_back(const_cast<ZeEvent*>(e)); });
}

}  // namespace manifold::level_zero
