// Messages between a client's remote backend and manifold-server, over UCX (active messages:
// shared memory, TCP or RDMA underneath, whichever UCX finds; large payloads go by rendezvous,
// zero copy). The transport knows nothing of OpenCL: a message is a kind, a small header and a
// payload of bulk bytes. One Transport owns a UCX worker and the one thread that drives it; every
// UCX call happens on that thread, so the rest of Manifold never holds a UCX lock.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace manifold::remote {

// Bulk bytes a message carries. Either owned (`owned`), or lent (`data`/`size`): lent bytes are
// not copied and must stay valid until `sent` has been called; `keep` may hold what owns them.
struct Payload {
  std::vector<std::byte> owned;
  const void* data = nullptr;
  size_t size = 0;
  std::shared_ptr<const void> keep;

  static Payload copy_of(const void* bytes, size_t count);
  static Payload lend(const void* bytes, size_t count, std::shared_ptr<const void> keeper = {});
  static Payload own(std::vector<std::byte> bytes);
  std::span<const std::byte> bytes() const;
};

struct OutgoingMessage {
  uint16_t kind = 0;
  std::vector<std::byte> header;  // at most kMaxHeaderBytes
  Payload payload;
  // Called once, on the transport's thread, when the payload's bytes may be reused: true when
  // UCX sent them, false when the connection closed first. May be empty.
  std::function<void(bool sent)> sent;
};

constexpr size_t kMaxHeaderBytes = 4096;

struct IncomingMessage {
  uint16_t kind = 0;
  std::vector<std::byte> header;
  // The payload: in `payload`, or, where Handlers::place_payload gave a destination, already
  // written there (then `payload` is empty and `placed` is true).
  std::vector<std::byte> payload;
  size_t payload_size = 0;
  bool placed = false;
};

class Connection;

// What a connection does with what arrives. Both are called on the transport's thread, must not
// block, and are never called again after on_closed.
struct Handlers {
  // Messages in the order the peer sent them (a rendezvous payload that lands late holds back the
  // messages sent after it).
  std::function<void(IncomingMessage&&)> on_message;
  // Optional: where a message's payload of `size` bytes should land, chosen from its kind and
  // header (a read's destination in host memory); null: the transport allocates `payload`.
  // The destination must stay valid until on_message (or on_closed) is called.
  std::function<void*(uint16_t kind, std::span<const std::byte> header, size_t size)> place_payload;
  // Once, when the connection ends: the peer closed it or died, the network failed, or close()
  // was called. `why` says which, for logs and error messages.
  std::function<void(const std::string& why)> on_closed;
};

// One connection to a peer. Thread: any.
class Connection {
 public:
  virtual ~Connection() = default;
  // Queues `message` for sending after every message queued before it on this connection.
  // False (and `sent(false)` called) when the connection is closed.
  virtual bool send(OutgoingMessage message) = 0;
  virtual bool is_open() const = 0;
  // Ends the connection: messages queued so far are still sent (flushed) where the peer is
  // alive; then on_closed("closed") is called. Idempotent.
  virtual void close() = 0;
  // "host:port" of the peer, for logs.
  virtual std::string peer() const = 0;
};

// A UCX context, worker and progress thread, with any number of connections.
class Transport {
 public:
  // Closes every connection (a bounded flush), then stops the thread. Thread: any but the
  // transport's, which it joins.
  virtual ~Transport() = default;

  // nullptr, with the reason in *error, when UCX cannot be initialized; `ucp_library` is the
  // UCP library to load (dlopen), so that a machine without UCX just has no transport.
  static std::unique_ptr<Transport> create(const std::string& ucp_library = "libucp.so.0",
                                           std::string* error = nullptr);

  // Connects to a listener at `host:port`: returns once the peer's transport has accepted the
  // connection (a handshake of the transport's own), or nullptr with the reason in *error when
  // the peer is unreachable, refuses, or does not answer within `timeout`.
  // Thread: any but the transport's.
  virtual std::shared_ptr<Connection> connect(const std::string& host, uint16_t port,
                                              Handlers handlers, std::chrono::milliseconds timeout,
                                              std::string* error) = 0;

  // Accepts connections on `address:port` (port 0: one the system picks; listening_port()
  // tells which). `accept` is called on the transport's thread for each new connection and
  // returns its handlers. False with the reason in *error when the address cannot be listened
  // on. Once per transport.
  using AcceptHandler = std::function<Handlers(std::shared_ptr<Connection>)>;
  virtual bool listen(const std::string& address, uint16_t port, AcceptHandler accept,
                      std::string* error) = 0;
  virtual uint16_t listening_port() const = 0;
};

}  // namespace manifold::remote
