// What a client's remote backend and manifold-server say to each other: one message per kind,
// its header a struct whose fields are listed once (visit) for both directions, bulk bytes in the
// message's payload. Object ids (queues, buffers, programs) are the client's, unique within its
// connection; the server maps them to its own OpenCL objects.
//
// A queue's commands arrive in order and run in order on one in-order queue of the server.
// EndJob closes one job of the client (a command's migrations and operation): the server answers
// Done once everything before it on that queue has run, after the Data of the job's reads.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "backends/remote/transport.h"
#include "core/byte_stream.h"

namespace manifold::remote {

constexpr uint32_t kProtocolVersion = 5;

enum class Kind : uint16_t {
  // Client to server.
  Hello = 1,
  CreateQueue,
  ReleaseQueue,
  CreateBuffer,  // answered by Reply
  ReleaseBuffer,
  LoadProgram,  // payload: the program binary; answered by Reply
  ReleaseProgram,
  Write,  // payload: the bytes
  WriteRect,
  Read,  // answered by Data before the job's Done
  ReadRect,
  Copy,
  CopyRect,
  Fill,
  Launch,
  EndJob,      // answered by Done
  ReadBuffer,  // outside any queue; answered by Data, or Reply on failure
  // Server to server: a buffer's bytes move from the server that has them (SendTo, answered by
  // Reply once they are sent) straight to the one whose queue waits for them (Receive), as
  // PeerData over a connection of the two servers; Cancel gives up a Receive.
  Receive,
  SendTo,
  PeerData,
  Cancel,
  Clock,  // answered at once by Clock with the server's time: the clocks' offset
  // Server to client.
  Welcome = 100,
  Reply,
  Data,  // payload: the bytes read
  Done,
};

struct Hello {
  uint32_t version = kProtocolVersion;
  std::string producer;  // the compiler's identity: programs are built by the client
  std::string token;
  uint64_t client_time_ns = 0;
  template <class V>
  void visit(V&& v) {
    v(version), v(producer), v(token), v(client_time_ns);
  }
};

struct Welcome {
  uint8_t accepted = 0;
  std::string message;  // why not, when refused
  std::string server;   // the server's host name
  uint64_t server_time_ns = 0;
  // The payload: the encoded DeviceDescriptions, in the server's order (encode_strings).
  template <class V>
  void visit(V&& v) {
    v(accepted), v(message), v(server), v(server_time_ns);
  }
};

// Strings as bytes (for payloads larger than a header may be), and back; nullopt when malformed.
inline std::vector<std::byte> encode_strings(const std::vector<std::string>& strings) {
  ByteWriter out;
  FieldWriter{out}(strings);
  return out.take();
}
inline std::optional<std::vector<std::string>> decode_strings(std::span<const std::byte> bytes) {
  ByteReader in(bytes);
  std::vector<std::string> strings;
  FieldReader{in}(strings);
  if (!in.ok() || !in.at_end()) return std::nullopt;
  return strings;
}

struct Reply {
  uint64_t request = 0;
  int32_t status = 0;   // CL_SUCCESS or the error code
  std::string message;  // what failed (a build log for LoadProgram)
  template <class V>
  void visit(V&& v) {
    v(request), v(status), v(message);
  }
};

struct CreateQueue {
  uint32_t queue = 0, device = 0;
  uint8_t profiling = 0;
  template <class V>
  void visit(V&& v) {
    v(queue), v(device), v(profiling);
  }
};

struct ReleaseQueue {
  uint32_t queue = 0;
  template <class V>
  void visit(V&& v) {
    v(queue);
  }
};

struct CreateBuffer {
  uint64_t request = 0, buffer = 0;
  uint32_t device = 0;
  uint64_t size = 0;
  template <class V>
  void visit(V&& v) {
    v(request), v(buffer), v(device), v(size);
  }
};

struct ReleaseBuffer {
  uint64_t buffer = 0;
  template <class V>
  void visit(V&& v) {
    v(buffer);
  }
};

struct LoadProgram {
  uint64_t request = 0, program = 0;
  uint32_t device = 0;
  std::string options;  // those the binary was built with
  // No program-scope variables: one loaded program may serve every load of the same binary
  // (variables are per program object, so a program with them gets one of its own).
  uint8_t shareable = 0;
  template <class V>
  void visit(V&& v) {
    v(request), v(program), v(device), v(options), v(shareable);
  }
};

// The payload of LoadProgram's Reply: what the server's device says of each kernel (the limits
// its registers and memory allow), one entry per kernel in each vector.
struct ProgramKernels {
  std::vector<std::string> names;
  std::vector<uint64_t> max_work_group_size, local_mem_size, private_mem_size;
  template <class V>
  void visit(V&& v) {
    v(names), v(max_work_group_size), v(local_mem_size), v(private_mem_size);
  }
};

struct ReleaseProgram {
  uint64_t program = 0;
  template <class V>
  void visit(V&& v) {
    v(program);
  }
};

// Bytes of a buffer; `offset` counts from the buffer's start.
struct Span {
  uint64_t buffer = 0, offset = 0;
};

// Large transfers go in pieces of at most this many bytes: the server copies one piece while the
// next is on the wire.
constexpr size_t kTransferPiece = size_t{4} << 20;

struct Write {
  uint32_t queue = 0;
  uint64_t tag = 0;  // unique on the link: where the server put the payload
  Span to;
  uint64_t size = 0;
  template <class V>
  void visit(V&& v) {
    v(queue), v(tag), v(to), v(size);
  }
};

struct Read {
  uint32_t queue = 0;
  uint64_t tag = 0;  // names the Data that brings the bytes
  Span from;
  uint64_t size = 0;
  template <class V>
  void visit(V&& v) {
    v(queue), v(tag), v(from), v(size);
  }
};

// A rectangle of a buffer; the host side travels packed (rows of region[0] bytes back to back).
struct RectOfBuffer {
  Span at;
  std::array<uint64_t, 3> region{};
  uint64_t row_pitch = 0, slice_pitch = 0;
};

struct WriteRect {
  uint32_t queue = 0;
  uint64_t tag = 0;
  RectOfBuffer to;
  template <class V>
  void visit(V&& v) {
    v(queue), v(tag), v(to);
  }
};

struct ReadRect {
  uint32_t queue = 0;
  uint64_t tag = 0;
  RectOfBuffer from;
  template <class V>
  void visit(V&& v) {
    v(queue), v(tag), v(from);
  }
};

struct Copy {
  uint32_t queue = 0;
  Span from, to;
  uint64_t size = 0;
  template <class V>
  void visit(V&& v) {
    v(queue), v(from), v(to), v(size);
  }
};

struct CopyRect {
  uint32_t queue = 0;
  RectOfBuffer from;
  Span to;
  uint64_t to_row_pitch = 0, to_slice_pitch = 0;
  template <class V>
  void visit(V&& v) {
    v(queue), v(from), v(to), v(to_row_pitch), v(to_slice_pitch);
  }
};

struct Fill {
  uint32_t queue = 0;
  Span to;
  uint64_t size = 0;
  std::string pattern;
  template <class V>
  void visit(V&& v) {
    v(queue), v(to), v(size), v(pattern);
  }
};

// One kernel argument of a launch.
struct LaunchArg {
  enum Kind : uint8_t { Value, Buffer, NullBuffer, Local };
  uint8_t kind = Value;
  Span buffer;        // Buffer: the bytes the argument starts at
  uint64_t size = 0;  // Buffer: bytes it spans; Local: bytes of __local memory
};

// The arguments travel in the payload (LaunchArgs): a kernel may take more than a header holds.
struct Launch {
  uint32_t queue = 0;
  uint64_t program = 0;
  std::string kernel;
  uint32_t work_dim = 1;
  std::array<uint64_t, 3> offset{}, global{}, local{};
  // The part of the work-groups to run (compiler::NDRange's): all zero for the whole NDRange.
  std::array<uint64_t, 3> group_first{}, group_count{};
  template <class V>
  void visit(V&& v) {
    v(queue), v(program), v(kernel), v(work_dim), v(offset), v(global), v(local), v(group_first),
        v(group_count);
  }
};

struct LaunchArgs {
  std::vector<LaunchArg> args;
  std::string values;  // the Value arguments' bytes, in order, each as its size says
  std::vector<uint64_t> value_sizes;
  template <class V>
  void visit(V&& v) {
    v(args), v(values), v(value_sizes);
  }
};

struct EndJob {
  uint32_t queue = 0;
  uint64_t job = 0;
  template <class V>
  void visit(V&& v) {
    v(queue), v(job);
  }
};

struct ReadBuffer {
  uint64_t request = 0;
  Span from;
  uint64_t size = 0;
  template <class V>
  void visit(V&& v) {
    v(request), v(from), v(size);
  }
};

struct Receive {
  uint32_t queue = 0;
  uint64_t ticket = 0;  // random: names the bytes between the servers
  Span to;
  uint64_t size = 0;
  template <class V>
  void visit(V&& v) {
    v(queue), v(ticket), v(to), v(size);
  }
};

struct SendTo {
  uint64_t request = 0, ticket = 0;
  Span from;
  uint64_t size = 0;
  std::string host;  // the receiving server, as this client reaches it
  uint16_t port = 0;
  std::string token;  // what the receiving server asks for
  template <class V>
  void visit(V&& v) {
    v(request), v(ticket), v(from), v(size), v(host), v(port), v(token);
  }
};

struct PeerData {
  uint64_t ticket = 0, offset = 0;
  template <class V>
  void visit(V&& v) {
    v(ticket), v(offset);
  }
};

struct Cancel {
  uint64_t ticket = 0;
  template <class V>
  void visit(V&& v) {
    v(ticket);
  }
};

struct Clock {
  uint64_t client_ns = 0, server_ns = 0;
  template <class V>
  void visit(V&& v) {
    v(client_ns), v(server_ns);
  }
};

struct Data {
  uint64_t tag = 0;  // a Read's tag, or a ReadBuffer's request
  template <class V>
  void visit(V&& v) {
    v(tag);
  }
};

struct Done {
  uint32_t queue = 0;
  uint64_t job = 0;
  int32_t status = 0;  // CL_COMPLETE or the error the job failed with
  std::string message;
  uint64_t start_ns = 0, end_ns = 0;  // the server's clock; 0 without profiling
  // The printf output of the job's kernels: the message's payload, not part of the header.
  std::string printf_output;
  template <class V>
  void visit(V&& v) {
    v(queue), v(job), v(status), v(message), v(start_ns), v(end_ns);
  }
};

template <class M>
std::vector<std::byte> encode(M message) {
  ByteWriter out;
  message.visit(FieldWriter{out});
  return out.take();
}

// nullopt for a header that is not exactly one such message.
template <class M>
std::optional<M> decode(std::span<const std::byte> header) {
  ByteReader in(header);
  M message;
  message.visit(FieldReader{in});
  if (!in.ok() || !in.at_end()) return std::nullopt;
  return message;
}

template <class M>
OutgoingMessage message(Kind kind, const M& header, Payload payload = {}) {
  OutgoingMessage m;
  m.kind = uint16_t(kind);
  m.header = encode(header);
  m.payload = std::move(payload);
  return m;
}

}  // namespace manifold::remote
