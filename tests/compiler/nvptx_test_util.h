// The PTX a program builds to for an sm_90 GPU, for the tests that read the NVPTX pipeline's
// output.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "compiler/compiler.h"

namespace manifold::compiler::nvptx_test {

inline std::string ptx_of(const std::string& source, const char* options = "") {
  BuildOutput out = build(source, options, nvptx_target(9, 0));
  EXPECT_TRUE(out.success) << options << ":\n" << out.log;
  if (!out.success) return {};
  std::string error;
  auto ptx = nvptx_ptx_of(out.binary, &error);
  EXPECT_TRUE(ptx.has_value()) << error;
  return ptx.value_or("");
}

inline bool has(const std::string& text, const char* part) {
  return text.find(part) != std::string::npos;
}

}  // namespace manifold::compiler::nvptx_test
