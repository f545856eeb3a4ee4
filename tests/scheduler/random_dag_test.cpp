// Random-DAG stress test of the scheduler: thousands of commands over several queues (in-order and
// out-of-order, some with profiling) of ONE context, with random wait lists that cross queues (and
// devices, with MANIFOLD_TEST_DEVICE_TYPE=all), markers and barriers with and without wait lists,
// user events set from another thread that gate parts of the graph, and buffer writes, reads,
// copies, fills, migrations and small kernels.
//
// The host models the graph as it enqueues it. Two commands that touch the same buffer (one of
// them writing) are always ordered by a dependency: an explicit wait-list entry is added unless
// the earlier one is already an ancestor of the later one through wait lists, in-order queue
// order or barriers. The result is then deterministic, and equal to applying the commands in
// enqueue order, whatever order the unconstrained ones run in. The test checks every read's
// snapshot, every buffer's final content (read back on every device), every event's final
// status, every callback, and with profiling every ordering constraint: a command's START is
// not before the END of any command it depends on.
//
// The "failing" variant sets some user events to a negative status: a command whose wait list
// holds a failed event fails with CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST and has no
// effect (queue order alone does not propagate a failure, as in tests/api/events_test.cpp).
//
// Knobs: MANIFOLD_SCHED_SEED (number or "random"), MANIFOLD_SCHED_COMMANDS (default 3000,
// 1500 under sanitizers), MANIFOLD_SCHED_OPS and MANIFOLD_SCHED_SERIAL_READS (narrow a failure
// down), MANIFOLD_SCHED_SKEW_NS (profiling tolerance between a GPU's stamps and
// another device's, default 20000), MANIFOLD_SCHED_DUMP_BUFFER (print the commands on one buffer,
// with MANIFOLD_TRACE_MIGRATION's migrations to match by event).
#include <deque>
#include <functional>
#include <thread>

#include "dag_model.h"
#include "sched_test.h"

namespace {

using namespace schedtest;

constexpr const char* kSource = R"CLC(
kernel void mix(global const uint* a, global const uint* b, global uint* out, uint salt, uint off) {
  uint i = (uint)get_global_id(0) + off;
  out[i] = a[i] * 2654435761u + (b[i] ^ salt) + i;
}
kernel void step(global uint* x, uint salt, uint off) {
  uint i = (uint)get_global_id(0) + off;
  x[i] = x[i] * 1664525u + salt;
}
)CLC";

constexpr cl_int kUserFailure = -7;

enum class Op { User, Write, Read, Copy, Fill, Mix, Step, Migrate, Marker, Barrier };

struct Node {
  Op op = Op::User;
  int queue = -1;  // -1: a user event
  Event event;
  std::vector<int> waits;     // explicit wait list
  std::vector<int> implicit;  // queue order: in-order predecessor, last barrier, earlier commands
  bool fails = false;         // expected to end with an error (user event: set to kUserFailure)
  std::string what;           // for messages
  std::vector<int> buffers;   // the buffers it reads or writes (MANIFOLD_SCHED_DUMP_BUFFER)
  // Ancestors whose completion (and effects) this node is guaranteed to follow. A failed node
  // guarantees nothing about its own dependencies (it may be terminated early), so ancestry
  // does not pass through it.
  Bits trusted;
  // Every node this one may wait for, through failed ones too: decides whether waiting for it
  // can block on a user event that is not set yet.
  Bits reach;
};

struct QueueState {
  Queue queue;
  cl_device_id device = nullptr;
  bool in_order = true;
  bool profiling = false;
  int last = -1;                // in-order predecessor
  int last_barrier = -1;        // out-of-order: every later command waits for it
  std::vector<int> since_full;  // out-of-order: commands since the last barrier without wait list
};

struct Read {
  int node;
  int buffer;
  size_t offset;
  std::vector<uint32_t> got;
  std::vector<uint32_t> expected;
};

struct Params {
  uint64_t seed;
  bool failing;
};

// The queues every DAG of a test shares: every device gets in-order and out-of-order queues,
// with and without profiling; at least four queues, even on one device.
class DagTest : public MultiDeviceTest {
 protected:
  void SetUp() override {
    MultiDeviceTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    const size_t nq = std::min<size_t>(12, std::max<size_t>(4, 4 * devices_.size()));
    for (size_t i = 0; i < nq; ++i) {
      QueueState s;
      s.device = devices_[(i / 4) % devices_.size()];
      s.in_order = (i % 2 == 0) || !supportsOutOfOrder(s.device);
      s.profiling = (i % 4) < 2 || i % 4 == 3;  // three of every four
      cl_command_queue_properties props =
          (s.in_order ? 0 : CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) |
          (s.profiling ? CL_QUEUE_PROFILING_ENABLE : 0);
      s.queue = makeQueue(s.device, props);
      ASSERT_TRUE(s.queue);
      queues_.push_back(std::move(s));
    }
    program_ = build(kSource);
    ASSERT_FALSE(HasFailure());
  }
  std::vector<QueueState> queues_;
  Program program_;
};

int defaultCommands() {
  return static_cast<int>(envLong("MANIFOLD_SCHED_COMMANDS", kSanitized ? 1500 : 3000));
}

// Generates, enqueues and checks one random DAG from the calling thread, with buffers of its
// own, into `queues` (a copy: the queue-order bookkeeping is this DAG's own). Other threads may
// enqueue their own DAGs into the same queues at the same time: their commands only add
// ordering (an in-order queue still runs this DAG's commands in order, a barrier of theirs only
// delays ours), which the model never relies on.
void runDag(cl_context context, cl_program program, std::vector<QueueState> queues,
            size_t device_count, uint64_t seed, bool failing, int commands, bool shared_queues) {
  using ::testing::Test;
  const int64_t gpu_skew_ns = envLong("MANIFOLD_SCHED_SKEW_NS", 20000);
  constexpr int kBuffers = 12;
  constexpr size_t kElems = 512;
  std::mt19937_64 rng(seed);
  auto uniform = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  auto chance = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
  for (QueueState& q : queues) {
    q.last = q.last_barrier = -1;
    q.since_full.clear();
  }
  // MANIFOLD_SCHED_OPS (e.g. "write,read,copy"): only these kinds of commands, to narrow down
  // a failure; reads are always allowed.
  bool allowed[10];
  {
    const std::string ops = envOr("MANIFOLD_SCHED_OPS", "all");
    const char* names[] = {"user", "write", "read",    "copy",   "fill",
                           "mix",  "step",  "migrate", "marker", "barrier"};
    for (int k = 0; k < 10; ++k)
      allowed[k] = ops == "all" || ops.find(names[k]) != std::string::npos ||
                   k == static_cast<int>(Op::Read);
  }
  const bool serial_reads = envLong("MANIFOLD_SCHED_SERIAL_READS", 0) != 0;
  cl_int err = CL_SUCCESS;
  // Kernels of this thread (clSetKernelArg on a shared kernel would race).
  Kernel mix(clCreateKernel(program, "mix", &err));
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  Kernel step(clCreateKernel(program, "step", &err));
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  auto makeBuffer = [&](size_t size, cl_mem_flags flags, void* host) {
    cl_int e = CL_SUCCESS;
    Mem m(clCreateBuffer(context, flags, size, host, &e));
    EXPECT_EQ(Err(CL_SUCCESS), Err(e)) << "clCreateBuffer";
    return m;
  };
  auto makeUserEvent = [&] {
    cl_int e = CL_SUCCESS;
    Event u(clCreateUserEvent(context, &e));
    EXPECT_EQ(Err(CL_SUCCESS), Err(e)) << "clCreateUserEvent";
    return u;
  };

  // ---- Buffers and the host model of their content.
  std::vector<std::vector<uint32_t>> model(kBuffers, std::vector<uint32_t>(kElems));
  std::vector<Mem> buffers;
  for (int b = 0; b < kBuffers; ++b) {
    for (auto& x : model[b]) x = static_cast<uint32_t>(rng());
    buffers.push_back(
        makeBuffer(kElems * 4, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, model[b].data()));
    ASSERT_TRUE(buffers.back());
  }
  // Per buffer: the last command that wrote it and the commands that read it since.
  std::vector<int> last_writer(kBuffers, -1);
  std::vector<std::vector<int>> readers(kBuffers);

  const int users_planned = commands / 25 + 1;
  const size_t max_nodes = static_cast<size_t>(commands + users_planned + 1);
  std::vector<Node> nodes;
  nodes.reserve(max_nodes);
  std::deque<std::vector<uint32_t>> host_sources;  // write sources: stay put until the end
  std::deque<Read> reads;
  std::deque<CallbackRecord> callbacks;
  std::vector<std::pair<int, CallbackRecord*>> callback_nodes;
  Bits unset_users(max_nodes);  // user events not handed to the setter yet
  std::vector<int> unset_list;
  UserEventSetter setter(seed ^ 0x5eed);
  int waits_done = 0;

  auto hand_user = [&](size_t k) {
    const int u = unset_list[k];
    unset_list.erase(unset_list.begin() + static_cast<long>(k));
    unset_users.clear(static_cast<size_t>(u));
    setter.hand(nodes[u].event, nodes[u].fails ? kUserFailure : CL_COMPLETE);
  };

  int users = 0;
  // Enqueues everything; a fatal failure inside returns from the lambda only, so that the code
  // below still sets every user event and drains the queues before host memory goes away.
  auto generate = [&] {
    for (int c = 0; c < commands && !Test::HasFatalFailure(); ++c) {
      // A new user event now and then; hand one to the setter now and then.
      if (users < users_planned && chance(1.0 / 25)) {
        Node u;
        u.op = Op::User;
        u.event = makeUserEvent();
        u.fails = failing && chance(0.3);
        u.what = "user event";
        u.trusted = Bits(max_nodes);
        u.reach = Bits(max_nodes);
        nodes.push_back(std::move(u));
        unset_users.set(nodes.size() - 1);
        unset_list.push_back(static_cast<int>(nodes.size() - 1));
        users++;
      }
      if (!unset_list.empty() && (chance(1.0 / 30) || unset_list.size() > 5))
        hand_user(uniform(unset_list.size()));

      const int self = static_cast<int>(nodes.size());
      Node n;
      n.queue = static_cast<int>(uniform(queues.size()));
      QueueState& qs = queues[n.queue];
      do {
        const double r = std::uniform_real_distribution<double>(0, 1)(rng);
        n.op = r < 0.14   ? Op::Write
               : r < 0.28 ? Op::Read
               : r < 0.42 ? Op::Copy
               : r < 0.52 ? Op::Fill
               : r < 0.68 ? Op::Mix
               : r < 0.84 ? Op::Step
               : r < 0.88 ? Op::Migrate
               : r < 0.94 ? Op::Marker
                          : Op::Barrier;
      } while (!allowed[static_cast<int>(n.op)]);
      n.trusted = Bits(max_nodes);
      n.reach = Bits(max_nodes);

      // Random wait-list entries among recent nodes (any queue, user events included), and now and
      // then a user event that is not set yet, which gates this command and what follows it.
      if (chance(0.5) && !nodes.empty()) {
        const size_t window = std::min<size_t>(nodes.size(), 48);
        for (size_t k = 1 + uniform(3); k > 0; --k)
          n.waits.push_back(static_cast<int>(nodes.size() - 1 - uniform(window)));
      }
      if (!unset_list.empty() && chance(0.06))
        n.waits.push_back(unset_list[uniform(unset_list.size())]);
      std::sort(n.waits.begin(), n.waits.end());
      n.waits.erase(std::unique(n.waits.begin(), n.waits.end()), n.waits.end());

      // Queue order (what the spec guarantees, not how the runtime does it).
      const bool sync_all = (n.op == Op::Marker || n.op == Op::Barrier) && n.waits.empty();
      if (qs.in_order) {
        if (qs.last >= 0) n.implicit.push_back(qs.last);
      } else {
        if (qs.last_barrier >= 0) n.implicit.push_back(qs.last_barrier);
        if (sync_all)
          n.implicit.insert(n.implicit.end(), qs.since_full.begin(), qs.since_full.end());
      }

      auto add_ancestry = [&](int d) {
        const Node& dep = nodes[d];
        n.reach.set(d);
        n.reach.merge(dep.reach);
        n.trusted.set(d);
        if (!dep.fails) n.trusted.merge(dep.trusted);
      };
      for (int d : n.implicit) add_ancestry(d);
      for (int d : n.waits) add_ancestry(d);

      // Buffers touched.
      std::vector<int> reads_of, writes_of;
      size_t off = 0, len = kElems, off2 = 0;
      int b0 = static_cast<int>(uniform(kBuffers));
      int b1 = static_cast<int>(uniform(kBuffers - 1));
      if (b1 >= b0) b1++;  // b1 != b0
      int b2 = static_cast<int>(uniform(kBuffers));
      if (!chance(0.3)) {
        off = uniform(kElems);
        len = 1 + uniform(kElems - off);
      }
      switch (n.op) {
        case Op::Write:
        case Op::Fill:
        case Op::Step:
        case Op::Migrate:  // ordered like a write: a migration must not race with a writer
          writes_of = {b0};
          break;
        case Op::Read:
          reads_of = {b0};
          break;
        case Op::Copy:
          off2 = uniform(kElems - len + 1);
          reads_of = {b0};
          writes_of = {b1};
          break;
        case Op::Mix:
          if (b2 == b1) b2 = b0;
          reads_of = b2 == b0 ? std::vector<int>{b0} : std::vector<int>{b0, b2};
          writes_of = {b1};
          break;
        default:
          break;
      }
      // MANIFOLD_SCHED_SERIAL_READS=1 orders readers of a buffer like writers (narrows a
      // failure down to unordered readers).
      if (serial_reads)
        for (int b : reads_of)
          if (std::find(writes_of.begin(), writes_of.end(), b) == writes_of.end())
            writes_of.push_back(b);
      // The conflicts this command must follow: become explicit waits unless already ancestors.
      std::vector<int> required;
      for (int b : reads_of)
        if (last_writer[b] >= 0) required.push_back(last_writer[b]);
      for (int b : writes_of) {
        if (last_writer[b] >= 0) required.push_back(last_writer[b]);
        required.insert(required.end(), readers[b].begin(), readers[b].end());
      }
      for (int d : required) {
        if (n.trusted.test(static_cast<size_t>(d))) continue;
        n.waits.push_back(d);
        add_ancestry(d);
      }
      std::sort(n.waits.begin(), n.waits.end());
      n.waits.erase(std::unique(n.waits.begin(), n.waits.end()), n.waits.end());
      for (int d : n.waits) n.fails = n.fails || nodes[d].fails;
      n.buffers = reads_of;
      n.buffers.insert(n.buffers.end(), writes_of.begin(), writes_of.end());

      std::vector<cl_event> wait_events;
      for (int d : n.waits) wait_events.push_back(nodes[d].event);
      const cl_uint nw = static_cast<cl_uint>(wait_events.size());
      const cl_event* wl = nw ? wait_events.data() : nullptr;
      cl_int err = CL_SUCCESS;
      char what[160] = "";
      switch (n.op) {
        case Op::Write: {
          std::vector<uint32_t> data(len);
          for (auto& x : data) x = static_cast<uint32_t>(rng());
          host_sources.push_back(std::move(data));
          err = clEnqueueWriteBuffer(qs.queue, buffers[b0], CL_FALSE, off * 4, len * 4,
                                     host_sources.back().data(), nw, wl, n.event.out());
          if (!n.fails)
            std::copy(host_sources.back().begin(), host_sources.back().end(),
                      model[b0].begin() + off);
          std::snprintf(what, sizeof(what), "write b%d [%zu,+%zu)", b0, off, len);
          break;
        }
        case Op::Read: {
          reads.push_back(
              {self, b0, off, std::vector<uint32_t>(len, 0xdeadbeef),
               std::vector<uint32_t>(model[b0].begin() + off, model[b0].begin() + off + len)});
          err = clEnqueueReadBuffer(qs.queue, buffers[b0], CL_FALSE, off * 4, len * 4,
                                    reads.back().got.data(), nw, wl, n.event.out());
          std::snprintf(what, sizeof(what), "read b%d [%zu,+%zu)", b0, off, len);
          break;
        }
        case Op::Copy:
          err = clEnqueueCopyBuffer(qs.queue, buffers[b0], buffers[b1], off * 4, off2 * 4, len * 4,
                                    nw, wl, n.event.out());
          if (!n.fails)
            std::copy(model[b0].begin() + off, model[b0].begin() + off + len,
                      model[b1].begin() + off2);
          std::snprintf(what, sizeof(what), "copy b%d [%zu,+%zu) -> b%d @%zu", b0, off, len, b1,
                        off2);
          break;
        case Op::Fill: {
          const uint32_t pattern = static_cast<uint32_t>(rng());
          err = clEnqueueFillBuffer(qs.queue, buffers[b0], &pattern, 4, off * 4, len * 4, nw, wl,
                                    n.event.out());
          if (!n.fails) std::fill(model[b0].begin() + off, model[b0].begin() + off + len, pattern);
          std::snprintf(what, sizeof(what), "fill b%d [%zu,+%zu)", b0, off, len);
          break;
        }
        case Op::Mix: {
          const cl_uint salt = static_cast<cl_uint>(rng()), o = static_cast<cl_uint>(off);
          setArg(mix, 0, buffers[b0].get());
          setArg(mix, 1, buffers[b2].get());
          setArg(mix, 2, buffers[b1].get());
          setArg(mix, 3, salt);
          setArg(mix, 4, o);
          err = clEnqueueNDRangeKernel(qs.queue, mix, 1, nullptr, &len, nullptr, nw, wl,
                                       n.event.out());
          if (!n.fails)
            for (size_t i = off; i < off + len; ++i)
              model[b1][i] =
                  model[b0][i] * 2654435761u + (model[b2][i] ^ salt) + static_cast<uint32_t>(i);
          std::snprintf(what, sizeof(what), "mix b%d,b%d -> b%d [%zu,+%zu)", b0, b2, b1, off, len);
          break;
        }
        case Op::Step: {
          const cl_uint salt = static_cast<cl_uint>(rng()), o = static_cast<cl_uint>(off);
          setArg(step, 0, buffers[b0].get());
          setArg(step, 1, salt);
          setArg(step, 2, o);
          err = clEnqueueNDRangeKernel(qs.queue, step, 1, nullptr, &len, nullptr, nw, wl,
                                       n.event.out());
          if (!n.fails)
            for (size_t i = off; i < off + len; ++i) model[b0][i] = model[b0][i] * 1664525u + salt;
          std::snprintf(what, sizeof(what), "step b%d [%zu,+%zu)", b0, off, len);
          break;
        }
        case Op::Migrate: {
          cl_mem m = buffers[b0];
          const cl_mem_migration_flags flags = chance(0.3) ? CL_MIGRATE_MEM_OBJECT_HOST : 0;
          err = clEnqueueMigrateMemObjects(qs.queue, 1, &m, flags, nw, wl, n.event.out());
          std::snprintf(what, sizeof(what), "migrate b%d%s", b0, flags ? " to host" : "");
          break;
        }
        case Op::Marker:
          err = clEnqueueMarkerWithWaitList(qs.queue, nw, wl, n.event.out());
          std::snprintf(what, sizeof(what), "marker (%s)", nw ? "wait list" : "all before");
          break;
        case Op::Barrier:
          err = clEnqueueBarrierWithWaitList(qs.queue, nw, wl, n.event.out());
          std::snprintf(what, sizeof(what), "barrier (%s)", nw ? "wait list" : "all before");
          break;
        case Op::User:
          break;
      }
      n.what = what;
      ASSERT_EQ(Err(CL_SUCCESS), Err(err))
          << "enqueue #" << self << " " << what << " on queue " << n.queue;
      ASSERT_TRUE(n.event);

      // Model bookkeeping. A failed command does nothing, so it needs no ordering against others.
      if (!n.fails) {
        for (int b : writes_of) {
          last_writer[b] = self;
          readers[b].clear();
        }
        for (int b : reads_of)
          if (std::find(writes_of.begin(), writes_of.end(), b) == writes_of.end())
            readers[b].push_back(self);
      }
      qs.last = self;
      if (!qs.in_order) {
        if (n.op == Op::Barrier) {
          qs.last_barrier = self;
          if (sync_all) qs.since_full.clear();
        }
        if (!(n.op == Op::Barrier && sync_all)) qs.since_full.push_back(self);
      }
      if (chance(0.08)) {
        callbacks.emplace_back();
        callback_nodes.push_back({self, &callbacks.back()});
        EXPECT_CL_OK(clSetEventCallback(n.event, CL_COMPLETE, recordCallback, &callbacks.back()));
      }
      nodes.push_back(std::move(n));

      if (chance(0.03)) {
        EXPECT_CL_OK(clFlush(queues[uniform(queues.size())].queue));
      }
      // Now and then wait for a few events of any queues that no unset user event gates. With
      // other threads' DAGs in the same queues, one of ours may sit behind one of their gates:
      // each thread hands all its gates to its setter before it waits, so that two threads never
      // wait for each other's gates.
      if (chance(0.01)) {
        if (shared_queues)
          while (!unset_list.empty()) hand_user(0);
        std::vector<cl_event> list;
        bool expect_error = false;
        for (size_t k = 0; k < 3; ++k) {
          const size_t cand = nodes.size() - 1 - uniform(std::min<size_t>(nodes.size(), 64));
          if (unset_users.test(cand) || nodes[cand].reach.intersects(unset_users)) continue;
          list.push_back(nodes[cand].event);
          expect_error = expect_error || nodes[cand].fails;
        }
        if (!list.empty()) {
          EXPECT_CL(expect_error ? CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST : CL_SUCCESS,
                    clWaitForEvents(static_cast<cl_uint>(list.size()), list.data()))
              << "clWaitForEvents after #" << self;
          waits_done++;
        }
      }
    }
  };
  generate();
  while (!unset_list.empty()) hand_user(0);
  for (auto& q : queues) EXPECT_CL_OK(clFlush(q.queue));
  setter.close();
  EXPECT_EQ(0, setter.errors()) << "clSetUserEventStatus failed";
  for (auto& q : queues) EXPECT_CL_OK(clFinish(q.queue));
  if (Test::HasFatalFailure()) return;

  // ---- Statuses.
  int reported = 0;
  auto report = [&](int limit = 12) { return reported++ < limit; };
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = nodes[i];
    const cl_int want =
        n.op == Op::User ? (n.fails ? kUserFailure : CL_COMPLETE)
                         : (n.fails ? CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST : CL_COMPLETE);
    const cl_int got = eventStatus(n.event);
    if (got != want && report())
      ADD_FAILURE() << "#" << i << " " << n.what << " (queue " << n.queue << "): status "
                    << statusName(got) << ", expected " << statusName(want);
  }
  // MANIFOLD_SCHED_DUMP_BUFFER=<b>: every command that touched buffer b, in enqueue order, with
  // its queue, device, ordering and event (matches MANIFOLD_TRACE_MIGRATION's ev=).
  if (const long dump = envLong("MANIFOLD_SCHED_DUMP_BUFFER", -1); dump >= 0) {
    for (size_t i = 0; i < nodes.size(); ++i) {
      const Node& n = nodes[i];
      if (std::find(n.buffers.begin(), n.buffers.end(), static_cast<int>(dump)) == n.buffers.end())
        continue;
      const QueueState& q = queues[n.queue];
      std::string deps;
      for (int d : n.waits) deps += " w" + std::to_string(d);
      for (int d : n.implicit) deps += " q" + std::to_string(d);
      std::printf("[dag] #%zu %s queue %d (%s, %s) ev=%p after:%s\n", i, n.what.c_str(), n.queue,
                  deviceName(q.device).c_str(), q.in_order ? "in-order" : "out-of-order",
                  static_cast<void*>(n.event.get()), deps.c_str());
    }
  }
  // ---- Reads: each saw the content the commands before it (in the DAG) left.
  for (const Read& rd : reads) {
    if (nodes[rd.node].fails) continue;
    for (size_t i = 0; i < rd.got.size(); ++i)
      if (rd.got[i] != rd.expected[i]) {
        if (report())
          ADD_FAILURE() << "#" << rd.node << " " << nodes[rd.node].what << ": element "
                        << rd.offset + i << " is 0x" << std::hex << rd.got[i] << ", expected 0x"
                        << rd.expected[i];
        break;
      }
  }
  // ---- Final content, read back through a queue of every device.
  std::vector<cl_device_id> seen;
  for (const QueueState& qs : queues) {
    if (std::find(seen.begin(), seen.end(), qs.device) != seen.end()) continue;
    seen.push_back(qs.device);
    for (int b = 0; b < kBuffers; ++b) {
      std::vector<uint32_t> got(kElems);
      EXPECT_CL_OK(clEnqueueReadBuffer(qs.queue, buffers[b], CL_TRUE, 0, kElems * 4, got.data(), 0,
                                       nullptr, nullptr));
      for (size_t i = 0; i < kElems; ++i)
        if (got[i] != model[b][i]) {
          if (report())
            ADD_FAILURE() << "final b" << b << " read on '" << deviceName(qs.device)
                          << "': element " << i << " is 0x" << std::hex << got[i] << ", expected 0x"
                          << model[b][i] << std::dec << " (last writer #" << last_writer[b] << " "
                          << (last_writer[b] >= 0 ? nodes[last_writer[b]].what : "") << ")";
          break;
        }
    }
  }
  // ---- Callbacks: each called once, with the final status.
  for (auto [i, rec] : callback_nodes) {
    const cl_int want = nodes[i].fails ? CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST : CL_COMPLETE;
    // clFinish may return before a callback on the worker thread has run: give it a moment.
    for (int t = 0; t < 2000 && rec->calls.load() == 0; ++t)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if ((rec->calls.load() != 1 || rec->status.load() != want) && report())
      ADD_FAILURE() << "#" << i << " " << nodes[i].what << ": callback called " << rec->calls.load()
                    << " times with status " << statusName(rec->status.load())
                    << ", expected once with " << statusName(want);
  }
  // ---- Profiling: QUEUED <= SUBMIT <= START <= END, and START >= END of every dependency.
  struct Stamps {
    bool valid = false;
    cl_ulong queued, submit, start, end;
  };
  std::vector<Stamps> stamps(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = nodes[i];
    if (n.op == Op::User || n.fails || !queues[n.queue].profiling) continue;
    Stamps& s = stamps[i];
    cl_int e1, e2, e3, e4;
    s.queued = profilingInfo(n.event, CL_PROFILING_COMMAND_QUEUED, &e1);
    s.submit = profilingInfo(n.event, CL_PROFILING_COMMAND_SUBMIT, &e2);
    s.start = profilingInfo(n.event, CL_PROFILING_COMMAND_START, &e3);
    s.end = profilingInfo(n.event, CL_PROFILING_COMMAND_END, &e4);
    if (e1 || e2 || e3 || e4) {
      if (report())
        ADD_FAILURE() << "#" << i << " " << n.what
                      << ": clGetEventProfilingInfo failed: " << errorName(e1) << " "
                      << errorName(e2) << " " << errorName(e3) << " " << errorName(e4);
      continue;
    }
    s.valid = true;
    if (!(s.queued <= s.submit && s.submit <= s.start && s.start <= s.end) && report())
      ADD_FAILURE() << "#" << i << " " << n.what << ": stamps out of order: queued " << s.queued
                    << " submit " << s.submit << " start " << s.start << " end " << s.end;
  }
  int checked_pairs = 0;
  int64_t worst_ns = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!stamps[i].valid) continue;
    const Node& n = nodes[i];
    std::vector<int> deps = n.waits;
    deps.insert(deps.end(), n.implicit.begin(), n.implicit.end());
    for (int d : deps) {
      if (!stamps[d].valid) continue;
      cl_device_id d1 = queues[n.queue].device, d2 = queues[nodes[d].queue].device;
      const bool cpu_only = isCpuDevice(d1) && isCpuDevice(d2);
      const int64_t tolerance = cpu_only ? 0 : gpu_skew_ns;
      const int64_t early =
          static_cast<int64_t>(stamps[d].end) - static_cast<int64_t>(stamps[i].start);
      checked_pairs++;
      worst_ns = std::max(worst_ns, early);
      if (early > tolerance && report())
        ADD_FAILURE() << "#" << i << " " << n.what << " (queue " << n.queue << ") started " << early
                      << " ns before its dependency #" << d << " " << nodes[d].what << " (queue "
                      << nodes[d].queue << ") ended";
    }
  }
  std::printf(
      "seed %" PRIu64
      "%s: %zu nodes (%d user events) on %zu queues, %zu devices; %zu reads, %zu callbacks, "
      "%d mid-run waits, %d dependency pairs timed (worst START-before-END %" PRId64 " ns)\n",
      seed, failing ? " (failing)" : "", nodes.size(), users, queues.size(), device_count,
      reads.size(), callbacks.size(), waits_done, checked_pairs, worst_ns);
  if (Test::HasFailure() && !shared_queues)
    std::printf("reproduce: MANIFOLD_SCHED_SEED=%" PRIu64
                " MANIFOLD_SCHED_COMMANDS=%d --gtest_filter='%s.%s'\n",
                seed, commands,
                ::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name(),
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
}

void PrintTo(const Params& p, std::ostream* os) {
  *os << (p.failing ? "failing, seed " : "seed ") << p.seed;
}

class RandomDag : public DagTest, public ::testing::WithParamInterface<Params> {};

TEST_P(RandomDag, Run) {
  const uint64_t seed = seedFor(GetParam().seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  runDag(context_, program_, queues_, devices_.size(), seed, GetParam().failing, defaultCommands(),
         false);
}

INSTANTIATE_TEST_SUITE_P(Seeds, RandomDag,
                         ::testing::Values(Params{1, false}, Params{2, false}, Params{3, false},
                                           Params{101, true}, Params{102, true}),
                         [](const ::testing::TestParamInfo<Params>& info) {
                           return std::string(info.param.failing ? "failing_seed" : "seed") +
                                  std::to_string(info.param.seed);
                         });

// Three threads enqueue three independent DAGs (each with its own buffers, user events and
// setter thread) into the same queues at once.
class RandomDagThreads : public DagTest {};

TEST_F(RandomDagThreads, ThreeThreadsShareTheQueues) {
  const uint64_t seed = seedFor(1000);
  const int commands = std::max(1, defaultCommands() / 2);
  std::vector<std::thread> threads;
  for (uint64_t t = 0; t < 3; ++t)
    threads.emplace_back([&, t] {
      SCOPED_TRACE("thread " + std::to_string(t) + ", seed " + std::to_string(seed + t));
      runDag(context_, program_, queues_, devices_.size(), seed + t, false, commands, true);
    });
  for (auto& t : threads) t.join();
  if (HasFailure())
    std::printf("reproduce: MANIFOLD_SCHED_SEED=%" PRIu64
                " MANIFOLD_SCHED_COMMANDS=%d --gtest_filter='RandomDagThreads.*'\n",
                seed, commands * 2);
}

}  // namespace
