// OpenCL's BuiltIns (work-item and sub-group queries) in every form producers write them: Input
// variables decorated BuiltIn (loaded whole, by element, through any access chain, in any
// function), the same variables in another storage class or known only by their
// `__spirv_BuiltIn*` import name (SPIRV-LLVM-Translator's), and imported functions of SPIR-V
// friendly LLVM IR (`__spirv_GlobalInvocationId_x()`, `__spirv_BuiltInGlobalInvocationId(i)`).
// Each becomes the OpenCL C builtin the target's library defines (get_global_id...).
#include <llvm/IR/Constants.h>

#include <cctype>
#include <optional>
#include <spirv/unified1/spirv.hpp>

#include "compiler/spirv/instructions.h"
#include "compiler/spirv/names.h"
#include "compiler/spirv/reader_impl.h"

namespace manifold::compiler::spirv {
namespace {

// The OpenCL C builtin that answers a BuiltIn: per dimension (size_t f(uint)) or one scalar.
struct BuiltinQuery {
  uint32_t builtin;
  const char* spirv_name;  // as SPIR-V's BuiltIn enumerant spells it
  const char* mangled;     // the OpenCL C builtin
  bool per_dimension;
  bool sub_group;  // a uint sub-group query, where the device has sub-groups
};

constexpr BuiltinQuery kQueries[] = {
    {spv::BuiltInGlobalInvocationId, "GlobalInvocationId", "_Z13get_global_idj", true, false},
    {spv::BuiltInLocalInvocationId, "LocalInvocationId", "_Z12get_local_idj", true, false},
    {spv::BuiltInWorkgroupId, "WorkgroupId", "_Z12get_group_idj", true, false},
    {spv::BuiltInWorkgroupSize, "WorkgroupSize", "_Z14get_local_sizej", true, false},
    {spv::BuiltInEnqueuedWorkgroupSize, "EnqueuedWorkgroupSize", "_Z23get_enqueued_local_sizej",
     true, false},
    {spv::BuiltInNumWorkgroups, "NumWorkgroups", "_Z14get_num_groupsj", true, false},
    {spv::BuiltInGlobalSize, "GlobalSize", "_Z15get_global_sizej", true, false},
    {spv::BuiltInGlobalOffset, "GlobalOffset", "_Z17get_global_offsetj", true, false},
    {spv::BuiltInWorkDim, "WorkDim", "_Z12get_work_dimv", false, false},
    {spv::BuiltInGlobalLinearId, "GlobalLinearId", "_Z20get_global_linear_idv", false, false},
    {spv::BuiltInLocalInvocationIndex, "LocalInvocationIndex", "_Z19get_local_linear_idv", false,
     false},
    {spv::BuiltInSubgroupSize, "SubgroupSize", "_Z18get_sub_group_sizev", false, true},
    {spv::BuiltInSubgroupMaxSize, "SubgroupMaxSize", "_Z22get_max_sub_group_sizev", false, true},
    {spv::BuiltInNumSubgroups, "NumSubgroups", "_Z18get_num_sub_groupsv", false, true},
    {spv::BuiltInNumEnqueuedSubgroups, "NumEnqueuedSubgroups", "_Z27get_enqueued_num_sub_groupsv",
     false, true},
    {spv::BuiltInSubgroupId, "SubgroupId", "_Z16get_sub_group_idv", false, true},
    {spv::BuiltInSubgroupLocalInvocationId, "SubgroupLocalInvocationId",
     "_Z22get_sub_group_local_idv", false, true},
};

const BuiltinQuery* query_of(uint32_t builtin) {
  for (const BuiltinQuery& q : kQueries)
    if (q.builtin == builtin) return &q;
  return nullptr;
}

const BuiltinQuery* query_named(std::string_view spirv_name) {
  for (const BuiltinQuery& q : kQueries)
    if (spirv_name == q.spirv_name) return &q;
  return nullptr;
}

// A builtin function's name without its Itanium mangling: "_Z28__spirv_GlobalInvocationId_xv"
// gives "__spirv_GlobalInvocationId_x" and parameters "v". Unmangled names are taken as they
// are (parameters unknown: empty).
std::string_view demangled_name(std::string_view mangled, std::string_view* parameters) {
  *parameters = {};
  if (mangled.substr(0, 2) != "_Z") return mangled;
  size_t at = 2, length = 0;
  while (at < mangled.size() && std::isdigit(static_cast<unsigned char>(mangled[at])))
    length = length * 10 + static_cast<size_t>(mangled[at++] - '0');
  if (length == 0 || at + length > mangled.size()) return {};
  *parameters = mangled.substr(at + length);
  return mangled.substr(at, length);
}

// What an imported `__spirv_*` function of SPIR-V friendly IR answers: the query and, for
// per-dimension queries, the dimension its name fixes (0-2) or -1 when it takes the dimension as
// its parameter.
struct BuiltinFunction {
  const BuiltinQuery* query = nullptr;
  int dimension = -1;
};

std::optional<BuiltinFunction> builtin_function(std::string_view name,
                                                const llvm::FunctionType& type) {
  std::string_view parameters;
  std::string_view plain = demangled_name(name, &parameters);
  constexpr std::string_view kPrefix = "__spirv_";
  if (plain.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  plain.remove_prefix(kPrefix.size());
  BuiltinFunction f;
  // __spirv_BuiltInGlobalInvocationId(int dimension) and __spirv_BuiltInWorkDim().
  if (plain.substr(0, 7) == "BuiltIn") {
    f.query = query_named(plain.substr(7));
    if (!f.query) return std::nullopt;
    const bool takes_dimension = type.getNumParams() == 1 && type.getParamType(0)->isIntegerTy();
    if (f.query->per_dimension != takes_dimension) return std::nullopt;
    return f;
  }
  // __spirv_GlobalInvocationId_x() and __spirv_WorkDim().
  if (plain.size() > 2 && plain[plain.size() - 2] == '_' && plain.back() >= 'x' &&
      plain.back() <= 'z') {
    f.query = query_named(plain.substr(0, plain.size() - 2));
    f.dimension = plain.back() - 'x';
    if (!f.query || !f.query->per_dimension) return std::nullopt;
  } else {
    f.query = query_named(plain);
    if (!f.query || f.query->per_dimension) return std::nullopt;
  }
  if (type.getNumParams() != 0 || (!parameters.empty() && parameters != "v")) return std::nullopt;
  return f;
}

}  // namespace

int Reader::builtin_of_variable(const Decorations& d) const {
  if (d.builtin >= 0) return d.builtin;
  // Imported by the translator's name for it, without the decoration.
  constexpr std::string_view kPrefix = "__spirv_BuiltIn";
  if (d.linkage != 1 || d.linkage_name.compare(0, kPrefix.size(), kPrefix) != 0) return -1;
  const BuiltinQuery* q = query_named(std::string_view(d.linkage_name).substr(kPrefix.size()));
  return q ? static_cast<int>(q->builtin) : -1;
}

llvm::Value* Reader::builtin_query(uint32_t builtin, llvm::Value* dimension, llvm::Type* t) {
  const BuiltinQuery* q = query_of(builtin);
  if (!q) throw ReaderError("unsupported BuiltIn " + builtin_name(builtin));
  if (q->sub_group && !target_.has_feature("__opencl_c_subgroups"))
    throw ReaderError("BuiltIn " + builtin_name(builtin) + " on a device without sub-groups");
  llvm::IRBuilder<>& b = *builder_;
  if (!q->per_dimension) {
    llvm::Type* returns =
        builtin == spv::BuiltInWorkDim || q->sub_group ? b.getInt32Ty() : b.getInt64Ty();
    return b.CreateZExtOrTrunc(call_builtin(q->mangled, returns, {}, true), t);
  }
  if (!dimension) throw ReaderError("BuiltIn " + builtin_name(builtin) + " without a dimension");
  llvm::Value* d = b.CreateZExtOrTrunc(dimension, b.getInt32Ty());
  return b.CreateZExtOrTrunc(call_builtin(q->mangled, b.getInt64Ty(), {d}, true), t);
}

llvm::Value* Reader::builtin_variable_value(uint32_t builtin, llvm::Type* t) {
  const BuiltinQuery* q = query_of(builtin);
  if (!q || !q->per_dimension) return builtin_query(builtin, nullptr, t);
  auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(t);
  // A scalar of a per-dimension BuiltIn: its first dimension.
  if (!vector) return builtin_query(builtin, builder_->getInt32(0), t);
  llvm::Value* v = llvm::PoisonValue::get(t);
  for (unsigned d = 0; d < vector->getNumElements(); ++d)
    v = builder_->CreateInsertElement(
        v, builtin_query(builtin, builder_->getInt32(d), vector->getElementType()), d);
  return v;
}

bool Reader::define_builtin_function(llvm::Function& f, bool* defined) {
  const std::optional<BuiltinFunction> known =
      builtin_function(f.getName().str(), *f.getFunctionType());
  *defined = known.has_value();
  if (!known) return true;
  if (!f.getReturnType()->isIntegerTy())
    return fail("builtin function '" + f.getName().str() + "' returns no integer");
  f.setLinkage(llvm::GlobalValue::InternalLinkage);
  f.addFnAttr(llvm::Attribute::AlwaysInline);
  builder_ = std::make_unique<llvm::IRBuilder<>>(llvm::BasicBlock::Create(context_, "entry", &f));
  try {
    llvm::Value* dimension = known->dimension >= 0
                                 ? builder_->getInt32(static_cast<uint32_t>(known->dimension))
                             : f.arg_size() ? static_cast<llvm::Value*>(f.getArg(0))
                                            : nullptr;
    builder_->CreateRet(builtin_query(known->query->builtin, dimension, f.getReturnType()));
  } catch (const ReaderError& e) {
    return fail(std::string(e.what()) + " (function '" + f.getName().str() + "')");
  }
  return true;
}

}  // namespace manifold::compiler::spirv
