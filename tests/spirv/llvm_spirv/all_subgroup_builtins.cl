// What all_subgroup_builtins.spvasm computes, in OpenCL C (3.0 with __opencl_c_subgroups).
kernel void sub_groups(global uint* out) {
  global uint* o = out + 6 * get_global_id(0);
  o[0] = get_sub_group_size();
  o[1] = get_max_sub_group_size();
  o[2] = get_num_sub_groups();
  o[3] = get_enqueued_num_sub_groups();
  o[4] = get_sub_group_id();
  o[5] = get_sub_group_local_id();
}
