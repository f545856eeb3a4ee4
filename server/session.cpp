#include "server/session.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
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

// The end of a job, sent from the OpenCL callback of its marker.
struct Completion {
  std::shared_ptr<Connection> connection;
  uint32_t queue;
  uint64_t job;
  bool profiling;
  std::vector<cl_event> events;
  std::vector<std::pair<uint64_t, std::shared_ptr<std::vector<std::byte>>>> reads;
  std::vector<std::shared_ptr<const void>> keep;
  cl_int status;
  std::string message;
};

void CL_CALLBACK job_finished(cl_event marker, cl_int, void* user_data) {
  std::unique_ptr<Completion> c(static_cast<Completion*>(user_data));
  Done done{c->queue, c->job, c->status, c->message, 0, 0};
  for (cl_event e : c->events) {
    cl_int status = CL_COMPLETE;
    clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr);
    if (status < 0 && done.status == CL_COMPLETE) {
      done.status = status;
      done.message = "a command failed on the server";
    }
    if (c->profiling && done.status == CL_COMPLETE) {
      cl_ulong start = 0, end = 0;
      clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof start, &start, nullptr);
      clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr);
      if (start && (!done.start_ns || start < done.start_ns)) done.start_ns = start;
      if (end > done.end_ns) done.end_ns = end;
    }
    clReleaseEvent(e);
  }
  if (c->profiling && done.status == CL_COMPLETE && !done.start_ns) {
    // A job that ran nothing here (a marker of the client's) ran when its marker did.
    cl_ulong start = 0, end = 0;
    clGetEventProfilingInfo(marker, CL_PROFILING_COMMAND_START, sizeof start, &start, nullptr);
    clGetEventProfilingInfo(marker, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr);
    done.start_ns = start, done.end_ns = end;
  }
  clReleaseEvent(marker);
  if (done.status == CL_COMPLETE)
    for (auto& [tag, bytes] : c->reads) {
      const void* data = bytes->data();
      const size_t size = bytes->size();
      c->connection->send(message(Kind::Data, Data{tag}, Payload::lend(data, size, bytes)));
    }
  c->connection->send(message(Kind::Done, done));
}

}  // namespace

std::shared_ptr<Session> Session::start(ServedPlatform& platform,
                                        std::shared_ptr<Connection> connection, std::string token,
                                        LogLine log) {
  std::shared_ptr<Session> session(
      new Session(platform, std::move(connection), std::move(token), std::move(log)));
  ++active_sessions;
  std::thread([session] { session->run(); }).detach();
  return session;
}

Session::Session(ServedPlatform& platform, std::shared_ptr<Connection> connection,
                 std::string token, LogLine log)
    : platform_(platform),
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
    const bool slow = kind == Kind::LoadProgram || kind == Kind::ReadBuffer || !s->welcomed_;
    if (slow || s->busy_ || !s->inbox_.empty()) {
      s->inbox_.push_back(std::move(m));
      s->inbox_ready_.notify_one();
      return;
    }
    s->busy_ = true;
    lock.unlock();
    s->handle(m);
    lock.lock();
    s->busy_ = false;
    if (!s->inbox_.empty() || s->closed_) s->inbox_ready_.notify_one();
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
    handle(m);
    lock.lock();
    busy_ = false;
  }
  end();
  --active_sessions;
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
  auto* c = new Completion{connection_,
                           queue_id,
                           job_id,
                           q.profiling,
                           std::move(q.job.events),
                           std::move(q.job.reads),
                           std::move(q.job.keep),
                           q.job.status,
                           std::move(q.job.message)};
  q.job = Job{};
  cl_event marker = nullptr;
  cl_int status = clEnqueueMarkerWithWaitList(q.queue, 0, nullptr, &marker);
  if (status == CL_SUCCESS) status = clSetEventCallback(marker, CL_COMPLETE, job_finished, c);
  if (status != CL_SUCCESS) {
    // No marker to wait for: end the job once the queue has run what came before it.
    clFinish(q.queue);
    if (c->status == CL_COMPLETE) c->status = status;
    job_finished(marker, CL_COMPLETE, c);
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
  size_t offset[3], global[3], local[3];
  for (int d = 0; d < 3; ++d)
    offset[d] = l.offset[d], global[d] = l.global[d], local[d] = l.local[d];
  cl_event event = nullptr;
  const cl_int status = clEnqueueNDRangeKernel(q->queue, kernel, l.work_dim, offset, global, local,
                                               0, nullptr, &event);
  enqueued(*q, status, event, "clEnqueueNDRangeKernel");
}

void Session::read_buffer(const ReadBuffer& r) {
  cl_mem mem = buffer(r.from.buffer);
  if (!mem) return reply(r.request, CL_INVALID_MEM_OBJECT, "no such buffer on the server");
  cl_int status = CL_SUCCESS;
  if (!service_queue_)
    service_queue_ = clCreateCommandQueueWithProperties(platform_.context(), platform_.devices()[0],
                                                        nullptr, &status);
  if (!service_queue_) return reply(r.request, status, "the server cannot read buffers");
  auto bytes = std::make_shared<std::vector<std::byte>>(r.size);
  status = clEnqueueReadBuffer(service_queue_, mem, CL_TRUE, r.from.offset, r.size, bytes->data(),
                               0, nullptr, nullptr);
  if (status != CL_SUCCESS) return reply(r.request, status, "reading the buffer failed");
  const void* data = bytes->data();
  connection_->send(message(Kind::Data, Data{r.request}, Payload::lend(data, r.size, bytes)));
}

}  // namespace manifold::server
