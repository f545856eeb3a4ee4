#include "core/log.h"

#include <cstdarg>
#include <cstdio>

#include "settings/settings.h"

namespace manifold {

bool debug_enabled() { return settings().debug; }

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
