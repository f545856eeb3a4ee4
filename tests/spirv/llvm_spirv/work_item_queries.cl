// Every work-item query; run with a global offset, so each one has a value of its own.
kernel void queries(global uint* out) {
  size_t i = get_global_id(0) - get_global_offset(0);
  global uint* o = out + 10 * i;
  o[0] = get_global_id(0);
  o[1] = get_local_id(0);
  o[2] = get_group_id(0);
  o[3] = get_local_size(0);
  o[4] = get_global_size(0);
  o[5] = get_num_groups(0);
  o[6] = get_work_dim();
  o[7] = get_global_offset(0);
  o[8] = get_global_size(1) * 100 + get_local_size(1) * 10 + get_num_groups(2);
  o[9] = get_global_id(1) + get_local_id(2) + get_group_id(1);
}
