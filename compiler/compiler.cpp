// build / compile / link / inspect_binary / host_cpu_target: the public entry points.
#include "compiler/compiler.h"

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/Bitcode/BitcodeWriter.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/DiagnosticPrinter.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>

#include "compiler/binary_format.h"
#include "compiler/cpu_pipeline.h"
#include "compiler/frontend.h"
#include "compiler/kernel_info.h"
#include "compiler/nvptx_pipeline.h"
#include "compiler/options.h"
#include "compiler/program_cache.h"

namespace manifold::compiler {
namespace {

std::vector<uint8_t> to_bitcode(const llvm::Module& module) {
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream stream(buffer);
  llvm::WriteBitcodeToFile(module, stream);
  return std::vector<uint8_t>(buffer.begin(), buffer.end());
}

// MANIFOLD_COMPILER_DUMP=<directory>: write each executable's final IR there (debugging aid).
void dump_module_if_requested(const llvm::Module& module) {
  const char* directory = std::getenv("MANIFOLD_COMPILER_DUMP");
  if (!directory || !*directory) return;
  static std::atomic<unsigned> counter{0};
  std::string path = std::string(directory) + "/program" + std::to_string(counter++) + ".ll";
  std::error_code error;
  llvm::raw_fd_ostream file(path, error);
  if (!error) module.print(file, nullptr);
}

BuildOutput failure(std::string log) {
  BuildOutput out;
  out.success = false;
  out.log = std::move(log);
  return out;
}

BuildOutput package(ProgramBinary program, std::string log) {
  BuildOutput out;
  out.success = true;
  out.log = std::move(log);
  out.kernels = program.kernels;
  out.type = program.type;
  out.binary = serialize(program);
  return out;
}

// Compiles source to an unoptimized module; the log collects clang's diagnostics.
std::unique_ptr<llvm::Module> compile_to_module(
    llvm::LLVMContext& context, std::string_view source, const ParsedOptions& options,
    const std::vector<std::pair<std::string, std::string>>& headers, const Target& target,
    std::string* log) {
  initialize_llvm();
  FrontendResult frontend = run_frontend(context, source, options, headers, target);
  *log += frontend.log;
  if (frontend.module) strip_target_attributes(*frontend.module);
  return std::move(frontend.module);
}

// Merges the options a library was created with (-enable-link-options) into the link's.
void merge_link_options(ParsedOptions& into, const std::string& library_options) {
  ParsedOptions library;
  if (!parse_options(library_options, OptionsKind::Link, &library, nullptr)) return;
  for (const std::string& flag : library.math_flags)
    if (std::find(into.math_flags.begin(), into.math_flags.end(), flag) == into.math_flags.end())
      into.math_flags.push_back(flag);
}

BuildOutput finish_executable(std::unique_ptr<llvm::Module> module, const ParsedOptions& options,
                              std::string_view option_text, const Target& target, std::string log) {
  ProgramBinary program;
  program.type = BinaryType::Executable;
  program.triple = target.triple;
  program.options = std::string(option_text);
  program.producer = producer_id();
  program.kernels = read_kernel_infos(*module);
  if (is_nvptx_target(target)) {  // CUDA devices: PTX instead of CPU code
    std::string ptx;
    if (!finalize_nvptx_executable(*module, program.kernels, program.execs, target, options, &ptx,
                                   &log))
      return failure(std::move(log));
    program.bitcode.assign(ptx.begin(), ptx.end());  // an NVPTX executable's payload is PTX
    return package(std::move(program), std::move(log));
  }
  if (!finalize_executable(*module, program.kernels, program.execs, target, options, &log))
    return failure(std::move(log));
  program.bitcode = to_bitcode(*module);
  dump_module_if_requested(*module);
  // Machine code now, while the module is in memory: loading the binary (and every later
  // build served from the program cache) then only links it.
  program.cpu = resolved_cpu(target);
  program.features = target.features;
  if (!emit_object(*module, target, &program.object, &log)) return failure(std::move(log));
  return package(std::move(program), std::move(log));
}

}  // namespace

BuildOutput build(std::string_view source, std::string_view options, const Target& target) {
  ParsedOptions parsed;
  std::string why;
  if (!parse_options(options, OptionsKind::Build, &parsed, &why))
    return failure("error: invalid build options: " + why + "\n");
  const std::string key = program_cache::build_key(source, options, target);
  if (std::optional<BuildOutput> cached = program_cache::load(key)) return std::move(*cached);
  llvm::LLVMContext context;
  std::string log;
  auto module = compile_to_module(context, source, parsed, {}, target, &log);
  if (!module) return failure(std::move(log));
  BuildOutput out = finish_executable(std::move(module), parsed, options, target, std::move(log));
  if (out.success) program_cache::store(key, out);
  return out;
}

BuildOutput compile(std::string_view source, std::string_view options,
                    const std::vector<std::pair<std::string, std::string>>& headers,
                    const Target& target) {
  ParsedOptions parsed;
  std::string why;
  if (!parse_options(options, OptionsKind::Compile, &parsed, &why))
    return failure("error: invalid compiler options: " + why + "\n");
  llvm::LLVMContext context;
  std::string log;
  auto module = compile_to_module(context, source, parsed, headers, target, &log);
  if (!module) return failure(std::move(log));
  ProgramBinary program;
  program.type = BinaryType::CompiledObject;
  program.triple = target.triple;
  program.options = std::string(options);
  program.producer = producer_id();
  program.kernels = read_kernel_infos(*module);
  program.bitcode = to_bitcode(*module);
  return package(std::move(program), std::move(log));
}

BuildOutput link(const std::vector<std::span<const uint8_t>>& objects, std::string_view options,
                 const Target& target) {
  ParsedOptions parsed;
  std::string why;
  if (!parse_options(options, OptionsKind::Link, &parsed, &why))
    return failure("error: invalid linker options: " + why + "\n");
  if (objects.empty()) return failure("error: nothing to link\n");
  initialize_llvm();
  llvm::LLVMContext context;
  std::string log;
  auto linked = std::make_unique<llvm::Module>("linked", context);
  std::string library_options;
  for (size_t i = 0; i < objects.size(); ++i) {
    std::string error;
    std::optional<ProgramBinary> object = deserialize(objects[i], &error);
    if (!object) return failure("error: input " + std::to_string(i) + ": " + error + "\n");
    if (object->type != BinaryType::CompiledObject && object->type != BinaryType::Library)
      return failure("error: input " + std::to_string(i) +
                     " is not a compiled object or library\n");
    if (object->producer != producer_id() || object->triple != target.triple)
      return failure("error: input " + std::to_string(i) +
                     " was compiled by another compiler version or for another device\n");
    if (object->type == BinaryType::Library) {
      ParsedOptions library;
      parse_options(object->options, OptionsKind::Link, &library, nullptr);
      if (library.enable_link_options) merge_link_options(parsed, object->options);
    }
    llvm::StringRef bytes(reinterpret_cast<const char*>(object->bitcode.data()),
                          object->bitcode.size());
    auto module = llvm::parseBitcodeFile(llvm::MemoryBufferRef(bytes, "object"), context);
    if (!module)
      return failure("error: input " + std::to_string(i) +
                     ": unreadable bitcode: " + llvm::toString(module.takeError()) + "\n");
    if (i == 0) {
      linked->setTargetTriple((*module)->getTargetTriple());
      linked->setDataLayout((*module)->getDataLayout());
    }
    std::string diagnostics;
    context.setDiagnosticHandlerCallBack(
        [](const llvm::DiagnosticInfo* info, void* sink) {
          llvm::raw_string_ostream stream(*static_cast<std::string*>(sink));
          llvm::DiagnosticPrinterRawOStream printer(stream);
          info->print(printer);
          stream << "\n";
        },
        &diagnostics);
    const bool link_failed = llvm::Linker::linkModules(*linked, std::move(*module));
    // The handler writes into `diagnostics`, which ends with this iteration: later passes
    // (code generation) must not reach it.
    context.setDiagnosticHandlerCallBack(nullptr, nullptr);
    if (link_failed) {
      log += diagnostics;
      return failure(log + "error: linking input " + std::to_string(i) +
                     " failed (a symbol is defined twice?)\n");
    }
  }

  if (parsed.create_library) {
    ProgramBinary program;
    program.type = BinaryType::Library;
    program.triple = target.triple;
    program.options = std::string(options);
    program.producer = producer_id();
    program.kernels = read_kernel_infos(*linked);
    program.bitcode = to_bitcode(*linked);
    return package(std::move(program), std::move(log));
  }
  return finish_executable(std::move(linked), parsed, options, target, std::move(log));
}

std::optional<BinaryInfo> inspect_binary(std::span<const uint8_t> binary, std::string* error) {
  std::optional<ProgramBinary> program = deserialize(binary, error);
  if (!program) return std::nullopt;
  if (program->producer != producer_id()) {
    if (error) *error = "binary was produced by another compiler version";
    return std::nullopt;
  }
  BinaryInfo info;
  info.type = program->type;
  info.kernels = std::move(program->kernels);
  info.options = std::move(program->options);
  info.triple = std::move(program->triple);
  return info;
}

size_t global_variables_size(std::span<const uint8_t> binary) {
  std::string error;
  std::optional<ProgramBinary> program = deserialize(binary, &error);
  if (!program || program->type != BinaryType::Executable || program->bitcode.empty()) return 0;
  llvm::LLVMContext context;
  auto module = llvm::parseBitcodeFile(
      llvm::MemoryBufferRef(llvm::StringRef(reinterpret_cast<const char*>(program->bitcode.data()),
                                            program->bitcode.size()),
                            "program"),
      context);
  if (!module) {
    llvm::consumeError(module.takeError());
    return 0;
  }
  constexpr unsigned kGlobalAddressSpace = 1;  // clang's OpenCL global, on every Manifold target
  size_t total = 0;
  const llvm::DataLayout& layout = (*module)->getDataLayout();
  for (const llvm::GlobalVariable& g : (*module)->globals())
    if (!g.isDeclaration() && g.getAddressSpace() == kGlobalAddressSpace &&
        !g.getName().starts_with("llvm."))
      total += layout.getTypeAllocSize(g.getValueType());
  return total;
}

Target host_cpu_target() {
  Target target;
  target.triple = llvm::sys::getProcessTriple();
  target.cpu = llvm::sys::getHostCPUName().str();
  std::string features;
  for (const auto& feature : llvm::sys::getHostCPUFeatures()) {
    if (!features.empty()) features += ',';
    features += (feature.second ? "+" : "-") + feature.first().str();
  }
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
      "__opencl_c_work_group_collective_functions",
      // Images: compiler/builtins/image.cl over the descriptors of compiler/image_abi.h.
      "__opencl_c_images",
      "__opencl_c_read_write_images",
      "__opencl_c_3d_image_writes",
  };
  target.extensions = {
      "cl_khr_byte_addressable_store",    "cl_khr_fp64",
      "cl_khr_global_int32_base_atomics", "cl_khr_global_int32_extended_atomics",
      "cl_khr_local_int32_base_atomics",  "cl_khr_local_int32_extended_atomics",
      "cl_khr_int64_base_atomics",        "cl_khr_int64_extended_atomics",
      "cl_khr_3d_image_writes",
  };
  target.fp64 = true;
  target.fp16 = false;
  target.images = true;
  return target;
}

}  // namespace manifold::compiler
