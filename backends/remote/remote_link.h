// A client's connection to one manifold-server: the handshake and the server's devices, requests
// that wait for their answer (buffers, programs, reads outside queues), and the routing of what
// comes back: a read's bytes straight into their destination (on the transport's thread), a
// job's end to its queue (on the link's own thread, so that whatever finishing a job sets off,
// callbacks included, never holds up the transport). When the connection fails, every waiting
// request and every queue learns it once.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "backends/remote/protocol.h"
#include "backends/remote/transport.h"
#include "core/device_description.h"
#include "settings/settings.h"

namespace manifold::remote {

// What a remote queue hears from its link. Thread: the link's dispatcher.
class QueueSink {
 public:
  virtual ~QueueSink() = default;
  virtual void done(const Done& done) = 0;
  // The connection failed: no Done will come for what is in flight.
  virtual void link_failed(const std::string& why) = 0;
};

class ServerLink : public std::enable_shared_from_this<ServerLink> {
 public:
  // Connects and presents `token`; nullptr with the reason in *error when the server cannot be
  // reached, refuses, or speaks another protocol or compiler.
  static std::shared_ptr<ServerLink> connect(std::shared_ptr<Transport> transport,
                                             const RemoteEndpoint& endpoint,
                                             const std::string& token,
                                             std::chrono::milliseconds timeout, std::string* error);
  ~ServerLink();

  const std::string& name() const { return name_; }  // "host:port"
  const RemoteEndpoint& endpoint() const { return endpoint_; }
  // The token this client presents (servers present it to each other on its behalf).
  const std::string& token() const { return token_; }
  const std::vector<DeviceDescription>& devices() const { return devices_; }
  // Server clock minus client clock, as measured during the handshake.
  int64_t clock_offset_ns() const { return clock_offset_ns_; }

  bool alive() const;
  std::string failure() const;  // why the connection ended ("" while alive)

  // A new id for a queue, buffer, program, request or read (unique on this link).
  uint64_t next_id();

  // Queues a message; false when the connection has failed (the message was not sent).
  bool send(OutgoingMessage m);

  // Sends a request (its `request` field already set to `request`) and waits for its Reply (and
  // the Reply's payload, where `payload` is given). A failed connection answers
  // CL_DEVICE_NOT_AVAILABLE with the reason.
  Reply request(uint64_t request, OutgoingMessage m, std::vector<std::byte>* payload = nullptr);
  // Reads bytes of a buffer into `host`, outside any queue; CL_SUCCESS or the error.
  cl_int read_buffer(const Span& from, size_t size, void* host, std::string* why);

  // The bytes of Data `tag` land at `destination` (`size` of them). Register before sending the
  // read that asks for them; forget once its job is done (or failed).
  void expect_data(uint64_t tag, void* destination, size_t size);
  void forget_data(uint64_t tag);

  void attach(uint32_t queue, std::shared_ptr<QueueSink> sink);
  void detach(uint32_t queue);

 private:
  ServerLink() = default;
  // The transport's thread may hold the link (through the handlers' weak reference) while the
  // last caller lets go of it; the link would then end on that thread, and with it, perhaps,
  // the transport that thread runs. So callers hold a handle whose release closes the connection
  // and waits until the handlers have let go for good (on_closed has returned its reference).
  static std::shared_ptr<ServerLink> handle_of(std::shared_ptr<ServerLink> link);
  void close_and_wait_for_handlers();
  Handlers handlers();
  void received(IncomingMessage&& m);
  void closed(const std::string& why);
  void dispatch();

  std::shared_ptr<Transport> transport_;
  std::shared_ptr<Connection> connection_;
  std::chrono::milliseconds timeout_{0};
  struct HandlersEnd {
    std::mutex mutex;
    std::condition_variable ended;
    bool done = false;
  };
  // Shared with the handlers directly, so that signalling it takes no reference to the link.
  std::shared_ptr<HandlersEnd> handlers_end_ = std::make_shared<HandlersEnd>();
  std::string name_;
  RemoteEndpoint endpoint_;
  std::string token_;
  std::vector<DeviceDescription> devices_;
  int64_t clock_offset_ns_ = 0;

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::string failure_;
  bool failed_ = false;
  std::optional<Welcome> welcome_;
  std::vector<std::string> welcome_devices_;
  std::map<uint64_t, std::optional<Reply>> replies_;  // requests waiting for an answer
  std::map<uint64_t, std::vector<std::byte>> reply_payloads_;
  struct Expected {
    void* destination;
    size_t size;
    bool arrived = false;
  };
  std::map<uint64_t, Expected> expected_;
  std::map<uint32_t, std::shared_ptr<QueueSink>> sinks_;
  std::deque<Done> dones_;  // for the dispatcher
  struct ClockSample {
    uint64_t sent, server, arrived;
  };
  std::vector<ClockSample> clock_samples_;
  bool stopping_ = false;
  uint64_t next_id_ = 1;
  std::thread dispatcher_;
};

}  // namespace manifold::remote
