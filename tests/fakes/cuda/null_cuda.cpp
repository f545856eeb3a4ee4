// A simulated CUDA driver (libcuda.so.1) for machines without an NVIDIA GPU: one fake device
// whose "device memory" is host memory, streams that run their copies in order on a thread of
// their own (asynchronously, as a GPU's copy engine does), events, pinned host memory that the
// simulation tracks, and kernels that do nothing. It exercises the CUDA backend's host-side
// logic (staging pipelines, stream and event ordering, completion, write-back) and lets a
// profiler measure Manifold's own launch overhead with the driver's cost taken out.
// Kernel results are NOT computed: tests that check kernel output fail on it, by design. A
// module's global variables are PTX's .global declarations of the image, each with storage of its
// own (cuModuleGetGlobal), and a test may ask for a log of launches: each one's grid, block and
// the module's launch state (__manifold_launch) as the launch saw it, in stream order.
//
//   LD_LIBRARY_PATH=<build>/null-cuda OCL_ICD_VENDORS=<build>/icd MANIFOLD_TEST_DEVICE_TYPE=gpu ...
//
// It mirrors the real driver where the backend's correctness depends on it: an async copy from
// pageable host memory consumes the source before returning; an async copy into pageable host
// memory returns once the bytes are there; copies to or from pinned memory are truly async (a
// caller that reuses such memory before synchronizing sees the race).
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

using CUresult = int;
constexpr CUresult kSuccess = 0, kInvalidValue = 1, kOutOfMemory = 2, kNotReady = 600,
                   kAlreadyRegistered = 712, kNotFound = 500;

struct Stream {
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<std::pair<uint64_t, std::function<void()>>> work;
  uint64_t submitted = 0, completed = 0;
  int waiting = 0;  // threads in wait_for
  bool stop = false;
  std::thread worker;

  Stream() {
    worker = std::thread([this] {
      std::unique_lock lock(mutex);
      for (;;) {
        changed.wait(lock, [&] { return stop || !work.empty(); });
        if (work.empty()) return;
        auto item = std::move(work.front());
        work.pop_front();
        lock.unlock();
        if (item.second) item.second();
        lock.lock();
        completed = item.first;
        changed.notify_all();
      }
    });
  }
  ~Stream() {
    {
      std::lock_guard lock(mutex);
      stop = true;
    }
    changed.notify_all();
    worker.join();
  }
  // Queues `fn` (may be empty: an ordering point) and returns its sequence number. `instant`
  // work (a kernel, an event's timestamp) on an idle stream is done at once, as a GPU that
  // keeps up with the host does it: profiles of the launch path then see commands complete
  // while launching goes on (under valgrind the worker thread would lag far behind).
  uint64_t push(std::function<void()> fn, bool instant = false) {
    std::lock_guard lock(mutex);
    const uint64_t seq = ++submitted;
    if (instant && work.empty() && completed + 1 == seq) {
      if (fn) fn();
      completed = seq;
      if (waiting) changed.notify_all();  // the worker sleeps on `changed` too: no wake-up for it
      return seq;
    }
    work.emplace_back(seq, std::move(fn));
    changed.notify_all();
    return seq;
  }
  void wait_for(uint64_t seq) {
    std::unique_lock lock(mutex);
    ++waiting;
    changed.wait(lock, [&] { return completed >= seq; });
    --waiting;
  }
  bool reached(uint64_t seq) {
    std::lock_guard lock(mutex);
    return completed >= seq;
  }
};

struct Event {
  Stream* stream = nullptr;
  uint64_t seq = 0;
  std::chrono::steady_clock::time_point when{};
};

std::mutex g_mutex;  // guards g_pinned and the legacy stream's creation
std::map<uintptr_t, size_t> g_pinned;
Stream* legacy_stream() {
  static Stream* s = new Stream;  // never destroyed: the process may exit with work queued
  return s;
}
Stream* of(void* stream) { return stream ? static_cast<Stream*>(stream) : legacy_stream(); }

bool pinned(const void* p, size_t n) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  std::lock_guard lock(g_mutex);
  auto it = g_pinned.upper_bound(a);
  if (it == g_pinned.begin()) return false;
  --it;
  return a >= it->first && a + n <= it->first + it->second;
}

void* dev(unsigned long long p) { return reinterpret_cast<void*>(p); }

// The simulated GPU's memory (what cuMemAlloc returns) is kept out of ThreadSanitizer's view:
// streams may touch the same device bytes at once (an out-of-order queue's unordered commands
// on one buffer), which on a GPU is the application's affair, not a data race of this process.
// Every device access goes through these uninstrumented byte moves (volatile: no memcpy call an
// interceptor would see); host memory is copied through a private staging vector with plain,
// checked memcpy, so races on the application's and Manifold's host memory are still reported.
#if defined(__SANITIZE_THREAD__)
__attribute__((no_sanitize("thread"), noinline)) void device_move(void* dst, const void* src,
                                                                  size_t n) {
  auto* d = static_cast<volatile unsigned char*>(dst);
  auto* s = static_cast<const volatile unsigned char*>(src);
  if (d < s) {
    for (size_t i = 0; i < n; ++i) d[i] = s[i];
  } else {
    for (size_t i = n; i-- > 0;) d[i] = s[i];
  }
}
#else
void device_move(void* dst, const void* src, size_t n) { std::memmove(dst, src, n); }
#endif
void device_fill(void* dst, const void* unit, size_t unit_size, size_t count) {
  if (count == 0) return;
  device_move(dst, unit, unit_size);  // then the filled prefix doubles
  auto* d = static_cast<unsigned char*>(dst);
  for (size_t done = 1; done < count;) {
    const size_t chunk = std::min(done, count - done);
    device_move(d + done * unit_size, d, chunk * unit_size);
    done += chunk;
  }
}
// Host bytes into device memory, and back.
void to_device(void* device, const void* host, size_t n) {
  std::vector<unsigned char> staged(static_cast<const unsigned char*>(host),
                                    static_cast<const unsigned char*>(host) + n);
  device_move(device, staged.data(), n);
}
void to_host(void* host, const void* device, size_t n) {
  std::vector<unsigned char> staged(n);
  device_move(staged.data(), device, n);
  std::memcpy(host, staged.data(), n);
}

CUresult copy_in(void* dst, const void* src, size_t n, void* stream) {
  Stream* s = of(stream);
  if (pinned(src, n)) {
    s->push([=] { to_device(dst, src, n); });
    return kSuccess;
  }
  // Pageable: the driver stages the source before returning.
  auto copy = std::make_shared<std::vector<unsigned char>>(
      static_cast<const unsigned char*>(src), static_cast<const unsigned char*>(src) + n);
  s->push([=] { device_move(dst, copy->data(), n); });
  return kSuccess;
}

CUresult copy_out(void* dst, const void* src, size_t n, void* stream) {
  Stream* s = of(stream);
  const uint64_t seq = s->push([=] { to_host(dst, src, n); });
  if (!pinned(dst, n)) s->wait_for(seq);  // pageable destination: synchronous
  return kSuccess;
}

int attribute(int which) {
  switch (which) {
    case 1:
      return 1024;  // max threads per block
    case 2:
    case 3:
      return 1024;  // block dims x, y
    case 4:
      return 64;  // block dim z
    case 5:
      return 2147483647;  // grid x
    case 6:
    case 7:
      return 65535;  // grid y, z
    case 8:
      return 48 * 1024;  // shared memory per block
    case 9:
      return 64 * 1024;  // constant memory
    case 10:
      return 32;  // warp
    case 13:
      return 1500000;  // clock kHz
    case 16: {         // SMs: 4, or NULL_CUDA_SM_COUNT (green-context partitions need more)
      static const int sms = [] {
        const char* v = std::getenv("NULL_CUDA_SM_COUNT");
        return v && std::atoi(v) > 0 ? std::atoi(v) : 4;
      }();
      return sms;
    }
    case 19:
    case 41:
    case 102:
      return 1;  // map host memory, unified addressing, virtual memory management
    case 36:
      return 1000000;
    case 37:
      return 256;
    case 38:
      return 4 << 20;  // L2
    case 75:
      return 9;  // sm_90
    case 76:
      return 0;
    case 97:
      return 227 * 1024;  // opt-in shared memory
    default:
      return 0;
  }
}

}  // namespace

// Green contexts (null_cuda_green.cpp): forgets a stream of a green context.
void null_cuda_green_stream_destroyed(void* stream);

// The HIP shim's simulated runtime (tests/fakes/hip) links this file with its entry points
// hidden: only the hip* names (and the test hooks below) are exported there.
#ifndef NULL_CUDA_API_VISIBILITY
#define NULL_CUDA_API_VISIBILITY "default"
#endif
#define API extern "C" __attribute__((visibility(NULL_CUDA_API_VISIBILITY))) CUresult

API cuInit(unsigned) { return kSuccess; }
API cuDriverGetVersion(int* v) {
  *v = 13000;
  return kSuccess;
}
API cuGetErrorName(CUresult, const char** s) {
  *s = "NULL_CUDA_ERROR";
  return kSuccess;
}
API cuGetErrorString(CUresult, const char** s) {
  *s = "simulated driver error";
  return kSuccess;
}
API cuDeviceGetCount(int* n) {
  *n = 1;
  return kSuccess;
}
API cuDeviceGet(int* d, int i) {
  *d = i;
  return i == 0 ? kSuccess : kInvalidValue;
}
API cuDeviceGetName(char* name, int n, int) {
  std::snprintf(name, static_cast<size_t>(n), "Simulated GPU (null CUDA driver)");
  return kSuccess;
}
API cuDeviceGetAttribute(int* v, int which, int) {
  *v = attribute(which);
  return kSuccess;
}
API cuDeviceTotalMem_v2(size_t* bytes, int) {
  *bytes = size_t{8} << 30;
  return kSuccess;
}
API cuDeviceGetUuid_v2(void* uuid, int) {
  std::memset(uuid, 0x5a, 16);
  return kSuccess;
}
API cuDevicePrimaryCtxRetain(void** ctx, int) {
  static int context;
  *ctx = &context;
  return kSuccess;
}
API cuDevicePrimaryCtxRelease_v2(int) { return kSuccess; }
API cuCtxSetCurrent(void*) { return kSuccess; }
API cuCtxGetCurrent(void** ctx) {
  static int context;
  *ctx = &context;
  return kSuccess;
}
API cuCtxGetDevice(int* device) {  // one GPU: every context is device 0's
  *device = 0;
  return kSuccess;
}
API cuCtxSynchronize() {
  legacy_stream()->wait_for(legacy_stream()->push(nullptr));
  return kSuccess;
}
API cuMemGetInfo_v2(size_t* free_bytes, size_t* total) {
  *free_bytes = *total = size_t{8} << 30;
  return kSuccess;
}
// For tests (tests/scheduler/fault_campaign_test.cpp): that many coming cuMemAlloc calls fail
// with CUDA_ERROR_OUT_OF_MEMORY, as on a GPU whose memory is full.
std::atomic<int> g_fail_allocations{0};
extern "C" __attribute__((visibility("default"))) void null_cuda_fail_allocations(int count) {
  g_fail_allocations = count;
}
// For tests: how many cuMemAlloc calls succeeded so far (a buffer that several devices of one
// GPU share is allocated once).
std::atomic<uint64_t> g_allocations{0};
extern "C" __attribute__((visibility("default"))) uint64_t null_cuda_allocations() {
  return g_allocations.load();
}
API cuMemAlloc_v2(unsigned long long* p, size_t n) {
  for (int k = g_fail_allocations.load(); k > 0;)
    if (g_fail_allocations.compare_exchange_weak(k, k - 1)) return kOutOfMemory;
  if (n > (size_t{8} << 30)) return kOutOfMemory;
  void* m = std::aligned_alloc(256, (n + 255) / 256 * 256);
  if (!m) return kOutOfMemory;
  ++g_allocations;
  *p = reinterpret_cast<unsigned long long>(m);
  return kSuccess;
}
API cuMemFree_v2(unsigned long long p) {
  std::free(dev(p));
  return kSuccess;
}
API cuMemHostAlloc(void** p, size_t n, unsigned) {
  *p = std::aligned_alloc(4096, (n + 4095) / 4096 * 4096);
  if (!*p) return kOutOfMemory;
  std::lock_guard lock(g_mutex);
  g_pinned[reinterpret_cast<uintptr_t>(*p)] = n;
  return kSuccess;
}
API cuMemFreeHost(void* p) {
  {
    std::lock_guard lock(g_mutex);
    g_pinned.erase(reinterpret_cast<uintptr_t>(p));
  }
  std::free(p);
  return kSuccess;
}
API cuMemHostRegister_v2(void* p, size_t n, unsigned) {
  std::lock_guard lock(g_mutex);
  if (!g_pinned.emplace(reinterpret_cast<uintptr_t>(p), n).second) return kAlreadyRegistered;
  return kSuccess;
}
API cuMemHostUnregister(void* p) {
  std::lock_guard lock(g_mutex);
  return g_pinned.erase(reinterpret_cast<uintptr_t>(p)) ? kSuccess : kNotFound;
}
// Virtual memory management: device addresses are host addresses here, so a reservation is an
// inaccessible host mapping at that address and a mapped allocation makes its pages usable. One
// physical allocation is mapped once at most (all Manifold does).
constexpr size_t kGranularity = 2 << 20;          // the real driver's, on current GPUs
std::map<unsigned long long, size_t> g_physical;  // handle -> size (under g_mutex)
unsigned long long g_next_handle = 1;
API cuMemGetAllocationGranularity(size_t* granularity, const void*, int) {
  *granularity = kGranularity;
  return kSuccess;
}
API cuMemAddressReserve(unsigned long long* p, size_t n, size_t, unsigned long long at,
                        unsigned long long) {
  if (n == 0 || n % kGranularity || at % kGranularity) return kInvalidValue;
  void* m = mmap(dev(at), n, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) return kOutOfMemory;
  *p = reinterpret_cast<unsigned long long>(m);  // `at` is a hint, as in the driver
  return kSuccess;
}
API cuMemAddressFree(unsigned long long p, size_t n) {
  return munmap(dev(p), n) == 0 ? kSuccess : kInvalidValue;
}
API cuMemCreate(unsigned long long* handle, size_t n, const void*, unsigned long long) {
  if (n == 0 || n % kGranularity) return kInvalidValue;
  std::lock_guard lock(g_mutex);
  *handle = g_next_handle++;
  g_physical[*handle] = n;
  return kSuccess;
}
API cuMemRelease(unsigned long long handle) {
  std::lock_guard lock(g_mutex);
  return g_physical.erase(handle) ? kSuccess : kInvalidValue;
}
API cuMemMap(unsigned long long p, size_t n, size_t offset, unsigned long long handle,
             unsigned long long) {
  {
    std::lock_guard lock(g_mutex);
    auto it = g_physical.find(handle);
    if (it == g_physical.end() || offset + n > it->second) return kInvalidValue;
  }
  // The simulated GPU's memory is the process's own: the reserved pages become usable. Pages the
  // host has mapped over the reservation (Manifold's SVM range: at those addresses the real
  // driver keeps the host's pages and the GPU's apart) stay, so the two views share them.
  return mprotect(dev(p), n, PROT_READ | PROT_WRITE) == 0 ? kSuccess : kOutOfMemory;
}
API cuMemUnmap(unsigned long long p, size_t n) {
  // The pages stay readable: the host's view of an SVM range keeps its pages (as with the real
  // driver); a later cuMemMap of a reservation of our own finds stale bytes, which the real
  // driver does not promise to clear either.
  (void)p;
  (void)n;
  return kSuccess;
}
API cuMemSetAccess(unsigned long long, size_t, const void*, size_t count) {
  return count ? kSuccess : kInvalidValue;
}
// Mapped host memory: the GPU's address of a registered range is the host address.
API cuMemHostGetDevicePointer_v2(unsigned long long* p, void* host, unsigned) {
  if (!pinned(host, 1)) return kInvalidValue;
  *p = reinterpret_cast<unsigned long long>(host);
  return kSuccess;
}
API cuMemcpyHtoD_v2(unsigned long long d, const void* s, size_t n) {
  Stream* l = legacy_stream();
  l->wait_for(l->push([=] { to_device(dev(d), s, n); }));
  return kSuccess;
}
API cuMemcpyDtoH_v2(void* d, unsigned long long s, size_t n) {
  Stream* l = legacy_stream();
  l->wait_for(l->push([=] { to_host(d, dev(s), n); }));
  return kSuccess;
}
API cuMemcpyHtoDAsync_v2(unsigned long long d, const void* s, size_t n, void* stream) {
  return copy_in(dev(d), s, n, stream);
}
API cuMemcpyDtoHAsync_v2(void* d, unsigned long long s, size_t n, void* stream) {
  return copy_out(d, dev(s), n, stream);
}
// Unified addressing: either side may be host or device memory. The copy runs in stream order
// and the call returns once it is done (as a copy from or to pageable host memory does).
API cuMemcpyAsync(unsigned long long d, unsigned long long s, size_t n, void* stream) {
  Stream* st = of(stream);
  st->wait_for(st->push([=] { device_move(dev(d), dev(s), n); }));
  return kSuccess;
}
API cuMemcpyDtoDAsync_v2(unsigned long long d, unsigned long long s, size_t n, void* stream) {
  of(stream)->push([=] { device_move(dev(d), dev(s), n); });
  return kSuccess;
}
struct Memcpy3D {  // cuda.h's CUDA_MEMCPY3D
  size_t srcXInBytes, srcY, srcZ, srcLOD;
  int srcMemoryType;
  const void* srcHost;
  unsigned long long srcDevice;
  void *srcArray, *reserved0;
  size_t srcPitch, srcHeight;
  size_t dstXInBytes, dstY, dstZ, dstLOD;
  int dstMemoryType;
  void* dstHost;
  unsigned long long dstDevice;
  void *dstArray, *reserved1;
  size_t dstPitch, dstHeight;
  size_t WidthInBytes, Height, Depth;
};
API cuMemcpy3DAsync_v2(const Memcpy3D* c, void* stream) {
  const Memcpy3D m = *c;
  // As the H100's driver (580): pitches at least a row wide, and a slice height that holds the
  // copy's rows wherever one is given (0 is allowed for one slice only).
  if (m.srcPitch < m.WidthInBytes || m.dstPitch < m.WidthInBytes) return kInvalidValue;
  if ((m.Depth > 1 || m.srcHeight) && m.srcHeight < m.Height) return kInvalidValue;
  if ((m.Depth > 1 || m.dstHeight) && m.dstHeight < m.Height) return kInvalidValue;
  // Overlapping source and destination objects are undefined for the real driver: refused here.
  if (m.srcMemoryType != 1 && m.dstMemoryType != 1) {
    const auto span = [&](size_t pitch, size_t height) {
      return ((m.Depth - 1) * height + (m.Height - 1)) * pitch + m.WidthInBytes;
    };
    if (m.srcDevice < m.dstDevice + span(m.dstPitch, m.dstHeight) &&
        m.dstDevice < m.srcDevice + span(m.srcPitch, m.srcHeight))
      return kInvalidValue;
  }
  auto* src =
      static_cast<const unsigned char*>(m.srcMemoryType == 1 ? m.srcHost : dev(m.srcDevice));
  auto* dst = static_cast<unsigned char*>(m.dstMemoryType == 1 ? m.dstHost : dev(m.dstDevice));
  auto run = [=] {
    for (size_t z = 0; z < m.Depth; ++z)
      for (size_t y = 0; y < m.Height; ++y) {
        unsigned char* to = dst + (z * m.dstHeight + y) * m.dstPitch;
        const unsigned char* from = src + (z * m.srcHeight + y) * m.srcPitch;
        if (m.srcMemoryType == 1 && m.dstMemoryType == 1)
          std::memcpy(to, from, m.WidthInBytes);
        else if (m.srcMemoryType == 1)
          to_device(to, from, m.WidthInBytes);
        else if (m.dstMemoryType == 1)
          to_host(to, from, m.WidthInBytes);
        else
          device_move(to, from, m.WidthInBytes);
      }
  };
  Stream* s = of(stream);
  s->wait_for(s->push(run));  // pageable either way in the tests: synchronous
  return kSuccess;
}
API cuMemcpyPeerAsync(unsigned long long d, void*, unsigned long long s, void*, size_t n,
                      void* stream) {
  of(stream)->push([=] { device_move(dev(d), dev(s), n); });
  return kSuccess;
}
API cuDeviceCanAccessPeer(int* can, int, int) {
  *can = 0;  // one simulated device
  return kSuccess;
}
API cuCtxEnablePeerAccess(void*, unsigned) { return kSuccess; }
API cuMemsetD8Async(unsigned long long d, unsigned char v, size_t n, void* stream) {
  of(stream)->push([=] { device_fill(dev(d), &v, 1, n); });
  return kSuccess;
}
API cuMemsetD16Async(unsigned long long d, unsigned short v, size_t n, void* stream) {
  of(stream)->push([=] { device_fill(dev(d), &v, 2, n); });
  return kSuccess;
}
API cuMemsetD32Async(unsigned long long d, unsigned v, size_t n, void* stream) {
  of(stream)->push([=] { device_fill(dev(d), &v, 4, n); });
  return kSuccess;
}
API cuStreamCreate(void** s, unsigned) {
  *s = new Stream;
  return kSuccess;
}
API cuStreamDestroy_v2(void* s) {
  null_cuda_green_stream_destroyed(s);
  delete static_cast<Stream*>(s);
  return kSuccess;
}
API cuStreamSynchronize(void* stream) {
  Stream* s = of(stream);
  s->wait_for(s->push(nullptr));
  return kSuccess;
}
API cuStreamWaitEvent(void* stream, void* event, unsigned) {
  Event e = *static_cast<Event*>(event);
  if (e.stream && e.stream != of(stream)) of(stream)->push([e] { e.stream->wait_for(e.seq); });
  return kSuccess;
}
API cuEventCreate(void** e, unsigned) {
  *e = new Event;
  return kSuccess;
}
API cuEventDestroy_v2(void* e) {
  delete static_cast<Event*>(e);
  return kSuccess;
}
API cuEventRecord(void* event, void* stream) {
  auto* e = static_cast<Event*>(event);
  e->stream = of(stream);
  e->seq = e->stream->push([e] { e->when = std::chrono::steady_clock::now(); }, true);
  return kSuccess;
}
API cuEventSynchronize(void* event) {
  auto* e = static_cast<Event*>(event);
  if (e->stream) e->stream->wait_for(e->seq);
  return kSuccess;
}
API cuEventQuery(void* event) {
  auto* e = static_cast<Event*>(event);
  return !e->stream || e->stream->reached(e->seq) ? kSuccess : kNotReady;
}
API cuEventElapsedTime(float* ms, void* from, void* to) {
  *ms = std::chrono::duration<float, std::milli>(static_cast<Event*>(to)->when -
                                                 static_cast<Event*>(from)->when)
            .count();
  return kSuccess;
}
// A loaded module: storage for each variable its PTX declares in the global state space
// (".global .align 8 .b8 name[152]", ".global .align 4 .u32 name = 5"; initial values are not
// simulated). A code object (AMDGPU) declares none here.
struct NullModule {
  std::map<std::string, std::vector<unsigned char>> globals;
};
size_t ptx_type_bytes(const std::string& type) {
  if (type == ".b8" || type == ".u8" || type == ".s8") return 1;
  if (type == ".b16" || type == ".u16" || type == ".s16" || type == ".f16") return 2;
  if (type == ".b32" || type == ".u32" || type == ".s32" || type == ".f32") return 4;
  if (type == ".b64" || type == ".u64" || type == ".s64" || type == ".f64") return 8;
  return 0;
}
void read_ptx_globals(const char* ptx, NullModule& module) {
  const char* end = ptx + std::strlen(ptx);
  for (const char* line = ptx; line < end;) {
    const char* next = std::find(line, end, '\n');
    std::string text(line, next);
    line = next + 1;
    std::vector<std::string> words;
    for (size_t at = 0; at < text.size();) {
      const size_t from = text.find_first_not_of(" \t", at);
      if (from == std::string::npos) break;
      const size_t to = text.find_first_of(" \t;", from);
      words.push_back(text.substr(from, to - from));
      if (to == std::string::npos || text[to] == ';') break;
      at = to;
    }
    size_t i = 0;
    while (i < words.size() && (words[i] == ".visible" || words[i] == ".extern")) ++i;
    if (i >= words.size() || words[i] != ".global") continue;
    for (++i; i < words.size() && ptx_type_bytes(words[i]) == 0; ++i) {
    }
    if (i + 1 >= words.size()) continue;
    const size_t element = ptx_type_bytes(words[i]);
    std::string name = words[i + 1];
    size_t count = 1;
    if (const size_t bracket = name.find('['); bracket != std::string::npos) {
      count = std::strtoull(name.c_str() + bracket + 1, nullptr, 10);
      name.resize(bracket);
    }
    module.globals[name].assign(element * count, 0);
  }
}

API cuModuleLoadDataEx(void** module, const void* image, unsigned, void*, void**) {
  auto* loaded = new NullModule;
  const char* text = static_cast<const char*>(image);
  if (std::strncmp(text, "\177ELF", 4) != 0) read_ptx_globals(text, *loaded);
  *module = loaded;
  return kSuccess;
}
API cuModuleUnload(void* module) {
  delete static_cast<NullModule*>(module);
  return kSuccess;
}
API cuModuleGetFunction(void** function, void* module, const char*) {
  *function = module;
  return kSuccess;
}
API cuModuleGetGlobal_v2(unsigned long long* p, size_t* n, void* module, const char* name) {
  auto& globals = static_cast<NullModule*>(module)->globals;
  auto it = globals.find(name);
  if (it == globals.end() || it->second.empty()) return kNotFound;
  *p = reinterpret_cast<unsigned long long>(it->second.data());
  *n = it->second.size();
  return kSuccess;
}
API cuFuncGetAttribute(int* v, int which, void*) {
  *v = which == 0 ? 1024 : which == 4 ? 32 : 0;
  return kSuccess;
}
API cuFuncSetAttribute(void*, int, int) { return kSuccess; }
// NULL_CUDA_STATS=1: how many stream launches and graph launches the process made, at exit.
struct LaunchStats {
  std::atomic<uint64_t> kernels{0}, graphs{0};
  ~LaunchStats() {
    if (std::getenv("NULL_CUDA_STATS"))
      std::fprintf(stderr, "null cuda: %llu kernel launches, %llu graph launches\n",
                   (unsigned long long)kernels.load(), (unsigned long long)graphs.load());
  }
} g_stats;

// Launch counts, and failures on demand (tests/backends/gpu_driver/null_driver_test.cpp).
std::atomic<int> g_fail_launches{0};     // that many coming cuLaunchKernel calls fail
std::atomic<bool> g_fail_graphs{false};  // cuGraphInstantiate fails
std::atomic<uint64_t> g_instantiations{0};
extern "C" __attribute__((visibility("default"))) uint64_t null_cuda_graph_instantiations() {
  return g_instantiations.load();
}
extern "C" __attribute__((visibility("default"))) void null_cuda_launch_counts(uint64_t* kernels,
                                                                               uint64_t* graphs) {
  *kernels = g_stats.kernels.load();
  *graphs = g_stats.graphs.load();
}
extern "C" __attribute__((visibility("default"))) void null_cuda_fail(int launches, bool graphs) {
  g_fail_launches = launches;
  g_fail_graphs = graphs;
}

// The launch log, off until a test turns it on
// (tests/backends/gpu_driver/null_cuda_language_test.cpp).
struct LaunchEntry {
  unsigned grid[3], block[3], shared;
  unsigned char state[256];  // the module's __manifold_launch when the launch ran
  size_t state_size;
};
std::mutex g_log_mutex;
std::atomic<bool> g_logging{false};
std::vector<LaunchEntry> g_log;
extern "C" __attribute__((visibility("default"))) void null_cuda_log_launches(bool on) {
  std::lock_guard lock(g_log_mutex);
  g_logging = on;
  g_log.clear();
}
// Copies up to `capacity` entries of the log into `out`; returns how many there are.
extern "C" __attribute__((visibility("default"))) size_t null_cuda_launch_log(LaunchEntry* out,
                                                                              size_t capacity) {
  std::lock_guard lock(g_log_mutex);
  std::copy_n(g_log.begin(), std::min(capacity, g_log.size()), out);
  return g_log.size();
}

// For tests of what kernels receive: the first `count` parameters of stream launches, each read as
// 8 bytes (the test's kernels take 8-byte parameters only), kept from the latest launch.
std::atomic<int> g_capture_params{0};
std::mutex g_captured_mutex;
std::vector<uint64_t> g_captured;
extern "C" __attribute__((visibility("default"))) void null_cuda_capture_params(int count) {
  g_capture_params = count;
}
// Copies up to `max` parameters of the latest captured launch to `out`; returns how many.
extern "C" __attribute__((visibility("default"))) int null_cuda_captured_params(uint64_t* out,
                                                                                int max) {
  std::lock_guard lock(g_captured_mutex);
  const int n = std::min(max, static_cast<int>(g_captured.size()));
  std::copy(g_captured.begin(), g_captured.begin() + n, out);
  return n;
}

API cuLaunchKernel(void* function, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                   unsigned bz, unsigned shared, void* stream, void** params, void**) {
  for (int n = g_fail_launches.load(); n > 0;)
    if (g_fail_launches.compare_exchange_weak(n, n - 1)) return kOutOfMemory;
  if (const int count = g_capture_params.load(); count > 0 && params) {
    std::lock_guard lock(g_captured_mutex);
    g_captured.assign(static_cast<size_t>(count), 0);
    for (int i = 0; i < count; ++i) std::memcpy(&g_captured[i], params[i], sizeof(uint64_t));
  }
  ++g_stats.kernels;
  if (!g_logging) {
    of(stream)->push(nullptr, true);  // an ordering point: the kernel computes nothing
    return kSuccess;
  }
  LaunchEntry entry{{gx, gy, gz}, {bx, by, bz}, shared, {}, 0};
  auto* module = static_cast<NullModule*>(function);  // cuModuleGetFunction's handle
  of(stream)->push([entry, module]() mutable {
    auto it = module->globals.find("__manifold_launch");
    if (it != module->globals.end()) {
      entry.state_size = std::min(sizeof entry.state, it->second.size());
      device_move(entry.state, it->second.data(), entry.state_size);
    }
    std::lock_guard lock(g_log_mutex);
    if (g_logging) g_log.push_back(entry);
  });
  return kSuccess;
}

// Graphs: a chain of kernel, memcpy and memset nodes, launched as one piece of stream work that
// does the copies and fills in order (its kernels compute nothing). Nodes check that they are
// given a function, as the driver does.
struct NullGraph {
  std::vector<std::unique_ptr<int>> nodes;
  // Shared with launches in flight: a graph may be destroyed while its launch is queued.
  std::shared_ptr<std::vector<std::function<void()>>> work =
      std::make_shared<std::vector<std::function<void()>>>();
  // Dependencies must be nodes of this graph, as the driver checks (the work runs in the order
  // nodes were added, which follows every edge).
  bool has_nodes(void* const* deps, size_t n) const {
    for (size_t i = 0; i < n; ++i)
      if (std::none_of(nodes.begin(), nodes.end(),
                       [&](const auto& p) { return p.get() == deps[i]; }))
        return false;
    return true;
  }
  void* add_node(std::function<void()> fn) {
    if (fn) work->push_back(std::move(fn));
    nodes.push_back(std::make_unique<int>(0));
    return nodes.back().get();
  }
};
struct KernelNodeParams {
  void* func;
};
API cuGraphCreate(void** graph, unsigned) {
  *graph = new NullGraph;
  return kSuccess;
}
API cuGraphAddKernelNode_v2(void** node, void* graph, void* const* deps, size_t n,
                            const KernelNodeParams* params) {
  if (!params || !params->func) return kInvalidValue;
  if (!static_cast<NullGraph*>(graph)->has_nodes(deps, n)) return kInvalidValue;
  *node = static_cast<NullGraph*>(graph)->add_node(nullptr);
  return kSuccess;
}
API cuGraphAddMemcpyNode(void** node, void* graph, void* const* deps, size_t n, const Memcpy3D* c,
                         void*) {
  if (!static_cast<NullGraph*>(graph)->has_nodes(deps, n)) return kInvalidValue;
  const Memcpy3D m = *c;
  if (m.srcMemoryType != 2 || m.dstMemoryType != 2) return kInvalidValue;  // device to device
  auto* src = static_cast<const unsigned char*>(dev(m.srcDevice));
  auto* dst = static_cast<unsigned char*>(dev(m.dstDevice));
  *node = static_cast<NullGraph*>(graph)->add_node([=] {
    for (size_t z = 0; z < m.Depth; ++z)
      for (size_t y = 0; y < m.Height; ++y)
        device_move(dst + (z * m.dstHeight + y) * m.dstPitch,
                    src + (z * m.srcHeight + y) * m.srcPitch, m.WidthInBytes);
  });
  return kSuccess;
}
struct MemsetNodeParams {  // cuda.h's CUDA_MEMSET_NODE_PARAMS
  unsigned long long dst;
  size_t pitch;
  unsigned value, elementSize;
  size_t width, height;
};
API cuGraphAddMemsetNode(void** node, void* graph, void* const* deps, size_t n,
                         const MemsetNodeParams* params, void*) {
  if (!static_cast<NullGraph*>(graph)->has_nodes(deps, n)) return kInvalidValue;
  const MemsetNodeParams p = *params;
  if (p.elementSize != 1 && p.elementSize != 2 && p.elementSize != 4) return kInvalidValue;
  *node = static_cast<NullGraph*>(graph)->add_node([=] {
    for (size_t y = 0; y < p.height; ++y)
      device_fill(dev(p.dst + y * p.pitch), &p.value, p.elementSize, p.width);
  });
  return kSuccess;
}
API cuGraphInstantiateWithFlags(void** exec, void* graph, unsigned long long) {
  if (g_fail_graphs) return kOutOfMemory;
  ++g_instantiations;
  *exec = graph;  // the executable graph is the graph itself here
  return kSuccess;
}
API cuGraphExecKernelNodeSetParams_v2(void*, void* node, const KernelNodeParams* params) {
  return node && params && params->func ? kSuccess : kInvalidValue;
}
API cuGraphLaunch(void* exec, void* stream) {
  ++g_stats.graphs;
  auto work = static_cast<NullGraph*>(exec)->work;
  if (work->empty()) {
    of(stream)->push(nullptr, true);
    return kSuccess;
  }
  of(stream)->push([work] {
    for (const auto& fn : *work) fn();
  });
  return kSuccess;
}
API cuGraphExecDestroy(void*) { return kSuccess; }
API cuGraphDestroy(void* graph) {
  delete static_cast<NullGraph*>(graph);
  return kSuccess;
}
