#include "compiler/target_pipeline.h"

#include <llvm/IR/Function.h>
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include <chrono>

namespace manifold::compiler {

StageClock::StageClock(StageTimes* times)
    : times_(times), last_(std::chrono::steady_clock::now()) {}

void StageClock::lap(const char* stage) {
  const auto now = std::chrono::steady_clock::now();
  if (times_)
    times_->emplace_back(stage, std::chrono::duration<double, std::milli>(now - last_).count());
  last_ = now;
}

TargetPipeline::TargetPipeline(const Target& target, CodeDestination destination)
    : target_(target), destination_(destination) {}
TargetPipeline::~TargetPipeline() = default;

bool TargetPipeline::finalize(llvm::Module& module, ProgramBinary& program,
                              const ParsedOptions& options, std::string* log, StageTimes* times) {
  StageClock clock(times);
  if (destination_ == CodeDestination::HostJit) {
    machine_ = thread_target_machine(target_, destination_);
  } else {
    own_machine_ = make_target_machine(target_, destination_);
    machine_ = own_machine_.get();
  }
  if (!machine_) {
    *log += "error: no code generator for target '" + target_.triple + "'\n";
    return false;
  }
  program.global_variable_bytes = program_global_variable_bytes(module);
  clock.lap("code generator");
  Build build{module, program, options, *log};
  if (!lower(build)) return false;
  clock.lap("lower");
  if (!link_builtins(build)) return false;
  strip_target_attributes(module);  // again: the libraries just linked carry them too
  const auto resolved = [this](const llvm::Function& function) { return resolved_later(function); };
  if (!check_all_defined(module, resolved, missing_builtin_note(), log)) return false;
  clock.lap("link builtins");
  if (!optimize(build)) return false;
  clock.lap("optimize");
  if (!emit(build)) return false;
  clock.lap("emit");
  return true;
}

}  // namespace manifold::compiler
