#include "compiler/cpu_pipeline.h"

#include <dlfcn.h>
#include <llvm/ADT/StringMap.h>
#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/Demangle/Demangle.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Linker/Linker.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>
#include <llvm/Transforms/IPO/AlwaysInliner.h>
#include <llvm/Transforms/IPO/GlobalDCE.h>
#include <llvm/Transforms/InstCombine/InstCombine.h>
#include <llvm/Transforms/Scalar/EarlyCSE.h>
#include <llvm/Transforms/Scalar/SROA.h>
#include <llvm/Transforms/Scalar/Scalarizer.h>
#include <llvm/Transforms/Scalar/SimplifyCFG.h>
#include <llvm/Transforms/Utils/ModuleUtils.h>

#include <map>
#include <mutex>
#include <optional>
#include <set>

#include "compiler/kernel_info.h"
#include "compiler/workgroup.h"

// The builtin library's bitcode, embedded at build time (see compiler/CMakeLists.txt).
extern "C" const unsigned char manifold_builtins_bitcode[];
extern "C" const unsigned long manifold_builtins_bitcode_size;

namespace manifold::compiler {

void initialize_llvm() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
  });
}

llvm::TargetMachine* target_machine_for(const Target& target) {
  initialize_llvm();
  thread_local std::map<std::string, std::unique_ptr<llvm::TargetMachine>> cache;
  const std::string cpu = target.cpu.empty() ? llvm::sys::getHostCPUName().str() : target.cpu;
  const std::string key = target.triple + "|" + cpu + "|" + target.features;
  auto it = cache.find(key);
  if (it != cache.end()) return it->second.get();
  std::string error;
  const llvm::Target* llvm_target =
      llvm::TargetRegistry::lookupTarget(llvm::Triple(target.triple), error);
  if (!llvm_target) return nullptr;
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> machine(llvm_target->createTargetMachine(
      llvm::Triple(target.triple), cpu, target.features, options, llvm::Reloc::PIC_,
      // Small code model: JITLink keeps a program's sections together and reaches host
      // functions through stubs, so calls and constants need no 64-bit absolute addresses.
      llvm::CodeModel::Small, llvm::CodeGenOptLevel::Aggressive, /*JIT=*/true));
  return cache.emplace(key, std::move(machine)).first->second.get();
}

void strip_target_attributes(llvm::Module& module) {
  for (llvm::Function& function : module) {
    function.removeFnAttr("target-cpu");
    function.removeFnAttr("target-features");
    function.removeFnAttr("tune-cpu");
    // The builtin library is compiled with -fno-builtin (its functions have libm-like names);
    // the marker must not follow its calls into programs: it hides vector variants of calls.
    function.removeFnAttr("no-builtins");
    for (llvm::BasicBlock& block : function)
      for (llvm::Instruction& inst : block)
        if (auto* call = llvm::dyn_cast<llvm::CallBase>(&inst))
          call->removeFnAttr(llvm::Attribute::NoBuiltin);
  }
}

namespace {

// The builtin library: a multi-module bitcode file (one module per part, see
// builtins/split_library.cmake) and an index from each defined symbol to its part. Read once
// per process; afterwards only parts a program needs are parsed, lazily, into its context.
class BuiltinLibrary {
 public:
  static const BuiltinLibrary& get() {
    static const BuiltinLibrary library;
    return library;
  }
  const std::string& error() const { return error_; }
  std::optional<unsigned> part_defining(llvm::StringRef symbol) const {
    auto it = index_.find(symbol);
    if (it == index_.end()) return std::nullopt;
    return it->second;
  }
  llvm::Expected<std::unique_ptr<llvm::Module>> load_part(unsigned part,
                                                          llvm::LLVMContext& context) const {
    // A copy per call: BitcodeModule is a small view, and the copy keeps threads apart.
    llvm::BitcodeModule view = parts_[part];
    return view.getLazyModule(context, /*ShouldLazyLoadMetadata=*/true, /*IsImporting=*/false);
  }

 private:
  BuiltinLibrary() {
    llvm::MemoryBufferRef buffer(
        llvm::StringRef(reinterpret_cast<const char*>(manifold_builtins_bitcode),
                        manifold_builtins_bitcode_size),
        "manifold-builtins");
    auto parts = llvm::getBitcodeModuleList(buffer);
    if (!parts) {
      error_ = llvm::toString(parts.takeError());
      return;
    }
    parts_ = std::move(*parts);
    llvm::LLVMContext scratch;
    for (unsigned part = 0; part < parts_.size(); ++part) {
      auto module = load_part(part, scratch);
      if (!module) {
        error_ = llvm::toString(module.takeError());
        return;
      }
      for (const llvm::GlobalValue& value : (*module)->global_values())
        if (!value.isDeclaration() && !value.hasLocalLinkage()) index_[value.getName()] = part;
    }
  }
  std::vector<llvm::BitcodeModule> parts_;
  llvm::StringMap<unsigned> index_;
  std::string error_;
};

bool link_builtins(llvm::Module& module, std::string* log) {
  const BuiltinLibrary& library = BuiltinLibrary::get();
  if (!library.error().empty()) {
    *log += "internal error: cannot read the builtin library: " + library.error() + "\n";
    return false;
  }
  // Link parts until nothing the library defines is left undefined: a part's functions may
  // call functions of other parts.
  for (;;) {
    std::set<unsigned> needed;
    for (const llvm::GlobalValue& value : module.global_values()) {
      if (!value.isDeclaration() || value.use_empty()) continue;
      if (auto part = library.part_defining(value.getName())) needed.insert(*part);
    }
    if (needed.empty()) return true;
    for (unsigned part : needed) {
      auto library_part = library.load_part(part, module.getContext());
      if (!library_part) {
        *log += "internal error: cannot read the builtin library: " +
                llvm::toString(library_part.takeError()) + "\n";
        return false;
      }
      (*library_part)->setTargetTriple(module.getTargetTriple());
      (*library_part)->setDataLayout(module.getDataLayout());
      if (llvm::Linker::linkModules(module, std::move(*library_part),
                                    llvm::Linker::LinkOnlyNeeded)) {
        *log += "internal error: linking the builtin library failed\n";
        return false;
      }
    }
  }
}

// Functions a finished program may still call: provided by the JIT's host symbols.
bool provided_by_host(const llvm::Function& function) {
  llvm::StringRef name = function.getName();
  return function.isIntrinsic() || name.starts_with("Sleef_") || name.starts_with("__manifold") ||
         name == "memcpy" || name == "memset" || name == "memmove" ||
         // libm's exact remainders (frem lowers to fmod; remainder has no instruction), and
         // its double pow (compiler/builtins/math.cl says why).
         name == "fmod" || name == "fmodf" || name == "remainder" || name == "remainderf" ||
         name == "pow";
}

// SLEEF's vector functions for the scalar SLEEF calls the builtin library makes, announced
// to the loop and SLP vectorizers through "vector-function-abi-variant": a loop over
// work-items calling Sleef_sinf_u35 then calls Sleef_sinf16_u35 on 16 work-items at once.
// Only widths the target's registers hold, and only functions libsleef really exports.
void* sleef_handle() {
  static void* handle = dlopen("libsleef.so.3", RTLD_NOW | RTLD_GLOBAL);
  return handle;
}

void add_sleef_vector_variants(llvm::Module& module, const Target& target) {
  void* sleef = sleef_handle();
  if (!sleef) return;
  const bool avx = target.features.find("+avx,") != std::string::npos ||
                   target.features.find("+avx2") != std::string::npos;
  const bool avx512 = target.features.find("+avx512f") != std::string::npos;
  for (llvm::Function& scalar : module) {
    llvm::StringRef name = scalar.getName();
    if (!scalar.isDeclaration() || !name.starts_with("Sleef_") || scalar.use_empty()) continue;
    // Pure functions of their arguments: lets the vectorizers and LICM treat them freely.
    scalar.setDoesNotAccessMemory();
    scalar.setDoesNotThrow();
    scalar.setWillReturn();
    llvm::Type* type = scalar.getReturnType();
    if (!type->isFloatTy() && !type->isDoubleTy()) continue;
    bool uniform = true;
    for (llvm::Type* param : scalar.getFunctionType()->params()) uniform &= param == type;
    if (!uniform || scalar.arg_empty()) continue;
    const bool is_float = type->isFloatTy();
    // Sleef_sinf_u35 -> Sleef_sinf<W>_u35; Sleef_fmod -> Sleef_fmodd<W>.
    size_t accuracy = name.rfind("_u");
    llvm::StringRef stem = accuracy == llvm::StringRef::npos ? name : name.substr(0, accuracy);
    llvm::StringRef suffix = accuracy == llvm::StringRef::npos ? "" : name.substr(accuracy);
    std::vector<unsigned> widths = is_float ? std::vector<unsigned>{4} : std::vector<unsigned>{2};
    if (avx) widths.push_back(is_float ? 8 : 4);
    if (avx512) widths.push_back(is_float ? 16 : 8);
    std::string variants;
    for (unsigned width : widths) {
      std::string vector_name =
          stem.str() + (is_float ? "" : "d") + std::to_string(width) + suffix.str();
      if (!dlsym(sleef, vector_name.c_str())) continue;
      auto* vector_type = llvm::FixedVectorType::get(type, width);
      std::vector<llvm::Type*> params(scalar.arg_size(), vector_type);
      llvm::FunctionCallee vector_fn = module.getOrInsertFunction(
          vector_name, llvm::FunctionType::get(vector_type, params, false));
      if (auto* declared = llvm::dyn_cast<llvm::Function>(vector_fn.getCallee())) {
        declared->setDoesNotAccessMemory();
        declared->setDoesNotThrow();
        declared->setWillReturn();
        // Unused until the vectorizer picks it: keep the declaration alive until then.
        llvm::appendToCompilerUsed(module, {declared});
      }
      if (!variants.empty()) variants += ",";
      variants += "_ZGV_LLVM_N" + std::to_string(width) + std::string(scalar.arg_size(), 'v') +
                  "_" + name.str() + "(" + vector_name + ")";
    }
    if (variants.empty()) continue;
    for (llvm::User* user : scalar.users())
      if (auto* call = llvm::dyn_cast<llvm::CallInst>(user))
        call->addFnAttr(
            llvm::Attribute::get(module.getContext(), "vector-function-abi-variant", variants));
  }
}

bool check_undefined(llvm::Module& module, std::string* log) {
  bool ok = true;
  for (llvm::Function& function : module) {
    if (!function.isDeclaration() || function.use_empty() || provided_by_host(function)) continue;
    // Work-item queries and barriers are resolved by the work-group pass.
    llvm::StringRef name = function.getName();
    if (name.starts_with("_Z13get_global_id") || name.starts_with("_Z12get_local_id") ||
        name.starts_with("_Z12get_group_id") || name.starts_with("_Z14get_local_size") ||
        name.starts_with("_Z23get_enqueued_local_size") || name.starts_with("_Z14get_num_groups") ||
        name.starts_with("_Z15get_global_size") || name.starts_with("_Z17get_global_offset") ||
        name == "_Z12get_work_dimv" || name == "_Z20get_global_linear_idv" ||
        name == "_Z19get_local_linear_idv" || name == "_Z7barrierj" ||
        name.starts_with("_Z18work_group_barrier"))
      continue;
    *log += "error: undefined function '" + llvm::demangle(name.str()) + "'" +
            (name.starts_with("_Z") ? " (builtin not implemented by Manifold's CPU library)" : "") +
            "\n";
    ok = false;
  }
  return ok;
}

void run_module_passes(
    llvm::Module& module, llvm::TargetMachine* machine,
    const std::function<void(llvm::PassBuilder&, llvm::ModulePassManager&)>& populate) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  llvm::PassBuilder builder(machine, tuning);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager passes;
  populate(builder, passes);
  passes.run(module, mam);
}

// Whether a kernel was compiled with -cl-denorms-are-zero (the frontend turns it into the
// function's single-precision denormal mode).
bool flushes_denormals(const llvm::Function& kernel) {
  return kernel.getDenormalMode(llvm::APFloat::IEEEsingle()).Output != llvm::DenormalMode::IEEE;
}

// -cl-denorms-are-zero allows flushing denormals, and programs built with it may expect it
// (piglit's amdgcn-f32-inline-immediates: 0 + a denormal gives 0). The work-group function
// sets the x86 flush-to-zero and denormals-are-zero modes while it runs and restores the
// thread's previous MXCSR before returning: the thread runs other programs' kernels too. The
// spec lets the option flush doubles as well, which these modes also do.
// denormal_mode: the kernel's "denormal-fp-math-f32" attribute, which the work-group function
// takes over so that constant folding agrees.
void flush_denormals_while_running(llvm::Function& wg, llvm::Attribute denormal_mode) {
  constexpr uint32_t kFlushToZero = 1u << 15, kDenormalsAreZero = 1u << 6;
  wg.addFnAttr(denormal_mode);
  llvm::IRBuilder<> b(&*wg.getEntryBlock().getFirstInsertionPt());
  llvm::AllocaInst* saved = b.CreateAlloca(b.getInt32Ty(), nullptr, "mxcsr.saved");
  llvm::AllocaInst* flushing = b.CreateAlloca(b.getInt32Ty(), nullptr, "mxcsr.flushing");
  b.CreateIntrinsic(llvm::Intrinsic::x86_sse_stmxcsr, llvm::ArrayRef<llvm::Value*>{saved});
  llvm::Value* previous = b.CreateLoad(b.getInt32Ty(), saved);
  b.CreateStore(b.CreateOr(previous, kFlushToZero | kDenormalsAreZero), flushing);
  b.CreateIntrinsic(llvm::Intrinsic::x86_sse_ldmxcsr, llvm::ArrayRef<llvm::Value*>{flushing});
  for (llvm::BasicBlock& block : wg) {
    if (auto* ret = llvm::dyn_cast<llvm::ReturnInst>(block.getTerminator())) {
      b.SetInsertPoint(ret);
      b.CreateIntrinsic(llvm::Intrinsic::x86_sse_ldmxcsr, llvm::ArrayRef<llvm::Value*>{saved});
    }
  }
}

// to_global/to_local/to_private of a generic pointer (clang calls __to_global and so on): the
// pointer if it points into that address space, else NULL. On the CPU every address space is
// host memory; the host function __manifold_address_space_of tells them apart by where the
// pointer lies (the running group's __local bytes, the thread's stack and private arrays).
void lower_address_space_casts(llvm::Module& module) {
  static constexpr std::pair<const char*, int> kCasts[] = {
      {"__to_private", 0}, {"__to_global", 1}, {"__to_local", 2}};
  if (std::none_of(std::begin(kCasts), std::end(kCasts),
                   [&](const auto& cast) { return module.getFunction(cast.first); }))
    return;
  llvm::LLVMContext& c = module.getContext();
  llvm::PointerType* host_pointer = llvm::PointerType::get(c, 0);
  llvm::FunctionCallee space_of = module.getOrInsertFunction(
      "__manifold_address_space_of",
      llvm::FunctionType::get(llvm::Type::getInt32Ty(c), {host_pointer}, false));
  for (const auto& [name, space] : kCasts) {
    llvm::Function* cast = module.getFunction(name);
    if (!cast) continue;
    for (llvm::User* user : llvm::SmallVector<llvm::User*, 8>(cast->users())) {
      auto* call = llvm::dyn_cast<llvm::CallInst>(user);
      if (!call || call->getCalledFunction() != cast) continue;
      llvm::IRBuilder<> b(call);
      llvm::Value* pointer = call->getArgOperand(0);
      llvm::Value* asked =
          b.CreateCall(space_of, {b.CreatePointerBitCastOrAddrSpaceCast(pointer, host_pointer)});
      auto* result_type = llvm::cast<llvm::PointerType>(call->getType());
      llvm::Value* in_space = b.CreateICmpEQ(asked, b.getInt32(space));
      llvm::Value* result =
          b.CreateSelect(in_space, b.CreatePointerBitCastOrAddrSpaceCast(pointer, result_type),
                         llvm::ConstantPointerNull::get(result_type));
      call->replaceAllUsesWith(result);
      call->eraseFromParent();
    }
    if (cast->use_empty()) cast->eraseFromParent();
  }
}

// x86's div and idiv trap on a zero divisor and on INT_MIN / -1, and the SIGFPE would kill the
// application; OpenCL C only leaves the result undefined. Where a divisor may trap it becomes 1
// (a select, which vectorizes like the division around it): x / 0 gives x, INT_MIN / -1 gives
// INT_MIN (the wrapped value), and the remainders give 0.
bool divisor_may_trap(const llvm::Value* divisor, bool is_signed) {
  auto element_traps = [is_signed](const llvm::Constant* c) {
    const auto* value = llvm::dyn_cast_or_null<llvm::ConstantInt>(c);
    return !value || value->isZero() || (is_signed && value->isMinusOne());
  };
  const auto* constant = llvm::dyn_cast<llvm::Constant>(divisor);
  if (!constant) return true;
  if (auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(constant->getType())) {
    for (unsigned i = 0; i < vector->getNumElements(); ++i)
      if (element_traps(constant->getAggregateElement(i))) return true;
    return false;
  }
  return element_traps(constant);
}

void guard_integer_division(llvm::Module& module) {
  for (llvm::Function& function : module)
    for (llvm::BasicBlock& block : function)
      for (llvm::Instruction& inst : block) {
        const unsigned opcode = inst.getOpcode();
        const bool is_signed =
            opcode == llvm::Instruction::SDiv || opcode == llvm::Instruction::SRem;
        if (!is_signed && opcode != llvm::Instruction::UDiv && opcode != llvm::Instruction::URem)
          continue;
        llvm::Value* divisor = inst.getOperand(1);
        if (!divisor_may_trap(divisor, is_signed)) continue;
        llvm::IRBuilder<> b(&inst);
        llvm::Type* type = divisor->getType();
        divisor = b.CreateFreeze(divisor);  // a poison divisor must not make the guard poison
        llvm::Value* traps = b.CreateICmpEQ(divisor, llvm::Constant::getNullValue(type));
        if (is_signed) {
          const unsigned bits = type->getScalarSizeInBits();
          llvm::Value* dividend = b.CreateFreeze(inst.getOperand(0));
          llvm::Value* overflows = b.CreateAnd(
              b.CreateICmpEQ(dividend,
                             llvm::ConstantInt::get(type, llvm::APInt::getSignedMinValue(bits))),
              b.CreateICmpEQ(divisor, llvm::Constant::getAllOnesValue(type)));
          traps = b.CreateOr(traps, overflows);
          inst.setOperand(0, dividend);
        }
        inst.setOperand(1, b.CreateSelect(traps, llvm::ConstantInt::get(type, 1), divisor));
      }
}

}  // namespace

// Builtin library functions named so stay out of line (compiler/builtins/image.cl: the general
// image format conversions, whose copies in every read would make big kernels).
constexpr llvm::StringLiteral kOutlinedPrefix = "__manifold_outlined_";

bool finalize_executable(llvm::Module& module, std::vector<KernelInfo>& kernels,
                         std::vector<KernelExec>& execs, const Target& target,
                         const ParsedOptions& options, std::string* log) {
  llvm::TargetMachine* machine = target_machine_for(target);
  if (!machine) {
    *log += "error: no code generator for target '" + target.triple + "'\n";
    return false;
  }
  lower_printf_calls(module);
  lower_address_space_casts(module);
  if (!link_builtins(module, log)) return false;
  strip_target_attributes(module);  // again: the builtins just linked carry them too
  if (!check_undefined(module, log)) return false;

  // Everything but the kernels is inlined into the kernels: barriers inside helper functions
  // then sit in the kernel's own control flow, where the work-group pass handles them.
  for (llvm::Function& function : module) {
    if (function.isDeclaration()) continue;
    function.removeFnAttr(llvm::Attribute::OptimizeNone);
    if (function.getName().starts_with(kOutlinedPrefix)) {
      // A builtin library function meant to stay a call (no barriers, no work-item queries).
      function.setLinkage(llvm::GlobalValue::InternalLinkage);
      continue;
    }
    function.removeFnAttr(llvm::Attribute::NoInline);
    if (!is_kernel(function)) {
      function.setLinkage(llvm::GlobalValue::InternalLinkage);
      function.addFnAttr(llvm::Attribute::AlwaysInline);
    }
  }
  for (llvm::GlobalVariable& global : module.globals())
    if (!global.isDeclaration()) global.setLinkage(llvm::GlobalValue::InternalLinkage);

  run_module_passes(module, machine, [](llvm::PassBuilder&, llvm::ModulePassManager& passes) {
    passes.addPass(llvm::AlwaysInlinerPass(/*InsertLifetime=*/false));
    passes.addPass(llvm::GlobalDCEPass());
    llvm::FunctionPassManager cleanup;
    cleanup.addPass(llvm::SROAPass(llvm::SROAOptions::ModifyCFG));
    cleanup.addPass(llvm::EarlyCSEPass(/*UseMemorySSA=*/false));
    cleanup.addPass(llvm::InstCombinePass());
    cleanup.addPass(llvm::SimplifyCFGPass());
    cleanup.addPass(llvm::SROAPass(llvm::SROAOptions::ModifyCFG));
    passes.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(cleanup)));
  });

  guard_integer_division(module);

  // Kernels to run with denormals flushed, noted now: the work-group pass replaces them.
  std::vector<std::pair<size_t, llvm::Attribute>> flushing_kernels;
  if (llvm::Triple(target.triple).isX86()) {
    for (size_t i = 0; i < kernels.size(); ++i)
      if (const llvm::Function* kernel = module.getFunction(kernels[i].name);
          kernel && flushes_denormals(*kernel))
        flushing_kernels.emplace_back(i, kernel->getFnAttribute("denormal-fp-math-f32"));
  }

  std::string error;
  if (!form_work_group_functions(module, kernels, execs, &error)) {
    *log += error + "\n";
    return false;
  }
  for (const auto& [index, denormal_mode] : flushing_kernels)
    if (llvm::Function* wg = module.getFunction(execs[index].entry_symbol))
      flush_denormals_while_running(*wg, denormal_mode);
  add_sleef_vector_variants(module, target);
  // Only the work-group functions are entry points.
  for (llvm::Function& function : module)
    if (!function.isDeclaration() && !function.getName().ends_with(".wg"))
      function.setLinkage(llvm::GlobalValue::InternalLinkage);
  const std::string cpu = target.cpu.empty() ? llvm::sys::getHostCPUName().str() : target.cpu;
  for (llvm::Function& function : module) {
    if (function.isDeclaration()) continue;
    function.addFnAttr("target-cpu", cpu);
    if (!target.features.empty()) function.addFnAttr("target-features", target.features);
  }
  const bool optimize = !options.opt_disable;
  if (optimize) {
    // OpenCL vector types (float3 positions, float4 pixels) would keep the loop vectorizer
    // off the work-item loops: it only widens scalars. Split them into scalars first; the
    // vectorizer then packs the same component of 16 work-items into one register (and SLP
    // re-packs what it leaves).
    run_module_passes(module, machine, [](llvm::PassBuilder&, llvm::ModulePassManager& passes) {
      llvm::ScalarizerPassOptions scalarize;
      scalarize.ScalarizeLoadStore = true;
      llvm::FunctionPassManager split;
      split.addPass(llvm::ScalarizerPass(scalarize));
      split.addPass(llvm::InstCombinePass());
      passes.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(split)));
    });
  }
  run_module_passes(
      module, machine, [optimize](llvm::PassBuilder& builder, llvm::ModulePassManager& passes) {
        // O2, not O3: O3's non-trivial loop unswitching copies whole work-item loop nests
        // for every invariant condition (compile time and code size, little speed).
        passes = builder.buildPerModuleDefaultPipeline(optimize ? llvm::OptimizationLevel::O2
                                                                : llvm::OptimizationLevel::O1);
      });
  return true;
}

std::string resolved_cpu(const Target& target) {
  return target.cpu.empty() ? llvm::sys::getHostCPUName().str() : target.cpu;
}

bool emit_object(llvm::Module& module, const Target& target, std::vector<uint8_t>* object,
                 std::string* log) {
  llvm::TargetMachine* machine = target_machine_for(target);
  if (!machine) {
    *log += "error: no code generator for target '" + target.triple + "'\n";
    return false;
  }
  module.setDataLayout(machine->createDataLayout());
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream stream(buffer);
  llvm::legacy::PassManager passes;
  if (machine->addPassesToEmitFile(passes, stream, nullptr, llvm::CodeGenFileType::ObjectFile)) {
    *log += "internal error: the target cannot emit object files\n";
    return false;
  }
  passes.run(module);
  object->assign(buffer.begin(), buffer.end());
  return true;
}

}  // namespace manifold::compiler
