// OpenCL C on AMD GPUs: clang's amdgcn IR, plus Manifold's shim and portable builtins and
// libclc's amdgcn library (each linked lazily), optimized with the AMDGPU target's pipeline,
// compiled to an object for the device's gfx processor and linked by lld (in-process) into a
// code object v5, which the HIP runtime loads (hipModuleLoadData). The launch ABI is
// compiler/gpu_launch_abi.h's; kernels take no hidden arguments.
#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassManager.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/TargetParser.h>
#include <llvm/TargetParser/Triple.h>

#include <mutex>
#include <set>

#include "compiler/amdgpu/code_object_link.h"
#include "compiler/gpu_launch_abi.h"
#include "compiler/stages.h"
#include "compiler/target_pipeline.h"

// Bitcode embedded at build time (compiler/amdgpu/amdgpu.cmake): the shim and the portable
// builtins always; libclc's amdgcn library when it was found then (else read from disk).
extern "C" {
extern const char manifold_amdgpu_shim_bitcode[];
extern const uint64_t manifold_amdgpu_shim_bitcode_size;
extern const char manifold_amdgpu_portable_bitcode[];
extern const uint64_t manifold_amdgpu_portable_bitcode_size;
// Embedded, libclc is split into parts with a symbol index (compiler/amdgpu/amdgpu.cmake).
extern const char manifold_amdgpu_libclc_bitcode[];
extern const uint64_t manifold_amdgpu_libclc_bitcode_size;
extern const char manifold_amdgpu_libclc_index[];
extern const uint64_t manifold_amdgpu_libclc_index_size;
}

namespace manifold::compiler {
namespace {

constexpr unsigned kLocalAS = 3;
constexpr const char* kTriple = "amdgcn-amd-amdhsa";
// Code object v5: what ROCm 5.x and later load; every input (shim, portable builtins, libclc)
// is compiled for it or carries no version.
constexpr unsigned kCodeObjectVersion = 500;

void initialize_amdgpu() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTarget();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUAsmPrinter();
  });
}

// The most work-items a group of `kernel` may have: clang's amdgpu-flat-work-group-size
// ("min,max"; OpenCL kernels default to 256, reqd_work_group_size gives its product), which
// register allocation assumes.
size_t flat_work_group_limit(const llvm::Function& kernel) {
  const llvm::Attribute attribute = kernel.getFnAttribute("amdgpu-flat-work-group-size");
  if (!attribute.isStringAttribute()) return 0;
  const auto [low, high] = attribute.getValueAsString().split(',');
  size_t limit = 0;
  return high.getAsInteger(10, limit) ? 0 : limit;
}

class AmdgpuPipeline final : public TargetPipeline {
 public:
  explicit AmdgpuPipeline(const Target& target) : TargetPipeline(target, CodeDestination::Driver) {}

 private:
  bool lower(Build& build) override {
    llvm::Module& module = build.module;
    module.setTargetTriple(llvm::Triple(target().triple));
    module.setDataLayout(machine().createDataLayout());
    module.setModuleFlag(llvm::Module::Error, "amdhsa_code_object_version", kCodeObjectVersion);
    if (llvm::Function* printf = module.getFunction("printf"); printf && !printf->use_empty()) {
      build.log +=
          "error: printf is not supported on AMD GPUs by Manifold yet (the kernel calls it)\n";
      return false;
    }
    rewrite_local_arguments(module, build.program.kernels, kLocalAS);
    return true;
  }

  bool link_builtins(Build& build) override {
    llvm::Module& module = build.module;
    std::string* log = &build.log;
    const llvm::MemoryBufferRef shim(
        llvm::StringRef(manifold_amdgpu_shim_bitcode, manifold_amdgpu_shim_bitcode_size),
        "amdgpu shim");
    const llvm::MemoryBufferRef portable(
        llvm::StringRef(manifold_amdgpu_portable_bitcode, manifold_amdgpu_portable_bitcode_size),
        "amdgpu portable builtins");
    if (!link_lazily(module, shim, log) || !link_lazily(module, portable, log)) return false;
    const llvm::MemoryBufferRef libclc =
        library_bytes(manifold_amdgpu_libclc_bitcode, manifold_amdgpu_libclc_bitcode_size,
                      "libclc amdgcn-amd-amdhsa.bc",
                      {"/usr/lib/clc/amdgcn-amd-amdhsa.bc", "/usr/share/clc/amdgcn-amd-amdhsa.bc"});
    if (!libclc.getBufferSize()) {
      *log += "error: libclc's amdgcn-amd-amdhsa.bc was not found\n";
      return false;
    }
    if (manifold_amdgpu_libclc_index_size) {
      static const SplitLibrary split_libclc(
          libclc,
          std::string_view(manifold_amdgpu_libclc_index, manifold_amdgpu_libclc_index_size));
      return split_libclc.link_into(module, log);
    }
    return link_lazily(module, libclc, log);
  }

  bool resolved_later(const llvm::Function&) const override { return false; }

  const char* missing_builtin_note() const override {
    return "(a builtin neither libclc's amdgcn library nor Manifold's AMDGPU shim defines)";
  }

  bool optimize(Build& build) override;
  bool emit(Build& build) override;
};

bool AmdgpuPipeline::optimize(Build& build) {
  llvm::Module& module = build.module;
  std::set<std::string> kernel_names;
  for (const KernelInfo& k : build.program.kernels) kernel_names.insert(k.name);
  for (llvm::Function& f : module) {
    if (f.isDeclaration()) continue;
    if (kernel_names.count(f.getName().str())) {
      f.setCallingConv(llvm::CallingConv::AMDGPU_KERNEL);
      f.setLinkage(llvm::GlobalValue::ExternalLinkage);
      // Exported from the code object without being preemptible (the loader finds <name>.kd).
      f.setVisibility(llvm::GlobalValue::ProtectedVisibility);
    } else {
      f.setLinkage(llvm::GlobalValue::InternalLinkage);
      f.removeFnAttr(llvm::Attribute::NoInline);
      f.removeFnAttr(llvm::Attribute::OptimizeNone);
      f.addFnAttr(llvm::Attribute::AlwaysInline);  // calls are costly on a GPU
    }
  }
  for (llvm::GlobalVariable& g : module.globals()) {
    if (g.isDeclaration() || g.getName() == kLaunchStateSymbol) continue;
    if (g.hasName() && !g.getName().starts_with("llvm."))
      g.setLinkage(llvm::GlobalValue::InternalLinkage);
  }
  if (llvm::GlobalVariable* launch = module.getGlobalVariable(kLaunchStateSymbol)) {
    if (launch->isDeclaration()) {  // the shim only declares it
      // GpuLaunchState's defaults: zero but work_dim (1).
      auto* type = llvm::cast<llvm::StructType>(launch->getValueType());
      std::vector<llvm::Constant*> fields;
      for (unsigned i = 0; i < type->getNumElements(); ++i)
        fields.push_back(llvm::Constant::getNullValue(type->getElementType(i)));
      fields[1] = llvm::ConstantInt::get(type->getElementType(1), 1);
      launch->setInitializer(llvm::ConstantStruct::get(type, fields));
      launch->setConstant(true);
    }
    launch->setLinkage(llvm::GlobalValue::ExternalLinkage);
    launch->setVisibility(llvm::GlobalValue::ProtectedVisibility);
    launch->setExternallyInitialized(true);  // the host writes it: never fold its value
  }
  const llvm::OptimizationLevel level =
      build.options.opt_disable ? llvm::OptimizationLevel::O1 : llvm::OptimizationLevel::O3;
  run_module_passes(module, &machine(),
                    [level](llvm::PassBuilder& builder, llvm::ModulePassManager& passes) {
                      passes = builder.buildPerModuleDefaultPipeline(level);
                    });
  dump_module_if_requested(module);
  return verify(module, "AMDGPU", &build.log);
}

bool AmdgpuPipeline::emit(Build& build) {
  ProgramBinary& program = build.program;
  const uint64_t static_local = static_local_bytes(build.module, kLocalAS);
  for (KernelInfo& k : program.kernels)
    if (const llvm::Function* f = build.module.getFunction(k.name))
      k.max_work_group_size = flat_work_group_limit(*f);
  std::vector<uint8_t> object;
  if (!emit_code(build.module, machine(), CodeKind::Object, &object, &build.log)) return false;
  if (!link_code_object(object, &program.object, &build.log)) return false;
  program.cpu = target().cpu;
  program.features = target().features;
  program.execs.clear();
  for (const KernelInfo& k : program.kernels) {
    KernelExec e;
    e.entry_symbol = k.name;
    e.static_local_size = static_local;
    program.execs.push_back(e);
  }
  return true;
}

}  // namespace

std::optional<Target> amdgpu_target(std::string_view gcn_arch_name) {
  // "gfx90a:sramecc+:xnack-": the processor, then target features the code object must match.
  llvm::SmallVector<llvm::StringRef, 4> parts;
  llvm::StringRef(gcn_arch_name.data(), gcn_arch_name.size()).split(parts, ':');
  const llvm::AMDGPU::GPUKind kind = llvm::AMDGPU::parseArchAMDGCN(parts[0]);
  if (kind == llvm::AMDGPU::GK_NONE) return std::nullopt;
  Target t;
  t.triple = kTriple;
  t.cpu = llvm::AMDGPU::getArchNameAMDGCN(kind).str();
  std::string features;
  for (size_t i = 1; i < parts.size(); ++i) {
    const llvm::StringRef part = parts[i];
    if (part.size() < 2 || (part.back() != '+' && part.back() != '-') ||
        (part.drop_back() != "xnack" && part.drop_back() != "sramecc"))
      return std::nullopt;
    features += std::string(1, part.back()) + part.drop_back().str() + ",";
  }
  // Wave32 where the processor has it (gfx10 and later), as HIP compiles for them; wave64 on
  // the others. Said explicitly, so that the code object's metadata does not depend on LLVM's
  // default.
  const bool wave32 = llvm::AMDGPU::getArchAttrAMDGCN(kind) & llvm::AMDGPU::FEATURE_WAVE32;
  features += wave32 ? "+wavefrontsize32" : "+wavefrontsize64";
  t.features = features;
  t.opencl_c_version = 300;
  // AMD GPUs order atomics up to seq_cst at device (agent) scope natively; the portable
  // builtins implement every order and scope. The device reports the same atomic capabilities.
  t.opencl_c_features = {"__opencl_c_int64", "__opencl_c_fp64", "__opencl_c_atomic_order_acq_rel",
                         "__opencl_c_atomic_order_seq_cst", "__opencl_c_atomic_scope_device"};
  t.extensions = {
      "cl_khr_byte_addressable_store",    "cl_khr_fp64",
      "cl_khr_global_int32_base_atomics", "cl_khr_global_int32_extended_atomics",
      "cl_khr_local_int32_base_atomics",  "cl_khr_local_int32_extended_atomics",
      "cl_khr_int64_base_atomics",        "cl_khr_int64_extended_atomics",
  };
  t.fp64 = true;
  t.fp16 = false;
  t.images = false;
  t.spirv = true;  // the SPIR-V reader's IR takes this pipeline like clang's
  return t;
}

std::unique_ptr<TargetPipeline> make_amdgpu_pipeline(const Target& target) {
  initialize_amdgpu();
  return std::make_unique<AmdgpuPipeline>(target);
}

std::optional<std::vector<uint8_t>> amdgpu_code_object_of(std::span<const uint8_t> binary,
                                                          std::string* error) {
  std::optional<ProgramBinary> program =
      deserialize_executable(binary, kTriple, "an AMDGPU executable", error);
  if (!program) return std::nullopt;
  return std::move(program->object);
}

}  // namespace manifold::compiler
