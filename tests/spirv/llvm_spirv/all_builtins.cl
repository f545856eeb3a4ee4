// What all_builtins.spvasm computes, in OpenCL C.
kernel void builtins(global ulong* out) {
  size_t flat = (get_global_id(1) - get_global_offset(1)) * get_global_size(0) +
                get_global_id(0) - get_global_offset(0);
  global ulong* o = out + 15 * flat;
  o[0] = get_global_id(0);
  o[1] = get_global_id(1);
  o[2] = get_local_id(0);
  o[3] = get_local_id(1);
  o[4] = get_group_id(1);
  o[5] = get_local_size(0);
  o[6] = get_global_size(1);
  o[7] = get_num_groups(0);
  o[8] = get_global_offset(1);
  o[9] = get_enqueued_local_size(0);
  o[10] = get_global_linear_id();
  o[11] = get_local_linear_id();
  o[12] = get_work_dim();
  o[13] = get_global_id(0);
  o[14] = get_global_id(1);
}
