// Connections of the UCX transport: sending, receiving in order, closing.
#include <cstring>

#include "backends/remote/ucx_transport.h"

namespace manifold::remote {

Payload Payload::copy_of(const void* bytes, size_t count) {
  Payload p;
  p.owned.resize(count);
  if (count) std::memcpy(p.owned.data(), bytes, count);
  return p;
}

Payload Payload::lend(const void* bytes, size_t count, std::shared_ptr<const void> keeper) {
  Payload p;
  p.data = bytes;
  p.size = count;
  p.keep = std::move(keeper);
  return p;
}

Payload Payload::own(std::vector<std::byte> bytes) {
  Payload p;
  p.owned = std::move(bytes);
  return p;
}

std::span<const std::byte> Payload::bytes() const {
  if (data) return {static_cast<const std::byte*>(data), size};
  return owned;
}

namespace ucx {

using State = UcxConnection::State;

namespace {

void send_callback(void* request, ucs_status_t status, void* user_data) {
  auto* op = static_cast<SendOp*>(user_data);
  UcxTransport* transport = op->transport;
  transport->api().ucp_request_free(request);
  transport->finish_send(op, status);
}

void recv_callback(void* request, ucs_status_t status, size_t, void* user_data) {
  auto* op = static_cast<RecvOp*>(user_data);
  UcxTransport* transport = op->transport;
  transport->api().ucp_request_free(request);
  transport->finish_recv(op, status);
}

}  // namespace

bool UcxConnection::send(OutgoingMessage message) {
  if (message.header.size() > kMaxHeaderBytes || !open_) {
    if (message.sent) message.sent(false);
    return false;
  }
  // std::function must be copyable; the message is not.
  auto holder = std::make_shared<OutgoingMessage>(std::move(message));
  auto self = shared_from_this();
  if (!shared_->post([self, holder] { self->transport_->submit(self, std::move(*holder)); })) {
    if (holder->sent) holder->sent(false);
    return false;
  }
  return true;
}

void UcxConnection::close() {
  auto self = shared_from_this();
  shared_->post([self] { self->transport_->begin_close(self, "closed", true); });
}

void UcxTransport::submit(const std::shared_ptr<UcxConnection>& connection, OutgoingMessage message,
                          Frame frame) {
  bool allowed = connection->state == State::open ||
                 (frame == Frame::hello && connection->state == State::connecting);
  if (!allowed) {
    if (message.sent) message.sent(false);
    return;
  }
  auto* op = new SendOp{this, connection, {}, std::move(message.payload), std::move(message.sent)};
  WireHeader wire{};
  // The handshake precedes numbering: only what goes through deliver() is numbered.
  wire.seq = frame == Frame::message || frame == Frame::bye ? connection->next_send_seq++ : 0;
  wire.kind = message.kind;
  wire.frame = static_cast<uint8_t>(frame);
  op->header.resize(sizeof wire + message.header.size());
  std::memcpy(op->header.data(), &wire, sizeof wire);
  if (!message.header.empty())
    std::memcpy(op->header.data() + sizeof wire, message.header.data(), message.header.size());
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
                       UCP_OP_ATTR_FIELD_FLAGS | UCP_OP_ATTR_FIELD_MEMORY_TYPE;
  param.cb.send = send_callback;
  param.user_data = op;
  // REPLY: the receiver learns which endpoint (so which connection) a message came by.
  param.flags = UCP_AM_SEND_FLAG_REPLY;
  param.memory_type = UCS_MEMORY_TYPE_HOST;
  auto bytes = op->payload.bytes();
  ucs_status_ptr_t request =
      api_->ucp_am_send_nbx(connection->ep, kAmId, op->header.data(), op->header.size(),
                            bytes.data(), bytes.size(), &param);
  if (request == nullptr || UCS_PTR_IS_ERR(request)) {
    bool ok = request == nullptr;  // done at once: no callback comes
    if (op->sent) op->sent(ok);
    delete op;
    if (!ok) {
      std::string why = "send failed: " + api_->status_string(UCS_PTR_STATUS(request));
      begin_close(connection, why, false);
    }
    return;
  }
  send_ops_.insert(op);
  connection->sends.insert(op);
}

void UcxTransport::finish_send(SendOp* op, ucs_status_t status) {
  send_ops_.erase(op);
  if (op->closes_endpoint) --endpoint_closes_;
  op->connection->sends.erase(op);
  if (!op->finished) {
    op->finished = true;
    if (op->sent) op->sent(status == UCS_OK);
  }
  delete op;
}

void UcxTransport::begin_close(const std::shared_ptr<UcxConnection>& connection, std::string why,
                               bool flush) {
  if (connection->state == State::closing || connection->state == State::closed) return;
  if (connection->why.empty()) connection->why = std::move(why);
  if (!flush || connection->state != State::open) return finish_close(connection);
  // UCX's flush does not wait for rendezvous sends, so the close is a handshake of our own: the
  // peer delivers the bye after everything sent before it and then drops the endpoint, which
  // ends this side (on_endpoint_error). A peer that does not answer in time is dropped.
  submit(connection, OutgoingMessage{}, Frame::bye);
  if (connection->state == State::closed) return;  // the bye could not be sent
  connection->state = State::closing;
  connection->open_ = false;
  connection->deadline = Clock::now() + kFlushTimeout;
}

void UcxTransport::finish_close(const std::shared_ptr<UcxConnection>& connection) {
  if (connection->state == State::closed) return;
  connection->state = State::closed;
  connection->open_ = false;
  connection->deadline = Clock::time_point::max();
  if (connection->ep) {
    connections_.erase(connection->ep);
    // Force: UCX cancels what is outstanding on the endpoint, without waiting for the peer.
    auto* op = new SendOp{this, connection, {}, {}, {}};
    op->closes_endpoint = true;
    ucp_request_param_t param{};
    param.op_attr_mask =
        UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS;
    param.cb.send = send_callback;
    param.user_data = op;
    param.flags = UCP_EP_CLOSE_FLAG_FORCE;
    ucs_status_ptr_t request = api_->ucp_ep_close_nbx(connection->ep, &param);
    if (request == nullptr || UCS_PTR_IS_ERR(request)) {
      delete op;
    } else {
      send_ops_.insert(op);
      ++endpoint_closes_;
    }
  }
  // What UCX has not completed by now fails; its late callback then only frees the request.
  auto sends = std::move(connection->sends);
  for (SendOp* op : sends) {
    if (op->finished) continue;
    op->finished = true;
    if (op->sent) op->sent(false);
  }
  // A receive into a place_payload destination must stop before on_closed lets it go.
  auto recvs = std::move(connection->recvs);
  for (RecvOp* op : recvs) {
    op->abandoned = true;
    api_->ucp_request_cancel(worker_, op->request);
  }
  connection->held.clear();
  Handlers handlers = std::move(connection->handlers);
  connection->handlers = {};
  if (connection->announced && handlers.on_closed)
    handlers.on_closed(connection->why.empty() ? "closed" : connection->why);
}

void UcxTransport::on_endpoint_error(ucp_ep_h ep, ucs_status_t status) {
  auto connection = find(ep);
  if (!connection) return;
  std::string reason = api_->status_string(status);
  later([this, connection, reason] {
    if (connection->state == State::connecting)
      fail_handshake(connection, "refused or unreachable (" + reason + ")");
    else if (connection->state == State::closing)
      finish_close(connection);  // the peer has seen the bye and dropped its side
    else
      begin_close(connection, "connection to " + connection->peer() + " lost: " + reason, false);
  });
}

ucs_status_t UcxTransport::on_active_message(const void* header, size_t header_length, void* data,
                                             size_t length, const ucp_am_recv_param_t* param) {
  if (!(param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP) || header_length < sizeof(WireHeader))
    return UCS_OK;
  auto connection = find(param->reply_ep);
  if (!connection || connection->state == State::closed) return UCS_OK;
  WireHeader wire;
  std::memcpy(&wire, header, sizeof wire);
  auto frame = static_cast<Frame>(wire.frame);
  std::span<const std::byte> user_header(static_cast<const std::byte*>(header) + sizeof wire,
                                         header_length - sizeof wire);
  bool rendezvous = param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV;
  auto protocol_error = [&](const char* what) {
    later([this, connection, what] { begin_close(connection, what, false); });
    return UCS_OK;
  };
  if (frame == Frame::hello || frame == Frame::hello_ack) {
    if (rendezvous) return protocol_error("oversized handshake");
    std::vector<std::byte> payload(static_cast<const std::byte*>(data),
                                   static_cast<const std::byte*>(data) + length);
    later([this, connection, frame, payload = std::move(payload)] {
      if (connection->state != State::closed) on_hello(connection, frame, payload);
    });
    return UCS_OK;
  }
  if (frame != Frame::message && frame != Frame::bye) return protocol_error("unknown frame");
  if (connection->state != State::open && connection->state != State::closing) return UCS_OK;
  if (wire.seq < connection->next_deliver_seq || connection->held.count(wire.seq))
    return protocol_error("message numbered twice");

  UcxConnection::Held held{{}, frame, !rendezvous};
  held.message.kind = wire.kind;
  held.message.header.assign(user_header.begin(), user_header.end());
  held.message.payload_size = length;
  void* destination = nullptr;
  if (frame == Frame::message && length && connection->handlers.place_payload)
    destination = connection->handlers.place_payload(wire.kind, user_header, length);
  held.message.placed = destination != nullptr;
  if (!destination) held.message.payload.resize(length);
  // Moving the message into the map keeps the vector's buffer, so take its address after.
  auto& entry = connection->held.emplace(wire.seq, std::move(held)).first->second;
  if (!destination) destination = entry.message.payload.data();
  if (!rendezvous) {
    if (length) std::memcpy(destination, data, length);
    deliver(connection);
    return UCS_OK;
  }
  auto* op = new RecvOp{this, connection, wire.seq};
  ucp_request_param_t recv{};
  recv.op_attr_mask =
      UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_MEMORY_TYPE;
  recv.cb.recv_am = recv_callback;
  recv.user_data = op;
  recv.memory_type = UCS_MEMORY_TYPE_HOST;
  ucs_status_ptr_t request = api_->ucp_am_recv_data_nbx(worker_, data, destination, length, &recv);
  if (request == nullptr) {
    delete op;
    entry.ready = true;
    deliver(connection);
  } else if (UCS_PTR_IS_ERR(request)) {
    delete op;
    connection->held.erase(wire.seq);
    return protocol_error("rendezvous receive failed");
  } else {
    op->request = request;
    recv_ops_.insert(op);
    connection->recvs.insert(op);
  }
  // UCX owns the descriptor once ucp_am_recv_data_nbx has seen it.
  return UCS_INPROGRESS;
}

void UcxTransport::finish_recv(RecvOp* op, ucs_status_t status) {
  recv_ops_.erase(op);
  auto connection = op->connection;
  connection->recvs.erase(op);
  bool wanted = !op->abandoned && connection->state != State::closed;
  uint64_t seq = op->seq;
  delete op;
  if (!wanted) return;
  if (status != UCS_OK) {
    std::string why = "receive failed: " + api_->status_string(status);
    return later([this, connection, why] { begin_close(connection, why, false); });
  }
  if (auto it = connection->held.find(seq); it != connection->held.end()) it->second.ready = true;
  deliver(connection);
}

void UcxTransport::deliver(const std::shared_ptr<UcxConnection>& connection) {
  while (connection->state != State::closed) {
    auto it = connection->held.find(connection->next_deliver_seq);
    if (it == connection->held.end() || !it->second.ready) return;
    UcxConnection::Held held = std::move(it->second);
    connection->held.erase(it);
    ++connection->next_deliver_seq;
    if (held.frame == Frame::bye) {
      // Everything the peer sent has been delivered; a close of our own that crossed this one
      // ends here too.
      connection->open_ = false;
      return later([this, connection] {
        if (connection->state == State::closing) return finish_close(connection);
        begin_close(connection, "the peer closed the connection", false);
      });
    }
    if (connection->handlers.on_message) connection->handlers.on_message(std::move(held.message));
  }
}

}  // namespace ucx
}  // namespace manifold::remote
