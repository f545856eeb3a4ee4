// Host<->device transfer figures of the bench worker, from pageable or pinned host memory.
#include <cstring>
#include <vector>

#include "bench_measurements.h"
#include "bench_metrics.h"

namespace manifold_tool {

// Host<->device copies from `host` (pageable or pinned memory), checked byte for byte.
TransferResults measure_transfers(const Device& device, unsigned char* source,
                                  unsigned char* target, size_t bytes, int repeats) {
  for (size_t i = 0; i < bytes; ++i) source[i] = static_cast<unsigned char>(i * 131 + 7);
  Buffer device_buffer = make_buffer(device, CL_MEM_READ_WRITE, bytes);
  std::vector<double> write_times, read_times;
  write_buffer(device, device_buffer, bytes, source);
  read_buffer(device, device_buffer, bytes, target);
  for (int r = 0; r < repeats; ++r) {
    auto start = Clock::now();
    write_buffer(device, device_buffer, bytes, source);
    write_times.push_back(seconds_between(start, Clock::now()));
    start = Clock::now();
    read_buffer(device, device_buffer, bytes, target);
    read_times.push_back(seconds_between(start, Clock::now()));
  }
  TransferResults results;
  results.host_to_device.value = static_cast<double>(bytes) / median_of(write_times) / 1e9;
  results.device_to_host.value = static_cast<double>(bytes) / median_of(read_times) / 1e9;
  if (std::memcmp(source, target, bytes) != 0) {
    size_t index = 0;
    while (source[index] == target[index]) ++index;
    std::string failure = mismatch("byte", index, source[index], target[index]);
    results.host_to_device.failure = results.device_to_host.failure = failure;
  }
  return results;
}

}  // namespace manifold_tool
