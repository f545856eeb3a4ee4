#include "core/program.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <list>
#include <thread>

#include "core/device.h"
#include "core/group_binary.h"
#include "core/log.h"

namespace manifold {

bool options_allow_non_uniform(std::string_view options, bool from_il) {
  bool cl20 = from_il, uniform = false;
  size_t i = 0;
  while (i < options.size()) {
    while (i < options.size() && std::isspace(static_cast<unsigned char>(options[i]))) ++i;
    size_t end = i;
    while (end < options.size() && !std::isspace(static_cast<unsigned char>(options[end]))) ++end;
    const std::string_view token = options.substr(i, end - i);
    if (token == "-cl-uniform-work-group-size") uniform = true;
    if (token.starts_with("-cl-std=")) {
      const std::string_view v = token.substr(8);
      cl20 = v == "CL2.0" || v == "CL3.0" || v == "CLC++" || v == "CLC++1.0" || v == "CLC++2021";
    }
    i = end;
  }
  return cl20 && !uniform;
}

namespace {

double milliseconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// "frontend 12.1 ms, link builtins 3.0 ms, ...".
std::string describe(const compiler::StageTimes& times) {
  std::string text;
  char number[32];
  for (const auto& [stage, ms] : times) {
    std::snprintf(number, sizeof number, " %.1f ms", ms);
    text += (text.empty() ? "" : ", ") + stage + number;
  }
  return text;
}

class BuildThreads {
 public:
  ~BuildThreads() {
    std::list<Entry> all;
    {
      std::lock_guard lock(mutex_);
      all.swap(threads_);
    }
    for (Entry& entry : all) entry.thread.join();
  }
  void start(std::function<void()> work) {
    std::list<Entry> finished;
    std::lock_guard lock(mutex_);
    for (auto it = threads_.begin(); it != threads_.end();) {
      auto next = std::next(it);
      if (it->done->load()) finished.splice(finished.end(), threads_, it);
      it = next;
    }
    auto done = std::make_shared<std::atomic<bool>>(false);
    threads_.push_back(Entry{std::thread([work = std::move(work), done] {
                               work();
                               done->store(true);
                             }),
                             done});
    // Joining finished threads is quick: they only had `done->store` left.
    for (Entry& entry : finished) entry.thread.join();
  }

 private:
  struct Entry {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  std::mutex mutex_;
  std::list<Entry> threads_;
};

BuildThreads& build_threads() {
  static BuildThreads threads;
  return threads;
}

}  // namespace

void run_build_thread(std::function<void()> work) { build_threads().start(std::move(work)); }

bool same_target(const compiler::Target& a, const compiler::Target& b) {
  return &a == &b ||
         (a.triple == b.triple && a.cpu == b.cpu && a.features == b.features &&
          a.opencl_c_version == b.opencl_c_version && a.opencl_version == b.opencl_version &&
          a.opencl_c_features == b.opencl_c_features && a.extensions == b.extensions &&
          a.fp64 == b.fp64 && a.fp16 == b.fp16 && a.images == b.images &&
          a.sub_group_size == b.sub_group_size && a.spirv == b.spirv);
}

DeviceBuild combine_member_builds(const Device& group, std::vector<DeviceBuild> members) {
  DeviceBuild out;
  if (members.empty()) return out;
  // The first member's result stands for the group (its binary, kernels and loaded form); the
  // log names each member whose log differs from the first's.
  out = members.front();
  out.members.clear();
  for (size_t m = 1; m < members.size(); ++m) {
    if (members[m].status != CL_BUILD_SUCCESS) out.status = members[m].status;
    if (members[m].log != members.front().log)
      out.log += "\n" + group.members()[m]->info().name + ":\n" + members[m].log;
  }
  if (out.log.size() != members.front().log.size())
    out.log = group.members()[0]->info().name + ":\n" + out.log;
  // Its binary holds every member's, so that it builds the same group again.
  std::vector<std::vector<uint8_t>> binaries;
  for (const DeviceBuild& m : members) binaries.push_back(m.binary);
  out.binary = bundle_member_binaries(binaries);
  out.members = std::move(members);
  return out;
}

Program::Program(Ref<Context> context, Origin origin, std::string source)
    : context_(std::move(context)), origin_(origin), source_(std::move(source)) {
  devices_ = context_->devices();
  builds_.resize(devices_.size());
}

Program::Program(Ref<Context> context, const std::vector<Device*>& devices,
                 const std::vector<std::vector<uint8_t>>& binaries)
    : context_(std::move(context)), origin_(Origin::Binary) {
  auto from_binary = [](std::vector<uint8_t> binary) {
    DeviceBuild b;
    b.binary = std::move(binary);
    std::string error;
    if (auto info = compiler::inspect_binary(b.binary, &error)) {
      b.type = info->type;
      b.kernels = std::move(info->kernels);
      b.options = std::move(info->options);
    }
    return b;
  };
  for (size_t i = 0; i < devices.size(); ++i) {
    devices_.emplace_back(devices[i]);
    auto members = devices[i]->is_group() && is_group_binary(binaries[i])
                       ? unbundle_member_binaries(binaries[i], nullptr)
                       : std::nullopt;
    if (!members) {
      builds_.push_back(from_binary(binaries[i]));
      continue;
    }
    // A group's container: each member starts from its own binary; the first stands for all.
    DeviceBuild group;
    for (std::vector<uint8_t>& m : *members) group.members.push_back(from_binary(std::move(m)));
    group.type = group.members.front().type;
    group.kernels = group.members.front().kernels;
    group.options = group.members.front().options;
    group.binary = binaries[i];
    builds_.push_back(std::move(group));
  }
}

DeviceBuild Program::build_of(const Device& device) const {
  std::lock_guard lock(mutex_);
  auto own_build = [&](const Device* d) -> const DeviceBuild* {
    for (size_t i = 0; i < devices_.size(); ++i)
      if (devices_[i].get() == d) return &builds_[i];
    return nullptr;
  };
  // The spec: a program binary built for a parent device can be used by all its sub-devices;
  // one that has no build of its own answers with its nearest ancestor's (CTS device_partition
  // builds for the parent of a context's sub-devices, then asks each for its build status).
  const DeviceBuild* found = own_build(&device);
  for (const Device* d = device.parent(); d && (!found || found->status == CL_BUILD_NONE);
       d = d->parent())
    if (const DeviceBuild* b = own_build(d); b && b->status != CL_BUILD_NONE) found = b;
  // A member of a group of the program's devices: its build within the group (the binary the
  // group was given, for a program from binaries).
  for (size_t i = 0; i < devices_.size() && (!found || found->status == CL_BUILD_NONE); ++i) {
    const auto& members = devices_[i]->members();
    for (size_t m = 0; m < members.size(); ++m) {
      if (members[m].get() != &device) continue;
      const DeviceBuild& group = builds_[i];
      found = m < group.members.size() ? &group.members[m] : &group;
    }
  }
  return found ? *found : DeviceBuild{};
}

void Program::set_spec_constant(uint32_t spec_id, std::vector<uint8_t> value) {
  std::lock_guard lock(mutex_);
  spec_values_[spec_id] = std::move(value);
}

compiler::SpecConstantValues Program::spec_constants() const {
  std::lock_guard lock(mutex_);
  return spec_values_;
}

std::string Program::last_build_options() const {
  std::lock_guard lock(mutex_);
  return last_options_;
}

std::vector<compiler::KernelInfo> Program::kernels() const {
  std::lock_guard lock(mutex_);
  for (const DeviceBuild& b : builds_)
    if (b.status == CL_BUILD_SUCCESS && b.type == compiler::BinaryType::Executable)
      return b.kernels;
  return {};
}

bool Program::any_executable() const {
  std::lock_guard lock(mutex_);
  return std::any_of(builds_.begin(), builds_.end(), [](const DeviceBuild& b) {
    return b.status == CL_BUILD_SUCCESS && b.type == compiler::BinaryType::Executable;
  });
}

namespace {
// A build as kernel creation needs it: everything but the binaries (and the log).
DeviceBuild without_binaries(const DeviceBuild& b) {
  DeviceBuild copy;
  copy.status = b.status;
  copy.options = b.options;
  copy.type = b.type;
  copy.kernels = b.kernels;
  copy.loaded = b.loaded;
  for (const DeviceBuild& m : b.members) copy.members.push_back(without_binaries(m));
  return copy;
}
}  // namespace

std::vector<std::pair<Device*, DeviceBuild>> Program::executables() const {
  std::lock_guard lock(mutex_);
  std::vector<std::pair<Device*, DeviceBuild>> out;
  for (size_t i = 0; i < devices_.size(); ++i) {
    const DeviceBuild& b = builds_[i];
    if (b.status != CL_BUILD_SUCCESS || b.type != compiler::BinaryType::Executable || !b.loaded)
      continue;
    out.emplace_back(devices_[i].get(), without_binaries(b));
  }
  return out;
}

std::vector<size_t> Program::step_indices(const std::vector<Device*>& requested) const {
  std::vector<size_t> indices;
  for (size_t i = 0; i < devices_.size(); ++i)
    if (requested.empty() ||
        std::find(requested.begin(), requested.end(), devices_[i].get()) != requested.end())
      indices.push_back(i);
  return indices;
}

void Program::reserve_step(const std::vector<Device*>& requested) {
  std::lock_guard lock(mutex_);
  check(!building_, CL_INVALID_OPERATION, "a build of this program is already running");
  check(attached_kernels_.load() == 0, CL_INVALID_OPERATION, "kernels are attached to the program");
  building_ = true;
  reserved_ = true;
  for (size_t i : step_indices(requested)) builds_[i].status = CL_BUILD_IN_PROGRESS;
}

bool Program::building() const {
  std::lock_guard lock(mutex_);
  return building_;
}

// Runs one build step per device, sharing the work among devices with the same target.
// `step(device) -> compiler::BuildOutput`.
template <class Step>
bool Program::run_step(const std::vector<Device*>& requested, const std::string& options,
                       bool shareable, Step step) {
  std::vector<size_t> indices;
  {
    std::lock_guard lock(mutex_);
    if (reserved_) {
      reserved_ = false;  // reserve_step() checked, marked and set building_
    } else {
      check(!building_, CL_INVALID_OPERATION, "a build of this program is already running");
      check(attached_kernels_.load() == 0, CL_INVALID_OPERATION,
            "kernels are attached to the program");
      building_ = true;
    }
    indices = step_indices(requested);
    last_options_ = options;
    for (size_t i : indices) builds_[i].status = CL_BUILD_IN_PROGRESS;
  }

  std::vector<std::pair<const compiler::Target*, DeviceBuild>> done;  // per distinct target
  // One device's build: the step's result (shared with an earlier device of the same target
  // where `shareable`), loaded on the device when it is an executable.
  auto build_one = [&](Device& device) {
    const compiler::Target& target = device.compiler_target();
    DeviceBuild result;
    auto same = std::find_if(done.begin(), done.end(),
                             [&](auto& d) { return same_target(*d.first, target); });
    if (shareable && same != done.end()) {
      result = same->second;
    } else {
      compiler::BuildOutput out;
      const auto started = std::chrono::steady_clock::now();
      try {
        out = step(device);
      } catch (const std::exception& e) {
        // A throwing step must not leave the program marked as building forever.
        out.success = false;
        out.log = std::string("internal compiler error: ") + e.what();
      }
      result.options = options;
      result.log = std::move(out.log);
      result.type = out.type;
      result.binary = std::move(out.binary);
      result.kernels = std::move(out.kernels);
      result.status = out.success ? CL_BUILD_SUCCESS : CL_BUILD_ERROR;
      if (debug_enabled())
        log_debug("program %p for %s: %.1f ms%s (%s)", static_cast<const void*>(this),
                  device.info().name.c_str(), milliseconds_since(started),
                  out.from_cache ? " from the program cache" : "",
                  describe(out.stage_times).c_str());
      done.emplace_back(&target, result);
    }
    if (result.status == CL_BUILD_SUCCESS && result.type == compiler::BinaryType::Executable) {
      // Each device has its own copy of program-scope variables: a device group keeps the
      // program's kernels on one member.
      if (compiler::global_variables_size(result.binary) > 0)
        for (compiler::KernelInfo& k : result.kernels) k.footprint.program_variables = true;
      std::string error;
      const auto started = std::chrono::steady_clock::now();
      result.loaded = device.load_program(result.binary, &error);
      log_debug("program %p loaded on %s in %.1f ms", static_cast<const void*>(this),
                device.info().name.c_str(), milliseconds_since(started));
      if (!result.loaded) {
        result.status = CL_BUILD_ERROR;
        result.log += "\nthe device could not load the program: " + error;
      }
    }
    return result;
  };

  bool all_ok = true;
  std::vector<DeviceBuild> results;
  for (size_t i : indices) {
    Device& device = *devices_[i];
    DeviceBuild result;
    if (device.is_group()) {
      // A group builds for each of its members; its own build is theirs together.
      std::vector<DeviceBuild> members;
      for (const Ref<Device>& member : device.members()) members.push_back(build_one(*member));
      result = combine_member_builds(device, std::move(members));
    } else {
      result = build_one(device);
    }
    all_ok = all_ok && result.status == CL_BUILD_SUCCESS;
    results.push_back(std::move(result));
  }

  std::lock_guard lock(mutex_);
  for (size_t k = 0; k < indices.size(); ++k) builds_[indices[k]] = std::move(results[k]);
  building_ = false;
  return all_ok;
}

bool Program::build(const std::vector<Device*>& devices, const std::string& options) {
  if (origin_ == Origin::Binary) {
    // A program from binaries: compiled objects and libraries are linked, executables loaded.
    // Each device has a binary of its own: nothing is shared.
    return run_step(devices, options, /*shareable=*/false, [&](Device& device) {
      DeviceBuild prior = build_of(device);
      compiler::BuildOutput out;
      if (prior.type == compiler::BinaryType::Executable) {
        out.success = true;
        out.binary = prior.binary;
        out.kernels = prior.kernels;
        out.type = prior.type;
        return out;
      }
      std::vector<std::span<const uint8_t>> objects{prior.binary};
      return compiler::link(objects, options, device.compiler_target());
    });
  }
  if (origin_ == Origin::IL) {
    const compiler::SpecConstantValues spec_values = spec_constants();
    return run_step(devices, options, /*shareable=*/true, [&](Device& device) {
      return compiler::build_il(il(), options, device.compiler_target(), spec_values);
    });
  }
  return run_step(devices, options, /*shareable=*/true, [&](Device& device) {
    return compiler::build(source_, options, device.compiler_target());
  });
}

bool Program::compile(const std::vector<Device*>& devices, const std::string& options,
                      const std::vector<std::pair<std::string, std::string>>& headers) {
  if (origin_ == Origin::IL) {
    // The spec: headers are ignored for a program from IL.
    const compiler::SpecConstantValues spec_values = spec_constants();
    return run_step(devices, options, /*shareable=*/true, [&](Device& device) {
      return compiler::compile_il(il(), options, device.compiler_target(), spec_values);
    });
  }
  return run_step(devices, options, /*shareable=*/true, [&](Device& device) {
    return compiler::compile(source_, options, headers, device.compiler_target());
  });
}

bool Program::link(const std::vector<Device*>& devices, const std::string& options,
                   const std::vector<Program*>& inputs) {
  // The inputs may hold different binaries per device: nothing is shared.
  return run_step(devices, options, /*shareable=*/false, [&](Device& device) {
    std::vector<DeviceBuild> parts;
    for (Program* p : inputs) parts.push_back(p->build_of(device));
    std::vector<std::span<const uint8_t>> objects;
    for (const DeviceBuild& b : parts) objects.emplace_back(b.binary);
    return compiler::link(objects, options, device.compiler_target());
  });
}

}  // namespace manifold
