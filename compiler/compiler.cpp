// build / compile / link / inspect_binary: the public entry points, and the choice of a
// target's pipeline.
#include "compiler/compiler.h"

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/DiagnosticPrinter.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/TargetParser/Triple.h>

#include <algorithm>

#include "compiler/binary_format.h"
#include "compiler/footprint/analysis.h"
#include "compiler/frontend.h"
#include "compiler/kernel_info.h"
#include "compiler/options.h"
#include "compiler/program_cache.h"
#include "compiler/spirv/module.h"
#include "compiler/spirv/reader.h"
#include "compiler/spirv_capabilities.h"
#include "compiler/stages.h"
#include "compiler/target_pipeline.h"

namespace manifold::compiler {
namespace {

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

// A compiled object (clCompileProgram's result) of `module`, from OpenCL C or SPIR-V alike.
BuildOutput package_object(llvm::Module& module, std::string_view options, const Target& target,
                           std::string log) {
  ProgramBinary program;
  program.type = BinaryType::CompiledObject;
  program.triple = target.triple;
  program.options = std::string(options);
  program.producer = producer_id();
  program.kernels = read_kernel_infos(module);
  program.bitcode = to_bitcode(module);
  return package(std::move(program), std::move(log));
}

// Registers the target's code generator (making its pipeline does), which clang's back end and the
// SPIR-V reader ask for the data layout before the pipeline runs: a frontend that ran before
// another thread's build had registered it crashed (AMDGPU builds on parallel threads).
void register_code_generator(const Target& target) {
  initialize_llvm();
  pipeline_for(target);
}

// Compiles source to an unoptimized module; the log collects clang's diagnostics.
std::unique_ptr<llvm::Module> compile_to_module(
    llvm::LLVMContext& context, std::string_view source, const ParsedOptions& options,
    const std::vector<std::pair<std::string, std::string>>& headers, const Target& target,
    std::string* log) {
  register_code_generator(target);
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

// `driver_il`: for a SPIR-V target, the application's own module, which the driver compiles in
// place of the pipeline's where it keeps to the device's capabilities.
BuildOutput finish_executable(std::unique_ptr<llvm::Module> module, const ParsedOptions& options,
                              std::string_view option_text, const Target& target, std::string log,
                              StageTimes times, std::span<const uint8_t> driver_il = {}) {
  ProgramBinary program;
  program.type = BinaryType::Executable;
  program.triple = target.triple;
  program.options = std::string(option_text);
  program.producer = producer_id();
  program.kernels = read_kernel_infos(*module);
  {
    StageClock clock(&times);
    analyze_footprints(*module, program.kernels);
    clock.lap("footprint analysis");
  }
  if (!pipeline_for(target)->finalize(*module, program, options, &log, &times))
    return failure(std::move(log));
  if (std::string why; !driver_il.empty() && check_emitted_spirv(driver_il, target, &why))
    program.object.assign(driver_il.begin(), driver_il.end());
  BuildOutput out = package(std::move(program), std::move(log));
  out.stage_times = std::move(times);
  return out;
}

}  // namespace

std::unique_ptr<TargetPipeline> pipeline_for(const Target& target) {
  const llvm::Triple triple(target.triple);
  if (triple.isNVPTX()) return make_nvptx_pipeline(target);
  if (triple.isAMDGCN()) return make_amdgpu_pipeline(target);
  if (triple.isSPIRV()) return make_spirv_pipeline(target);
  // The host CPU (x86-64); a triple LLVM cannot generate code for fails in its first stage.
  return make_cpu_pipeline(target);
}

BuildOutput build(std::string_view source, std::string_view options, const Target& target) {
  ParsedOptions parsed;
  std::string why;
  if (!parse_options(options, OptionsKind::Build, &parsed, &why))
    return failure("error: invalid build options: " + why + "\n");
  const std::string key = program_cache::build_key(source, options, target);
  if (std::optional<BuildOutput> cached = program_cache::load(key)) return std::move(*cached);
  StageTimes times;
  StageClock clock(&times);
  llvm::LLVMContext context;
  std::string log;
  auto module = compile_to_module(context, source, parsed, {}, target, &log);
  if (!module) return failure(std::move(log));
  clock.lap("frontend");
  BuildOutput out =
      finish_executable(std::move(module), parsed, options, target, std::move(log), times);
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
  return package_object(*module, options, target, std::move(log));
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
  return finish_executable(std::move(linked), parsed, options, target, std::move(log), {});
}

namespace {

// The SPIR-V module of a program from IL as an LLVM module for the target.
std::unique_ptr<llvm::Module> read_il(llvm::LLVMContext& context, std::span<const uint8_t> il,
                                      const ParsedOptions& options, const Target& target,
                                      const SpecConstantValues& spec_values, std::string* log) {
  register_code_generator(target);
  std::optional<std::vector<uint32_t>> words = spirv::words_of(il);
  std::string why;
  if (!words || !spirv::validate(*words, &why)) {
    *log += "error: " + (words ? why : std::string("the IL is not a whole number of words")) + "\n";
    return nullptr;
  }
  spirv::ReadResult read =
      spirv::read(context, *words, target, spec_values, options.kernel_arg_info);
  *log += read.log;
  return std::move(read.module);
}

// What decides an IL build besides options and target: the IL and the specialization values.
std::string il_key_source(std::span<const uint8_t> il, const SpecConstantValues& spec_values) {
  std::string text = "SPIR-V module\n";
  text.append(reinterpret_cast<const char*>(il.data()), il.size());
  for (const auto& [id, bytes] : spec_values) {
    text += "\nspec " + std::to_string(id) + ":";
    text.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  }
  return text;
}

}  // namespace

bool il_valid(std::span<const uint8_t> il, std::string* why) {
  std::optional<std::vector<uint32_t>> words = spirv::words_of(il);
  if (!words) {
    *why = "the IL is not a whole number of 32-bit words";
    return false;
  }
  return spirv::well_formed(*words, why);
}

BuildOutput build_il(std::span<const uint8_t> il, std::string_view options, const Target& target,
                     const SpecConstantValues& spec_values) {
  ParsedOptions parsed;
  std::string why;
  if (!parse_options(options, OptionsKind::Build, &parsed, &why))
    return failure("error: invalid build options: " + why + "\n");
  const std::string key = program_cache::build_key(il_key_source(il, spec_values), options, target);
  if (std::optional<BuildOutput> cached = program_cache::load(key)) return std::move(*cached);
  StageTimes times;
  StageClock clock(&times);
  llvm::LLVMContext context;
  std::string log;
  auto module = read_il(context, il, parsed, target, spec_values, &log);
  if (!module) return failure(std::move(log));
  clock.lap("SPIR-V reader");
  // A Level Zero driver takes the application's SPIR-V as it is (the environment spec's consumer)
  // once Manifold's reader has taken it too (kernel metadata, and what the device can run);
  // specialization constants are applied by the reader, so such a module goes as re-emitted, and
  // so does one of a version above those the device reports (re-emitted as SPIR-V 1.2).
  const std::optional<std::vector<uint32_t>> words = spirv::words_of(il);
  const std::optional<unsigned> minor = words ? spirv::minor_version(*words) : std::nullopt;
  const bool to_driver = llvm::Triple(target.triple).isSPIRV() && spec_values.empty() && minor &&
                         *minor <= spirv::kHighestMinorVersion;
  BuildOutput out = finish_executable(std::move(module), parsed, options, target, std::move(log),
                                      times, to_driver ? il : std::span<const uint8_t>());
  if (out.success) program_cache::store(key, out);
  return out;
}

BuildOutput compile_il(std::span<const uint8_t> il, std::string_view options, const Target& target,
                       const SpecConstantValues& spec_values) {
  ParsedOptions parsed;
  std::string why;
  if (!parse_options(options, OptionsKind::Compile, &parsed, &why))
    return failure("error: invalid compiler options: " + why + "\n");
  llvm::LLVMContext context;
  std::string log;
  auto module = read_il(context, il, parsed, target, spec_values, &log);
  if (!module) return failure(std::move(log));
  return package_object(*module, options, target, std::move(log));
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
  // Counted before optimization on every target (compiler/target_pipeline.cpp): the optimizer
  // folds variables away, and the spec asks for the program's own variables.
  std::string error;
  std::optional<ProgramBinary> program = deserialize(binary, &error);
  return program && program->type == BinaryType::Executable ? program->global_variable_bytes : 0;
}

}  // namespace manifold::compiler
