// The CPU pipeline (x86-64): linked program IR -> work-group functions -> optimized bitcode and
// machine code for the host JIT.
#include "compiler/cpu_pipeline.h"

#include <dlfcn.h>
#include <llvm/Analysis/TargetTransformInfo.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassInstrumentation.h>
#include <llvm/IR/PassManager.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>
#include <llvm/Transforms/IPO/AlwaysInliner.h>
#include <llvm/Transforms/IPO/GlobalDCE.h>
#include <llvm/Transforms/InstCombine/InstCombine.h>
#include <llvm/Transforms/Scalar/EarlyCSE.h>
#include <llvm/Transforms/Scalar/LoopUnrollPass.h>
#include <llvm/Transforms/Scalar/SROA.h>
#include <llvm/Transforms/Scalar/Scalarizer.h>
#include <llvm/Transforms/Scalar/SimplifyCFG.h>
#include <llvm/Transforms/Utils/ModuleUtils.h>
#include <llvm/Transforms/Vectorize/SLPVectorizer.h>

#include <string>
#include <utility>
#include <vector>

#include "compiler/cpu_local_atomics.h"
#include "compiler/item_lockstep.h"
#include "compiler/kernel_info.h"
#include "compiler/stages.h"
#include "compiler/target_pipeline.h"
#include "compiler/workgroup.h"

// The builtin library's bitcode and the index of the symbols its parts define, embedded at
// build time (see compiler/CMakeLists.txt).
extern "C" const unsigned char manifold_builtins_bitcode[];
extern "C" const unsigned long manifold_builtins_bitcode_size;
extern "C" const char manifold_builtins_index[];
extern "C" const unsigned long manifold_builtins_index_size;

namespace manifold::compiler {

namespace {

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

// Runs function passes on every function but the item-loop functions, which keep the
// kernel's own vector types (compiler/workgroup.h).
class UnlessKeepingVectors : public llvm::PassInfoMixin<UnlessKeepingVectors> {
 public:
  explicit UnlessKeepingVectors(llvm::FunctionPassManager passes) : passes_(std::move(passes)) {}
  llvm::PreservedAnalyses run(llvm::Function& function, llvm::FunctionAnalysisManager& analyses) {
    if (function.hasFnAttribute(kKeepVectorsAttribute)) return llvm::PreservedAnalyses::all();
    return passes_.run(function, analyses);
  }

 private:
  llvm::FunctionPassManager passes_;
};

// Item-loop functions whose work-items run in lockstep (compiler/item_lockstep.h) already hold
// several work-items in every register; what stays scalar there is per work-item (accesses that
// are not consecutive across work-items, and the loop over the work-items left over). The SLP
// vectorizer finds little to pack in it, but its search over those loads, stores and lane
// inserts and extracts grows faster than the body and dominates the build of large unrolled
// kernels (hash rounds). Such functions above this size skip it; smaller ones keep it.
constexpr size_t kLockstepSlpInstructionLimit = 2000;

// __local in clang's fake address-space map (-ffake-address-space-map), which the CPU builds use.
constexpr unsigned kCpuLocalAddressSpace = 3;

bool skips_slp_vectorizer(const llvm::Function& function) {
  if (!function.hasFnAttribute(kItemLockstepAttribute)) return false;
  return function.getInstructionCount() > kLockstepSlpInstructionLimit;
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

// Manifold's own builtin library (compiler/builtins), embedded at build time.
const SplitLibrary& builtin_library() {
  static const SplitLibrary library(
      llvm::MemoryBufferRef(
          llvm::StringRef(reinterpret_cast<const char*>(manifold_builtins_bitcode),
                          manifold_builtins_bitcode_size),
          "manifold-builtins"),
      std::string_view(manifold_builtins_index, manifold_builtins_index_size));
  return library;
}

// x86-64 (and whatever host CPU the JIT serves): kernels become work-group functions
// (compiler/workgroup.h) vectorized across work-items, the payload is bitcode plus machine
// code for the build's CPU, which backends/cpu/cpu_executable.cpp links into the process.
class CpuPipeline final : public TargetPipeline {
 public:
  explicit CpuPipeline(const Target& target) : TargetPipeline(target, CodeDestination::HostJit) {}

 private:
  bool lower(Build& build) override {
    lower_printf_calls(build.module);
    lower_address_space_casts(build.module);
    return true;
  }

  bool link_builtins(Build& build) override {
    return builtin_library().link_into(build.module, &build.log);
  }

  bool resolved_later(const llvm::Function& function) const override {
    if (provided_by_host(function)) return true;
    // Work-item queries and barriers: the work-group pass resolves them.
    llvm::StringRef name = function.getName();
    return name.starts_with("_Z13get_global_id") || name.starts_with("_Z12get_local_id") ||
           name.starts_with("_Z12get_group_id") || name.starts_with("_Z14get_local_size") ||
           name.starts_with("_Z23get_enqueued_local_size") ||
           name.starts_with("_Z14get_num_groups") || name.starts_with("_Z15get_global_size") ||
           name.starts_with("_Z17get_global_offset") || name == "_Z12get_work_dimv" ||
           name == "_Z20get_global_linear_idv" || name == "_Z19get_local_linear_idv" ||
           name == "_Z7barrierj" || name.starts_with("_Z18work_group_barrier") ||
           name == "_Z18get_sub_group_sizev" || name == "_Z22get_max_sub_group_sizev" ||
           name == "_Z18get_num_sub_groupsv" || name == "_Z27get_enqueued_num_sub_groupsv" ||
           name == "_Z16get_sub_group_idv" || name == "_Z22get_sub_group_local_idv";
  }

  const char* missing_builtin_note() const override {
    return "(builtin not implemented by Manifold's CPU library)";
  }

  bool optimize(Build& build) override;

  bool emit(Build& build) override {
    ProgramBinary& program = build.program;
    program.bitcode = to_bitcode(build.module);
    dump_module_if_requested(build.module);
    // Machine code now, while the module is in memory: loading the binary (and every later
    // build served from the program cache) then only links it.
    program.cpu = resolved_cpu(target());
    program.features = target().features;
    return emit_code(build.module, machine(), CodeKind::Object, &program.object, &build.log);
  }
};

bool CpuPipeline::optimize(Build& build) {
  llvm::Module& module = build.module;
  std::vector<KernelInfo>& kernels = build.program.kernels;
  std::vector<KernelExec>& execs = build.program.execs;
  const Target& target = this->target();
  llvm::TargetMachine* machine = &this->machine();
  // Everything but the kernels is inlined into the kernels: barriers inside helper functions
  // then sit in the kernel's own control flow, where the work-group pass handles them.
  for (llvm::Function& function : module) {
    if (function.isDeclaration()) continue;
    function.removeFnAttr(llvm::Attribute::OptimizeNone);
    if (function.getName().starts_with(kOutlinedBuiltinPrefix)) {
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

  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  run_module_passes(
      module, machine,
      [](llvm::PassBuilder&, llvm::ModulePassManager& passes) {
        passes.addPass(llvm::AlwaysInlinerPass(/*InsertLifetime=*/false));
        passes.addPass(llvm::GlobalDCEPass());
        llvm::FunctionPassManager cleanup;
        cleanup.addPass(llvm::SROAPass(llvm::SROAOptions::ModifyCFG));
        cleanup.addPass(llvm::EarlyCSEPass(/*UseMemorySSA=*/false));
        cleanup.addPass(llvm::InstCombinePass());
        cleanup.addPass(llvm::SimplifyCFGPass());
        cleanup.addPass(llvm::SROAPass(llvm::SROAOptions::ModifyCFG));
        passes.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(cleanup)));
      },
      &tuning);

  guard_integer_division(module);

  // Kernels to run with denormals flushed, noted now: the work-group pass replaces them.
  std::vector<std::pair<size_t, llvm::Attribute>> flushing_kernels;
  if (llvm::Triple(target.triple).isX86()) {
    for (size_t i = 0; i < kernels.size(); ++i)
      if (const llvm::Function* kernel = module.getFunction(kernels[i].name);
          kernel && flushes_denormals(*kernel))
        flushing_kernels.emplace_back(i, kernel->getFnAttribute("denormal-fp-math-f32"));
  }

  // The vector width the vectorizers work with on this CPU (256 bits on AVX-512 machines
  // tuned to prefer 256-bit vectors): kernels whose own vectors are as wide run as written.
  unsigned vector_register_bits = 128;
  for (const KernelInfo& info : kernels)
    if (llvm::Function* kernel = module.getFunction(info.name)) {
      vector_register_bits = static_cast<unsigned>(
          machine->getTargetTransformInfo(*kernel)
              .getRegisterBitWidth(llvm::TargetTransformInfo::RGK_FixedWidthVector)
              .getFixedValue());
      break;
    }
  if (!build.options.opt_disable) {
    mark_step_loops_for_unrolling(module, kernels);
    run_module_passes(
        module, machine,
        [](llvm::PassBuilder&, llvm::ModulePassManager& passes) {
          llvm::FunctionPassManager unroll;
          unroll.addPass(
              llvm::LoopUnrollPass(llvm::LoopUnrollOptions(/*OptLevel=*/2, /*OnlyWhenForced=*/true,
                                                           /*ForgetSCEV=*/false)));
          passes.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(unroll)));
        },
        &tuning);
  }
  std::string error;
  const bool avx512 = target.features.find("+avx512f") != std::string::npos;
  const unsigned widest_register_bits = avx512 ? 512 : vector_register_bits;
  if (!form_work_group_functions(module, kernels, execs, vector_register_bits, widest_register_bits,
                                 std::max(target.sub_group_size, 1u), &error)) {
    build.log += error + "\n";
    return false;
  }
  for (const auto& [index, denormal_mode] : flushing_kernels)
    for (const std::string& symbol : {execs[index].entry_symbol, execs[index].item_loop_symbol})
      if (llvm::Function* entry = module.getFunction(symbol))
        flush_denormals_while_running(*entry, denormal_mode);
  add_sleef_vector_variants(module, target);
  // Only the work-group and item-loop functions are entry points.
  for (llvm::Function& function : module)
    if (!function.isDeclaration() && !function.getName().ends_with(".wg") &&
        !function.hasFnAttribute(kKeepVectorsAttribute))
      function.setLinkage(llvm::GlobalValue::InternalLinkage);
  const std::string cpu = resolved_cpu(target);
  for (llvm::Function& function : module) {
    if (function.isDeclaration()) continue;
    function.addFnAttr("target-cpu", cpu);
    if (!target.features.empty()) function.addFnAttr("target-features", target.features);
    // LLVM tunes AVX-512 server CPUs to vectorize 256 bits wide (older ones lowered their
    // clock for 512-bit code). A work-group function is throughput code on every core:
    // 512-bit vectors of work-items double the arithmetic per instruction, as a kernel's own
    // float16 values already get.
    if (avx512 && function.getName().ends_with(".wg"))
      function.addFnAttr("prefer-vector-width", "512");
  }
  const bool optimize = !build.options.opt_disable;
  if (optimize) {
    // OpenCL vector types (float3 positions, float4 pixels) would keep the loop vectorizer
    // off the work-item loops: it only widens scalars. Split them into scalars first; the
    // vectorizer then packs the same component of 16 work-items into one register (and SLP
    // re-packs what it leaves).
    run_module_passes(
        module, machine,
        [](llvm::PassBuilder&, llvm::ModulePassManager& passes) {
          llvm::ScalarizerPassOptions scalarize;
          scalarize.ScalarizeLoadStore = true;
          llvm::FunctionPassManager split;
          split.addPass(llvm::ScalarizerPass(scalarize));
          split.addPass(llvm::InstCombinePass());
          passes.addPass(
              llvm::createModuleToFunctionPassAdaptor(UnlessKeepingVectors(std::move(split))));
        },
        &tuning);
  }
  llvm::PassInstrumentationCallbacks instrumentation;
  instrumentation.registerShouldRunOptionalPassCallback([](llvm::StringRef pass, llvm::Any ir) {
    if (pass != llvm::SLPVectorizerPass::name()) return true;
    const llvm::Function* const* function = llvm::any_cast<const llvm::Function*>(&ir);
    return !function || !skips_slp_vectorizer(**function);
  });
  run_module_passes(
      module, machine,
      [optimize](llvm::PassBuilder& builder, llvm::ModulePassManager& passes) {
        // O2, not O3: O3's non-trivial loop unswitching copies whole work-item loop nests
        // for every invariant condition (compile time and code size, little speed).
        passes = builder.buildPerModuleDefaultPipeline(optimize ? llvm::OptimizationLevel::O2
                                                                : llvm::OptimizationLevel::O1);
      },
      &tuning, &instrumentation);
  make_local_atomics_plain(module, kCpuLocalAddressSpace);
  return true;
}

}  // namespace

std::unique_ptr<TargetPipeline> make_cpu_pipeline(const Target& target) {
  initialize_llvm();
  return std::make_unique<CpuPipeline>(target);
}

Target host_cpu_target() {
  Target target;
  target.triple = llvm::sys::getProcessTriple();
  target.cpu = llvm::sys::getHostCPUName().str();
  std::string features;
  for (const auto& feature : llvm::sys::getHostCPUFeatures()) {
    if (!features.empty()) features += ',';
    // Appended piece by piece: GCC 12's -Wrestrict misreads `"+" + str` in Release builds.
    features += feature.second ? '+' : '-';
    features.append(feature.first().data(), feature.first().size());
  }
  // Half arithmetic in float lanes (F16C converts), never AVX512-FP16's: LLVM 22 lowers
  // llrint/lrint of half, which it also makes of fptosi/fptoui of rint, to the truncating
  // vcvttsh2si (convert_uchar3_rte(half3) of 0.50049 gave 0). Last, so that it also turns off
  // what implies it (AVX10.1).
  features += ",-avx512fp16";
  // A sub-group is one vector of 32-bit work-items, what the work-group pass vectorizes across
  // (the device's preferred work-group size multiple).
  target.sub_group_size =
      features.find("+avx512f") != std::string::npos ? 16
      : features.find("+avx2") != std::string::npos || features.find("+avx,") != std::string::npos
          ? 8
          : 4;
  target.features = std::move(features);
  target.opencl_c_version = 300;
  target.opencl_c_features = {
      "__opencl_c_generic_address_space",
      "__opencl_c_program_scope_global_variables",
      "__opencl_c_atomic_order_acq_rel",
      "__opencl_c_atomic_order_seq_cst",
      "__opencl_c_atomic_scope_device",
      "__opencl_c_atomic_scope_all_devices",
      "__opencl_c_int64",
      "__opencl_c_fp64",
      // Half: compiler/builtins/half.cl (in float, rounded once; F16C converts).
      "__opencl_c_fp16",
      "__opencl_c_work_group_collective_functions",
      // Images: compiler/builtins/image.cl over the descriptors of compiler/image_abi.h.
      "__opencl_c_images",
      "__opencl_c_read_write_images",
      "__opencl_c_3d_image_writes",
      // Sub-groups: compiler/builtins/subgroups.cl over the work-group pass's sub-group mode.
      "__opencl_c_subgroups",
  };
  target.extensions = {
      "cl_khr_byte_addressable_store",    "cl_khr_fp64",
      "cl_khr_global_int32_base_atomics", "cl_khr_global_int32_extended_atomics",
      "cl_khr_local_int32_base_atomics",  "cl_khr_local_int32_extended_atomics",
      "cl_khr_int64_base_atomics",        "cl_khr_int64_extended_atomics",
      "cl_khr_3d_image_writes",
  };
  target.extensions.push_back("cl_khr_fp16");
  // The sub-group extensions, over __opencl_c_subgroups. No cl_khr_subgroups: it requires
  // independent forward progress of sub-groups, which the CPU, running a group's sub-groups in
  // turn on one thread, does not give.
  for (const char* extension :
       {"cl_khr_subgroup_extended_types", "cl_khr_subgroup_non_uniform_vote",
        "cl_khr_subgroup_ballot", "cl_khr_subgroup_non_uniform_arithmetic",
        "cl_khr_subgroup_shuffle", "cl_khr_subgroup_shuffle_relative",
        "cl_khr_subgroup_clustered_reduce"})
    target.extensions.push_back(extension);
  target.fp64 = true;
  target.fp16 = true;
  target.images = true;
  target.spirv = true;
  return target;
}

}  // namespace manifold::compiler
