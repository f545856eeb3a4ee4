// Short loops of known trip count are unrolled fully on NVPTX, as CUDA compilers do: a private
// array they index stays in registers, and the constant tables they read fold away; a loop the
// program keeps rolled (#pragma unroll 1) stays a loop. Small loops of a trip count known at run
// time are unrolled by four, and ptxas may unroll them again: only their remainder loop is
// marked nounroll.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/compiler.h"

namespace {

using namespace manifold::compiler;

std::string ptx_of(const std::string& source) {
  BuildOutput out = build(source, "", nvptx_target(9, 0));
  EXPECT_TRUE(out.success) << out.log;
  if (!out.success) return {};
  std::string error;
  auto ptx = nvptx_ptx_of(out.binary, &error);
  EXPECT_TRUE(ptx.has_value()) << error;
  return ptx.value_or("");
}

bool has(const std::string& ptx, const char* text) { return ptx.find(text) != std::string::npos; }

// A lattice-Boltzmann cell's shape: 19 values in a private array, moments and a relaxation
// over a table of directions.
const char* kCell = R"CLC(
constant int cx[19] = {0, 1, -1, 0, 0, 0, 0, 1, -1, 1, -1, 0, 0, 1, -1, 1, -1, 0, 0};
constant int cy[19] = {0, 0, 0, 1, -1, 0, 0, 1, -1, 0, 0, 1, -1, -1, 1, 0, 0, 1, -1};
constant int cz[19] = {0, 0, 0, 0, 0, 1, -1, 0, 0, 1, -1, 1, -1, 0, 0, -1, 1, -1, 1};
kernel void cell(global float* f, ulong cells) {
  const ulong n = get_global_id(0);
  float fh[19];
  for (uint i = 0; i < 19; ++i) fh[i] = f[i * cells + n];
  float rho = 0.0f, ux = 0.0f, uy = 0.0f, uz = 0.0f;
  for (uint i = 0; i < 19; ++i) {
    rho += fh[i];
    ux += cx[i] * fh[i];
    uy += cy[i] * fh[i];
    uz += cz[i] * fh[i];
  }
  ux /= rho;
  uy /= rho;
  uz /= rho;
  const float usq = 1.5f * (ux * ux + uy * uy + uz * uz);
  for (uint i = 0; i < 19; ++i) {
    const float w = i == 0 ? 1.0f / 3.0f : i < 7 ? 1.0f / 18.0f : 1.0f / 36.0f;
    const float cu = cx[i] * ux + cy[i] * uy + cz[i] * uz;
    fh[i] += 0.6f * (w * rho * (1.0f + 3.0f * cu + 4.5f * cu * cu - usq) - fh[i]);
  }
  for (uint i = 0; i < 19; ++i) f[i * cells + n] = fh[i];
}
)CLC";

TEST(NvptxUnroll, ShortLoopsOverPrivateArraysUnrollFully) {
  const std::string ptx = ptx_of(kCell);
  EXPECT_FALSE(has(ptx, ".local")) << ptx;            // the array stays in registers
  EXPECT_FALSE(has(ptx, "bra")) << ptx;               // no loop is left
  EXPECT_FALSE(has(ptx, "ld.global.nc.b32")) << ptx;  // the tables folded
}

TEST(NvptxUnroll, PragmaUnrollOneKeepsTheLoop) {
  const std::string ptx = ptx_of(R"CLC(
kernel void rolled(global float* f) {
  float sum = 0.0f;
#pragma unroll 1
  for (uint i = 0; i < 19; ++i) sum += f[i * get_global_size(0) + get_global_id(0)];
  f[get_global_id(0)] = sum;
}
)CLC");
  EXPECT_TRUE(has(ptx, "bra")) << ptx;
}

// The loops' bodies: from each label to a branch back to it.
std::vector<std::string> loops_of(const std::string& ptx) {
  std::vector<std::string> loops;
  for (size_t at = ptx.find("\n$L__BB"); at != std::string::npos;
       at = ptx.find("\n$L__BB", at + 1)) {
    const size_t colon = ptx.find(':', at);
    const std::string label = ptx.substr(at + 1, colon - at - 1);
    const size_t back = ptx.find(label + ";", colon);  // a branch to it, after it
    if (back != std::string::npos) loops.push_back(ptx.substr(at + 1, back - at - 1));
  }
  return loops;
}

size_t count(const std::string& text, const char* what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// A CSR sparse matrix-vector product: the row's length is known at run time only.
TEST(NvptxUnroll, RuntimeLoopsUnrollByFourAndStayOpenToPtxas) {
  const std::string ptx = ptx_of(R"CLC(
kernel void spmv(global const uint* start, global const uint* columns, global const float* values,
                 global const float* x, global float* y) {
  const uint r = get_global_id(0);
  float sum = 0.0f;
  for (uint k = start[r]; k < start[r + 1]; ++k) sum += values[k] * x[columns[k]];
  y[r] = sum;
}
)CLC");
  const std::vector<std::string> loops = loops_of(ptx);
  ASSERT_EQ(loops.size(), 2u) << ptx;  // the unrolled loop and its remainder
  size_t rolled = 0, unrolled = 0;
  for (const std::string& loop : loops) {
    const size_t fmas = count(loop, "fma.rn.f32");
    if (fmas == 1) {
      ++rolled;
      EXPECT_TRUE(has(loop, "nounroll")) << loop;  // the remainder, at most three iterations
    } else {
      ++unrolled;
      EXPECT_EQ(fmas, 4u) << loop;
      EXPECT_FALSE(has(loop, "nounroll")) << loop;
    }
  }
  EXPECT_EQ(rolled, 1u) << ptx;
  EXPECT_EQ(unrolled, 1u) << ptx;
}

}  // namespace
