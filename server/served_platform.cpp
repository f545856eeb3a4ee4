#include "server/served_platform.h"

#include <CL/cl_manifold.h>

#include <stdexcept>
#include <string_view>

namespace manifold::server {

namespace {

std::string platform_name(cl_platform_id platform) {
  size_t size = 0;
  if (clGetPlatformInfo(platform, CL_PLATFORM_NAME, 0, nullptr, &size) != CL_SUCCESS) return {};
  std::string name(size, '\0');
  clGetPlatformInfo(platform, CL_PLATFORM_NAME, size, name.data(), nullptr);
  while (!name.empty() && name.back() == '\0') name.pop_back();
  return name;
}

std::string device_bytes(cl_device_id device, cl_device_info param) {
  size_t size = 0;
  if (clGetDeviceInfo(device, param, 0, nullptr, &size) != CL_SUCCESS) return {};
  std::string bytes(size, '\0');
  if (clGetDeviceInfo(device, param, size, bytes.data(), nullptr) != CL_SUCCESS) return {};
  return bytes;
}

// FNV-1a: a program binary's key in the cache (the size and a byte compare back it up).
uint64_t hash_of(std::span<const std::byte> bytes) {
  uint64_t h = 1469598103934665603ull;
  for (std::byte b : bytes) h = (h ^ uint64_t(b)) * 1099511628211ull;
  return h;
}

}  // namespace

ServedPlatform::ServedPlatform() {
  cl_uint count = 0;
  clGetPlatformIDs(0, nullptr, &count);
  std::vector<cl_platform_id> platforms(count);
  if (count) clGetPlatformIDs(count, platforms.data(), nullptr);
  for (cl_platform_id p : platforms)
    if (platform_name(p).starts_with("Manifold")) platform_ = p;
  if (!platform_) throw std::runtime_error("no Manifold OpenCL platform (is its ICD installed?)");
  cl_uint n = 0;
  clGetDeviceIDs(platform_, CL_DEVICE_TYPE_ALL, 0, nullptr, &n);
  std::vector<cl_device_id> all(n);
  if (n) clGetDeviceIDs(platform_, CL_DEVICE_TYPE_ALL, n, all.data(), nullptr);
  for (cl_device_id d : all) {
    if (!device_bytes(d, CL_DEVICE_GROUP_MEMBERS_MFLD).empty()) continue;  // groups: not served
    std::string description = device_bytes(d, CL_DEVICE_DESCRIPTION_MFLD);
    if (description.empty()) continue;
    devices_.push_back(d);
    descriptions_.push_back(std::move(description));
  }
  if (devices_.empty()) throw std::runtime_error("the Manifold platform has no device to serve");
  enqueue_part_ = reinterpret_cast<clEnqueueNDRangeKernelPartMFLD_fn>(
      clGetExtensionFunctionAddressForPlatform(platform_, "clEnqueueNDRangeKernelPartMFLD"));
  const cl_context_properties properties[] = {CL_CONTEXT_PLATFORM, cl_context_properties(platform_),
                                              0};
  cl_int status = CL_SUCCESS;
  context_ = clCreateContext(properties, cl_uint(devices_.size()), devices_.data(), nullptr,
                             nullptr, &status);
  if (!context_)
    throw std::runtime_error("clCreateContext of the served devices: error " +
                             std::to_string(status));
}

ServedPlatform::~ServedPlatform() {
  for (auto& [key, program] : programs_) clReleaseProgram(program);
  if (context_) clReleaseContext(context_);
}

std::string ServedPlatform::device_name(size_t index) const {
  std::string name = device_bytes(devices_.at(index), CL_DEVICE_NAME);
  while (!name.empty() && name.back() == '\0') name.pop_back();
  return name;
}

cl_program ServedPlatform::load_program(size_t index, std::span<const std::byte> binary,
                                        const std::string& options, bool shareable, cl_int* status,
                                        std::string* log) {
  const auto key = std::make_tuple(index, hash_of(binary), binary.size(), options);
  std::lock_guard lock(programs_mutex_);
  if (auto it = programs_.find(key); shareable && it != programs_.end()) {
    clRetainProgram(it->second);
    *status = CL_SUCCESS;
    return it->second;
  }
  cl_device_id device = devices_.at(index);
  const size_t size = binary.size();
  const auto* bytes = reinterpret_cast<const unsigned char*>(binary.data());
  cl_int binary_status = CL_SUCCESS;
  cl_program program =
      clCreateProgramWithBinary(context_, 1, &device, &size, &bytes, &binary_status, status);
  if (!program) {
    *log = "the server's device cannot load the program binary";
    return nullptr;
  }
  *status = clBuildProgram(program, 1, &device, options.c_str(), nullptr, nullptr);
  if (*status != CL_SUCCESS) {
    *log = device_bytes(device, CL_DEVICE_NAME);
    size_t n = 0;
    clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n);
    std::string text(n, '\0');
    clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, n, text.data(), nullptr);
    while (!text.empty() && text.back() == '\0') text.pop_back();
    *log = text.empty() ? "the program binary does not build on the server" : text;
    clReleaseProgram(program);
    return nullptr;
  }
  if (shareable && programs_.emplace(key, program).second) clRetainProgram(program);
  return program;
}

remote::ProgramKernels ServedPlatform::kernels_of(cl_program program, size_t index) const {
  remote::ProgramKernels out;
  cl_device_id device = devices_.at(index);
  cl_uint count = 0;
  if (clCreateKernelsInProgram(program, 0, nullptr, &count) != CL_SUCCESS || count == 0) return out;
  std::vector<cl_kernel> kernels(count);
  if (clCreateKernelsInProgram(program, count, kernels.data(), nullptr) != CL_SUCCESS) return out;
  for (cl_kernel k : kernels) {
    char name[1024] = {};
    size_t group = 0;
    cl_ulong local = 0, priv = 0;
    clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof name - 1, name, nullptr);
    clGetKernelWorkGroupInfo(k, device, CL_KERNEL_WORK_GROUP_SIZE, sizeof group, &group, nullptr);
    clGetKernelWorkGroupInfo(k, device, CL_KERNEL_LOCAL_MEM_SIZE, sizeof local, &local, nullptr);
    clGetKernelWorkGroupInfo(k, device, CL_KERNEL_PRIVATE_MEM_SIZE, sizeof priv, &priv, nullptr);
    out.names.push_back(name);
    out.max_work_group_size.push_back(group);
    out.local_mem_size.push_back(local);
    out.private_mem_size.push_back(priv);
    clReleaseKernel(k);
  }
  return out;
}

}  // namespace manifold::server
