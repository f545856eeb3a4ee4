#include "compiler/footprint/kernel.h"

#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DataLayout.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GetElementPtrTypeIterator.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Operator.h>

#include <string>

#include "compiler/footprint/builtins.h"
#include "compiler/footprint/values.h"

namespace manifold::compiler::footprint {
namespace {

// __local variables live in address space 3 on every target Manifold compiles for.
constexpr unsigned kLocalAddressSpace = 3;
// Distinct accesses kept per argument: more (fully unrolled code) count as unknown, which keeps
// the analysis, the binary and each launch's evaluation small.
constexpr size_t kMaxAccesses = 256;

// Where a pointer points: into a buffer argument (at a provable offset or not), memory no other
// work-group sees (private, __local, program-scope constants), program-scope variables other
// work-groups can see, or somewhere the analysis cannot tell.
enum class Memory { Buffer, Scratch, Mutable, Unknown };

struct Place {
  Memory memory = Memory::Unknown;
  unsigned arg = 0;
  std::optional<Expr> offset;
};

Place only(Memory memory) { return Place{memory, 0, std::nullopt}; }

bool contains_pointer(llvm::Type* type) {
  if (type->isPtrOrPtrVectorTy()) return true;
  for (llvm::Type* inner : type->subtypes())
    if (contains_pointer(inner)) return true;
  return false;
}

bool is_mutable_global(const llvm::GlobalVariable& g) {
  return !g.isConstant() && g.getAddressSpace() != kLocalAddressSpace;
}

// Whether a constant names a program-scope variable other work-groups see.
bool names_mutable_global(const llvm::Constant* c, int depth = 0) {
  if (const auto* g = llvm::dyn_cast<llvm::GlobalVariable>(c)) return is_mutable_global(*g);
  if (depth > 8 || !llvm::isa<llvm::ConstantExpr>(c)) return false;
  for (const llvm::Value* op : c->operands())
    if (const auto* inner = llvm::dyn_cast<llvm::Constant>(op))
      if (names_mutable_global(inner, depth + 1)) return true;
  return false;
}

bool ignorable_intrinsic(llvm::Intrinsic::ID id) {
  namespace I = llvm::Intrinsic;
  switch (id) {
    case I::lifetime_start:
    case I::lifetime_end:
    case I::assume:
    case I::experimental_noalias_scope_decl:
    case I::invariant_start:
    case I::invariant_end:
    case I::var_annotation:
    case I::sideeffect:
    case I::donothing:
      return true;
    default:
      return false;
  }
}

class Walk {
 public:
  Walk(const llvm::Function& kernel, const KernelInfo& info)
      : kernel_(kernel),
        info_(info),
        layout_(kernel.getParent()->getDataLayout()),
        dominators_(const_cast<llvm::Function&>(kernel)),
        loops_(dominators_),
        values_(kernel, dominators_, loops_, &out_.bounded) {
    out_.args.resize(info.args.size());
  }

  KernelFootprint run() {
    for (const llvm::BasicBlock& block : kernel_)
      if (dominators_.isReachableFromEntry(&block))
        for (const llvm::Instruction& inst : block) instruction(inst);
    for (size_t i = 0; i < info_.args.size(); ++i) {
      ArgFootprint& arg = out_.args[i];
      if (info_.args[i].kind != ArgKind::Buffer) {
        arg = ArgFootprint{};
        continue;
      }
      if (reads_unknown_everywhere_) arg.reads_known = false;
      std::erase_if(arg.accesses, [&](const Access& a) {
        return a.write ? !arg.writes_known : !arg.reads_known;
      });
    }
    out_.analyzed = true;
    return std::move(out_);
  }

 private:
  void whole(const std::string& reason) {
    if (out_.whole_reason.empty()) out_.whole_reason = reason;
  }

  Place place(const llvm::Value* pointer) {
    llvm::SmallPtrSet<const llvm::Value*, 8> visiting;
    budget_ = 4096;
    return place(pointer, visiting);
  }

  Place place(const llvm::Value* p, llvm::SmallPtrSet<const llvm::Value*, 8>& visiting) {
    if (--budget_ < 0) return {};
    if (const auto* gep = llvm::dyn_cast<llvm::GEPOperator>(p)) {
      Place base = place(gep->getPointerOperand(), visiting);
      if (base.memory == Memory::Buffer && base.offset) base.offset = offset_of(*gep, *base.offset);
      return base;
    }
    if (llvm::isa<llvm::BitCastOperator>(p) || llvm::isa<llvm::AddrSpaceCastOperator>(p))
      return place(llvm::cast<llvm::Operator>(p)->getOperand(0), visiting);
    if (const auto* arg = llvm::dyn_cast<llvm::Argument>(p)) {
      if (arg->hasByValAttr() || arg->hasByRefAttr()) return only(Memory::Scratch);
      const unsigned i = arg->getArgNo();
      if (i >= info_.args.size()) return {};
      if (info_.args[i].kind == ArgKind::Local) return only(Memory::Scratch);
      if (info_.args[i].kind != ArgKind::Buffer) return {};
      return {Memory::Buffer, i, Expr{}};
    }
    if (const auto* call = llvm::dyn_cast<llvm::CallBase>(p)) {
      const llvm::Function* callee = call->getCalledFunction();
      if (callee && call->arg_size() == 1 &&
          address_space_conversion(plain_name(callee->getName())))
        return place(call->getArgOperand(0), visiting);
      return {};
    }
    if (llvm::isa<llvm::AllocaInst>(p)) return only(Memory::Scratch);
    if (const auto* g = llvm::dyn_cast<llvm::GlobalVariable>(p))
      return only(is_mutable_global(*g) ? Memory::Mutable : Memory::Scratch);
    if (llvm::isa<llvm::PHINode>(p) || llvm::isa<llvm::SelectInst>(p)) {
      if (!visiting.insert(p).second) return only(Memory::Scratch);  // neutral in the merge below
      std::vector<const llvm::Value*> incoming;
      if (const auto* phi = llvm::dyn_cast<llvm::PHINode>(p))
        incoming.assign(phi->incoming_values().begin(), phi->incoming_values().end());
      else
        incoming = {llvm::cast<llvm::SelectInst>(p)->getTrueValue(),
                    llvm::cast<llvm::SelectInst>(p)->getFalseValue()};
      std::optional<Place> merged;
      for (const llvm::Value* v : incoming) {
        Place one = place(v, visiting);
        one.offset.reset();  // which incoming value is taken is not provable
        if (!merged) {
          merged = one;
        } else if (merged->memory == Memory::Scratch && one.memory != Memory::Scratch) {
          merged = one;
        } else if (one.memory != Memory::Scratch &&
                   (one.memory != merged->memory || one.arg != merged->arg)) {
          merged = Place{};
        }
      }
      visiting.erase(p);
      return merged ? *merged : Place{};
    }
    return {};
  }

  std::optional<Expr> offset_of(const llvm::GEPOperator& gep, const Expr& base) {
    Expr out = base;
    for (auto it = llvm::gep_type_begin(gep), end = llvm::gep_type_end(gep); it != end; ++it) {
      const llvm::Value* index = it.getOperand();
      if (llvm::StructType* s = it.getStructTypeOrNull()) {
        const auto* field = llvm::cast<llvm::ConstantInt>(index);
        const uint64_t at = layout_.getStructLayout(s)->getElementOffset(field->getZExtValue());
        std::optional<Poly> sum = add(out.poly, Poly::constant(int64_t(at)));
        if (!sum) return std::nullopt;
        out.poly = *sum;
        continue;
      }
      const llvm::TypeSize stride = it.getSequentialElementStride(layout_);
      if (stride.isScalable() || !index->getType()->isIntegerTy()) return std::nullopt;
      std::optional<Expr> i = values_.of(index, true);
      if (!i) return std::nullopt;
      // An index wider than the pointer's index type is truncated to it.
      const unsigned index_bits = layout_.getIndexSizeInBits(gep.getPointerAddressSpace());
      if (index->getType()->getIntegerBitWidth() > index_bits)
        *i = with_check(*i, index_bits, true);
      std::optional<Poly> scaled = scale(i->poly, int64_t(stride.getFixedValue()));
      std::optional<Poly> sum = scaled ? add(out.poly, *scaled) : std::nullopt;
      if (!sum) return std::nullopt;
      merge_conditions(out, *i);
      out.poly = *sum;
    }
    return out;
  }

  // `size` bytes at `pointer` plus `extra` bytes.
  void access(const llvm::Instruction& at, const llvm::Value* pointer, bool write, uint64_t size,
              const std::optional<Expr>& extra = Expr{}) {
    Place where = place(pointer);
    switch (where.memory) {
      case Memory::Scratch:
        return;
      case Memory::Mutable:
        return whole("program-scope variables");
      case Memory::Unknown:
        if (write) return whole("a write through a pointer of unknown origin");
        reads_unknown_everywhere_ = true;
        return;
      case Memory::Buffer:
        break;
    }
    ArgFootprint& arg = out_.args[where.arg];
    if (!(write ? arg.writes_known : arg.reads_known)) return;
    std::optional<Expr> offset = where.offset;
    if (offset && extra) {
      std::optional<Poly> sum = add(offset->poly, extra->poly);
      offset = sum ? combine(*offset, *extra, *sum) : std::nullopt;
    }
    if (!offset || !extra || !values_.guarded(*offset, &at)) {
      (write ? arg.writes_known : arg.reads_known) = false;
      return;
    }
    Access a{write, offset->poly.to_polynomial(), size, offset->checks};
    for (const Access& have : arg.accesses)
      if (have.write == a.write && have.size == a.size && same_polynomial(have.offset, a.offset) &&
          have.checks.size() == a.checks.size() &&
          std::equal(have.checks.begin(), have.checks.end(), a.checks.begin(), same_check))
        return;
    if (arg.accesses.size() >= kMaxAccesses) {
      (write ? arg.writes_known : arg.reads_known) = false;
      return;
    }
    arg.accesses.push_back(std::move(a));
  }

  // A call that reaches memory through `pointer` in ways the analysis does not follow.
  void opaque(const llvm::Value* pointer, bool reads, bool writes) {
    Place where = place(pointer);
    if (where.memory == Memory::Scratch) return;
    if (where.memory == Memory::Mutable) return whole("program-scope variables");
    if (where.memory == Memory::Unknown) return whole("a call with a pointer of unknown origin");
    if (reads) out_.args[where.arg].reads_known = false;
    if (writes) out_.args[where.arg].writes_known = false;
  }

  bool atomic_outside_scratch(const llvm::Value* pointer) {
    return place(pointer).memory != Memory::Scratch;
  }

  uint64_t store_size(llvm::Type* type) const {
    return layout_.getTypeStoreSize(type).getKnownMinValue();
  }

  void instruction(const llvm::Instruction& inst) {
    for (const llvm::Value* op : inst.operands())
      if (const auto* c = llvm::dyn_cast<llvm::Constant>(op); c && names_mutable_global(c))
        whole("program-scope variables");
    if (const auto* load = llvm::dyn_cast<llvm::LoadInst>(&inst)) {
      if (load->isAtomic() && atomic_outside_scratch(load->getPointerOperand()))
        whole("global atomics");
      access(inst, load->getPointerOperand(), false, store_size(load->getType()));
    } else if (const auto* store = llvm::dyn_cast<llvm::StoreInst>(&inst)) {
      if (contains_pointer(store->getValueOperand()->getType()))
        whole("a pointer stored in memory");
      if (store->isAtomic() && atomic_outside_scratch(store->getPointerOperand()))
        whole("global atomics");
      access(inst, store->getPointerOperand(), true,
             store_size(store->getValueOperand()->getType()));
    } else if (const auto* rmw = llvm::dyn_cast<llvm::AtomicRMWInst>(&inst)) {
      if (atomic_outside_scratch(rmw->getPointerOperand())) whole("global atomics");
    } else if (const auto* cas = llvm::dyn_cast<llvm::AtomicCmpXchgInst>(&inst)) {
      if (atomic_outside_scratch(cas->getPointerOperand())) whole("global atomics");
    } else if (const auto* call = llvm::dyn_cast<llvm::CallBase>(&inst)) {
      this->call(*call);
    }
  }

  void memory_intrinsic(const llvm::AnyMemIntrinsic& mem) {
    if (llvm::isa<llvm::AnyMemCpyInst>(mem) || llvm::isa<llvm::AnyMemMoveInst>(mem) ||
        llvm::isa<llvm::AnyMemSetInst>(mem)) {
      if (mem.isAtomic() && atomic_outside_scratch(mem.getRawDest())) whole("global atomics");
    }
    const auto* transfer = llvm::dyn_cast<llvm::AnyMemTransferInst>(&mem);
    std::optional<Expr> extra = Expr{};
    uint64_t size = 1;
    if (const auto* length = llvm::dyn_cast<llvm::ConstantInt>(mem.getLength())) {
      size = length->getZExtValue();
      if (size == 0) return;
    } else if (std::optional<Expr> count = values_.of(mem.getLength(), false)) {
      // Every byte of a length only the launch knows: one byte at each offset below it.
      extra = values_.counter(*count);
    } else {
      extra.reset();
    }
    access(mem, mem.getRawDest(), true, size, extra);
    if (transfer) access(mem, transfer->getRawSource(), false, size, extra);
  }

  void vector_builtin(const llvm::CallBase& call, const VectorAccess& v) {
    const unsigned operands = v.write ? 3 : 2;
    const llvm::Value* pointer =
        call.arg_size() == operands ? call.getArgOperand(v.pointer_operand) : nullptr;
    const llvm::Value* offset = pointer ? call.getArgOperand(v.offset_operand) : nullptr;
    llvm::Type* data =
        v.write ? (pointer ? call.getArgOperand(0)->getType() : nullptr) : call.getType();
    if (!pointer || !pointer->getType()->isPointerTy() || !offset->getType()->isIntegerTy() ||
        !(data->isVectorTy() || data->isIntOrIntVectorTy() || data->isFPOrFPVectorTy())) {
      for (const llvm::Use& arg : call.args())
        if (arg->getType()->isPointerTy()) opaque(arg.get(), !v.write, v.write);
      return;
    }
    const std::optional<unsigned> pointee = pointee_bytes(call.getCalledFunction()->getName());
    if (!v.element_bytes && !pointee) {
      opaque(pointer, !v.write, v.write);
      return;
    }
    const uint64_t element = v.element_bytes ? v.element_bytes : *pointee;
    std::optional<Expr> index = values_.of(offset, false);
    std::optional<Poly> bytes =
        index ? scale(index->poly, int64_t(element * v.stride_elements)) : std::nullopt;
    std::optional<Expr> extra;
    if (bytes) extra = Expr{*bytes, index->checks, index->guards};
    access(call, pointer, v.write, element * v.elements, extra);
  }

  void call(const llvm::CallBase& call) {
    if (call.isInlineAsm()) return whole("inline assembly");
    if (const auto* mem = llvm::dyn_cast<llvm::AnyMemIntrinsic>(&call))
      return memory_intrinsic(*mem);
    const llvm::Function* callee = call.getCalledFunction();
    if (!callee) return whole("an indirect call");
    if (callee->isIntrinsic()) {
      if (!call.mayReadOrWriteMemory() || ignorable_intrinsic(callee->getIntrinsicID())) return;
      if (!call.getMemoryEffects().onlyAccessesArgPointees())
        return whole("a call to " + callee->getName().str());
      for (const llvm::Use& arg : call.args())
        if (arg->getType()->isPointerTy())
          opaque(arg.get(), true, !call.getMemoryEffects().onlyReadsMemory());
      return;
    }
    const std::string plain(plain_name(callee->getName()));
    if (!callee->isDeclaration()) return whole("a call to " + plain);
    if (std::optional<VectorAccess> v = vector_access(plain)) return vector_builtin(call, *v);
    switch (classify_call(plain)) {
      case CallKind::Harmless:
        return;
      case CallKind::Atomic:
        for (const llvm::Use& arg : call.args())
          if (arg->getType()->isPointerTy() && atomic_outside_scratch(arg.get()))
            return whole("global atomics");
        return;
      case CallKind::ArgMemory:
        for (const llvm::Use& arg : call.args())
          if (arg->getType()->isPointerTy()) opaque(arg.get(), true, true);
        return;
      case CallKind::Printf:
        return whole("printf");
      case CallKind::Pipe:
        return whole("pipes");
      case CallKind::Image:
        return whole("images");
      case CallKind::Enqueue:
        return whole("device-side enqueue");
      case CallKind::Unknown:
        break;
    }
    bool pointers = false;
    for (const llvm::Use& arg : call.args())
      pointers = pointers || contains_pointer(arg->getType());
    if (call.doesNotAccessMemory() && !pointers) return;  // math and other pure builtins
    whole("a call to " + plain);
  }

  const llvm::Function& kernel_;
  const KernelInfo& info_;
  const llvm::DataLayout& layout_;
  KernelFootprint out_;
  llvm::DominatorTree dominators_;
  llvm::LoopInfo loops_;
  Values values_;
  bool reads_unknown_everywhere_ = false;
  int budget_ = 0;
};

}  // namespace

KernelFootprint analyze_kernel(const llvm::Function& kernel, const KernelInfo& info) {
  return Walk(kernel, info).run();
}

}  // namespace manifold::compiler::footprint
