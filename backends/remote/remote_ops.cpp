#include "backends/remote/remote_ops.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <random>

#include "core/error.h"
#include "core/kernel.h"

namespace manifold::remote {

namespace {

Span at(RemoteDevice& device, const Location& l) { return device.at(*l.mem, l.offset); }

// Names a transfer between two servers: not guessable by a third party on the network.
uint64_t random_ticket() {
  static std::mutex mutex;
  static std::mt19937_64 generator{std::random_device{}()};
  std::lock_guard lock(mutex);
  return generator();
}

RectOfBuffer rect_of(const Span& at, const Rect& r, size_t row_pitch, size_t slice_pitch) {
  return RectOfBuffer{at, {r.region[0], r.region[1], r.region[2]}, row_pitch, slice_pitch};
}

// Calls `row(z, y)` for every row of the rectangle.
template <class Row>
void each_row(const Rect& r, Row&& row) {
  for (size_t z = 0; z < r.region[2]; ++z)
    for (size_t y = 0; y < r.region[1]; ++y) row(z, y);
}

}  // namespace

void RemoteOps::send(OutgoingMessage m) {
  check(m.header.size() <= kMaxHeaderBytes, CL_OUT_OF_RESOURCES,
        "a command too large for one message to the server");
  if (!device_.link().send(std::move(m)))
    fail(CL_DEVICE_NOT_AVAILABLE,
         device_.info().name + ": the server is not reachable: " + device_.link().failure());
}

void RemoteOps::read(const Span& from, size_t size, void* host) {
  for (size_t done = 0; done < size;) {
    const size_t piece = std::min(size - done, kTransferPiece);
    const uint64_t tag = device_.link().next_id();
    device_.link().expect_data(tag, static_cast<std::byte*>(host) + done, piece);
    job_.reads.push_back(tag);
    send(message(Kind::Read, Read{queue_, tag, Span{from.buffer, from.offset + done}, piece}));
    done += piece;
  }
}

void RemoteOps::write(const Span& to, const std::byte* host, size_t size) {
  for (size_t done = 0; done < size;) {
    const size_t piece = std::min(size - done, kTransferPiece);
    const Write w{queue_, device_.link().next_id(), Span{to.buffer, to.offset + done}, piece};
    send(message(Kind::Write, w, Payload::lend(host + done, piece)));
    done += piece;
  }
}

void RemoteOps::transfer(const Transfer& t) {
  MemObject& root = *t.root;
  std::byte* host = root.dma_host_data() + t.offset;
  DeviceBacking* source = t.source();
  if (auto* from = dynamic_cast<RemoteBacking*>(source);
      from && &from->device().link() == &device_.link()) {
    const Span src{from->id(), t.offset};
    if (t.to == kHostPlace)
      read(src, t.size, host);
    else
      send(message(Kind::Copy, Copy{queue_, src, device_.at(root, t.offset), t.size}));
    return;
  }
  // Another server's: the bytes go from that server straight to this one, which waits for them
  // in this queue.
  if (auto* from = dynamic_cast<RemoteBacking*>(source); from && t.to != kHostPlace) {
    ServerLink& here = device_.link();
    ServerLink& there = from->device().link();
    const uint64_t ticket = random_ticket();
    send(message(Kind::Receive, Receive{queue_, ticket, device_.at(root, t.offset), t.size}));
    const uint64_t request = there.next_id();
    const SendTo send_to{request,
                         ticket,
                         Span{from->id(), t.offset},
                         t.size,
                         here.endpoint().host,
                         here.endpoint().port,
                         here.token()};
    const Reply r = there.request(request, message(Kind::SendTo, send_to));
    if (r.status != CL_SUCCESS) {
      here.send(message(Kind::Cancel, Cancel{ticket}));
      fail(r.status, from->device().info().name + ": " + r.message);
    }
    return;
  }
  // Through the buffer's host memory: what was sent before may still read it.
  if (source) {
    drain_();
    source->read_to_host(host, t.offset, t.size);
  }
  if (t.to != kHostPlace) write(device_.at(root, t.offset), host, t.size);
}

void RemoteOps::copy(const CopyOp& op) {
  if (!op.src.mem && !op.dst.mem) {
    drain_();
    std::memmove(host_address(op.dst), host_address(op.src), op.size);
  } else if (!op.src.mem) {
    // The application's bytes stay valid until the command ends, after the server has them.
    write(at(device_, op.dst), host_address(op.src), op.size);
  } else if (!op.dst.mem) {
    read(at(device_, op.src), op.size, host_address(op.dst));
  } else {
    send(message(Kind::Copy, Copy{queue_, at(device_, op.src), at(device_, op.dst), op.size}));
  }
}

void RemoteOps::copy_rect(const CopyRectOp& op) {
  const Rect& r = op.rect;
  const size_t row = r.region[0], packed_size = r.region[0] * r.region[1] * r.region[2];
  if (!op.src.mem && !op.dst.mem) {
    drain_();
    std::byte* dst = host_address(op.dst);
    const std::byte* src = host_address(op.src);
    each_row(r, [&](size_t z, size_t y) {
      std::memmove(dst + z * r.dst_slice_pitch + y * r.dst_row_pitch,
                   src + z * r.src_slice_pitch + y * r.src_row_pitch, row);
    });
  } else if (!op.src.mem) {
    std::vector<std::byte> packed(packed_size);
    const std::byte* src = host_address(op.src);
    each_row(r, [&](size_t z, size_t y) {
      std::memcpy(packed.data() + (z * r.region[1] + y) * row,
                  src + z * r.src_slice_pitch + y * r.src_row_pitch, row);
    });
    send(message(Kind::WriteRect,
                 WriteRect{queue_, device_.link().next_id(),
                           rect_of(at(device_, op.dst), r, r.dst_row_pitch, r.dst_slice_pitch)},
                 Payload::own(std::move(packed))));
  } else if (!op.dst.mem) {
    auto packed = std::make_shared<std::vector<std::byte>>(packed_size);
    job_.staging.push_back(packed);
    const uint64_t tag = device_.link().next_id();
    device_.link().expect_data(tag, packed->data(), packed_size);
    job_.reads.push_back(tag);
    std::byte* dst = host_address(op.dst);
    job_.after.push_back([packed, dst, r, row] {
      each_row(r, [&](size_t z, size_t y) {
        std::memcpy(dst + z * r.dst_slice_pitch + y * r.dst_row_pitch,
                    packed->data() + (z * r.region[1] + y) * row, row);
      });
    });
    send(message(Kind::ReadRect,
                 ReadRect{queue_, tag,
                          rect_of(at(device_, op.src), r, r.src_row_pitch, r.src_slice_pitch)}));
  } else {
    send(message(
        Kind::CopyRect,
        CopyRect{queue_, rect_of(at(device_, op.src), r, r.src_row_pitch, r.src_slice_pitch),
                 at(device_, op.dst), r.dst_row_pitch, r.dst_slice_pitch}));
  }
}

void RemoteOps::fill(const FillOp& op) {
  Fill f{queue_, at(device_, op.dst), op.size,
         std::string(reinterpret_cast<const char*>(op.pattern.data()), op.pattern_size)};
  send(message(Kind::Fill, f));
}

void RemoteOps::launch(const KernelOp& op) {
  const auto* program = dynamic_cast<const RemoteProgram*>(&op.program());
  check(program != nullptr, CL_INVALID_PROGRAM_EXECUTABLE,
        "the kernel's program is not loaded on the remote device");
  Launch l;
  l.queue = queue_;
  l.program = program->id();
  l.kernel = op.args->kernel->name();
  l.work_dim = op.range.work_dim;
  for (int d = 0; d < 3; ++d) {
    l.offset[d] = op.range.global_offset[d];
    l.global[d] = op.range.global_size[d];
    l.local[d] = op.range.local_size[d];
  }
  if (!op.range.whole())
    for (unsigned d = 0; d < op.range.work_dim; ++d) {
      // Explicit bounds: a count of 0 here means "every group from group_first on".
      l.group_first[d] = op.range.launch_first(d);
      l.group_count[d] = op.range.launch_end(d) - op.range.launch_first(d);
    }
  LaunchArgs args;
  const std::vector<compiler::KernelArg>& infos = op.launch->info.args;
  for (size_t i = 0; i < op.args->values.size() && i < infos.size(); ++i) {
    const KernelArgValue& v = op.args->values[i];
    LaunchArg a;
    switch (infos[i].kind) {
      case compiler::ArgKind::Buffer:
        check(v.svm_pointer == nullptr, CL_INVALID_OPERATION,
              "remote devices take no SVM pointers as kernel arguments");
        if (v.buffer) {
          a.kind = LaunchArg::Buffer;
          a.buffer = device_.at(*v.buffer, 0);
          a.size = v.buffer->size();
        } else {
          a.kind = LaunchArg::NullBuffer;
        }
        break;
      case compiler::ArgKind::Local:
        a.kind = LaunchArg::Local;
        a.size = v.local_size;
        break;
      case compiler::ArgKind::Value:
        a.kind = LaunchArg::Value;
        args.values.append(reinterpret_cast<const char*>(v.bytes.data()), v.bytes.size());
        args.value_sizes.push_back(v.bytes.size());
        break;
      default:
        fail(CL_INVALID_OPERATION, "remote devices take no images or samplers");
    }
    args.args.push_back(a);
  }
  if (op.printf_sink.callback) job_.printf_sink = op.printf_sink;
  send(message(Kind::Launch, l, Payload::own(encode(std::move(args)))));
}

void RemoteOps::native_kernel(const NativeKernelOp&) {
  fail(CL_INVALID_OPERATION, "native kernels do not run on remote devices");
}

void RemoteOps::host_function(const HostFunctionOp& op) {
  drain_();
  op.fn();
}

}  // namespace manifold::remote
