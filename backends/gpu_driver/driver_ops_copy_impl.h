// The driver GPU's copies, fills and transfers between memories (driver_ops.h).
#pragma once

#include <algorithm>
#include <cstring>

#include "backends/gpu_driver/driver_ops.h"

namespace manifold::gpu {

namespace detail {

template <class V>
void DriverOps<V>::copy(const CopyOp& op) {
  if (op.src.mem && op.dst.mem)
    check_driver_call<V>(a.cuMemcpyDtoDAsync(device_at(op.dst), device_at(op.src), op.size, stream),
                         "copy");
  else if (op.dst.mem)
    device.copy_to_device(device_at(op.dst), host_address(op.src), op.size, stream);
  else if (op.src.mem)
    device.copy_to_host(host_address(op.dst), device_at(op.src), op.size, stream);
  else
    std::memmove(host_address(op.dst), host_address(op.src), op.size);
}

template <class V>
void DriverOps<V>::copy_rect(const CopyRectOp& op) {
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

template <class V>
void DriverOps<V>::copy_row_by_row(const CopyRectOp& op) {
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

template <class V>
bool DriverOps<V>::device_spans_meet(const CopyRectOp& op) {
  if (!op.src.mem || !op.dst.mem) return false;
  const CUdeviceptr src = device_at(op.src), dst = device_at(op.dst);
  return src < dst + op.rect.dst_span() && dst < src + op.rect.src_span();
}

template <class V>
bool DriverOps<V>::repeats_one_row(const Rect& r) {
  return r.src_row_pitch == 0 && r.region[1] * r.region[2] > 1;
}

template <class V>
bool DriverOps<V>::slices_whole_rows_apart(const Rect& r) {
  if (r.region[2] <= 1) return true;
  return r.src_row_pitch && r.dst_row_pitch && r.src_slice_pitch % r.src_row_pitch == 0 &&
         r.dst_slice_pitch % r.dst_row_pitch == 0;
}

template <class V>
CUDA_MEMCPY3D DriverOps<V>::rect_params(const CopyRectOp& op) {
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

template <class V>
bool DriverOps<V>::uniform(const FillOp& op, size_t unit) {
  for (size_t i = unit; i < op.pattern_size; ++i)
    if (op.pattern[i] != op.pattern[i % unit]) return false;
  return true;
}

template <class V>
void DriverOps<V>::fill(const FillOp& op) {
  const CUdeviceptr dst = device_at(op.dst);
  const std::byte* p = op.pattern.data();
  const size_t n = op.pattern_size;
  if (uniform(op, 1)) {
    check_driver_call<V>(a.cuMemsetD8Async(dst, static_cast<unsigned char>(p[0]), op.size, stream),
                         "fill");
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

// GPU to GPU: a peer copy in this stream (the source's writer has completed). Another backend's
// memory comes through host memory, which then holds the bytes too.
template <class V>
void DriverOps<V>::transfer(const Transfer& t) {
  MemObject& root = *t.root;
  // Host memory as the driver must address it (an SVM allocation's address is the GPU's memory).
  std::byte* host = root.dma_host_data() + t.offset;
  DeviceBacking* source = t.source();
  auto* from = dynamic_cast<DriverBacking<V>*>(source);
  if (t.to == kHostPlace) {                                // for a mapping
    if (from && &from->device().root() == &device.root())  // a sub-device's memory is its GPU's
      device.copy_to_host(host, from->pointer() + t.offset, t.size, stream);
    else if (source)
      source->read_to_host(host, t.offset, t.size);
    return;
  }
  const CUdeviceptr dst = device.address(root) + t.offset;
  if (from && &from->device().root() != &device.root()) {
    device.copy_from_peer(dst, from->device(), from->pointer() + t.offset, t.size, stream);
  } else {
    if (source) source->read_to_host(host, t.offset, t.size);
    device.make_current();
    device.copy_to_device(dst, host, t.size, stream);
  }
  device.make_current();  // a copy from another GPU may have switched the thread's context
}

}  // namespace detail

}  // namespace manifold::gpu
