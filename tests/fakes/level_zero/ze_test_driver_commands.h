// The command parts of the Level Zero test driver (ze_test_driver_commands.cpp): contexts,
// memory, immediate command lists, events, modules and kernels; imported host memory
// (ze_test_driver_imports.cpp).
#pragma once

#include <level_zero/ze_ddi.h>

namespace ze_test {

ze_result_t ZE_APICALL device_pci_properties(ze_device_handle_t device, ze_pci_ext_properties_t* p);
ze_result_t ZE_APICALL device_global_timestamps(ze_device_handle_t device, uint64_t* host,
                                                uint64_t* device_timestamp);
void fill_context(ze_context_dditable_t& t);
void fill_memory(ze_mem_dditable_t& t);
void fill_command_list(ze_command_list_dditable_t& t);
void fill_event_pool(ze_event_pool_dditable_t& t);
void fill_event(ze_event_dditable_t& t);
void fill_module(ze_module_dditable_t& t);
void fill_build_log(ze_module_build_log_dditable_t& t);
void fill_kernel(ze_kernel_dditable_t& t);
void fill_kernel_exp(ze_kernel_exp_dditable_t& t);

// Imported host memory (ze_test_driver_imports.cpp): zexDriverImportExternalPointer and
// zexDriverReleaseImportedPointer past the driver handle's check, and whether all of
// [ptr, ptr + size) lies in one imported range.
ze_result_t import_host_range(void* ptr, size_t size);
ze_result_t release_host_range(void* ptr);
bool imported(const void* ptr, size_t size);

}  // namespace ze_test
