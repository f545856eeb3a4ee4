#include "server/peers.h"

#include <condition_variable>
#include <vector>

#include "backends/remote/protocol.h"

namespace manifold::server {

using namespace manifold::remote;

Tickets& Tickets::get() {
  static Tickets* tickets = new Tickets;  // event callbacks may outlive main's objects
  return *tickets;
}

void Tickets::add(uint64_t ticket, Ticket t) {
  std::lock_guard lock(mutex_);
  tickets_[ticket] = std::move(t);
}

void* Tickets::destination(uint64_t ticket, uint64_t offset, size_t size) {
  std::lock_guard lock(mutex_);
  auto it = tickets_.find(ticket);
  if (it == tickets_.end() || offset > it->second.bytes->size() ||
      size > it->second.bytes->size() - offset)
    return nullptr;
  return it->second.bytes->data() + offset;
}

namespace {
// Outside the lock: the event's status lets the server's commands go, whose callbacks may come
// back here.
void fire(cl_event arrived, cl_int status) {
  clSetUserEventStatus(arrived, status);
  clReleaseEvent(arrived);
}
}  // namespace

void Tickets::landed(uint64_t ticket, uint64_t offset, size_t size) {
  cl_event done = nullptr;
  {
    std::lock_guard lock(mutex_);
    auto it = tickets_.find(ticket);
    if (it == tickets_.end() || offset + size > it->second.bytes->size()) return;
    it->second.received += size;
    if (it->second.received < it->second.bytes->size()) return;
    done = it->second.arrived;
    tickets_.erase(it);
  }
  fire(done, CL_COMPLETE);
}

void Tickets::cancel(uint64_t ticket) {
  cl_event failed = nullptr;
  {
    std::lock_guard lock(mutex_);
    auto it = tickets_.find(ticket);
    if (it == tickets_.end()) return;
    failed = it->second.arrived;
    tickets_.erase(it);
  }
  fire(failed, CL_DEVICE_NOT_AVAILABLE);
}

void Tickets::cancel_all_of(const void* owner) {
  std::vector<cl_event> failed;
  {
    std::lock_guard lock(mutex_);
    for (auto it = tickets_.begin(); it != tickets_.end();) {
      if (it->second.owner == owner) {
        failed.push_back(it->second.arrived);
        it = tickets_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (cl_event e : failed) fire(e, CL_DEVICE_NOT_AVAILABLE);
}

std::shared_ptr<Connection> PeerLinks::get(const std::string& host, uint16_t port,
                                           const std::string& token, std::string* why) {
  const std::string key = host + ":" + std::to_string(port);
  std::lock_guard lock(mutex_);
  if (auto it = links_.find(key); it != links_.end() && it->second->is_open()) return it->second;
  struct Answer {
    std::mutex mutex;
    std::condition_variable changed;
    bool answered = false, accepted = false;
    std::string message;
  };
  auto answer = std::make_shared<Answer>();
  Handlers h;
  h.on_message = [answer](IncomingMessage&& m) {
    if (Kind(m.kind) != Kind::Welcome) return;
    auto w = decode<Welcome>(m.header);
    std::lock_guard lock(answer->mutex);
    answer->answered = true;
    answer->accepted = w && w->accepted;
    answer->message = w ? w->message : "a malformed answer";
    answer->changed.notify_all();
  };
  h.on_closed = [answer](const std::string& reason) {
    std::lock_guard lock(answer->mutex);
    if (!answer->answered) answer->message = reason;
    answer->answered = true;
    answer->changed.notify_all();
  };
  const auto timeout = std::chrono::seconds(10);
  auto connection = transport_.connect(host, port, h, timeout, why);
  if (!connection) return nullptr;
  Hello hello;
  hello.token = token;
  connection->send(message(Kind::Hello, hello));
  std::unique_lock wait(answer->mutex);
  answer->changed.wait_for(wait, timeout, [&] { return answer->answered; });
  if (!answer->accepted) {
    *why = "the server " + key +
           " did not accept this one: " + (answer->answered ? answer->message : "no answer");
    connection->close();
    return nullptr;
  }
  links_[key] = connection;
  return connection;
}

}  // namespace manifold::server
