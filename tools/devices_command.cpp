// `manifold devices` and `manifold info [DEVICE]`.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cl_support.h"
#include "commands.h"
#include "settings/settings.h"

namespace manifold_tool {
namespace {

bool has_extension(cl_device_id device, const char* name) {
  // Each name between spaces, so that a name is not found inside a longer one.
  std::string extensions = " ";
  extensions += device_string(device, CL_DEVICE_EXTENSIONS);
  extensions += ' ';
  std::string word = " ";
  word += name;
  word += ' ';
  return extensions.find(word) != std::string::npos;
}

// The optional features that tell devices apart, as short words.
std::string key_features(cl_device_id device) {
  std::string features;
  auto add = [&](bool present, const char* word) {
    if (!present) return;
    if (!features.empty()) features += " ";
    features += word;
  };
  add(device_value<cl_device_fp_config>(device, CL_DEVICE_DOUBLE_FP_CONFIG) != 0, "fp64");
  add(has_extension(device, "cl_khr_fp16"), "fp16");
  add(device_value<cl_bool>(device, CL_DEVICE_IMAGE_SUPPORT) == CL_TRUE, "images");
  add(device_value<cl_device_svm_capabilities>(device, CL_DEVICE_SVM_CAPABILITIES) != 0, "svm");
  add(!device_string(device, CL_DEVICE_IL_VERSION).empty(), "spirv");
  add(device_value<cl_uint>(device, CL_DEVICE_MAX_NUM_SUB_GROUPS) > 0, "subgroups");
  add(has_extension(device, "cl_khr_int64_base_atomics"), "int64-atomics");
  add(has_extension(device, "cl_khr_command_buffer"), "command-buffers");
  add(has_extension(device, "cl_arm_import_memory_host"), "import-memory");
  return features;
}

// The first "N.M" in a version string: "OpenCL C 1.2 " -> "1.2".
std::string version_number(const std::string& version) {
  for (const auto& word : split(version, ' '))
    if (word.size() >= 3 && std::isdigit(static_cast<unsigned char>(word[0])) && word[1] == '.')
      return word;
  return "?";
}

// OpenCL 3.0 devices keep CL_DEVICE_OPENCL_C_VERSION at 1.2 for old applications; the highest
// entry of CL_DEVICE_OPENCL_C_ALL_VERSIONS is the real answer there.
std::string highest_opencl_c_version(cl_device_id device) {
  size_t size = 0;
  cl_version highest = 0;
  if (clGetDeviceInfo(device, CL_DEVICE_OPENCL_C_ALL_VERSIONS, 0, nullptr, &size) == CL_SUCCESS &&
      size > 0) {
    std::vector<cl_name_version> versions(size / sizeof(cl_name_version));
    if (clGetDeviceInfo(device, CL_DEVICE_OPENCL_C_ALL_VERSIONS, size, versions.data(), nullptr) ==
        CL_SUCCESS)
      for (const auto& version : versions) highest = std::max(highest, version.version);
  }
  if (highest == 0) return version_number(device_string(device, CL_DEVICE_OPENCL_C_VERSION));
  return std::to_string(CL_VERSION_MAJOR(highest)) + "." +
         std::to_string(CL_VERSION_MINOR(highest));
}

void print_device_line(size_t index, const DeviceRef& device) {
  cl_device_id id = device.device;
  std::string name = device.device_name;
  if (name.size() > 40) name = name.substr(0, 37) + "...";
  std::string versions = "CL " + version_number(device_string(id, CL_DEVICE_VERSION)) + " C " +
                         highest_opencl_c_version(id);
  std::printf("%-3zu %-14s %-4s %-40s %4u  %10s  %-12s %s\n", index, device.platform_short.c_str(),
              type_name(device.type).c_str(), name.c_str(),
              device_value<cl_uint>(id, CL_DEVICE_MAX_COMPUTE_UNITS),
              format_bytes(device_value<cl_ulong>(id, CL_DEVICE_GLOBAL_MEM_SIZE)).c_str(),
              versions.c_str(), key_features(id).c_str());
}

std::string join_sizes(const std::vector<size_t>& values) {
  std::string text;
  for (size_t value : values) text += (text.empty() ? "" : " x ") + std::to_string(value);
  return text;
}

std::string fp_config(cl_device_fp_config config) {
  if (config == 0) return "not supported";
  std::string text;
  auto add = [&](cl_device_fp_config bit, const char* word) {
    if (config & bit) text += std::string(text.empty() ? "" : " ") + word;
  };
  add(CL_FP_DENORM, "denorm");
  add(CL_FP_INF_NAN, "inf-nan");
  add(CL_FP_ROUND_TO_NEAREST, "round-nearest");
  add(CL_FP_ROUND_TO_ZERO, "round-zero");
  add(CL_FP_ROUND_TO_INF, "round-inf");
  add(CL_FP_FMA, "fma");
  add(CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT, "correct-div-sqrt");
  add(CL_FP_SOFT_FLOAT, "soft-float");
  return text;
}

void print_wrapped(const char* key, const std::string& words) {
  std::printf("  %-30s", key);
  size_t column = 0;
  for (const auto& word : split(words, ' ')) {
    if (column > 0 && column + word.size() > 68) {
      std::printf("\n  %-30s", "");
      column = 0;
    }
    std::printf("%s%s", column ? " " : "", word.c_str());
    column += word.size() + 1;
  }
  std::printf("\n");
}

void print_device_details(size_t index, const DeviceRef& device) {
  cl_device_id id = device.device;
  auto line = [](const char* key, const std::string& value) {
    std::printf("  %-30s%s\n", key, value.c_str());
  };
  auto number = [](auto value) { return std::to_string(value); };
  std::printf("[%zu] %s — %s\n", index, device.label.c_str(), device.device_name.c_str());
  line("platform",
       device.platform_name + " (" + platform_string(device.platform, CL_PLATFORM_VERSION) + ")");
  line("platform vendor", platform_string(device.platform, CL_PLATFORM_VENDOR));
  line("device vendor", device_string(id, CL_DEVICE_VENDOR));
  line("device version", device_string(id, CL_DEVICE_VERSION));
  line("driver version", device_string(id, CL_DRIVER_VERSION));
  line("OpenCL C version", device_string(id, CL_DEVICE_OPENCL_C_VERSION));
  line("type", type_name(device.type));
  line("compute units", number(device_value<cl_uint>(id, CL_DEVICE_MAX_COMPUTE_UNITS)));
  line("max clock (MHz)", number(device_value<cl_uint>(id, CL_DEVICE_MAX_CLOCK_FREQUENCY)));
  line("global memory", format_bytes(device_value<cl_ulong>(id, CL_DEVICE_GLOBAL_MEM_SIZE)));
  line("max allocation", format_bytes(device_value<cl_ulong>(id, CL_DEVICE_MAX_MEM_ALLOC_SIZE)));
  line("global cache",
       format_bytes(device_value<cl_ulong>(id, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE)) + ", line " +
           number(device_value<cl_uint>(id, CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE)) + " B");
  line("local memory",
       format_bytes(device_value<cl_ulong>(id, CL_DEVICE_LOCAL_MEM_SIZE)) +
           (device_value<cl_device_local_mem_type>(id, CL_DEVICE_LOCAL_MEM_TYPE) == CL_LOCAL
                ? " (dedicated)"
                : " (global)"));
  line("constant buffer",
       format_bytes(device_value<cl_ulong>(id, CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE)));
  line("max work-group size", number(device_value<size_t>(id, CL_DEVICE_MAX_WORK_GROUP_SIZE)));
  line("max work-item sizes", join_sizes(device_sizes(id, CL_DEVICE_MAX_WORK_ITEM_SIZES)));
  line("preferred vector width float",
       number(device_value<cl_uint>(id, CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT)) + ", native " +
           number(device_value<cl_uint>(id, CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT)));
  line("address bits", number(device_value<cl_uint>(id, CL_DEVICE_ADDRESS_BITS)));
  line("single precision",
       fp_config(device_value<cl_device_fp_config>(id, CL_DEVICE_SINGLE_FP_CONFIG)));
  line("double precision",
       fp_config(device_value<cl_device_fp_config>(id, CL_DEVICE_DOUBLE_FP_CONFIG)));
  line("images", device_value<cl_bool>(id, CL_DEVICE_IMAGE_SUPPORT) ? "yes" : "no");
  cl_device_svm_capabilities svm =
      device_value<cl_device_svm_capabilities>(id, CL_DEVICE_SVM_CAPABILITIES);
  std::string svm_text = svm == 0 ? "none" : "";
  if (svm & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER) svm_text += "coarse-buffer ";
  if (svm & CL_DEVICE_SVM_FINE_GRAIN_BUFFER) svm_text += "fine-buffer ";
  if (svm & CL_DEVICE_SVM_FINE_GRAIN_SYSTEM) svm_text += "fine-system ";
  if (svm & CL_DEVICE_SVM_ATOMICS) svm_text += "atomics";
  line("SVM", svm_text);
  std::string il = device_string(id, CL_DEVICE_IL_VERSION);
  line("IL versions", il.empty() ? "none" : il);
  line("max sub-groups", number(device_value<cl_uint>(id, CL_DEVICE_MAX_NUM_SUB_GROUPS)));
  line("profiling timer resolution",
       number(device_value<size_t>(id, CL_DEVICE_PROFILING_TIMER_RESOLUTION)) + " ns");
  line("printf buffer", format_bytes(device_value<size_t>(id, CL_DEVICE_PRINTF_BUFFER_SIZE)));
  cl_command_queue_properties queue =
      device_value<cl_command_queue_properties>(id, CL_DEVICE_QUEUE_ON_HOST_PROPERTIES);
  line("queue properties",
       std::string(queue & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE ? "out-of-order " : "") +
           (queue & CL_QUEUE_PROFILING_ENABLE ? "profiling" : ""));
  line("sub-device partitions",
       number(device_value<cl_uint>(id, CL_DEVICE_PARTITION_MAX_SUB_DEVICES)) + " max");
  line("key features", key_features(id));
  std::string built_in = device_string(id, CL_DEVICE_BUILT_IN_KERNELS);
  if (!built_in.empty()) line("built-in kernels", built_in);
  print_wrapped("extensions", device_string(id, CL_DEVICE_EXTENSIONS));
  std::printf("\n");
}

}  // namespace

int run_devices_command(const std::vector<std::string>& args) {
  if (!args.empty()) {
    std::fprintf(stderr,
                 "manifold devices: takes no arguments (got '%s'); try `manifold info %s`\n",
                 args[0].c_str(), args[0].c_str());
    return 2;
  }
  std::vector<DeviceRef> devices = enumerate_devices();
  if (devices.empty()) {
    const std::string given = manifold::tool_settings().icd_vendors;
    const std::string vendors = given.empty() ? "/etc/OpenCL/vendors" : given;
    std::fprintf(
        stderr,
        "manifold: no OpenCL device found (loader folder %s). Is the Manifold library built "
        "and an .icd present?\n",
        vendors.c_str());
    return 1;
  }
  std::printf("%-3s %-14s %-4s %-40s %4s  %10s  %-12s %s\n", "#", "platform", "type", "device",
              "CUs", "memory", "versions", "features");
  for (size_t i = 0; i < devices.size(); ++i) print_device_line(i, devices[i]);
  return 0;
}

int run_info_command(const std::vector<std::string>& args) {
  if (args.size() > 1) {
    std::fprintf(stderr, "manifold info: at most one DEVICE (an index or a name fragment)\n");
    return 2;
  }
  std::vector<DeviceRef> devices = enumerate_devices();
  if (devices.empty()) {
    std::fprintf(stderr, "manifold: no OpenCL device found\n");
    return 1;
  }
  size_t shown = 0;
  for (size_t i = 0; i < devices.size(); ++i) {
    if (!args.empty() && !selector_matches(args[0], devices[i], i)) continue;
    print_device_details(i, devices[i]);
    ++shown;
  }
  if (shown == 0) {
    std::fprintf(stderr, "manifold info: no device matches '%s'; `manifold devices` lists them\n",
                 args[0].c_str());
    return 2;
  }
  return 0;
}

}  // namespace manifold_tool
