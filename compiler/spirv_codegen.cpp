#include "compiler/spirv_codegen.h"

#include <llvm/CodeGen/MachineFunction.h>
#include <llvm/CodeGen/MachineModuleInfo.h>
#include <llvm/CodeGen/TargetSubtargetInfo.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/Pass.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

namespace manifold::compiler {
namespace {

// LLVM 22's SPIR-V backend numbers basic blocks through a process-wide table keyed by
// (MachineFunction address, block number) that no module clears (SPIRVModuleAnalysis::MAI's
// BBNumToRegMap). A MachineFunction allocated where one of an earlier build lived inherits that
// build's label ids, which then collide with this module's ids. This pass, run before code
// generation, creates every function's MachineFunction itself, at an address no earlier build
// handed to the backend; the backend then finds and uses them.
class FreshMachineFunctions final : public llvm::ModulePass {
 public:
  static char ID;
  FreshMachineFunctions(llvm::MachineModuleInfoWrapperPass& info, const llvm::TargetMachine& tm)
      : llvm::ModulePass(ID), info_(info), machine_(tm) {}

  llvm::StringRef getPassName() const override { return "Manifold fresh MachineFunctions"; }
  void getAnalysisUsage(llvm::AnalysisUsage& usage) const override { usage.setPreservesAll(); }

  bool runOnModule(llvm::Module& module) override {
    llvm::MachineModuleInfo& info = info_.getMMI();
    // Functions numbered apart from those the backend may still create on its own.
    unsigned number = 1u << 20;
    std::vector<std::unique_ptr<llvm::MachineFunction>> refused;  // freed after this pass
    for (llvm::Function& function : module) {
      // The backend replaces functions passing aggregates by value (SPIRVPrepareFunctions):
      // theirs are made later, unguarded; the emitted module's validation still catches a
      // collision. Kernels never pass aggregates by value.
      if (function.isDeclaration() || has_aggregate_signature(function) ||
          info.getMachineFunction(function))
        continue;
      const llvm::TargetSubtargetInfo& subtarget = *machine_.getSubtargetImpl(function);
      for (;;) {
        auto created = std::make_unique<llvm::MachineFunction>(function, machine_, subtarget,
                                                               info.getContext(), number++);
        if (!used_addresses().insert(created.get()).second) {
          refused.push_back(std::move(created));  // held so that the next one lands elsewhere
          continue;
        }
        created->initTargetMachineFunctionInfo(subtarget);
        machine_.registerMachineRegisterInfoCallback(*created);
        info.insertFunction(function, std::move(created));
        break;
      }
    }
    return false;
  }

 private:
  static bool has_aggregate_signature(const llvm::Function& function) {
    if (function.getReturnType()->isAggregateType()) return true;
    for (const llvm::Argument& argument : function.args())
      if (argument.getType()->isAggregateType()) return true;
    return false;
  }

  // Addresses of every MachineFunction given to the backend in this process (8 bytes per
  // kernel built: the backend's own table grows faster). Guarded by emit_spirv's lock.
  static std::unordered_set<const void*>& used_addresses() {
    static std::unordered_set<const void*> addresses;
    return addresses;
  }

  llvm::MachineModuleInfoWrapperPass& info_;
  const llvm::TargetMachine& machine_;
};

char FreshMachineFunctions::ID = 0;

// LLVM 22's SPIR-V backend carries an alloca's alignment as an 8-bit integer, sign-extended into
// the Alignment decoration: 128 becomes 0xffffff80 (and 256 or more wraps to nonsense). Allocas are
// kept at 128 bytes at most (OpenCL C's widest type, long16/double16, needs no more) and the
// decoration is repaired after emission: a driver would otherwise align the variable to 4 GiB.
constexpr uint64_t kWidestAlignment = 128;

void cap_alloca_alignments(llvm::Module& module) {
  for (llvm::Function& f : module)
    for (llvm::BasicBlock& block : f)
      for (llvm::Instruction& inst : block)
        if (auto* alloca = llvm::dyn_cast<llvm::AllocaInst>(&inst);
            alloca && alloca->getAlign().value() > kWidestAlignment)
          alloca->setAlignment(llvm::Align(kWidestAlignment));
}

constexpr size_t kHeaderWords = 5;

void repair_alignment_decorations(std::vector<uint32_t>& words) {
  constexpr uint32_t kOpDecorate = 71, kAlignment = 44;
  for (size_t i = kHeaderWords; i < words.size() && (words[i] >> 16);) {
    const uint32_t count = words[i] >> 16;
    if ((words[i] & 0xffff) == kOpDecorate && count == 4 && i + 3 < words.size() &&
        words[i + 2] == kAlignment && words[i + 3] > 0x7fffffffu)
      words[i + 3] = 0u - words[i + 3];  // 0xffffff80 -> 128
    i += count;
  }
}

// LLVM folds &g[k] of a global into a byte offset, and LLVM 22's SPIR-V backend writes such a
// constant as OpSpecConstantOp InBoundsPtrAccessChain %g %zero %bytes typed as a uchar pointer:
// the indices then walk g's own type (&a[1] of a uchar2 array became &a[2]). The byte offset is
// what was meant: %g is cast to that uchar pointer first and %bytes becomes the element index.
void repair_byte_offset_constants(std::vector<uint32_t>& words) {
  constexpr uint32_t kOpTypeInt = 21, kOpTypePointer = 32, kOpConstant = 43, kOpConstantNull = 46,
                     kOpSpecConstantOp = 52, kOpVariable = 59, kOpPtrAccessChain = 67,
                     kOpInBoundsPtrAccessChain = 70, kOpBitcast = 124;
  // What the rewrite needs to know of ids: each one's defining instruction.
  std::unordered_map<uint32_t, size_t> defined_at;
  for (size_t i = kHeaderWords; i < words.size() && (words[i] >> 16);) {
    const uint32_t count = words[i] >> 16, opcode = words[i] & 0xffff;
    if ((opcode == kOpTypeInt || opcode == kOpTypePointer) && count >= 2)
      defined_at[words[i + 1]] = i;
    else if ((opcode == kOpConstant || opcode == kOpConstantNull || opcode == kOpVariable ||
              opcode == kOpSpecConstantOp) &&
             count >= 3)
      defined_at[words[i + 2]] = i;
    i += count;
  }
  auto def = [&](uint32_t id) -> const uint32_t* {
    auto it = defined_at.find(id);
    return it == defined_at.end() ? nullptr : &words[it->second];
  };
  auto is_byte_pointer = [&](uint32_t type) {
    const uint32_t* p = def(type);
    if (!p || (p[0] & 0xffff) != kOpTypePointer) return false;
    const uint32_t* pointee = def(p[3]);
    return pointee && (pointee[0] & 0xffff) == kOpTypeInt && pointee[2] == 8;
  };
  auto type_of = [&](uint32_t id) -> uint32_t {
    const uint32_t* d = def(id);
    return d && (d[0] >> 16) >= 3 ? d[1] : 0;
  };
  auto is_zero = [&](uint32_t id) {
    const uint32_t* d = def(id);
    if (d && (d[0] & 0xffff) == kOpConstantNull) return true;
    if (!d || (d[0] & 0xffff) != kOpConstant) return false;
    for (uint32_t k = 3; k < (d[0] >> 16); ++k)
      if (d[k]) return false;
    return true;
  };
  std::vector<uint32_t> out(words.begin(), words.begin() + kHeaderWords);
  uint32_t bound = words[3];
  for (size_t i = kHeaderWords; i < words.size();) {
    const uint32_t count = words[i] >> 16;
    if (count == 0) {
      out.insert(out.end(), words.begin() + i, words.end());
      break;
    }
    const uint32_t* w = &words[i];
    const bool chain = (w[0] & 0xffff) == kOpSpecConstantOp && count == 7 &&
                       (w[3] == kOpInBoundsPtrAccessChain || w[3] == kOpPtrAccessChain);
    if (chain && is_byte_pointer(w[1]) && !is_byte_pointer(type_of(w[4])) && is_zero(w[5])) {
      const uint32_t cast = bound++;
      out.insert(out.end(), {(5u << 16) | kOpSpecConstantOp, w[1], cast, kOpBitcast, w[4]});
      out.insert(out.end(), {(6u << 16) | kOpSpecConstantOp, w[1], w[2], w[3], cast, w[6]});
    } else {
      out.insert(out.end(), words.begin() + i, words.begin() + i + count);
    }
    i += count;
  }
  out[3] = bound;
  words = std::move(out);
}

}  // namespace

bool emit_spirv(llvm::Module& module, llvm::TargetMachine& machine, std::vector<uint8_t>* code,
                std::string* log) {
  static std::mutex codegen;
  std::lock_guard lock(codegen);
  module.setDataLayout(machine.createDataLayout());
  cap_alloca_alignments(module);
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream stream(buffer);
  llvm::legacy::PassManager passes;
  // Owned by `passes` once added (by addPassesToEmitFile).
  auto* info = new llvm::MachineModuleInfoWrapperPass(&machine);
  passes.add(new FreshMachineFunctions(*info, machine));
  if (machine.addPassesToEmitFile(passes, stream, nullptr, llvm::CodeGenFileType::ObjectFile,
                                  /*DisableVerify=*/true, info)) {
    *log += "internal error: the SPIR-V backend cannot emit object files\n";
    return false;
  }
  passes.run(module);
  code->assign(buffer.begin(), buffer.end());
  // The repairs below read the module as words (emitted little-endian, as the host).
  std::vector<uint32_t> words(code->size() / 4);
  std::memcpy(words.data(), code->data(), words.size() * 4);
  if (words.size() > kHeaderWords) {
    repair_alignment_decorations(words);
    repair_byte_offset_constants(words);
    code->resize(words.size() * 4);
    std::memcpy(code->data(), words.data(), code->size());
  }
  return true;
}

}  // namespace manifold::compiler
