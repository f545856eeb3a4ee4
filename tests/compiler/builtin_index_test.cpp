// The builtin library's build-time symbol index (split_library.cmake, read without parsing the
// library's parts) against the index made by parsing every part.
#include <gtest/gtest.h>
#include <llvm/Support/MemoryBuffer.h>

#include <string>
#include <string_view>

#include "compiler/stages.h"

extern "C" const unsigned char manifold_builtins_bitcode[];
extern "C" const unsigned long manifold_builtins_bitcode_size;
extern "C" const char manifold_builtins_index[];
extern "C" const unsigned long manifold_builtins_index_size;
// The NVPTX pipeline's portable builtins (compiler/nvptx/nvptx.cmake), split the same way.
extern "C" const char manifold_nvptx_portable_bitcode[];
extern "C" const unsigned long manifold_nvptx_portable_bitcode_size;
extern "C" const char manifold_nvptx_portable_index[];
extern "C" const unsigned long manifold_nvptx_portable_index_size;

namespace manifold::compiler {
namespace {

llvm::MemoryBufferRef library_bitcode() {
  return llvm::MemoryBufferRef(
      llvm::StringRef(reinterpret_cast<const char*>(manifold_builtins_bitcode),
                      manifold_builtins_bitcode_size),
      "manifold-builtins");
}

std::string_view embedded_index() {
  return std::string_view(manifold_builtins_index, manifold_builtins_index_size);
}

TEST(BuiltinIndex, BuildTimeIndexMatchesParsedParts) {
  const SplitLibrary indexed(library_bitcode(), embedded_index());
  const SplitLibrary parsed(library_bitcode());
  ASSERT_TRUE(indexed.error().empty()) << indexed.error();
  ASSERT_TRUE(parsed.error().empty()) << parsed.error();
  EXPECT_TRUE(indexed.index_was_given());
  EXPECT_FALSE(parsed.index_was_given());
  const auto from_build = indexed.symbol_index();
  const auto from_parts = parsed.symbol_index();
  // Thousands of builtins (every overload of every OpenCL C function).
  EXPECT_GT(from_parts.size(), 5000u);
  ASSERT_EQ(from_build.size(), from_parts.size());
  for (size_t i = 0; i < from_build.size(); ++i)
    ASSERT_EQ(from_build[i], from_parts[i]) << "entry " << i;
}

TEST(BuiltinIndex, IndexNotFittingTheBitcodeIsRebuiltByParsing) {
  // One line for a library of many parts: ignored, the parts are parsed instead.
  const SplitLibrary library(library_bitcode(), "_Z3sinf _Z3cosf\n");
  ASSERT_TRUE(library.error().empty()) << library.error();
  EXPECT_FALSE(library.index_was_given());
  EXPECT_EQ(library.symbol_index(), SplitLibrary(library_bitcode()).symbol_index());
}

TEST(BuiltinIndex, NvptxPortableIndexMatchesParsedParts) {
  const llvm::MemoryBufferRef bitcode(
      llvm::StringRef(manifold_nvptx_portable_bitcode, manifold_nvptx_portable_bitcode_size),
      "nvptx portable builtins");
  const SplitLibrary indexed(
      bitcode, std::string_view(manifold_nvptx_portable_index, manifold_nvptx_portable_index_size));
  const SplitLibrary parsed(bitcode);
  ASSERT_TRUE(indexed.error().empty()) << indexed.error();
  EXPECT_TRUE(indexed.index_was_given());
  // The C11 atomics and every half builtin.
  EXPECT_GT(parsed.symbol_index().size(), 2000u);
  EXPECT_EQ(indexed.symbol_index(), parsed.symbol_index());
}

}  // namespace
}  // namespace manifold::compiler
