// The on-disk program cache: finished builds keyed by everything that decides their bytes, so a
// second run of an application builds in milliseconds.
//
// Key: a BLAKE3 digest of the source, the options, the whole Target (triple, CPU, features,
// OpenCL C version and features, extensions) and the compiler's identity (producer id, a hash
// of the embedded builtin library, and the size/mtime/inode of the file holding this code, so
// any rebuilt compiler misses).
//
// Entry file <dir>/v1/<digest hex>.mfc (little endian):
//   char   magic[8] = "MNFDCCH1"
//   uint64 payload size
//   uint64 xxh3-64 of the payload
//   payload: the 32-byte key digest, then the build log and the program binary (each
//            length-prefixed with a uint64).
// An entry is written to a unique temporary file in the same folder and renamed into place, so
// readers in other processes see either no entry or a whole one. A corrupt or truncated entry
// (bad magic, size, checksum, key or binary) is deleted and reported as a miss: the caller
// rebuilds and stores a fresh one. Cache I/O errors never fail a build.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "compiler/compiler.h"

namespace manifold::compiler::program_cache {

// The cache folder: $MANIFOLD_CACHE_DIR, else $HOME/.cache/manifold (what `manifold cache`
// reports). Empty when caching is off (MANIFOLD_CACHE_DIR set to "" or "off").
std::string directory();

// The key of a clBuildProgram from source.
std::string build_key(std::string_view source, std::string_view options, const Target& target);

// The path of the entry for a key (whether or not it exists); empty when caching is off.
std::string entry_path(const std::string& key);

// A successful build stored under `key`, or nullopt (missing, unreadable, corrupt: the bad
// entry is removed).
std::optional<BuildOutput> load(const std::string& key);
// Stores a successful build; failures to write are ignored.
void store(const std::string& key, const BuildOutput& output);

struct Stats {
  uint64_t entries = 0;
  uint64_t bytes = 0;
};
Stats stats();
// Removes every entry; returns how many were removed.
uint64_t clear();

}  // namespace manifold::compiler::program_cache
