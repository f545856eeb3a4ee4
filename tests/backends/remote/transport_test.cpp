// The UCX transport over loopback: handshake, ordering, rendezvous, lent payloads, placement,
// threads, many connections, and the ways a connection ends (close, a destroyed transport, a
// killed peer process, nobody listening).
#include <arpa/inet.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include "backends/remote/transport.h"
#include "gtest/gtest.h"

namespace manifold::remote {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// What arrives on one connection, for the test thread to wait on.
struct Inbox {
  std::mutex mutex;
  std::condition_variable cv;
  std::vector<IncomingMessage> messages;
  bool closed = false;
  std::string why;
  int closed_calls = 0;

  Handlers handlers() {
    Handlers h;
    h.on_message = [this](IncomingMessage&& m) {
      std::lock_guard lock(mutex);
      messages.push_back(std::move(m));
      cv.notify_all();
    };
    h.on_closed = [this](const std::string& w) {
      std::lock_guard lock(mutex);
      closed = true;
      why = w;
      ++closed_calls;
      cv.notify_all();
    };
    return h;
  }
  bool wait_messages(size_t count, std::chrono::milliseconds timeout = 20s) {
    std::unique_lock lock(mutex);
    return cv.wait_for(lock, timeout, [&] { return messages.size() >= count; });
  }
  bool wait_closed(std::chrono::milliseconds timeout = 20s) {
    std::unique_lock lock(mutex);
    return cv.wait_for(lock, timeout, [&] { return closed; });
  }
};

std::unique_ptr<Transport> make_transport() {
  std::string error;
  auto transport = Transport::create("libucp.so.0", &error);
  EXPECT_TRUE(transport) << error;
  return transport;
}

std::vector<std::byte> pattern(size_t size, uint32_t seed) {
  std::vector<std::byte> bytes(size);
  for (size_t i = 0; i < size; ++i) bytes[i] = std::byte((i * 131 + seed * 7 + (i >> 12)) & 0xff);
  return bytes;
}

std::vector<std::byte> header_of(uint32_t a, uint32_t b = 0) {
  std::vector<std::byte> h(8);
  std::memcpy(h.data(), &a, 4);
  std::memcpy(h.data() + 4, &b, 4);
  return h;
}
uint32_t header_word(const IncomingMessage& m, int i) {
  uint32_t v = 0;
  if (m.header.size() >= size_t(4 * (i + 1))) std::memcpy(&v, m.header.data() + 4 * i, 4);
  return v;
}

OutgoingMessage message(uint16_t kind, std::vector<std::byte> header, Payload payload,
                        std::function<void(bool)> sent = {}) {
  return {kind, std::move(header), std::move(payload), std::move(sent)};
}

// A server transport whose accepted connections each get an Inbox (and optionally echo).
struct Server {
  std::unique_ptr<Transport> transport = make_transport();
  std::mutex mutex;
  std::condition_variable cv;
  std::vector<std::shared_ptr<Connection>> connections;
  std::vector<std::unique_ptr<Inbox>> inboxes;
  bool echo = false;
  std::function<void*(uint16_t, std::span<const std::byte>, size_t)> place;

  ~Server() { transport.reset(); }  // its thread calls into the inboxes

  uint16_t listen() {
    std::string error;
    EXPECT_TRUE(transport->listen(
        "127.0.0.1", 0, [this](auto c) { return accept(c); }, &error))
        << error;
    EXPECT_NE(transport->listening_port(), 0);
    return transport->listening_port();
  }
  Handlers accept(std::shared_ptr<Connection> connection) {
    std::lock_guard lock(mutex);
    inboxes.push_back(std::make_unique<Inbox>());
    Handlers h = inboxes.back()->handlers();
    if (echo) {
      std::weak_ptr<Connection> weak = connection;
      h.on_message = [weak, inner = h.on_message](IncomingMessage&& m) {
        if (auto c = weak.lock()) c->send(message(m.kind, m.header, Payload::own(m.payload)));
        inner(std::move(m));
      };
    }
    h.place_payload = place;
    connections.push_back(std::move(connection));
    cv.notify_all();
    return h;
  }
  bool wait_connections(size_t count) {
    std::unique_lock lock(mutex);
    return cv.wait_for(lock, 20s, [&] { return connections.size() >= count; });
  }
  Inbox& inbox(size_t i) {
    std::lock_guard lock(mutex);
    return *inboxes.at(i);
  }
};

std::shared_ptr<Connection> connect(Transport& transport, uint16_t port, Inbox& inbox,
                                    std::chrono::milliseconds timeout = 10s) {
  std::string error;
  auto connection = transport.connect("127.0.0.1", port, inbox.handlers(), timeout, &error);
  EXPECT_TRUE(connection) << error;
  return connection;
}

TEST(RemoteTransport, MissingLibraryIsAReasonNotACrash) {
  std::string error;
  EXPECT_EQ(Transport::create("libucp-that-is-not-there.so.0", &error), nullptr);
  EXPECT_NE(error.find("libucp-that-is-not-there.so.0"), std::string::npos) << error;
}

// Small messages and >1 MiB ones (rendezvous) interleaved, both ways: order and contents.
TEST(RemoteTransport, MessagesBothWaysInOrder) {
  Server server;
  uint16_t port = server.listen();
  Inbox client_inbox;
  auto client = make_transport();
  auto connection = connect(*client, port, client_inbox);
  ASSERT_TRUE(connection);
  ASSERT_TRUE(server.wait_connections(1));
  auto size_of = [](uint32_t i) -> size_t { return i % 25 == 3 ? (1u << 20) + 4096 * i : i % 97; };
  constexpr uint32_t kCount = 300;
  for (uint32_t i = 0; i < kCount; ++i)
    ASSERT_TRUE(
        connection->send(message(i % 7, header_of(i), Payload::own(pattern(size_of(i), i)))));
  auto back = server.connections[0];
  for (uint32_t i = 0; i < kCount; ++i)
    ASSERT_TRUE(back->send(message(9, header_of(i), Payload::own(pattern(size_of(i), i + 1)))));
  ASSERT_TRUE(server.inbox(0).wait_messages(kCount));
  ASSERT_TRUE(client_inbox.wait_messages(kCount));
  for (uint32_t i = 0; i < kCount; ++i) {
    const auto& m = server.inbox(0).messages[i];
    ASSERT_EQ(header_word(m, 0), i);
    EXPECT_EQ(m.kind, i % 7);
    EXPECT_EQ(m.payload_size, size_of(i));
    EXPECT_EQ(m.payload, pattern(size_of(i), i)) << "message " << i;
    const auto& r = client_inbox.messages[i];
    ASSERT_EQ(header_word(r, 0), i);
    EXPECT_EQ(r.payload, pattern(size_of(i), i + 1)) << "reply " << i;
  }
  EXPECT_EQ(connection->peer(), "127.0.0.1:" + std::to_string(port));
  EXPECT_TRUE(connection->is_open());
}

TEST(RemoteTransport, LentPayloadsReportSentOnce) {
  Server server;
  uint16_t port = server.listen();
  Inbox inbox;  // outlives the transport that calls it
  auto client = make_transport();
  auto connection = connect(*client, port, inbox);
  ASSERT_TRUE(connection);
  constexpr int kCount = 40;
  std::vector<std::shared_ptr<std::vector<std::byte>>> buffers;
  std::vector<std::atomic<int>> calls(kCount);
  std::atomic<int> ok{0};
  for (int i = 0; i < kCount; ++i) {
    size_t size = i % 4 == 0 ? (3u << 20) : 1000 + i;
    auto buffer = std::make_shared<std::vector<std::byte>>(pattern(size, i));
    buffers.push_back(buffer);
    ASSERT_TRUE(connection->send(message(
        1, header_of(i), Payload::lend(buffer->data(), buffer->size(), buffer), [&, i](bool sent) {
          calls[i]++;
          if (sent) ok++;
        })));
  }
  ASSERT_TRUE(server.wait_connections(1));
  ASSERT_TRUE(server.inbox(0).wait_messages(kCount));
  for (int i = 0; i < kCount; ++i) EXPECT_EQ(server.inbox(0).messages[i].payload, *buffers[i]) << i;
  auto deadline = Clock::now() + 10s;
  while (ok < kCount && Clock::now() < deadline) std::this_thread::sleep_for(1ms);
  EXPECT_EQ(ok.load(), kCount);
  client.reset();  // no late second call either
  for (int i = 0; i < kCount; ++i) EXPECT_EQ(calls[i].load(), 1) << i;
}

TEST(RemoteTransport, PlacePayloadWritesIntoTheDestination) {
  Server server;
  std::vector<std::byte> small(512), large(5u << 20);
  server.place = [&](uint16_t kind, std::span<const std::byte>, size_t size) -> void* {
    if (kind == 5 && size == small.size()) return small.data();
    if (kind == 5 && size == large.size()) return large.data();
    return nullptr;
  };
  uint16_t port = server.listen();
  Inbox inbox;  // outlives the transport that calls it
  auto client = make_transport();
  auto connection = connect(*client, port, inbox);
  ASSERT_TRUE(connection);
  connection->send(message(5, header_of(0), Payload::own(pattern(small.size(), 1))));
  connection->send(message(6, header_of(1), Payload::own(pattern(100, 2))));
  connection->send(message(5, header_of(2), Payload::own(pattern(large.size(), 3))));
  connection->send(message(6, header_of(3), Payload::own(pattern(10, 4))));
  ASSERT_TRUE(server.wait_connections(1));
  Inbox& got = server.inbox(0);
  ASSERT_TRUE(got.wait_messages(4));
  EXPECT_TRUE(got.messages[0].placed);
  EXPECT_TRUE(got.messages[0].payload.empty());
  EXPECT_EQ(got.messages[0].payload_size, small.size());
  EXPECT_EQ(small, pattern(small.size(), 1));
  EXPECT_FALSE(got.messages[1].placed);
  EXPECT_EQ(got.messages[1].payload, pattern(100, 2));
  EXPECT_TRUE(got.messages[2].placed);
  EXPECT_EQ(large, pattern(large.size(), 3));
  EXPECT_EQ(got.messages[3].payload, pattern(10, 4));
}

TEST(RemoteTransport, SendsFromSeveralThreadsKeepEachThreadsOrder) {
  Server server;
  uint16_t port = server.listen();
  Inbox inbox;  // outlives the transport that calls it
  auto client = make_transport();
  auto connection = connect(*client, port, inbox);
  ASSERT_TRUE(connection);
  constexpr uint32_t kThreads = 4, kEach = 300;
  std::vector<std::thread> threads;
  for (uint32_t t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (uint32_t i = 0; i < kEach; ++i) {
        size_t size = i % 50 == 7 ? (2u << 20) : i % 13;
        connection->send(message(2, header_of(t, i), Payload::own(pattern(size, t * kEach + i))));
      }
    });
  for (auto& t : threads) t.join();
  ASSERT_TRUE(server.wait_connections(1));
  Inbox& got = server.inbox(0);
  ASSERT_TRUE(got.wait_messages(kThreads * kEach));
  std::map<uint32_t, uint32_t> next;
  for (const auto& m : got.messages) {
    uint32_t t = header_word(m, 0), i = header_word(m, 1);
    ASSERT_EQ(i, next[t]++) << "thread " << t;
    size_t size = i % 50 == 7 ? (2u << 20) : i % 13;
    ASSERT_EQ(m.payload, pattern(size, t * kEach + i));
  }
}

TEST(RemoteTransport, ManyConnectionsToOneListener) {
  Server server;
  server.echo = true;
  uint16_t port = server.listen();
  constexpr int kConnections = 16, kEach = 10;
  std::vector<std::unique_ptr<Inbox>> inboxes;
  auto client = make_transport();
  std::vector<std::shared_ptr<Connection>> connections;
  for (int c = 0; c < kConnections; ++c) {
    inboxes.push_back(std::make_unique<Inbox>());
    connections.push_back(connect(*client, port, *inboxes.back()));
    ASSERT_TRUE(connections.back());
  }
  for (int i = 0; i < kEach; ++i)
    for (int c = 0; c < kConnections; ++c)
      connections[c]->send(message(3, header_of(c, i), Payload::own(pattern(64 + i, c))));
  ASSERT_TRUE(server.wait_connections(kConnections));
  for (int c = 0; c < kConnections; ++c) {
    ASSERT_TRUE(inboxes[c]->wait_messages(kEach)) << c;
    for (int i = 0; i < kEach; ++i) {
      EXPECT_EQ(header_word(inboxes[c]->messages[i], 0), uint32_t(c));
      EXPECT_EQ(header_word(inboxes[c]->messages[i], 1), uint32_t(i));
    }
  }
}

// An idle connection costs no CPU: the threads sleep in epoll, they do not spin.
TEST(RemoteTransport, IdleTransportsSleep) {
  Server server;
  uint16_t port = server.listen();
  Inbox inbox;
  auto client = make_transport();
  auto connection = connect(*client, port, inbox);
  ASSERT_TRUE(connection);
  auto cpu = [] {
    timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return std::chrono::seconds(t.tv_sec) + std::chrono::nanoseconds(t.tv_nsec);
  };
  auto before = cpu();
  std::this_thread::sleep_for(500ms);
  EXPECT_LT(cpu() - before, 50ms);
}

// A TCP socket on a loopback port of the system's choice: listening, or closed again (a port
// nobody listens on).
int loopback_socket(bool listening, uint16_t* port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  bind(fd, reinterpret_cast<sockaddr*>(&address), length);
  if (listening) ::listen(fd, 4);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  *port = ntohs(address.sin_port);
  if (!listening) ::close(fd);
  return fd;
}

// Nobody on the port fails fast; a TCP listener that is not a UCX peer never answers the
// handshake, and the timeout ends the wait.
TEST(RemoteTransport, ConnectFailsWithinTheTimeout) {
  uint16_t closed_port, silent_port;
  loopback_socket(false, &closed_port);
  int silent = loopback_socket(true, &silent_port);
  Inbox inbox;  // outlives the transport that calls it
  auto client = make_transport();
  for (auto [port, timeout] : {std::pair{closed_port, 3000ms}, std::pair{silent_port, 500ms}}) {
    std::string error;
    auto start = Clock::now();
    EXPECT_EQ(client->connect("127.0.0.1", port, inbox.handlers(), timeout, &error), nullptr);
    EXPECT_LT(Clock::now() - start, timeout + 1s);
    EXPECT_FALSE(error.empty());
  }
  client.reset();
  ::close(silent);
}

// Disabled: UCX 1.13's TCP transport does not wire up over IPv6 (its connection back to the
// client's interface is refused) and then crashes in ucp_worker_destroy. For newer UCX.
TEST(RemoteTransport, DISABLED_Ipv6Loopback) {
  Server server;
  std::string error;
  if (!server.transport->listen(
          "::1", 0, [&](auto c) { return server.accept(c); }, &error))
    GTEST_SKIP() << error;
  Inbox inbox;
  auto client = make_transport();
  uint16_t port = server.transport->listening_port();
  auto connection = client->connect("::1", port, inbox.handlers(), 10s, &error);
  ASSERT_TRUE(connection) << error;
  EXPECT_EQ(connection->peer(), "[::1]:" + std::to_string(port));
  connection->send(message(1, header_of(1), Payload::own(pattern(3u << 20, 1))));
  ASSERT_TRUE(server.wait_connections(1));
  ASSERT_TRUE(server.inbox(0).wait_messages(1));
  EXPECT_EQ(server.inbox(0).messages[0].payload, pattern(3u << 20, 1));
}

TEST(RemoteTransport, CloseEndsBothSides) {
  Server server;
  uint16_t port = server.listen();
  Inbox inbox;  // outlives the transport that calls it
  auto client = make_transport();
  auto connection = connect(*client, port, inbox);
  ASSERT_TRUE(connection);
  std::atomic<int> sent_ok{0};
  for (int i = 0; i < 20; ++i)
    connection->send(message(1, header_of(i), Payload::own(pattern(i == 10 ? 2u << 20 : 10, i)),
                             [&](bool ok) { sent_ok += ok; }));
  connection->close();  // flushes what was queued
  ASSERT_TRUE(inbox.wait_closed());
  EXPECT_EQ(inbox.why, "closed");
  EXPECT_EQ(sent_ok.load(), 20);
  ASSERT_TRUE(server.wait_connections(1));
  Inbox& other = server.inbox(0);
  ASSERT_TRUE(other.wait_closed());
  EXPECT_EQ(other.messages.size(), 20u);
  EXPECT_FALSE(connection->is_open());
  std::atomic<int> failed{0};
  EXPECT_FALSE(connection->send(message(1, {}, {}, [&](bool ok) { failed += !ok; })));
  EXPECT_EQ(failed.load(), 1);
  EXPECT_FALSE(server.connections[0]->send(message(1, {}, {})));
  connection->close();  // idempotent
  EXPECT_EQ(inbox.closed_calls, 1);
  EXPECT_EQ(other.closed_calls, 1);
}

TEST(RemoteTransport, DestroyedTransportClosesThePeerAndOutlivedConnections) {
  auto server = std::make_unique<Server>();
  uint16_t port = server->listen();
  Inbox inbox;  // outlives the transport that calls it
  auto client = make_transport();
  auto connection = connect(*client, port, inbox);
  ASSERT_TRUE(connection);
  ASSERT_TRUE(server->wait_connections(1));
  auto server_side = server->connections[0];
  server.reset();  // its Transport goes, its Connection object stays
  ASSERT_TRUE(inbox.wait_closed(5s));
  EXPECT_FALSE(server_side->is_open());
  EXPECT_FALSE(server_side->send(message(1, {}, {})));
  server_side->close();
  EXPECT_FALSE(connection->is_open());
  EXPECT_FALSE(connection->send(message(1, {}, {})));

  // Sends in flight when the client's own transport goes: each reports exactly once.
  Server again;
  port = again.listen();
  Inbox second;
  connection = connect(*client, port, second);
  ASSERT_TRUE(connection);
  std::atomic<int> calls{0};
  for (int i = 0; i < 50; ++i)
    connection->send(
        message(1, {}, Payload::own(pattern(i % 5 ? 100 : 4u << 20, i)), [&](bool) { calls++; }));
  client.reset();
  EXPECT_EQ(calls.load(), 50);
  EXPECT_TRUE(second.closed);
  EXPECT_EQ(second.closed_calls, 1);
  EXPECT_FALSE(connection->send(message(1, {}, {})));
}

// The child of KilledServer: listens, tells the parent its port, echoes until killed.
[[noreturn]] void serve_and_wait(int port_fd) {
  Server server;
  server.echo = true;
  uint16_t port = server.listen();
  if (write(port_fd, &port, sizeof port) != sizeof port) _exit(1);
  for (;;) pause();
}

// UCX's memory hooks (libucm) intercept the madvise of an exiting thread's stack, which crashes
// inside ThreadSanitizer's own interceptors: a TSan build runs without them.
const bool g_no_ucm_under_tsan = [] {
#if defined(__SANITIZE_THREAD__)
  setenv("UCX_MEM_EVENTS", "no", 0);
#endif
  return true;
}();

const bool g_server_child = [] {
  if (const char* fd = getenv("MANIFOLD_TRANSPORT_TEST_PORT_FD")) serve_and_wait(atoi(fd));
  return false;
}();

TEST(RemoteTransport, KilledPeerProcessClosesTheConnection) {
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  std::string env = "MANIFOLD_TRANSPORT_TEST_PORT_FD=" + std::to_string(pipe_fds[1]);
  char* argv[] = {const_cast<char*>("remote_transport"), nullptr};
  char* envp[] = {env.data(), nullptr};
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(pipe_fds[0]);
    execve("/proc/self/exe", argv, envp);
    _exit(127);
  }
  ::close(pipe_fds[1]);
  uint16_t port = 0;
  pollfd p{pipe_fds[0], POLLIN, 0};
  bool got = poll(&p, 1, 20000) == 1 && read(pipe_fds[0], &port, sizeof port) == sizeof port;
  ::close(pipe_fds[0]);
  if (!got) kill(child, SIGKILL);
  ASSERT_TRUE(got) << "the child server did not start";
  Inbox inbox;  // outlives the transport that calls it
  auto client = make_transport();
  auto connection = connect(*client, port, inbox);
  if (connection) {
    connection->send(message(4, header_of(7), Payload::own(pattern(100, 7))));
    EXPECT_TRUE(inbox.wait_messages(1, 10s));  // the echo: the child really served
  }
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  ASSERT_TRUE(connection);
  auto start = Clock::now();
  ASSERT_TRUE(inbox.wait_closed(10s));
  EXPECT_LT(Clock::now() - start, 5s);
  EXPECT_FALSE(inbox.why.empty());
  EXPECT_FALSE(connection->send(message(1, {}, {})));
}

}  // namespace
}  // namespace manifold::remote
