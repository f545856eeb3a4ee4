// OpenCL C on NVIDIA GPUs: clang's nvptx64 IR, plus Manifold's shim, libclc's nvptx library and
// CUDA's libdevice (each linked lazily: only the functions a program reaches are read), optimized
// with the NVPTX target's own pipeline (NVVMReflect included) and printed as PTX. The CUDA
// driver JIT-compiles the PTX for the exact GPU at load time.
#include <llvm/ADT/StringExtras.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Operator.h>
#include <llvm/IR/PassManager.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Triple.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <set>

#include "compiler/nvptx_atomics.h"
#include "compiler/nvptx_math.h"
#include "compiler/nvptx_unroll.h"
#include "compiler/printf_format.h"
#include "compiler/stages.h"
#include "compiler/target_pipeline.h"
#include "settings/settings.h"

// Bitcode embedded at build time (compiler/nvptx/nvptx.cmake): the shim always; libclc's
// nvptx library and libdevice when they were found then (else read from disk at run time).
extern "C" {
extern const char manifold_nvptx_shim_bitcode[];
extern const uint64_t manifold_nvptx_shim_bitcode_size;
// The portable builtins (compiler/builtins/*.cl), split into parts with a symbol index.
extern const char manifold_nvptx_portable_bitcode[];
extern const uint64_t manifold_nvptx_portable_bitcode_size;
extern const char manifold_nvptx_portable_index[];
extern const uint64_t manifold_nvptx_portable_index_size;
// Embedded, libclc is split into parts with a symbol index (compiler/nvptx/nvptx.cmake).
extern const char manifold_nvptx_libclc_bitcode[];
extern const uint64_t manifold_nvptx_libclc_bitcode_size;
extern const char manifold_nvptx_libclc_index[];
extern const uint64_t manifold_nvptx_libclc_index_size;
extern const char manifold_nvptx_libdevice_bitcode[];
extern const uint64_t manifold_nvptx_libdevice_bitcode_size;
}

namespace manifold::compiler {
namespace {

constexpr unsigned kGlobalAS = 1, kSharedAS = 3, kConstantAS = 4;

void initialize_nvptx() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

std::vector<std::string> libdevice_paths() { return compiler_settings().libdevice_candidates; }

// ---- __constant pointer arguments live in global memory ----
// NVPTX's __constant space (4) is the constant bank, read with ld.const: fine for program-scope
// __constant tables, wrong for a buffer the host allocated. A kernel's __constant pointer
// arguments are therefore retyped to global (1), following the pointer through the kernel.
bool retype_constant_arguments(llvm::Function& kernel, std::string* log) {
  llvm::LLVMContext& context = kernel.getContext();
  llvm::PointerType* global = llvm::PointerType::get(context, kGlobalAS);
  llvm::PointerType* constant = llvm::PointerType::get(context, kConstantAS);
  // First every value derived from the arguments, and whether each use can follow.
  std::vector<llvm::Value*> work, derived;
  std::set<llvm::Value*> seen;
  for (llvm::Argument& arg : kernel.args())
    if (arg.getType() == constant) work.push_back(&arg);
  if (work.empty()) return true;
  bool ok = true;
  while (!work.empty()) {
    llvm::Value* value = work.back();
    work.pop_back();
    if (!seen.insert(value).second) continue;
    derived.push_back(value);
    for (llvm::User* user : value->users()) {
      if (llvm::isa<llvm::GetElementPtrInst, llvm::PHINode, llvm::SelectInst>(user)) {
        if (user->getType() == constant) work.push_back(user);
        for (llvm::Value* op : user->operands())  // other inputs: derived, or null
          if (op->getType() == constant && !llvm::isa<llvm::ConstantPointerNull>(op) &&
              !llvm::isa<llvm::Argument, llvm::Instruction>(op))
            ok = false;
      } else if (llvm::isa<llvm::AddrSpaceCastInst, llvm::ICmpInst, llvm::LoadInst,
                           llvm::PtrToIntInst, llvm::AtomicRMWInst, llvm::AtomicCmpXchgInst>(
                     user)) {
      } else if (auto* store = llvm::dyn_cast<llvm::StoreInst>(user)) {
        ok = ok && store->getValueOperand() != value;  // storing the pointer itself: no
      } else {
        ok = false;  // a call (not inlined), a memcpy, ...: leave the kernel as it is
      }
    }
  }
  if (!ok) {
    *log += "warning: a __constant argument of kernel '" + kernel.getName().str() +
            "' stays in the constant space (used in a way Manifold cannot retype)\n";
    return false;
  }
  for (llvm::Value* value : derived) {
    value->mutateType(global);
    for (llvm::User* user : llvm::SmallVector<llvm::User*, 8>(value->users())) {
      for (llvm::Use& op : user->operands())
        if (auto* null = llvm::dyn_cast<llvm::ConstantPointerNull>(op.get());
            null && null->getType() == constant)
          op.set(llvm::ConstantPointerNull::get(global));
      if (auto* cast = llvm::dyn_cast<llvm::AddrSpaceCastInst>(user);
          cast && cast->getType() == global) {
        cast->replaceAllUsesWith(cast->getOperand(0));
        cast->eraseFromParent();
      }
    }
  }
  // The function's own type must follow its arguments: a new function takes over the body.
  std::vector<llvm::Type*> params;
  for (llvm::Argument& arg : kernel.args()) params.push_back(arg.getType());
  auto* type = llvm::FunctionType::get(kernel.getReturnType(), params, false);
  llvm::Function* replacement = llvm::Function::Create(
      type, kernel.getLinkage(), kernel.getAddressSpace(), "", kernel.getParent());
  replacement->copyAttributesFrom(&kernel);
  replacement->copyMetadata(&kernel, 0);
  replacement->splice(replacement->begin(), &kernel);
  for (unsigned i = 0; i < kernel.arg_size(); ++i) {
    replacement->getArg(i)->takeName(kernel.getArg(i));
    kernel.getArg(i)->replaceAllUsesWith(replacement->getArg(i));
  }
  replacement->takeName(&kernel);
  kernel.eraseFromParent();
  return true;
}

// ---- printf -> CUDA's vprintf(format, packed arguments) ----
// vprintf knows C's conversions only: OpenCL's vector conversions (%v4f) are expanded into
// one conversion per element here, from the constant format string.
bool lower_printf(llvm::Module& module, std::string* log) {
  llvm::Function* printf = module.getFunction("printf");
  if (!printf) return true;
  llvm::LLVMContext& context = module.getContext();
  llvm::PointerType* generic = llvm::PointerType::get(context, 0);
  llvm::FunctionCallee vprintf = module.getOrInsertFunction(
      "vprintf",
      llvm::FunctionType::get(llvm::Type::getInt32Ty(context), {generic, generic}, false));
  const unsigned alloca_as = module.getDataLayout().getAllocaAddrSpace();
  for (llvm::User* user : llvm::SmallVector<llvm::User*, 8>(printf->users())) {
    auto* call = llvm::dyn_cast<llvm::CallInst>(user);
    if (!call || call->getCalledFunction() != printf) continue;
    llvm::IRBuilder<> builder(call);
    llvm::Value* format_value = call->getArgOperand(0)->stripPointerCasts();
    std::string format;
    auto* format_global = llvm::dyn_cast<llvm::GlobalVariable>(format_value);
    if (format_global && format_global->hasInitializer())
      if (auto* data =
              llvm::dyn_cast<llvm::ConstantDataSequential>(format_global->getInitializer()))
        if (data->isString()) format = data->getAsString().str();
    if (!format.empty() && format.back() == '\0') format.pop_back();

    // The values vprintf gets, in order, and the format rewritten for them.
    std::vector<llvm::Value*> values;
    std::string rewritten;
    const std::vector<PrintfConversion> conversions = parse_printf_format(format);
    size_t argument = 1, copied = 0;
    // vprintf misreads the hh length modifier (CTS printf length_specifier: "%hhd" printed
    // '%'): h and hh are dropped from the directives, and their values narrowed here to char or
    // short, then widened to int the way the conversion reads them.
    auto drop_short_length = [](std::string directive, const std::string& length) {
      if (length == "hh" || length == "h") directive.erase(directive.rfind(length), length.size());
      return directive;
    };
    auto promote = [&](llvm::Value* v, char letter,
                       const std::string& length = {}) -> llvm::Value* {
      llvm::Type* type = v->getType();
      if (type->isHalfTy() || type->isFloatTy())
        return builder.CreateFPExt(v, builder.getDoubleTy());
      if (type->isIntegerTy()) {
        const unsigned narrow = length == "hh" ? 8 : length == "h" ? 16 : 0;
        if (narrow && type->getIntegerBitWidth() > narrow) {
          v = builder.CreateTrunc(v, builder.getIntNTy(narrow));
          type = v->getType();
        }
      }
      if (type->isIntegerTy() && type->getIntegerBitWidth() < 32) {
        const bool is_signed = letter == 'd' || letter == 'i' || letter == 'c';
        return is_signed ? builder.CreateSExt(v, builder.getInt32Ty())
                         : builder.CreateZExt(v, builder.getInt32Ty());
      }
      if (type->isPointerTy() && type->getPointerAddressSpace() != 0)
        return builder.CreateAddrSpaceCast(v, generic);
      return v;
    };
    for (const PrintfConversion& c : conversions) {
      rewritten += format.substr(copied, c.begin - copied);
      copied = c.end;
      std::string directive = format.substr(c.begin, c.end - c.begin);
      if (argument >= call->arg_size()) {
        rewritten += directive;
        continue;
      }
      llvm::Value* v = call->getArgOperand(argument++);
      if (c.vector == 0) {
        rewritten += drop_short_length(directive, c.length);
        values.push_back(promote(v, c.letter, c.length));
        continue;
      }
      // %v4hlf -> %f,%f,%f,%f (hl means 32-bit elements; h and hh stay for short and char).
      std::string element = directive;
      const size_t v_at = element.find('v');
      size_t digits_end = v_at + 1;
      while (digits_end < element.size() &&
             std::isdigit(static_cast<unsigned char>(element[digits_end])))
        ++digits_end;
      element.erase(v_at, digits_end - v_at);
      if (c.length == "hl") element.erase(element.find("hl"), 2);
      element = drop_short_length(element, c.length);
      auto* vector_type = llvm::dyn_cast<llvm::FixedVectorType>(v->getType());
      const unsigned lanes = vector_type ? vector_type->getNumElements() : 1;
      for (unsigned lane = 0; lane < lanes; ++lane) {
        if (lane) rewritten += ',';
        rewritten += element;
        llvm::Value* e = vector_type ? builder.CreateExtractElement(v, lane) : v;
        values.push_back(promote(e, c.letter, c.length));
      }
    }
    rewritten += format.substr(std::min(copied, format.size()));
    if (format.empty()) {  // not a constant format: pass the arguments as they are
      for (size_t i = 1; i < call->arg_size(); ++i)
        values.push_back(promote(call->getArgOperand(i), 'd'));
    }

    llvm::Value* format_arg;
    if (!format.empty()) {
      llvm::Constant* text = llvm::ConstantDataArray::getString(context, rewritten, true);
      auto* global = new llvm::GlobalVariable(
          module, text->getType(), true, llvm::GlobalValue::PrivateLinkage, text,
          ".manifold_printf_format", nullptr, llvm::GlobalValue::NotThreadLocal, kConstantAS);
      format_arg = builder.CreateAddrSpaceCast(global, generic);
    } else {
      format_arg = builder.CreateAddrSpaceCast(call->getArgOperand(0), generic);
    }
    // Packed arguments, each at its natural alignment (what vprintf reads).
    llvm::Value* buffer = llvm::ConstantPointerNull::get(generic);
    if (!values.empty()) {
      std::vector<llvm::Type*> fields;
      for (llvm::Value* v : values) fields.push_back(v->getType());
      auto* record = llvm::StructType::get(context, fields);
      llvm::IRBuilder<> entry(&call->getFunction()->getEntryBlock(),
                              call->getFunction()->getEntryBlock().begin());
      llvm::AllocaInst* slot = entry.CreateAlloca(record, alloca_as, nullptr, "printf_args");
      for (unsigned i = 0; i < values.size(); ++i)
        builder.CreateStore(values[i], builder.CreateStructGEP(record, slot, i));
      buffer =
          alloca_as ? builder.CreateAddrSpaceCast(slot, generic) : static_cast<llvm::Value*>(slot);
    }
    builder.CreateCall(vprintf, {format_arg, buffer});
    // OpenCL's printf returns 0 on success.
    call->replaceAllUsesWith(builder.getInt32(0));
    call->eraseFromParent();
  }
  if (printf->use_empty()) printf->eraseFromParent();
  (void)log;
  return true;
}

// Whether every use of `pointer` is a load or an address computed from it (what the shim makes of
// __manifold_launch), so that the variable can move to another address space.
bool only_loaded_through(const llvm::Value& pointer) {
  for (const llvm::User* user : pointer.users()) {
    if (llvm::isa<llvm::LoadInst>(user)) continue;
    const auto* gep = llvm::dyn_cast<llvm::GEPOperator>(user);
    if (!gep || gep->getPointerOperand() != &pointer || !only_loaded_through(*gep)) return false;
  }
  return true;
}

// Makes the loads and address computations that use `from` use `to` (same layout, another
// address space); the loads are marked invariant: the host writes the data between launches only.
void rebase_loads(llvm::Value& from, llvm::Value& to) {
  llvm::MDNode* invariant = llvm::MDNode::get(from.getContext(), {});
  for (llvm::User* user : llvm::to_vector(from.users())) {
    if (auto* load = llvm::dyn_cast<llvm::LoadInst>(user)) {
      load->setOperand(0, &to);
      load->setMetadata(llvm::LLVMContext::MD_invariant_load, invariant);
      continue;
    }
    auto* gep = llvm::cast<llvm::GEPOperator>(user);
    llvm::SmallVector<llvm::Value*, 4> indices(gep->idx_begin(), gep->idx_end());
    llvm::Value* moved = nullptr;
    if (auto* constant = llvm::dyn_cast<llvm::ConstantExpr>(gep)) {
      llvm::SmallVector<llvm::Constant*, 4> constants;
      for (llvm::Value* i : indices) constants.push_back(llvm::cast<llvm::Constant>(i));
      moved = llvm::ConstantExpr::getGetElementPtr(gep->getSourceElementType(),
                                                   llvm::cast<llvm::Constant>(&to), constants,
                                                   gep->getNoWrapFlags());
      rebase_loads(*constant, *moved);
      if (constant->use_empty()) constant->destroyConstant();
    } else {
      auto* instruction = llvm::cast<llvm::GetElementPtrInst>(gep);
      llvm::IRBuilder<> builder(instruction);
      moved =
          builder.CreateGEP(gep->getSourceElementType(), &to, indices, "", gep->getNoWrapFlags());
      rebase_loads(*instruction, *moved);
      instruction->eraseFromParent();
    }
  }
}

// Program-scope __constant data (the program's, and the shim's launch state) moves to the global
// address space (__device__, not __constant__, in CUDA terms): the driver binds a module's
// constant bank at every launch of its kernels, which costs each launch GPU time, while global
// data costs nothing until read. The reads stay cached: invariant loads become ld.global.nc.
// Data used otherwise than by loads (copied whole, its address escaping) stays constant.
void move_constants_to_global_memory(llvm::Module& module) {
  constexpr unsigned kConstantAddressSpace = 4, kGlobalAddressSpace = 1;
  std::vector<llvm::GlobalVariable*> constants;
  for (llvm::GlobalVariable& g : module.globals()) {
    if (g.getAddressSpace() != kConstantAddressSpace || !g.hasInitializer()) continue;
    g.removeDeadConstantUsers();  // left over from linking and inlining
    if (only_loaded_through(g)) constants.push_back(&g);
  }
  for (llvm::GlobalVariable* constant : constants) {
    auto* moved = new llvm::GlobalVariable(
        module, constant->getValueType(), constant->isConstant(), constant->getLinkage(),
        constant->getInitializer(), "", nullptr, llvm::GlobalValue::NotThreadLocal,
        kGlobalAddressSpace, constant->isExternallyInitialized());
    moved->takeName(constant);
    moved->setAlignment(constant->getAlign());
    moved->setUnnamedAddr(constant->getUnnamedAddr());
    rebase_loads(*constant, *moved);
    constant->eraseFromParent();
  }
}

// The work-group collectives' __local scratch (compiler/nvptx/collectives.cl): one static shared
// array per module, next to the launch's dynamic block, that the library's calls of
// __manifold_collective_scratch() address.
void define_collective_scratch(llvm::Module& module) {
  llvm::Function* scratch = module.getFunction("__manifold_collective_scratch");
  if (!scratch) return;
  llvm::LLVMContext& context = module.getContext();
  auto* type = llvm::ArrayType::get(llvm::Type::getInt64Ty(context), 65);
  auto* slots = new llvm::GlobalVariable(module, type, false, llvm::GlobalValue::InternalLinkage,
                                         llvm::UndefValue::get(type), "__manifold_collective_slots",
                                         nullptr, llvm::GlobalValue::NotThreadLocal, kSharedAS);
  slots->setAlignment(llvm::Align(8));
  for (llvm::User* user : llvm::SmallVector<llvm::User*, 8>(scratch->users())) {
    auto* call = llvm::dyn_cast<llvm::CallInst>(user);
    if (!call || call->getCalledFunction() != scratch) continue;
    call->replaceAllUsesWith(
        llvm::ConstantExpr::getPointerBitCastOrAddrSpaceCast(slots, call->getType()));
    call->eraseFromParent();
  }
  if (scratch->use_empty()) scratch->eraseFromParent();
}

// The compute capability of a target's cpu ("sm_90": 90).
unsigned compute_capability(const Target& target) {
  unsigned sm = 0;
  llvm::StringRef(target.cpu).drop_front(3).getAsInteger(10, sm);
  return sm;
}

// copysign of half as integer bit operations. The optimizer makes llvm.copysign of bitselect's
// and copysign's bit patterns; NVPTX lowers the half one through float, which quiets a signaling
// NaN and so changes bits that bitselect must keep.
void lower_half_copysign(llvm::Module& module) {
  std::vector<llvm::IntrinsicInst*> calls;
  for (llvm::Function& f : module)
    for (llvm::BasicBlock& block : f)
      for (llvm::Instruction& inst : block)
        if (auto* call = llvm::dyn_cast<llvm::IntrinsicInst>(&inst);
            call && call->getIntrinsicID() == llvm::Intrinsic::copysign &&
            call->getType()->getScalarType()->isHalfTy())
          calls.push_back(call);
  for (llvm::IntrinsicInst* call : calls) {
    llvm::IRBuilder<> b(call);
    llvm::Type* bits = call->getType()->getWithNewType(b.getInt16Ty());
    llvm::Value* magnitude = b.CreateBitCast(call->getArgOperand(0), bits);
    llvm::Value* sign = b.CreateBitCast(call->getArgOperand(1), bits);
    llvm::Value* result = b.CreateOr(b.CreateAnd(magnitude, llvm::ConstantInt::get(bits, 0x7fff)),
                                     b.CreateAnd(sign, llvm::ConstantInt::get(bits, 0x8000)));
    call->replaceAllUsesWith(b.CreateBitCast(result, call->getType()));
    call->eraseFromParent();
  }
}

bool has_math_flag(const ParsedOptions& options, const char* flag) {
  return std::find(options.math_flags.begin(), options.math_flags.end(), flag) !=
         options.math_flags.end();
}

// PTX's identifiers: [a-zA-Z][a-zA-Z0-9_$]* or [_$%][a-zA-Z0-9_$]+.
bool is_ptx_identifier(llvm::StringRef name) {
  if (name.empty()) return false;
  auto follows = [](char c) { return llvm::isAlnum(c) || c == '_' || c == '$'; };
  const char first = name.front();
  if (!llvm::isAlpha(first) && !((first == '_' || first == '$' || first == '%') && name.size() > 1))
    return false;
  return llvm::all_of(name.drop_front(), follows);
}

// NVIDIA GPUs: the payload is PTX text, which the CUDA driver compiles for the exact GPU at
// load time (backends/cuda).
class NvptxPipeline final : public TargetPipeline {
 public:
  explicit NvptxPipeline(const Target& target) : TargetPipeline(target, CodeDestination::Driver) {}

 private:
  bool lower(Build& build) override {
    llvm::Module& module = build.module;
    module.setTargetTriple(llvm::Triple(target().triple));
    module.setDataLayout(machine().createDataLayout());
    if (const std::string dump = compiler_settings().nvptx_dump_input; !dump.empty()) {
      std::error_code error;
      llvm::raw_fd_ostream file(dump, error);
      if (!error) module.print(file, nullptr);
    }
    rewrite_local_arguments(module, build.program.kernels, kSharedAS);
    for (const llvm::Function& f : module)
      if (!f.isDeclaration()) program_functions_.insert(f.getName().str());
    uses_printf_ = module.getFunction("printf") != nullptr;
    return lower_printf(module, &build.log);
  }

  bool link_builtins(Build& build) override {
    llvm::Module& module = build.module;
    std::string* log = &build.log;
    const llvm::MemoryBufferRef shim(
        llvm::StringRef(manifold_nvptx_shim_bitcode, manifold_nvptx_shim_bitcode_size),
        "nvptx shim");
    if (!link_lazily(module, shim, log)) return false;
    static const SplitLibrary portable(
        llvm::MemoryBufferRef(
            llvm::StringRef(manifold_nvptx_portable_bitcode, manifold_nvptx_portable_bitcode_size),
            "nvptx portable builtins"),
        std::string_view(manifold_nvptx_portable_index, manifold_nvptx_portable_index_size));
    if (!portable.link_into(module, log)) return false;
    // The shim's work-item functions the portable builtins call (the sub-group functions).
    if (!link_lazily(module, shim, log)) return false;
    llvm::MemoryBufferRef libclc =
        library_bytes(manifold_nvptx_libclc_bitcode, manifold_nvptx_libclc_bitcode_size,
                      "libclc nvptx64--nvidiacl.bc",
                      {"/usr/lib/clc/nvptx64--nvidiacl.bc", "/usr/share/clc/nvptx64--nvidiacl.bc"});
    if (!libclc.getBufferSize()) {
      *log += "error: libclc's nvptx64--nvidiacl.bc was not found\n";
      return false;
    }
    if (manifold_nvptx_libclc_index_size) {
      static const SplitLibrary split_libclc(
          libclc, std::string_view(manifold_nvptx_libclc_index, manifold_nvptx_libclc_index_size));
      if (!split_libclc.link_into(module, log)) return false;
    } else if (!link_lazily(module, libclc, log)) {
      return false;
    }
    // -cl-fp32-correctly-rounded-divide-sqrt: libclc's sqrt calls libdevice's __nv_sqrtf, which
    // takes the approximate path (its __CUDA_PREC_SQRT reflection is 0); LLVM's own sqrt
    // intrinsic becomes the correctly rounded sqrt.rn.f32 (CTS math_brute_force sqrt_cr).
    if (has_math_flag(build.options, "-cl-fp32-correctly-rounded-divide-sqrt"))
      if (llvm::Function* nv_sqrt = module.getFunction("__nv_sqrtf")) {
        llvm::Function* exact = llvm::Intrinsic::getOrInsertDeclaration(
            &module, llvm::Intrinsic::sqrt, {llvm::Type::getFloatTy(module.getContext())});
        nv_sqrt->replaceAllUsesWith(exact);
      }
    // The shim's own helpers may call into libdevice; so may libclc.
    bool needs_libdevice = false;
    for (const llvm::Function& f : module)
      needs_libdevice = needs_libdevice || (f.isDeclaration() && f.getName().starts_with("__nv_"));
    if (!needs_libdevice) return true;
    llvm::MemoryBufferRef libdevice =
        library_bytes(manifold_nvptx_libdevice_bitcode, manifold_nvptx_libdevice_bitcode_size,
                      "libdevice.10.bc", libdevice_paths());
    if (!libdevice.getBufferSize()) {
      *log += "error: CUDA's libdevice.10.bc was not found (set MANIFOLD_LIBDEVICE)\n";
      return false;
    }
    return link_lazily(module, libdevice, log);
  }

  bool resolved_later(const llvm::Function& function) const override {
    // vprintf: the CUDA driver's JIT linker provides it; __nvvm_reflect: NVVMReflect folds it;
    // the atomics' scope markers and the collectives' scratch: optimize() resolves them.
    const llvm::StringRef name = function.getName();
    return name == "vprintf" || name == "__nvvm_reflect" || name == "__manifold_memory_scope" ||
           name == "__manifold_collective_scratch";
  }

  bool optimize(Build& build) override;

  bool emit(Build& build) override {
    ProgramBinary& program = build.program;
    // PTX spells external names as identifiers, and LLVM's PTX printer ends the process on any
    // other; names from SPIR-V (entry points, linkage names) can hold any characters. Internal
    // names are made valid by the backend itself.
    for (const llvm::GlobalValue& value : build.module.global_values()) {
      const auto* function = llvm::dyn_cast<llvm::Function>(&value);
      if (value.hasLocalLinkage() || (function && function->isIntrinsic()) ||
          is_ptx_identifier(value.getName()))
        continue;
      build.log += "error: '" + value.getName().str() +
                   "' cannot be a PTX symbol name (letters, digits, _ and $ only)\n";
      return false;
    }
    // An NVPTX executable's payload is PTX.
    if (!emit_code(build.module, machine(), CodeKind::Assembly, &program.bitcode, &build.log))
      return false;
    const uint64_t shared = static_local_bytes(build.module, kSharedAS);
    program.execs.clear();
    for (const KernelInfo& k : program.kernels) {
      KernelExec e;
      e.entry_symbol = k.name;
      e.static_local_size = shared;
      e.uses_printf = uses_printf_;
      program.execs.push_back(e);
    }
    return true;
  }

  bool uses_printf_ = false;
  std::set<std::string> program_functions_;  // defined before the libraries were linked
};

bool NvptxPipeline::optimize(Build& build) {
  llvm::Module& module = build.module;
  const std::vector<KernelInfo>& kernels = build.program.kernels;
  keep_library_divisions_exact(module, program_functions_);
  specialize_atomic_scopes(module);  // before inlining: calls still name their scopes
  drop_atomic_volatility(module);
  define_collective_scratch(module);
  // Only the kernels (and the names the runtime looks up) stay visible.
  std::set<std::string> kernel_names;
  for (const KernelInfo& k : kernels) kernel_names.insert(k.name);
  for (llvm::Function& f : module) {
    if (f.isDeclaration()) continue;
    if (kernel_names.count(f.getName().str())) {
      f.setCallingConv(llvm::CallingConv::PTX_Kernel);
      f.setLinkage(llvm::GlobalValue::ExternalLinkage);
    } else if (f.getName().starts_with(kOutlinedBuiltinPrefix)) {
      f.setLinkage(llvm::GlobalValue::InternalLinkage);  // stays a call (stages.h)
    } else {
      f.setLinkage(llvm::GlobalValue::InternalLinkage);
      f.removeFnAttr(llvm::Attribute::NoInline);
      f.removeFnAttr(llvm::Attribute::OptimizeNone);
      // Everything is inlined into the kernels, as CUDA compilers do: calls are costly on a
      // GPU, and __constant arguments can then be retyped (below).
      f.addFnAttr(llvm::Attribute::AlwaysInline);
    }
  }
  for (llvm::GlobalVariable& g : module.globals()) {
    if (g.isDeclaration() || g.getName() == "__manifold_launch") continue;
    if (g.hasName() && !g.getName().starts_with("llvm."))
      g.setLinkage(llvm::GlobalValue::InternalLinkage);
  }
  if (auto* launch = module.getGlobalVariable("__manifold_launch")) {
    // The shim only declares it (compiler/nvptx/shim.cl).
    if (launch->isDeclaration()) {
      // Zero but work_dim (1): no offsets, the launch's grid is the whole NDRange.
      auto* type = llvm::cast<llvm::StructType>(launch->getValueType());
      std::vector<llvm::Constant*> fields;
      for (unsigned i = 0; i < type->getNumElements(); ++i)
        fields.push_back(llvm::Constant::getNullValue(type->getElementType(i)));
      fields[1] = llvm::ConstantInt::get(type->getElementType(1), 1);
      launch->setInitializer(llvm::ConstantStruct::get(type, fields));
      launch->setConstant(true);
    }
    launch->setLinkage(llvm::GlobalValue::ExternalLinkage);
    launch->setExternallyInitialized(true);  // the host writes it: never fold its value
  }
  move_constants_to_global_memory(module);
  // -cl-denorms-are-zero or -cl-fast-relaxed-math: libdevice's flush-to-zero paths.
  const bool ftz =
      has_math_flag(build.options, "-cl-denorms-are-zero") || build.options.fast_relaxed_math;
  module.addModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz", ftz ? 1 : 0);

  const llvm::OptimizationLevel level =
      build.options.opt_disable ? llvm::OptimizationLevel::O1 : llvm::OptimizationLevel::O3;
  run_module_passes(module, &machine(),
                    [level](llvm::PassBuilder& builder, llvm::ModulePassManager& passes) {
                      register_full_unroll_of_short_loops(builder);
                      passes = builder.buildPerModuleDefaultPipeline(level);
                    });
  for (const KernelInfo& k : kernels)
    if (llvm::Function* f = module.getFunction(k.name)) retype_constant_arguments(*f, &build.log);
  lower_atomic_orderings(module, compute_capability(target()));
  lower_half_copysign(module);
  use_full_range_division(module, ftz);
  // MANIFOLD_NVPTX_DUMP=<file>: the final IR, for debugging the pipeline.
  if (const std::string dump = compiler_settings().nvptx_dump; !dump.empty()) {
    std::error_code error;
    llvm::raw_fd_ostream file(dump, error);
    if (!error) module.print(file, nullptr);
  }
  return verify(module, "NVPTX", &build.log);
}

}  // namespace

Target nvptx_target(unsigned major, unsigned minor) {
  // The lowest PTX ISA version that knows each SM (LLVM refuses a lower one), and at least 6.2
  // (activemask, for the non-uniform sub-group functions: compiler/nvptx/subgroups.cl).
  struct Sm {
    unsigned sm, ptx;
  };
  static const Sm table[] = {{50, 62}, {52, 62}, {53, 62},  {60, 62},  {61, 62}, {62, 62},
                             {70, 62}, {72, 62}, {75, 63},  {80, 70},  {86, 71}, {87, 74},
                             {89, 78}, {90, 78}, {100, 86}, {101, 86}, {120, 87}};
  const unsigned wanted = major * 10 + minor;
  Sm chosen = table[0];
  // An SM newer than LLVM knows runs the PTX of the newest one it does (the driver JITs it).
  for (const Sm& s : table)
    if (s.sm <= wanted) chosen = s;
  Target t;
  t.triple = "nvptx64-nvidia-cuda";
  t.cpu = "sm_" + std::to_string(chosen.sm);
  t.features = "+ptx" + std::to_string(chosen.ptx);
  t.opencl_c_version = 300;
  // Generic addressing, scoped atomics with every order (compiler/nvptx_atomics.h), module
  // globals and the collectives (compiler/nvptx/*.cl) are PTX's own. Images:
  // compiler/builtins/image.cl over the descriptors of compiler/image_abi.h, as on the CPU.
  // fp16: compiler/builtins/half.cl; sm_53 and later do half arithmetic natively, older SMs in
  // float (LLVM promotes it).
  t.opencl_c_features = {
      "__opencl_c_int64",
      "__opencl_c_fp64",
      "__opencl_c_generic_address_space",
      "__opencl_c_program_scope_global_variables",
      "__opencl_c_atomic_order_acq_rel",
      "__opencl_c_atomic_order_seq_cst",
      "__opencl_c_atomic_scope_device",
      "__opencl_c_atomic_scope_all_devices",
      "__opencl_c_work_group_collective_functions",
      "__opencl_c_images",
      "__opencl_c_read_write_images",
      "__opencl_c_3d_image_writes",
      "__opencl_c_fp16",
  };
  t.extensions = {
      "cl_khr_byte_addressable_store",    "cl_khr_fp64",
      "cl_khr_global_int32_base_atomics", "cl_khr_global_int32_extended_atomics",
      "cl_khr_local_int32_base_atomics",  "cl_khr_local_int32_extended_atomics",
      "cl_khr_int64_base_atomics",        "cl_khr_int64_extended_atomics",
      "cl_khr_3d_image_writes",
  };
  t.extensions.push_back("cl_khr_fp16");
  // Sub-groups are warps (compiler/nvptx/subgroups.cl), which make independent forward progress:
  // cl_khr_subgroups too.
  t.opencl_c_features.push_back("__opencl_c_subgroups");
  t.sub_group_size = 32;
  for (const char* extension :
       {"cl_khr_subgroups", "cl_khr_subgroup_extended_types", "cl_khr_subgroup_non_uniform_vote",
        "cl_khr_subgroup_ballot", "cl_khr_subgroup_non_uniform_arithmetic",
        "cl_khr_subgroup_shuffle", "cl_khr_subgroup_shuffle_relative",
        "cl_khr_subgroup_clustered_reduce"})
    t.extensions.push_back(extension);
  t.fp64 = true;
  t.fp16 = true;
  t.images = true;
  t.spirv = true;  // the SPIR-V reader's IR takes this pipeline like clang's
  return t;
}

std::unique_ptr<TargetPipeline> make_nvptx_pipeline(const Target& target) {
  initialize_nvptx();
  return std::make_unique<NvptxPipeline>(target);
}

std::optional<std::string> nvptx_ptx_of(std::span<const uint8_t> binary, std::string* error) {
  std::optional<ProgramBinary> program =
      deserialize_executable(binary, "nvptx", "an NVPTX executable", error);
  if (!program) return std::nullopt;
  return std::string(program->bitcode.begin(), program->bitcode.end());
}

}  // namespace manifold::compiler
