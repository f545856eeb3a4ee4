// Every environment variable Manifold reads (README, "Environment variables"), in one place: the
// runtime's, read once at the first call into typed values; the compiler's and the `manifold`
// tool's, read when asked. Nothing else in the project calls getenv. The lowest layer: it
// includes nothing of the project.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace manifold {

// GPU transfers from and to pageable host memory (backends/gpu_stream/staging.h).
struct StagingSettings {
  enum class Mode { Chunks, Register, Off };
  Mode mode = Mode::Chunks;              // MANIFOLD_GPU_STAGING=chunks|register|off
  size_t slots = 4;                      // MANIFOLD_GPU_STAGING_SLOTS (2..16)
  size_t chunk_bytes = size_t{8} << 20;  // MANIFOLD_GPU_STAGING_CHUNK_MB (1..256)
  unsigned threads = 0;                  // MANIFOLD_GPU_STAGING_THREADS; 0: min(8, cores / 2)
};

// MANIFOLD_GPU_PARTITION: GPUs the platform lists as equal sub-devices in their place
// (core/platform.cpp). Items separated by ',': `N` splits every GPU that partitions into N,
// `I:N` the I-th GPU (from 0, in the order the drivers list them) into N, taking precedence.
struct GpuPartitionSettings {
  unsigned every = 0;                               // 0: none
  std::vector<std::pair<unsigned, unsigned>> gpus;  // (index, parts)
  std::string invalid;                              // the items that are neither, for the debug log
  // Into how many sub-devices the `index`-th GPU is split (0 or 1: it stays whole).
  unsigned parts_of(unsigned index) const {
    for (const auto& [gpu, parts] : gpus)
      if (gpu == index) return parts;
    return every;
  }
  bool any() const { return every > 1 || !gpus.empty(); }
};
// Parses MANIFOLD_GPU_PARTITION's value.
GpuPartitionSettings parse_gpu_partition(std::string_view text);

// Remote devices (backends/remote/) and manifold-server (server/).
struct RemoteEndpoint {
  std::string host;  // a name, an IPv4 address or an IPv6 address (given in brackets)
  uint16_t port = 0;
};
struct RemoteSettings {
  std::vector<RemoteEndpoint> servers;  // MANIFOLD_REMOTE: host:port,...
  std::string invalid;                  // the items that are not host:port, for the debug log
  // MANIFOLD_REMOTE_TOKEN: the file holding the shared secret that servers ask clients for.
  std::string token_file;
  // MANIFOLD_REMOTE_TIMEOUT_MS: how long a client waits for a server to answer its connection.
  std::chrono::milliseconds connect_timeout{5000};
  std::string ucx_library = "libucp.so.0";  // MANIFOLD_UCX_LIBRARY
};
// Parses MANIFOLD_REMOTE's value.
RemoteSettings parse_remote_servers(std::string_view text);
// The secret of a token file (MANIFOLD_REMOTE_TOKEN, manifold-server --token-file): its first
// line, blanks around it removed; empty when the file cannot be read.
std::string read_token_file(const std::string& path);

struct Settings {
  bool debug = false;            // MANIFOLD_DEBUG
  bool trace_migration = false;  // MANIFOLD_TRACE_MIGRATION
  int emulated_gpus = 0;         // MANIFOLD_EMULATED_GPUS (0..8)
  // MANIFOLD_DISABLE_<BACKEND> (CPU, CUDA, HIP, LEVEL_ZERO, EMULATED_GPU): the names of those
  // set to anything but 0; their drivers are not probed.
  std::set<std::string> disabled_backends;
  // MANIFOLD_DEVICES: a comma-separated list of the devices to show (core/platform.cpp:
  // device_selected); empty: every device.
  std::string devices;
  // MANIFOLD_DEVICE_GROUPS: `;`-separated groups of `,`-separated members (scheduler/groups:
  // parse_group_list), each listed as one more device after the physical ones.
  std::string device_groups;
  GpuPartitionSettings gpu_partition;        // MANIFOLD_GPU_PARTITION
  std::string cuda_driver = "libcuda.so.1";  // MANIFOLD_CUDA_DRIVER
  // MANIFOLD_HIP_RUNTIME: a HIP runtime library to load instead of libamdhip64.so.6/.5 (the
  // simulated one of the tests, HIP over CUDA on the GPU machines); empty: the installed one.
  std::string hip_runtime;
  // GPU stream queues (backends/gpu_stream/stream_queue.h).
  bool gpu_completion_eager = false;    // MANIFOLD_GPU_COMPLETION=eager|lazy
  uint64_t gpu_completion_batch = 256;  // MANIFOLD_GPU_COMPLETION_BATCH
  size_t gpu_launch_batch = 32;         // MANIFOLD_GPU_LAUNCH_BATCH (0 or 1: off; at most 1024)
  std::chrono::microseconds gpu_launch_batch_deadline{200};  // MANIFOLD_GPU_LAUNCH_BATCH_US
  StagingSettings staging;
  size_t svm_range_bytes = size_t{64} << 30;  // MANIFOLD_SVM_RANGE_GB (1..4096)
  RemoteSettings remote;
};

// The environment as it is now (tests that change it between cases).
Settings settings_from_environment();
// The process's settings, read at the first call. Thread-safe. Inline: the launch path asks
// for a few values per launch, and an inlined guard check costs next to nothing.
inline const Settings& settings() {
  static const Settings s = settings_from_environment();
  return s;
}

// The compiler's knobs (compiler/). Read at each call: a build may come long after start-up, and
// tests point the cache elsewhere between cases.
struct CompilerSettings {
  // Where built programs are kept: program_cache_directory().
  std::string cache_directory;
  std::string dump_directory;    // MANIFOLD_COMPILER_DUMP: each program's IR, as .ll files
  std::string nvptx_dump;        // MANIFOLD_NVPTX_DUMP: a file for the final NVPTX IR
  std::string nvptx_dump_input;  // MANIFOLD_NVPTX_DUMP_INPUT: a file for the NVPTX pipeline's input
  // Where CUDA's libdevice.10.bc may be, first found wins: MANIFOLD_LIBDEVICE (the file),
  // $CUDA_PATH and $CUDA_HOME (toolkits), then the usual install places.
  std::vector<std::string> libdevice_candidates;
};
CompilerSettings compiler_settings();

// The program cache's folder, for the compiler and the `manifold cache` command alike:
// MANIFOLD_CACHE_DIR, else ~/.cache/manifold; empty when caching is off (the variable set to ""
// or "off", or no home folder).
std::string program_cache_directory();
// MANIFOLD_CACHE_DIR as given (nullptr when unset), for messages.
const char* program_cache_variable();

// The `manifold` tool's knobs (tools/), read at each call.
struct ToolSettings {
  bool debug = false;            // MANIFOLD_TOOL_DEBUG: the tool's own diagnostics
  std::string bench_only;        // MANIFOLD_BENCH_ONLY: a comma-separated list of bench cases
  std::string bench_commit;      // MANIFOLD_BENCH_COMMIT: the commit a report names
  std::string bench_cuda_peer;   // MANIFOLD_BENCH_CUDA_PEER: the native CUDA peer's executable
  std::string bench_extra_icds;  // MANIFOLD_BENCH_EXTRA_ICDS: more ICD libraries, ':'-separated
  std::string bench_platform;    // MANIFOLD_BENCH_PLATFORM: the cross-backend bench's platform
  // The ICD loader's own variables, which the tool follows to find the same platforms it does.
  std::string icd_vendors;  // OCL_ICD_VENDORS
  bool icd_vendors_set = false;
  std::string icd_filenames;  // OCL_ICD_FILENAMES
  bool icd_filenames_set = false;
};
ToolSettings tool_settings();

}  // namespace manifold
