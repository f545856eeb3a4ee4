#include "compiler/stages.h"

#include <llvm/ADT/StringMap.h>
#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/Bitcode/BitcodeWriter.h>
#include <llvm/Demangle/Demangle.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
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

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <set>

#include "compiler/gpu_launch_abi.h"
#include "compiler/llvm_signals.h"
#include "settings/settings.h"

namespace manifold::compiler {

void initialize_llvm() {
  static std::once_flag once;
  std::call_once(once, [] {
    keep_llvm_signal_handling_out();
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
  });
}

std::string resolved_cpu(const Target& target) {
  return target.cpu.empty() ? llvm::sys::getHostCPUName().str() : target.cpu;
}

std::unique_ptr<llvm::TargetMachine> make_target_machine(const Target& target,
                                                         CodeDestination destination) {
  initialize_llvm();
  std::string error;
  const llvm::Triple triple(target.triple);
  const llvm::Target* llvm_target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!llvm_target) return nullptr;
  llvm::TargetOptions options;
  if (destination == CodeDestination::HostJit)
    return std::unique_ptr<llvm::TargetMachine>(llvm_target->createTargetMachine(
        triple, resolved_cpu(target), target.features, options, llvm::Reloc::PIC_,
        // Small code model: JITLink keeps a program's sections together and reaches host
        // functions through stubs, so calls and constants need no 64-bit absolute addresses.
        llvm::CodeModel::Small, llvm::CodeGenOptLevel::Aggressive, /*JIT=*/true));
  return std::unique_ptr<llvm::TargetMachine>(llvm_target->createTargetMachine(
      triple, resolved_cpu(target), target.features, options, std::nullopt, std::nullopt,
      llvm::CodeGenOptLevel::Aggressive));
}

llvm::TargetMachine* thread_target_machine(const Target& target, CodeDestination destination) {
  thread_local std::map<std::string, std::unique_ptr<llvm::TargetMachine>> cache;
  const std::string key = target.triple + "|" + resolved_cpu(target) + "|" + target.features +
                          (destination == CodeDestination::HostJit ? "|jit" : "");
  auto it = cache.find(key);
  if (it != cache.end()) return it->second.get();
  std::unique_ptr<llvm::TargetMachine> machine = make_target_machine(target, destination);
  if (!machine) return nullptr;
  return cache.emplace(key, std::move(machine)).first->second.get();
}

// ---- Builtin libraries ----

bool link_lazily(llvm::Module& module, const llvm::MemoryBufferRef& library, std::string* log) {
  auto lazy = llvm::getLazyBitcodeModule(library, module.getContext());
  if (!lazy) {
    *log += "error: cannot read " + library.getBufferIdentifier().str() + ": " +
            llvm::toString(lazy.takeError()) + "\n";
    return false;
  }
  (*lazy)->setTargetTriple(module.getTargetTriple());
  (*lazy)->setDataLayout(module.getDataLayout());
  if (llvm::Linker::linkModules(module, std::move(*lazy), llvm::Linker::LinkOnlyNeeded)) {
    *log += "error: linking " + library.getBufferIdentifier().str() + " failed\n";
    return false;
  }
  return true;
}

// A library's bitcode: embedded, else the file at `path` (read once per process).
llvm::MemoryBufferRef library_bytes(const char* embedded, uint64_t size, const char* name,
                                    const std::vector<std::string>& paths) {
  if (size) return llvm::MemoryBufferRef(llvm::StringRef(embedded, size), name);
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<llvm::MemoryBuffer>> loaded;
  std::lock_guard lock(mutex);
  auto& slot = loaded[name];
  if (!slot)
    for (const std::string& path : paths) {
      auto file = llvm::MemoryBuffer::getFile(path);
      if (file) {
        slot = std::move(*file);
        break;
      }
    }
  if (!slot) return llvm::MemoryBufferRef();
  return slot->getMemBufferRef();
}

// Read once per library; afterwards only the parts a program needs are parsed, lazily, into
// its context.
class SplitLibrary::Parts {
 public:
  Parts(const llvm::MemoryBufferRef& bitcode, std::string_view symbol_index) {
    auto parts = llvm::getBitcodeModuleList(bitcode);
    if (!parts) {
      error = llvm::toString(parts.takeError());
      return;
    }
    modules = std::move(*parts);
    index_given = read_index(symbol_index);
    if (!index_given) index_by_parsing();
  }
  llvm::Expected<std::unique_ptr<llvm::Module>> load(unsigned part,
                                                     llvm::LLVMContext& context) const {
    // A copy per call: BitcodeModule is a small view, and the copy keeps threads apart.
    llvm::BitcodeModule view = modules[part];
    return view.getLazyModule(context, /*ShouldLazyLoadMetadata=*/true, /*IsImporting=*/false);
  }
  std::optional<unsigned> part_defining(llvm::StringRef symbol) const {
    auto it = index.find(symbol);
    if (it == index.end()) return std::nullopt;
    return it->second;
  }

  std::vector<llvm::BitcodeModule> modules;
  llvm::StringMap<unsigned> index;
  bool index_given = false;
  std::string error;

 private:
  // The build-time index: one line per part. False (and no entries) when it does not fit the
  // bitcode, which then gets indexed by parsing.
  bool read_index(std::string_view text) {
    if (text.empty()) return false;
    // Exactly one newline ends each line; a part defining no exported symbol has an empty one.
    llvm::StringRef all(text.data(), text.size());
    all.consume_back("\n");
    llvm::SmallVector<llvm::StringRef, 0> lines;
    all.split(lines, '\n');
    if (lines.size() != modules.size()) return false;
    for (unsigned part = 0; part < lines.size(); ++part) {
      llvm::StringRef rest = lines[part];
      while (!rest.empty()) {
        auto [symbol, tail] = rest.split(' ');
        if (!symbol.empty()) index[symbol] = part;
        rest = tail;
      }
    }
    return true;
  }
  void index_by_parsing() {
    index.clear();
    llvm::LLVMContext scratch;
    for (unsigned part = 0; part < modules.size(); ++part) {
      auto module = load(part, scratch);
      if (!module) {
        error = llvm::toString(module.takeError());
        return;
      }
      for (const llvm::GlobalValue& value : (*module)->global_values())
        if (!value.isDeclaration() && !value.hasLocalLinkage()) index[value.getName()] = part;
    }
  }
};

SplitLibrary::SplitLibrary(const llvm::MemoryBufferRef& bitcode, std::string_view symbol_index)
    : parts_(std::make_unique<Parts>(bitcode, symbol_index)) {}
SplitLibrary::~SplitLibrary() = default;

std::vector<std::pair<std::string, unsigned>> SplitLibrary::symbol_index() const {
  std::vector<std::pair<std::string, unsigned>> entries;
  entries.reserve(parts_->index.size());
  for (const auto& entry : parts_->index) entries.emplace_back(entry.getKey().str(), entry.second);
  std::sort(entries.begin(), entries.end());
  return entries;
}

bool SplitLibrary::index_was_given() const { return parts_->index_given; }

const std::string& SplitLibrary::error() const { return parts_->error; }

namespace {

// A program's declaration of a library function whose signature differs from the library's
// definition: clang passed a vector argument the way the program's CPU does (an AVX register)
// while the library, compiled for the baseline ABI, takes it in memory (byval).
struct AbiMismatch {
  llvm::Function* declaration;  // renamed out of the way before linking
  std::string name;             // the library's function, linked under this name
};

// Renames the program's declarations that `part` defines with another signature, so that the
// part links beside them; define_abi_adapters then gives each a body calling the library.
std::vector<AbiMismatch> set_aside_abi_mismatches(llvm::Module& module, const llvm::Module& part) {
  std::vector<AbiMismatch> mismatches;
  for (llvm::Function& function : module) {
    if (!function.isDeclaration() || function.isIntrinsic() || function.use_empty()) continue;
    const llvm::Function* definition = part.getFunction(function.getName());
    if (!definition || definition->isDeclaration() ||
        definition->getFunctionType() == function.getFunctionType())
      continue;
    std::string name = function.getName().str();
    function.setName(name + ".abi");
    // A declaration under the library's name and signature: the linker then brings the
    // definition in (it links only what the module declares).
    llvm::Function::Create(definition->getFunctionType(), llvm::GlobalValue::ExternalLinkage, name,
                           module);
    mismatches.push_back({&function, std::move(name)});
  }
  return mismatches;
}

// The adapter: arguments the library takes byval are stored to a temporary and passed by
// address, the rest as they are. Inlined into every caller, so no memory traffic remains.
bool define_abi_adapters(llvm::Module& module, const std::vector<AbiMismatch>& mismatches,
                         std::string* log) {
  for (const AbiMismatch& mismatch : mismatches) {
    llvm::Function* adapter = mismatch.declaration;
    llvm::Function* library = module.getFunction(mismatch.name);
    auto fail = [&] {
      *log += "internal error: the builtin library's " + mismatch.name +
              " has a calling convention the program cannot be adapted to\n";
      return false;
    };
    // Values of the same size in other types: a small vector clang coerced to an integer or a
    // double for the baseline ABI (char4 as i32), which a program from SPIR-V passes as it is.
    const llvm::DataLayout& layout = module.getDataLayout();
    const auto same_bits = [&](llvm::Type* a, llvm::Type* b) {
      return a->isSingleValueType() && b->isSingleValueType() && !a->isPointerTy() &&
             !b->isPointerTy() && layout.getTypeSizeInBits(a) == layout.getTypeSizeInBits(b);
    };
    // A 3-element vector clang coerced to a value of its allocation size (char3 as i32): the
    // same bytes, through a temporary.
    const auto same_allocation = [&](llvm::Type* a, llvm::Type* b) {
      return a->isSingleValueType() && b->isSingleValueType() && !a->isPointerTy() &&
             !b->isPointerTy() && layout.getTypeAllocSize(a) == layout.getTypeAllocSize(b);
    };
    llvm::Type* returned = adapter->getReturnType();
    if (!library || library->arg_size() != adapter->arg_size() ||
        (library->getReturnType() != returned &&
         !same_allocation(library->getReturnType(), returned)))
      return fail();
    llvm::BasicBlock* entry = llvm::BasicBlock::Create(module.getContext(), "entry", adapter);
    llvm::IRBuilder<> b(entry);
    const auto convert = [&](llvm::Value* value, llvm::Type* to) -> llvm::Value* {
      if (same_bits(value->getType(), to)) return b.CreateBitCast(value, to);
      llvm::AllocaInst* temporary =
          b.CreateAlloca(layout.getTypeStoreSize(to) > layout.getTypeStoreSize(value->getType())
                             ? to
                             : value->getType());
      b.CreateStore(value, temporary);
      return b.CreateLoad(to, temporary);
    };
    std::vector<llvm::Value*> arguments;
    for (unsigned i = 0; i < library->arg_size(); ++i) {
      llvm::Value* argument = adapter->getArg(i);
      llvm::Type* expected = library->getArg(i)->getType();
      if (argument->getType() == expected) {
        arguments.push_back(argument);
        continue;
      }
      if (same_allocation(argument->getType(), expected)) {
        arguments.push_back(convert(argument, expected));
        continue;
      }
      llvm::Type* in_memory = library->getParamByValType(i);
      if (!in_memory || in_memory != argument->getType()) return fail();
      llvm::AllocaInst* temporary = b.CreateAlloca(in_memory);
      if (llvm::MaybeAlign alignment = library->getParamAlign(i))
        temporary->setAlignment(std::max(*alignment, temporary->getAlign()));
      b.CreateStore(argument, temporary);
      arguments.push_back(temporary);
    }
    llvm::CallInst* call = b.CreateCall(library, arguments);
    call->setAttributes(library->getAttributes());
    if (returned->isVoidTy())
      b.CreateRetVoid();
    else
      b.CreateRet(call->getType() == returned ? static_cast<llvm::Value*>(call)
                                              : convert(call, returned));
    adapter->setLinkage(llvm::GlobalValue::InternalLinkage);
    adapter->addFnAttr(llvm::Attribute::AlwaysInline);
    adapter->removeFnAttr(llvm::Attribute::NoInline);
  }
  return true;
}

}  // namespace

bool SplitLibrary::link_into(llvm::Module& module, std::string* log) const {
  if (!parts_->error.empty()) {
    *log += "internal error: cannot read the builtin library: " + parts_->error + "\n";
    return false;
  }
  for (;;) {
    std::set<unsigned> needed;
    for (const llvm::GlobalValue& value : module.global_values()) {
      if (!value.isDeclaration() || value.use_empty()) continue;
      if (auto part = parts_->part_defining(value.getName())) needed.insert(*part);
    }
    if (needed.empty()) return true;
    std::vector<std::unique_ptr<llvm::Module>> library_parts;
    for (unsigned part : needed) {
      auto library_part = parts_->load(part, module.getContext());
      if (!library_part) {
        *log += "internal error: cannot read the builtin library: " +
                llvm::toString(library_part.takeError()) + "\n";
        return false;
      }
      (*library_part)->setTargetTriple(module.getTargetTriple());
      (*library_part)->setDataLayout(module.getDataLayout());
      library_parts.push_back(std::move(*library_part));
    }
    // Every mismatching declaration steps aside before any part links: a part's own calls of
    // a function another part defines (float16 sinpi calling float8 sinpi) must bind to the
    // library's signature, not to the program's declaration of the same name.
    std::vector<AbiMismatch> mismatches;
    for (const auto& library_part : library_parts) {
      std::vector<AbiMismatch> found = set_aside_abi_mismatches(module, *library_part);
      mismatches.insert(mismatches.end(), found.begin(), found.end());
    }
    for (auto& library_part : library_parts) {
      if (llvm::Linker::linkModules(module, std::move(library_part),
                                    llvm::Linker::LinkOnlyNeeded)) {
        *log += "internal error: linking the builtin library failed\n";
        return false;
      }
    }
    if (!define_abi_adapters(module, mismatches, log)) return false;
  }
}

// ---- Common IR cleanups and checks ----

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

bool check_all_defined(const llvm::Module& module,
                       const std::function<bool(const llvm::Function&)>& resolved,
                       std::string_view builtin_note, std::string* log) {
  bool ok = true;
  for (const llvm::Function& function : module) {
    if (!function.isDeclaration() || function.use_empty() || function.isIntrinsic() ||
        resolved(function))
      continue;
    const llvm::StringRef name = function.getName();
    *log += "error: undefined function '" + llvm::demangle(name.str()) + "'";
    if (name.starts_with("_Z") && !builtin_note.empty()) *log += " " + std::string(builtin_note);
    *log += "\n";
    ok = false;
  }
  return ok;
}

bool verify(const llvm::Module& module, std::string_view what, std::string* log) {
  std::string findings;
  llvm::raw_string_ostream stream(findings);
  if (!llvm::verifyModule(module, &stream)) return true;
  *log += "internal compiler error (" + std::string(what) + "): " + findings + "\n";
  return false;
}

// ---- Lowering shared by GPU targets ----

// The kernel keeps its name; its body moves to an internal function the new entry calls (and
// the optimizer inlines).
uint64_t program_global_variable_bytes(const llvm::Module& module) {
  constexpr unsigned kGlobalAddressSpace = 1;  // clang's OpenCL global, on every Manifold target
  uint64_t bytes = 0;
  for (const llvm::GlobalVariable& g : module.globals())
    if (!g.isDeclaration() && g.getAddressSpace() == kGlobalAddressSpace &&
        !g.getName().starts_with("llvm."))
      bytes += module.getDataLayout().getTypeAllocSize(g.getValueType());
  return bytes;
}

uint64_t static_local_bytes(const llvm::Module& module, unsigned local_address_space) {
  uint64_t bytes = 0;
  for (const llvm::GlobalVariable& g : module.globals())
    if (g.getAddressSpace() == local_address_space && g.getName() != kDynamicLocalSymbol)
      bytes += module.getDataLayout().getTypeAllocSize(g.getValueType());
  return bytes;
}

void rewrite_local_arguments(llvm::Module& module, const std::vector<KernelInfo>& kernels,
                             unsigned local_address_space) {
  llvm::LLVMContext& context = module.getContext();
  llvm::GlobalVariable* shared = nullptr;
  for (const KernelInfo& info : kernels) {
    llvm::Function* kernel = module.getFunction(info.name);
    if (!kernel) continue;
    bool has_local = false;
    for (const KernelArg& arg : info.args) has_local = has_local || arg.kind == ArgKind::Local;
    if (!has_local) continue;
    if (!shared) {
      auto* type = llvm::ArrayType::get(llvm::Type::getInt8Ty(context), 0);
      shared = new llvm::GlobalVariable(module, type, false, llvm::GlobalValue::ExternalLinkage,
                                        nullptr, kDynamicLocalSymbol, nullptr,
                                        llvm::GlobalValue::NotThreadLocal, local_address_space);
      // __local arguments of double16 (CTS basic kernel_memory_alignment_local); the runtime
      // lays them out at the same alignment.
      shared->setAlignment(llvm::Align(kDynamicLocalAlignment));
    }
    std::vector<llvm::Type*> params;
    for (unsigned i = 0; i < kernel->arg_size(); ++i)
      params.push_back(i < info.args.size() && info.args[i].kind == ArgKind::Local
                           ? llvm::Type::getInt32Ty(context)
                           : kernel->getArg(i)->getType());
    auto* type = llvm::FunctionType::get(kernel->getReturnType(), params, false);
    const std::string name = kernel->getName().str();
    kernel->setName(name + ".manifold_body");
    auto* entry = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage, name, module);
    entry->setCallingConv(kernel->getCallingConv());
    entry->copyMetadata(kernel, 0);
    // Attributes of the replaced (pointer -> u32) parameters do not carry over.
    const llvm::AttributeList old = kernel->getAttributes();
    std::vector<llvm::AttributeSet> param_attrs;
    for (unsigned i = 0; i < entry->arg_size(); ++i)
      param_attrs.push_back(params[i] == kernel->getArg(i)->getType() ? old.getParamAttrs(i)
                                                                      : llvm::AttributeSet());
    entry->setAttributes(
        llvm::AttributeList::get(context, old.getFnAttrs(), old.getRetAttrs(), param_attrs));
    kernel->setCallingConv(llvm::CallingConv::C);
    kernel->setLinkage(llvm::GlobalValue::InternalLinkage);
    kernel->addFnAttr(llvm::Attribute::AlwaysInline);
    kernel->removeFnAttr(llvm::Attribute::NoInline);
    kernel->removeFnAttr(llvm::Attribute::OptimizeNone);
    llvm::IRBuilder<> builder(llvm::BasicBlock::Create(context, "entry", entry));
    std::vector<llvm::Value*> args;
    for (unsigned i = 0; i < entry->arg_size(); ++i) {
      llvm::Value* value = entry->getArg(i);
      if (params[i]->isIntegerTy() && params[i] != kernel->getArg(i)->getType()) {
        value = builder.CreateInBoundsGEP(builder.getInt8Ty(), shared,
                                          builder.CreateZExt(value, builder.getInt64Ty()));
        if (value->getType() != kernel->getArg(i)->getType())
          value = builder.CreateAddrSpaceCast(value, kernel->getArg(i)->getType());
      }
      args.push_back(value);
    }
    builder.CreateCall(kernel, args);
    builder.CreateRetVoid();
  }
}

// ---- Optimization ----

void run_module_passes(
    llvm::Module& module, llvm::TargetMachine* machine,
    const std::function<void(llvm::PassBuilder&, llvm::ModulePassManager&)>& populate,
    const llvm::PipelineTuningOptions* tuning,
    llvm::PassInstrumentationCallbacks* instrumentation) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder builder(machine, tuning ? *tuning : llvm::PipelineTuningOptions(), std::nullopt,
                            instrumentation);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager passes;
  populate(builder, passes);
  passes.run(module, mam);
}

// ---- Emission ----

bool emit_code(llvm::Module& module, llvm::TargetMachine& machine, CodeKind kind,
               std::vector<uint8_t>* code, std::string* log) {
  module.setDataLayout(machine.createDataLayout());
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream stream(buffer);
  llvm::legacy::PassManager passes;
  const auto file_type = kind == CodeKind::Object ? llvm::CodeGenFileType::ObjectFile
                                                  : llvm::CodeGenFileType::AssemblyFile;
  if (machine.addPassesToEmitFile(passes, stream, nullptr, file_type)) {
    *log += "internal error: target '" + machine.getTargetTriple().str() + "' cannot emit " +
            (kind == CodeKind::Object ? "object files" : "assembly") + "\n";
    return false;
  }
  passes.run(module);
  code->assign(buffer.begin(), buffer.end());
  return true;
}

std::vector<uint8_t> to_bitcode(const llvm::Module& module) {
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream stream(buffer);
  llvm::WriteBitcodeToFile(module, stream);
  return std::vector<uint8_t>(buffer.begin(), buffer.end());
}

void dump_module_if_requested(const llvm::Module& module) {
  const std::string directory = compiler_settings().dump_directory;
  if (directory.empty()) return;
  static std::atomic<unsigned> counter{0};
  std::string path = directory + "/program" + std::to_string(counter++) + ".ll";
  std::error_code error;
  llvm::raw_fd_ostream file(path, error);
  if (!error) module.print(file, nullptr);
}

}  // namespace manifold::compiler
