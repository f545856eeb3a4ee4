#include "settings/settings.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>

namespace manifold {
namespace {

const char* value_of(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}
bool flag(const char* name) {
  const char* v = value_of(name);
  return v && std::string_view(v) != "0";
}
// A positive number, or `otherwise` when unset or not a positive number.
long long number(const char* name, long long otherwise) {
  const char* v = value_of(name);
  const long long parsed = v ? std::atoll(v) : 0;
  return parsed > 0 ? parsed : otherwise;
}

bool parse_unsigned(std::string_view text, unsigned* out) {
  if (text.empty() || text.size() > 6) return false;
  unsigned v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + unsigned(c - '0');
  }
  *out = v;
  return true;
}

// Calls `take(item)` for each non-empty item of a comma-separated list, blanks around it removed.
template <class Take>
void for_each_item(std::string_view text, Take&& take) {
  while (!text.empty()) {
    const size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!item.empty()) take(item);
  }
}

}  // namespace

GpuPartitionSettings parse_gpu_partition(std::string_view text) {
  GpuPartitionSettings out;
  for_each_item(text, [&](std::string_view item) {
    const size_t colon = item.find(':');
    unsigned index = 0, parts = 0;
    if (colon == std::string_view::npos && parse_unsigned(item, &parts)) {
      out.every = parts;
    } else if (colon != std::string_view::npos && parse_unsigned(item.substr(0, colon), &index) &&
               parse_unsigned(item.substr(colon + 1), &parts)) {
      out.gpus.emplace_back(index, parts);
    } else {
      if (!out.invalid.empty()) out.invalid += ',';
      out.invalid += item;
    }
  });
  return out;
}

RemoteSettings parse_remote_servers(std::string_view text) {
  RemoteSettings out;
  for_each_item(text, [&](std::string_view item) {
    const size_t colon = item.rfind(':');
    std::string_view host = colon == std::string_view::npos ? item : item.substr(0, colon);
    unsigned port = 0;
    if (host.size() > 2 && host.front() == '[' && host.back() == ']')
      host = host.substr(1, host.size() - 2);
    const bool ok = colon != std::string_view::npos && !host.empty() &&
                    parse_unsigned(item.substr(colon + 1), &port) && port > 0 && port < 65536 &&
                    (host.find(':') == std::string_view::npos || item.front() == '[');
    if (ok) {
      out.servers.push_back({std::string(host), uint16_t(port)});
    } else {
      if (!out.invalid.empty()) out.invalid += ',';
      out.invalid += item;
    }
  });
  return out;
}

std::string read_token_file(const std::string& path) {
  std::string token;
  std::ifstream in(path);
  if (!in || !std::getline(in, token)) return {};
  const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  while (!token.empty() && blank(token.back())) token.pop_back();
  while (!token.empty() && blank(token.front())) token.erase(token.begin());
  return token;
}

Settings settings_from_environment() {
  Settings s;
  s.debug = flag("MANIFOLD_DEBUG");
  s.trace_migration = value_of("MANIFOLD_TRACE_MIGRATION") != nullptr;
  s.emulated_gpus = int(std::min(number("MANIFOLD_EMULATED_GPUS", 0), 8LL));
  for (char** variable = environ; variable && *variable; ++variable) {
    const std::string_view entry(*variable);
    const size_t equals = entry.find('=');
    if (entry.starts_with("MANIFOLD_DISABLE_") && equals != std::string_view::npos &&
        flag(std::string(entry.substr(0, equals)).c_str()))
      s.disabled_backends.emplace(entry.substr(0, equals));
  }
  if (const char* v = value_of("MANIFOLD_DEVICES")) s.devices = v;
  if (const char* v = value_of("MANIFOLD_DEVICE_GROUPS")) s.device_groups = v;
  if (const char* v = value_of("MANIFOLD_GPU_PARTITION")) s.gpu_partition = parse_gpu_partition(v);
  if (const char* v = value_of("MANIFOLD_CUDA_DRIVER")) s.cuda_driver = v;
  if (const char* v = value_of("MANIFOLD_HIP_RUNTIME")) s.hip_runtime = v;
  if (const char* v = value_of("MANIFOLD_GPU_COMPLETION"))
    s.gpu_completion_eager = std::string_view(v) == "eager";
  s.gpu_completion_batch = uint64_t(number("MANIFOLD_GPU_COMPLETION_BATCH", 256));
  if (const char* v = value_of("MANIFOLD_GPU_LAUNCH_BATCH")) {
    const long long n = std::atoll(v);
    s.gpu_launch_batch = n > 1 ? size_t(std::min(n, 1024LL)) : 0;
  }
  s.gpu_launch_batch_deadline =
      std::chrono::microseconds(number("MANIFOLD_GPU_LAUNCH_BATCH_US", 200));
  if (const char* v = value_of("MANIFOLD_GPU_STAGING")) {
    const std::string_view m = v;
    s.staging.mode = m == "register" ? StagingSettings::Mode::Register
                     : m == "off"    ? StagingSettings::Mode::Off
                                     : StagingSettings::Mode::Chunks;
  }
  s.staging.slots = size_t(std::clamp(number("MANIFOLD_GPU_STAGING_SLOTS", 4), 2LL, 16LL));
  s.staging.chunk_bytes = size_t(std::clamp(number("MANIFOLD_GPU_STAGING_CHUNK_MB", 8), 1LL, 256LL))
                          << 20;
  s.staging.threads = unsigned(std::min(number("MANIFOLD_GPU_STAGING_THREADS", 0), 256LL));
  s.svm_range_bytes = size_t(std::clamp(number("MANIFOLD_SVM_RANGE_GB", 64), 1LL, 4096LL)) << 30;
  if (const char* v = value_of("MANIFOLD_REMOTE")) s.remote = parse_remote_servers(v);
  if (const char* v = value_of("MANIFOLD_REMOTE_TOKEN")) s.remote.token_file = v;
  s.remote.connect_timeout = std::chrono::milliseconds(number("MANIFOLD_REMOTE_TIMEOUT_MS", 5000));
  if (const char* v = value_of("MANIFOLD_UCX_LIBRARY")) s.remote.ucx_library = v;
  return s;
}

CompilerSettings compiler_settings() {
  CompilerSettings s;
  s.cache_directory = program_cache_directory();
  if (const char* v = value_of("MANIFOLD_COMPILER_DUMP")) s.dump_directory = v;
  if (const char* v = value_of("MANIFOLD_NVPTX_DUMP")) s.nvptx_dump = v;
  if (const char* v = value_of("MANIFOLD_NVPTX_DUMP_INPUT")) s.nvptx_dump_input = v;
  if (const char* v = value_of("MANIFOLD_LIBDEVICE")) s.libdevice_candidates.push_back(v);
  for (const char* toolkit : {"CUDA_PATH", "CUDA_HOME"})
    if (const char* v = value_of(toolkit))
      s.libdevice_candidates.push_back(std::string(v) + "/nvvm/libdevice/libdevice.10.bc");
  s.libdevice_candidates.push_back("/usr/local/cuda/nvvm/libdevice/libdevice.10.bc");
  s.libdevice_candidates.push_back("/usr/lib/nvidia-cuda-toolkit/libdevice/libdevice.10.bc");
  return s;
}

const char* program_cache_variable() { return std::getenv("MANIFOLD_CACHE_DIR"); }

std::string program_cache_directory() {
  if (const char* dir = program_cache_variable()) {
    if (!*dir || std::string_view(dir) == "off") return {};
    return dir;
  }
  if (const char* home = value_of("HOME")) return std::string(home) + "/.cache/manifold";
  return {};
}

ToolSettings tool_settings() {
  ToolSettings s;
  s.debug = value_of("MANIFOLD_TOOL_DEBUG") != nullptr;
  if (const char* v = value_of("MANIFOLD_BENCH_ONLY")) s.bench_only = v;
  if (const char* v = value_of("MANIFOLD_BENCH_COMMIT")) s.bench_commit = v;
  if (const char* v = value_of("MANIFOLD_BENCH_CUDA_PEER")) s.bench_cuda_peer = v;
  if (const char* v = value_of("MANIFOLD_BENCH_EXTRA_ICDS")) s.bench_extra_icds = v;
  if (const char* v = value_of("MANIFOLD_BENCH_PLATFORM")) s.bench_platform = v;
  if (const char* v = value_of("OCL_ICD_VENDORS")) {
    s.icd_vendors = v;
    s.icd_vendors_set = true;
  }
  if (const char* v = std::getenv("OCL_ICD_FILENAMES")) {
    s.icd_filenames = v;
    s.icd_filenames_set = true;
  }
  return s;
}

}  // namespace manifold
