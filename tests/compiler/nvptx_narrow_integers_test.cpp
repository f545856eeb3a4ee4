// 64-bit index arithmetic that provably stays below 2^32 is computed in 32 bits on NVPTX (one
// instruction per add, shift or compare instead of two), and only that: a loop bounded by a
// 64-bit argument, a shift that may reach 32 and a signed compare keep their meaning.
#include <gtest/gtest.h>
#include <llvm/AsmParser/Parser.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>

#include <memory>
#include <string>

#include "compiler/compiler.h"
#include "compiler/nvptx_narrow_integers.h"
#include "nvptx_test_util.h"

namespace {

using namespace manifold::compiler;
using manifold::compiler::nvptx_test::has;
using manifold::compiler::nvptx_test::ptx_of;

TEST(NvptxNarrowIntegers, ReductionOverTheLocalSizeCountsIn32Bits) {
  const std::string ptx = ptx_of(R"CLC(
kernel void reduce(global const float* in, global float* partial, local float* scratch) {
  size_t lid = get_local_id(0);
  scratch[lid] = in[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (size_t stride = get_local_size(0) / 2; stride > 0; stride /= 2) {
    if (lid < stride) scratch[lid] += scratch[lid + stride];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) partial[get_group_id(0)] = scratch[0];
}
)CLC");
  EXPECT_TRUE(has(ptx, "shr.u32")) << ptx;
  EXPECT_FALSE(has(ptx, "shr.u64")) << ptx;
  EXPECT_FALSE(has(ptx, "setp.le.u64")) << ptx;
  EXPECT_FALSE(has(ptx, "setp.eq.b64")) << ptx;
}

TEST(NvptxNarrowIntegers, LoopBoundedByTheLocalSizeCountsIn32Bits) {
  const std::string ptx = ptx_of(R"CLC(
kernel void sum_tile(global float* a, local float* tile) {
  tile[get_local_id(0)] = a[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  float sum = 0.0f;
  for (size_t j = 0; j < get_local_size(0); ++j) sum += tile[j];
  a[get_global_id(0)] = sum;
}
)CLC");
  EXPECT_FALSE(has(ptx, "setp.ne.b64")) << ptx;
  EXPECT_TRUE(has(ptx, "setp.ne.b32")) << ptx;
}

TEST(NvptxNarrowIntegers, LoopBoundedByA64BitArgumentStays64Bit) {
  const std::string ptx = ptx_of(R"CLC(
kernel void scale(global float* a, ulong n) {
  for (size_t i = get_global_id(0); i < n; i += get_global_size(0)) a[i] *= 2.0f;
}
)CLC");
  EXPECT_TRUE(has(ptx, "setp.lt.u64") || has(ptx, "setp.ge.u64")) << ptx;
}

std::string narrowed_ir(const char* ir) {
  llvm::LLVMContext context;
  llvm::SMDiagnostic diagnostic;
  std::unique_ptr<llvm::Module> module = llvm::parseAssemblyString(ir, diagnostic, context);
  EXPECT_TRUE(module) << diagnostic.getMessage().str();
  if (!module) return {};
  for (llvm::Function& f : *module) narrow_index_arithmetic(f);
  std::string text;
  llvm::raw_string_ostream out(text);
  EXPECT_FALSE(llvm::verifyModule(*module, &out)) << text;
  module->print(out, nullptr);
  return text;
}

// Halving a value below 2^32 while it is "greater than zero": the compare becomes an unsigned
// one (a signed i32 compare would see values from 2^31 on as negative).
TEST(NvptxNarrowIntegers, SignedCompareOfNarrowedValuesBecomesUnsigned) {
  const std::string ir = narrowed_ir(R"IR(
define i32 @halve(i32 %n) {
entry:
  %wide = zext i32 %n to i64
  br label %loop
loop:
  %s = phi i64 [ %wide, %entry ], [ %next, %loop ]
  %next = lshr i64 %s, 1
  %more = icmp sgt i64 %next, 0
  br i1 %more, label %loop, label %exit
exit:
  %r = trunc i64 %s to i32
  ret i32 %r
}
)IR");
  EXPECT_FALSE(has(ir, "phi i64")) << ir;
  EXPECT_TRUE(has(ir, "phi i32")) << ir;
  EXPECT_TRUE(has(ir, "icmp ugt i32")) << ir;
  EXPECT_FALSE(has(ir, "icmp sgt")) << ir;
}

// A shift by an amount that may reach 32 is exact in i64 and poison in i32: it stays, and with
// it the phi it feeds; so does a counter nothing bounds.
TEST(NvptxNarrowIntegers, ShiftsThatMayReach32AndUnboundedCountersStay) {
  const std::string ir = narrowed_ir(R"IR(
define i64 @shifts(i64 %x, i64 %amount, i1 %c) {
entry:
  %small = and i64 %x, 255
  br label %loop
loop:
  %v = phi i64 [ %small, %entry ], [ %next, %loop ]
  %next = lshr i64 %v, %amount
  br i1 %c, label %loop, label %exit
exit:
  ret i64 %v
}
define i64 @counter(i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %i.next = add i64 %i, 1
  %more = icmp ult i64 %i.next, %n
  br i1 %more, label %loop, label %exit
exit:
  ret i64 %i
}
)IR");
  EXPECT_TRUE(has(ir, "lshr i64 %v, %amount")) << ir;
  EXPECT_TRUE(has(ir, "%v = phi i64")) << ir;
  EXPECT_TRUE(has(ir, "%i = phi i64")) << ir;
  EXPECT_TRUE(has(ir, "icmp ult i64")) << ir;
}

}  // namespace
