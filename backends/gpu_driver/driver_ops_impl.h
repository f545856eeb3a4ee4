// The device operations on a driver GPU (driver_device.h): work put into one stream, in order
// (the stream queues of backends/gpu_stream call execute() and prepare_launch()). Included once
// per vendor by the file that instantiates DriverDevice.
#pragma once

#include <algorithm>
#include <cstring>
#include <mutex>
#include <variant>

#include "backends/gpu_driver/driver_device.h"
#include "backends/gpu_driver/driver_queue.h"
#include "backends/gpu_stream/launch_batch.h"
#include "core/log.h"
#include "core/operations.h"
#include "core/sampler.h"

namespace manifold::gpu {
namespace detail {

template <class V>
void check_driver_call(CUresult r, const char* what) {
  if (r == CUDA_SUCCESS) return;
  fail(r == CUDA_ERROR_OUT_OF_MEMORY ? CL_MEM_OBJECT_ALLOCATION_FAILURE : CL_OUT_OF_RESOURCES,
       std::string(what) + ": " + V::error_text(r));
}

// A command buffer's operations on one GPU as one executable graph: kernel, memcpy and
// memset nodes whose edges are the recorded sync points and queue order, made at finalize (or at
// the list's first run on the device) and then launched once per enqueue. A list changed by mutable
// dispatch shares it: its kernel nodes are brought up to date (cuGraphExecKernelNodeSetParams
// leaves launches already made alone).
template <class V>
struct RecordedGraph {
  std::mutex mutex;  // enqueues of one command buffer into several streams at once
  bool tried = false, usable = false;
  DriverDevice<V>* device = nullptr;
  typename DriverStreamApi<V>::Chain chain;
  std::vector<int> node_of;           // per operation: its node in chain.nodes, or -1
  std::vector<LaunchRecord> kernels;  // per operation: what its kernel node launches
  uint64_t version = 0;               // of the list the nodes match
  ~RecordedGraph() {
    if (device) DriverStreamApi<V>::destroy_chain(*device, chain);
  }
};

template <class V>
class DriverOps final : public DeviceOps {
 public:
  DriverOps(DriverDevice<V>& device, CUstream stream) : device(device), stream(stream) {}

  DriverDevice<V>& device;
  CUstream stream;
  const Api& a = V::api();
  // Making a command buffer's graph: its launch state is written before each graph launch
  // (ready_launch_states), so a staged launch need not find it written already.
  bool building_graph = false;

  CUdeviceptr device_at(const Location& l) { return device.address(*l.mem) + l.offset; }

  void transfer(const Transfer& t) override;
  void make_resident(MemObject& mem) override { device.address(mem); }
  void copy(const CopyOp& op) override {
    if (op.src.mem && op.dst.mem)
      check_driver_call<V>(
          a.cuMemcpyDtoDAsync(device_at(op.dst), device_at(op.src), op.size, stream), "copy");
    else if (op.dst.mem)
      device.copy_to_device(device_at(op.dst), host_address(op.src), op.size, stream);
    else if (op.src.mem)
      device.copy_to_host(host_address(op.dst), device_at(op.src), op.size, stream);
    else
      std::memmove(host_address(op.dst), host_address(op.src), op.size);
  }
  void copy_rect(const CopyRectOp& op) override {
    // Image fills repeat one source row into every row (CUDA_MEMCPY3D's pitches are at least a
    // row); rectangles within one buffer whose rows interleave may not be one CUDA_MEMCPY3D (its
    // source and destination may not overlap), but no two rows share bytes.
    if (repeats_one_row(op.rect) || device_spans_meet(op)) {
      copy_row_by_row(op);
      return;
    }
    if (!slices_whole_rows_apart(op.rect)) {
      // One copy per slice (image transfers: a host slice pitch need only be large enough).
      CopyRectOp slice = op;
      slice.rect.region[2] = 1;
      for (size_t z = 0; z < op.rect.region[2]; ++z) {
        slice.src.offset = op.src.offset + z * op.rect.src_slice_pitch;
        slice.dst.offset = op.dst.offset + z * op.rect.dst_slice_pitch;
        const CUDA_MEMCPY3D c = rect_params(slice);
        check_driver_call<V>(a.cuMemcpy3DAsync(&c, stream), "rectangular copy");
      }
      return;
    }
    const CUDA_MEMCPY3D c = rect_params(op);
    check_driver_call<V>(a.cuMemcpy3DAsync(&c, stream), "rectangular copy");
  }
  void copy_row_by_row(const CopyRectOp& op) {
    const Rect& r = op.rect;
    CopyRectOp row = op;
    row.rect.region[1] = row.rect.region[2] = 1;
    for (size_t z = 0; z < r.region[2]; ++z)
      for (size_t y = 0; y < r.region[1]; ++y) {
        row.src.offset = op.src.offset + z * r.src_slice_pitch + y * r.src_row_pitch;
        row.dst.offset = op.dst.offset + z * r.dst_slice_pitch + y * r.dst_row_pitch;
        const CUDA_MEMCPY3D c = rect_params(row);
        check_driver_call<V>(a.cuMemcpy3DAsync(&c, stream), "rectangular copy");
      }
  }
  // Whether a device-to-device rectangle's source and destination extents share bytes.
  bool device_spans_meet(const CopyRectOp& op) {
    if (!op.src.mem || !op.dst.mem) return false;
    const CUdeviceptr src = device_at(op.src), dst = device_at(op.dst);
    return src < dst + op.rect.dst_span() && dst < src + op.rect.src_span();
  }
  static bool repeats_one_row(const Rect& r) {
    return r.src_row_pitch == 0 && r.region[1] * r.region[2] > 1;
  }
  // Whether CUDA_MEMCPY3D can space the rectangle's slices: it counts them in rows.
  static bool slices_whole_rows_apart(const Rect& r) {
    if (r.region[2] <= 1) return true;
    return r.src_row_pitch && r.dst_row_pitch && r.src_slice_pitch % r.src_row_pitch == 0 &&
           r.dst_slice_pitch % r.dst_row_pitch == 0;
  }
  CUDA_MEMCPY3D rect_params(const CopyRectOp& op) {
    CUDA_MEMCPY3D c{};
    const Rect& r = op.rect;
    // Each side is device memory (a buffer) or host memory.
    const auto side = [&](const Location& l, int& type, CUdeviceptr& device_side, auto& host_side) {
      type = l.mem ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
      if (l.mem)
        device_side = device_at(l);
      else
        host_side = host_address(l);
    };
    side(op.src, c.srcMemoryType, c.srcDevice, c.srcHost);
    side(op.dst, c.dstMemoryType, c.dstDevice, c.dstHost);
    c.srcPitch = r.src_row_pitch;
    c.srcHeight = r.src_row_pitch ? r.src_slice_pitch / r.src_row_pitch : 0;
    c.dstPitch = r.dst_row_pitch;
    c.dstHeight = r.dst_row_pitch ? r.dst_slice_pitch / r.dst_row_pitch : 0;
    c.WidthInBytes = r.region[0];
    c.Height = r.region[1];
    c.Depth = r.region[2];
    // One slice: its height is unused, and 0 as the driver asks. A 1D image array's layers are
    // rows of one slice whose pitches say one row per slice, which the H100's driver refused.
    if (c.Depth <= 1) c.srcHeight = c.dstHeight = 0;
    // One row: its pitch is unused, but the driver wants one at least as wide.
    if (c.Height <= 1 && c.Depth <= 1) {
      c.srcPitch = std::max(c.srcPitch, c.WidthInBytes);
      c.dstPitch = std::max(c.dstPitch, c.WidthInBytes);
    }
    return c;
  }
  // Whether the fill's pattern repeats a unit-byte value.
  static bool uniform(const FillOp& op, size_t unit) {
    for (size_t i = unit; i < op.pattern_size; ++i)
      if (op.pattern[i] != op.pattern[i % unit]) return false;
    return true;
  }
  void fill(const FillOp& op) override {
    const CUdeviceptr dst = device_at(op.dst);
    const std::byte* p = op.pattern.data();
    const size_t n = op.pattern_size;
    if (uniform(op, 1)) {
      check_driver_call<V>(
          a.cuMemsetD8Async(dst, static_cast<unsigned char>(p[0]), op.size, stream), "fill");
    } else if (uniform(op, 2) && dst % 2 == 0) {
      uint16_t v;
      std::memcpy(&v, p, 2);
      check_driver_call<V>(a.cuMemsetD16Async(dst, v, op.size / 2, stream), "fill");
    } else if (uniform(op, 4) && dst % 4 == 0) {
      uint32_t v;
      std::memcpy(&v, p, 4);
      check_driver_call<V>(a.cuMemsetD32Async(dst, v, op.size / 4, stream), "fill");
    } else {
      // Wider patterns: one copy of the pattern, then the filled prefix doubles in place.
      check_driver_call<V>(a.cuMemcpyHtoDAsync(dst, p, std::min(n, op.size), stream), "fill");
      for (size_t done = std::min(n, op.size); done < op.size;) {
        const size_t chunk = std::min(done, op.size - done);
        check_driver_call<V>(a.cuMemcpyDtoDAsync(dst + done, dst, chunk, stream), "fill");
        done += chunk;
      }
    }
  }
  // A mapping is the buffer's host memory: the transfer before it brought the current bytes
  // there, and a mapping for writing left them current only there (the next use on the GPU
  // moves them back). Making the GPU's backing page-locks ALLOC/USE_HOST_PTR memory, so that
  // transfers to and from the mapped pointer (a common way to get pinned memory) are plain DMA.
  void map(const MapOp& op) override { device.address(*op.mem); }
  void launch(const KernelOp& op) override {
    // Reused by every launch of the thread: its vectors keep their capacity.
    LaunchRecord& record = thread_launch_record();
    if (!prepare(op, record, /*staged=*/false)) return launch_split(op, record);
    const CUresult result = launch_record<V>(record, stream);
    if (result != CUDA_SUCCESS)
      fail(CL_OUT_OF_RESOURCES,
           "cuLaunchKernel '" + op.launch->info.name + "': " + V::error_text(result));
  }
  void native_kernel(const NativeKernelOp&) override {
    fail(CL_INVALID_OPERATION,
         std::string("native kernels do not run on ") + V::kDisplay + " devices");
  }
  bool run_recorded(const OperationList& list) override;
  bool ready_launch_states(const OperationList& list);
  bool build(const OperationList& list, RecordedGraph<V>& g);
  bool refresh(const OperationList& list, RecordedGraph<V>& g);

  void host_function(const HostFunctionOp& op) override {
    // Runs after everything before it in the stream (rare: SVM frees and the like).
    check_driver_call<V>(a.cuStreamSynchronize(stream), "host function");
    op.fn();
  }

  // Fills `record` with what launching `op` takes (parameters copied: the driver reads them
  // later for a staged launch). Throws what cannot launch. Returns false where the launch is not
  // one whole grid (launch_split() goes on from `record`), and, for `staged`, where it must first
  // write the program's launch state in stream order: it cannot wait in a batch.
  bool prepare(const KernelOp& op, LaunchRecord& record, bool staged) {
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
          const uint64_t address = arg.buffer ? device.address(*arg.buffer)
                                              : reinterpret_cast<uint64_t>(arg.svm_pointer);
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
    if (shared + static_cast<uint32_t>(kernel->static_shared) >
        uint32_t(device.max_dynamic_shared()))
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

  // Whether `r` goes in one launch whose grid is the whole NDRange.
  bool one_launch(const compiler::NDRange& r) const {
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

  static typename DriverProgram<V>::LaunchState state_of(const compiler::NDRange& r) {
    typename DriverProgram<V>::LaunchState state;
    for (unsigned d = 0; d < 3; ++d)
      state.global_id_base[d] = state.global_offset[d] = r.global_offset[d];
    state.work_dim = r.work_dim;
    return state;
  }

  // Groups [first, first + count) of one dimension, launched as blocks of `block` work-items.
  struct Segment {
    size_t first, count;
    unsigned block;
  };
  // A dimension's groups of this launch in segments one grid may hold: the groups of the enqueued
  // local size, at most max_grid() at a time, then a smaller last group on its own.
  static std::vector<Segment> segments(const compiler::NDRange& r, unsigned d, size_t max) {
    std::vector<Segment> out;
    const size_t local = d < r.work_dim ? r.local_size[d] : 1;
    const size_t full = d < r.work_dim ? r.global_size[d] / local : 1;  // groups of that size
    const size_t end = r.launch_end(d);
    for (size_t g = r.launch_first(d); g < std::min(end, full); g += max)
      out.push_back({g, std::min(max, std::min(end, full) - g), static_cast<unsigned>(local)});
    if (end > full)
      out.push_back({full, 1, static_cast<unsigned>(r.global_size[d] - full * local)});
    return out;
  }

  // A launch of part of an NDRange's work-groups, of more groups than one launch may have, or of
  // an NDRange with smaller last groups (non-uniform work-groups): grids of at most max_grid()
  // groups of one size, each told its first group, the NDRange's group count, global size and
  // enqueued local size.
  void launch_split(const KernelOp& op, LaunchRecord& record) {
    auto& program =
        const_cast<DriverProgram<V>&>(static_cast<const DriverProgram<V>&>(op.program()));
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

  // The shim's __manifold_launch, rewritten in stream order only when this launch needs other
  // values than the last one wrote. (One per module: launches of one program in several streams
  // with different offsets are ordered only by this stream's copy.)
  void write_launch_state(DriverProgram<V>& program,
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
};

// GPU to GPU: a peer copy in this stream (the source's writer has completed). Another backend's
// memory comes through host memory, which then holds the bytes too.
template <class V>
void DriverOps<V>::transfer(const Transfer& t) {
  MemObject& root = *t.root;
  // Host memory as the driver must address it (an SVM allocation's address is the GPU's memory).
  std::byte* host = root.dma_host_data() + t.offset;
  DeviceBacking* source = t.source();
  auto* from = dynamic_cast<DriverBacking<V>*>(source);
  if (t.to == kHostPlace) {  // for a mapping
    if (from && &from->device() == &device)
      device.copy_to_host(host, from->pointer() + t.offset, t.size, stream);
    else if (source)
      source->read_to_host(host, t.offset, t.size);
    return;
  }
  const CUdeviceptr dst = device.address(root) + t.offset;
  if (from && &from->device() != &device) {
    device.copy_from_peer(dst, from->device(), from->pointer() + t.offset, t.size, stream);
  } else {
    if (source) source->read_to_host(host, t.offset, t.size);
    device.make_current();
    device.copy_to_device(dst, host, t.size, stream);
  }
  device.make_current();  // a copy from another GPU may have switched the thread's context
}

template <class V>
bool DriverOps<V>::run_recorded(const OperationList& list) {
  if (!a.has_graphs || !a.cuGraphAddMemcpyNode || !a.cuGraphAddMemsetNode) return false;
  auto graph = list.native.get<RecordedGraph<V>>(&device);
  std::lock_guard lock(graph->mutex);
  if (!ready_launch_states(list)) return false;
  building_graph = true;  // only staged (graph) preparations look at it
  if (!graph->tried) {
    graph->tried = true;
    graph->usable = build(list, *graph);
    graph->version = list.native.version();
    if (!graph->usable)
      log_debug("%s: a command buffer's operations run one by one (no graph for them)", V::kName);
  }
  if (!graph->usable) return false;
  if (graph->version != list.native.version()) {
    if (!refresh(list, *graph)) return false;
    graph->version = list.native.version();
  }
  check_driver_call<V>(a.cuGraphLaunch(graph->chain.exec, stream), "command-buffer graph launch");
  return true;
}

// Programs whose kernels read the shim's launch state (offsets, work_dim) get it written in
// stream order before the graph, once per program; a graph cannot hold two different states.
template <class V>
bool DriverOps<V>::ready_launch_states(const OperationList& list) {
  for (const Operation& op : list.ops) {
    const auto* k = std::get_if<KernelOp>(&op);
    if (!k) continue;
    auto& program =
        const_cast<DriverProgram<V>&>(static_cast<const DriverProgram<V>&>(k->program()));
    if (!program.launch_state) continue;
    const compiler::NDRange& r = k->range;
    if (r.global_offset[0] || r.global_offset[1] || r.global_offset[2]) return false;
    const unsigned dims = program.launch_plain_dims.load(std::memory_order_acquire);
    if (dims == r.work_dim) continue;
    // Another kernel of this list already wanted the program's state for other dimensions.
    for (const Operation& earlier : list.ops) {
      if (&earlier == &op) break;
      const auto* e = std::get_if<KernelOp>(&earlier);
      if (e && &e->program() == &k->program() && e->range.work_dim != r.work_dim) return false;
    }
    write_launch_state(program, state_of(r));
  }
  return true;
}

template <class V>
bool DriverOps<V>::build(const OperationList& list, RecordedGraph<V>& g) {
  device.make_current();
  g.device = &device;
  typename DriverStreamApi<V>::Chain& c = g.chain;
  if (a.cuGraphCreate(&c.graph, 0) != CUDA_SUCCESS) return false;
  g.node_of.assign(list.ops.size(), -1);
  g.kernels.resize(list.ops.size());
  std::vector<void*> pointers;
  // The edges: each operation's recorded waits. `reach[i]`: the nodes that waiting for
  // operation i means waiting for (itself; for a barrier, what it waits for).
  const bool edges = list.after.size() == list.ops.size();
  std::vector<std::vector<CUgraphNode>> reach(list.ops.size());
  std::vector<CUgraphNode> waits;
  for (size_t i = 0; i < list.ops.size(); ++i) {
    const Operation& op = list.ops[i];
    waits.clear();
    if (!edges) {  // a plain chain
      if (!c.nodes.empty()) waits.push_back(c.nodes.back());
    } else {
      for (uint32_t d : list.after[i])
        for (CUgraphNode n : reach[d])
          if (std::find(waits.begin(), waits.end(), n) == waits.end()) waits.push_back(n);
    }
    if (std::holds_alternative<NoOp>(op)) {  // a barrier: no node, its waits pass through
      reach[i] = waits;
      continue;
    }
    CUgraphNode node = nullptr;
    const CUgraphNode* previous = waits.empty() ? nullptr : waits.data();
    const size_t deps = waits.size();
    CUresult r = CUDA_SUCCESS;
    if (const auto* k = std::get_if<KernelOp>(&op)) {
      if (!prepare(*k, g.kernels[i], /*staged=*/true)) return false;  // split or stateful
      const CUDA_KERNEL_NODE_PARAMS p = DriverStreamApi<V>::node_params(g.kernels[i], pointers);
      r = a.cuGraphAddKernelNode(&node, c.graph, previous, deps, &p);
    } else if (const auto* copy = std::get_if<CopyOp>(&op)) {
      if (!copy->src.mem || !copy->dst.mem) return false;
      CUDA_MEMCPY3D m{};
      m.srcMemoryType = m.dstMemoryType = CU_MEMORYTYPE_DEVICE;
      m.srcDevice = device_at(copy->src);
      m.dstDevice = device_at(copy->dst);
      m.srcPitch = m.dstPitch = m.WidthInBytes = copy->size;
      m.srcHeight = m.dstHeight = m.Height = m.Depth = 1;
      r = a.cuGraphAddMemcpyNode(&node, c.graph, previous, deps, &m, device.context());
    } else if (const auto* rect = std::get_if<CopyRectOp>(&op)) {
      if (!rect->src.mem || !rect->dst.mem || !slices_whole_rows_apart(rect->rect) ||
          repeats_one_row(rect->rect) || device_spans_meet(*rect))
        return false;
      const CUDA_MEMCPY3D m = rect_params(*rect);
      r = a.cuGraphAddMemcpyNode(&node, c.graph, previous, deps, &m, device.context());
    } else if (const auto* fill = std::get_if<FillOp>(&op)) {
      CUDA_MEMSET_NODE_PARAMS p{};
      p.dst = device_at(fill->dst);
      p.elementSize = uniform(*fill, 1) ? 1 : uniform(*fill, 2) ? 2 : uniform(*fill, 4) ? 4 : 0;
      if (!p.elementSize || p.dst % p.elementSize) return false;  // wider patterns: one by one
      std::memcpy(&p.value, fill->pattern.data(), p.elementSize);
      p.width = fill->size / p.elementSize;
      p.height = 1;
      p.pitch = fill->size;
      r = a.cuGraphAddMemsetNode(&node, c.graph, previous, deps, &p, device.context());
    } else {
      return false;
    }
    if (r != CUDA_SUCCESS) return false;
    g.node_of[i] = static_cast<int>(c.nodes.size());
    c.nodes.push_back(node);
    reach[i] = {node};
  }
  return !c.nodes.empty() && a.cuGraphInstantiate(&c.exec, c.graph, 0) == CUDA_SUCCESS;
}

template <class V>
bool DriverOps<V>::refresh(const OperationList& list, RecordedGraph<V>& g) {
  if (list.ops.size() != g.node_of.size()) return false;
  LaunchRecord& record = thread_launch_record();
  for (size_t i = 0; i < list.ops.size(); ++i) {
    const auto* k = std::get_if<KernelOp>(&list.ops[i]);
    const bool was_kernel = g.kernels[i].function != nullptr;
    if (!k) {
      if (was_kernel) return false;  // now an empty range: one by one
      continue;
    }
    if (!was_kernel || !prepare(*k, record, /*staged=*/true)) return false;
    if (record.same_launch(g.kernels[i])) continue;
    if (DriverStreamApi<V>::set_chain_node(g.chain, g.node_of[i], record) != CL_SUCCESS)
      return false;
    g.kernels[i] = record;
  }
  return true;
}

}  // namespace detail

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

template <class V>
void DriverDevice<V>::prepare_recorded(const OperationList& list) {
  const Api& a = api();
  if (!a.has_graphs || !a.cuGraphAddMemcpyNode || !a.cuGraphAddMemsetNode) return;
  auto graph = list.native.get<detail::RecordedGraph<V>>(this);
  std::lock_guard lock(graph->mutex);
  if (graph->tried) return;
  graph->tried = true;
  graph->version = list.native.version();
  try {
    detail::DriverOps<V> ops(*this, nullptr);
    ops.building_graph = true;
    graph->usable = ops.build(list, *graph);
  } catch (const Error& e) {
    // The operations go one by one; the enqueue reports what fails then.
    log_debug("%s: no graph for a command buffer: %s", V::kName, e.what());
    graph->usable = false;
  }
}

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
