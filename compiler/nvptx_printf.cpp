// printf -> CUDA's vprintf (compiler/nvptx_printf.h).
#include "compiler/nvptx_printf.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Operator.h>

#include <algorithm>
#include <cctype>
#include <vector>

#include "compiler/nvptx_address_spaces.h"
#include "compiler/printf_format.h"

namespace manifold::compiler {

bool lower_printf(llvm::Module& module, std::string* log) {
  llvm::Function* printf = module.getFunction("printf");
  if (!printf) return true;
  llvm::LLVMContext& context = module.getContext();
  llvm::PointerType* generic = llvm::PointerType::get(context, 0);
  llvm::FunctionCallee vprintf = module.getOrInsertFunction(
      "vprintf",
      llvm::FunctionType::get(llvm::Type::getInt32Ty(context), {generic, generic}, false));
  const unsigned alloca_as = module.getDataLayout().getAllocaAddrSpace();
  for (llvm::User* user : llvm::SmallVector<llvm::User*, 8>(printf->users())) {
    auto* call = llvm::dyn_cast<llvm::CallInst>(user);
    if (!call || call->getCalledFunction() != printf) continue;
    llvm::IRBuilder<> builder(call);
    llvm::Value* format_value = call->getArgOperand(0)->stripPointerCasts();
    std::string format;
    auto* format_global = llvm::dyn_cast<llvm::GlobalVariable>(format_value);
    if (format_global && format_global->hasInitializer())
      if (auto* data =
              llvm::dyn_cast<llvm::ConstantDataSequential>(format_global->getInitializer()))
        if (data->isString()) format = data->getAsString().str();
    if (!format.empty() && format.back() == '\0') format.pop_back();

    // The values vprintf gets, in order, and the format rewritten for them.
    std::vector<llvm::Value*> values;
    std::string rewritten;
    const std::vector<PrintfConversion> conversions = parse_printf_format(format);
    size_t argument = 1, copied = 0;
    // vprintf misreads the hh length modifier (CTS printf length_specifier: "%hhd" printed
    // '%'): h and hh are dropped from the directives, and their values narrowed here to char or
    // short, then widened to int the way the conversion reads them.
    auto drop_short_length = [](std::string directive, const std::string& length) {
      if (length == "hh" || length == "h") directive.erase(directive.rfind(length), length.size());
      return directive;
    };
    auto promote = [&](llvm::Value* v, char letter,
                       const std::string& length = {}) -> llvm::Value* {
      llvm::Type* type = v->getType();
      if (type->isHalfTy() || type->isFloatTy())
        return builder.CreateFPExt(v, builder.getDoubleTy());
      if (type->isIntegerTy()) {
        const unsigned narrow = length == "hh" ? 8 : length == "h" ? 16 : 0;
        if (narrow && type->getIntegerBitWidth() > narrow) {
          v = builder.CreateTrunc(v, builder.getIntNTy(narrow));
          type = v->getType();
        }
      }
      if (type->isIntegerTy() && type->getIntegerBitWidth() < 32) {
        const bool is_signed = letter == 'd' || letter == 'i' || letter == 'c';
        return is_signed ? builder.CreateSExt(v, builder.getInt32Ty())
                         : builder.CreateZExt(v, builder.getInt32Ty());
      }
      if (type->isPointerTy() && type->getPointerAddressSpace() != 0)
        return builder.CreateAddrSpaceCast(v, generic);
      return v;
    };
    for (const PrintfConversion& c : conversions) {
      rewritten += format.substr(copied, c.begin - copied);
      copied = c.end;
      std::string directive = format.substr(c.begin, c.end - c.begin);
      if (argument >= call->arg_size()) {
        rewritten += directive;
        continue;
      }
      llvm::Value* v = call->getArgOperand(argument++);
      if (c.vector == 0) {
        rewritten += drop_short_length(directive, c.length);
        values.push_back(promote(v, c.letter, c.length));
        continue;
      }
      // %v4hlf -> %f,%f,%f,%f (hl means 32-bit elements; h and hh stay for short and char).
      std::string element = directive;
      const size_t v_at = element.find('v');
      size_t digits_end = v_at + 1;
      while (digits_end < element.size() &&
             std::isdigit(static_cast<unsigned char>(element[digits_end])))
        ++digits_end;
      element.erase(v_at, digits_end - v_at);
      if (c.length == "hl") element.erase(element.find("hl"), 2);
      element = drop_short_length(element, c.length);
      auto* vector_type = llvm::dyn_cast<llvm::FixedVectorType>(v->getType());
      const unsigned lanes = vector_type ? vector_type->getNumElements() : 1;
      for (unsigned lane = 0; lane < lanes; ++lane) {
        if (lane) rewritten += ',';
        rewritten += element;
        llvm::Value* e = vector_type ? builder.CreateExtractElement(v, lane) : v;
        values.push_back(promote(e, c.letter, c.length));
      }
    }
    rewritten += format.substr(std::min(copied, format.size()));
    if (format.empty()) {  // not a constant format: pass the arguments as they are
      for (size_t i = 1; i < call->arg_size(); ++i)
        values.push_back(promote(call->getArgOperand(i), 'd'));
    }

    llvm::Value* format_arg;
    if (!format.empty()) {
      llvm::Constant* text = llvm::ConstantDataArray::getString(context, rewritten, true);
      auto* global = new llvm::GlobalVariable(
          module, text->getType(), true, llvm::GlobalValue::PrivateLinkage, text,
          ".manifold_printf_format", nullptr, llvm::GlobalValue::NotThreadLocal, kConstantAS);
      format_arg = builder.CreateAddrSpaceCast(global, generic);
    } else {
      format_arg = builder.CreateAddrSpaceCast(call->getArgOperand(0), generic);
    }
    // Packed arguments, each at its natural alignment (what vprintf reads).
    llvm::Value* buffer = llvm::ConstantPointerNull::get(generic);
    if (!values.empty()) {
      std::vector<llvm::Type*> fields;
      for (llvm::Value* v : values) fields.push_back(v->getType());
      auto* record = llvm::StructType::get(context, fields);
      llvm::IRBuilder<> entry(&call->getFunction()->getEntryBlock(),
                              call->getFunction()->getEntryBlock().begin());
      llvm::AllocaInst* slot = entry.CreateAlloca(record, alloca_as, nullptr, "printf_args");
      for (unsigned i = 0; i < values.size(); ++i)
        builder.CreateStore(values[i], builder.CreateStructGEP(record, slot, i));
      buffer =
          alloca_as ? builder.CreateAddrSpaceCast(slot, generic) : static_cast<llvm::Value*>(slot);
    }
    builder.CreateCall(vprintf, {format_arg, buffer});
    // OpenCL's printf returns 0 on success.
    call->replaceAllUsesWith(builder.getInt32(0));
    call->eraseFromParent();
  }
  if (printf->use_empty()) printf->eraseFromParent();
  (void)log;
  return true;
}

}  // namespace manifold::compiler
