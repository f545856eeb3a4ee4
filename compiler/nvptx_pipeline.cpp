// OpenCL C on NVIDIA GPUs: clang's nvptx64 IR, plus Manifold's shim, libclc's nvptx library and
// CUDA's libdevice (each linked lazily: only the functions a program reaches are read), optimized
// with the NVPTX target's own pipeline (NVVMReflect included) and printed as PTX. The CUDA
// driver JIT-compiles the PTX for the exact GPU at load time.
#include <llvm/ADT/StringExtras.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InstIterator.h>
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
#include <llvm/Transforms/Scalar/InferAddressSpaces.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <set>

#include "compiler/nvptx_address_spaces.h"
#include "compiler/nvptx_atomics.h"
#include "compiler/nvptx_math.h"
#include "compiler/nvptx_narrow_integers.h"
#include "compiler/nvptx_printf.h"
#include "compiler/nvptx_unroll.h"
#include "compiler/nvptx_warp_atomics.h"
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
  for (llvm::Function& f : module) narrow_index_arithmetic(f);
  for (const KernelInfo& k : kernels)
    if (llvm::Function* f = module.getFunction(k.name)) retype_constant_arguments(*f, &build.log);
  // The ordered atoms name their address space, which the optimizer left generic where the
  // backend would have inferred it only while generating code.
  const auto ordered_rmw = [](const llvm::Instruction& i) {
    const auto* rmw = llvm::dyn_cast<llvm::AtomicRMWInst>(&i);
    return rmw && llvm::isStrongerThanMonotonic(rmw->getOrdering());
  };
  if (std::any_of(module.begin(), module.end(), [&](const llvm::Function& f) {
        return std::any_of(llvm::inst_begin(f), llvm::inst_end(f), ordered_rmw);
      }))
    run_module_passes(module, &machine(), [](llvm::PassBuilder&, llvm::ModulePassManager& passes) {
      passes.addPass(llvm::createModuleToFunctionPassAdaptor(llvm::InferAddressSpacesPass()));
    });
  aggregate_warp_atomics(module);
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
