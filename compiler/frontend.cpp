#include "compiler/frontend.h"

#include <clang/Basic/DiagnosticOptions.h>
#include <clang/CodeGen/CodeGenAction.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/CompilerInvocation.h>
#include <clang/Frontend/TextDiagnosticPrinter.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/VirtualFileSystem.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/TargetParser/Triple.h>

#include <algorithm>

#ifndef MANIFOLD_CLANG_RESOURCE_DIR
#error "MANIFOLD_CLANG_RESOURCE_DIR must name clang's resource directory"
#endif

// clang's opencl-c-base.h, embedded at build time (compiler/nvptx/nvptx.cmake).
extern "C" {
extern const char manifold_opencl_c_base_header[];
extern const uint64_t manifold_opencl_c_base_header_size;
}

namespace manifold::compiler {
namespace {

// The name diagnostics show for the program source.
constexpr const char* kMainFileName = "input.cl";

std::string version_flag(unsigned version, bool cpp) {
  if (cpp) return "-cl-std=CLC++2021";
  switch (version) {
    case 100:
      return "-cl-std=CL1.0";
    case 110:
      return "-cl-std=CL1.1";
    case 120:
      return "-cl-std=CL1.2";
    case 200:
      return "-cl-std=CL2.0";
    default:
      return "-cl-std=CL3.0";
  }
}

}  // namespace

unsigned effective_cl_version(const ParsedOptions& options, const Target& target) {
  if (options.cl_std) return options.cl_std;
  return std::min(target.opencl_c_version, 120u);
}

std::string cl_ext_argument(const Target& target) {
  std::vector<std::string> enabled = target.extensions;
  enabled.insert(enabled.end(), target.opencl_c_features.begin(), target.opencl_c_features.end());
  // Keep the pairs clang checks for consistency in step with the boolean capabilities.
  auto add = [&](const char* name) {
    if (std::find(enabled.begin(), enabled.end(), name) == enabled.end()) enabled.push_back(name);
  };
  auto remove = [&](const char* name) { std::erase(enabled, std::string(name)); };
  if (target.fp64) {
    add("cl_khr_fp64");
    if (target.opencl_c_version >= 300) add("__opencl_c_fp64");
  } else {
    remove("cl_khr_fp64");
    remove("__opencl_c_fp64");
  }
  if (target.fp16) {
    add("cl_khr_fp16");
  } else {
    remove("cl_khr_fp16");
    remove("__opencl_c_fp16");
  }
  if (target.images) {
    // Clang declares the image builtins (and accepts image types) from this feature.
    add("__opencl_c_images");
  } else {
    remove("__opencl_c_images");
    remove("__opencl_c_read_write_images");
    remove("__opencl_c_3d_image_writes");
    remove("cl_khr_3d_image_writes");
  }
  std::string arg = "-cl-ext=-all";
  for (const std::string& name : enabled) arg += ",+" + name;
  return arg;
}

FrontendResult run_frontend(llvm::LLVMContext& context, std::string_view source,
                            const ParsedOptions& options,
                            const std::vector<std::pair<std::string, std::string>>& headers,
                            const Target& target) {
  FrontendResult result;
  const unsigned version = effective_cl_version(options, target);
  if (version > target.opencl_c_version) {
    result.log = "error: the device does not support OpenCL C " + std::to_string(version / 100) +
                 "." + std::to_string(version / 10 % 10) + " (-cl-std)\n";
    return result;
  }

  // cc1 arguments. -O2 with -disable-llvm-passes: no optnone attributes, and Manifold runs its
  // own pipeline after the work-group pass.
  std::vector<std::string> args = {
      "-triple",
      target.triple,
      "-emit-llvm-only",
      version_flag(version, options.cl_cpp),
      "-fdeclare-opencl-builtins",
      "-finclude-default-header",
      "-resource-dir",
      MANIFOLD_CLANG_RESOURCE_DIR,
      "-internal-isystem",
      MANIFOLD_CLANG_RESOURCE_DIR "/include",
      cl_ext_argument(target),
      "-O2",
      "-disable-llvm-passes",
      "-cl-kernel-arg-info",
      "-fno-dwarf-directory-asm",
      "-fmessage-length=0",
      // Clang 22 turned this C warning into an error; OpenCL programs written for older
      // compilers (piglit's generated math tests: global float* passed as global float2*)
      // rely on it being a warning, as it is on other platforms.
      "-Wno-error=incompatible-pointer-types",
      // Vectors wider than the host's registers passed by value (double8 without AVX-512): a
      // program's own functions all come from this one build, and calls into the builtin
      // library get adapters (stages.cpp), so the ABI clang warns about never meets another.
      "-Wno-psabi",
      "-ferror-limit",
      "50",
  };
  // The CPU pipeline works with clang's fake address-space map; GPU targets need their real
  // one (libclc and the vendor libraries are built with it).
  const llvm::Triple triple(target.triple);
  if (!triple.isNVPTX() && !triple.isAMDGCN() && !triple.isSPIRV())
    args.push_back("-ffake-address-space-map");
  // An AMD GPU's processor: clang predefines its macros (__gfx90a__) and knows its wave size.
  if (triple.isAMDGCN() && !target.cpu.empty())
    args.insert(args.end(), {"-target-cpu", target.cpu, "-mcode-object-version=5"});
  // A CPU target is compiled for its real CPU: clang then passes vectors the way that CPU
  // does (long4 in one AVX register) instead of warning that AVX vectors change the ABI, and
  // predefines the macros the CPU warrants (__AVX2__...). The builtin library, compiled for
  // the baseline ABI, is adapted where it differs at link time (SplitLibrary::link_into).
  if (triple.isX86()) {
    if (!target.cpu.empty()) args.insert(args.end(), {"-target-cpu", target.cpu});
    llvm::SmallVector<llvm::StringRef, 64> features;
    llvm::StringRef(target.features).split(features, ',', -1, /*KeepEmpty=*/false);
    for (llvm::StringRef feature : features)
      args.insert(args.end(), {"-target-feature", feature.str()});
  }
  if (options.cl_cpp) {
    args.insert(args.begin() + 2, {"-x", "clcpp"});
  } else {
    args.insert(args.begin() + 2, {"-x", "cl"});
  }
  bool contract_fast = false;
  for (const std::string& flag : options.math_flags) {
    // cc1 knows every OpenCL math option but this one, which the driver turns into a
    // denormal mode (flushing is then allowed, not required).
    if (flag == "-cl-denorms-are-zero")
      args.push_back("-fdenormal-fp-math-f32=preserve-sign,preserve-sign");
    else
      args.push_back(flag);
    // cc1 takes -cl-finite-math-only as a spelling only (no nnan/ninf flags, no
    // __FINITE_MATH_ONLY__): the driver adds what it means, and so does Manifold.
    if (flag == "-cl-finite-math-only")
      args.insert(args.end(), {"-menable-no-infs", "-menable-no-nans"});
    // -cl-mad-enable, and the two options that imply it, let a * b + c be fused across
    // statements too; cc1 alone only marks the functions "less-precise-fpmad", which no backend
    // reads. Without them, OpenCL C's FP_CONTRACT default (within an expression) stays.
    contract_fast = contract_fast || flag == "-cl-mad-enable" ||
                    flag == "-cl-unsafe-math-optimizations" || flag == "-cl-fast-relaxed-math";
  }
  if (contract_fast) args.push_back("-ffp-contract=fast-honor-pragmas");
  // Predefined macros (OpenCL C 3.0 section 6.12) that clang leaves to the implementation, as
  // they describe the device rather than the language: the device's OpenCL version whatever
  // -cl-std says, and __IMAGE_SUPPORT__ exactly when CL_DEVICE_IMAGE_SUPPORT is true. Clang
  // itself defines __OPENCL_C_VERSION__, CL_VERSION_x_y, __ENDIAN_LITTLE__ and
  // __FAST_RELAXED_MATH__; opencl-c-base.h defines __kernel_exec.
  args.push_back("-D__OPENCL_VERSION__=" + std::to_string(target.opencl_version));
  // Clang defines it on its own for SPIR-V targets, whose OpenCL features it takes as all present.
  args.push_back(target.images ? "-D__IMAGE_SUPPORT__=1" : "-U__IMAGE_SUPPORT__");
  // A feature macro clang 22 does not know (its -cl-ext takes the name but defines nothing):
  // OpenCL C 3.0's, for devices that report it with cl_khr_fp16.
  if (target.fp16 && version >= 300 && target.has_feature("__opencl_c_fp16"))
    args.push_back("-D__opencl_c_fp16=1");
  if (options.no_warnings) args.push_back("-w");
  if (options.warnings_as_errors) args.push_back("-Werror");
  for (const std::string& define : options.defines) args.push_back("-D" + define);
  for (const std::string& dir : options.include_dirs) {
    args.push_back("-I");
    args.push_back(dir);
  }
  args.push_back(kMainFileName);
  std::vector<const char*> argv;
  argv.reserve(args.size());
  for (const std::string& arg : args) argv.push_back(arg.c_str());

  // The program and its headers live in memory, on top of the real file system (for -I and
  // clang's own headers). Relative names resolve against the process's working directory.
  auto overlay =
      llvm::makeIntrusiveRefCnt<llvm::vfs::OverlayFileSystem>(llvm::vfs::getRealFileSystem());
  auto memory = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
  llvm::SmallString<256> cwd;
  if (auto dir = overlay->getCurrentWorkingDirectory()) cwd = *dir;
  memory->setCurrentWorkingDirectory(cwd);
  memory->addFile(kMainFileName, 0,
                  llvm::MemoryBuffer::getMemBufferCopy(
                      llvm::StringRef(source.data(), source.size()), kMainFileName));
  for (const auto& [name, text] : headers)
    memory->addFile(name, 0, llvm::MemoryBuffer::getMemBufferCopy(text, name));
  // A self-contained build may run where clang's resource directory does not exist: its OpenCL
  // header then comes from the copy embedded in Manifold.
  const std::string base_header = MANIFOLD_CLANG_RESOURCE_DIR "/include/opencl-c-base.h";
  if (manifold_opencl_c_base_header_size && !llvm::sys::fs::exists(base_header))
    memory->addFile(
        base_header, 0,
        llvm::MemoryBuffer::getMemBuffer(
            llvm::StringRef(manifold_opencl_c_base_header, manifold_opencl_c_base_header_size),
            base_header, false));
  overlay->pushOverlay(memory);

  std::string log;
  llvm::raw_string_ostream log_stream(log);
  auto invocation = std::make_shared<clang::CompilerInvocation>();
  clang::DiagnosticOptions parse_diag_options;
  clang::TextDiagnosticPrinter parse_printer(log_stream, parse_diag_options);
  {
    clang::DiagnosticsEngine parse_diags(clang::DiagnosticIDs::create(), parse_diag_options,
                                         &parse_printer, /*ShouldOwnClient=*/false);
    if (!clang::CompilerInvocation::CreateFromArgs(*invocation, argv, parse_diags)) {
      result.log = log;
      if (result.log.empty()) result.log = "error: invalid compiler invocation\n";
      return result;
    }
  }
  invocation->getDiagnosticOpts().ShowColors = false;
  invocation->getFrontendOpts().DisableFree = false;

  clang::CompilerInstance instance(invocation);
  // The "N errors generated." summary goes to the build log, not to the process's stderr.
  instance.setVerboseOutputStream(log_stream);
  instance.setVirtualFileSystem(overlay);
  auto* printer = new clang::TextDiagnosticPrinter(log_stream, instance.getDiagnosticOpts());
  instance.createDiagnostics(printer, /*ShouldOwnClient=*/true);
  instance.createFileManager();

  clang::EmitLLVMOnlyAction action(&context);
  const bool ok = instance.ExecuteAction(action);
  std::unique_ptr<llvm::Module> module = action.takeModule();
  if (instance.getDiagnostics().hasErrorOccurred()) {
    module.reset();
  }
  log_stream.flush();
  result.log = std::move(log);
  if (ok && module) {
    // Clang always gets -cl-kernel-arg-info (the runtime needs qualifiers and types), but
    // clGetKernelArgInfo answers only for programs built with it: the module says which.
    if (options.kernel_arg_info) module->addModuleFlag(llvm::Module::Max, kArgInfoRequestedFlag, 1);
    result.module = std::move(module);
  }
  return result;
}

}  // namespace manifold::compiler
