// OpenCL plumbing shared by the `manifold` subcommands: the ICD vendors folder the loader reads,
// platform/device enumeration (Manifold's platform first), tolerant info queries, error names.
// Everything goes through the public OpenCL API and the ocl-icd loader.
#pragma once

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace manifold_tool {

// A failed OpenCL call: the call's name and its code.
class ClError : public std::runtime_error {
 public:
  ClError(const std::string& call, cl_int code);
  cl_int code() const { return code_; }

 private:
  cl_int code_;
};

const char* cl_error_name(cl_int code);

inline void cl_check(cl_int code, const char* call) {
  if (code != CL_SUCCESS) throw ClError(call, code);
}

// One ICD the loader will load: the .icd file's name and the library it names.
struct IcdEntry {
  std::string name;        // file name inside the vendors folder, e.g. "pocl.icd"
  std::string library;     // the line inside, a path or a library name
  std::string single_dir;  // a folder holding only this .icd (children that test one platform)
};

// The vendors folder this process hands to the loader. It always points OCL_ICD_VENDORS at a
// temporary folder so that Manifold's build tree, the system's ICDs and extra libraries (NVIDIA's
// unregistered libnvidia-opencl.so.1) are seen together; the folder is removed at exit.
struct IcdSetup {
  std::string root;     // temporary folder, removed by remove_icd_setup()
  std::string all_dir;  // every ICD: what OCL_ICD_VENDORS points at
  std::vector<IcdEntry> entries;
};

// Must run before the first cl* call (ocl-icd reads OCL_ICD_VENDORS once, on first use).
// Sources: the user's OCL_ICD_VENDORS (folder or .icd file) or else /etc/OpenCL/vendors plus this
// build's manifold.icd; the libraries in MANIFOLD_BENCH_EXTRA_ICDS (colon-separated) and
// `extra_libraries`; NVIDIA's libnvidia-opencl.so.1 when it is installed but not registered.
IcdSetup& prepare_icd_vendors(const std::vector<std::string>& extra_libraries);
void remove_icd_setup();

// The members of a Manifold device group (CL_DEVICE_GROUP_MEMBERS_MFLD); empty for any other
// device or platform.
std::vector<cl_device_id> group_members(cl_device_id device);
// What fraction of the work-groups of the last launch of `kernel` each member of the group
// `device` ran (CL_KERNEL_GROUP_SPLIT_MFLD); empty where the device is no group.
std::vector<float> group_split(cl_kernel kernel, cl_device_id device);

struct DeviceRef {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  int loader_platform_index = 0;  // index in clGetPlatformIDs order (what children are told)
  int device_index = 0;           // index within its platform
  std::string platform_name;
  std::string platform_short;  // "Manifold", "PoCL", "NVIDIA OpenCL", ...
  std::string device_name;
  cl_device_type type = 0;
  std::string label;        // unique short column label, e.g. "Manifold CPU"
  std::string vendors_dir;  // a vendors folder with only this device's platform, or all_dir
  // A member of a Manifold device group (cl_mfld_device_group), measured alone beside its group:
  // its index among the group's members; -1 for a device of the platform's list.
  int group_member = -1;
  bool is_manifold() const { return platform_short == "Manifold"; }
};

// Every device of every platform, Manifold's platform first, then in loader order. Platforms
// whose device query fails are skipped with a note on stderr.
std::vector<DeviceRef> enumerate_devices();

std::string type_name(cl_device_type type);
std::string short_platform_name(const std::string& platform_name);

std::string platform_string(cl_platform_id platform, cl_platform_info what);
std::string device_string(cl_device_id device, cl_device_info what);

// Scalar device info; `fallback` when the query fails (older devices lack newer queries).
template <typename T>
T device_value(cl_device_id device, cl_device_info what, T fallback = T{}) {
  T value{};
  if (clGetDeviceInfo(device, what, sizeof(T), &value, nullptr) != CL_SUCCESS) return fallback;
  return value;
}
std::vector<size_t> device_sizes(cl_device_id device, cl_device_info what);

// Bytes as "23.4 GiB" / "512 KiB".
std::string format_bytes(uint64_t bytes);

// Lower-case copy, for case-insensitive matching.
std::string lower(std::string text);

// Does `selector` pick this device? A display index ("1"), or a case-insensitive substring of
// "<platform short> <type> <device name>" ("manifold", "pocl", "cpu", "epyc").
bool selector_matches(const std::string& selector, const DeviceRef& device, size_t display_index);

std::vector<std::string> split(const std::string& text, char separator);

}  // namespace manifold_tool
