// The fault campaign's round, continued (fault_campaign_round.h): the random steps, the releases
// of objects in use, waits in the middle of the DAG, the drain and the checks of every status,
// every read and every buffer on every device; and the loss of the Level Zero test driver's device.
#include <algorithm>
#include <thread>

#include "fault_campaign_round.h"

namespace schedtest::campaign {

void Round::randomStep() {
  if (chance(1.0 / 25)) addUser(chance(0.3), true);
  if (!unset_.empty() && (chance(1.0 / 30) || unset_.size() > 5)) handUser(uniform(unset_.size()));
  const int q = static_cast<int>(uniform(env_.queues.size()));
  const CampaignDevice& dev = deviceOf(q);
  const double r = std::uniform_real_distribution<double>(0, 1)(rng_);
  Op op = r < 0.12   ? Op::Write
          : r < 0.22 ? Op::Read
          : r < 0.36 ? Op::Copy
          : r < 0.46 ? Op::Fill
          : r < 0.58 ? Op::Mix
          : r < 0.70 ? Op::Step
          : r < 0.76 ? Op::Touch
          : r < 0.81 ? Op::MapRead
          : r < 0.86 ? Op::MapWrite
          : r < 0.94 ? Op::Marker
                     : Op::Barrier;
  if (!dev.computes && (op == Op::Mix || op == Op::Step)) op = Op::Touch;
  // Under ThreadSanitizer no mappings: a copy of the same bytes into the buffer's host memory,
  // which the scheduler lets a command of another queue make (scheduler/migration.h), may land
  // while the application reads its mapping there (a race TSan reports; the bytes are the same).
  if (kThreadSanitizer && (op == Op::MapRead || op == Op::MapWrite))
    op = op == Op::MapRead ? Op::Read : Op::Write;
  // A refused launch armed in the driver waits for the round's gated launch.
  if (launch_faulted_[env_.queues[q].device] &&
      (op == Op::Mix || op == Op::Step || op == Op::Touch))
    op = Op::Fill;
  const int b0 = liveBuffer();
  int b1 = liveBuffer();
  while (b1 == b0) b1 = liveBuffer();
  int b2 = liveBuffer();
  if (b2 == b1) b2 = b0;
  size_t off = 0, len = kElems, off2 = 0;
  if (!chance(0.3)) {
    off = uniform(kElems);
    len = 1 + uniform(kElems - off);
  }
  if (op == Op::Copy) off2 = uniform(kElems - len + 1);
  // Random wait-list entries (recent nodes, a gate not set yet, a failed one); a mapping gets
  // none, so that it never fails (its unmap would then end a mapping that never was).
  std::vector<int> waits;
  if (op != Op::MapRead && op != Op::MapWrite) {
    if (chance(0.5) && !nodes_.empty()) {
      const size_t window = std::min<size_t>(nodes_.size(), 48);
      for (size_t k = 1 + uniform(3); k > 0; --k) {
        const int d = static_cast<int>(nodes_.size() - 1 - uniform(window));
        if (nodes_[d].event) waits.push_back(d);
      }
    }
    if (!unset_.empty() && chance(0.06)) waits.push_back(unset_[uniform(unset_.size())]);
    if (!failed_roots_.empty() && chance(0.05)) {
      const int d = failed_roots_[uniform(failed_roots_.size())];
      if (nodes_[d].event) waits.push_back(d);
    }
  }
  std::sort(waits.begin(), waits.end());
  waits.erase(std::unique(waits.begin(), waits.end()), waits.end());
  const int node = enqueue(op, q, b0, b1, b2, off, len, off2, std::move(waits));
  if (!nodes_[node].fails) {
    switch (op) {
      case Op::Write:
      case Op::Fill:
      case Op::Step:
      case Op::Touch:
      case Op::MapWrite:
        checkAfter(node, b0, off, len);
        break;
      case Op::Copy:
        checkAfter(node, b1, off2, len);
        break;
      case Op::Mix:
        checkAfter(node, b1, off, len);
        break;
      default:
        break;
    }
  }
  if (chance(0.05)) releaseSomething();
  if (chance(0.03)) {
    EXPECT_CL_OK(clFlush(env_.queues[uniform(env_.queues.size())].queue));
  }
  if (chance(0.01)) midRunWait();
}

// Releases an event, a buffer or a queue that commands still use (legal: the runtime keeps its
// own references). An event's status then comes from its callback.
void Round::releaseSomething() {
  const double r = std::uniform_real_distribution<double>(0, 1)(rng_);
  if (r < 0.6) {
    std::vector<bool> needed(nodes_.size(), false);
    for (int w : last_writer_)
      if (w >= 0) needed[w] = true;
    for (const auto& list : readers_)
      for (int x : list) needed[x] = true;
    for (int u : unset_) needed[u] = true;
    const size_t window = std::min<size_t>(nodes_.size(), 64);
    for (int tries = 0; tries < 8; ++tries) {
      const size_t d = nodes_.size() - 1 - uniform(window);
      Node& n = nodes_[d];
      if (n.op == Op::User || !n.event || needed[d]) continue;
      n.record = &records_.emplace_back();
      EXPECT_CL_OK(clSetEventCallback(n.event, CL_COMPLETE, recordCallback, n.record));
      n.event.reset();
      env_.figures.releases++;
      return;
    }
  } else if (r < 0.8) {
    int live = 0;
    for (int b = 0; b < kBuffers; ++b) live += buffers_[b] ? 1 : 0;
    if (live <= 4) return;
    const int b = liveBuffer();
    // Its last content, read on a queue of every device, then it goes.
    for (const CampaignDevice& d : env_.devices)
      enqueue(Op::Read, d.queues[uniform(d.queues.size())], b, -1, -1, 0, kElems, 0, {});
    buffers_[b].reset();
    env_.figures.releases++;
  } else {
    const size_t q = uniform(env_.queues.size());
    CampaignQueue& cq = env_.queues[q];
    cq.queue.reset();  // flushes what it holds
    cl_int err = CL_SUCCESS;
    cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, cq.props, 0};
    cq.queue.reset(
        clCreateCommandQueueWithProperties(env_.context, env_.devices[cq.device].id, props, &err));
    EXPECT_EQ(Err(CL_SUCCESS), Err(err)) << "a queue in place of a released one";
    queue_models_[q] = QueueModel{};
    env_.figures.releases++;
  }
}

// Waits for a few recent events that no gate still closed can hold back.
void Round::midRunWait() {
  Bits closed(max_nodes_);
  for (int u : unset_) closed.set(static_cast<size_t>(u));
  std::vector<cl_event> list;
  bool expect_error = false;
  for (int k = 0; k < 3; ++k) {
    const size_t d = nodes_.size() - 1 - uniform(std::min<size_t>(nodes_.size(), 64));
    const Node& n = nodes_[d];
    if (!n.event || closed.test(d) || n.reach.intersects(closed)) continue;
    list.push_back(n.event);
    expect_error = expect_error || n.fails;
  }
  if (list.empty()) return;
  EXPECT_CL(expect_error ? CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST : CL_SUCCESS,
            clWaitForEvents(static_cast<cl_uint>(list.size()), list.data()))
      << "clWaitForEvents after #" << nodes_.size() - 1;
}

void Round::drain() {
  while (!unset_.empty()) handUser(0);
  for (auto& q : env_.queues) EXPECT_CL_OK(clFlush(q.queue));
  setter_.close();
  EXPECT_EQ(0, setter_.errors()) << "clSetUserEventStatus failed";
  for (auto& q : env_.queues) EXPECT_CL_OK(clFinish(q.queue));
  // Commands of released queues and released events: waited for one by one.
  for (Node& n : nodes_) {
    if (n.event) {
      cl_event e = n.event;
      clWaitForEvents(1, &e);
    } else if (n.record) {
      while (n.record->calls.load() == 0)
        std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
}

void Round::check() {
  int reported = 0;
  auto report = [&] { return reported++ < 12; };
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const Node& n = nodes_[i];
    cl_int want = n.fails ? CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST : CL_COMPLETE;
    if (n.op == Op::User) want = n.fails ? kUserFailure : CL_COMPLETE;
    if (n.fault == Fault::Alloc) want = CL_MEM_OBJECT_ALLOCATION_FAILURE;
    cl_int got = 1000;
    if (n.event) {
      got = eventStatus(n.event);
    } else {
      got = n.record->status.load();
      if (n.record->calls.load() != 1 && report())
        ADD_FAILURE() << "#" << i << " " << n.what << ": its callback ran "
                      << n.record->calls.load() << " times";
    }
    // A refused launch ends with the error the runtime chose for it: any negative status.
    const bool ok = n.fault == Fault::Launch ? got < 0 : got == want;
    if (!ok && report()) {
      std::string waits;
      for (int d : n.waits) waits += " #" + std::to_string(d) + (nodes_[d].fails ? " (fails)" : "");
      ADD_FAILURE() << "#" << i << " " << n.what << ": status " << statusName(got) << ", expected "
                    << (n.fault == Fault::Launch ? "a negative one" : statusName(want))
                    << "; it waits for" << (waits.empty() ? " nothing" : waits);
    }
  }
  for (const Snapshot& s : snapshots_) {
    if (s.node < 0 || nodes_[s.node].fails) continue;
    const std::vector<uint32_t>& got = s.map ? s.map->data : s.got;
    env_.figures.bytes_checked += got.size() * 4;
    for (size_t i = 0; i < got.size(); ++i)
      if (got[i] != s.expected[i]) {
        if (report())
          ADD_FAILURE() << "#" << s.node << " " << nodes_[s.node].what << ": element " << i
                        << " of the range is 0x" << std::hex << got[i] << ", expected 0x"
                        << s.expected[i];
        break;
      }
  }
  for (const CampaignDevice& d : env_.devices) {
    cl_command_queue q = env_.queues[d.queues[uniform(d.queues.size())]].queue;
    for (size_t b = 0; b < buffers_.size(); ++b) {
      if (!buffers_[b]) continue;
      std::vector<uint32_t> got(kElems, 0xdeadbeef);
      EXPECT_CL_OK(clEnqueueReadBuffer(q, buffers_[b], CL_TRUE, 0, kElems * 4, got.data(), 0,
                                       nullptr, nullptr));
      env_.figures.commands++;
      env_.figures.bytes_checked += kElems * 4;
      for (size_t i = 0; i < kElems; ++i)
        if (got[i] != model_[b][i]) {
          if (report())
            ADD_FAILURE() << "final b" << b << " on '" << d.name << "': element " << i << " is 0x"
                          << std::hex << got[i] << ", expected 0x" << model_[b][i] << std::dec
                          << " (last writer #" << last_writer_[b] << " "
                          << (last_writer_[b] >= 0 ? nodes_[last_writer_[b]].what : "") << ")";
          break;
        }
    }
  }
}

void Round::run() {
  for (int b = 0; b < kBuffers; ++b) makeBuffer();
  checkResidentEverywhere();
  if (::testing::Test::HasFailure()) return;
  armFaults();
  while (enqueued_ < commands_ && nodes_.size() + 64 < max_nodes_ &&
         !::testing::Test::HasFatalFailure())
    randomStep();
  drain();
  // A fault its command did not meet must not meet the next round.
  if (env_.hooks.cuda_fail_launches) env_.hooks.cuda_fail_launches(0, false);
  if (env_.hooks.cuda_fail_allocations) env_.hooks.cuda_fail_allocations(0);
  if (env_.hooks.ze_inject) {
    env_.hooks.ze_inject(ze_test::kFaultOutOfDeviceMemory, 0);
    env_.hooks.ze_inject(ze_test::kFaultRefuseLaunches, 0);
  }
  check();
  env_.figures.rounds++;
}

}  // namespace schedtest::campaign

namespace schedtest {

void runCampaignRound(CampaignEnv& env, uint64_t seed, long index, int commands) {
  campaign::Round round(env, seed, index, commands);
  round.run();
}

void runDeviceLoss(CampaignEnv& env, uint64_t seed) {
  using campaign::kElems;
  int lost = -1, other = -1;
  for (size_t d = 0; d < env.devices.size(); ++d) {
    if (env.devices[d].level_zero) lost = static_cast<int>(d);
    if (!env.devices[d].level_zero && other < 0) other = static_cast<int>(d);
  }
  if (lost < 0 || other < 0) return;
  SCOPED_TRACE("the loss of '" + env.devices[lost].name + "'");
  std::mt19937_64 rng(seed ^ 0x1057d1ceull);
  // b0: filled on the device, then copied to b1 elsewhere; b2: filled elsewhere; b3: a kernel of
  // the device steps it.
  std::vector<std::vector<uint32_t>> content(4, std::vector<uint32_t>(kElems));
  std::vector<Mem> buffers;
  cl_int err = CL_SUCCESS;
  for (auto& c : content) {
    for (auto& x : c) x = static_cast<uint32_t>(rng());
    buffers.emplace_back(clCreateBuffer(env.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                        kElems * 4, c.data(), &err));
    ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  }
  auto check = [&](int device, int b, const std::vector<uint32_t>& want) {
    std::vector<uint32_t> got(kElems, 0xdeadbeef);
    EXPECT_CL_OK(clEnqueueReadBuffer(env.queues[env.devices[device].queues[0]].queue, buffers[b],
                                     CL_TRUE, 0, kElems * 4, got.data(), 0, nullptr, nullptr));
    env.figures.commands++;
    env.figures.bytes_checked += kElems * 4;
    EXPECT_EQ(want, got) << "b" << b << " on '" << env.devices[device].name << "'";
  };
  for (size_t d = 0; d < env.devices.size(); ++d)
    for (int b = 0; b < 4; ++b) check(static_cast<int>(d), b, content[b]);
  cl_command_queue zq = env.queues[env.devices[lost].queues[0]].queue;
  cl_command_queue oq = env.queues[env.devices[other].queues[0]].queue;
  Event gate(clCreateUserEvent(env.context, &err));
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  cl_event g = gate;
  const uint32_t pattern = 0x0dd0beefu, other_pattern = 0x600dcafeu;
  Event fill, step, copy, independent;
  ASSERT_CL(CL_SUCCESS,
            clEnqueueFillBuffer(zq, buffers[0], &pattern, 4, 0, kElems * 4, 1, &g, fill.out()));
  Kernel k(clCreateKernel(env.program, "step", &err));
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  const cl_uint salt = 3, off = 0;
  setArg(k, 0, buffers[3].get());
  setArg(k, 1, salt);
  setArg(k, 2, off);
  const size_t global = kElems;
  ASSERT_CL(CL_SUCCESS,
            clEnqueueNDRangeKernel(zq, k, 1, nullptr, &global, nullptr, 0, nullptr, step.out()));
  cl_event f = fill;
  ASSERT_CL(CL_SUCCESS,
            clEnqueueCopyBuffer(oq, buffers[0], buffers[1], 0, 0, kElems * 4, 1, &f, copy.out()));
  ASSERT_CL(CL_SUCCESS, clEnqueueFillBuffer(oq, buffers[2], &other_pattern, 4, 0, kElems * 4, 0,
                                            nullptr, independent.out()));
  env.figures.commands += 4;
  EXPECT_CL_OK(clFlush(zq));
  EXPECT_CL_OK(clFlush(oq));
  env.hooks.ze_inject(ze_test::kFaultDeviceLost, 1);
  env.figures.device_losses++;
  EXPECT_CL_OK(clSetUserEventStatus(gate, CL_COMPLETE));
  for (cl_event e : {fill.get(), step.get(), copy.get(), independent.get()}) clWaitForEvents(1, &e);
  EXPECT_LT(eventStatus(fill), 0) << "a fill of the lost device";
  EXPECT_LT(eventStatus(step), 0) << "a kernel of the lost device";
  EXPECT_STATUS(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, eventStatus(copy));
  EXPECT_STATUS(CL_COMPLETE, eventStatus(independent));
  // What the lost device's commands wrote is undefined; the rest stays right everywhere else.
  for (size_t d = 0; d < env.devices.size(); ++d) {
    if (static_cast<int>(d) == lost) continue;
    check(static_cast<int>(d), 1, content[1]);
    check(static_cast<int>(d), 2, std::vector<uint32_t>(kElems, other_pattern));
  }
  clFinish(zq);
}

}  // namespace schedtest
