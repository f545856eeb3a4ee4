// One client of manifold-server: its handshake, and the OpenCL objects it made, by the ids it gave
// them. Messages are handled in order on the session's own thread (a program build may take a
// while; the transport's thread only moves bytes). When the connection ends, for whatever
// reason, the session waits for the client's commands to finish and releases everything it held.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "backends/remote/protocol.h"
#include "backends/remote/transport.h"
#include "server/peers.h"
#include "server/served_platform.h"
#include "server/staging.h"

namespace manifold::server {

// What sessions report, one line each (connections, refusals, ends).
using LogLine = std::function<void(const std::string&)>;

// The printf output of a queue's kernels (its CL_QUEUE_PRINTF_CALLBACK_MFLD), kept until the Done
// of the job that ran them carries it to the client.
struct PrintfOutput {
  std::mutex mutex;
  std::string text;
  void append(const char* bytes, size_t length) {
    std::lock_guard lock(mutex);
    text.append(bytes, length);
  }
  std::string take() {
    std::lock_guard lock(mutex);
    return std::exchange(text, {});
  }
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  // `token`: what a client must present (empty: any client is accepted).
  static std::shared_ptr<Session> start(ServedPlatform& platform, PeerLinks& peers,
                                        std::shared_ptr<remote::Connection> connection,
                                        std::string token, LogLine log);
  ~Session();
  remote::Handlers handlers();
  // Sessions whose thread still runs (the server waits for them at exit).
  static size_t active();

 private:
  Session(ServedPlatform& platform, PeerLinks& peers,
          std::shared_ptr<remote::Connection> connection, std::string token, LogLine log);
  void run();
  void handle(remote::IncomingMessage& m);
  void handle_safely(remote::IncomingMessage& m);
  void hello(const remote::Hello& h);
  void end();

  struct Job {
    std::vector<cl_event> events;
    struct PendingRead {
      uint64_t tag;
      std::shared_ptr<Staging> bytes;
      cl_event event;  // a reference of its own
    };
    std::vector<PendingRead> reads;
    std::vector<std::shared_ptr<const void>> keep;  // bytes written, until the job is done
    cl_int status = CL_COMPLETE;
    std::string message;
  };
  struct Queue {
    cl_command_queue queue = nullptr;
    bool profiling = false;
    Job job;                                      // the job whose commands are arriving
    std::shared_ptr<PrintfOutput> printf_output;  // null: the device prints to this stdout
  };
  // Queue `id`'s job, or null (and the job failed) for an unknown queue.
  Queue* queue(uint32_t id);
  cl_mem buffer(uint64_t id);
  // The buffer's bytes from `offset` on, `size` of them, as a memory object a kernel takes.
  cl_mem region(const remote::Span& span, uint64_t size);
  // Records a command's enqueue: its event, or its failure (`call` names it in the message).
  void enqueued(Queue& q, cl_int status, cl_event event, const char* call);
  void end_job(Queue& q, uint64_t job_id, uint32_t queue_id);
  void launch(const remote::Launch& l, const remote::LaunchArgs& a);
  void read_buffer(const remote::ReadBuffer& r);
  // Bytes of a buffer here, read and sent to another server for one of its tickets.
  void send_to(const remote::SendTo& s);
  void receive(const remote::Receive& r);
  // Reads bytes of a buffer outside any queue (they are current: their writers have ended).
  cl_int read_now(cl_mem mem, uint64_t offset, size_t size, void* host);
  void reply(uint64_t request, cl_int status, const std::string& message);

  ServedPlatform& platform_;
  PeerLinks& peers_;
  std::shared_ptr<remote::Connection> connection_;
  const std::string token_;
  LogLine log_;
  const std::string peer_;

  std::mutex inbox_mutex_;
  std::condition_variable inbox_ready_;
  std::deque<remote::IncomingMessage> inbox_;
  bool closed_ = false;
  bool busy_ = false;  // a message is being handled (by either thread)

  bool welcomed_ = false;  // written under inbox_mutex_ by the handler of the Hello
  // Touched by one thread at a time: whichever handles the message (busy_).
  std::map<uint32_t, Queue> queues_;
  std::map<uint64_t, cl_mem> buffers_;
  std::map<std::tuple<uint64_t, uint64_t, uint64_t>, cl_mem> regions_;
  std::map<uint64_t, cl_program> programs_;
  // Write payloads the transport put into staging memory, by the write's tag.
  std::mutex placed_mutex_;
  std::map<uint64_t, std::shared_ptr<Staging>> placed_;
  std::shared_ptr<Staging> take_placed(uint64_t tag);
  std::map<std::pair<uint64_t, std::string>, cl_kernel> kernels_;
  cl_command_queue service_queue_ = nullptr;  // ReadBuffer's (any queue reads current bytes)
};

}  // namespace manifold::server
