#include "bench_spirv.h"

#include <spirv/unified1/spirv.hpp>

#include <functional>
#include <initializer_list>

namespace manifold_tool {
namespace {

// Appends instructions: word count and opcode first, then the operands.
class ModuleWriter {
 public:
  explicit ModuleWriter(std::vector<uint32_t>& words) : words_(words) {}
  void add(spv::Op op, std::initializer_list<uint32_t> operands) {
    words_.push_back(static_cast<uint32_t>(operands.size() + 1) << 16 | op);
    words_.insert(words_.end(), operands);
  }
  // An instruction whose operands end with a literal string (nul-terminated, padded to words).
  void add_with_string(spv::Op op, std::initializer_list<uint32_t> before, const std::string& text,
                       std::initializer_list<uint32_t> after) {
    std::vector<uint32_t> packed((text.size() + 4) / 4, 0);
    for (size_t i = 0; i < text.size(); ++i)
      packed[i / 4] |= static_cast<uint32_t>(static_cast<unsigned char>(text[i])) << (8 * (i % 4));
    const size_t count = 1 + before.size() + packed.size() + after.size();
    words_.push_back(static_cast<uint32_t>(count) << 16 | op);
    words_.insert(words_.end(), before);
    words_.insert(words_.end(), packed.begin(), packed.end());
    words_.insert(words_.end(), after);
  }

 private:
  std::vector<uint32_t>& words_;
};

}  // namespace

std::vector<uint32_t> saxpy_spirv_module(const std::string& nonce) {
  enum Id : uint32_t {
    kVoid = 1,
    kFloat,
    kUlong,
    kUlong3,
    kInputPointer,
    kGlobalFloatPointer,
    kKernelType,
    kGlobalId,
    kKernel,
    kY,
    kX,
    kA,
    kEntry,
    kIds,
    kIndex,
    kXAddress,
    kXValue,
    kYAddress,
    kYValue,
    kProduct,
    kSum,
    kBound
  };
  const uint32_t generator = static_cast<uint32_t>(std::hash<std::string>{}(nonce));
  std::vector<uint32_t> words = {spv::MagicNumber, 0x00010000, generator, kBound, 0};
  ModuleWriter m(words);
  m.add(spv::OpCapability, {spv::CapabilityAddresses});
  m.add(spv::OpCapability, {spv::CapabilityKernel});
  m.add(spv::OpCapability, {spv::CapabilityInt64});
  m.add(spv::OpMemoryModel, {spv::AddressingModelPhysical64, spv::MemoryModelOpenCL});
  m.add_with_string(spv::OpEntryPoint, {spv::ExecutionModelKernel, kKernel}, "saxpy", {kGlobalId});
  m.add(spv::OpDecorate, {kGlobalId, spv::DecorationBuiltIn, spv::BuiltInGlobalInvocationId});
  m.add(spv::OpDecorate, {kGlobalId, spv::DecorationConstant});
  m.add(spv::OpTypeVoid, {kVoid});
  m.add(spv::OpTypeFloat, {kFloat, 32});
  m.add(spv::OpTypeInt, {kUlong, 64, 0});
  m.add(spv::OpTypeVector, {kUlong3, kUlong, 3});
  m.add(spv::OpTypePointer, {kInputPointer, spv::StorageClassInput, kUlong3});
  m.add(spv::OpTypePointer, {kGlobalFloatPointer, spv::StorageClassCrossWorkgroup, kFloat});
  m.add(spv::OpTypeFunction,
        {kKernelType, kVoid, kGlobalFloatPointer, kGlobalFloatPointer, kFloat});
  m.add(spv::OpVariable, {kInputPointer, kGlobalId, spv::StorageClassInput});
  m.add(spv::OpFunction, {kVoid, kKernel, spv::FunctionControlMaskNone, kKernelType});
  m.add(spv::OpFunctionParameter, {kGlobalFloatPointer, kY});
  m.add(spv::OpFunctionParameter, {kGlobalFloatPointer, kX});
  m.add(spv::OpFunctionParameter, {kFloat, kA});
  m.add(spv::OpLabel, {kEntry});
  m.add(spv::OpLoad, {kUlong3, kIds, kGlobalId});
  m.add(spv::OpCompositeExtract, {kUlong, kIndex, kIds, 0});
  m.add(spv::OpInBoundsPtrAccessChain, {kGlobalFloatPointer, kXAddress, kX, kIndex});
  m.add(spv::OpLoad, {kFloat, kXValue, kXAddress, spv::MemoryAccessAlignedMask, 4});
  m.add(spv::OpInBoundsPtrAccessChain, {kGlobalFloatPointer, kYAddress, kY, kIndex});
  m.add(spv::OpLoad, {kFloat, kYValue, kYAddress, spv::MemoryAccessAlignedMask, 4});
  m.add(spv::OpFMul, {kFloat, kProduct, kA, kXValue});
  m.add(spv::OpFAdd, {kFloat, kSum, kProduct, kYValue});
  m.add(spv::OpStore, {kYAddress, kSum, spv::MemoryAccessAlignedMask, 4});
  m.add(spv::OpReturn, {});
  m.add(spv::OpFunctionEnd, {});
  return words;
}

}  // namespace manifold_tool
