// What manifold-server serves: the devices of this machine's Manifold platform (found through the
// ICD loader, as any OpenCL application finds them), in one context, so that buffers of one
// client may move between them on the server. Programs are loaded once per binary and shared by
// every client that loads the same one. Thread: any.
#pragma once

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <CL/cl_manifold.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "backends/remote/protocol.h"

namespace manifold::server {

class ServedPlatform {
 public:
  // Opens the platform and a context of every device that is not a device group. Throws
  // std::runtime_error when there is no Manifold platform or no device.
  ServedPlatform();
  ~ServedPlatform();
  ServedPlatform(const ServedPlatform&) = delete;
  ServedPlatform& operator=(const ServedPlatform&) = delete;

  cl_context context() const { return context_; }
  const std::vector<cl_device_id>& devices() const { return devices_; }
  // Each device's description (CL_DEVICE_DESCRIPTION_MFLD), in the order of devices().
  const std::vector<std::string>& descriptions() const { return descriptions_; }
  std::string device_name(size_t index) const;
  // The platform's clEnqueueNDRangeKernelPartMFLD (null where it has none): the launches of a
  // part of an NDRange's work-groups.
  clEnqueueNDRangeKernelPartMFLD_fn enqueue_part() const { return enqueue_part_; }

  // A program built from `binary` for device `index` with `options`: where `shareable`, the one
  // made before for the same inputs, else a new one. The caller owns one reference
  // (clReleaseProgram). On failure: null, with the status and the build log.
  cl_program load_program(size_t index, std::span<const std::byte> binary,
                          const std::string& options, bool shareable, cl_int* status,
                          std::string* log);
  // What device `index` says of each kernel of `program`.
  remote::ProgramKernels kernels_of(cl_program program, size_t index) const;

 private:
  cl_platform_id platform_ = nullptr;
  cl_context context_ = nullptr;
  std::vector<cl_device_id> devices_;
  std::vector<std::string> descriptions_;
  clEnqueueNDRangeKernelPartMFLD_fn enqueue_part_ = nullptr;
  std::mutex programs_mutex_;
  // Keyed by device, the binary's hash and size, and options; holds one reference each.
  std::map<std::tuple<size_t, uint64_t, size_t, std::string>, cl_program> programs_;
};

}  // namespace manifold::server
