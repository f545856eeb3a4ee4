// `manifold cache stats|clear`: the on-disk program cache. Entries are whatever files the
// compiler keeps under the cache folder; this command does not depend on their format.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "cl_support.h"
#include "commands.h"
#include "settings/settings.h"

namespace fs = std::filesystem;

namespace manifold_tool {
namespace {

struct CacheUsage {
  uint64_t files = 0;
  uint64_t bytes = 0;
};

CacheUsage measure(const fs::path& dir) {
  CacheUsage usage;
  std::error_code error;
  for (auto it = fs::recursive_directory_iterator(
           dir, fs::directory_options::skip_permission_denied, error);
       !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
    std::error_code entry_error;
    if (!it->is_regular_file(entry_error)) continue;
    ++usage.files;
    usage.bytes += it->file_size(entry_error);
  }
  return usage;
}

}  // namespace

int run_cache_command(const std::vector<std::string>& args) {
  if (args.size() != 1 || (args[0] != "stats" && args[0] != "clear")) {
    std::fprintf(stderr,
                 "usage: manifold cache stats|clear   (the folder is $MANIFOLD_CACHE_DIR, default "
                 "~/.cache/manifold)\n");
    return 2;
  }
  // The folder the compiler uses.
  const fs::path dir = manifold::program_cache_directory();
  if (dir.empty()) {
    const char* given = manifold::program_cache_variable();
    if (given)
      std::printf("the program cache is off (MANIFOLD_CACHE_DIR is set to \"%s\")\n", given);
    else
      std::printf("the program cache is off (no home folder and no MANIFOLD_CACHE_DIR)\n");
    return 0;
  }
  std::error_code error;
  bool exists = fs::is_directory(dir, error);
  if (!exists && fs::exists(dir, error)) {
    std::fprintf(stderr, "manifold cache: %s exists but is not a folder\n", dir.c_str());
    return 1;
  }
  CacheUsage usage = exists ? measure(dir) : CacheUsage{};
  if (args[0] == "stats") {
    std::printf("cache folder  %s%s\n", dir.c_str(), exists ? "" : " (does not exist yet)");
    std::printf("entries       %llu files\n", static_cast<unsigned long long>(usage.files));
    std::printf("size          %s (%llu bytes)\n", format_bytes(usage.bytes).c_str(),
                static_cast<unsigned long long>(usage.bytes));
    return 0;
  }
  // clear: remove everything inside the folder, keep the folder itself.
  if (!exists) {
    std::printf("cache folder %s does not exist: nothing to clear\n", dir.c_str());
    return 0;
  }
  uint64_t failures = 0;
  for (const auto& entry : fs::directory_iterator(dir, error)) {
    std::error_code remove_error;
    fs::remove_all(entry.path(), remove_error);
    if (remove_error) {
      std::fprintf(stderr, "manifold cache: cannot remove %s: %s\n", entry.path().c_str(),
                   remove_error.message().c_str());
      ++failures;
    }
  }
  if (error) {
    std::fprintf(stderr, "manifold cache: cannot read %s: %s\n", dir.c_str(),
                 error.message().c_str());
    return 1;
  }
  std::printf("removed %llu files (%s) from %s\n", static_cast<unsigned long long>(usage.files),
              format_bytes(usage.bytes).c_str(), dir.c_str());
  return failures ? 1 : 0;
}

}  // namespace manifold_tool
