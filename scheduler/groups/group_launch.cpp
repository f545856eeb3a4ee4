#include "scheduler/groups/group_launch.h"

#include <algorithm>

#include "core/queue.h"
#include "scheduler/groups/balancer.h"
#include "scheduler/groups/group_device.h"

namespace manifold {

PartJob::PartJob(std::shared_ptr<GroupLaunch> launch, size_t index, const char* backend,
                 Operation op)
    : Job(backend), launch_(std::move(launch)), index_(index) {
  operation() = std::move(op);
  Command& command = launch_->command();
  event_ = Ref<Event>(new Event(Ref<Context>(&command.queue().context()), nullptr,
                                command.event().command_type(), /*timed=*/true));
  event_->drop_unpublished_api_reference();  // only this job holds it
}

bool PartJob::profiling() const { return launch_->timed(); }
bool PartJob::submitted_directly() const { return launch_->started_directly(); }

const std::vector<std::shared_ptr<NativeQueue>>& PartJob::native_waits() const {
  static const std::vector<std::shared_ptr<NativeQueue>> none;
  return none;
}

void PartJob::finish(cl_int status) {
  drop_work();
  event_->set_status(status);
  // The launch may drop this job's last reference: nothing of `this` is used after the call.
  std::shared_ptr<GroupLaunch> launch = std::move(launch_);
  launch->part_done(index_, status, *event_);
}

GroupLaunch::GroupLaunch(Ref<Command> command, GroupDevice& group,
                         std::vector<std::shared_ptr<NativeQueue>> queues)
    : command_(std::move(command)), group_(group), queues_(std::move(queues)) {}

void GroupLaunch::fix_members() {
  members_.clear();
  for (const Part& p : parts_) members_.push_back(p.member);
}

bool GroupLaunch::then(std::shared_ptr<GroupLaunch> next) {
  std::lock_guard lock(chain_mutex_);
  if (ended_) return false;
  next_ = std::move(next);
  return true;
}

std::shared_ptr<GroupLaunch> GroupLaunch::end_chain() {
  std::lock_guard lock(chain_mutex_);
  ended_ = true;
  return std::move(next_);
}

void GroupLaunch::start(bool direct) {
  seconds_.assign(parts_.size(), 0.0);
  // Times are taken where the balancer learns from them (a split) or the queue profiles; a
  // GPU records two events per timed command.
  timed_ = !key_.empty() || command_->event().timed();
  direct_ = direct && !prologue_;
  started_.store(true, std::memory_order_release);
  if (prologue_) {
    remaining_.store(1, std::memory_order_relaxed);
    queues_[parts_.front().member]->submit(prologue_);
    return;
  }
  submit_parts();
}

void GroupLaunch::submit_parts() {
  remaining_.store(parts_.size(), std::memory_order_relaxed);
  // Keep the launch alive while parts are handed out: the last may end inside its submit().
  std::shared_ptr<GroupLaunch> self = shared_from_this();
  std::vector<Part> parts = parts_;
  for (Part& p : parts) queues_[p.member]->submit(p.job);
}

void GroupLaunch::part_done(size_t index, cl_int status, const Event& event) {
  if (status < 0) {
    cl_int expected = CL_COMPLETE;
    status_.compare_exchange_strong(expected, status);
  }
  const bool prologue = index >= parts_.size();
  if (!prologue) {
    std::lock_guard lock(times_mutex_);
    const uint64_t start = event.stamp(Event::kStart), end = event.stamp(Event::kEnd);
    if (end > start) seconds_[index] = double(end - start) * 1e-9;
    if (start && (!first_start_ || start < first_start_)) first_start_ = start;
    last_end_ = std::max(last_end_, end);
  }
  if (remaining_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  if (prologue) {
    prologue_ = nullptr;
    if (status_.load() == CL_COMPLETE) {
      submit_parts();
      return;
    }
    parts_.clear();
    std::shared_ptr<GroupLaunch> next = end_chain();
    command_->finish(status_.load());
    if (next) next->start(/*direct=*/false);
    return;
  }
  const cl_int final_status = status_.load();
  if (final_status == CL_COMPLETE && !key_.empty() && parts_.size() >= 2) {
    std::vector<size_t> groups(group_.members().size(), 0);
    std::vector<double> seconds(group_.members().size(), 0.0);
    for (size_t i = 0; i < parts_.size(); ++i) {
      groups[parts_[i].member] = parts_[i].groups;
      seconds[parts_[i].member] = seconds_[i];
    }
    group_.balancer().record(key_, groups, seconds);
  }
  Event& event_out = command_->event();
  if (event_out.timed() && first_start_) {
    event_out.set_stamp(Event::kStart, first_start_);
    event_out.set_stamp(Event::kEnd, std::max(last_end_, first_start_));
  }
  // The parts hold this launch; dropping them here ends the cycle.
  std::vector<Part> parts = std::move(parts_);
  parts_.clear();
  Ref<Command> command = command_;
  std::shared_ptr<GroupLaunch> next = end_chain();
  command->finish(final_status);
  if (next) next->start(/*direct=*/false);
}

}  // namespace manifold
