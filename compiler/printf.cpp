// OpenCL printf on the CPU.
//
// The kernel side: every call `printf(format, args...)` is rewritten into
//   __manifold_printf(format, descriptor, values)
// where `values` is a private struct holding the arguments and `descriptor` a constant string
// describing each argument's type and offset in it ("f8@0;i4@8;f4x4@16;"). This avoids
// variadic calls from JIT code and keeps vector arguments (%v4f) intact.
// The host side formats with snprintf, one conversion at a time, and writes each printf's
// output with a single fwrite so lines from different work-items never interleave.
#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>

#include <cctype>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "compiler/cpu_pipeline.h"
#include "compiler/printf_buffer.h"
#include "compiler/printf_format.h"

namespace manifold::compiler {

namespace {

// What a vector conversion (%v4hlf) of the format string says of its argument: the frontend
// passes vectors as the x86-64 ABI wants them (uchar2 as an i16, uint2 as an i64, float8 through
// a byval pointer without AVX), so the lanes and their width come from the format.
struct VectorConversion {
  unsigned lanes = 0;  // 0: not a vector conversion
  unsigned element_bytes = 0;
  char kind = 'i';
};

std::vector<VectorConversion> vector_conversions(llvm::StringRef format) {
  std::vector<VectorConversion> out;
  for (const PrintfConversion& c : parse_printf_format(format)) {
    VectorConversion v;
    v.kind = c.letter && std::strchr("fFeEgGaA", c.letter) ? 'f' : 'i';
    v.element_bytes = c.length == "hh"   ? 1
                      : c.length == "h"  ? 2
                      : c.length == "hl" ? 4
                      : c.length == "l"  ? 8
                                         : 0;
    v.lanes = v.element_bytes ? c.vector : 0;  // a vector conversion needs a length modifier
    out.push_back(v);
  }
  return out;
}

std::string constant_string(llvm::Value* value) {
  auto* global = llvm::dyn_cast<llvm::GlobalVariable>(value->stripPointerCasts());
  if (!global || !global->hasInitializer()) return {};
  auto* data = llvm::dyn_cast<llvm::ConstantDataSequential>(global->getInitializer());
  if (!data || !data->isString()) return {};
  return data->getAsString().str();
}

}  // namespace

void lower_printf_calls(llvm::Module& module) {
  llvm::Function* printf_fn = module.getFunction("printf");
  if (!printf_fn || printf_fn->use_empty()) return;
  llvm::LLVMContext& c = module.getContext();
  const llvm::DataLayout& layout = module.getDataLayout();
  llvm::PointerType* ptr = llvm::PointerType::get(c, 0);
  llvm::FunctionCallee host = module.getOrInsertFunction(
      "__manifold_printf",
      llvm::FunctionType::get(llvm::Type::getInt32Ty(c), {ptr, ptr, ptr}, false));

  std::vector<llvm::CallInst*> calls;
  for (llvm::User* user : printf_fn->users())
    if (auto* call = llvm::dyn_cast<llvm::CallInst>(user)) calls.push_back(call);
  for (llvm::CallInst* call : calls) {
    llvm::IRBuilder<> b(call);
    const std::vector<VectorConversion> conversions =
        vector_conversions(constant_string(call->getArgOperand(0)));
    // Each argument's field in the record, and what it holds: a vector conversion's argument
    // is kept as its raw bytes (whatever type the ABI passed it as), as the format describes it.
    std::vector<llvm::Type*> fields;
    std::vector<VectorConversion> as_vector;
    for (unsigned i = 1; i < call->arg_size(); ++i) {
      llvm::Value* arg = call->getArgOperand(i);
      VectorConversion v = i - 1 < conversions.size() ? conversions[i - 1] : VectorConversion{};
      const uint64_t bytes = uint64_t(v.element_bytes) * (v.lanes == 3 ? 4 : v.lanes);
      llvm::Type* passed = call->getParamByValType(i) ? call->getParamByValType(i) : arg->getType();
      if (v.lanes && layout.getTypeStoreSize(passed).getFixedValue() == bytes) {
        fields.push_back(llvm::ArrayType::get(b.getInt8Ty(), bytes));
      } else {
        v.lanes = 0;
        fields.push_back(arg->getType());
      }
      as_vector.push_back(v);
    }
    llvm::StructType* record = llvm::StructType::get(c, fields);
    const llvm::StructLayout* record_layout = layout.getStructLayout(record);

    std::string descriptor;
    for (unsigned i = 0; i < fields.size(); ++i) {
      const uint64_t offset = record_layout->getElementOffset(i).getFixedValue();
      if (as_vector[i].lanes) {
        descriptor += as_vector[i].kind;
        descriptor += std::to_string(as_vector[i].element_bytes);
        descriptor += 'x';
        descriptor += std::to_string(as_vector[i].lanes);
        descriptor += '@';
        descriptor += std::to_string(offset);
        descriptor += ';';
        continue;
      }
      llvm::Type* type = fields[i];
      unsigned lanes = 0;
      if (auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(type)) {
        lanes = vector->getNumElements();
        type = vector->getElementType();
      }
      char kind = type->isPointerTy() ? 'p' : type->isFloatingPointTy() ? 'f' : 'i';
      descriptor += kind;
      descriptor += std::to_string(layout.getTypeStoreSize(type).getFixedValue());
      if (lanes) {
        descriptor += 'x';
        descriptor += std::to_string(lanes);
      }
      descriptor += '@';
      descriptor += std::to_string(offset);
      descriptor += ';';
    }

    // The record lives in the entry block so the work-group pass treats it as private memory.
    llvm::Function* function = call->getFunction();
    llvm::IRBuilder<> entry(&function->getEntryBlock(), function->getEntryBlock().begin());
    llvm::AllocaInst* values = entry.CreateAlloca(record, nullptr, "printf.args");
    for (unsigned i = 0; i < fields.size(); ++i) {
      llvm::Value* arg = call->getArgOperand(i + 1);
      llvm::Value* field = b.CreateStructGEP(record, values, i);
      if (as_vector[i].lanes && call->getParamByValType(i + 1))
        b.CreateMemCpy(field, llvm::MaybeAlign(1), arg, llvm::MaybeAlign(1),
                       layout.getTypeStoreSize(fields[i]).getFixedValue());
      else if (as_vector[i].lanes)  // raw bytes: the field is not aligned for the passed type
        b.CreateAlignedStore(arg, field, llvm::MaybeAlign(1));
      else
        b.CreateStore(arg, field);
    }
    llvm::Value* format = call->getArgOperand(0);
    if (format->getType() != ptr) format = b.CreateAddrSpaceCast(format, ptr);
    llvm::Value* descriptor_string = b.CreateGlobalString(descriptor, "printf.descriptor");
    llvm::CallInst* replacement = b.CreateCall(host, {format, descriptor_string, values});
    call->replaceAllUsesWith(replacement);
    call->eraseFromParent();
  }
}

namespace {

struct ArgumentSlot {
  char kind = 0;       // 'i', 'f', 'p'
  unsigned bytes = 0;  // per element
  unsigned lanes = 0;  // 0: scalar
  size_t offset = 0;
};

// Parses one "f4x4@16;" entry; advances `cursor`.
bool next_argument(const char*& cursor, ArgumentSlot* slot) {
  if (!*cursor) return false;
  slot->kind = *cursor++;
  slot->bytes = std::strtoul(cursor, const_cast<char**>(&cursor), 10);
  slot->lanes = 0;
  if (*cursor == 'x') slot->lanes = std::strtoul(cursor + 1, const_cast<char**>(&cursor), 10);
  if (*cursor == '@') slot->offset = std::strtoull(cursor + 1, const_cast<char**>(&cursor), 10);
  if (*cursor == ';') ++cursor;
  return true;
}

void append_format(std::string& out, const char* spec, ...) {
  char buffer[512];
  va_list args;
  va_start(args, spec);
  int n = std::vsnprintf(buffer, sizeof buffer, spec, args);
  va_end(args);
  if (n < 0) return;
  if (size_t(n) < sizeof buffer) {
    out.append(buffer, n);
    return;
  }
  std::string big(n + 1, '\0');
  va_start(args, spec);
  std::vsnprintf(big.data(), big.size(), spec, args);
  va_end(args);
  out.append(big.data(), n);
}

// One element of an argument, converted for the conversion character.
void format_element(std::string& out, const std::string& spec_prefix, const std::string& length,
                    char conversion, const ArgumentSlot& slot, const char* element) {
  std::string spec = spec_prefix;
  if (conversion == 'd' || conversion == 'i' || conversion == 'u' || conversion == 'o' ||
      conversion == 'x' || conversion == 'X' || conversion == 'c') {
    int64_t signed_value = 0;
    uint64_t unsigned_value = 0;
    if (slot.kind == 'f') {
      double d = slot.bytes == 8 ? *reinterpret_cast<const double*>(element)
                                 : *reinterpret_cast<const float*>(element);
      signed_value = int64_t(d);
      unsigned_value = uint64_t(signed_value);
    } else {
      switch (slot.bytes) {
        case 1:
          signed_value = *reinterpret_cast<const int8_t*>(element);
          unsigned_value = *reinterpret_cast<const uint8_t*>(element);
          break;
        case 2:
          signed_value = *reinterpret_cast<const int16_t*>(element);
          unsigned_value = *reinterpret_cast<const uint16_t*>(element);
          break;
        case 4:
          signed_value = *reinterpret_cast<const int32_t*>(element);
          unsigned_value = *reinterpret_cast<const uint32_t*>(element);
          break;
        default:
          std::memcpy(&signed_value, element, 8);
          std::memcpy(&unsigned_value, element, 8);
          break;
      }
    }
    // The length modifier says how wide the value is in the kernel: truncate to it.
    if (length == "hh") {
      signed_value = int8_t(signed_value);
      unsigned_value = uint8_t(unsigned_value);
    } else if (length == "h") {
      signed_value = int16_t(signed_value);
      unsigned_value = uint16_t(unsigned_value);
    } else if (length == "l") {
      // 64 bits: as read.
    } else if (slot.bytes <= 4 || length.empty() || length == "hl") {
      signed_value = int32_t(signed_value);
      unsigned_value = uint32_t(unsigned_value);
    }
    if (conversion == 'c') {
      append_format(out, (spec + "c").c_str(), int(signed_value));
    } else if (conversion == 'd' || conversion == 'i') {
      append_format(out, (spec + "lld").c_str(), static_cast<long long>(signed_value));
    } else {
      append_format(out, (spec + "ll" + conversion).c_str(),
                    static_cast<unsigned long long>(unsigned_value));
    }
    return;
  }
  if (conversion == 'p') {
    const void* pointer;
    std::memcpy(&pointer, element, sizeof pointer);
    append_format(out, (spec + "p").c_str(), pointer);
    return;
  }
  if (conversion == 's') {
    const char* text;
    std::memcpy(&text, element, sizeof text);
    append_format(out, (spec + "s").c_str(), text ? text : "(null)");
    return;
  }
  // Floating-point conversions: f F e E g G a A.
  double value = 0;
  if (slot.kind == 'f') {
    if (slot.bytes == 8)
      std::memcpy(&value, element, 8);
    else if (slot.bytes == 4) {
      float f;
      std::memcpy(&f, element, 4);
      value = f;
    } else if (slot.bytes == 2) {
      uint16_t h;
      std::memcpy(&h, element, 2);
      _Float16 f;
      std::memcpy(&f, &h, 2);
      value = double(f);
    }
  } else {
    int64_t i = 0;
    std::memcpy(&i, element, std::min<unsigned>(slot.bytes, 8));
    value = double(i);
  }
  append_format(out, (spec + conversion).c_str(), value);
}

thread_local PrintfBuffer* current_printf_buffer = nullptr;

}  // namespace

bool PrintfBuffer::append(std::string_view text) {
  std::lock_guard<std::mutex> guard(lock_);
  if (text.size() > capacity_ - text_.size()) return false;
  text_.append(text);
  return true;
}

void PrintfBuffer::print(std::FILE* out) {
  const std::string text = take();
  if (text.empty()) return;
  std::fwrite(text.data(), 1, text.size(), out);
  std::fflush(out);
}

PrintfBufferScope::PrintfBufferScope(PrintfBuffer* buffer) : previous_(current_printf_buffer) {
  current_printf_buffer = buffer;
}

PrintfBufferScope::~PrintfBufferScope() { current_printf_buffer = previous_; }

}  // namespace manifold::compiler

// Called by kernels (resolved by the JIT to this definition). Returns 0, or -1 when the format
// and the arguments disagree.
extern "C" int __manifold_printf(const char* format, const char* descriptor, const char* values) {
  using namespace manifold::compiler;
  std::string out;
  const char* cursor = descriptor;
  int status = 0;
  for (const char* p = format; *p; ++p) {
    if (*p != '%') {
      out += *p;
      continue;
    }
    if (p[1] == '%') {
      out += '%';
      ++p;
      continue;
    }
    // %[flags][width][.precision][vector][length]conversion
    const char* start = p++;
    std::string prefix = "%";
    while (*p && std::strchr("-+ #0", *p)) prefix += *p++;
    while (*p >= '0' && *p <= '9') prefix += *p++;
    if (*p == '.') {
      prefix += *p++;
      while (*p >= '0' && *p <= '9') prefix += *p++;
    }
    unsigned lanes = 0;
    if (*p == 'v') {
      lanes = std::strtoul(p + 1, const_cast<char**>(&p), 10);
    }
    std::string length;
    while (*p == 'h' || *p == 'l') length += *p++;
    char conversion = *p;
    if (!conversion) {
      out.append(start);
      status = -1;
      break;
    }
    ArgumentSlot slot;
    if (!next_argument(cursor, &slot)) {
      status = -1;
      break;
    }
    const char* data = values + slot.offset;
    if (lanes) {
      const unsigned count = slot.lanes ? slot.lanes : 1;
      for (unsigned lane = 0; lane < std::min(lanes, count); ++lane) {
        if (lane) out += ',';
        format_element(out, prefix, length, conversion, slot, data + lane * slot.bytes);
      }
    } else {
      format_element(out, prefix, length, conversion, slot, data);
    }
  }
  if (PrintfBuffer* buffer = current_printf_buffer) return buffer->append(out) ? status : -1;
  static std::mutex output_lock;
  std::lock_guard<std::mutex> guard(output_lock);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return status;
}
