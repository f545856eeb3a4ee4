// Runs a child process with extra environment variables, hands its stdout to a callback line by
// line as it arrives, keeps its stderr, and kills it (by its own pid) after a time limit.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace manifold_tool {

struct ChildOutcome {
  bool started = false;
  int exit_code = -1;  // when it exited normally
  int signal = 0;      // when a signal ended it (SIGSEGV...)
  bool timed_out = false;
  std::string error_text;  // stderr (the last 16 KiB) or why it could not start
  bool succeeded() const { return started && !timed_out && signal == 0 && exit_code == 0; }
  std::string describe() const;  // "exit 3", "killed by SIGSEGV", "timed out after 120 s"
};

ChildOutcome run_child(const std::vector<std::string>& argv,
                       const std::vector<std::pair<std::string, std::string>>& environment,
                       double timeout_seconds,
                       const std::function<void(const std::string&)>& on_line);

// The path of this executable (/proc/self/exe).
std::string self_executable();

}  // namespace manifold_tool
