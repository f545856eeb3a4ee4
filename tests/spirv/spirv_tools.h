// SPIR-V for the tests, made at test time by the tools CMake found (MANIFOLD_TEST_CLANG:
// clang-22 with its SPIR-V target; MANIFOLD_TEST_SPIRV_AS: SPIRV-Tools' assembler).
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace spirv_test {

inline std::string temp_path(const std::string& suffix) {
  static int counter = 0;
  return (std::filesystem::temp_directory_path() /
          ("manifold-spirv-" + std::to_string(getpid()) + "-" + std::to_string(counter++) + suffix))
      .string();
}

inline std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

// Runs `command` on `input` written to a file; the output file's bytes, empty on failure
// (*log gets the tool's messages).
inline std::vector<uint8_t> run_tool(const std::string& command_before_input,
                                     const std::string& input, const std::string& input_suffix,
                                     const std::string& command_after_input, std::string* log) {
  const std::string in = temp_path(input_suffix), out = temp_path(".spv"),
                    messages = temp_path(".log");
  std::ofstream(in) << input;
  const std::string command = command_before_input + " " + in + " " + command_after_input + " -o " +
                              out + " > " + messages + " 2>&1";
  const int status = std::system(command.c_str());
  std::vector<uint8_t> bytes;
  if (status == 0) bytes = read_file(out);
  if (log) {
    std::vector<uint8_t> text = read_file(messages);
    log->assign(text.begin(), text.end());
  }
  std::filesystem::remove(in);
  std::filesystem::remove(out);
  std::filesystem::remove(messages);
  return bytes;
}

// Whether the tools the build found are on this machine (a GPU machine running a bundle built
// elsewhere has neither): tests that make SPIR-V skip without them.
inline bool tools_present() {
  return std::filesystem::exists(MANIFOLD_TEST_CLANG) &&
         std::filesystem::exists(MANIFOLD_TEST_SPIRV_AS);
}

// OpenCL C -> SPIR-V 1.2 with clang's SPIR-V backend (LLVM's own, not the translator).
inline std::vector<uint8_t> clang_spirv(const std::string& source, std::string* log = nullptr,
                                        const std::string& flags = "-cl-std=CL2.0 -O2") {
  return run_tool(std::string(MANIFOLD_TEST_CLANG) + " --target=spirv64v1.2 " + flags + " -c",
                  source, ".cl", "", log);
}

// SPIR-V assembly -> a module of SPIR-V 1.0.
inline std::vector<uint8_t> assemble(const std::string& text, std::string* log = nullptr) {
  return run_tool(std::string(MANIFOLD_TEST_SPIRV_AS) + " --target-env spv1.0", text, ".spvasm", "",
                  log);
}

}  // namespace spirv_test
