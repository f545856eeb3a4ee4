// `manifold compile --device-target TARGET FILE.cl -o OUT [build options]`: OpenCL C compiled
// offline for any target the platform knows, without a device: the code a device would load
// (AMDGPU code object, PTX, CPU object), or with --binary Manifold's program binary (what
// clGetProgramInfo(CL_PROGRAM_BINARIES) gives, loadable with clCreateProgramWithBinary).
#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "commands.h"

#ifndef MANIFOLD_TOOL_COMPILER
namespace manifold_tool {
int run_compile_command(const std::vector<std::string>&) {
  std::fputs("manifold compile: not in this build (LLVM linked statically: use a regular build)\n",
             stderr);
  return 1;
}
}  // namespace manifold_tool
#else
#include "compiler/compiler.h"

namespace manifold_tool {
namespace {

void print_usage(FILE* to) {
  std::fputs(
      "usage: manifold compile --device-target TARGET FILE.cl -o OUT [--binary] [build options]\n"
      "  build options: as for clBuildProgram (-D NAME=VALUE, -I DIR, -cl-std=CL3.0, ...)\n"
      "  --binary: write Manifold's program binary instead of the device's code\n"
      "  TARGET:\n",
      to);
  for (const auto& [form, description] : manifold::compiler::target_name_forms())
    std::fprintf(to, "    %-32s %s\n", form.c_str(), description.c_str());
}

}  // namespace

int run_compile_command(const std::vector<std::string>& args) {
  std::string target_name, input, output, options;
  bool whole_binary = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const bool has_value = i + 1 < args.size();
    if (a == "-h" || a == "--help") {
      print_usage(stdout);
      return 0;
    } else if (a == "--device-target" && has_value) {
      target_name = args[++i];
    } else if (a.rfind("--device-target=", 0) == 0) {
      target_name = a.substr(16);
    } else if (a == "-o" && has_value) {
      output = args[++i];
    } else if (a == "--binary") {
      whole_binary = true;
    } else if ((a == "-D" || a == "-I") && has_value) {  // a build option with its value apart
      options += a + " " + args[++i] + " ";
    } else if (!a.empty() && a[0] == '-') {
      options += a + " ";
    } else if (input.empty()) {
      input = a;
    } else {
      std::fprintf(stderr, "manifold compile: more than one input file ('%s', '%s')\n",
                   input.c_str(), a.c_str());
      return 2;
    }
  }
  if (target_name.empty() || input.empty() || output.empty()) {
    print_usage(stderr);
    return 2;
  }
  std::string why;
  const std::optional<manifold::compiler::Target> target =
      manifold::compiler::target_named(target_name, &why);
  if (!target) {
    std::fprintf(stderr, "manifold compile: %s\n", why.c_str());
    print_usage(stderr);
    return 2;
  }
  std::ifstream file(input, std::ios::binary);
  if (!file) {
    std::fprintf(stderr, "manifold compile: cannot read '%s'\n", input.c_str());
    return 2;
  }
  const std::string source((std::istreambuf_iterator<char>(file)), {});
  manifold::compiler::BuildOutput out = manifold::compiler::build(source, options, *target);
  if (!out.success) {
    std::fprintf(stderr, "%s", out.log.c_str());
    std::fprintf(stderr, "manifold compile: building '%s' for %s failed\n", input.c_str(),
                 target_name.c_str());
    return 1;
  }
  if (!out.log.empty()) std::fprintf(stderr, "%s", out.log.c_str());  // warnings
  std::vector<uint8_t> bytes = out.binary;
  if (!whole_binary) {
    std::optional<std::vector<uint8_t> > code =
        manifold::compiler::native_code_of(out.binary, &why);
    if (!code) {
      std::fprintf(stderr, "manifold compile: %s\n", why.c_str());
      return 1;
    }
    bytes = std::move(*code);
  }
  std::ofstream written(output, std::ios::binary | std::ios::trunc);
  written.write(reinterpret_cast<const char*>(bytes.data()),
                static_cast<std::streamsize>(bytes.size()));
  written.close();
  if (!written) {
    std::fprintf(stderr, "manifold compile: cannot write '%s'\n", output.c_str());
    return 1;
  }
  std::printf("%s: %zu kernel(s) for %s -> %s (%zu bytes)\n", input.c_str(), out.kernels.size(),
              target_name.c_str(), output.c_str(), bytes.size());
  return 0;
}

}  // namespace manifold_tool
#endif  // MANIFOLD_TOOL_COMPILER
