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

 private:
  cl_int code_;
  std::string message_;
};

[[noreturn]] inline void fail(cl_int code, std::string message) { throw Error(code, std::move(message)); }

// `check(cond, CL_INVALID_VALUE, "...")`: the spec's conditions read as guards.
inline void check(bool condition, cl_int code, const char* message) {
  if (!condition) fail(code, message);
}

const char* error_name(cl_int code);

}  // namespace manifold
