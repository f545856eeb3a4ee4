// The driver GPU's kernel launches (driver_ops.h): one grid, staged in a batch, or split into
// several grids; and the stream queues' entry points into the operations.
#pragma once

#include <algorithm>
#include <cstring>
#include <mutex>
#include <vector>

#include "backends/gpu_driver/driver_ops.h"
#include "core/job.h"

namespace manifold::gpu {

template <class V>
CUresult launch_record(const LaunchRecord& record, CUstream stream) {
  // Pointers to the parameters: on the stack unless the kernel has very many of them.
  constexpr size_t kInline = 32;
  void* inline_params[kInline];
  std::vector<void*> heap_params;
  void** params = inline_params;
  if (record.offsets.size() > kInline) {
    heap_params.resize(record.offsets.size());
    params = heap_params.data();
  }
  record.param_pointers(params);
  return V::api().cuLaunchKernel(static_cast<CUfunction>(record.function), record.grid[0],
                                 record.grid[1], record.grid[2], record.block[0], record.block[1],
                                 record.block[2], record.shared, stream, params, nullptr);
}

namespace detail {

template <class V>
void DriverOps<V>::launch(const KernelOp& op) {
  // Reused by every launch of the thread: its vectors keep their capacity.
  LaunchRecord& record = thread_launch_record();
  if (!prepare(op, record, /*staged=*/false)) return launch_split(op, record);
  const CUresult result = launch_record<V>(record, stream);
  if (result != CUDA_SUCCESS)
    fail(CL_OUT_OF_RESOURCES,
         "cuLaunchKernel '" + op.launch->info.name + "': " + V::error_text(result));
}

template <class V>
bool DriverOps<V>::prepare(const KernelOp& op, LaunchRecord& record, bool staged) {
  const auto& program = static_cast<const DriverProgram<V>&>(op.program());
  const compiler::KernelInfo& info = op.launch->info;
  // Found when the kernel object was made (DriverProgram<V>::kernel_handle).
  auto* kernel = static_cast<DriverProgram<V>::Kernel*>(const_cast<void*>(op.launch->handle));
  if (!kernel) fail(CL_INVALID_KERNEL, "the kernel is not in the loaded module");
  const compiler::NDRange& r = op.range;
  const bool single = one_launch(r);
  if (staged && !single) return false;
  if (program.launch_state && single) {
    const bool no_offset = !r.global_offset[0] && !r.global_offset[1] && !r.global_offset[2];
    const bool written =
        no_offset && program.launch_plain_dims.load(std::memory_order_acquire) == r.work_dim;
    if (staged && !written && !building_graph) return false;
    if (!written) write_launch_state(const_cast<DriverProgram<V>&>(program), state_of(r));
  }
  const size_t n = op.args->values.size();
  record.clear_params();
  uint32_t shared = 0;
  for (size_t i = 0; i < n; ++i) {
    const KernelArgValue& arg = op.args->values[i];
    switch (info.args[i].kind) {
      case compiler::ArgKind::Buffer: {
        const uint64_t address =
            arg.buffer ? device.address(*arg.buffer) : reinterpret_cast<uint64_t>(arg.svm_pointer);
        record.add_param(&address, sizeof address);
        break;
      }
      case compiler::ArgKind::Image: {
        // Its descriptor's address (compiler/image_abi.h), passed as a buffer's would be.
        const uint64_t descriptor = device.image_descriptor_address(*arg.buffer);
        record.add_param(&descriptor, sizeof descriptor);
        break;
      }
      case compiler::ArgKind::Sampler: {
        // Its CLK_* bits as a pointer's value (compiler/image_abi.h).
        const uint64_t bits = arg.sampler ? arg.sampler->kernel_bits() : 0;
        record.add_param(&bits, sizeof bits);
        break;
      }
      case compiler::ArgKind::Local:
        // 128 bytes: the widest OpenCL type (double16); the block's base is as aligned
        // (compiler/nvptx_pipeline.cpp), so every __local argument is aligned for its type.
        shared = (shared + 127) & ~127u;
        record.add_param(&shared, sizeof shared);  // a u32 parameter
        shared += static_cast<uint32_t>(arg.local_size);
        break;
      default:
        record.add_param(arg.bytes.data(), arg.bytes.size());
        break;
    }
  }
  if (shared + static_cast<uint32_t>(kernel->static_shared) > uint32_t(device.max_dynamic_shared()))
    fail(CL_OUT_OF_RESOURCES, "the work-group needs more local memory than the GPU has");
  if (int(shared) > kernel->dynamic_shared_limit) {
    device.make_current();
    check_driver_call<V>(
        a.cuFuncSetAttribute(kernel->function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                             device.max_dynamic_shared() - kernel->static_shared),
        "raising the kernel's local memory limit");
    kernel->dynamic_shared_limit = device.max_dynamic_shared() - kernel->static_shared;
  }
  record.function = kernel->function;
  record.shared = shared;
  for (unsigned d = 0; d < 3; ++d) {
    record.block[d] = d < r.work_dim ? static_cast<unsigned>(r.local_size[d]) : 1;
    record.grid[d] = static_cast<unsigned>(single ? r.num_groups(d) : 1);  // launch_split's
  }
  return single;
}

template <class V>
bool DriverOps<V>::one_launch(const compiler::NDRange& r) const {
  if (!r.whole()) return false;
  // More groups than max_grid(), or a smaller last group (this runs for every launch: a
  // division only for a local size that is not a power of two).
  for (unsigned d = 0; d < r.work_dim; ++d) {
    if (r.global_size[d] > device.max_grid()[d] * r.local_size[d]) return false;
    if (r.local_size[d] & (r.local_size[d] - 1)) {
      if (r.global_size[d] % r.local_size[d]) return false;
    } else if (r.global_size[d] & (r.local_size[d] - 1)) {
      return false;
    }
  }
  return true;
}

template <class V>
typename DriverProgram<V>::LaunchState DriverOps<V>::state_of(const compiler::NDRange& r) {
  typename DriverProgram<V>::LaunchState state;
  for (unsigned d = 0; d < 3; ++d)
    state.global_id_base[d] = state.global_offset[d] = r.global_offset[d];
  state.work_dim = r.work_dim;
  return state;
}

template <class V>
std::vector<typename DriverOps<V>::Segment> DriverOps<V>::segments(const compiler::NDRange& r,
                                                                   unsigned d, size_t max) {
  std::vector<Segment> out;
  const size_t local = d < r.work_dim ? r.local_size[d] : 1;
  const size_t full = d < r.work_dim ? r.global_size[d] / local : 1;  // groups of that size
  const size_t end = r.launch_end(d);
  for (size_t g = r.launch_first(d); g < std::min(end, full); g += max)
    out.push_back({g, std::min(max, std::min(end, full) - g), static_cast<unsigned>(local)});
  if (end > full) out.push_back({full, 1, static_cast<unsigned>(r.global_size[d] - full * local)});
  return out;
}

template <class V>
void DriverOps<V>::launch_split(const KernelOp& op, LaunchRecord& record) {
  auto& program = const_cast<DriverProgram<V>&>(static_cast<const DriverProgram<V>&>(op.program()));
  const compiler::NDRange& r = op.range;
  typename DriverProgram<V>::LaunchState state = state_of(r);
  for (unsigned d = 0; d < 3; ++d) {
    state.num_groups[d] = r.num_groups(d);
    state.global_size[d] = d < r.work_dim ? r.global_size[d] : 1;
    state.local_size[d] = d < r.work_dim ? r.local_size[d] : 1;
  }
  const auto& max = device.max_grid();
  const std::vector<Segment> xs = segments(r, 0, max[0]), ys = segments(r, 1, max[1]),
                             zs = segments(r, 2, max[2]);
  for (const Segment& z : zs)
    for (const Segment& y : ys)
      for (const Segment& x : xs) {
        const Segment* part[3] = {&x, &y, &z};
        for (unsigned d = 0; d < 3; ++d) {
          state.group_offset[d] = part[d]->first;
          state.global_id_base[d] = r.global_offset[d] + part[d]->first * state.local_size[d];
          record.grid[d] = static_cast<unsigned>(part[d]->count);
          record.block[d] = part[d]->block;
        }
        if (program.launch_state) write_launch_state(program, state);
        if (CUresult result = launch_record<V>(record, stream); result != CUDA_SUCCESS)
          fail(CL_OUT_OF_RESOURCES,
               "cuLaunchKernel '" + op.launch->info.name + "': " + V::error_text(result));
      }
}

template <class V>
void DriverOps<V>::write_launch_state(DriverProgram<V>& program,
                                      const typename DriverProgram<V>::LaunchState& state) {
  std::lock_guard lock(program.launch_mutex);
  if (program.launch_written == state) return;
  // Small and from pageable memory: the driver copies it out before returning.
  // The module's variable may be shorter than the state (PTX: no global_size).
  const size_t size = std::min(program.launch_state_size, sizeof state);
  check_driver_call<V>(a.cuMemcpyHtoDAsync(program.launch_state, &state, size, stream),
                       "launch state");
  program.launch_written = state;
  typename DriverProgram<V>::LaunchState plain;
  plain.work_dim = state.work_dim;
  program.launch_plain_dims.store(state == plain ? state.work_dim : 0, std::memory_order_release);
}

}  // namespace detail

template <class V>
int DriverStreamApi<V>::prepare_launch(DriverDevice<V>& device, Job& job, LaunchRecord& record) {
  const KernelOp* op = job.plain_launch();
  if (!op) return kNotBatchable;
  device.ensure_current();
  bool batchable = true;
  const cl_int status = status_of_work(V::kName, [&] {
    batchable = detail::DriverOps<V>(device, nullptr).prepare(*op, record, /*staged=*/true);
  });
  return status == CL_SUCCESS && !batchable ? kNotBatchable : status;
}

template <class V>
cl_int DriverStreamApi<V>::execute(DriverDevice<V>& device, Job& job, CUstream stream) {
  // A bare launch needs no driver call for the context (ensure_current); what may copy through
  // staging buffers or allocate does.
  if (job.plain_launch())
    device.ensure_current();
  else
    device.make_current();
  detail::DriverOps<V> ops(device, stream);
  return job.run(ops);
}

}  // namespace manifold::gpu
