// The builtins are read in functions that are not kernels (kept apart with noinline).
__attribute__((noinline)) size_t flat_id(void) {
  return get_global_id(1) * get_global_size(0) + get_global_id(0);
}
__attribute__((noinline)) float scale(float v) { return v * (float)(get_local_id(0) + 1); }
kernel void helpers(global const float* in, global float* out) {
  size_t i = flat_id();
  out[i] = scale(in[i]);
}
