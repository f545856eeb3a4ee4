// The devices of the manifold-servers that MANIFOLD_REMOTE names, listed after this machine's
// own. A server that cannot be reached, or refuses, contributes no devices (the debug log says
// why); so does a machine without UCX.
#include "backends/remote/remote_device.h"
#include "core/log.h"
#include "settings/settings.h"

namespace manifold::remote {

namespace {

class RemoteDriver final : public Driver {
 public:
  const char* name() const override { return "remote"; }
  std::vector<Device*> probe() override {
    const RemoteSettings& s = settings().remote;
    if (!s.invalid.empty())
      log_debug("remote: MANIFOLD_REMOTE items that are not host:port: %s", s.invalid.c_str());
    if (s.servers.empty()) return {};
    std::string error;
    std::shared_ptr<Transport> transport = Transport::create(s.ucx_library, &error);
    if (!transport) {
      log_debug("remote: no devices: %s", error.c_str());
      return {};
    }
    const std::string token = s.token_file.empty() ? "" : read_token_file(s.token_file);
    if (!s.token_file.empty() && token.empty())
      log_debug("remote: no token in %s (unreadable or empty)", s.token_file.c_str());
    std::vector<Device*> devices;
    for (const RemoteEndpoint& endpoint : s.servers) {
      auto link = ServerLink::connect(transport, endpoint, token, s.connect_timeout, &error);
      if (!link) {
        log_debug("remote: %s:%u: no devices: %s", endpoint.host.c_str(), endpoint.port,
                  error.c_str());
        continue;
      }
      for (uint32_t i = 0; i < link->devices().size(); ++i)
        devices.push_back(new RemoteDevice(link, i));
      log_debug("remote: %s: %zu device(s)", link->name().c_str(), link->devices().size());
    }
    return devices;
  }
};

const DriverRegistration kRemoteDriver(95, []() -> std::unique_ptr<Driver> {
  return std::make_unique<RemoteDriver>();
});

}  // namespace

}  // namespace manifold::remote
