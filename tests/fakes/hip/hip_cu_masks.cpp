// hipExtStreamCreateWithCUMask over CUDA's green contexts, for the HIP-over-CUDA shim
// (hip_over_cuda.cpp, linked into both of its libraries): the HIP backend's sub-devices are CU
// masks, and this makes them run on an NVIDIA GPU (and on the simulated driver's green contexts,
// null_cuda_green.cpp). A CU is an SM (hipDeviceAttributeMultiprocessorCount is the SM count).
// On a GPU's first CU-mask stream its SM resource is split into groups of the driver's granule
// (cuDevSmResourceSplitByCount; 8 SMs on sm_90); CU i belongs to group i / granule (the SMs
// beyond the last whole group to the last group). A mask's stream is a stream
// (cuGreenCtxStreamCreate) of the green context of the groups its CUs cover, one green context per
// distinct set of groups (cuDevResourceGenerateDesc over them), made once and kept for the
// process. So masks that share a group share its SMs: only masks along the granule are disjoint.
// Where the driver has no green contexts (before CUDA 12.4; the simulated driver with
// NULL_CUDA_NO_GREEN_CONTEXTS) the call fails with hipErrorNotSupported, and the backend reports no
// partition scheme.
#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

namespace {

using CUresult = int;

// cuda.h's CUdevResource (RESOURCE_ABI_VERSION 1).
struct SmResource {
  unsigned smCount, minSmPartitionSize, smCoscheduledAlignment;
};
struct Resource {
  int type;
  unsigned char padding[92];
  union {
    SmResource sm;
    unsigned char oversize[48];
  };
};
static_assert(sizeof(Resource) == 144, "cuda.h's CUdevResource");

constexpr CUresult kSuccess = 0, kInvalidValue = 1, kNotSupported = 801;
constexpr int kResourceTypeSm = 1;
constexpr unsigned kGreenCtxDefaultStream = 0x1, kStreamNonBlocking = 0x1;

}  // namespace

// The driver's green-context calls are weak: a libcuda.so.1 without them leaves them null.
extern "C" {
CUresult cuCtxGetDevice(int*);
CUresult cuDeviceGetDevResource(int, Resource*, int) __attribute__((weak));
CUresult cuDevSmResourceSplitByCount(Resource*, unsigned*, const Resource*, Resource*, unsigned,
                                     unsigned) __attribute__((weak));
CUresult cuDevResourceGenerateDesc(void**, Resource*, unsigned) __attribute__((weak));
CUresult cuGreenCtxCreate(void**, void*, int, unsigned) __attribute__((weak));
CUresult cuGreenCtxStreamCreate(void**, void*, unsigned, int) __attribute__((weak));
}

namespace {

struct Gpu {
  bool split = false;
  CUresult error = kSuccess;  // why the GPU makes no CU-mask streams
  unsigned sms = 0, granule = 1;
  std::vector<Resource> groups;
  std::map<std::vector<bool>, void*> green;  // by the groups a mask covers
  std::map<void*, unsigned> green_sms;
  std::vector<void*> descriptors;  // kept: the driver has no call that frees one
};

struct State {
  std::mutex mutex;
  std::map<int, Gpu> gpus;
  // For the tests (null_hip): what the last CU-mask stream was made with.
  uint64_t streams = 0;
  std::vector<uint32_t> last_mask;
  unsigned last_sms = 0;
};
// Never destroyed: streams may still be made while the process exits.
State& state() {
  static State* s = new State;
  return *s;
}

CUresult split(int device, Gpu& gpu) {
  Resource all{};
  if (CUresult r = cuDeviceGetDevResource(device, &all, kResourceTypeSm)) return r;
  if (all.type != kResourceTypeSm || all.sm.smCount == 0) return kNotSupported;
  gpu.sms = all.sm.smCount;
  gpu.granule = std::max({all.sm.minSmPartitionSize, all.sm.smCoscheduledAlignment, 1u});
  unsigned n = 0;
  if (CUresult r = cuDevSmResourceSplitByCount(nullptr, &n, &all, nullptr, 0, gpu.granule))
    return r;
  if (n == 0) return kNotSupported;
  gpu.groups.resize(n);
  if (CUresult r =
          cuDevSmResourceSplitByCount(gpu.groups.data(), &n, &all, nullptr, 0, gpu.granule))
    return r;
  gpu.groups.resize(n);
  return n ? kSuccess : kNotSupported;
}

}  // namespace

#define HIP extern "C" __attribute__((visibility("default")))

HIP CUresult hipExtStreamCreateWithCUMask(void** stream, uint32_t words, const uint32_t* mask) {
  if (!stream || !mask || words == 0) return kInvalidValue;
  if (!cuDeviceGetDevResource || !cuDevSmResourceSplitByCount || !cuDevResourceGenerateDesc ||
      !cuGreenCtxCreate || !cuGreenCtxStreamCreate)
    return kNotSupported;
  int device = 0;
  if (CUresult r = cuCtxGetDevice(&device)) return r;  // HIP's: the current device
  State& s = state();
  void* green = nullptr;
  unsigned green_sms = 0;
  {
    std::lock_guard lock(s.mutex);
    Gpu& gpu = s.gpus[device];
    if (!gpu.split) {
      gpu.split = true;
      gpu.error = split(device, gpu);
    }
    if (gpu.error) return gpu.error;
    std::vector<bool> covered(gpu.groups.size(), false);
    bool any = false;
    for (uint32_t cu = 0; cu < words * 32 && cu < gpu.sms; ++cu)
      if (mask[cu / 32] >> (cu % 32) & 1u) {
        covered[std::min<size_t>(cu / gpu.granule, gpu.groups.size() - 1)] = true;
        any = true;
      }
    if (!any) return kInvalidValue;  // no CU of the GPU
    auto it = gpu.green.find(covered);
    if (it == gpu.green.end()) {
      std::vector<Resource> chosen;
      unsigned sms = 0;
      for (size_t g = 0; g < covered.size(); ++g)
        if (covered[g]) {
          chosen.push_back(gpu.groups[g]);
          sms += gpu.groups[g].sm.smCount;
        }
      void* desc = nullptr;
      void* made = nullptr;
      if (CUresult r = cuDevResourceGenerateDesc(&desc, chosen.data(), unsigned(chosen.size())))
        return r;
      gpu.descriptors.push_back(desc);
      if (CUresult r = cuGreenCtxCreate(&made, desc, device, kGreenCtxDefaultStream)) return r;
      it = gpu.green.emplace(covered, made).first;
      gpu.green_sms[made] = sms;
    }
    green = it->second;
    green_sms = gpu.green_sms[green];
  }
  if (CUresult r = cuGreenCtxStreamCreate(stream, green, kStreamNonBlocking, 0)) return r;
  std::lock_guard lock(s.mutex);
  ++s.streams;
  s.last_mask.assign(mask, mask + words);
  s.last_sms = green_sms;
  return kSuccess;
}

#ifdef NULL_HIP_SIMULATED
// Test hooks (tests/backends/gpu_driver/null_hip_subdevices_test.cpp): streams made with a CU
// mask, the last one's mask (its word count; up to `max` words copied to `out`) and its green
// context's SMs.
HIP uint64_t null_hip_cu_mask_streams() {
  std::lock_guard lock(state().mutex);
  return state().streams;
}
HIP unsigned null_hip_cu_mask_last(uint32_t* out, unsigned max) {
  std::lock_guard lock(state().mutex);
  const std::vector<uint32_t>& m = state().last_mask;
  std::copy_n(m.begin(), std::min<size_t>(m.size(), max), out);
  return unsigned(m.size());
}
HIP unsigned null_hip_cu_mask_last_sms() {
  std::lock_guard lock(state().mutex);
  return state().last_sms;
}
#endif
