#include "subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <map>

extern char** environ;

namespace manifold_tool {

std::string ChildOutcome::describe() const {
  if (!started) return "could not start: " + error_text;
  if (timed_out) return "timed out";
  if (signal)
    return std::string("killed by signal ") + std::to_string(signal) + " (" + strsignal(signal) +
           ")";
  return "exit " + std::to_string(exit_code);
}

std::string self_executable() {
  char path[4096];
  ssize_t length = readlink("/proc/self/exe", path, sizeof path - 1);
  if (length <= 0) return "manifold";
  path[length] = '\0';
  return path;
}

ChildOutcome run_child(const std::vector<std::string>& argv,
                       const std::vector<std::pair<std::string, std::string>>& environment,
                       double timeout_seconds,
                       const std::function<void(const std::string&)>& on_line) {
  ChildOutcome outcome;
  // The environment: ours, with the given variables replaced or added.
  std::map<std::string, std::string> variables;
  for (char** entry = environ; *entry; ++entry) {
    const char* equals = std::strchr(*entry, '=');
    if (equals) variables[std::string(*entry, static_cast<size_t>(equals - *entry))] = equals + 1;
  }
  for (const auto& [name, value] : environment) variables[name] = value;
  std::vector<std::string> env_strings;
  for (const auto& [name, value] : variables) env_strings.push_back(name + "=" + value);
  std::vector<char*> envp;
  for (auto& text : env_strings) envp.push_back(text.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  std::vector<char*> args;
  for (auto& text : argv_copy) args.push_back(text.data());
  args.push_back(nullptr);

  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) {
    outcome.error_text = "pipe failed";
    return outcome;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  pid_t pid = 0;
  int spawn_error = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (spawn_error != 0) {
    close(out_pipe[0]);
    close(err_pipe[0]);
    outcome.error_text = std::string(argv[0]) + ": " + std::strerror(spawn_error);
    return outcome;
  }
  outcome.started = true;

  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
  std::string pending_line;
  bool out_open = true, err_open = true;
  char buffer[4096];
  while (out_open || err_open) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      outcome.timed_out = true;
      kill(pid, SIGKILL);
      break;
    }
    pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
    if (!out_open) fds[0].fd = -1;
    if (!err_open) fds[1].fd = -1;
    int ready = poll(fds, 2, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR) break;
    if (fds[0].revents) {
      ssize_t n = read(out_pipe[0], buffer, sizeof buffer);
      if (n <= 0) {
        out_open = false;
      } else {
        pending_line.append(buffer, static_cast<size_t>(n));
        size_t newline;
        while ((newline = pending_line.find('\n')) != std::string::npos) {
          on_line(pending_line.substr(0, newline));
          pending_line.erase(0, newline + 1);
        }
      }
    }
    if (fds[1].revents) {
      ssize_t n = read(err_pipe[0], buffer, sizeof buffer);
      if (n <= 0) {
        err_open = false;
      } else {
        outcome.error_text.append(buffer, static_cast<size_t>(n));
        if (outcome.error_text.size() > 32768)
          outcome.error_text.erase(0, outcome.error_text.size() - 16384);
      }
    }
  }
  if (!pending_line.empty()) on_line(pending_line);
  close(out_pipe[0]);
  close(err_pipe[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) outcome.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status) && !outcome.timed_out) outcome.signal = WTERMSIG(status);
  if (outcome.error_text.size() > 16384)
    outcome.error_text.erase(0, outcome.error_text.size() - 16384);
  return outcome;
}

}  // namespace manifold_tool
