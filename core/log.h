// Diagnostics for developers: MANIFOLD_DEBUG=1 prints them on stderr.
#pragma once

namespace manifold {

bool debug_enabled();
[[gnu::format(printf, 1, 2)]] void log_debug(const char* format, ...);

}  // namespace manifold
