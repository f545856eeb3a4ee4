#!/bin/sh
# Remakes the committed modules from their sources with Debian 12's clang-15, llvm-spirv-15
# (apt-get install clang-15 llvm-spirv-15) and SPIRV-Tools' spirv-as: the SPIR-V that the
# LLVM/SPIR-V Translator produces, which the tests read without needing either tool.
set -e
cd "$(dirname "$0")"
translate() {  # translate <source file> <module> <clang flags> [llvm-spirv flags]
  bc=$(mktemp --suffix=.bc)
  clang-15 -target spir64 $3 -c -emit-llvm "$1" -o "$bc"
  llvm-spirv-15 $4 "$bc" -o "$2.spv"
  rm -f "$bc"
}
# The translator's defaults (SPIR-V 1.4 where the code has nsw arithmetic or 1.4's features).
for source in vector_add work_item_queries indexing_2d local_reduction atomics math_builtins \
              vload_vstore struct_argument printf; do
  translate $source.cl $source "-cl-std=CL1.2 -O2"
done
# Without optimization: every builtin read in a function of its own, values through allocas.
translate helper_function.cl helper_function "-cl-std=CL1.2 -O0"
translate helper_function.cl helper_function_o2 "-cl-std=CL1.2 -O2"
# Debug information (OpenCL.DebugInfo.100).
translate vector_add.cl vector_add_debug_info "-cl-std=CL1.2 -O2 -g -fdebug-prefix-map=$(pwd)=."
# Every extension the translator knows: SPV_KHR_expect_assume here.
translate expect_assume.cl expect_assume_all_extensions "-cl-std=CL1.2 -O2" "-spirv-ext=+all"
# At most SPIR-V 1.2 (what the devices report), extensions instead of 1.4's decorations.
translate local_reduction.cl local_reduction_spirv_1_2 "-cl-std=CL1.2 -O2" \
  "--spirv-max-version=1.2 -spirv-ext=+all"
# OpenCL C 2.0: generic address space.
translate generic_address_space.cl generic_address_space "-cl-std=CL2.0 -O2"
# SPIR-V friendly LLVM IR: builtins as addrspace(1) globals and __spirv_* functions.
translate spirv_friendly_builtins.ll spirv_friendly_builtins "" "--spirv-max-version=1.2"
# Hand-written: the forms of other producers.
for source in all_builtins all_subgroup_builtins decoration_groups vector_add_global_builtin; do
  spirv-as --target-env spv1.0 $source.spvasm -o $source.spv
done
