// Short loops of known trip count are unrolled fully on NVPTX, as CUDA compilers do: a private
// array they index stays in registers, and the constant tables they read fold away; a loop the
// program keeps rolled (#pragma unroll 1) stays a loop.
#include <gtest/gtest.h>

#include <string>

#include "compiler/compiler.h"
#include "nvptx_test_util.h"

namespace {

using namespace manifold::compiler;
using manifold::compiler::nvptx_test::has;
using manifold::compiler::nvptx_test::ptx_of;

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

}  // namespace
