// A session's messages, one case each: queues, buffers and programs made and released, and the
// commands of a queue's jobs enqueued on the server's in-order queue without waiting for them.
#include "server/session.h"

#include <chrono>
#include <cstring>

namespace manifold::server {

using namespace manifold::remote;

namespace {

// The header of `m` as message M; nullopt (the message is dropped) when it is malformed.
template <class M>
std::optional<M> header_of(const IncomingMessage& m) {
  return decode<M>(m.header);
}

// A buffer rectangle's byte offset as OpenCL's (x, y, z) origin under its pitches.
std::array<size_t, 3> origin_of(uint64_t offset, uint64_t row_pitch, uint64_t slice_pitch) {
  const size_t z = slice_pitch ? offset / slice_pitch : 0;
  const size_t rest = offset - z * slice_pitch;
  const size_t y = row_pitch ? rest / row_pitch : 0;
  return {size_t(rest - y * row_pitch), y, z};
}

// The bytes a write brought: where the transport placed them, or what it received.
std::shared_ptr<Staging> bytes_of(IncomingMessage& m, std::shared_ptr<Staging> placed) {
  if (m.placed) return placed;
  auto bytes = StagingPool::get(m.payload.size());
  if (!m.payload.empty()) std::memcpy(bytes->data(), m.payload.data(), m.payload.size());
  return bytes;
}

void CL_CALLBACK keep_printf_output(const char* text, size_t length, void* user_data) {
  static_cast<PrintfOutput*>(user_data)->append(text, length);
}

void CL_CALLBACK drop_printf_output(cl_event, cl_int, void* user_data) {
  delete static_cast<std::shared_ptr<PrintfOutput>*>(user_data);
}

// The queue's kernels may still print after its release: their output's keeper lives until
// what the queue was given has run.
void keep_until_done(cl_command_queue queue, std::shared_ptr<PrintfOutput> output) {
  if (!output) return;
  cl_event marker = nullptr;
  auto keeper = std::make_unique<std::shared_ptr<PrintfOutput>>(std::move(output));
  if (clEnqueueMarkerWithWaitList(queue, 0, nullptr, &marker) == CL_SUCCESS &&
      clSetEventCallback(marker, CL_COMPLETE, drop_printf_output, keeper.get()) == CL_SUCCESS)
    keeper.release();
  else
    clFinish(queue);
  if (marker) clReleaseEvent(marker);
}

}  // namespace

void Session::handle(IncomingMessage& m) {
  const Kind kind = Kind(m.kind);
  if (!welcomed_) {
    if (kind != Kind::Hello) return connection_->close();
    if (auto h = header_of<Hello>(m)) return hello(*h);
    return connection_->close();
  }
  switch (kind) {
    case Kind::CreateQueue:
      if (auto c = header_of<CreateQueue>(m); c && c->device < platform_.devices().size()) {
        cl_int status = CL_SUCCESS;
        Queue q;
        q.profiling = c->profiling != 0;
        q.printf_output = std::make_shared<PrintfOutput>();
        cl_queue_properties properties[] = {
            CL_QUEUE_PROPERTIES,
            c->profiling ? CL_QUEUE_PROFILING_ENABLE : 0u,
            CL_QUEUE_PRINTF_CALLBACK_MFLD,
            reinterpret_cast<cl_queue_properties>(&keep_printf_output),
            CL_QUEUE_PRINTF_USER_DATA_MFLD,
            reinterpret_cast<cl_queue_properties>(q.printf_output.get()),
            0};
        cl_device_id device = platform_.devices()[c->device];
        q.queue =
            clCreateCommandQueueWithProperties(platform_.context(), device, properties, &status);
        if (!q.queue && status == CL_INVALID_QUEUE_PROPERTIES) {
          // A GPU's driver prints its kernels' output here itself.
          q.printf_output.reset();
          properties[2] = 0;
          q.queue =
              clCreateCommandQueueWithProperties(platform_.context(), device, properties, &status);
        }
        if (!q.queue) {
          q.job.status = status;
          q.job.message = "the server could not make the queue";
        }
        queues_[c->queue] = std::move(q);
      }
      return;
    case Kind::ReleaseQueue:
      if (auto r = header_of<ReleaseQueue>(m))
        if (auto it = queues_.find(r->queue); it != queues_.end()) {
          if (it->second.queue) {
            keep_until_done(it->second.queue, std::move(it->second.printf_output));
            clReleaseCommandQueue(it->second.queue);
          }
          queues_.erase(it);
        }
      return;
    case Kind::CreateBuffer:
      if (auto c = header_of<CreateBuffer>(m)) {
        cl_int status = CL_SUCCESS;
        cl_mem mem = clCreateBuffer(platform_.context(), CL_MEM_READ_WRITE,
                                    std::max<uint64_t>(c->size, 1), nullptr, &status);
        if (mem) buffers_[c->buffer] = mem;
        reply(c->request, mem ? CL_SUCCESS : status,
              mem ? "" : "the server could not allocate the buffer");
      }
      return;
    case Kind::ReleaseBuffer:
      if (auto r = header_of<ReleaseBuffer>(m)) {
        for (auto it = regions_.begin(); it != regions_.end();)
          if (std::get<0>(it->first) == r->buffer) {
            clReleaseMemObject(it->second);
            it = regions_.erase(it);
          } else {
            ++it;
          }
        if (auto it = buffers_.find(r->buffer); it != buffers_.end()) {
          clReleaseMemObject(it->second);
          buffers_.erase(it);
        }
      }
      return;
    case Kind::LoadProgram:
      if (auto l = header_of<LoadProgram>(m)) {
        if (l->device >= platform_.devices().size())
          return reply(l->request, CL_INVALID_DEVICE, "no such device on the server");
        cl_int status = CL_SUCCESS;
        std::string log;
        cl_program p = platform_.load_program(l->device, m.payload, l->options, l->shareable != 0,
                                              &status, &log);
        if (!p) return reply(l->request, status, log);
        programs_[l->program] = p;
        connection_->send(message(Kind::Reply, Reply{l->request, CL_SUCCESS, ""},
                                  Payload::own(encode(platform_.kernels_of(p, l->device)))));
      }
      return;
    case Kind::ReleaseProgram:
      if (auto r = header_of<ReleaseProgram>(m)) {
        for (auto it = kernels_.begin(); it != kernels_.end();)
          if (it->first.first == r->program) {
            clReleaseKernel(it->second);
            it = kernels_.erase(it);
          } else {
            ++it;
          }
        if (auto it = programs_.find(r->program); it != programs_.end()) {
          clReleaseProgram(it->second);
          programs_.erase(it);
        }
      }
      return;
    case Kind::Write:
      if (auto w = header_of<Write>(m))
        if (Queue* q = queue(w->queue); q && q->job.status == CL_COMPLETE) {
          cl_mem mem = buffer(w->to.buffer);
          auto bytes = bytes_of(m, take_placed(w->tag));
          if (!mem || !bytes || bytes->size() != w->size)
            return enqueued(*q, CL_INVALID_MEM_OBJECT, nullptr, "a write");
          cl_event e = nullptr;
          const cl_int status = clEnqueueWriteBuffer(q->queue, mem, CL_FALSE, w->to.offset, w->size,
                                                     bytes->data(), 0, nullptr, &e);
          q->job.keep.push_back(bytes);
          enqueued(*q, status, e, "clEnqueueWriteBuffer");
        }
      return;
    case Kind::WriteRect:
      if (auto w = header_of<WriteRect>(m))
        if (Queue* q = queue(w->queue); q && q->job.status == CL_COMPLETE) {
          const RectOfBuffer& r = w->to;
          cl_mem mem = buffer(r.at.buffer);
          auto bytes = bytes_of(m, take_placed(w->tag));
          if (!mem || !bytes || bytes->size() != r.region[0] * r.region[1] * r.region[2])
            return enqueued(*q, CL_INVALID_MEM_OBJECT, nullptr, "a rectangle's write");
          const auto origin = origin_of(r.at.offset, r.row_pitch, r.slice_pitch);
          const size_t host_origin[3] = {0, 0, 0};
          const size_t region[3] = {r.region[0], r.region[1], r.region[2]};
          cl_event e = nullptr;
          const cl_int status = clEnqueueWriteBufferRect(
              q->queue, mem, CL_FALSE, origin.data(), host_origin, region, r.row_pitch,
              r.slice_pitch, r.region[0], r.region[0] * r.region[1], bytes->data(), 0, nullptr, &e);
          q->job.keep.push_back(bytes);
          enqueued(*q, status, e, "clEnqueueWriteBufferRect");
        }
      return;
    case Kind::Read:
      if (auto r = header_of<Read>(m))
        if (Queue* q = queue(r->queue); q && q->job.status == CL_COMPLETE) {
          cl_mem mem = buffer(r->from.buffer);
          if (!mem) return enqueued(*q, CL_INVALID_MEM_OBJECT, nullptr, "a read");
          auto bytes = StagingPool::get(r->size);
          cl_event e = nullptr;
          const cl_int status = clEnqueueReadBuffer(q->queue, mem, CL_FALSE, r->from.offset,
                                                    r->size, bytes->data(), 0, nullptr, &e);
          if (status == CL_SUCCESS) {
            clRetainEvent(e);
            q->job.reads.push_back({r->tag, bytes, e});
          }
          enqueued(*q, status, e, "clEnqueueReadBuffer");
        }
      return;
    case Kind::ReadRect:
      if (auto rr = header_of<ReadRect>(m))
        if (Queue* q = queue(rr->queue); q && q->job.status == CL_COMPLETE) {
          const RectOfBuffer& r = rr->from;
          cl_mem mem = buffer(r.at.buffer);
          if (!mem) return enqueued(*q, CL_INVALID_MEM_OBJECT, nullptr, "a rectangle's read");
          auto bytes = StagingPool::get(r.region[0] * r.region[1] * r.region[2]);
          const auto origin = origin_of(r.at.offset, r.row_pitch, r.slice_pitch);
          const size_t host_origin[3] = {0, 0, 0};
          const size_t region[3] = {r.region[0], r.region[1], r.region[2]};
          cl_event e = nullptr;
          const cl_int status = clEnqueueReadBufferRect(
              q->queue, mem, CL_FALSE, origin.data(), host_origin, region, r.row_pitch,
              r.slice_pitch, r.region[0], r.region[0] * r.region[1], bytes->data(), 0, nullptr, &e);
          if (status == CL_SUCCESS) {
            clRetainEvent(e);
            q->job.reads.push_back({rr->tag, bytes, e});
          }
          enqueued(*q, status, e, "clEnqueueReadBufferRect");
        }
      return;
    case Kind::Copy:
      if (auto c = header_of<Copy>(m))
        if (Queue* q = queue(c->queue); q && q->job.status == CL_COMPLETE) {
          cl_mem src = buffer(c->from.buffer), dst = buffer(c->to.buffer);
          if (!src || !dst) return enqueued(*q, CL_INVALID_MEM_OBJECT, nullptr, "a copy");
          cl_event e = nullptr;
          const cl_int status = clEnqueueCopyBuffer(q->queue, src, dst, c->from.offset,
                                                    c->to.offset, c->size, 0, nullptr, &e);
          enqueued(*q, status, e, "clEnqueueCopyBuffer");
        }
      return;
    case Kind::CopyRect:
      if (auto c = header_of<CopyRect>(m))
        if (Queue* q = queue(c->queue); q && q->job.status == CL_COMPLETE) {
          const RectOfBuffer& r = c->from;
          cl_mem src = buffer(r.at.buffer), dst = buffer(c->to.buffer);
          if (!src || !dst) return enqueued(*q, CL_INVALID_MEM_OBJECT, nullptr, "a rect copy");
          const auto src_origin = origin_of(r.at.offset, r.row_pitch, r.slice_pitch);
          const auto dst_origin = origin_of(c->to.offset, c->to_row_pitch, c->to_slice_pitch);
          const size_t region[3] = {r.region[0], r.region[1], r.region[2]};
          cl_event e = nullptr;
          const cl_int status = clEnqueueCopyBufferRect(
              q->queue, src, dst, src_origin.data(), dst_origin.data(), region, r.row_pitch,
              r.slice_pitch, c->to_row_pitch, c->to_slice_pitch, 0, nullptr, &e);
          enqueued(*q, status, e, "clEnqueueCopyBufferRect");
        }
      return;
    case Kind::Fill:
      if (auto f = header_of<Fill>(m))
        if (Queue* q = queue(f->queue); q && q->job.status == CL_COMPLETE) {
          cl_mem mem = buffer(f->to.buffer);
          if (!mem) return enqueued(*q, CL_INVALID_MEM_OBJECT, nullptr, "a fill");
          cl_event e = nullptr;
          const cl_int status =
              clEnqueueFillBuffer(q->queue, mem, f->pattern.data(), f->pattern.size(), f->to.offset,
                                  f->size, 0, nullptr, &e);
          enqueued(*q, status, e, "clEnqueueFillBuffer");
        }
      return;
    case Kind::Launch:
      if (auto l = header_of<Launch>(m)) {
        auto args = decode<LaunchArgs>(m.payload);
        if (Queue* q = queue(l->queue); q && !args)
          return enqueued(*q, CL_INVALID_VALUE, nullptr, "a launch's arguments");
        if (args) launch(*l, *args);
      }
      return;
    case Kind::EndJob:
      if (auto e = header_of<EndJob>(m)) {
        if (Queue* q = queue(e->queue); q && q->queue) return end_job(*q, e->job, e->queue);
        Done done;
        done.queue = e->queue, done.job = e->job, done.status = CL_INVALID_COMMAND_QUEUE;
        done.message = "no such queue on the server";
        if (Queue* q = queue(e->queue)) done.status = q->job.status, done.message = q->job.message;
        connection_->send(message(Kind::Done, done));
      }
      return;
    case Kind::ReadBuffer:
      if (auto r = header_of<ReadBuffer>(m)) read_buffer(*r);
      return;
    case Kind::Receive:
      if (auto r = header_of<Receive>(m)) receive(*r);
      return;
    case Kind::SendTo:
      if (auto t = header_of<SendTo>(m)) send_to(*t);
      return;
    case Kind::PeerData:
      if (auto p = header_of<PeerData>(m)) {
        const size_t size = m.placed ? m.payload_size : m.payload.size();
        if (!m.placed) {
          void* to = Tickets::get().destination(p->ticket, p->offset, size);
          if (!to) return;
          std::memcpy(to, m.payload.data(), size);
        }
        Tickets::get().landed(p->ticket, p->offset, size);
      }
      return;
    case Kind::Clock:
      if (auto c = header_of<Clock>(m)) {
        c->server_ns = uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                    std::chrono::steady_clock::now().time_since_epoch())
                                    .count());
        connection_->send(message(Kind::Clock, *c));
      }
      return;
    case Kind::Cancel:
      if (auto c = header_of<Cancel>(m)) Tickets::get().cancel(c->ticket);
      return;
    default:
      return;  // a kind this server does not know: nothing to do
  }
}

// The client is gone: what it expected from other servers will not come, its commands finish,
// then everything it made is released.
void Session::end() {
  Tickets::get().cancel_all_of(this);
  for (auto& [id, q] : queues_)
    if (q.queue) clFinish(q.queue);
  for (auto& [id, q] : queues_) {
    for (cl_event e : q.job.events) clReleaseEvent(e);
    for (Job::PendingRead& r : q.job.reads) clReleaseEvent(r.event);
    if (q.queue) clReleaseCommandQueue(q.queue);
  }
  if (service_queue_) clReleaseCommandQueue(service_queue_);
  for (auto& [key, k] : kernels_) clReleaseKernel(k);
  for (auto& [key, mem] : regions_) clReleaseMemObject(mem);
  for (auto& [id, mem] : buffers_) clReleaseMemObject(mem);
  for (auto& [id, p] : programs_) clReleaseProgram(p);
  queues_.clear(), kernels_.clear(), regions_.clear(), buffers_.clear(), programs_.clear();
  service_queue_ = nullptr;
  connection_->close();
}

}  // namespace manifold::server
