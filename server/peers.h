// What servers do for each other: bytes that one server sends straight to another for a client
// (a migration between two servers' devices, never through the client). The receiving server
// keeps a ticket per expected transfer (the staging memory the bytes land in and the user event
// its queue waits on); the sending one keeps connections to the servers it sends to, made as any
// client makes one (the token, the handshake). Thread: any.
#pragma once

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "backends/remote/transport.h"
#include "server/staging.h"

namespace manifold::server {

class Tickets {
 public:
  struct Ticket {
    std::shared_ptr<Staging> bytes;
    cl_event arrived = nullptr;  // a user event: complete once every byte is in `bytes`
    uint64_t received = 0;
    const void* owner = nullptr;  // the session of the client that asked
  };
  static Tickets& get();

  void add(uint64_t ticket, Ticket t);
  // Where the bytes at `offset` of the ticket go (null: no such ticket, or they do not fit).
  void* destination(uint64_t ticket, uint64_t offset, size_t size);
  // `size` bytes at `offset` have landed: the ticket's event completes with the last of them.
  void landed(uint64_t ticket, uint64_t offset, size_t size);
  // Fails the ticket's event (the sender gave up or the client went); no-op for an unknown one.
  void cancel(uint64_t ticket);
  void cancel_all_of(const void* owner);

 private:
  std::mutex mutex_;
  std::map<uint64_t, Ticket> tickets_;
};

// Connections of this server to others, one per "host:port", kept while they last.
class PeerLinks {
 public:
  explicit PeerLinks(remote::Transport& transport) : transport_(transport) {}
  // A connection to the server at host:port that has accepted `token`; null with *why.
  // Thread: not the transport's.
  std::shared_ptr<remote::Connection> get(const std::string& host, uint16_t port,
                                          const std::string& token, std::string* why);

 private:
  remote::Transport& transport_;
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<remote::Connection>> links_;
};

}  // namespace manifold::server
