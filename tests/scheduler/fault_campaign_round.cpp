// One round of the fault campaign (fault_campaign.h): buffers with random content, checked on
// every device; faults armed in the drivers, each on a buffer of its own behind a gate; then a
// random DAG over every queue of the context (writes, reads, copies, fills, kernels, maps, user
// events, markers, barriers) in which some user events end with a negative status, commands
// wait on the faulted ones, and events, buffers, queues and kernels are released while commands
// still use them. After every command that writes, reads of what it wrote on a queue of every
// device join the DAG. The sequential model is random_dag_test.cpp's: conflicting commands are
// ordered by wait lists, a command fails exactly when its wait list holds a failed event, and a
// failed command changes nothing.
#include <algorithm>
#include <deque>
#include <memory>

#include "fault_campaign_round.h"

namespace schedtest::campaign {

int Round::makeBuffer() {
  std::vector<uint32_t> content(kElems);
  for (auto& x : content) x = static_cast<uint32_t>(rng_());
  cl_int err = CL_SUCCESS;
  buffers_.emplace_back(clCreateBuffer(env_.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                       kElems * 4, content.data(), &err));
  EXPECT_EQ(Err(CL_SUCCESS), Err(err)) << "clCreateBuffer";
  model_.push_back(std::move(content));
  last_writer_.push_back(-1);
  readers_.emplace_back();
  return static_cast<int>(buffers_.size() - 1);
}

// Reads every live buffer on every device (blocking): the model's content everywhere, and every
// buffer has memory on every device before a fault makes the next allocation fail.
void Round::checkResidentEverywhere() {
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
          ADD_FAILURE() << "b" << b << " on '" << d.name << "': element " << i << " is 0x"
                        << std::hex << got[i] << ", expected 0x" << model_[b][i];
          break;
        }
    }
  }
}

int Round::addUser(bool fails, bool handed_to_setter) {
  Node u;
  cl_int err = CL_SUCCESS;
  u.event.reset(clCreateUserEvent(env_.context, &err));
  EXPECT_EQ(Err(CL_SUCCESS), Err(err)) << "clCreateUserEvent";
  u.fails = fails;
  u.what = fails ? "user event (fails)" : "user event";
  u.trusted = Bits(max_nodes_);
  u.reach = Bits(max_nodes_);
  nodes_.push_back(std::move(u));
  const int self = static_cast<int>(nodes_.size() - 1);
  if (handed_to_setter) unset_.push_back(self);
  if (fails) {
    failed_roots_.push_back(self);
    env_.figures.user_failures++;
  }
  return self;
}

void Round::handUser(size_t k) {
  const int u = unset_[k];
  unset_.erase(unset_.begin() + static_cast<long>(k));
  setter_.hand(nodes_[u].event, nodes_[u].fails ? kUserFailure : CL_COMPLETE);
}

// A launch the simulated CUDA driver refuses, an allocation a driver refuses: each on a buffer of
// its own (nothing else touches it on that device this round, so that the armed fault meets
// exactly this command), behind a gate the setter opens later.
// Launches the Level Zero test driver refuses (kFaultRefuseLaunches) fail on the queue's worker,
// after their submission: a command whose wait list holds one must still fail, not run after it.

void Round::armFaults() {
  for (size_t d = 0; d < env_.devices.size(); ++d) {
    const CampaignDevice& dev = env_.devices[d];
    const bool launch = chance(0.3) && ((dev.null_cuda && env_.hooks.cuda_fail_launches) ||
                                        (dev.level_zero && env_.hooks.ze_inject));
    const bool alloc = !launch && chance(0.3) &&
                       ((dev.null_cuda && env_.hooks.cuda_fail_allocations) ||
                        (dev.level_zero && env_.hooks.ze_inject));
    if (!launch && !alloc) continue;
    const int f = makeBuffer();
    const int gate = addUser(false, true);
    const int q = dev.queues[uniform(dev.queues.size())];
    if (launch) {
      if (dev.null_cuda)
        env_.hooks.cuda_fail_launches(1, false);
      else
        env_.hooks.ze_inject(ze_test::kFaultRefuseLaunches, 1);
      launch_faulted_[d] = true;
      failed_roots_.push_back(
          enqueue(Op::Touch, q, f, -1, -1, 0, kElems, 0, {gate}, Fault::Launch));
      env_.figures.launch_faults++;
    } else {
      if (dev.null_cuda)
        env_.hooks.cuda_fail_allocations(1);
      else
        env_.hooks.ze_inject(ze_test::kFaultOutOfDeviceMemory, 1);
      failed_roots_.push_back(enqueue(Op::Fill, q, f, -1, -1, 0, kElems, 0, {gate}, Fault::Alloc));
      env_.figures.alloc_faults++;
    }
  }
}

// Enqueues one command; the model follows unless it is expected to fail. Returns its node.
int Round::enqueue(Op op, int queue, int b0, int b1, int b2, size_t off, size_t len, size_t off2,
                   std::vector<int> waits, Fault fault) {
  const int self = static_cast<int>(nodes_.size());
  Node n;
  n.op = op;
  n.queue = queue;
  n.fault = fault;
  n.waits = std::move(waits);
  n.trusted = Bits(max_nodes_);
  n.reach = Bits(max_nodes_);
  const CampaignQueue& cq = env_.queues[queue];
  QueueModel& qm = queue_models_[queue];
  const bool sync_all = (op == Op::Marker || op == Op::Barrier) && n.waits.empty();
  if (cq.in_order) {
    if (qm.last >= 0) n.implicit.push_back(qm.last);
  } else {
    if (qm.last_barrier >= 0) n.implicit.push_back(qm.last_barrier);
    if (sync_all) n.implicit.insert(n.implicit.end(), qm.since_full.begin(), qm.since_full.end());
  }
  auto ancestry = [&](int d) {
    n.reach.set(d);
    n.reach.merge(nodes_[d].reach);
    n.trusted.set(d);
    if (!nodes_[d].fails) n.trusted.merge(nodes_[d].trusted);
  };
  for (int d : n.implicit) ancestry(d);
  for (int d : n.waits) ancestry(d);
  std::vector<int> reads_of, writes_of;
  switch (op) {
    case Op::Write:
    case Op::Fill:
    case Op::Step:
    case Op::Touch:
    case Op::MapWrite:
      writes_of = {b0};
      break;
    case Op::Read:
    case Op::MapRead:
      reads_of = {b0};
      break;
    case Op::Copy:
      reads_of = {b0};
      writes_of = {b1};
      break;
    case Op::Mix:
      reads_of = b2 == b0 ? std::vector<int>{b0} : std::vector<int>{b0, b2};
      writes_of = {b1};
      break;
    default:
      break;
  }
  // A faulted command is ordered like any other (its buffer is its own anyway).
  std::vector<int> required;
  for (int b : reads_of)
    if (last_writer_[b] >= 0) required.push_back(last_writer_[b]);
  for (int b : writes_of) {
    if (last_writer_[b] >= 0) required.push_back(last_writer_[b]);
    required.insert(required.end(), readers_[b].begin(), readers_[b].end());
  }
  for (int d : required)
    if (!n.trusted.test(static_cast<size_t>(d))) {
      n.waits.push_back(d);
      ancestry(d);
    }
  std::sort(n.waits.begin(), n.waits.end());
  n.waits.erase(std::unique(n.waits.begin(), n.waits.end()), n.waits.end());
  n.fails = fault != Fault::None;
  for (int d : n.waits) n.fails = n.fails || nodes_[d].fails;
  std::vector<cl_event> wait_events;
  for (int d : n.waits) {
    EXPECT_TRUE(nodes_[d].event) << "a released event in a wait list";
    wait_events.push_back(nodes_[d].event);
  }
  const cl_uint nw = static_cast<cl_uint>(wait_events.size());
  const cl_event* wl = nw ? wait_events.data() : nullptr;
  cl_command_queue q = cq.queue;
  cl_int err = CL_SUCCESS;
  char what[160] = "";
  auto kernelFor = [&](const char* name) {
    cl_int e = CL_SUCCESS;
    Kernel k(clCreateKernel(env_.program, name, &e));
    EXPECT_EQ(Err(CL_SUCCESS), Err(e)) << "clCreateKernel " << name;
    return k;
  };
  const cl_uint o = static_cast<cl_uint>(off), salt = static_cast<cl_uint>(rng_());
  switch (op) {
    case Op::Write: {
      std::vector<uint32_t> data(len);
      for (auto& x : data) x = static_cast<uint32_t>(rng_());
      host_sources_.push_back(std::move(data));
      err = clEnqueueWriteBuffer(q, buffers_[b0], CL_FALSE, off * 4, len * 4,
                                 host_sources_.back().data(), nw, wl, n.event.out());
      if (!n.fails)
        std::copy(host_sources_.back().begin(), host_sources_.back().end(),
                  model_[b0].begin() + static_cast<long>(off));
      std::snprintf(what, sizeof what, "write b%d [%zu,+%zu)", b0, off, len);
      break;
    }
    case Op::Read: {
      snapshots_.push_back(
          {self, std::vector<uint32_t>(len, 0xdeadbeef),
           std::vector<uint32_t>(model_[b0].begin() + static_cast<long>(off),
                                 model_[b0].begin() + static_cast<long>(off + len))});
      err = clEnqueueReadBuffer(q, buffers_[b0], CL_FALSE, off * 4, len * 4,
                                snapshots_.back().got.data(), nw, wl, n.event.out());
      std::snprintf(what, sizeof what, "read b%d [%zu,+%zu)", b0, off, len);
      break;
    }
    case Op::Copy:
      err = clEnqueueCopyBuffer(q, buffers_[b0], buffers_[b1], off * 4, off2 * 4, len * 4, nw, wl,
                                n.event.out());
      if (!n.fails) {
        const std::vector<uint32_t> from(model_[b0].begin() + static_cast<long>(off),
                                         model_[b0].begin() + static_cast<long>(off + len));
        std::copy(from.begin(), from.end(), model_[b1].begin() + static_cast<long>(off2));
      }
      std::snprintf(what, sizeof what, "copy b%d [%zu,+%zu) -> b%d @%zu", b0, off, len, b1, off2);
      break;
    case Op::Fill: {
      const uint32_t pattern = salt;
      err = clEnqueueFillBuffer(q, buffers_[b0], &pattern, 4, off * 4, len * 4, nw, wl,
                                n.event.out());
      if (!n.fails)
        std::fill(model_[b0].begin() + static_cast<long>(off),
                  model_[b0].begin() + static_cast<long>(off + len), pattern);
      std::snprintf(what, sizeof what, "fill b%d [%zu,+%zu)", b0, off, len);
      break;
    }
    case Op::Mix:
    case Op::Step:
    case Op::Touch: {
      Kernel k = kernelFor(op == Op::Mix ? "mix" : op == Op::Step ? "step" : "touch");
      cl_uint arg = 0;
      setArg(k, arg++, buffers_[b0].get());
      if (op == Op::Mix) {
        setArg(k, arg++, buffers_[b2].get());
        setArg(k, arg++, buffers_[b1].get());
      }
      if (op != Op::Touch) setArg(k, arg++, salt);
      setArg(k, arg++, o);
      err = clEnqueueNDRangeKernel(q, k, 1, nullptr, &len, nullptr, nw, wl, n.event.out());
      env_.figures.kernel_releases++;  // `k`, released below while its launch is pending
      if (!n.fails && op == Op::Mix)
        for (size_t i = off; i < off + len; ++i)
          model_[b1][i] =
              model_[b0][i] * 2654435761u + (model_[b2][i] ^ salt) + static_cast<uint32_t>(i);
      if (!n.fails && op == Op::Step)
        for (size_t i = off; i < off + len; ++i) model_[b0][i] = model_[b0][i] * 1664525u + salt;
      std::snprintf(what, sizeof what, "%s b%d [%zu,+%zu)",
                    op == Op::Mix    ? "mix"
                    : op == Op::Step ? "step"
                                     : "touch",
                    b0, off, len);
      break;
    }
    case Op::MapRead:
    case Op::MapWrite: {
      MapRecord& m = maps_.emplace_back();
      m.write = op == Op::MapWrite;
      m.bytes = len * 4;
      m.data.resize(len);
      if (m.write)
        for (auto& x : m.data) x = static_cast<uint32_t>(rng_());
      const cl_map_flags flags = m.write ? CL_MAP_WRITE_INVALIDATE_REGION : CL_MAP_READ;
      m.pointer = clEnqueueMapBuffer(q, buffers_[b0], CL_FALSE, flags, off * 4, len * 4, nw, wl,
                                     n.event.out(), &err);
      std::snprintf(what, sizeof what, "map b%d [%zu,+%zu) for %s", b0, off, len,
                    m.write ? "writing" : "reading");
      break;
    }
    case Op::Marker:
      err = clEnqueueMarkerWithWaitList(q, nw, wl, n.event.out());
      std::snprintf(what, sizeof what, "marker (%s)", nw ? "wait list" : "all before");
      break;
    case Op::Barrier:
      err = clEnqueueBarrierWithWaitList(q, nw, wl, n.event.out());
      std::snprintf(what, sizeof what, "barrier (%s)", nw ? "wait list" : "all before");
      break;
    case Op::User:
      break;
  }
  n.what = std::string(what) + " on queue " + std::to_string(queue) + " ('" + deviceOf(queue).name +
           "')";
  EXPECT_EQ(Err(CL_SUCCESS), Err(err)) << "enqueue #" << self << " " << n.what;
  env_.figures.commands++;
  enqueued_++;
  if (!n.fails) {
    for (int b : writes_of) {
      last_writer_[b] = self;
      readers_[b].clear();
    }
    for (int b : reads_of)
      if (std::find(writes_of.begin(), writes_of.end(), b) == writes_of.end())
        readers_[b].push_back(self);
  }
  qm.last = self;
  if (!cq.in_order) {
    if (op == Op::Barrier) {
      qm.last_barrier = self;
      if (sync_all) qm.since_full.clear();
    }
    if (!(op == Op::Barrier && sync_all)) qm.since_full.push_back(self);
  }
  nodes_.push_back(std::move(n));
  if (op == Op::Read && nodes_[self].fails) snapshots_.back().node = -1;
  if (op == Op::MapRead || op == Op::MapWrite) {
    // The unmap waits for the mapping and for its callback's gate.
    MapRecord& m = maps_.back();
    const int gate = static_cast<int>(nodes_.size());
    Node g;
    cl_int e = CL_SUCCESS;
    g.event.reset(clCreateUserEvent(env_.context, &e));
    EXPECT_EQ(Err(CL_SUCCESS), Err(e));
    m.gate = g.event;
    g.what = "gate of #" + std::to_string(self) + "'s unmap";
    g.trusted = nodes_[self].trusted;
    g.reach = nodes_[self].reach;
    g.reach.set(static_cast<size_t>(self));
    nodes_.push_back(std::move(g));
    EXPECT_CL_OK(clSetEventCallback(nodes_[self].event, CL_COMPLETE, mapDone, &m));
    const int unmap = static_cast<int>(nodes_.size());
    Node u;
    u.op = op == Op::MapWrite ? Op::Write : Op::Read;  // ordered like the access it ends
    u.queue = queue;
    u.waits = {self, gate};
    u.implicit = {self};
    u.trusted = nodes_[self].trusted;
    u.trusted.set(static_cast<size_t>(self));
    u.reach = nodes_[gate].reach;
    u.reach.set(static_cast<size_t>(gate));
    u.fails = nodes_[self].fails;
    cl_event both[] = {nodes_[self].event, nodes_[gate].event};
    EXPECT_CL_OK(clEnqueueUnmapMemObject(q, buffers_[b0], m.pointer, 2, both, u.event.out()));
    u.what = "unmap of #" + std::to_string(self);
    env_.figures.commands++;
    if (!u.fails) {
      if (m.write) {
        std::copy(m.data.begin(), m.data.end(), model_[b0].begin() + static_cast<long>(off));
        last_writer_[b0] = unmap;
        readers_[b0].clear();
      } else {
        snapshots_.push_back(
            {self,
             {},
             std::vector<uint32_t>(model_[b0].begin() + static_cast<long>(off),
                                   model_[b0].begin() + static_cast<long>(off + len)),
             &m});
        std::replace(readers_[b0].begin(), readers_[b0].end(), self, unmap);
      }
    }
    qm.last = unmap;
    if (!cq.in_order) qm.since_full.push_back(unmap);
    nodes_.push_back(std::move(u));
    return unmap;
  }
  return self;
}

// Reads what `writer` wrote on a queue of every device, each ordered after it.
void Round::checkAfter(int writer, int buffer, size_t off, size_t len) {
  for (const CampaignDevice& d : env_.devices)
    enqueue(Op::Read, d.queues[uniform(d.queues.size())], buffer, -1, -1, off, len, 0, {writer});
}

}  // namespace schedtest::campaign
