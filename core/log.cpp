#include "core/log.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace manifold {

bool debug_enabled() {
  static const bool enabled = [] {
    const char* v = std::getenv("MANIFOLD_DEBUG");
    return v && *v && std::strcmp(v, "0") != 0;
  }();
  return enabled;
}

void log_debug(const char* format, ...) {
  if (!debug_enabled()) return;
  va_list args;
  va_start(args, format);
  std::fputs("[manifold] ", stderr);
  std::vfprintf(stderr, format, args);
  std::fputc('\n', stderr);
  va_end(args);
}

}  // namespace manifold
