; SPIR-V friendly LLVM IR (as SYCL and other SPIR-V producers write it): the builtins as
; addrspace(1) globals of the translator's names, read whole and by element, and as
; __spirv_* functions. The same queries in OpenCL C: spirv_friendly_builtins.cl.
target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024"
target triple = "spir64"

@__spirv_BuiltInGlobalInvocationId = external addrspace(1) constant <3 x i64>, align 32
@__spirv_BuiltInLocalInvocationId = external addrspace(1) constant <3 x i64>, align 32
@__spirv_BuiltInWorkgroupSize = external addrspace(1) constant <3 x i64>, align 32

declare spir_func i64 @_Z28__spirv_GlobalInvocationId_xv()
declare spir_func i64 @_Z27__spirv_LocalInvocationId_xv()
declare spir_func i64 @_Z21__spirv_WorkgroupId_xv()
declare spir_func i64 @_Z20__spirv_GlobalSize_xv()
declare spir_func i64 @_Z22__spirv_GlobalOffset_xv()
declare spir_func i64 @_Z23__spirv_NumWorkgroups_xv()
declare spir_func i32 @_Z15__spirv_WorkDimv()
declare spir_func i64 @_Z22__spirv_GlobalLinearIdv()
declare spir_func i64 @_Z28__spirv_LocalInvocationIndexv()

define spir_kernel void @ids(ptr addrspace(1) %out) {
entry:
  %whole = load <3 x i64>, ptr addrspace(1) @__spirv_BuiltInGlobalInvocationId, align 32
  %gid = extractelement <3 x i64> %whole, i64 0
  %lid_at = getelementptr inbounds <3 x i64>, ptr addrspace(1) @__spirv_BuiltInLocalInvocationId, i64 0, i64 0
  %lid = load i64, ptr addrspace(1) %lid_at, align 32
  %size_at = getelementptr inbounds i64, ptr addrspace(1) @__spirv_BuiltInWorkgroupSize, i64 0
  %lsize = load i64, ptr addrspace(1) %size_at, align 32
  %f_gid = call spir_func i64 @_Z28__spirv_GlobalInvocationId_xv()
  %f_lid = call spir_func i64 @_Z27__spirv_LocalInvocationId_xv()
  %f_group = call spir_func i64 @_Z21__spirv_WorkgroupId_xv()
  %f_gsize = call spir_func i64 @_Z20__spirv_GlobalSize_xv()
  %f_offset = call spir_func i64 @_Z22__spirv_GlobalOffset_xv()
  %f_groups = call spir_func i64 @_Z23__spirv_NumWorkgroups_xv()
  %f_dim32 = call spir_func i32 @_Z15__spirv_WorkDimv()
  %f_dim = zext i32 %f_dim32 to i64
  %f_linear = call spir_func i64 @_Z22__spirv_GlobalLinearIdv()
  %f_index = call spir_func i64 @_Z28__spirv_LocalInvocationIndexv()
  %item = sub i64 %gid, %f_offset
  %base = mul i64 %item, 12
  %p0 = getelementptr inbounds i64, ptr addrspace(1) %out, i64 %base
  store i64 %gid, ptr addrspace(1) %p0, align 8
  %p1 = getelementptr inbounds i64, ptr addrspace(1) %p0, i64 1
  store i64 %lid, ptr addrspace(1) %p1, align 8
  %p2 = getelementptr inbounds i64, ptr addrspace(1) %p0, i64 2
  store i64 %lsize, ptr addrspace(1) %p2, align 8
  %p3 = getelementptr inbounds i64, ptr addrspace(1) %p0, i64 3
  store i64 %f_gid, ptr addrspace(1) %p3, align 8
  %p4 = getelementptr inbounds i64, ptr addrspace(1) %p0, i64 4
  store i64 %f_lid, ptr addrspace(1) %p4, align 8
  %p5 = getelementptr inbounds i64, ptr addrspace(1) %p0, i64 5
  store i64 %f_group, ptr addrspace(1) %p5, align 8
  %p6 = getelementptr inbounds i64, ptr addrspace(1) %p0, i64 6
  store i64 %f_gsize, ptr addrspace(1) %p6, align 8
  %p7 = getelementptr inbounds i64, ptr addrspace(1) %p0, i64 7
  store i64 %f_offset, ptr addrspace(1) %p7, align 8
  %p8 = getelementptr inbounds i64, ptr addrspace(1) %p0, i64 8
  store i64 %f_groups, ptr addrspace(1) %p8, align 8
  %p9 = getelementptr inbounds i64, ptr addrspace(1) %p0, i64 9
  store i64 %f_dim, ptr addrspace(1) %p9, align 8
  %p10 = getelementptr inbounds i64, ptr addrspace(1) %p0, i64 10
  store i64 %f_linear, ptr addrspace(1) %p10, align 8
  %p11 = getelementptr inbounds i64, ptr addrspace(1) %p0, i64 11
  store i64 %f_index, ptr addrspace(1) %p11, align 8
  ret void
}
