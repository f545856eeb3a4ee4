// Parsing of OpenCL build, compile and link option strings.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "compiler/compiler.h"

namespace manifold::compiler {

// The options of one clBuildProgram / clCompileProgram / clLinkProgram call, classified.
struct ParsedOptions {
  std::vector<std::string> defines;       // "NAME" or "NAME=VALUE" (from -D)
  std::vector<std::string> include_dirs;  // from -I
  unsigned cl_std = 0;                    // 100..300 from -cl-std=CLx.y; 0: not given
  bool cl_cpp = false;                    // -cl-std=CLC++*
  bool opt_disable = false;               // -cl-opt-disable
  // Math options, passed to clang as they are (it knows them all).
  std::vector<std::string> math_flags;
  bool fast_relaxed_math = false;
  bool kernel_arg_info = false;
  bool no_warnings = false;         // -w
  bool warnings_as_errors = false;  // -Werror
  bool create_library = false;      // -create-library (link only)
  bool enable_link_options = false;
  bool debug_info = false;  // -g (accepted, no debug info is emitted yet)
};

// Splits an option string into words the way a shell would (quotes and backslashes).
std::vector<std::string> split_options(std::string_view options);

// Parses and validates; false with *why on an unknown or malformed option.
bool parse_options(std::string_view options, OptionsKind kind, ParsedOptions* out,
                   std::string* why);

}  // namespace manifold::compiler
