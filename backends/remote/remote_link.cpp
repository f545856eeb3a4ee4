#include "backends/remote/remote_link.h"

#include <algorithm>
#include <cstring>

#include "compiler/binary_format.h"
#include "core/platform.h"

namespace manifold::remote {

namespace {
constexpr const char* kNotAvailable = "the server is not reachable";
}

std::shared_ptr<ServerLink> ServerLink::connect(std::shared_ptr<Transport> transport,
                                                const RemoteEndpoint& endpoint,
                                                const std::string& token,
                                                std::chrono::milliseconds timeout,
                                                std::string* error) {
  std::shared_ptr<ServerLink> link = handle_of(std::shared_ptr<ServerLink>(new ServerLink));
  link->transport_ = std::move(transport);
  link->timeout_ = timeout;
  link->endpoint_ = endpoint;
  link->token_ = token;
  link->name_ = endpoint.host.find(':') == std::string::npos
                    ? endpoint.host + ":" + std::to_string(endpoint.port)
                    : "[" + endpoint.host + "]:" + std::to_string(endpoint.port);
  link->connection_ =
      link->transport_->connect(endpoint.host, endpoint.port, link->handlers(), timeout, error);
  if (!link->connection_) return nullptr;
  link->dispatcher_ = std::thread([raw = link.get()] { raw->dispatch(); });

  Hello hello;
  hello.producer = compiler::producer_id();
  hello.token = token;
  hello.client_time_ns = host_time_ns();
  link->send(message(Kind::Hello, hello));
  std::unique_lock lock(link->mutex_);
  const bool answered = link->changed_.wait_for(
      lock, timeout, [&] { return link->welcome_.has_value() || link->failed_; });
  if (!answered || !link->welcome_) {
    *error = !answered
                 ? "the server did not answer within " + std::to_string(timeout.count()) + " ms"
                 : "the server closed the connection: " + link->failure_;
    lock.unlock();
    link->connection_->close();
    return nullptr;
  }
  const Welcome& w = *link->welcome_;
  if (!w.accepted) {
    *error = "the server refused the connection: " + w.message;
    lock.unlock();
    link->connection_->close();
    return nullptr;
  }
  // The clocks' offset from the quickest of a few round trips (NTP's way): its midpoint is
  // closest to when the server read its clock.
  const uint64_t answered_at = host_time_ns();
  link->clock_offset_ns_ = int64_t(w.server_time_ns) -
                           int64_t(hello.client_time_ns + (answered_at - hello.client_time_ns) / 2);
  uint64_t best_rtt = answered_at - hello.client_time_ns;
  constexpr size_t kClockProbes = 8;
  for (size_t i = 0; i < kClockProbes && !link->failed_; ++i) {
    lock.unlock();
    link->send(message(Kind::Clock, Clock{host_time_ns(), 0}));
    lock.lock();
    link->changed_.wait_for(lock, timeout,
                            [&] { return link->clock_samples_.size() > i || link->failed_; });
  }
  for (const ClockSample& c : link->clock_samples_)
    if (c.arrived - c.sent < best_rtt) {
      best_rtt = c.arrived - c.sent;
      link->clock_offset_ns_ = int64_t(c.server) - int64_t(c.sent + (c.arrived - c.sent) / 2);
    }
  for (const std::string& bytes : link->welcome_devices_) {
    std::string why;
    auto d = decode_device_description(
        std::span(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()), &why);
    if (!d) {
      *error = "a device of the server: " + why;
      lock.unlock();
      link->connection_->close();
      return nullptr;
    }
    if (d->producer != compiler::producer_id()) {
      *error = "the server runs another Manifold build (its compiler " + d->producer +
               ", this one " + compiler::producer_id() + "): programs built here would not load";
      lock.unlock();
      link->connection_->close();
      return nullptr;
    }
    link->devices_.push_back(std::move(*d));
  }
  return link;
}

std::shared_ptr<ServerLink> ServerLink::handle_of(std::shared_ptr<ServerLink> link) {
  ServerLink* raw = link.get();
  return std::shared_ptr<ServerLink>(raw, [link = std::move(link)](ServerLink*) mutable {
    link->close_and_wait_for_handlers();
    link.reset();
  });
}

void ServerLink::close_and_wait_for_handlers() {
  if (!connection_) return;  // never connected: no handler was ever called
  connection_->close();
  std::unique_lock lock(handlers_end_->mutex);
  // on_closed is owed once close() was called; a transport that stalls must not hang the
  // release, so the wait is bounded (the link then goes wherever its last reference ends).
  const auto bound = std::max(timeout_, std::chrono::milliseconds(1000));
  handlers_end_->ended.wait_for(lock, bound, [&] { return handlers_end_->done; });
}

ServerLink::~ServerLink() {
  if (connection_) connection_->close();
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    changed_.notify_all();
  }
  if (dispatcher_.joinable()) dispatcher_.join();
}

Handlers ServerLink::handlers() {
  Handlers h;
  // Weak: a link that failed to connect goes while its connection still reports its end.
  std::weak_ptr<ServerLink> weak = weak_from_this();
  h.on_message = [weak](IncomingMessage&& m) {
    if (auto link = weak.lock()) link->received(std::move(m));
  };
  h.place_payload = [weak](uint16_t kind, std::span<const std::byte> header, size_t size) -> void* {
    auto link = weak.lock();
    if (!link || Kind(kind) != Kind::Data) return nullptr;
    auto d = decode<Data>(header);
    if (!d) return nullptr;
    std::lock_guard lock(link->mutex_);
    auto it = link->expected_.find(d->tag);
    return it != link->expected_.end() && it->second.size == size ? it->second.destination
                                                                  : nullptr;
  };
  h.on_closed = [weak, end = handlers_end_](const std::string& why) {
    if (auto link = weak.lock()) link->closed(why);
    // No handler runs after this one, and it holds the link no more.
    std::lock_guard lock(end->mutex);
    end->done = true;
    end->ended.notify_all();
  };
  return h;
}

bool ServerLink::alive() const {
  std::lock_guard lock(mutex_);
  return !failed_;
}

std::string ServerLink::failure() const {
  std::lock_guard lock(mutex_);
  return failure_;
}

uint64_t ServerLink::next_id() {
  std::lock_guard lock(mutex_);
  return next_id_++;
}

bool ServerLink::send(OutgoingMessage m) { return connection_->send(std::move(m)); }

Reply ServerLink::request(uint64_t request, OutgoingMessage m, std::vector<std::byte>* payload) {
  {
    std::lock_guard lock(mutex_);
    if (failed_) return Reply{request, CL_DEVICE_NOT_AVAILABLE, kNotAvailable + (": " + failure_)};
    replies_[request];
  }
  send(std::move(m));
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return replies_[request].has_value() || failed_; });
  std::optional<Reply> reply = std::move(replies_[request]);
  replies_.erase(request);
  if (auto it = reply_payloads_.find(request); it != reply_payloads_.end()) {
    if (payload) *payload = std::move(it->second);
    reply_payloads_.erase(it);
  }
  if (!reply) return Reply{request, CL_DEVICE_NOT_AVAILABLE, kNotAvailable + (": " + failure_)};
  return *reply;
}

cl_int ServerLink::read_buffer(const Span& from, size_t size, void* host, std::string* why) {
  // In pieces, all asked for at once: the server reads the next while the last is on the wire.
  std::vector<uint64_t> requests;
  for (size_t done = 0; done < size; done += kTransferPiece) {
    const size_t piece = std::min(size - done, kTransferPiece);
    const uint64_t request = next_id();
    expect_data(request, static_cast<std::byte*>(host) + done, piece);
    {
      std::lock_guard lock(mutex_);
      replies_[request];
    }
    requests.push_back(request);
    if (!send(message(Kind::ReadBuffer,
                      ReadBuffer{request, Span{from.buffer, from.offset + done}, piece})))
      break;
  }
  std::unique_lock lock(mutex_);
  cl_int status = CL_SUCCESS;
  for (uint64_t request : requests) {
    changed_.wait(lock, [&] {
      return expected_.at(request).arrived || replies_[request].has_value() || failed_;
    });
    if (status == CL_SUCCESS && !expected_.at(request).arrived) {
      std::optional<Reply>& reply = replies_[request];
      status = reply ? reply->status : CL_DEVICE_NOT_AVAILABLE;
      *why = reply ? reply->message : kNotAvailable + (": " + failure_);
    }
  }
  for (uint64_t request : requests) expected_.erase(request), replies_.erase(request);
  return status;
}

void ServerLink::expect_data(uint64_t tag, void* destination, size_t size) {
  std::lock_guard lock(mutex_);
  expected_[tag] = Expected{destination, size};
}

void ServerLink::forget_data(uint64_t tag) {
  std::lock_guard lock(mutex_);
  expected_.erase(tag);
}

void ServerLink::attach(uint32_t queue, std::shared_ptr<QueueSink> sink) {
  std::lock_guard lock(mutex_);
  sinks_[queue] = std::move(sink);
}

void ServerLink::detach(uint32_t queue) {
  std::lock_guard lock(mutex_);
  sinks_.erase(queue);
}

void ServerLink::received(IncomingMessage&& m) {
  std::lock_guard lock(mutex_);
  switch (Kind(m.kind)) {
    case Kind::Welcome:
      if (auto w = decode<Welcome>(m.header)) {
        auto devices = decode_strings(m.payload);
        if (devices) welcome_devices_ = std::move(*devices);
        if (devices || !w->accepted) welcome_ = std::move(*w);
      }
      break;
    case Kind::Reply:
      if (auto r = decode<Reply>(m.header))
        if (auto it = replies_.find(r->request); it != replies_.end()) {
          if (!m.payload.empty()) reply_payloads_[r->request] = std::move(m.payload);
          it->second = std::move(*r);
        }
      break;
    case Kind::Data:
      if (auto d = decode<Data>(m.header))
        if (auto it = expected_.find(d->tag); it != expected_.end()) {
          // Bytes the transport could not place (a size that differs) are copied, as far as
          // they fit; the read's job then fails on its size check.
          if (!m.placed)
            std::memcpy(it->second.destination, m.payload.data(),
                        std::min(it->second.size, m.payload.size()));
          it->second.arrived = m.placed || m.payload.size() == it->second.size;
        }
      break;
    case Kind::Clock:
      if (auto c = decode<Clock>(m.header))
        clock_samples_.push_back({c->client_ns, c->server_ns, host_time_ns()});
      break;
    case Kind::Done:
      if (auto d = decode<Done>(m.header)) {
        d->printf_output.assign(reinterpret_cast<const char*>(m.payload.data()), m.payload.size());
        dones_.push_back(std::move(*d));
      }
      break;
    default:
      break;
  }
  changed_.notify_all();
}

void ServerLink::closed(const std::string& why) {
  std::lock_guard lock(mutex_);
  failed_ = true;
  failure_ = why;
  changed_.notify_all();
}

void ServerLink::dispatch() {
  bool failure_told = false;
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stopping_ || !dones_.empty() || (failed_ && !failure_told); });
    if (!dones_.empty()) {
      Done d = std::move(dones_.front());
      dones_.pop_front();
      auto it = sinks_.find(d.queue);
      std::shared_ptr<QueueSink> sink = it == sinks_.end() ? nullptr : it->second;
      lock.unlock();
      if (sink) sink->done(d);
      lock.lock();
      continue;
    }
    if (failed_ && !failure_told) {
      failure_told = true;
      std::vector<std::shared_ptr<QueueSink>> sinks;
      for (auto& [id, sink] : sinks_) sinks.push_back(sink);
      const std::string why = failure_;
      lock.unlock();
      for (auto& sink : sinks) sink->link_failed(why);
      lock.lock();
      continue;
    }
    if (stopping_) return;
  }
}

}  // namespace manifold::remote
