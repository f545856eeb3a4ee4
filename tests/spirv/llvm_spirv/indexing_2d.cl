// A transpose through 2D ids, with the row pitch from get_global_size.
kernel void transpose(global const float* in, global float* out) {
  size_t x = get_global_id(0), y = get_global_id(1);
  size_t width = get_global_size(0), height = get_global_size(1);
  out[x * height + y] = in[y * width + x] + (float)(get_local_id(1) * 1000 + get_group_id(0));
}
