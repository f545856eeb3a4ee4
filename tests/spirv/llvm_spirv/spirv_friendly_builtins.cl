// What spirv_friendly_builtins.ll computes, in OpenCL C.
kernel void ids(global ulong* out) {
  global ulong* o = out + 12 * (get_global_id(0) - get_global_offset(0));
  o[0] = get_global_id(0);
  o[1] = get_local_id(0);
  o[2] = get_local_size(0);
  o[3] = get_global_id(0);
  o[4] = get_local_id(0);
  o[5] = get_group_id(0);
  o[6] = get_global_size(0);
  o[7] = get_global_offset(0);
  o[8] = get_num_groups(0);
  o[9] = get_work_dim();
  o[10] = get_global_linear_id();
  o[11] = get_local_linear_id();
}
