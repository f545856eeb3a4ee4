// OpenCL C for Level Zero devices: clang's spirv64 IR, plus Manifold's shim for what LLVM's
// SPIR-V backend leaves unresolved (compiler/spirv_target/shim.cl), optimized and emitted as
// SPIR-V 1.2 by LLVM's SPIR-V backend. Every module is validated with SPIRV-Tools and checked
// against the capabilities the Level Zero spec allows for OpenCL kernels before it becomes a
// binary: the driver compiles it at zeModuleCreate.
#include <llvm/IR/DataLayout.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassManager.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Transforms/Scalar/DCE.h>
#include <llvm/Transforms/Scalar/Scalarizer.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <set>

#include "compiler/binary_format.h"
#include "compiler/spirv/module.h"
#include "compiler/spirv_capabilities.h"
#include "compiler/spirv_codegen.h"
#include "compiler/stages.h"
#include "compiler/target_pipeline.h"

// Compiled at build time (compiler/spirv_target/spirv_target.cmake).
extern "C" {
extern const char manifold_spirv_shim_bitcode[];
extern const uint64_t manifold_spirv_shim_bitcode_size;
}

namespace manifold::compiler {
namespace {

void initialize_spirv() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeSPIRVTargetInfo();
    LLVMInitializeSPIRVTarget();
    LLVMInitializeSPIRVTargetMC();
    LLVMInitializeSPIRVAsmPrinter();
  });
}

// LLVM's SPIR-V backend types a call's pointer operands from the callee's mangled name. Called
// as the plain C `printf`, the format goes out as a pointer to the string's array, which
// OpenCL.std printf forbids; as SPIR's `printf(constant char*, ...)` the backend casts it to a
// pointer to i8. Done after the optimizer, which leaves the call alone under either name.
// Arguments printed with %s keep their array type: OpenCL.std printf allows it and drivers
// find the string through the variable.
void give_printf_its_spir_name(llvm::Module& module) {
  static constexpr const char* kSpirPrintf = "_Z6printfPU3AS2Kcz";
  llvm::Function* printf = module.getFunction("printf");
  if (!printf) return;
  if (llvm::Function* existing = module.getFunction(kSpirPrintf)) {
    printf->replaceAllUsesWith(existing);
    printf->eraseFromParent();
    return;
  }
  printf->setName(kSpirPrintf);
}

// The bytes of the __local variables each kernel uses (CL_KERNEL_LOCAL_MEM_SIZE): every helper
// is inlined into the kernels by now, so a kernel's own instructions name them all.
void record_static_local_memory(llvm::Module& module, std::vector<KernelInfo>& kernels) {
  constexpr unsigned kLocalAddressSpace = 3;
  const llvm::DataLayout& layout = module.getDataLayout();
  std::map<const llvm::Function*, uint64_t> bytes;
  for (const llvm::GlobalVariable& g : module.globals()) {
    if (g.getAddressSpace() != kLocalAddressSpace) continue;
    std::set<const llvm::Function*> users_of_g;
    std::vector<const llvm::User*> users(g.user_begin(), g.user_end());
    while (!users.empty()) {
      const llvm::User* u = users.back();
      users.pop_back();
      if (const auto* inst = llvm::dyn_cast<llvm::Instruction>(u))
        users_of_g.insert(inst->getFunction());
      else  // a constant expression
        users.insert(users.end(), u->user_begin(), u->user_end());
    }
    for (const llvm::Function* f : users_of_g)
      bytes[f] += layout.getTypeAllocSize(g.getValueType()).getFixedValue();
  }
  for (KernelInfo& k : kernels)
    if (const llvm::Function* f = module.getFunction(k.name)) k.local_mem_size = bytes[f];
}

// SPIR-V vectors have 2, 3, 4, 8 or 16 components; LLVM's optimizer makes others (a char8's
// even elements picked through a <7 x i8> shuffle), which the SPIR-V backend emits as they are.
bool has_illegal_vectors(const llvm::Module& module) {
  auto illegal = [](const llvm::Type* t) {
    const auto* v = llvm::dyn_cast<llvm::FixedVectorType>(t);
    if (!v) return false;
    const unsigned n = v->getNumElements();
    return n != 2 && n != 3 && n != 4 && n != 8 && n != 16;
  };
  for (const llvm::Function& f : module)
    for (const llvm::BasicBlock& block : f)
      for (const llvm::Instruction& inst : block) {
        if (illegal(inst.getType())) return true;
        for (const llvm::Value* operand : inst.operands())
          if (illegal(operand->getType())) return true;
      }
  return false;
}

// Scalarizes the modules that have such vectors (Intel's compiler runs vector code per lane
// anyway); false with a message where some remain.
bool legalize_vector_widths(llvm::Module& module, llvm::TargetMachine& machine, std::string* log) {
  if (!has_illegal_vectors(module)) return true;
  run_module_passes(module, &machine, [](llvm::PassBuilder&, llvm::ModulePassManager& passes) {
    llvm::ScalarizerPassOptions options;
    options.ScalarizeLoadStore = true;
    llvm::FunctionPassManager functions;
    functions.addPass(llvm::ScalarizerPass(options));
    functions.addPass(llvm::DCEPass());
    passes.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(functions)));
  });
  if (!has_illegal_vectors(module)) return true;
  *log += "error: the kernel uses vectors of a length SPIR-V has no type for\n";
  return false;
}

class SpirvPipeline final : public TargetPipeline {
 public:
  explicit SpirvPipeline(const Target& target) : TargetPipeline(target, CodeDestination::Driver) {}

 private:
  // Kernels take __local arguments as Workgroup pointers: the driver lays them out.
  bool lower(Build&) override { return true; }

  bool link_builtins(Build& build) override {
    return link_lazily(build.module,
                       llvm::MemoryBufferRef(llvm::StringRef(manifold_spirv_shim_bitcode,
                                                             manifold_spirv_shim_bitcode_size),
                                             "spirv shim"),
                       &build.log);
  }

  // OpenCL builtins (mangled names, printf) and SPIR-V instructions written as __spirv_* calls
  // become instructions in the backend; what it cannot lower stays an import, which emit
  // reports. Any other undefined function is the program's own error.
  bool resolved_later(const llvm::Function& function) const override {
    const llvm::StringRef name = function.getName();
    return name.starts_with("_Z") || name.starts_with("__spirv_") || name == "printf";
  }

  bool optimize(Build& build) override {
    llvm::Module& module = build.module;
    std::set<std::string> kernel_names;
    for (const KernelInfo& k : build.program.kernels) kernel_names.insert(k.name);
    // Everything is inlined into the kernels: the SPIR-V backend mistypes some values passed
    // between functions (printf's constant format string when a shim function exists), and
    // drivers inline anyway.
    for (llvm::Function& f : module) {
      if (f.isDeclaration()) continue;
      if (kernel_names.count(f.getName().str())) {
        f.setLinkage(llvm::GlobalValue::ExternalLinkage);
        continue;
      }
      f.setLinkage(llvm::GlobalValue::InternalLinkage);
      f.removeFnAttr(llvm::Attribute::NoInline);
      f.removeFnAttr(llvm::Attribute::OptimizeNone);
      f.addFnAttr(llvm::Attribute::AlwaysInline);
    }
    for (llvm::GlobalVariable& g : module.globals())
      if (!g.isDeclaration() && g.hasName() && !g.getName().starts_with("llvm."))
        g.setLinkage(llvm::GlobalValue::InternalLinkage);
    const llvm::OptimizationLevel level =
        build.options.opt_disable ? llvm::OptimizationLevel::O1 : llvm::OptimizationLevel::O2;
    run_module_passes(module, &machine(),
                      [level](llvm::PassBuilder& builder, llvm::ModulePassManager& passes) {
                        passes = builder.buildPerModuleDefaultPipeline(level);
                      });
    dump_module_if_requested(module);
    if (!verify(module, "SPIR-V", &build.log)) return false;
    record_static_local_memory(module, build.program.kernels);
    return true;
  }

  bool emit(Build& build) override {
    ProgramBinary& program = build.program;
    std::vector<uint8_t> code;
    if (!legalize_vector_widths(build.module, machine(), &build.log)) return false;
    give_printf_its_spir_name(build.module);
    if (!emit_spirv(build.module, machine(), &code, &build.log)) return false;
    declare_float16_buffer_only(code, target());
    // The emitted module is checked as any application's SPIR-V would be, so that a backend
    // defect becomes a build error rather than a driver's crash.
    std::string why;
    if (!check_emitted_spirv(code, target(), &why)) {
      build.log += "error: SPIR-V for the device: " + why + "\n";
      return false;
    }
    program.object = std::move(code);
    program.execs.clear();
    for (const KernelInfo& k : program.kernels) {
      KernelExec e;
      e.entry_symbol = k.name;
      program.execs.push_back(e);
    }
    return true;
  }
};

}  // namespace

Target spirv_target(const SpirvDeviceFeatures& device) {
  Target t;
  // SPIR-V 1.2: what OpenCL 2.2's environment consumes (plain spirv64 would emit 1.4).
  t.triple = "spirv64v1.2-unknown-unknown";
  t.cpu = "generic";
  t.opencl_c_version = 300;
  // What LLVM's SPIR-V backend lowers and the Level Zero spec requires of every device.
  t.opencl_c_features = {
      "__opencl_c_int64",
      "__opencl_c_generic_address_space",
      "__opencl_c_program_scope_global_variables",
      "__opencl_c_atomic_order_acq_rel",
      "__opencl_c_atomic_order_seq_cst",
      "__opencl_c_atomic_scope_device",
      "__opencl_c_atomic_scope_all_devices",
  };
  t.extensions = {
      "cl_khr_byte_addressable_store",        "cl_khr_global_int32_base_atomics",
      "cl_khr_global_int32_extended_atomics", "cl_khr_local_int32_base_atomics",
      "cl_khr_local_int32_extended_atomics",
  };
  if (device.fp64) {
    t.opencl_c_features.push_back("__opencl_c_fp64");
    t.extensions.push_back("cl_khr_fp64");
  }
  if (device.fp16) t.extensions.push_back("cl_khr_fp16");
  if (device.int64_atomics) {
    t.extensions.push_back("cl_khr_int64_base_atomics");
    t.extensions.push_back("cl_khr_int64_extended_atomics");
  }
  t.fp64 = device.fp64;
  t.fp16 = device.fp16;
  t.images = false;  // image builtins are not lowered yet
  t.spirv = true;
  return t;
}

std::unique_ptr<TargetPipeline> make_spirv_pipeline(const Target& target) {
  initialize_spirv();
  return std::make_unique<SpirvPipeline>(target);
}

std::optional<std::vector<uint8_t>> spirv_module_of(std::span<const uint8_t> binary,
                                                    std::string* error) {
  std::optional<ProgramBinary> program =
      deserialize_executable(binary, "spirv", "a SPIR-V executable", error);
  if (!program) return std::nullopt;
  return std::move(program->object);
}

}  // namespace manifold::compiler
