// The subcommands of the `manifold` tool. Each returns the process exit code: 0 success,
// 1 nothing could run (no device, a failed run), 2 bad arguments.
#pragma once

#include <string>
#include <vector>

namespace manifold_tool {

int run_devices_command(const std::vector<std::string>& args);
int run_info_command(const std::vector<std::string>& args);
int run_cache_command(const std::vector<std::string>& args);
int run_bench_command(const std::vector<std::string>& args);
// `manifold bench --isolation`: GPU sub-devices against the whole GPU (tools/bench_isolation.cpp).
int run_isolation_bench(bool quick);
// Offline compilation with Manifold's compiler (no OpenCL, no device): tools/compile_command.cpp.
int run_compile_command(const std::vector<std::string>& args);

// Hidden subcommands: `manifold bench` runs each device in a child process through these.
int run_bench_device_worker(const std::vector<std::string>& args);
int run_bench_build_worker(const std::vector<std::string>& args);

}  // namespace manifold_tool
