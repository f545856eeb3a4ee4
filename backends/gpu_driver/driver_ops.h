// The device operations on a driver GPU (driver_device.h): work put into one stream, in order
// (the stream queues of backends/gpu_stream call execute() and prepare_launch()). Defined by
// family in driver_ops_copy_impl.h (copies, fills, transfers), driver_ops_launch_impl.h (kernel
// launches) and driver_ops_graph_impl.h (command buffers as graphs), which driver_ops_impl.h
// includes for the file that instantiates DriverDevice.
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

template <class V>
struct RecordedGraph;

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
  void copy(const CopyOp& op) override;
  void copy_rect(const CopyRectOp& op) override;
  void copy_row_by_row(const CopyRectOp& op);
  // Whether a device-to-device rectangle's source and destination extents share bytes.
  bool device_spans_meet(const CopyRectOp& op);
  static bool repeats_one_row(const Rect& r);
  // Whether CUDA_MEMCPY3D can space the rectangle's slices: it counts them in rows.
  static bool slices_whole_rows_apart(const Rect& r);
  CUDA_MEMCPY3D rect_params(const CopyRectOp& op);
  // Whether the fill's pattern repeats a unit-byte value.
  static bool uniform(const FillOp& op, size_t unit);
  void fill(const FillOp& op) override;
  // A mapping is the buffer's host memory: the transfer before it brought the current bytes
  // there, and a mapping for writing left them current only there (the next use on the GPU
  // moves them back). Making the GPU's backing page-locks ALLOC/USE_HOST_PTR memory, so that
  // transfers to and from the mapped pointer (a common way to get pinned memory) are plain DMA.
  void map(const MapOp& op) override { device.address(*op.mem); }
  void launch(const KernelOp& op) override;
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
  bool prepare(const KernelOp& op, LaunchRecord& record, bool staged);

  // Whether `r` goes in one launch whose grid is the whole NDRange.
  bool one_launch(const compiler::NDRange& r) const;

  static typename DriverProgram<V>::LaunchState state_of(const compiler::NDRange& r);

  // Groups [first, first + count) of one dimension, launched as blocks of `block` work-items.
  struct Segment {
    size_t first, count;
    unsigned block;
  };
  // A dimension's groups of this launch in segments one grid may hold: the groups of the enqueued
  // local size, at most max_grid() at a time, then a smaller last group on its own.
  static std::vector<Segment> segments(const compiler::NDRange& r, unsigned d, size_t max);

  // A launch of part of an NDRange's work-groups, of more groups than one launch may have, or of
  // an NDRange with smaller last groups (non-uniform work-groups): grids of at most max_grid()
  // groups of one size, each told its first group, the NDRange's group count, global size and
  // enqueued local size.
  void launch_split(const KernelOp& op, LaunchRecord& record);

  // The shim's __manifold_launch, rewritten in stream order only when this launch needs other
  // values than the last one wrote. (One per module: launches of one program in several streams
  // with different offsets are ordered only by this stream's copy.)
  void write_launch_state(DriverProgram<V>& program,
                          const typename DriverProgram<V>::LaunchState& state);
};

}  // namespace detail
}  // namespace manifold::gpu
