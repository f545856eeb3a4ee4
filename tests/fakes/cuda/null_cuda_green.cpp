// Green contexts in the simulated CUDA driver (null_cuda.cpp): SM resources, their splits,
// descriptors, green contexts and their streams, with the rules the real driver applies (CUDA 13.0
// headers, and what driver 580 answers on an H200):
// - the device's SM resource: smCount the device's SMs; minSmPartitionSize and
//   smCoscheduledAlignment by compute capability (sm_90: 8 and 8, sm_8x: 4 and 2, else 2 and 2);
// - a split rounds minCount up to the minimum and the alignment, and makes as many groups of
//   that size as fit (the real driver may make fewer where the GPU's clusters leave SMs over; the
//   backend takes the count it is given); split groups report 0 for both granularity fields; an
//   empty remainder has type CU_DEV_RESOURCE_TYPE_INVALID;
// - a split's output (a group or the remainder) cannot be split again:
//   CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION; a green context's own resource can, in steps of 2;
// - cuGreenCtxCreate requires CU_GREEN_CTX_DEFAULT_STREAM, cuGreenCtxStreamCreate
//   CU_STREAM_NON_BLOCKING (CUDA_ERROR_INVALID_VALUE otherwise);
// - cuGreenCtxDestroy leaves the green context's streams alive (the application destroys them
//   first; the simulation counts the ones it finds still alive).
// Kernels still compute nothing; what runs where is not simulated.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>

#ifndef NULL_CUDA_API_VISIBILITY
#define NULL_CUDA_API_VISIBILITY "default"
#endif
#define API extern "C" __attribute__((visibility(NULL_CUDA_API_VISIBILITY))) int
#define HOOK extern "C" __attribute__((visibility("default")))

API cuDeviceGetAttribute(int* v, int which, int device);
API cuStreamCreate(void** s, unsigned flags);

namespace {

constexpr int kSuccess = 0, kInvalidValue = 1, kNotSupported = 801, kInvalidResourceType = 914,
              kInvalidResourceConfiguration = 915;
constexpr int kTypeInvalid = 0, kTypeSm = 1;
constexpr uint32_t kMagic = 0x6e756c6c;  // what marks a resource this simulation made

struct SmResource {
  unsigned sm_count, min_partition, alignment;
};
// cuda.h's CUdevResource (RESOURCE_ABI_VERSION 1); the padding holds the simulation's tag.
struct Resource {
  int type;
  unsigned char padding[92];
  union {
    SmResource sm;
    unsigned char oversize[48];
  };
};
static_assert(sizeof(Resource) == 144, "cuda.h's CUdevResource");

enum class Origin : uint32_t { Device = 1, Green = 2, Group = 3, Remainder = 4 };
struct Tag {
  uint32_t magic;
  Origin origin;
  uint64_t split;  // the split that made a group or remainder
};
static_assert(sizeof(Tag) <= sizeof(Resource::padding));

Tag tag_of(const Resource& r) {
  Tag t;
  std::memcpy(&t, r.padding, sizeof t);
  return t;
}
void make(Resource& r, Origin origin, uint64_t split, unsigned sms, unsigned min, unsigned align) {
  std::memset(&r, 0, sizeof r);
  r.type = sms ? kTypeSm : kTypeInvalid;
  const Tag t{kMagic, origin, split};
  std::memcpy(r.padding, &t, sizeof t);
  r.sm = {sms, min, align};
}

struct Descriptor {
  unsigned sms;
};
struct GreenContext {
  unsigned sms;
  int context;  // what cuCtxFromGreenCtx hands out: a context handle of its own
  std::set<void*> streams;
};

std::mutex g_mutex;
uint64_t g_splits = 0;
std::set<GreenContext*> g_green;
std::map<void*, GreenContext*> g_green_streams;
uint64_t g_leaked_streams = 0;

int attribute(int which) {
  int v = 0;
  cuDeviceGetAttribute(&v, which, 0);
  return v;
}

}  // namespace

// Called by cuStreamDestroy_v2 (null_cuda.cpp).
void null_cuda_green_stream_destroyed(void* stream) {
  std::lock_guard lock(g_mutex);
  auto it = g_green_streams.find(stream);
  if (it == g_green_streams.end()) return;
  it->second->streams.erase(stream);
  g_green_streams.erase(it);
}

// Test hooks: live green contexts, live streams of green contexts, and streams still alive when
// their green context was destroyed.
HOOK uint64_t null_cuda_green_contexts() {
  std::lock_guard lock(g_mutex);
  return g_green.size();
}
HOOK uint64_t null_cuda_green_streams() {
  std::lock_guard lock(g_mutex);
  return g_green_streams.size();
}
HOOK uint64_t null_cuda_green_leaked_streams() {
  std::lock_guard lock(g_mutex);
  return g_leaked_streams;
}

API cuDeviceGetDevResource(int device, Resource* resource, int type) {
  // NULL_CUDA_NO_GREEN_CONTEXTS: a driver whose device offers no SM resource.
  if (std::getenv("NULL_CUDA_NO_GREEN_CONTEXTS")) return kNotSupported;
  if (device != 0 || !resource) return kInvalidValue;
  if (type != kTypeSm) return kInvalidResourceType;
  const int major = attribute(75), minor = attribute(76);
  unsigned min = 2, align = 2;
  if (major >= 9) min = align = 8;
  if (major == 8) min = 4;
  (void)minor;
  make(*resource, Origin::Device, 0, unsigned(attribute(16)), min, align);
  return kSuccess;
}

API cuDevSmResourceSplitByCount(Resource* result, unsigned* groups, const Resource* input,
                                Resource* remaining, unsigned flags, unsigned min_count) {
  if (!groups || !input || input->type != kTypeSm) return kInvalidValue;
  const Tag t = tag_of(*input);
  if (t.magic != kMagic) return kInvalidValue;
  if (t.origin == Origin::Group || t.origin == Origin::Remainder)
    return kInvalidResourceConfiguration;
  if (flags > 1 || min_count > input->sm.sm_count) return kInvalidValue;
  unsigned min = input->sm.min_partition, align = input->sm.alignment;
  if (flags == 1) min = align = 2;  // CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING
  unsigned size = std::max(std::max(min_count, min), 1u);
  if (align > 1) size = (size + align - 1) / align * align;
  const unsigned fit = size <= input->sm.sm_count ? input->sm.sm_count / size : 0;
  if (!result) {
    *groups = fit;
    return kSuccess;
  }
  const unsigned n = std::min(*groups, fit);
  uint64_t split;
  {
    std::lock_guard lock(g_mutex);
    split = ++g_splits;
  }
  for (unsigned i = 0; i < n; ++i) make(result[i], Origin::Group, split, size, 0, 0);
  if (remaining) make(*remaining, Origin::Remainder, split, input->sm.sm_count - n * size, 0, 0);
  *groups = n;
  return kSuccess;
}

API cuDevResourceGenerateDesc(Descriptor** desc, Resource* resources, unsigned count) {
  if (!desc || !resources || count == 0) return kInvalidValue;
  unsigned sms = 0;
  const uint64_t split = tag_of(resources[0]).split;
  for (unsigned i = 0; i < count; ++i) {
    const Tag t = tag_of(resources[i]);
    if (t.magic != kMagic || resources[i].type != kTypeSm) return kInvalidResourceType;
    // Several resources: outputs of one split.
    if (count > 1 && (t.split == 0 || t.split != split)) return kInvalidResourceConfiguration;
    sms += resources[i].sm.sm_count;
  }
  *desc = new Descriptor{sms};  // the driver offers no call that frees a descriptor
  return kSuccess;
}

API cuGreenCtxCreate(GreenContext** green, Descriptor* desc, int device, unsigned flags) {
  if (!green || !desc || device != 0 || !(flags & 1)) return kInvalidValue;
  auto* g = new GreenContext{desc->sms, 0, {}};
  std::lock_guard lock(g_mutex);
  g_green.insert(g);
  *green = g;
  return kSuccess;
}

API cuGreenCtxDestroy(GreenContext* green) {
  std::lock_guard lock(g_mutex);
  if (!g_green.erase(green)) return kInvalidValue;
  g_leaked_streams += green->streams.size();
  for (void* s : green->streams) g_green_streams.erase(s);
  delete green;
  return kSuccess;
}

API cuCtxFromGreenCtx(void** context, GreenContext* green) {
  std::lock_guard lock(g_mutex);
  if (!context || !g_green.count(green)) return kInvalidValue;
  *context = &green->context;
  return kSuccess;
}

API cuGreenCtxGetDevResource(GreenContext* green, Resource* resource, int type) {
  std::lock_guard lock(g_mutex);
  if (!resource || !g_green.count(green)) return kInvalidValue;
  if (type != kTypeSm) return kInvalidResourceType;
  make(*resource, Origin::Green, 0, green->sms, 2, 2);
  return kSuccess;
}

API cuGreenCtxStreamCreate(void** stream, GreenContext* green, unsigned flags, int) {
  if (!stream || !(flags & 1)) return kInvalidValue;
  {
    std::lock_guard lock(g_mutex);
    if (!g_green.count(green)) return kInvalidValue;
  }
  if (int r = cuStreamCreate(stream, flags); r != kSuccess) return r;
  std::lock_guard lock(g_mutex);
  green->streams.insert(*stream);
  g_green_streams[*stream] = green;
  return kSuccess;
}
