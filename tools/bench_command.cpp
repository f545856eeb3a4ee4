// `manifold bench`: runs the fixed benchmark set on every selected device, each in its own child
// process (bench_worker.cpp), plus the host C++ reference (bench_host.cpp) and an external native
// peer program when present; prints the table and writes Markdown and a PNG plot on request.
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "bench_host.h"
#include "bench_report.h"
#include "cl_support.h"
#include "commands.h"
#include "settings/settings.h"
#include "subprocess.h"

namespace fs = std::filesystem;

namespace manifold_tool {
namespace {

struct BenchOptions {
  bool quick = false;
  bool strict = false;
  bool isolation = false;
  std::vector<std::string> selectors;
  std::string markdown_path, plot_path, peer_program;
};

// Progress on stderr: one line per subject; on a terminal, also a line rewritten per metric.
class Progress {
 public:
  Progress() : terminal_(isatty(2)) {}
  void subject(size_t index, size_t total, const std::string& text) {
    clear();
    std::fprintf(stderr, "bench: [%zu/%zu] %s\n", index, total, text.c_str());
  }
  void step(const std::string& text) {
    if (!terminal_) return;
    clear();
    std::fprintf(stderr, "  ... %s", text.c_str());
    std::fflush(stderr);
    open_ = true;
  }
  void clear() {
    if (open_) std::fprintf(stderr, "\r\033[K");
    open_ = false;
  }

 private:
  bool terminal_;
  bool open_ = false;
};

std::string read_first_line(const std::string& command) {
  std::string text;
  if (FILE* pipe = popen(command.c_str(), "r")) {
    char buffer[512];
    if (std::fgets(buffer, sizeof buffer, pipe)) text = buffer;
    pclose(pipe);
  }
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

std::string file_field(const char* path, const std::string& key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key, 0) == 0) {
      size_t start = line.find_first_not_of(" \t:=\"", key.size());
      std::string value = start == std::string::npos ? "" : line.substr(start);
      while (!value.empty() && (value.back() == '"' || value.back() == ' ')) value.pop_back();
      return value;
    }
  return {};
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return one + " / " + five + " / " + fifteen;
}

MachineInfo describe_machine() {
  MachineInfo machine;
  std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M", std::gmtime(&now));
  machine.date = date;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  machine.host = host;
  machine.cpu = file_field("/proc/cpuinfo", "model name");
  machine.cores = std::thread::hardware_concurrency();
  std::string memory_kb = file_field("/proc/meminfo", "MemTotal");
  machine.memory = memory_kb.empty() ? "?" : format_bytes(std::stoull(memory_kb) * 1024) + " RAM";
  machine.os = file_field("/etc/os-release", "PRETTY_NAME");
  utsname name{};
  if (uname(&name) == 0) machine.kernel = name.release;
  // A tree copied without .git (the GPU machines) names its commit through the environment.
  if (const std::string given = manifold::tool_settings().bench_commit; !given.empty()) {
    machine.commit = given;
  } else {
    std::string git = "git -C '" + std::string(MANIFOLD_SOURCE_DIR) + "' ";
    machine.commit = read_first_line(git + "rev-parse --short HEAD 2>/dev/null");
    if (machine.commit.empty())
      machine.commit = "unknown";
    else if (!read_first_line(git + "status --porcelain --untracked-files=no 2>/dev/null").empty())
      machine.uncommitted_changes = true;
  }
  machine.load_before = load_average();
  return machine;
}

// Parses one protocol line into the subject's cells; returns the metric named by "info running".
std::string take_line(const std::string& line, Subject& subject) {
  auto fields = split(line, '\t');
  // "#device<TAB>NAME" and "#driver<TAB>TEXT" are accepted as spellings of the info lines.
  if (fields.size() == 2 && (fields[0] == "#device" || fields[0] == "#driver"))
    fields = {"info", fields[0].substr(1), fields[1]};
  if (fields.size() < 2 || fields[0][0] == '#') return {};
  if (fields[0] == "split") {
    if (fields.size() < 5) return {};
    GroupSplit chosen{fields[1], fields[2], fields[3], {}};
    for (const std::string& fraction : split(fields[4], ','))
      chosen.fractions.push_back(std::strtod(fraction.c_str(), nullptr));
    subject.splits.push_back(std::move(chosen));
    return {};
  }
  if (fields[0] == "info") {
    if (fields.size() >= 3 && fields[1] == "running") return fields[2];
    if (fields.size() >= 3 && fields[1] == "device" && subject.description.empty())
      subject.description = fields[2];
    if (fields.size() >= 3 && fields[1] == "driver") subject.description += ", driver " + fields[2];
    return {};
  }
  if (!find_metric(fields[0])) return {};
  Cell cell;
  const std::string& value = fields[1];
  if (value == "FAIL") {
    cell.state = CellState::kFail;
  } else if (value == "ERROR") {
    cell.state = CellState::kError;
  } else if (value == "SKIP") {
    return {};
  } else {
    char* end = nullptr;
    cell.value = std::strtod(value.c_str(), &end);
    cell.state =
        end && *end == '\0' && std::isfinite(cell.value) ? CellState::kValue : CellState::kError;
    if (cell.state == CellState::kError) cell.note = "unreadable value '" + value + "'";
  }
  if (fields.size() >= 4) cell.note = fields[3];
  subject.cells[fields[0]] = cell;
  return fields[0];
}

// Marks every metric from `first_missing` on that the child did not report.
void mark_unreported(Subject& subject, const std::vector<std::string>& expected,
                     const ChildOutcome& outcome, const std::string& running) {
  CellState state = outcome.timed_out ? CellState::kTimeout
                    : outcome.signal  ? CellState::kCrash
                                      : CellState::kError;
  std::string last_error;
  if (!outcome.error_text.empty()) {
    auto lines = split(outcome.error_text, '\n');
    last_error = lines.empty() ? "" : lines.back();
  }
  for (const auto& metric : expected) {
    if (subject.cells.count(metric)) continue;
    Cell cell;
    cell.state = state;
    cell.note = metric == running ? "while running: " + outcome.describe()
                                  : "not reached: " + outcome.describe();
    if (!last_error.empty() && metric == running) cell.note += " (" + last_error + ")";
    subject.cells[metric] = cell;
  }
}

// The metrics the worker should report: every kernel metric, or those of MANIFOLD_BENCH_ONLY
// (the others are not measured, not missing).
std::vector<std::string> kernel_metric_names() {
  std::vector<std::string> names;
  for (const auto& metric : kMetrics)
    if (std::string(metric.name).rfind("build_", 0) != 0 && metric_selected(metric.name))
      names.push_back(metric.name);
  return names;
}

std::string make_temp_dir(const char* tag) {
  std::string pattern = std::string("/tmp/manifold-bench-") + tag + "-XXXXXX";
  if (!mkdtemp(pattern.data()))
    throw std::runtime_error("cannot create a temporary folder in /tmp");
  return pattern;
}

// Environments for build-time children: every cache we know of off (cold), or on in a private
// folder (cached). PoCL: POCL_KERNEL_CACHE/POCL_CACHE_DIR; Manifold: MANIFOLD_CACHE_DIR; NVIDIA:
// CUDA_CACHE_DISABLE/CUDA_CACHE_PATH (the driver's JIT cache).
using Environment = std::vector<std::pair<std::string, std::string>>;

Environment cold_environment(const std::string& vendors_dir, const std::string& empty_dir) {
  return {{"OCL_ICD_VENDORS", vendors_dir}, {"POCL_KERNEL_CACHE", "0"},
          {"POCL_CACHE_DIR", empty_dir},    {"MANIFOLD_CACHE_DIR", empty_dir},
          {"CUDA_CACHE_DISABLE", "1"},      {"CUDA_CACHE_PATH", empty_dir}};
}

Environment cached_environment(const std::string& vendors_dir, const std::string& cache_dir) {
  return {{"OCL_ICD_VENDORS", vendors_dir}, {"POCL_KERNEL_CACHE", "1"},
          {"POCL_CACHE_DIR", cache_dir},    {"MANIFOLD_CACHE_DIR", cache_dir},
          {"CUDA_CACHE_DISABLE", "0"},      {"CUDA_CACHE_PATH", cache_dir}};
}

std::string random_nonce() {
  std::random_device device;
  return std::to_string(device()) + "-" + std::to_string(device());
}

// One build-time figure: the median over `samples` children, each a fresh process.
// `from_il`: the program from SPIR-V; no figure (a blank cell) where the device takes none.
Cell measure_build(const DeviceRef& device, const Environment& environment,
                   const std::string& fixed_nonce, int samples, Progress& progress,
                   const char* metric, bool from_il = false) {
  std::vector<double> times;
  Cell problem;
  for (int sample = 0; sample < samples; ++sample) {
    progress.step(std::string(metric) + " " + std::to_string(sample + 1) + "/" +
                  std::to_string(samples));
    std::string nonce = fixed_nonce.empty() ? random_nonce() : fixed_nonce;
    Subject scratch;
    bool skipped = false;
    std::vector<std::string> argv = {self_executable(), "_bench-build", device.platform_name,
                                     std::to_string(device.device_index), nonce};
    if (from_il) argv.push_back("il");
    ChildOutcome outcome = run_child(argv, environment, 180, [&](const std::string& line) {
      auto fields = split(line, '\t');
      if (fields.size() >= 2 && fields[0] == "build_ms" && fields[1] == "SKIP") skipped = true;
      if (fields.size() >= 2 && fields[0] == "build_ms") {
        std::string renamed = std::string(metric) + line.substr(8);
        take_line(renamed, scratch);
      }
    });
    if (skipped) return Cell{};
    auto it = scratch.cells.find(metric);
    if (it != scratch.cells.end() && it->second.state == CellState::kValue) {
      times.push_back(it->second.value);
    } else if (it != scratch.cells.end()) {
      problem = it->second;
    } else {
      problem.state = outcome.timed_out ? CellState::kTimeout
                      : outcome.signal  ? CellState::kCrash
                                        : CellState::kError;
      problem.note = outcome.describe();
    }
  }
  if (problem.state != CellState::kMissing) return problem;
  Cell cell;
  cell.state = CellState::kValue;
  cell.value = median_of(times);
  return cell;
}

void run_kernel_worker(const DeviceRef& device, const BenchOptions& options, Subject& subject,
                       Progress& progress, const std::string& cache_dir);

void run_opencl_subject(const DeviceRef& device, const BenchOptions& options, Subject& subject,
                        Progress& progress) {
  BenchSizes sizes = bench_sizes(options.quick);
  std::string cache_dir = make_temp_dir("cache");
  std::string empty_dir = make_temp_dir("empty");
  std::string vendors = device.vendors_dir;

  // Build times first, while nothing else of this device has run. "Cold" is the first build of
  // a fresh process with every program and JIT cache off, not the first read of the driver's
  // and compiler's files from disk: one discarded child first brings those into the OS's file
  // cache, which on a freshly started machine costs any platform's first child several times its
  // build.
  if (device.group_member >= 0) {
    run_kernel_worker(device, options, subject, progress, cache_dir);
    std::error_code error;
    fs::remove_all(cache_dir, error);
    fs::remove_all(empty_dir, error);
    return;
  }
  progress.step("reading the platform's files once");
  measure_build(device, cold_environment(vendors, empty_dir), "", 1, progress, "build_cold_ms");
  subject.cells["build_cold_ms"] = measure_build(device, cold_environment(vendors, empty_dir), "",
                                                 sizes.build_samples, progress, "build_cold_ms");
  // The first cached-environment child fills the cache; the later ones are measured.
  progress.step("filling the program cache");
  std::string fixed_nonce = "cached-" + random_nonce();
  measure_build(device, cached_environment(vendors, cache_dir), fixed_nonce, 1, progress,
                "build_cached_ms");
  subject.cells["build_cached_ms"] =
      measure_build(device, cached_environment(vendors, cache_dir), fixed_nonce,
                    sizes.build_samples, progress, "build_cached_ms");
  // The same kernel from SPIR-V: no frontend in the path.
  Cell il_cold = measure_build(device, cold_environment(vendors, empty_dir), "",
                               sizes.build_samples, progress, "build_il_cold_ms", true);
  if (il_cold.state != CellState::kMissing) {
    subject.cells["build_il_cold_ms"] = il_cold;
    measure_build(device, cached_environment(vendors, cache_dir), fixed_nonce, 1, progress,
                  "build_il_cached_ms", true);
    subject.cells["build_il_cached_ms"] =
        measure_build(device, cached_environment(vendors, cache_dir), fixed_nonce,
                      sizes.build_samples, progress, "build_il_cached_ms", true);
  }

  run_kernel_worker(device, options, subject, progress, cache_dir);
  std::error_code error;
  fs::remove_all(cache_dir, error);
  fs::remove_all(empty_dir, error);
}

// The kernels: caches in a private folder so that the user's caches stay untouched.
void run_kernel_worker(const DeviceRef& device, const BenchOptions& options, Subject& subject,
                       Progress& progress, const std::string& cache_dir) {
  const std::string vendors = device.vendors_dir;
  std::vector<std::string> argv = {self_executable(), "_bench-device", device.platform_name,
                                   std::to_string(device.device_index)};
  if (options.quick) argv.push_back("--quick");
  if (device.group_member >= 0) argv.push_back("--member=" + std::to_string(device.group_member));
  std::string running;
  ChildOutcome outcome = run_child(argv, cached_environment(vendors, cache_dir),
                                   options.quick ? 300 : 900, [&](const std::string& line) {
                                     std::string metric = take_line(line, subject);
                                     if (line.rfind("info\trunning\t", 0) == 0) {
                                       running = metric;
                                       progress.step(metric);
                                     }
                                   });
  if (!outcome.succeeded() || subject.cells.size() < kMetricCount) {
    if (!outcome.succeeded() && !outcome.error_text.empty())
      std::fprintf(
          stderr, "bench: %s worker %s; its last output:\n%s\n", subject.label.c_str(),
          outcome.describe().c_str(),
          outcome.error_text
              .substr(outcome.error_text.size() > 2000 ? outcome.error_text.size() - 2000 : 0)
              .c_str());
    mark_unreported(subject, kernel_metric_names(), outcome, running);
  }
}

std::string find_peer_program(const BenchOptions& options) {
  if (!options.peer_program.empty()) return options.peer_program;
  if (const std::string peer = manifold::tool_settings().bench_cuda_peer; !peer.empty())
    return peer;
  fs::path beside = fs::path(self_executable()).parent_path().parent_path() / "bench" /
                    "cuda_native" / "manifold-cuda-native";
  std::error_code error;
  return fs::exists(beside, error) ? beside.string() : "";
}

// An external peer (bench/README.md): `PROGRAM [--quick]` printing protocol lines.
void run_peer_subject(const std::string& program, const BenchOptions& options, Subject& subject,
                      Progress& progress) {
  std::vector<std::string> argv = {program};
  if (options.quick) argv.push_back("--quick");
  std::string running;
  ChildOutcome outcome =
      run_child(argv, {}, options.quick ? 300 : 900, [&](const std::string& line) {
        std::string metric = take_line(line, subject);
        if (line.rfind("info\trunning\t", 0) == 0) running = metric;
        if (!metric.empty()) progress.step(metric);
      });
  if (!outcome.succeeded()) {
    std::fprintf(stderr, "bench: peer %s %s\n%s\n", program.c_str(), outcome.describe().c_str(),
                 outcome.error_text.c_str());
    // A peer that died leaves its remaining metrics marked; one that exited 0 may skip some.
    std::vector<std::string> all;
    for (const auto& metric : kMetrics) all.push_back(metric.name);
    mark_unreported(subject, all, outcome, running);
  }
  if (subject.description.empty()) subject.description = "native peer program " + program;
}

bool selected(const BenchOptions& options, const std::string& haystack, size_t display_index,
              bool by_index) {
  if (options.selectors.empty()) return true;
  for (const auto& selector : options.selectors) {
    if (by_index && selector == std::to_string(display_index)) return true;
    if (lower(haystack).find(lower(selector)) != std::string::npos) return true;
  }
  return false;
}

int parse_options(const std::vector<std::string>& args, BenchOptions& options) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    auto value = [&](const char* name) -> const std::string* {
      if (i + 1 >= args.size()) {
        std::fprintf(stderr, "manifold bench: %s needs a value\n", name);
        return nullptr;
      }
      return &args[++i];
    };
    if (arg == "--quick") {
      options.quick = true;
    } else if (arg == "--strict") {
      options.strict = true;
    } else if (arg == "--isolation") {
      options.isolation = true;
    } else if (arg == "--devices") {
      const std::string* list = value("--devices");
      if (!list) return 2;
      options.selectors = split(*list, ',');
      if (options.selectors.empty()) {
        std::fprintf(stderr, "manifold bench: --devices needs a non-empty list\n");
        return 2;
      }
    } else if (arg == "--markdown") {
      const std::string* path = value("--markdown");
      if (!path) return 2;
      options.markdown_path = *path;
    } else if (arg == "--plot") {
      const std::string* path = value("--plot");
      if (!path) return 2;
      options.plot_path = *path;
    } else if (arg == "--peer") {
      const std::string* path = value("--peer");
      if (!path) return 2;
      options.peer_program = *path;
    } else {
      std::fprintf(stderr, "manifold bench: unknown option '%s' (see `manifold --help`)\n",
                   arg.c_str());
      return 2;
    }
  }
  return 0;
}

}  // namespace

int run_bench_command(const std::vector<std::string>& args) {
  BenchOptions options;
  if (int status = parse_options(args, options)) return status;
  if (options.isolation) return run_isolation_bench(options.quick);

  std::vector<DeviceRef> devices = enumerate_devices();
  std::vector<const DeviceRef*> chosen;
  for (size_t i = 0; i < devices.size(); ++i)
    if (selected(options,
                 devices[i].label + " " + devices[i].platform_name + " " + devices[i].device_name,
                 i, true))
      chosen.push_back(&devices[i]);
  std::string peer = find_peer_program(options);
  bool run_peer = !peer.empty() && selected(options, "cuda native peer", devices.size(), false);
  bool run_host = selected(options, "host c++", devices.size(), false);

  // Every selector has to pick something: a typo must not silently shrink the comparison.
  for (const auto& selector : options.selectors) {
    bool used = false;
    for (size_t i = 0; i < devices.size(); ++i)
      used = used || selector_matches(selector, devices[i], i);
    used = used || lower("host c++").find(lower(selector)) != std::string::npos ||
           (!peer.empty() && lower("cuda native peer").find(lower(selector)) != std::string::npos);
    if (!used) {
      std::fprintf(stderr, "manifold bench: no device matches '%s'. Devices:\n", selector.c_str());
      for (size_t i = 0; i < devices.size(); ++i)
        std::fprintf(stderr, "  %zu  %s (%s)\n", i, devices[i].label.c_str(),
                     devices[i].device_name.c_str());
      std::fprintf(stderr, "  host  the C++ reference%s\n",
                   peer.empty() ? "" : "\n  cuda  the native CUDA peer");
      return 2;
    }
  }
  if (chosen.empty() && !run_peer) {
    std::fprintf(stderr,
                 devices.empty()
                     ? "manifold bench: no OpenCL device found: nothing to run\n"
                     : "manifold bench: the selection holds no OpenCL device: nothing to run\n");
    return 1;
  }

  // A device group is measured beside each of its members alone (its split against theirs).
  std::vector<DeviceRef> members;
  for (const DeviceRef* device : chosen) {
    const std::vector<cl_device_id> ids = group_members(device->device);
    for (size_t m = 0; m < ids.size(); ++m) {
      DeviceRef member = *device;
      member.device = ids[m];
      member.group_member = int(m);
      member.device_name = device_string(ids[m], CL_DEVICE_NAME);
      member.label = device->label + " member " + std::to_string(m);
      cl_device_type type = 0;
      clGetDeviceInfo(ids[m], CL_DEVICE_TYPE, sizeof type, &type, nullptr);
      member.type = type;
      members.push_back(std::move(member));
    }
  }
  for (const DeviceRef& member : members) chosen.push_back(&member);

  Report report;
  report.quick = options.quick;
  report.sizes = bench_sizes(options.quick);
  report.machine = describe_machine();
  Progress progress;
  size_t total = chosen.size() + (run_peer ? 1 : 0) + (run_host ? 1 : 0), index = 0;
  for (const DeviceRef* device : chosen) {
    Subject subject;
    subject.label = device->label;
    subject.type = type_name(device->type);
    subject.manifold = device->is_manifold();
    progress.subject(
        ++index, total,
        device->label + ": " + device->device_name + " (" + device->platform_name + ")");
    run_opencl_subject(*device, options, subject, progress);
    // "OpenCL 3.0 PoCL 3.1+debian  Linux, None+Asserts, ..." -> "OpenCL 3.0 PoCL 3.1+debian".
    auto version_words = split(platform_string(device->platform, CL_PLATFORM_VERSION), ' ');
    std::string version;
    for (size_t w = 0; w < version_words.size() && w < 4; ++w)
      version += (w ? " " : "") + version_words[w];
    subject.description = device->platform_name + " (" + version + "): " +
                          (subject.description.empty() ? device->device_name : subject.description);
    report.subjects.push_back(std::move(subject));
  }
  if (run_peer) {
    Subject subject;
    subject.label = "CUDA native";
    subject.type = "GPU";
    progress.subject(++index, total, "CUDA native: " + peer);
    run_peer_subject(peer, options, subject, progress);
    report.subjects.push_back(std::move(subject));
  }
  if (run_host) {
    Subject subject;
    subject.label = "Host C++";
    subject.type = "CPU";
    progress.subject(++index, total, "Host C++: triad and compute on every thread");
    run_host_subject(options.quick, subject);
    report.subjects.push_back(std::move(subject));
  }
  progress.clear();
  report.machine.load_after = load_average();

  std::printf("\n%s", render_text(report).c_str());
  int status = 0;
  if (!options.markdown_path.empty()) {
    std::ofstream out(options.markdown_path);
    out << render_markdown(report);
    if (!out) {
      std::fprintf(stderr, "manifold bench: cannot write %s\n", options.markdown_path.c_str());
      status = 1;
    } else {
      std::printf("\nMarkdown: %s\n", options.markdown_path.c_str());
    }
  }
  if (!options.plot_path.empty()) {
    std::string error;
    if (!write_plot_png(report, options.plot_path, error)) {
      std::fprintf(stderr, "manifold bench: cannot write the plot %s: %s\n",
                   options.plot_path.c_str(), error.c_str());
      status = 1;
    } else {
      std::printf("Plot: %s\n", options.plot_path.c_str());
    }
  }
  if (options.strict && has_problems(report)) status = 1;
  return status;
}

}  // namespace manifold_tool
