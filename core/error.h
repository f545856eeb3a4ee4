// Errors inside Manifold are exceptions carrying the OpenCL code; the C boundary (api/)
// turns them back into cl_int once, so no exception ever reaches the application.
#pragma once

#include <CL/cl.h>

#include <exception>
#include <string>

namespace manifold {

class Error : public std::exception {
 public:
  Error(cl_int code, std::string message) : code_(code), message_(std::move(message)) {}
  cl_int code() const noexcept { return code_; }
  const char* what() const noexcept override { return message_.c_str(); }

  // The few entry points that return an object together with an error (clLinkProgram returns
  // the failed program, whose build log says why) attach the handle here; the C boundary hands
  // it out instead of NULL.
  Error& with_handle(void* handle) noexcept {
    handle_ = handle;
    return *this;
  }
  void* handle() const noexcept { return handle_; }

 private:
  cl_int code_;
  std::string message_;
  void* handle_ = nullptr;
};

[[noreturn]] inline void fail(cl_int code, std::string message) {
  throw Error(code, std::move(message));
}

// `check(cond, CL_INVALID_VALUE, "...")`: the spec's conditions read as guards.
inline void check(bool condition, cl_int code, const char* message) {
  if (!condition) fail(code, message);
}

const char* error_name(cl_int code);

// Device work's one mapping from a failure to the status of its command, for every backend: an
// Error's own code, CL_OUT_OF_HOST_MEMORY for std::bad_alloc, else CL_OUT_OF_RESOURCES. Logged
// with `where` (the event shows only the code). Call inside a catch block.
cl_int status_of_current_exception(const char* where) noexcept;

// Runs `work` (returning void); CL_SUCCESS, or what it threw as a status.
template <class Work>
cl_int status_of_work(const char* where, Work&& work) noexcept {
  try {
    work();
    return CL_SUCCESS;
  } catch (...) {
    return status_of_current_exception(where);
  }
}

}  // namespace manifold
