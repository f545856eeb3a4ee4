// The reader's shared state, split over compiler/spirv/*.cpp by concern: module-level
// declarations (reader.cpp), types and constants (types.cpp), function bodies
// (instructions.cpp), OpenCL.std and builtins (opencl_std.cpp), kernels (kernels.cpp).
#pragma once

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "compiler/spirv/module.h"
#include "compiler/spirv/reader.h"

namespace manifold::compiler::spirv {

// An Alignment decoration's or Aligned operand's value as an alignment: a power of two, or 0
// (none: the type's own) for anything else. LLVM's SPIR-V backends write 128 as 0xffffff80 (an
// 8-bit value sign-extended), which is taken as the 128 it was.
inline uint32_t valid_alignment(uint32_t value) {
  if (value > 0x7fffffffu) value = 0u - value;
  return value && !(value & (value - 1)) ? value : 0;
}

// What decorations say about one id (or one struct member, for packing only).
struct Decorations {
  uint32_t alignment = 0;
  int builtin = -1;
  int linkage = -1;  // 0 Export, 1 Import
  std::string linkage_name;
  std::vector<uint32_t> param_attributes;  // FuncParamAttr values
  int spec_id = -1;
  int rounding = -1;  // FPRoundingMode
  bool saturated = false;
  bool no_signed_wrap = false, no_unsigned_wrap = false;
  uint32_t fast_math = 0;  // FPFastMathMode bits
  bool is_volatile = false, is_constant = false, packed = false;
};

struct ExecutionModes {
  uint32_t local_size[3] = {0, 0, 0};
  uint32_t local_size_hint[3] = {0, 0, 0};
  uint32_t vec_type_hint = 0;
  bool has_vec_type_hint = false;
};

class Reader {
 public:
  Reader(llvm::LLVMContext& context, const Module& spirv, const Target& target,
         const SpecValues& spec_values);
  // Builds the LLVM module; false with the reason in log().
  bool run(bool kernel_arg_info);
  std::unique_ptr<llvm::Module> take_module() { return std::move(module_); }
  const std::string& log() const { return log_; }

  // ---- reader.cpp ----
  bool fail(const std::string& message);  // records an error, returns false
  const Instruction* def(uint32_t id) const { return id < defs_.size() ? defs_[id] : nullptr; }
  const Decorations& decorations(uint32_t id) const;
  std::string name_of(uint32_t id) const;
  // A builtin's name as SPIR mangles it (U3AS1...) in the target's mangling.
  std::string target_builtin_name(const std::string& spir_name) const;
  // The result type id of a value.
  uint32_t type_id_of(uint32_t value) const;

  // ---- types.cpp ----
  bool translate_type(const Instruction& inst);
  bool translate_constant(const Instruction& inst);
  // OpSpecConstantOp: the operation translated as an instruction and folded to a constant (null
  // when it does not fold). Throws ReaderError.
  llvm::Constant* fold_spec_constant_op(const Instruction& inst);
  bool translate_global_variable(const Instruction& inst);
  llvm::Type* type(uint32_t id) const { return id < types_.size() ? types_[id] : nullptr; }
  uint32_t pointee(uint32_t pointer_type) const;
  uint32_t storage_class(uint32_t pointer_type) const;
  unsigned address_space(uint32_t storage_class) const;
  // The address space numbering of kernel_arg_addr_space (SPIR's, on every target).
  static unsigned spir_address_space(uint32_t storage_class);
  // OpenCL C spelling of a type for kernel_arg_type ("float4", "int*").
  std::string opencl_type_name(uint32_t type_id) const;
  // An OpTypeImage's OpenCL C name without "_t" ("image2d_array_depth") and its access qualifier
  // as kernel_arg_access_qual spells it ("read_only", "write_only", "read_write").
  std::string image_type_name(uint32_t image_type) const;
  std::string image_access(uint32_t image_type) const;

  // ---- instructions.cpp ----
  bool translate_function_body(size_t first, size_t end);
  llvm::Value* value(uint32_t id);

  // ---- opencl_std.cpp ----
  llvm::Value* extended_instruction(const Instruction& inst);
  // A call of an OpenCL C builtin by its mangled name (declared on first use).
  llvm::CallInst* call_builtin(const std::string& mangled, llvm::Type* result,
                               llvm::ArrayRef<llvm::Value*> args, bool pure);
  llvm::Value* printf_call(llvm::ArrayRef<llvm::Value*> args, llvm::Type* result);
  llvm::Value* conversion_call(const Instruction& inst, const Decorations& d, bool dst_signed,
                               bool src_signed);

  // ---- builtins.cpp ----
  // The BuiltIn a module-scope variable stands for (its decoration, or the translator's import
  // name `__spirv_BuiltIn*`), or -1.
  int builtin_of_variable(const Decorations& d) const;
  // The whole value of a BuiltIn variable of type `type` (a vector of each dimension's value).
  llvm::Value* builtin_variable_value(uint32_t builtin, llvm::Type* type);
  // One BuiltIn's value as `type`; `dimension` (any integer) for the per-dimension ones.
  llvm::Value* builtin_query(uint32_t builtin, llvm::Value* dimension, llvm::Type* type);
  // Gives an imported `__spirv_*` work-item query function (SPIR-V friendly IR) its body;
  // *defined false when `f` is none of those. False with the reason logged on failure.
  bool define_builtin_function(llvm::Function& f, bool* defined);

  // ---- kernels.cpp ----
  bool make_kernels(bool kernel_arg_info);
  void use_spir_function_convention();

  llvm::LLVMContext& context_;
  const Module& spirv_;
  const Target& target_;
  const SpecValues& spec_values_;
  bool nvptx_ = false;
  bool amdgpu_ = false;  // AMDGPU's address spaces (private 5) and kernel calling convention
  // SPIR-V out again (Level Zero): clang mangles address spaces by number for this target.
  bool spirv_target_ = false;
  std::unique_ptr<llvm::Module> module_;
  std::string log_;

  std::vector<const Instruction*> defs_;
  std::map<uint32_t, std::string> names_;
  std::map<uint32_t, Decorations> decorations_;
  std::map<uint32_t, ExecutionModes> modes_;
  std::vector<std::pair<uint32_t, std::string>> entry_points_;  // function id, kernel name
  uint32_t opencl_std_ = 0;                                     // OpExtInstImport "OpenCL.std"
  std::set<uint32_t> ignored_instruction_sets_;                 // debug info, non-semantic
  bool physical32_ = false;

  std::vector<llvm::Type*> types_;
  std::map<uint32_t, std::pair<uint32_t, uint32_t>> pointers_;  // type -> (storage, pointee)
  std::vector<llvm::Value*> values_;
  std::map<uint32_t, int> builtin_variables_;  // variable id -> BuiltIn
  std::set<const llvm::Function*> exported_;   // LinkageAttributes Export

  // The function being translated.
  llvm::Function* function_ = nullptr;
  std::unique_ptr<llvm::IRBuilder<>> builder_;
  // Where fold_spec_constant_op's builder points (what does not fold lands there); erased when
  // the module is complete.
  llvm::Function* constant_scratch_ = nullptr;
  llvm::BasicBlock* entry_ = nullptr;
  std::map<uint32_t, llvm::Value*> builtin_copies_;  // per function: builtin var -> alloca
};

// "_Z" and the name with its length: the start of a builtin's mangled name.
std::string with_length(const std::string& name);
// Mangles one builtin parameter given by its SPIR-V type id as the target's builtin library
// spells it (opencl_std.cpp); `subs` holds the substitution candidates seen so far (vectors,
// qualified pointees, pointers), in order.
std::string mangle_id(const Reader& r, uint32_t type_id, bool is_signed,
                      std::vector<std::string>& subs, bool pointee_const);

}  // namespace manifold::compiler::spirv
