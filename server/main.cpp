// manifold-server: serves this machine's Manifold devices to clients of the remote backend, over
// UCX. Started by hand or by systemd (packaging/manifold-server.service).
//
//   manifold-server [--listen ADDRESS] [--port N] (--token-file FILE | --no-token)
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>

#include "backends/remote/transport.h"
#include "server/served_platform.h"
#include "server/session.h"
#include "settings/settings.h"

namespace {

volatile std::sig_atomic_t stop_requested = 0;
void request_stop(int) { stop_requested = 1; }

std::mutex log_mutex;
void log_line(const std::string& line) {
  std::lock_guard lock(log_mutex);
  std::fprintf(stderr, "manifold-server: %s\n", line.c_str());
  std::fflush(stderr);
}

int usage(const char* why) {
  std::fprintf(stderr,
               "manifold-server: %s\n"
               "usage: manifold-server [--listen ADDRESS] [--port N] "
               "(--token-file FILE | --no-token)\n"
               "  --listen ADDRESS  the address to listen on (default 0.0.0.0)\n"
               "  --port N          the port (default 7700; 0: any free one, printed)\n"
               "  --token-file FILE the shared secret clients must present (their\n"
               "                    MANIFOLD_REMOTE_TOKEN names a file with the same)\n"
               "  --no-token        accept any client (trusted networks only)\n",
               why);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string address = "0.0.0.0", token_file;
  long port = 7700;
  bool no_token = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--listen" && has_value) {
      address = argv[++i];
    } else if (arg == "--port" && has_value) {
      char* end = nullptr;
      port = std::strtol(argv[++i], &end, 10);
      if (*end || port < 0 || port > 65535) return usage("--port takes a number from 0 to 65535");
    } else if (arg == "--token-file" && has_value) {
      token_file = argv[++i];
    } else if (arg == "--no-token") {
      no_token = true;
    } else if (arg == "--help" || arg == "-h") {
      usage("serves this machine's OpenCL devices to Manifold clients");
      return 0;
    } else {
      return usage(("unknown argument " + arg).c_str());
    }
  }
  if (token_file.empty() == !no_token) return usage("give either --token-file or --no-token");
  std::string token;
  if (!no_token) token = manifold::read_token_file(token_file);
  if (!no_token && token.empty()) return usage(("cannot read a token from " + token_file).c_str());

  // The server's own platform must not list remote devices: it would be its own client.
  setenv("MANIFOLD_DISABLE_REMOTE", "1", 1);
  std::unique_ptr<manifold::server::ServedPlatform> platform;
  try {
    platform = std::make_unique<manifold::server::ServedPlatform>();
  } catch (const std::exception& e) {
    log_line(e.what());
    return 1;
  }
  std::string error;
  auto transport =
      manifold::remote::Transport::create(manifold::settings().remote.ucx_library, &error);
  if (!transport) {
    log_line("cannot start UCX: " + error);
    return 1;
  }
  manifold::server::ServedPlatform& served = *platform;
  manifold::server::PeerLinks peers(*transport);
  const bool listening = transport->listen(
      address, uint16_t(port),
      [&served, &peers, token, no_token](std::shared_ptr<manifold::remote::Connection> connection) {
        auto session = manifold::server::Session::start(served, peers, std::move(connection),
                                                        no_token ? "" : token, log_line);
        return session->handlers();
      },
      &error);
  if (!listening) {
    log_line(error);
    return 1;
  }
  std::signal(SIGINT, request_stop);
  std::signal(SIGTERM, request_stop);
  std::signal(SIGPIPE, SIG_IGN);
  std::ostringstream devices;
  for (size_t i = 0; i < served.devices().size(); ++i)
    devices << (i ? "; " : "") << served.device_name(i);
  log_line("listening on " + address + ":" + std::to_string(transport->listening_port()) +
           (no_token ? " (no token: any client is accepted)" : "") + ", serving " +
           std::to_string(served.devices().size()) + " device(s): " + devices.str());
  while (!stop_requested) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  log_line("stopping");
  transport.reset();  // ends every connection: sessions finish and release their objects
  for (int i = 0; i < 100 && manifold::server::Session::active() > 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  return 0;
}
