// The generic address space on NVIDIA GPUs (OpenCL C 3.0's __opencl_c_generic_address_space):
// PTX's generic addressing is the hardware's, and isspacep tells the window a generic address
// falls in. Clang turns to_global/to_local/to_private into calls of __to_global and so on; the
// builtin library's get_fence (compiler/builtins/address_space.cl) asks
// __manifold_address_space_of.

// The pointer if it points into that address space, else that space's NULL.
__global void* __to_global(__generic void* pointer) {
  return __nvvm_isspacep_global(pointer) ? (__global void*)pointer : 0;
}
__local void* __to_local(__generic void* pointer) {
  return __nvvm_isspacep_shared(pointer) ? (__local void*)pointer : 0;
}
__private void* __to_private(__generic void* pointer) {
  return __nvvm_isspacep_local(pointer) ? (__private void*)pointer : 0;
}

// 0 private, 1 global, 2 local (the CPU's numbering, compiler/builtins/address_space.cl); -1 for
// what is none of them (NULL), which needs no fence.
int __manifold_address_space_of(const __generic void* pointer) {
  if (__nvvm_isspacep_shared(pointer)) return 2;
  if (__nvvm_isspacep_local(pointer)) return 0;
  return __nvvm_isspacep_global(pointer) ? 1 : -1;
}
