// One compilation target's way from linked program IR to an executable binary. Every target
// runs the same sequence of stages (finalize); a pipeline supplies only what differs: the
// lowering its ABI needs, its builtin libraries, its IR passes and optimization, and what the
// binary carries as payload. The stages themselves are shared (compiler/stages.h).
//
// Adding a target: a <target>_pipeline.cpp defining a TargetPipeline and its Target (the
// OpenCL C features and extensions it implements), and a case in pipeline_for
// (compiler/compiler.cpp), which picks the pipeline by triple.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "compiler/binary_format.h"
#include "compiler/compiler.h"
#include "compiler/options.h"
#include "compiler/stages.h"

namespace llvm {
class Function;
class Module;
class TargetMachine;
}  // namespace llvm

namespace manifold::compiler {

// Times the steps of a build: each lap() records the time since the previous one.
class StageClock {
 public:
  explicit StageClock(StageTimes* times);
  void lap(const char* stage);

 private:
  StageTimes* times_;
  std::chrono::steady_clock::time_point last_;
};

class TargetPipeline {
 public:
  TargetPipeline(const Target& target, CodeDestination destination);
  virtual ~TargetPipeline();
  TargetPipeline(const TargetPipeline&) = delete;
  TargetPipeline& operator=(const TargetPipeline&) = delete;

  // One build of a linked program: its kernels are already read into program.kernels. Runs
  // lower, link_builtins, the common cleanups and checks, optimize and emit; on success
  // program.execs has one entry per kernel and the payload is filled. False with a message in
  // *log when the program calls something undefined or a stage fails.
  // Each stage's time is appended to *times.
  bool finalize(llvm::Module& module, ProgramBinary& program, const ParsedOptions& options,
                std::string* log, StageTimes* times);

 protected:
  // What one build's stages work on.
  struct Build {
    llvm::Module& module;
    ProgramBinary& program;
    const ParsedOptions& options;
    std::string& log;
  };

  const Target& target() const { return target_; }
  // The target's code generator, valid during finalize.
  llvm::TargetMachine& machine() const { return *machine_; }

  // Lowering the target's ABI needs before builtins are linked (printf, __local arguments...).
  virtual bool lower(Build& build) = 0;
  // Links the builtin libraries the program calls (lazily: only what it reaches).
  virtual bool link_builtins(Build& build) = 0;
  // Whether a function still undefined after linking is resolved later: by a target pass, or
  // when the binary is loaded (host symbols of the JIT, the CUDA driver's vprintf).
  virtual bool resolved_later(const llvm::Function& function) const = 0;
  // Appended to the error for an undefined builtin: which library lacks it.
  virtual const char* missing_builtin_note() const { return ""; }
  // Target IR passes and optimization; fills program.execs (one per kernel) unless emit does.
  virtual bool optimize(Build& build) = 0;
  // The binary's payload (program.bitcode, program.object): machine code, or code a driver
  // compiles at load time.
  virtual bool emit(Build& build) = 0;

 private:
  Target target_;
  CodeDestination destination_;
  std::unique_ptr<llvm::TargetMachine> own_machine_;  // a Driver machine, made per build
  llvm::TargetMachine* machine_ = nullptr;
};

// The pipeline for `target`, chosen by its triple (compiler/compiler.cpp).
std::unique_ptr<TargetPipeline> pipeline_for(const Target& target);

// The pipelines (compiler/cpu_pipeline.cpp, compiler/nvptx_pipeline.cpp,
// compiler/amdgpu_pipeline.cpp, compiler/spirv_pipeline.cpp).
std::unique_ptr<TargetPipeline> make_cpu_pipeline(const Target& target);
std::unique_ptr<TargetPipeline> make_nvptx_pipeline(const Target& target);
std::unique_ptr<TargetPipeline> make_amdgpu_pipeline(const Target& target);
std::unique_ptr<TargetPipeline> make_spirv_pipeline(const Target& target);

}  // namespace manifold::compiler
