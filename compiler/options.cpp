#include "compiler/options.h"

#include <algorithm>
#include <array>

#include "compiler/compiler.h"

namespace manifold::compiler {

std::vector<std::string> split_options(std::string_view options) {
  std::vector<std::string> words;
  std::string current;
  bool in_word = false;
  char quote = 0;
  for (size_t i = 0; i < options.size(); ++i) {
    char c = options[i];
    if (quote) {
      if (c == quote) {
        quote = 0;
      } else if (c == '\\' && quote == '"' && i + 1 < options.size() &&
                 (options[i + 1] == '"' || options[i + 1] == '\\')) {
        current += options[++i];
      } else {
        current += c;
      }
    } else if (c == '"' || c == '\'') {
      quote = c;
      in_word = true;
    } else if (c == '\\' && i + 1 < options.size()) {
      current += options[++i];
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      if (in_word) words.push_back(std::move(current));
      current.clear();
      in_word = false;
    } else {
      current += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(std::move(current));
  return words;
}

namespace {

// Math options valid at compile time and (as "program linking options") at link time.
constexpr std::array<std::string_view, 5> kLinkMathOptions = {
    "-cl-denorms-are-zero", "-cl-no-signed-zeros", "-cl-unsafe-math-optimizations",
    "-cl-finite-math-only", "-cl-fast-relaxed-math"};
constexpr std::array<std::string_view, 4> kCompileOnlyMathOptions = {
    "-cl-single-precision-constant", "-cl-mad-enable", "-cl-fp32-correctly-rounded-divide-sqrt",
    "-cl-uniform-work-group-size"};

bool contains(auto& list, std::string_view word) {
  return std::find(list.begin(), list.end(), word) != list.end();
}

bool parse_cl_std(std::string_view value, ParsedOptions* out) {
  struct Version {
    std::string_view name;
    unsigned version;
    bool cpp;
  };
  static constexpr Version kVersions[] = {
      {"CL1.0", 100, false},   {"CL1.1", 110, false},    {"CL1.2", 120, false},
      {"CL2.0", 200, false},   {"CL3.0", 300, false},    {"CLC++", 300, true},
      {"CLC++1.0", 300, true}, {"CLC++2021", 300, true},
  };
  for (const Version& v : kVersions) {
    if (value == v.name) {
      out->cl_std = v.version;
      out->cl_cpp = v.cpp;
      return true;
    }
  }
  return false;
}

}  // namespace

bool parse_options(std::string_view options, OptionsKind kind, ParsedOptions* out,
                   std::string* why) {
  ParsedOptions parsed;
  std::vector<std::string> words = split_options(options);
  auto fail = [&](std::string message) {
    if (why) *why = std::move(message);
    return false;
  };
  const bool compiling = kind != OptionsKind::Link;
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& word = words[i];
    // Options taking a value either glued ("-DX") or as the next word ("-D X").
    auto take_value = [&](std::string_view flag, std::string* value) {
      if (word.size() > flag.size()) {
        *value = word.substr(flag.size());
        return true;
      }
      if (i + 1 >= words.size()) return false;
      *value = words[++i];
      return true;
    };
    if (compiling && word.starts_with("-D")) {
      std::string value;
      if (!take_value("-D", &value) || value.empty() || value[0] == '=')
        return fail("option -D needs a macro name");
      parsed.defines.push_back(value);
    } else if (compiling && word.starts_with("-I")) {
      std::string value;
      if (!take_value("-I", &value) || value.empty()) return fail("option -I needs a directory");
      parsed.include_dirs.push_back(value);
    } else if (compiling && word.starts_with("-cl-std=")) {
      if (!parse_cl_std(std::string_view(word).substr(8), &parsed))
        return fail("unknown OpenCL C version in '" + word + "'");
    } else if (contains(kLinkMathOptions, word) ||
               (compiling && contains(kCompileOnlyMathOptions, word))) {
      if (word == "-cl-fast-relaxed-math") parsed.fast_relaxed_math = true;
      if (std::find(parsed.math_flags.begin(), parsed.math_flags.end(), word) ==
          parsed.math_flags.end())
        parsed.math_flags.push_back(word);
    } else if (word == "-cl-no-subgroup-ifp") {
      // Sub-groups make no independent-forward-progress promise on the CPU anyway.
    } else if (compiling && word == "-cl-opt-disable") {
      parsed.opt_disable = true;
    } else if (compiling && word == "-cl-strict-aliasing") {
      // OpenCL 1.x option, deprecated since 1.1: accepted and ignored.
    } else if (compiling && word == "-cl-kernel-arg-info") {
      parsed.kernel_arg_info = true;
    } else if (compiling && word == "-w") {
      parsed.no_warnings = true;
    } else if (compiling && word == "-Werror") {
      parsed.warnings_as_errors = true;
    } else if (compiling && word == "-g") {
      parsed.debug_info = true;
    } else if (kind == OptionsKind::Link && word == "-create-library") {
      parsed.create_library = true;
    } else if (kind == OptionsKind::Link && word == "-enable-link-options") {
      parsed.enable_link_options = true;
    } else {
      const char* what = kind == OptionsKind::Link      ? "linker"
                         : kind == OptionsKind::Compile ? "compiler"
                                                        : "build";
      return fail(std::string("unknown ") + what + " option '" + word + "'");
    }
  }
  if (parsed.enable_link_options && !parsed.create_library)
    return fail("-enable-link-options is only valid together with -create-library");
  if (out) *out = std::move(parsed);
  return true;
}

bool options_valid(std::string_view options, std::string* why) {
  return parse_options(options, OptionsKind::Build, nullptr, why) ||
         parse_options(options, OptionsKind::Link, nullptr, why);
}

bool options_valid(std::string_view options, OptionsKind kind, std::string* why) {
  return parse_options(options, kind, nullptr, why);
}

}  // namespace manifold::compiler
