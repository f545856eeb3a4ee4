#include "backends/level_zero/ze_program.h"

#include "backends/level_zero/ze_queue.h"
#include "core/error.h"
#include "core/log.h"
#include "core/operations.h"

namespace manifold::level_zero {

std::shared_ptr<ZeProgram> ZeProgram::load(LevelZeroDevice& device, std::span<const uint8_t> spirv,
                                           std::string* error) {
  const Api& a = device.api();
  ze_module_desc_t desc;
  desc.format = ZE_MODULE_FORMAT_IL_SPIRV;
  desc.inputSize = spirv.size();
  desc.pInputModule = spirv.data();
  desc.pBuildFlags = "";
  ze_module_handle_t module = nullptr;
  ze_module_build_log_handle_t log = nullptr;
  const ze_result_t r = a.zeModuleCreate(device.context(), device.handle(), &desc, &module, &log);
  std::string text;
  if (log) {
    size_t size = 0;
    if (a.zeModuleBuildLogGetString(log, &size, nullptr) == ZE_RESULT_SUCCESS && size > 1) {
      text.resize(size);
      if (a.zeModuleBuildLogGetString(log, &size, text.data()) == ZE_RESULT_SUCCESS)
        text.resize(std::min(size, text.size()) - 1);  // the count includes the terminator
      else
        text.clear();
    }
    a.zeModuleBuildLogDestroy(log);
  }
  if (r != ZE_RESULT_SUCCESS) {
    if (module) a.zeModuleDestroy(module);
    *error = "zeModuleCreate: " + result_text(r) + (text.empty() ? "" : "\n" + text);
    return nullptr;
  }
  if (!text.empty()) log_debug("level_zero: module build log: %s", text.c_str());
  return std::make_shared<ZeProgram>(a, module);
}

ZeProgram::~ZeProgram() {
  for (auto& [name, kernel] : kernels_) api_.zeKernelDestroy(kernel->handle);
  api_.zeModuleDestroy(module_);
}

const void* ZeProgram::kernel_handle(std::string_view name) const {
  std::lock_guard lock(mutex_);
  if (auto it = kernels_.find(name); it != kernels_.end()) return it->second.get();
  const std::string key(name);
  ze_kernel_desc_t desc;
  desc.pKernelName = key.c_str();
  ze_kernel_handle_t handle = nullptr;
  if (ze_result_t r = api_.zeKernelCreate(module_, &desc, &handle); r != ZE_RESULT_SUCCESS) {
    log_debug("level_zero: zeKernelCreate '%s': %s", key.c_str(), result_text(r).c_str());
    return nullptr;
  }
  auto kernel = std::make_unique<ZeKernel>();
  kernel->handle = handle;
  return kernels_.emplace(key, std::move(kernel)).first->second.get();
}

void launch_kernel(LevelZeroDevice& device, CommandStream& stream, const KernelOp& op) {
  const Api& a = device.api();
  const compiler::KernelInfo& info = op.launch->info;
  auto* kernel = static_cast<ZeKernel*>(const_cast<void*>(op.launch->handle));
  if (!kernel) fail(CL_INVALID_KERNEL, "kernel '" + info.name + "' is not in the loaded module");
  const compiler::NDRange& r = op.range;
  check(r.whole(), CL_INVALID_OPERATION, "Level Zero devices run only whole NDRanges yet");
  ze_group_count_t groups{1, 1, 1};
  uint32_t* counts[3] = {&groups.groupCountX, &groups.groupCountY, &groups.groupCountZ};
  uint32_t local[3] = {1, 1, 1}, offset[3] = {0, 0, 0};
  for (unsigned d = 0; d < r.work_dim; ++d) {
    check(r.global_offset[d] <= UINT32_MAX, CL_INVALID_GLOBAL_OFFSET,
          "Level Zero takes global work offsets below 2^32 only");
    offset[d] = static_cast<uint32_t>(r.global_offset[d]);
    check(r.local_size[d] && r.global_size[d] % r.local_size[d] == 0, CL_INVALID_WORK_GROUP_SIZE,
          "Level Zero devices run only uniform work-groups yet");
    local[d] = static_cast<uint32_t>(r.local_size[d]);
    *counts[d] = static_cast<uint32_t>(r.global_size[d] / r.local_size[d]);
  }
  std::unique_lock lock(kernel->mutex);
  for (size_t i = 0; i < op.args->values.size(); ++i) {
    const KernelArgValue& arg = op.args->values[i];
    const auto index = static_cast<uint32_t>(i);
    ze_result_t result = ZE_RESULT_SUCCESS;
    switch (info.args[i].kind) {
      case compiler::ArgKind::Buffer: {
        void* pointer = arg.buffer ? device.address(*arg.buffer) : arg.svm_pointer;
        result = a.zeKernelSetArgumentValue(kernel->handle, index, sizeof pointer, &pointer);
        break;
      }
      case compiler::ArgKind::Local:
        // A __local argument's value is its size; no bytes.
        result = a.zeKernelSetArgumentValue(kernel->handle, index, arg.local_size, nullptr);
        break;
      case compiler::ArgKind::Value:
        result =
            a.zeKernelSetArgumentValue(kernel->handle, index, arg.bytes.size(), arg.bytes.data());
        break;
      default:
        fail(CL_INVALID_OPERATION, "Level Zero devices take no image or sampler arguments yet");
    }
    check_ze(result, CL_INVALID_KERNEL_ARGS, "zeKernelSetArgumentValue");
  }
  check_ze(a.zeKernelSetGroupSize(kernel->handle, local[0], local[1], local[2]),
           CL_INVALID_WORK_GROUP_SIZE, "zeKernelSetGroupSize");
  // The offset is kernel state too: set for every launch where the driver has offsets (an
  // earlier launch's offset must not stay).
  if (a.zeKernelSetGlobalOffsetExp)
    check_ze(a.zeKernelSetGlobalOffsetExp(kernel->handle, offset[0], offset[1], offset[2]),
             CL_INVALID_GLOBAL_OFFSET, "zeKernelSetGlobalOffsetExp");
  else
    check(!(offset[0] | offset[1] | offset[2]), CL_INVALID_OPERATION,
          "the Level Zero loader has no global offsets (zeKernelSetGlobalOffsetExp)");
  stream.launch(kernel->handle, groups, lock);
}

}  // namespace manifold::level_zero
