// The UCX transport's internals (transport.h is the contract): one context, one worker and one
// progress thread per transport. Every UCX call and every piece of state marked "the transport's
// thread" below belongs to that thread; other threads only post tasks (Shared::post).
#pragma once

#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "backends/remote/transport.h"
#include "backends/remote/ucx_api.h"

namespace manifold::remote::ucx {

using Clock = std::chrono::steady_clock;

// Every active message carries this in front of the user's header. `seq` numbers the frames
// after the handshake, so that the receiver can deliver them in the order sent whatever order
// their payloads land in.
enum class Frame : uint8_t { hello = 1, hello_ack = 2, message = 3, bye = 4 };
struct WireHeader {
  uint64_t seq;
  uint16_t kind;
  uint8_t frame;
  uint8_t reserved[5];
};
static_assert(sizeof(WireHeader) == 16);
constexpr unsigned kAmId = 1;
// The handshake's payload both ways: a peer that is not a Manifold transport is turned away.
constexpr char kHelloMagic[] = "manifold-remote-transport/1";
// How long a graceful close (or a transport's destruction) waits for the peer to answer the bye.
constexpr auto kFlushTimeout = std::chrono::seconds(2);
// How long an accepted endpoint may take to say hello before it is dropped.
constexpr auto kHelloTimeout = std::chrono::seconds(10);

// What connections share with their transport, and keep after it is gone.
struct Shared {
  const Api* api = nullptr;
  std::mutex mutex;
  std::vector<std::function<void()>> tasks;
  ucp_worker_h worker = nullptr;  // signaled by post(); cleared when the thread stops
  bool accepting = false;

  // Queues `task` for the transport's thread; false once the thread stops taking work.
  bool post(std::function<void()> task);
};

class UcxTransport;
class UcxConnection;

// A send in flight: owns the bytes UCX reads until its callback.
struct SendOp {
  UcxTransport* transport;
  std::shared_ptr<UcxConnection> connection;
  std::vector<std::byte> header;  // WireHeader + the user's header
  Payload payload;
  std::function<void(bool)> sent;
  bool finished = false;         // `sent` was called
  bool closes_endpoint = false;  // a ucp_ep_close_nbx, not a send
};

// A rendezvous receive in flight, for the message numbered `seq`.
struct RecvOp {
  UcxTransport* transport;
  std::shared_ptr<UcxConnection> connection;
  uint64_t seq;
  void* request = nullptr;
  bool abandoned = false;  // the connection ended first
};

class UcxConnection final : public Connection, public std::enable_shared_from_this<UcxConnection> {
 public:
  UcxConnection(std::shared_ptr<Shared> shared, UcxTransport* transport, std::string peer)
      : shared_(std::move(shared)), transport_(transport), peer_(std::move(peer)) {}

  bool send(OutgoingMessage message) override;
  bool is_open() const override { return open_.load(); }
  void close() override;
  std::string peer() const override { return peer_; }

  // The transport's thread from here on.
  enum class State { connecting, awaiting_hello, open, closing, closed };
  State state = State::connecting;
  bool announced = false;  // connect() returned it or accept saw it: on_closed is owed
  ucp_ep_h ep = nullptr;
  Handlers handlers;
  std::string why;  // for on_closed
  uint64_t next_send_seq = 0;
  uint64_t next_deliver_seq = 0;
  struct Held {
    IncomingMessage message;
    Frame frame;
    bool ready;
  };
  std::map<uint64_t, Held> held;  // received, waiting on an earlier rendezvous
  std::unordered_set<SendOp*> sends;
  std::unordered_set<RecvOp*> recvs;
  Clock::time_point deadline = Clock::time_point::max();

  // connect()'s wait for the handshake. Thread: any, under handshake_mutex.
  enum class Handshake { waiting, done, failed, abandoned };
  std::mutex handshake_mutex;
  std::condition_variable handshake_cv;
  Handshake handshake = Handshake::waiting;
  std::string handshake_error;

  std::atomic<bool> open_{false};

 private:
  std::shared_ptr<Shared> shared_;
  UcxTransport* transport_;  // dereferenced only by tasks, which run while it lives
  const std::string peer_;
};

class UcxTransport final : public Transport {
 public:
  UcxTransport(const Api* api, ucp_context_h context);
  ~UcxTransport() override;
  // Creates the worker and starts the thread; false with the reason in *error.
  bool start(std::string* error);

  std::shared_ptr<Connection> connect(const std::string& host, uint16_t port, Handlers handlers,
                                      std::chrono::milliseconds timeout,
                                      std::string* error) override;
  bool listen(const std::string& address, uint16_t port, AcceptHandler accept,
              std::string* error) override;
  uint16_t listening_port() const override { return port_.load(); }

  // The transport's thread (ucx_connection.cpp).
  void submit(const std::shared_ptr<UcxConnection>& connection, OutgoingMessage message,
              Frame frame = Frame::message);
  void begin_close(const std::shared_ptr<UcxConnection>& connection, std::string why, bool flush);
  void finish_close(const std::shared_ptr<UcxConnection>& connection);
  void finish_send(SendOp* op, ucs_status_t status);
  void finish_recv(RecvOp* op, ucs_status_t status);
  ucs_status_t on_active_message(const void* header, size_t header_length, void* data,
                                 size_t length, const ucp_am_recv_param_t* param);
  void on_endpoint_error(ucp_ep_h ep, ucs_status_t status);
  // Runs `work` after ucp_worker_progress returns.
  void later(std::function<void()> work) { deferred_.push_back(std::move(work)); }
  const Api& api() const { return *api_; }
  ucp_worker_h worker() const { return worker_; }

 private:
  void run();
  bool run_tasks();
  void wait_for_work();
  void check_deadlines();
  void shut_down();
  void start_connect(const std::shared_ptr<UcxConnection>& connection, sockaddr_storage address,
                     socklen_t length);
  void fail_handshake(const std::shared_ptr<UcxConnection>& connection, const std::string& why);
  void accept_request(ucp_conn_request_h request);
  void on_hello(const std::shared_ptr<UcxConnection>& connection, Frame frame,
                std::span<const std::byte> payload);
  void deliver(const std::shared_ptr<UcxConnection>& connection);
  std::shared_ptr<UcxConnection> find(ucp_ep_h ep) const;
  static void conn_request_callback(ucp_conn_request_h request, void* arg);

  const Api* api_;
  ucp_context_h context_;
  ucp_worker_h worker_ = nullptr;
  int epoll_fd_ = -1;
  std::shared_ptr<Shared> shared_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<uint16_t> port_{0};
  std::atomic<bool> listen_called_{false};
  size_t max_am_header_ = 0;

  // The transport's thread.
  bool stopping_ = false;
  ucp_listener_h listener_ = nullptr;
  AcceptHandler accept_;
  std::unordered_map<ucp_ep_h, std::shared_ptr<UcxConnection>> connections_;
  std::unordered_set<SendOp*> send_ops_;
  size_t endpoint_closes_ = 0;  // those of send_ops_ that close an endpoint
  std::unordered_set<RecvOp*> recv_ops_;
  // Work that UCX's callbacks leave for after ucp_worker_progress returns (closing or creating
  // endpoints inside a callback is not allowed).
  std::vector<std::function<void()>> deferred_;
};

}  // namespace manifold::remote::ucx
