// The CPU device's __local atomics become plain accesses (compiler/cpu_local_atomics.h); every
// other atomic stays.
#include <gtest/gtest.h>
#include <llvm/AsmParser/Parser.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>

#include <memory>
#include <string>

#include "compiler/cpu_local_atomics.h"

namespace {

using manifold::compiler::make_local_atomics_plain;

std::string text_of(const llvm::Module& module) {
  std::string text;
  llvm::raw_string_ostream out(text);
  module.print(out, nullptr);
  return text;
}

TEST(CpuLocalAtomics, LocalAtomicsBecomePlainAndOthersStay) {
  llvm::LLVMContext context;
  llvm::SMDiagnostic error;
  std::unique_ptr<llvm::Module> module = llvm::parseAssemblyString(R"IR(
define i32 @f(ptr addrspace(3) %l, ptr addrspace(1) %g, ptr addrspace(4) %p) {
  %a = atomicrmw volatile add ptr addrspace(3) %l, i32 1 seq_cst, align 4
  %b = cmpxchg ptr addrspace(3) %l, i32 %a, i32 7 acq_rel acquire, align 4
  %old = extractvalue { i32, i1 } %b, 0
  %c = load atomic i32, ptr addrspace(3) %l acquire, align 4
  store atomic i32 %c, ptr addrspace(3) %l release, align 4
  %d = atomicrmw umax ptr addrspace(1) %g, i32 %old seq_cst, align 4
  %e = atomicrmw add ptr addrspace(4) %p, i32 %d seq_cst, align 4
  fence syncscope("workgroup") acq_rel
  ret i32 %e
}
)IR",
                                                                   error, context);
  ASSERT_NE(module, nullptr) << error.getMessage().str();
  EXPECT_EQ(make_local_atomics_plain(*module, 3), 4u);
  std::string problems;
  llvm::raw_string_ostream out(problems);
  EXPECT_FALSE(llvm::verifyModule(*module, &out)) << problems;
  unsigned atomics = 0;
  for (llvm::Instruction& i : module->getFunction("f")->getEntryBlock()) {
    if (!i.isAtomic()) continue;
    ++atomics;
    if (auto* rmw = llvm::dyn_cast<llvm::AtomicRMWInst>(&i))
      EXPECT_NE(rmw->getPointerAddressSpace(), 3u) << text_of(*module);
    else
      EXPECT_TRUE(llvm::isa<llvm::FenceInst>(i)) << text_of(*module);
  }
  EXPECT_EQ(atomics, 3u) << text_of(*module);  // the global and generic RMWs, the fence
}

}  // namespace
