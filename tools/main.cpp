// `manifold`: list and describe the OpenCL devices of every platform the loader sees (Manifold's
// first), run the benchmark set on all of them, and manage Manifold's program cache.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "cl_support.h"
#include "commands.h"

namespace {

const char* kUsage =
    "usage: manifold <command> [options]\n"
    "\n"
    "commands:\n"
    "  devices                 one line per OpenCL device of every platform (Manifold's first)\n"
    "  info [DEVICE]           details of every device, or of those DEVICE picks\n"
    "  bench [options]         the benchmark set on every device; a table with ratios against "
    "peers\n"
    "      --quick             smaller problems, fewer repetitions (about a minute per CPU "
    "device)\n"
    "      --devices LIST      comma-separated: indexes from `manifold devices`, or name "
    "fragments\n"
    "                          (manifold, pocl, nvidia, cpu, gpu...), 'host' (C++ reference), "
    "'cuda' "
    "(native peer)\n"
    "      --markdown FILE.md  also write the table, the machine and the commit as Markdown\n"
    "      --plot FILE.png     also draw the results as a bar chart\n"
    "      --icd LIBRARY       also load this OpenCL library (repeatable; see "
    "MANIFOLD_BENCH_EXTRA_ICDS)\n"
    "      --peer PROGRAM      the native peer program (default: MANIFOLD_BENCH_CUDA_PEER, or the "
    "build's\n"
    "                          bench/cuda_native/manifold-cuda-native)\n"
    "      --strict            exit 1 when any result is FAIL/ERROR/CRASH\n"
    "      --isolation         instead: GPU sub-devices (green contexts) against the whole GPU:\n"
    "                          a small loop beside a saturated sibling, two halves vs the whole\n"
    "  compile --device-target TARGET FILE.cl -o OUT [build options]\n"
    "                          compile offline for TARGET (x86-64, sm_XY, gfxNNN; see "
    "`manifold compile -h`)\n"
    "  cache stats|clear       Manifold's on-disk program cache ($MANIFOLD_CACHE_DIR, default "
    "~/.cache/manifold)\n"
    "\n"
    "DEVICE and --devices entries: an index from `manifold devices`, or a case-insensitive "
    "fragment of\n"
    "\"<platform> <type> <device name>\".\n"
    "The loader sees the system's ICDs (/etc/OpenCL/vendors) plus this build's Manifold, or "
    "exactly\n"
    "$OCL_ICD_VENDORS when set; MANIFOLD_BENCH_EXTRA_ICDS=lib1.so:lib2.so adds unregistered ICDs\n"
    "(NVIDIA's libnvidia-opencl.so.1 is added automatically when installed but not registered).\n";

// Pulls the repeatable --icd LIBRARY options out: they shape the loader setup, before any cl* call.
std::vector<std::string> take_icd_options(std::vector<std::string>& args) {
  std::vector<std::string> libraries, rest;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--icd" && i + 1 < args.size()) {
      libraries.push_back(args[++i]);
    } else if (args[i].rfind("--icd=", 0) == 0) {
      libraries.push_back(args[i].substr(6));
    } else {
      rest.push_back(args[i]);
    }
  }
  args = rest;
  return libraries;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace manifold_tool;
  if (argc < 2) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  std::string command = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  if (command == "-h" || command == "--help" || command == "help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  try {
    // Children of `manifold bench` get their vendors folder from the parent.
    if (command == "_bench-device") return run_bench_device_worker(args);
    if (command == "_bench-build") return run_bench_build_worker(args);
    if (command == "cache") return run_cache_command(args);
    if (command == "compile") return run_compile_command(args);
    if (command != "devices" && command != "info" && command != "bench") {
      std::fprintf(stderr, "manifold: unknown command '%s'\n\n%s", command.c_str(), kUsage);
      return 2;
    }
    std::vector<std::string> icd_libraries = take_icd_options(args);
    prepare_icd_vendors(icd_libraries);
    std::atexit(remove_icd_setup);
    if (command == "devices") return run_devices_command(args);
    if (command == "info") return run_info_command(args);
    return run_bench_command(args);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "manifold: %s\n", error.what());
    return 1;
  }
}
