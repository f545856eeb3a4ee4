#include "core/platform.h"

#include <time.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/log.h"
#include "settings/settings.h"

namespace manifold {

cl_name_version name_version(const char* name, cl_version version) {
  cl_name_version nv{};
  nv.version = version;
  std::strncpy(nv.name, name, CL_NAME_VERSION_MAX_NAME_SIZE - 1);
  return nv;
}

std::string join_names(const std::vector<cl_name_version>& list) {
  std::string out;
  for (const auto& nv : list) {
    if (!out.empty()) out += ' ';
    out += nv.name;
  }
  return out;
}

namespace {
std::string lowercase(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}
// The root a sub-device's memory and programs come from.
Device* root_of(Device* d) {
  while (d->parent()) d = d->parent();
  return d;
}

// MANIFOLD_GPU_PARTITION: each GPU it names replaced by its equal sub-devices, listed as roots.
std::vector<Device*> partition_gpus(const std::vector<Device*>& found) {
  const GpuPartitionSettings& wanted = settings().gpu_partition;
  if (!wanted.invalid.empty())
    log_debug("MANIFOLD_GPU_PARTITION: '%s' is neither N nor I:N", wanted.invalid.c_str());
  if (!wanted.any()) return found;
  std::vector<Device*> out;
  unsigned gpu = 0;
  for (Device* d : found) {
    const unsigned parts = (d->info().type & CL_DEVICE_TYPE_GPU) ? wanted.parts_of(gpu++) : 0;
    if (parts < 2) {
      out.push_back(d);
      continue;
    }
    std::string why;
    const std::vector<Device*> subs =
        split_equally(*d, parts, /*report_partition_type=*/false, &why);
    if (subs.empty()) {
      log_debug("MANIFOLD_GPU_PARTITION: GPU %u (%s) stays whole: %s", gpu - 1,
                d->info().name.c_str(), why.c_str());
      out.push_back(d);
      continue;
    }
    for (Device* s : subs) {
      s->list_as_root();
      out.push_back(s);
    }
    log_debug("MANIFOLD_GPU_PARTITION: GPU %u (%s) listed as %zu sub-devices of %u compute units",
              gpu - 1, d->info().name.c_str(), subs.size(), subs.front()->info().max_compute_units);
  }
  return out;
}
}  // namespace

uint64_t host_time_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

Platform& Platform::get() {
  // Never destroyed: applications may call into the ICD from atexit handlers and other
  // static destructors.
  static Platform* platform = new Platform();
  return *platform;
}

Platform::Platform() {
  extensions_ = {
      name_version("cl_khr_icd", CL_MAKE_VERSION(1, 0, 0)),
      name_version("cl_khr_extended_versioning", CL_MAKE_VERSION(1, 0, 0)),
      // Every device has them (core/device_info.cpp).
      name_version("cl_khr_command_buffer", CL_MAKE_VERSION(0, 9, 8)),
      name_version("cl_khr_command_buffer_mutable_dispatch", CL_MAKE_VERSION(0, 9, 5)),
      name_version("cl_khr_command_buffer_multi_device", CL_MAKE_VERSION(0, 9, 2)),
      // Device groups (include/CL/cl_manifold.h).
      name_version("cl_mfld_device_group", CL_MAKE_VERSION(1, 0, 0)),
  };
  drivers_ = make_registered_drivers();
  std::vector<Device*> found;
  for (auto& driver : drivers_) {
    std::vector<Device*> listed;
    try {
      listed = driver->probe();
    } catch (const std::exception& e) {
      log_debug("driver %s failed to probe: %s", driver->name(), e.what());
    }
    log_debug("driver %s: %zu device(s)", driver->name(), listed.size());
    found.insert(found.end(), listed.begin(), listed.end());
  }
  // Partitioned GPUs are listed as their sub-devices, which groups and MANIFOLD_DEVICES name.
  found = partition_gpus(found);
  // Device groups are made of every device found (MANIFOLD_DEVICE_GROUPS names them by their
  // index in that list) and listed after them; MANIFOLD_DEVICES then picks from the whole list.
  std::vector<Device*> listed = found;
  const std::vector<Device*> composed = run_device_composers(found);
  listed.insert(listed.end(), composed.begin(), composed.end());
  std::vector<Device*> working;  // the devices shown, and the members of the groups shown
  const auto add_working = [&](Device* d) {
    if (std::find(working.begin(), working.end(), d) == working.end()) working.push_back(d);
  };
  for (size_t index = 0; index < listed.size(); ++index) {
    Device* d = listed[index];
    if (!device_selected(*d, index, settings().devices)) {
      log_debug("device %zu (%s) hidden by MANIFOLD_DEVICES", index, d->info().name.c_str());
      continue;
    }
    devices_.push_back(d);
    // Sub-devices work in their root's memory: the root takes the memory place.
    for (const Ref<Device>& member : d->members()) add_working(root_of(member.get()));
    if (!d->is_group()) add_working(root_of(d));
  }
  MemoryPlace next_place = kHostPlace + 1;
  for (Device* d : working) {
    if (d->shares_host_memory()) continue;
    // A device beyond the places a residency mask can name could not hold buffers.
    if (next_place == kMaxMemoryPlaces) {
      log_debug("device %s left out: more than %u GPUs", d->info().name.c_str(),
                kMaxMemoryPlaces - 1);
      std::erase(devices_, d);
      continue;
    }
    device_at_place_[next_place] = d;
    d->set_memory_place(next_place++);
  }
  // Before any device is handed out: a device that cannot take the SVM range reports no SVM.
  run_platform_setups(working);
  // Sub-devices copied their root's capabilities before the setups: what it lost they lose too.
  for (Device* d : devices_) {
    std::vector<Device*> subs{d};
    for (const Ref<Device>& member : d->members()) subs.push_back(member.get());
    for (Device* s : subs)
      if (!s->is_root() && !root_of(s)->info().svm_capabilities)
        s->disable_svm("its root device has none");
    // A group has SVM only where every member kept it: one address must be valid on each.
    if (std::any_of(d->members().begin(), d->members().end(),
                    [](const Ref<Device>& m) { return !m->info().svm_capabilities; }))
      d->disable_svm("a member has none");
  }
}

bool device_selected(const Device& device, size_t index, std::string_view selection) {
  if (selection.empty()) return true;
  const std::string name = lowercase(device.info().name);
  while (!selection.empty()) {
    const size_t comma = selection.find(',');
    const std::string item = lowercase(selection.substr(0, comma));
    selection = comma == std::string_view::npos ? std::string_view() : selection.substr(comma + 1);
    if (item.empty()) continue;
    if (std::all_of(item.begin(), item.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      if (item.size() < 10 && std::stoull(item) == index) return true;
    } else if (item == "cpu" || item == "gpu" || item == "accelerator") {
      const cl_device_type type = item == "cpu"   ? CL_DEVICE_TYPE_CPU
                                  : item == "gpu" ? CL_DEVICE_TYPE_GPU
                                                  : CL_DEVICE_TYPE_ACCELERATOR;
      if (device.info().type & type) return true;
    } else if (name.find(item) != std::string::npos) {
      return true;
    }
  }
  return false;
}

void Device::disable_svm(const char* why) {
  if (info_.svm_capabilities) log_debug("device %s: no SVM: %s", info_.name.c_str(), why);
  info_.svm_capabilities = 0;
}

std::vector<Device*> Platform::devices_of_type(cl_device_type type) const {
  std::vector<Device*> out;
  // The default device is the first one: the CPU,.
  if (type == CL_DEVICE_TYPE_DEFAULT) {
    if (!devices_.empty()) out.push_back(devices_.front());
    return out;
  }
  for (Device* d : devices_)
    if (type == CL_DEVICE_TYPE_ALL || (d->info().type & type)) out.push_back(d);
  return out;
}

std::string Platform::extensions_string() const { return join_names(extensions_); }

}  // namespace manifold
