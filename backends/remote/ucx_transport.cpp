#include "backends/remote/ucx_transport.h"

#include <netdb.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <future>

namespace manifold::remote {

std::unique_ptr<Transport> Transport::create(const std::string& ucp_library, std::string* error) {
  std::string why;
  const ucx::Api* api = ucx::load(ucp_library, &why);
  auto fail = [&](std::string reason) -> std::unique_ptr<Transport> {
    if (error) *error = std::move(reason);
    return nullptr;
  };
  if (!api) return fail(why);
  ucp_config_t* config = nullptr;
  if (ucs_status_t s = api->ucp_config_read(nullptr, nullptr, &config); s != UCS_OK)
    return fail("UCX configuration: " + api->status_string(s));
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED;
  params.features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
  params.mt_workers_shared = 0;  // the one worker lives on one thread
  ucp_context_h context = nullptr;
  ucs_status_t s = api->ucp_init_version(UCP_API_MAJOR, UCP_API_MINOR, &params, config, &context);
  api->ucp_config_release(config);
  if (s != UCS_OK) return fail("UCX initialization: " + api->status_string(s));
  auto transport = std::make_unique<ucx::UcxTransport>(api, context);
  if (!transport->start(&why)) return fail(why);
  return transport;
}

namespace ucx {

namespace {

// "host:port", with IPv6 addresses bracketed.
std::string host_port(const std::string& host, uint16_t port) {
  bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

std::string numeric_host(const sockaddr* address, socklen_t length) {
  char host[NI_MAXHOST] = "?";
  getnameinfo(address, length, host, sizeof host, nullptr, 0, NI_NUMERICHOST);
  return host;
}

ucs_status_t am_callback(void* arg, const void* header, size_t header_length, void* data,
                         size_t length, const ucp_am_recv_param_t* param) {
  return static_cast<UcxTransport*>(arg)->on_active_message(header, header_length, data, length,
                                                            param);
}

void endpoint_error_callback(void* arg, ucp_ep_h ep, ucs_status_t status) {
  static_cast<UcxTransport*>(arg)->on_endpoint_error(ep, status);
}

}  // namespace

bool Shared::post(std::function<void()> task) {
  std::lock_guard lock(mutex);
  if (!accepting) return false;
  tasks.push_back(std::move(task));
  // The thread takes the whole queue at once and checks it after arming, so only the first task
  // of a batch needs to wake it. ucp_worker_signal is safe from any thread (ucp.h).
  if (tasks.size() == 1) api->ucp_worker_signal(worker);
  return true;
}

UcxTransport::UcxTransport(const Api* api, ucp_context_h context)
    : api_(api), context_(context), shared_(std::make_shared<Shared>()) {
  shared_->api = api;
}

bool UcxTransport::start(std::string* error) {
  ucp_worker_params_t params{};
  params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  params.thread_mode = UCS_THREAD_MODE_SINGLE;
  if (ucs_status_t s = api_->ucp_worker_create(context_, &params, &worker_); s != UCS_OK) {
    *error = "UCX worker: " + api_->status_string(s);
    return false;
  }
  ucp_worker_attr_t attr{};
  attr.field_mask = UCP_WORKER_ATTR_FIELD_MAX_AM_HEADER;
  max_am_header_ = api_->ucp_worker_query(worker_, &attr) == UCS_OK ? attr.max_am_header : 0;
  if (max_am_header_ < sizeof(WireHeader) + kMaxHeaderBytes) {
    *error =
        "UCX allows active message headers of " + std::to_string(max_am_header_) + " bytes only";
    return false;
  }
  ucp_am_handler_param_t handler{};
  handler.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                       UCP_AM_HANDLER_PARAM_FIELD_ARG;
  handler.id = kAmId;
  handler.cb = am_callback;
  handler.arg = this;
  int fd = -1;
  if (ucs_status_t s = api_->ucp_worker_set_am_recv_handler(worker_, &handler); s != UCS_OK) {
    *error = "UCX active message handler: " + api_->status_string(s);
    return false;
  }
  if (ucs_status_t s = api_->ucp_worker_get_efd(worker_, &fd); s != UCS_OK) {
    *error = "UCX worker event descriptor: " + api_->status_string(s);
    return false;
  }
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  epoll_event event{};
  event.events = EPOLLIN;
  if (epoll_fd_ < 0 || epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event) != 0) {
    *error = std::string("epoll: ") + std::strerror(errno);
    return false;
  }
  {
    std::lock_guard lock(shared_->mutex);
    shared_->worker = worker_;
    shared_->accepting = true;
  }
  thread_ = std::thread([this] { run(); });
  return true;
}

UcxTransport::~UcxTransport() {
  if (thread_.joinable()) {
    stop_ = true;
    {
      std::lock_guard lock(shared_->mutex);
      if (shared_->worker) api_->ucp_worker_signal(shared_->worker);
    }
    thread_.join();
  } else if (worker_) {
    api_->ucp_worker_destroy(worker_);  // start() failed: no thread ever touched it
  }
  if (epoll_fd_ >= 0) ::close(epoll_fd_);
  api_->ucp_cleanup(context_);
}

void UcxTransport::run() {
  while (!stop_) {
    bool busy = run_tasks();
    while (api_->ucp_worker_progress(worker_) != 0) busy = true;
    if (!deferred_.empty()) {
      busy = true;
      for (auto work = std::move(deferred_); auto& w : work) w();
    }
    check_deadlines();
    if (!busy) wait_for_work();
  }
  shut_down();
}

bool UcxTransport::run_tasks() {
  std::vector<std::function<void()>> tasks;
  {
    std::lock_guard lock(shared_->mutex);
    tasks.swap(shared_->tasks);
  }
  for (auto& task : tasks) task();
  return !tasks.empty();
}

void UcxTransport::wait_for_work() {
  // A short spin first: a reply that is already on its way costs no system call.
  auto spin_until = Clock::now() + std::chrono::microseconds(20);
  while (Clock::now() < spin_until)
    if (api_->ucp_worker_progress(worker_) != 0) return;
  // A signal that came before ucp_worker_arm is consumed by it: check the queue after arming.
  if (api_->ucp_worker_arm(worker_) == UCS_ERR_BUSY) return;
  {
    std::lock_guard lock(shared_->mutex);
    if (!shared_->tasks.empty() || stop_) return;
  }
  int timeout_ms = -1;
  for (auto& [ep, connection] : connections_) {
    if (connection->deadline == Clock::time_point::max()) continue;
    auto left = std::chrono::ceil<std::chrono::milliseconds>(connection->deadline - Clock::now());
    int ms = static_cast<int>(std::max<int64_t>(0, left.count()));
    timeout_ms = timeout_ms < 0 ? ms : std::min(timeout_ms, ms);
  }
  epoll_event event;
  epoll_wait(epoll_fd_, &event, 1, timeout_ms);
}

void UcxTransport::check_deadlines() {
  auto now = Clock::now();
  std::vector<std::shared_ptr<UcxConnection>> late;
  for (auto& [ep, connection] : connections_)
    if (connection->deadline <= now) late.push_back(connection);
  for (auto& connection : late) {
    connection->deadline = Clock::time_point::max();
    if (connection->state == UcxConnection::State::closing)
      finish_close(connection);  // the peer did not answer the bye in time
    else if (connection->state == UcxConnection::State::awaiting_hello)
      begin_close(connection, "no hello", false);
  }
}

void UcxTransport::shut_down() {
  stopping_ = true;
  if (listener_) api_->ucp_listener_destroy(listener_);
  listener_ = nullptr;
  auto close_all = [&](bool flush) {
    std::vector<std::shared_ptr<UcxConnection>> all;
    for (auto& [ep, connection] : connections_) all.push_back(connection);
    for (auto& connection : all) {
      if (connection->state == UcxConnection::State::connecting)
        fail_handshake(connection, "the transport was destroyed");
      else if (!flush)
        finish_close(connection);
      else
        begin_close(connection, "closed", true);
    }
  };
  // Progress until `done` or for `limit` at most, sleeping a millisecond at a time when idle.
  auto drain = [&](auto done, Clock::duration limit) {
    for (auto deadline = Clock::now() + limit; !done() && Clock::now() < deadline;) {
      bool busy = run_tasks();
      while (api_->ucp_worker_progress(worker_) != 0) busy = true;
      for (auto work = std::move(deferred_); auto& w : work) w();
      if (!busy && api_->ucp_worker_arm(worker_) == UCS_OK) {
        epoll_event event;
        epoll_wait(epoll_fd_, &event, 1, 1);
      }
    }
  };
  run_tasks();  // sends queued before the destruction still go out
  close_all(true);
  drain([&] { return connections_.empty(); }, kFlushTimeout);
  close_all(false);
  // UCX wants every endpoint closed before its worker goes; a short wait for the forced closes.
  drain([&] { return endpoint_closes_ == 0; }, std::chrono::milliseconds(200));
  {
    std::lock_guard lock(shared_->mutex);
    shared_->accepting = false;
    shared_->worker = nullptr;
  }
  run_tasks();  // what came in meanwhile meets closed connections and fails
  deferred_.clear();
  api_->ucp_worker_destroy(worker_);
  worker_ = nullptr;
  // What UCX never completed: nobody owes these a callback any more.
  for (SendOp* op : send_ops_) {
    if (!op->finished && op->sent) op->sent(false);
    delete op;
  }
  for (RecvOp* op : recv_ops_) delete op;
  send_ops_.clear();
  recv_ops_.clear();
  accept_ = nullptr;
}

std::shared_ptr<UcxConnection> UcxTransport::find(ucp_ep_h ep) const {
  auto it = connections_.find(ep);
  return it == connections_.end() ? nullptr : it->second;
}

std::shared_ptr<Connection> UcxTransport::connect(const std::string& host, uint16_t port,
                                                  Handlers handlers,
                                                  std::chrono::milliseconds timeout,
                                                  std::string* error) {
  auto deadline = Clock::now() + timeout;
  std::string where = host_port(host, port);
  if (std::this_thread::get_id() == thread_.get_id()) {
    if (error) *error = where + ": connect() cannot wait on the transport's own thread";
    return nullptr;
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found); rc != 0) {
    if (error) *error = where + ": " + gai_strerror(rc);
    return nullptr;
  }
  std::vector<std::pair<sockaddr_storage, socklen_t>> addresses;
  for (addrinfo* a = found; a; a = a->ai_next) {
    sockaddr_storage storage{};
    std::memcpy(&storage, a->ai_addr, a->ai_addrlen);
    addresses.emplace_back(storage, a->ai_addrlen);
  }
  freeaddrinfo(found);
  // IPv4 first: UCX 1.13 resolves IPv6 connections but cannot wire them up.
  std::stable_partition(addresses.begin(), addresses.end(),
                        [](auto& a) { return a.first.ss_family == AF_INET; });
  std::string reasons;
  // Each address the name resolves to in turn (localhost: ::1, then 127.0.0.1), within the one
  // deadline.
  for (auto& [address, length] : addresses) {
    auto connection = std::make_shared<UcxConnection>(shared_, this, where);
    connection->handlers = handlers;
    if (!shared_->post(
            [this, connection, a = address, l = length] { start_connect(connection, a, l); })) {
      if (error) *error = where + ": the transport is shutting down";
      return nullptr;
    }
    std::unique_lock lock(connection->handshake_mutex);
    connection->handshake_cv.wait_until(
        lock, deadline, [&] { return connection->handshake != UcxConnection::Handshake::waiting; });
    if (connection->handshake == UcxConnection::Handshake::done) return connection;
    std::string why = connection->handshake == UcxConnection::Handshake::waiting
                          ? "no answer within " + std::to_string(timeout.count()) + " ms"
                          : connection->handshake_error;
    if (connection->handshake == UcxConnection::Handshake::waiting) {
      connection->handshake = UcxConnection::Handshake::abandoned;
      shared_->post([this, connection] {
        if (connection->state == UcxConnection::State::connecting)
          fail_handshake(connection, "abandoned");
      });
    }
    std::string shown = numeric_host(reinterpret_cast<const sockaddr*>(&address), length);
    reasons += (reasons.empty() ? "" : "; ") + shown + ": " + why;
    if (Clock::now() >= deadline) break;
  }
  if (error) *error = "cannot connect to " + where + " (" + reasons + ")";
  return nullptr;
}

void UcxTransport::start_connect(const std::shared_ptr<UcxConnection>& connection,
                                 sockaddr_storage address, socklen_t length) {
  if (stopping_) return fail_handshake(connection, "the transport is shutting down");
  ucp_ep_params_t params{};
  params.field_mask = UCP_EP_PARAM_FIELD_FLAGS | UCP_EP_PARAM_FIELD_SOCK_ADDR |
                      UCP_EP_PARAM_FIELD_ERR_HANDLER | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
  params.flags = UCP_EP_PARAMS_FLAGS_CLIENT_SERVER;
  params.sockaddr.addr = reinterpret_cast<const sockaddr*>(&address);
  params.sockaddr.addrlen = length;
  params.err_mode = UCP_ERR_HANDLING_MODE_PEER;
  params.err_handler.cb = endpoint_error_callback;
  params.err_handler.arg = this;
  if (ucs_status_t s = api_->ucp_ep_create(worker_, &params, &connection->ep); s != UCS_OK)
    return fail_handshake(connection, api_->status_string(s));
  connections_[connection->ep] = connection;
  OutgoingMessage hello;
  hello.payload = Payload::copy_of(kHelloMagic, sizeof kHelloMagic);
  submit(connection, std::move(hello), Frame::hello);
}

void UcxTransport::fail_handshake(const std::shared_ptr<UcxConnection>& connection,
                                  const std::string& why) {
  {
    std::lock_guard lock(connection->handshake_mutex);
    if (connection->handshake == UcxConnection::Handshake::waiting) {
      connection->handshake = UcxConnection::Handshake::failed;
      connection->handshake_error = why;
    }
  }
  connection->handshake_cv.notify_all();
  if (connection->ep)
    begin_close(connection, why, false);
  else
    connection->state = UcxConnection::State::closed;
}

bool UcxTransport::listen(const std::string& address, uint16_t port, AcceptHandler accept,
                          std::string* error) {
  auto fail = [&](std::string why) {
    if (error) *error = "cannot listen on " + host_port(address, port) + ": " + why;
    return false;
  };
  if (std::this_thread::get_id() == thread_.get_id())
    return fail("listen() cannot wait on the transport's own thread");
  if (listen_called_.exchange(true)) return fail("this transport listens already");
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  const char* node = address.empty() ? nullptr : address.c_str();
  if (int rc = getaddrinfo(node, std::to_string(port).c_str(), &hints, &found); rc != 0)
    return fail(gai_strerror(rc));
  sockaddr_storage storage{};
  socklen_t length = found->ai_addrlen;
  std::memcpy(&storage, found->ai_addr, length);
  freeaddrinfo(found);
  std::promise<std::string> result;
  if (!shared_->post([&] {
        if (stopping_) return result.set_value("the transport is shutting down");
        accept_ = std::move(accept);
        ucp_listener_params_t params{};
        params.field_mask =
            UCP_LISTENER_PARAM_FIELD_SOCK_ADDR | UCP_LISTENER_PARAM_FIELD_CONN_HANDLER;
        params.sockaddr.addr = reinterpret_cast<const sockaddr*>(&storage);
        params.sockaddr.addrlen = length;
        params.conn_handler.cb = conn_request_callback;
        params.conn_handler.arg = this;
        if (ucs_status_t s = api_->ucp_listener_create(worker_, &params, &listener_); s != UCS_OK)
          return result.set_value(api_->status_string(s));
        ucp_listener_attr_t attr{};
        attr.field_mask = UCP_LISTENER_ATTR_FIELD_SOCKADDR;
        if (api_->ucp_listener_query(listener_, &attr) == UCS_OK) {
          auto* sa = reinterpret_cast<const sockaddr*>(&attr.sockaddr);
          port_ =
              ntohs(sa->sa_family == AF_INET6 ? reinterpret_cast<const sockaddr_in6*>(sa)->sin6_port
                                              : reinterpret_cast<const sockaddr_in*>(sa)->sin_port);
        }
        result.set_value("");
      }))
    return fail("the transport is shutting down");
  std::string why = result.get_future().get();
  return why.empty() ? true : fail(why);
}

void UcxTransport::conn_request_callback(ucp_conn_request_h request, void* arg) {
  auto* self = static_cast<UcxTransport*>(arg);
  self->deferred_.push_back([self, request] { self->accept_request(request); });
}

void UcxTransport::accept_request(ucp_conn_request_h request) {
  if (stopping_ || !listener_) {
    if (listener_) api_->ucp_listener_reject(listener_, request);
    return;
  }
  ucp_conn_request_attr_t attr{};
  attr.field_mask = UCP_CONN_REQUEST_ATTR_FIELD_CLIENT_ADDR;
  std::string peer = "?";
  if (api_->ucp_conn_request_query(request, &attr) == UCS_OK) {
    auto* sa = reinterpret_cast<const sockaddr*>(&attr.client_address);
    socklen_t len = sa->sa_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
    uint16_t port =
        ntohs(sa->sa_family == AF_INET6 ? reinterpret_cast<const sockaddr_in6*>(sa)->sin6_port
                                        : reinterpret_cast<const sockaddr_in*>(sa)->sin_port);
    peer = host_port(numeric_host(sa, len), port);
  }
  auto connection = std::make_shared<UcxConnection>(shared_, this, peer);
  ucp_ep_params_t params{};
  params.field_mask = UCP_EP_PARAM_FIELD_CONN_REQUEST | UCP_EP_PARAM_FIELD_ERR_HANDLER |
                      UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
  params.conn_request = request;
  params.err_mode = UCP_ERR_HANDLING_MODE_PEER;
  params.err_handler.cb = endpoint_error_callback;
  params.err_handler.arg = this;
  // A failed ucp_ep_create has consumed the request already (rejecting it too would crash).
  if (api_->ucp_ep_create(worker_, &params, &connection->ep) != UCS_OK) return;
  connection->state = UcxConnection::State::awaiting_hello;
  connection->deadline = Clock::now() + kHelloTimeout;
  connections_[connection->ep] = connection;
}

void UcxTransport::on_hello(const std::shared_ptr<UcxConnection>& connection, Frame frame,
                            std::span<const std::byte> payload) {
  bool ours = payload.size() == sizeof kHelloMagic &&
              std::memcmp(payload.data(), kHelloMagic, sizeof kHelloMagic) == 0;
  if (frame == Frame::hello && connection->state == UcxConnection::State::awaiting_hello) {
    if (!ours || !accept_) return begin_close(connection, "not a Manifold transport", false);
    connection->deadline = Clock::time_point::max();
    connection->state = UcxConnection::State::open;
    connection->open_ = true;
    connection->announced = true;
    // The answer goes out before anything that accept queues: those are tasks, run later.
    connection->handlers = accept_(connection);
    OutgoingMessage ack;
    ack.payload = Payload::copy_of(kHelloMagic, sizeof kHelloMagic);
    submit(connection, std::move(ack), Frame::hello_ack);
    return;
  }
  if (frame == Frame::hello_ack && connection->state == UcxConnection::State::connecting) {
    if (!ours) return fail_handshake(connection, "not a Manifold transport");
    std::lock_guard lock(connection->handshake_mutex);
    if (connection->handshake != UcxConnection::Handshake::waiting) return;  // abandoned
    connection->state = UcxConnection::State::open;
    connection->open_ = true;
    connection->announced = true;
    connection->handshake = UcxConnection::Handshake::done;
    connection->handshake_cv.notify_all();
    return;
  }
  begin_close(connection, "unexpected handshake message", false);
}

}  // namespace ucx
}  // namespace manifold::remote
