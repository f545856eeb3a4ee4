#include "server/session.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <thread>

namespace manifold::server {

namespace {

using namespace manifold::remote;

std::atomic<size_t> active_sessions{0};

uint64_t now_ns() {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count());
}

std::string host_name() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

// Compares without stopping at the first difference: how long a refusal takes says nothing of
// how much of the token was right.
bool same_secret(const std::string& a, const std::string& b) {
  unsigned char difference = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) difference |= uint8_t(a[i] ^ (i < b.size() ? b[i] : 0));
  return difference == 0;
}

// The end of a job: its marker's callback and each of its reads' callbacks (which send the bytes
// as soon as they are there) hold it; the last of them sends Done, after every Data.
struct Completion {
  std::shared_ptr<Connection> connection;
  uint32_t queue;
  uint64_t job;
  bool profiling;
  std::vector<cl_event> events;
  std::vector<std::shared_ptr<const void>> keep;
  std::atomic<size_t> pending{1};  // the marker and the reads whose bytes are not sent yet
  Done done;
  std::shared_ptr<PrintfOutput> printf_output;  // the queue's
};

void finished_part(const std::shared_ptr<Completion>& c) {
  if (c->pending.fetch_sub(1) != 1) return;
  // Every kernel of the job has run: what they printed is kept by now.
  std::string text = c->printf_output ? c->printf_output->take() : std::string();
  Payload payload;
  if (!text.empty()) payload = Payload::copy_of(text.data(), text.size());
  c->connection->send(message(Kind::Done, c->done, std::move(payload)));
}

struct ReadPart {
  std::shared_ptr<Completion> completion;
  uint64_t tag;
  std::shared_ptr<Staging> bytes;
};

void CL_CALLBACK read_finished(cl_event, cl_int status, void* user_data) {
  std::unique_ptr<ReadPart> r(static_cast<ReadPart*>(user_data));
  if (status == CL_COMPLETE) {
    const void* data = r->bytes->data();
    r->completion->connection->send(
        message(Kind::Data, Data{r->tag}, Payload::lend(data, r->bytes->size(), r->bytes)));
  }
  finished_part(r->completion);
}

struct MarkerPart {
  std::shared_ptr<Completion> completion;
};

void CL_CALLBACK job_finished(cl_event marker, cl_int, void* user_data) {
  std::unique_ptr<MarkerPart> part(static_cast<MarkerPart*>(user_data));
  Completion& c = *part->completion;
  Done& done = c.done;
  for (cl_event e : c.events) {
    cl_int status = CL_COMPLETE;
    clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr);
    if (status < 0 && done.status == CL_COMPLETE) {
      done.status = status;
      done.message = "a command failed on the server";
    }
    if (c.profiling && done.status == CL_COMPLETE) {
      cl_ulong start = 0, end = 0;
      clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof start, &start, nullptr);
      clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr);
      if (start && (!done.start_ns || start < done.start_ns)) done.start_ns = start;
      if (end > done.end_ns) done.end_ns = end;
    }
    clReleaseEvent(e);
  }
  c.events.clear();
  if (c.profiling && done.status == CL_COMPLETE && !done.start_ns && marker) {
    // A job that ran nothing here (a marker of the client's) ran when its marker did.
    cl_ulong start = 0, end = 0;
    clGetEventProfilingInfo(marker, CL_PROFILING_COMMAND_START, sizeof start, &start, nullptr);
    clGetEventProfilingInfo(marker, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr);
    done.start_ns = start, done.end_ns = end;
  }
  if (marker) clReleaseEvent(marker);
  c.keep.clear();
  finished_part(part->completion);
}

}  // namespace

std::shared_ptr<Session> Session::start(ServedPlatform& platform, PeerLinks& peers,
                                        std::shared_ptr<Connection> connection, std::string token,
                                        LogLine log) {
  std::shared_ptr<Session> session(
      new Session(platform, peers, std::move(connection), std::move(token), std::move(log)));
  ++active_sessions;
  std::thread([session] { session->run(); }).detach();
  return session;
}

Session::Session(ServedPlatform& platform, PeerLinks& peers, std::shared_ptr<Connection> connection,
                 std::string token, LogLine log)
    : platform_(platform),
      peers_(peers),
      connection_(std::move(connection)),
      token_(std::move(token)),
      log_(std::move(log)),
      peer_(connection_->peer()) {}

Session::~Session() = default;

size_t Session::active() { return active_sessions.load(); }

Handlers Session::handlers() {
  Handlers h;
  std::weak_ptr<Session> weak = weak_from_this();
  // Commands go straight into OpenCL from the transport's thread (enqueues return at once);
  // what may take long (a program build, a blocking read) and whatever arrives while the session's
  // thread is busy go to that thread, which keeps the order.
  h.on_message = [weak](IncomingMessage&& m) {
    auto s = weak.lock();
    if (!s) return;
    std::unique_lock lock(s->inbox_mutex_);
    const Kind kind = Kind(m.kind);
    const bool slow = kind == Kind::LoadProgram || kind == Kind::ReadBuffer ||
                      kind == Kind::SendTo || !s->welcomed_;
    if (slow || s->busy_ || !s->inbox_.empty()) {
      s->inbox_.push_back(std::move(m));
      s->inbox_ready_.notify_one();
      return;
    }
    s->busy_ = true;
    lock.unlock();
    s->handle_safely(m);
    lock.lock();
    s->busy_ = false;
    if (!s->inbox_.empty() || s->closed_) s->inbox_ready_.notify_one();
  };
  // A write's bytes land in staging memory of the pool, found again by the write's tag.
  h.place_payload = [weak](uint16_t kind, std::span<const std::byte> header, size_t size) -> void* {
    auto s = weak.lock();
    if (!s) return nullptr;
    if (Kind(kind) == Kind::PeerData) {
      auto p = decode<PeerData>(header);
      return p ? Tickets::get().destination(p->ticket, p->offset, size) : nullptr;
    }
    if (size < 64 * 1024) return nullptr;
    uint64_t tag = 0;
    if (Kind(kind) == Kind::Write) {
      auto w = decode<Write>(header);
      if (!w) return nullptr;
      tag = w->tag;
    } else if (Kind(kind) == Kind::WriteRect) {
      auto w = decode<WriteRect>(header);
      if (!w) return nullptr;
      tag = w->tag;
    } else {
      return nullptr;
    }
    auto staging = StagingPool::get(size);
    std::lock_guard lock(s->placed_mutex_);
    return (s->placed_[tag] = std::move(staging))->data();
  };
  h.on_closed = [weak](const std::string& why) {
    if (auto s = weak.lock()) {
      std::lock_guard lock(s->inbox_mutex_);
      if (s->welcomed_) s->log_("client " + s->peer_ + " gone: " + why);
      s->closed_ = true;
      s->inbox_ready_.notify_one();
    }
  };
  return h;
}

void Session::run() {
  for (;;) {
    std::unique_lock lock(inbox_mutex_);
    inbox_ready_.wait(lock, [&] { return !busy_ && (closed_ || !inbox_.empty()); });
    if (inbox_.empty()) break;
    IncomingMessage m = std::move(inbox_.front());
    inbox_.pop_front();
    busy_ = true;
    lock.unlock();
    handle_safely(m);
    lock.lock();
    busy_ = false;
  }
  end();
  --active_sessions;
}

void Session::handle_safely(IncomingMessage& m) {
  try {
    handle(m);
  } catch (const std::exception& e) {
    // A request this server cannot meet (memory for a transfer, say): the client is told by
    // the end of its connection, the server goes on.
    log_("client " + peer_ + " dropped: " + e.what());
    connection_->close();
  }
}

void Session::hello(const Hello& h) {
  Welcome w;
  if (h.version != kProtocolVersion) {
    w.message = "protocol version " + std::to_string(h.version) + " (the server speaks " +
                std::to_string(kProtocolVersion) + ")";
  } else if (!same_secret(h.token, token_)) {
    // Nothing about the server until the client proves it may know.
    w.message = "refused";
  } else {
    w.accepted = 1;
    w.server = host_name();
    w.server_time_ns = now_ns();
  }
  if (!w.accepted) {
    log_("refused " + peer_ + ": " + (w.message == "refused" ? "wrong token" : w.message));
    connection_->send(message(Kind::Welcome, w));
    connection_->close();
    return;
  }
  {
    std::lock_guard lock(inbox_mutex_);
    welcomed_ = true;
  }
  log_("client " + peer_ + " connected");
  connection_->send(
      message(Kind::Welcome, w, Payload::own(encode_strings(platform_.descriptions()))));
}

void Session::reply(uint64_t request, cl_int status, const std::string& text) {
  connection_->send(message(Kind::Reply, Reply{request, status, text}));
}

Session::Queue* Session::queue(uint32_t id) {
  auto it = queues_.find(id);
  return it == queues_.end() ? nullptr : &it->second;
}

std::shared_ptr<Staging> Session::take_placed(uint64_t tag) {
  std::lock_guard lock(placed_mutex_);
  auto it = placed_.find(tag);
  if (it == placed_.end()) return nullptr;
  std::shared_ptr<Staging> staging = std::move(it->second);
  placed_.erase(it);
  return staging;
}

cl_mem Session::buffer(uint64_t id) {
  auto it = buffers_.find(id);
  return it == buffers_.end() ? nullptr : it->second;
}

cl_mem Session::region(const Span& span, uint64_t size) {
  cl_mem root = buffer(span.buffer);
  if (!root) return nullptr;
  size_t root_size = 0;
  clGetMemObjectInfo(root, CL_MEM_SIZE, sizeof root_size, &root_size, nullptr);
  if (span.offset == 0 && size == root_size) return root;
  const auto key = std::make_tuple(span.buffer, span.offset, size);
  if (auto it = regions_.find(key); it != regions_.end()) return it->second;
  const cl_buffer_region r{size_t(span.offset), size_t(size)};
  cl_int status = CL_SUCCESS;
  cl_mem sub =
      clCreateSubBuffer(root, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &r, &status);
  if (sub) regions_.emplace(key, sub);
  return sub;
}

void Session::enqueued(Queue& q, cl_int status, cl_event event, const char* call) {
  if (status == CL_SUCCESS) {
    q.job.events.push_back(event);
  } else if (q.job.status == CL_COMPLETE) {
    q.job.status = status;
    q.job.message = std::string(call) + " failed on the server: error " + std::to_string(status);
  }
}

void Session::end_job(Queue& q, uint64_t job_id, uint32_t queue_id) {
  auto c = std::make_shared<Completion>();
  c->connection = connection_;
  c->queue = queue_id;
  c->job = job_id;
  c->profiling = q.profiling;
  c->events = std::move(q.job.events);
  c->keep = std::move(q.job.keep);
  c->done = Done{queue_id, job_id, q.job.status, std::move(q.job.message), 0, 0, {}};
  c->printf_output = q.printf_output;
  std::vector<Job::PendingRead> reads = std::move(q.job.reads);
  q.job = Job{};
  // Each read sends its bytes when it is done; the bytes of a failed job are not sent.
  c->pending += reads.size();
  for (Job::PendingRead& r : reads) {
    auto* part = new ReadPart{c, r.tag, std::move(r.bytes)};
    if (clSetEventCallback(r.event, CL_COMPLETE, read_finished, part) != CL_SUCCESS)
      read_finished(r.event, CL_INVALID_EVENT, part);
    clReleaseEvent(r.event);
  }
  cl_event marker = nullptr;
  cl_int status = clEnqueueMarkerWithWaitList(q.queue, 0, nullptr, &marker);
  auto* part = new MarkerPart{c};
  if (status == CL_SUCCESS) status = clSetEventCallback(marker, CL_COMPLETE, job_finished, part);
  if (status != CL_SUCCESS) {
    // No marker to wait for: end the job once the queue has run what came before it.
    clFinish(q.queue);
    if (c->done.status == CL_COMPLETE) c->done.status = status;
    job_finished(marker, CL_COMPLETE, part);
  }
}

void Session::launch(const Launch& l, const LaunchArgs& args) {
  Queue* q = queue(l.queue);
  if (!q || q->job.status != CL_COMPLETE) return;
  auto program = programs_.find(l.program);
  if (program == programs_.end()) return enqueued(*q, CL_INVALID_PROGRAM, nullptr, "a launch");
  auto key = std::make_pair(l.program, l.kernel);
  auto it = kernels_.find(key);
  if (it == kernels_.end()) {
    cl_int status = CL_SUCCESS;
    cl_kernel k = clCreateKernel(program->second, l.kernel.c_str(), &status);
    if (!k) return enqueued(*q, status, nullptr, "clCreateKernel");
    it = kernels_.emplace(key, k).first;
  }
  cl_kernel kernel = it->second;
  size_t value = 0, value_offset = 0;
  for (cl_uint i = 0; i < args.args.size(); ++i) {
    const LaunchArg& a = args.args[i];
    cl_int status = CL_SUCCESS;
    switch (a.kind) {
      case LaunchArg::Value: {
        const size_t size = value < args.value_sizes.size() ? args.value_sizes[value++] : 0;
        if (value_offset + size > args.values.size())
          return enqueued(*q, CL_INVALID_VALUE, nullptr, "a launch's values");
        status = clSetKernelArg(kernel, i, size, args.values.data() + value_offset);
        value_offset += size;
        break;
      }
      case LaunchArg::Buffer: {
        cl_mem mem = region(a.buffer, a.size);
        if (!mem) return enqueued(*q, CL_INVALID_MEM_OBJECT, nullptr, "a launch's buffer");
        status = clSetKernelArg(kernel, i, sizeof mem, &mem);
        break;
      }
      case LaunchArg::NullBuffer:
        status = clSetKernelArg(kernel, i, sizeof(cl_mem), nullptr);
        break;
      case LaunchArg::Local:
        status = clSetKernelArg(kernel, i, a.size, nullptr);
        break;
      default:
        status = CL_INVALID_ARG_VALUE;
    }
    if (status != CL_SUCCESS) return enqueued(*q, status, nullptr, "clSetKernelArg");
  }
  size_t offset[3], global[3], local[3], first[3], count[3];
  bool partial = false;
  for (int d = 0; d < 3; ++d) {
    offset[d] = l.offset[d], global[d] = l.global[d], local[d] = l.local[d];
    first[d] = l.group_first[d], count[d] = l.group_count[d];
    partial = partial || count[d] != 0;
  }
  cl_event event = nullptr;
  if (!partial) {
    const cl_int status = clEnqueueNDRangeKernel(q->queue, kernel, l.work_dim, offset, global,
                                                 local, 0, nullptr, &event);
    return enqueued(*q, status, event, "clEnqueueNDRangeKernel");
  }
  const auto enqueue_part = platform_.enqueue_part();
  if (!enqueue_part)
    return enqueued(*q, CL_INVALID_OPERATION, nullptr,
                    "clEnqueueNDRangeKernelPartMFLD (not found)");
  const cl_int status = enqueue_part(q->queue, kernel, l.work_dim, offset, global, local, first,
                                     count, 0, nullptr, &event);
  enqueued(*q, status, event, "clEnqueueNDRangeKernelPartMFLD");
}

cl_int Session::read_now(cl_mem mem, uint64_t offset, size_t size, void* host) {
  cl_int status = CL_SUCCESS;
  if (!service_queue_)
    service_queue_ = clCreateCommandQueueWithProperties(platform_.context(), platform_.devices()[0],
                                                        nullptr, &status);
  if (!service_queue_) return status;
  return clEnqueueReadBuffer(service_queue_, mem, CL_TRUE, offset, size, host, 0, nullptr, nullptr);
}

void Session::read_buffer(const ReadBuffer& r) {
  cl_mem mem = buffer(r.from.buffer);
  if (!mem) return reply(r.request, CL_INVALID_MEM_OBJECT, "no such buffer on the server");
  auto bytes = StagingPool::get(r.size);
  if (cl_int status = read_now(mem, r.from.offset, r.size, bytes->data()); status != CL_SUCCESS)
    return reply(r.request, status, "reading the buffer failed");
  const void* data = bytes->data();
  connection_->send(message(Kind::Data, Data{r.request}, Payload::lend(data, r.size, bytes)));
}

void Session::receive(const Receive& r) {
  Queue* q = queue(r.queue);
  if (!q || q->job.status != CL_COMPLETE) return;
  cl_mem mem = buffer(r.to.buffer);
  if (!mem) return enqueued(*q, CL_INVALID_MEM_OBJECT, nullptr, "a transfer from a server");
  cl_int status = CL_SUCCESS;
  cl_event arrived = clCreateUserEvent(platform_.context(), &status);
  if (!arrived) return enqueued(*q, status, nullptr, "clCreateUserEvent");
  auto bytes = StagingPool::get(r.size);
  cl_event e = nullptr;
  status = clEnqueueWriteBuffer(q->queue, mem, CL_FALSE, r.to.offset, r.size, bytes->data(), 1,
                                &arrived, &e);
  if (status != CL_SUCCESS) {
    clReleaseEvent(arrived);
    return enqueued(*q, status, nullptr, "clEnqueueWriteBuffer");
  }
  q->job.keep.push_back(bytes);
  Tickets::get().add(r.ticket, Tickets::Ticket{bytes, arrived, 0, this});
  enqueued(*q, status, e, "a transfer from a server");
}

void Session::send_to(const SendTo& s) {
  cl_mem mem = buffer(s.from.buffer);
  if (!mem) return reply(s.request, CL_INVALID_MEM_OBJECT, "no such buffer on the server");
  std::string why;
  auto peer = peers_.get(s.host, s.port, s.token, &why);
  if (!peer) return reply(s.request, CL_DEVICE_NOT_AVAILABLE, why);
  auto bytes = StagingPool::get(s.size);
  if (cl_int status = read_now(mem, s.from.offset, s.size, bytes->data()); status != CL_SUCCESS)
    return reply(s.request, status, "reading the buffer failed");
  struct Progress {
    std::mutex mutex;
    std::condition_variable changed;
    size_t pending = 0;
    bool failed = false;
  };
  auto progress = std::make_shared<Progress>();
  for (size_t done = 0; done < s.size; done += kTransferPiece) {
    const size_t piece = std::min<size_t>(s.size - done, kTransferPiece);
    OutgoingMessage m = message(Kind::PeerData, PeerData{s.ticket, done},
                                Payload::lend(bytes->data() + done, piece, bytes));
    {
      std::lock_guard lock(progress->mutex);
      ++progress->pending;
    }
    m.sent = [progress](bool sent) {
      std::lock_guard lock(progress->mutex);
      --progress->pending;
      progress->failed |= !sent;
      progress->changed.notify_all();
    };
    if (!peer->send(std::move(m))) break;
  }
  std::unique_lock lock(progress->mutex);
  progress->changed.wait(lock, [&] { return progress->pending == 0; });
  if (progress->failed)
    return reply(s.request, CL_DEVICE_NOT_AVAILABLE, "the receiving server went");
  reply(s.request, CL_SUCCESS, "");
}

}  // namespace manifold::server
