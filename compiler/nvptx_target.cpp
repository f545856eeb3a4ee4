// What an NVIDIA GPU of a compute capability is to OpenCL: the PTX ISA and SM the NVPTX pipeline
// targets, the OpenCL C features and the extensions.
#include <string>

#include "compiler/compiler.h"

namespace manifold::compiler {

Target nvptx_target(unsigned major, unsigned minor) {
  // The lowest PTX ISA version that knows each SM (LLVM refuses a lower one), and at least 6.2
  // (activemask, for the non-uniform sub-group functions: compiler/nvptx/subgroups.cl).
  struct Sm {
    unsigned sm, ptx;
  };
  static const Sm table[] = {{50, 62}, {52, 62}, {53, 62},  {60, 62},  {61, 62}, {62, 62},
                             {70, 62}, {72, 62}, {75, 63},  {80, 70},  {86, 71}, {87, 74},
                             {89, 78}, {90, 78}, {100, 86}, {101, 86}, {120, 87}};
  const unsigned wanted = major * 10 + minor;
  Sm chosen = table[0];
  // An SM newer than LLVM knows runs the PTX of the newest one it does (the driver JITs it).
  for (const Sm& s : table)
    if (s.sm <= wanted) chosen = s;
  Target t;
  t.triple = "nvptx64-nvidia-cuda";
  t.cpu = "sm_" + std::to_string(chosen.sm);
  t.features = "+ptx" + std::to_string(chosen.ptx);
  t.opencl_c_version = 300;
  // Generic addressing, scoped atomics with every order (compiler/nvptx_atomics.h), module
  // globals and the collectives (compiler/nvptx/*.cl) are PTX's own. Images:
  // compiler/builtins/image.cl over the descriptors of compiler/image_abi.h, as on the CPU.
  // fp16: compiler/builtins/half.cl; sm_53 and later do half arithmetic natively, older SMs in
  // float (LLVM promotes it).
  t.opencl_c_features = {
      "__opencl_c_int64",
      "__opencl_c_fp64",
      "__opencl_c_generic_address_space",
      "__opencl_c_program_scope_global_variables",
      "__opencl_c_atomic_order_acq_rel",
      "__opencl_c_atomic_order_seq_cst",
      "__opencl_c_atomic_scope_device",
      "__opencl_c_atomic_scope_all_devices",
      "__opencl_c_work_group_collective_functions",
      "__opencl_c_images",
      "__opencl_c_read_write_images",
      "__opencl_c_3d_image_writes",
      "__opencl_c_fp16",
  };
  t.extensions = {
      "cl_khr_byte_addressable_store",    "cl_khr_fp64",
      "cl_khr_global_int32_base_atomics", "cl_khr_global_int32_extended_atomics",
      "cl_khr_local_int32_base_atomics",  "cl_khr_local_int32_extended_atomics",
      "cl_khr_int64_base_atomics",        "cl_khr_int64_extended_atomics",
      "cl_khr_3d_image_writes",
  };
  t.extensions.push_back("cl_khr_fp16");
  // Sub-groups are warps (compiler/nvptx/subgroups.cl), which make independent forward progress:
  // cl_khr_subgroups too.
  t.opencl_c_features.push_back("__opencl_c_subgroups");
  t.sub_group_size = 32;
  for (const char* extension :
       {"cl_khr_subgroups", "cl_khr_subgroup_extended_types", "cl_khr_subgroup_non_uniform_vote",
        "cl_khr_subgroup_ballot", "cl_khr_subgroup_non_uniform_arithmetic",
        "cl_khr_subgroup_shuffle", "cl_khr_subgroup_shuffle_relative",
        "cl_khr_subgroup_clustered_reduce"})
    t.extensions.push_back(extension);
  t.fp64 = true;
  t.fp16 = true;
  t.images = true;
  t.spirv = true;  // the SPIR-V reader's IR takes this pipeline like clang's
  return t;
}

}  // namespace manifold::compiler
