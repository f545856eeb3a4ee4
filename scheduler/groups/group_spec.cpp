// MANIFOLD_DEVICE_GROUPS: groups separated by ';', members by ','. A member is an index of the
// platform's devices (as `manifold devices` lists them), `gpu` (every GPU), `gpu/N` (every GPU
// partitioned equally into N sub-devices: CUDA green contexts), `cpu` (the CPU), or `cpu/N` (the
// CPU partitioned equally into N sub-devices).
#include <algorithm>
#include <charconv>
#include <string>

#include "core/log.h"
#include "scheduler/groups/group_device.h"

namespace manifold {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool parse_count(std::string_view s, size_t* out) {
  if (s.empty()) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size();
}

Device* first_cpu(std::span<Device* const> devices) {
  for (Device* d : devices)
    if ((d->info().type & CL_DEVICE_TYPE_CPU) && d->shares_host_memory()) return d;
  return nullptr;
}

// The CPU split into `n` equal sub-devices.
std::vector<Device*> cpu_parts(Device& cpu, size_t n, std::string* why) {
  const cl_uint units = cpu.info().max_compute_units;
  if (n < 2) return {&cpu};
  if (n > units) {
    *why = "cpu/" + std::to_string(n) + ": the CPU has " + std::to_string(units) + " cores";
    return {};
  }
  const cl_uint each = cl_uint(units / n);
  std::vector<Device*> parts;
  for (size_t i = 0; i < n; ++i)
    parts.push_back(cpu.create_sub_device(
        each, CL_DEVICE_PARTITION_EQUALLY,
        {CL_DEVICE_PARTITION_EQUALLY, cl_device_partition_property(each), 0}));
  return parts;
}

// The members one item names; empty with the reason in *why when it names none.
std::vector<Device*> members_of(std::string_view item, std::span<Device* const> devices,
                                std::string* why) {
  std::vector<Device*> out;
  if (item == "gpu" || item.starts_with("gpu/")) {
    size_t n = 1;
    std::string reasons;
    if (item.size() > 3 && (!parse_count(item.substr(4), &n) || n == 0 || n > 1024)) {
      *why = "'" + std::string(item) + "' is not gpu/N";
      return out;
    }
    for (Device* d : devices) {
      if (!(d->info().type & CL_DEVICE_TYPE_GPU) || d->is_group()) continue;
      if (n < 2) {
        out.push_back(d);
        continue;
      }
      // Sub-devices of one GPU work in its one memory: they split kernels like the CPU's parts.
      // A GPU that cannot be split so is left out.
      std::string not_split;
      const std::vector<Device*> parts = split_equally(*d, unsigned(n), true, &not_split);
      if (parts.empty()) {
        log_debug("MANIFOLD_DEVICE_GROUPS: %s left out of gpu/%zu: %s", d->info().name.c_str(), n,
                  not_split.c_str());
        if (!reasons.empty()) reasons += "; ";
        reasons += d->info().name + ": " + not_split;
      }
      out.insert(out.end(), parts.begin(), parts.end());
    }
    if (out.empty())
      *why = reasons.empty() ? "there is no GPU" : "no GPU splits so (" + reasons + ")";
    return out;
  }
  if (item == "cpu" || item.starts_with("cpu/")) {
    Device* cpu = first_cpu(devices);
    if (!cpu) {
      *why = "there is no CPU device";
      return out;
    }
    size_t n = 1;
    if (item.size() > 3 && !parse_count(item.substr(4), &n)) {
      *why = "'" + std::string(item) + "' is not cpu/N";
      return out;
    }
    return cpu_parts(*cpu, n, why);
  }
  size_t index = 0;
  if (!parse_count(item, &index)) {
    *why = "'" + std::string(item) + "' is neither a device index, gpu, gpu/N, cpu nor cpu/N";
    return out;
  }
  if (index >= devices.size()) {
    *why = "there is no device " + std::to_string(index);
    return out;
  }
  out.push_back(devices[index]);
  return out;
}

}  // namespace

std::vector<Device*> make_groups_from_spec(std::string_view spec,
                                           std::span<Device* const> devices) {
  std::vector<Device*> groups;
  while (!spec.empty()) {
    const size_t semicolon = spec.find(';');
    const std::string_view group = trim(spec.substr(0, semicolon));
    spec = semicolon == std::string_view::npos ? std::string_view() : spec.substr(semicolon + 1);
    if (group.empty()) continue;
    std::vector<Device*> members;
    std::string why;
    std::string_view rest = group;
    while (why.empty() && !rest.empty()) {
      const size_t comma = rest.find(',');
      const std::string_view item = trim(rest.substr(0, comma));
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
      if (item.empty()) continue;
      for (Device* d : members_of(item, devices, &why)) {
        if (std::find(members.begin(), members.end(), d) != members.end())
          why = "device " + d->info().name + " is named twice";
        members.push_back(d);
      }
    }
    if (why.empty() && members.empty()) why = "no members";
    if (!why.empty()) {
      log_debug("MANIFOLD_DEVICE_GROUPS: group '%.*s' left out: %s", int(group.size()),
                group.data(), why.c_str());
      continue;
    }
    std::vector<Ref<Device>> refs(members.begin(), members.end());
    groups.push_back(new GroupDevice(std::move(refs), {}, /*application_made=*/false));
  }
  return groups;
}

}  // namespace manifold
