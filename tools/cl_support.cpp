#include "cl_support.h"
#include "include/CL/cl_manifold.h"
#include "settings/settings.h"

#include <CL/cl_icd.h>
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

namespace fs = std::filesystem;

namespace manifold_tool {

ClError::ClError(const std::string& call, cl_int code)
    : std::runtime_error(call + " returned " + cl_error_name(code)), code_(code) {}

const char* cl_error_name(cl_int code) {
  switch (code) {
#define NAME(c) \
  case c:       \
    return #c;
    NAME(CL_SUCCESS)
    NAME(CL_DEVICE_NOT_FOUND)
    NAME(CL_DEVICE_NOT_AVAILABLE)
    NAME(CL_COMPILER_NOT_AVAILABLE)
    NAME(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    NAME(CL_OUT_OF_RESOURCES)
    NAME(CL_OUT_OF_HOST_MEMORY)
    NAME(CL_PROFILING_INFO_NOT_AVAILABLE)
    NAME(CL_MEM_COPY_OVERLAP)
    NAME(CL_IMAGE_FORMAT_MISMATCH)
    NAME(CL_IMAGE_FORMAT_NOT_SUPPORTED)
    NAME(CL_BUILD_PROGRAM_FAILURE)
    NAME(CL_MAP_FAILURE)
    NAME(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    NAME(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    NAME(CL_COMPILE_PROGRAM_FAILURE)
    NAME(CL_LINKER_NOT_AVAILABLE)
    NAME(CL_LINK_PROGRAM_FAILURE)
    NAME(CL_DEVICE_PARTITION_FAILED)
    NAME(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
    NAME(CL_INVALID_VALUE)
    NAME(CL_INVALID_DEVICE_TYPE)
    NAME(CL_INVALID_PLATFORM)
    NAME(CL_INVALID_DEVICE)
    NAME(CL_INVALID_CONTEXT)
    NAME(CL_INVALID_QUEUE_PROPERTIES)
    NAME(CL_INVALID_COMMAND_QUEUE)
    NAME(CL_INVALID_HOST_PTR)
    NAME(CL_INVALID_MEM_OBJECT)
    NAME(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
    NAME(CL_INVALID_IMAGE_SIZE)
    NAME(CL_INVALID_SAMPLER)
    NAME(CL_INVALID_BINARY)
    NAME(CL_INVALID_BUILD_OPTIONS)
    NAME(CL_INVALID_PROGRAM)
    NAME(CL_INVALID_PROGRAM_EXECUTABLE)
    NAME(CL_INVALID_KERNEL_NAME)
    NAME(CL_INVALID_KERNEL_DEFINITION)
    NAME(CL_INVALID_KERNEL)
    NAME(CL_INVALID_ARG_INDEX)
    NAME(CL_INVALID_ARG_VALUE)
    NAME(CL_INVALID_ARG_SIZE)
    NAME(CL_INVALID_KERNEL_ARGS)
    NAME(CL_INVALID_WORK_DIMENSION)
    NAME(CL_INVALID_WORK_GROUP_SIZE)
    NAME(CL_INVALID_WORK_ITEM_SIZE)
    NAME(CL_INVALID_GLOBAL_OFFSET)
    NAME(CL_INVALID_EVENT_WAIT_LIST)
    NAME(CL_INVALID_EVENT)
    NAME(CL_INVALID_OPERATION)
    NAME(CL_INVALID_GL_OBJECT)
    NAME(CL_INVALID_BUFFER_SIZE)
    NAME(CL_INVALID_MIP_LEVEL)
    NAME(CL_INVALID_GLOBAL_WORK_SIZE)
    NAME(CL_INVALID_PROPERTY)
    NAME(CL_INVALID_IMAGE_DESCRIPTOR)
    NAME(CL_INVALID_COMPILER_OPTIONS)
    NAME(CL_INVALID_LINKER_OPTIONS)
    NAME(CL_INVALID_DEVICE_PARTITION_COUNT)
    NAME(CL_INVALID_PIPE_SIZE)
    NAME(CL_INVALID_DEVICE_QUEUE)
    NAME(CL_INVALID_SPEC_ID)
    NAME(CL_MAX_SIZE_RESTRICTION_EXCEEDED)
#undef NAME
    case -1001:
      return "CL_PLATFORM_NOT_FOUND_KHR";
    default:
      return "an unknown error code";
  }
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(separator, start);
    if (end == std::string::npos) end = text.size();
    if (end > start) parts.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

// ---------------------------------------------------------------------------------------------
// ICD vendors folder

namespace {

IcdSetup g_icd_setup;

std::string read_icd_library(const fs::path& icd_file) {
  std::ifstream in(icd_file);
  std::string line;
  std::getline(in, line);
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\n'))
    line.pop_back();
  return line;
}

std::vector<IcdEntry> icd_files_in(const fs::path& location) {
  std::vector<IcdEntry> entries;
  std::error_code error;
  if (fs::is_regular_file(location, error)) {
    entries.push_back({location.filename().string(), read_icd_library(location), {}});
    return entries;
  }
  std::vector<fs::path> files;
  for (const auto& item : fs::directory_iterator(location, error))
    if (item.path().extension() == ".icd") files.push_back(item.path());
  std::sort(files.begin(), files.end());
  for (const auto& file : files)
    entries.push_back({file.filename().string(), read_icd_library(file), {}});
  return entries;
}

bool names_library(const IcdEntry& entry, const std::string& fragment) {
  return fs::path(entry.library).filename().string().find(fragment) != std::string::npos;
}

// "libpocl.so.2.12.0" and "/usr/lib/libpocl.so.2" are one ICD: compare names up to ".so".
std::string library_stem(const std::string& library) {
  std::string name = fs::path(library).filename().string();
  return name.substr(0, name.find(".so"));
}

// NVIDIA installs its OpenCL library without registering an .icd on the GPU machines.
std::string find_unregistered_nvidia_opencl() {
  for (const char* dir : {"/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib",
                          "/usr/local/nvidia/lib64", "/usr/local/nvidia/lib"}) {
    fs::path candidate = fs::path(dir) / "libnvidia-opencl.so.1";
    std::error_code error;
    if (fs::exists(candidate, error)) return candidate.string();
  }
  return {};
}

void write_icd(const fs::path& dir, const IcdEntry& entry) {
  fs::create_directories(dir);
  std::ofstream out(dir / entry.name);
  out << entry.library << "\n";
}

}  // namespace

IcdSetup& prepare_icd_vendors(const std::vector<std::string>& extra_libraries) {
  if (!g_icd_setup.root.empty()) return g_icd_setup;
  std::vector<IcdEntry> entries;
  const manifold::ToolSettings settings = manifold::tool_settings();
  if (!settings.icd_vendors.empty()) {
    // The user chose what the loader sees: take it as it is.
    entries = icd_files_in(settings.icd_vendors);
  } else {
    fs::path build_icd = fs::path(MANIFOLD_BUILD_ICD_DIR) / "manifold.icd";
    std::error_code error;
    bool have_build_icd = fs::exists(build_icd, error);
    for (auto& entry : icd_files_in("/etc/OpenCL/vendors")) {
      // This tool belongs to a build tree: its own library replaces an installed Manifold.
      if (have_build_icd && names_library(entry, "libManifoldOpenCL")) continue;
      entries.push_back(entry);
    }
    if (have_build_icd)
      entries.insert(entries.begin(), {"manifold.icd", read_icd_library(build_icd), {}});
  }

  std::vector<std::string> extras = extra_libraries;
  for (auto& library : split(settings.bench_extra_icds, ':')) extras.push_back(library);
  // Both loaders also load the libraries of OCL_ICD_FILENAMES (the GPU machines set it). Take them
  // into the folder and drop the variable, so that a child restricted to one platform's folder
  // sees that platform only. (The Khronos loader also cuts the variable short in place.)
  if (settings.icd_filenames_set) {
    for (auto& library : split(settings.icd_filenames, ':')) extras.push_back(library);
    unsetenv("OCL_ICD_FILENAMES");
  }
  bool has_nvidia = std::any_of(entries.begin(), entries.end(), [](const IcdEntry& e) {
    return names_library(e, "libnvidia-opencl");
  });
  if (!has_nvidia) {
    std::string nvidia = find_unregistered_nvidia_opencl();
    if (!nvidia.empty()) extras.push_back(nvidia);
  }
  for (const auto& library : extras) {
    bool known = std::any_of(entries.begin(), entries.end(), [&](const IcdEntry& e) {
      return library_stem(e.library) == library_stem(library);
    });
    if (known) continue;
    std::string stem = fs::path(library).filename().string();
    stem = stem.substr(0, stem.find('.'));
    entries.push_back(
        {"extra-" + std::to_string(entries.size()) + "-" + stem + ".icd", library, {}});
  }

  char root_template[] = "/tmp/manifold-icd-XXXXXX";
  if (!mkdtemp(root_template)) throw std::runtime_error("cannot create a temporary folder in /tmp");
  g_icd_setup.root = root_template;
  // Folder names end in "/": the Khronos loader (CUDA's libOpenCL.so.1) appends file names to
  // OCL_ICD_VENDORS without a separator; ocl-icd accepts either.
  g_icd_setup.all_dir = g_icd_setup.root + "/all/";
  fs::create_directories(g_icd_setup.all_dir);
  for (size_t i = 0; i < entries.size(); ++i) {
    auto& entry = entries[i];
    write_icd(g_icd_setup.all_dir, entry);
    entry.single_dir = g_icd_setup.root + "/only-" + std::to_string(i) + "/";
    write_icd(entry.single_dir, entry);
  }
  g_icd_setup.entries = entries;
  setenv("OCL_ICD_VENDORS", g_icd_setup.all_dir.c_str(), 1);
  return g_icd_setup;
}

void remove_icd_setup() {
  if (g_icd_setup.root.empty()) return;
  std::error_code error;
  fs::remove_all(g_icd_setup.root, error);
  g_icd_setup.root.clear();
}

// ---------------------------------------------------------------------------------------------
// Enumeration

std::string platform_string(cl_platform_id platform, cl_platform_info what) {
  size_t size = 0;
  if (clGetPlatformInfo(platform, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return {};
  std::string text(size, '\0');
  if (clGetPlatformInfo(platform, what, size, text.data(), nullptr) != CL_SUCCESS) return {};
  text.resize(text.find('\0') == std::string::npos ? size : text.find('\0'));
  return text;
}

std::string device_string(cl_device_id device, cl_device_info what) {
  size_t size = 0;
  if (clGetDeviceInfo(device, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return {};
  std::string text(size, '\0');
  if (clGetDeviceInfo(device, what, size, text.data(), nullptr) != CL_SUCCESS) return {};
  text.resize(text.find('\0') == std::string::npos ? size : text.find('\0'));
  return text;
}

std::vector<size_t> device_sizes(cl_device_id device, cl_device_info what) {
  size_t size = 0;
  if (clGetDeviceInfo(device, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return {};
  std::vector<size_t> values(size / sizeof(size_t));
  if (clGetDeviceInfo(device, what, size, values.data(), nullptr) != CL_SUCCESS) return {};
  return values;
}

std::string type_name(cl_device_type type) {
  if (type & CL_DEVICE_TYPE_GPU) return "GPU";
  if (type & CL_DEVICE_TYPE_CPU) return "CPU";
  if (type & CL_DEVICE_TYPE_ACCELERATOR) return "ACC";
  if (type & CL_DEVICE_TYPE_CUSTOM) return "CUSTOM";
  return "?";
}

std::string short_platform_name(const std::string& platform_name) {
  std::string name = lower(platform_name);
  if (name.find("manifold") != std::string::npos) return "Manifold";
  if (name.find("portable computing language") != std::string::npos ||
      name.find("pocl") != std::string::npos)
    return "PoCL";
  if (name.find("nvidia") != std::string::npos) return "NVIDIA OpenCL";
  if (name.find("intel") != std::string::npos) return "Intel OpenCL";
  if (name.find("amd") != std::string::npos) return "AMD OpenCL";
  if (name.find("rusticl") != std::string::npos) return "rusticl";
  return platform_name.substr(0, 16);
}

std::string format_bytes(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, unit == 0 || value >= 100 ? "%.0f %s" : "%.1f %s", value,
                units[unit]);
  return text;
}

namespace {

// Which .icd produced this platform: the library holding the platform's dispatch table. ICD
// platforms start with a pointer to their dispatch table (cl_icd.h), so dladdr on one of its
// entries names the vendor library; dlopen(RTLD_NOLOAD) on both names compares them as loaded.
std::string vendors_dir_for(cl_platform_id platform) {
  const auto* dispatch = *reinterpret_cast<cl_icd_dispatch* const*>(platform);
  Dl_info info{};
  if (!dispatch || !dladdr(reinterpret_cast<void*>(dispatch->clGetPlatformInfo), &info) ||
      !info.dli_fname)
    return g_icd_setup.all_dir;
  void* platform_library = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  std::string result = g_icd_setup.all_dir;
  for (const auto& entry : g_icd_setup.entries) {
    void* entry_library = dlopen(entry.library.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    bool same = entry_library && entry_library == platform_library;
    if (entry_library) dlclose(entry_library);
    if (same) {
      result = entry.single_dir;
      break;
    }
  }
  if (platform_library) dlclose(platform_library);
  if (manifold::tool_settings().debug)
    std::fprintf(stderr, "manifold: platform dispatch in %s -> vendors folder %s\n", info.dli_fname,
                 result.c_str());
  return result;
}

}  // namespace

std::vector<DeviceRef> enumerate_devices() {
  cl_uint platform_count = 0;
  cl_int status = clGetPlatformIDs(0, nullptr, &platform_count);
  if (status == -1001 /* CL_PLATFORM_NOT_FOUND_KHR */ || platform_count == 0) return {};
  cl_check(status, "clGetPlatformIDs");
  std::vector<cl_platform_id> platforms(platform_count);
  cl_check(clGetPlatformIDs(platform_count, platforms.data(), nullptr), "clGetPlatformIDs");

  std::vector<DeviceRef> devices;
  for (cl_uint p = 0; p < platform_count; ++p) {
    std::string platform_name = platform_string(platforms[p], CL_PLATFORM_NAME);
    cl_uint device_count = 0;
    status = clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 0, nullptr, &device_count);
    if (status == CL_DEVICE_NOT_FOUND || device_count == 0) continue;
    if (status != CL_SUCCESS) {
      std::fprintf(stderr, "manifold: platform '%s': clGetDeviceIDs returned %s; skipped\n",
                   platform_name.c_str(), cl_error_name(status));
      continue;
    }
    std::vector<cl_device_id> ids(device_count);
    cl_check(clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, device_count, ids.data(), nullptr),
             "clGetDeviceIDs");
    std::string vendors_dir = g_icd_setup.root.empty() ? "" : vendors_dir_for(platforms[p]);
    for (cl_uint d = 0; d < device_count; ++d) {
      DeviceRef ref;
      ref.platform = platforms[p];
      ref.device = ids[d];
      ref.loader_platform_index = static_cast<int>(p);
      ref.device_index = static_cast<int>(d);
      ref.platform_name = platform_name;
      ref.platform_short = short_platform_name(platform_name);
      ref.device_name = device_string(ids[d], CL_DEVICE_NAME);
      ref.type = device_value<cl_device_type>(ids[d], CL_DEVICE_TYPE);
      ref.vendors_dir = vendors_dir;
      devices.push_back(ref);
    }
  }
  std::stable_sort(devices.begin(), devices.end(), [](const DeviceRef& a, const DeviceRef& b) {
    return a.is_manifold() && !b.is_manifold();
  });

  // Labels: "<platform> <type>", numbered when a platform has several devices of one type.
  std::map<std::string, int> label_count;
  for (auto& device : devices) ++label_count[device.platform_short + " " + type_name(device.type)];
  std::map<std::string, int> label_seen;
  for (auto& device : devices) {
    std::string base = device.platform_short + " " + type_name(device.type);
    device.label = base;
    if (label_count[base] > 1) device.label += " " + std::to_string(label_seen[base]++);
  }
  return devices;
}

bool selector_matches(const std::string& selector, const DeviceRef& device, size_t display_index) {
  if (selector == std::to_string(display_index)) return true;
  std::string haystack =
      lower(device.label + " " + device.platform_name + " " + device.device_name);
  return haystack.find(lower(selector)) != std::string::npos;
}

std::vector<cl_device_id> group_members(cl_device_id device) {
  size_t size = 0;
  if (clGetDeviceInfo(device, CL_DEVICE_GROUP_MEMBERS_MFLD, 0, nullptr, &size) != CL_SUCCESS ||
      size == 0)
    return {};
  std::vector<cl_device_id> members(size / sizeof(cl_device_id));
  if (clGetDeviceInfo(device, CL_DEVICE_GROUP_MEMBERS_MFLD, size, members.data(), nullptr) !=
      CL_SUCCESS)
    return {};
  return members;
}

std::vector<float> group_split(cl_kernel kernel, cl_device_id device) {
  size_t size = 0;
  if (clGetKernelWorkGroupInfo(kernel, device, CL_KERNEL_GROUP_SPLIT_MFLD, 0, nullptr, &size) !=
          CL_SUCCESS ||
      size == 0)
    return {};
  std::vector<float> split(size / sizeof(float));
  if (clGetKernelWorkGroupInfo(kernel, device, CL_KERNEL_GROUP_SPLIT_MFLD, size, split.data(),
                               nullptr) != CL_SUCCESS)
    return {};
  return split;
}

}  // namespace manifold_tool
