// __builtin_assume and __builtin_expect: SPV_KHR_expect_assume with -spirv-ext=+all.
kernel void expect(global const int* in, global int* out, int n) {
  size_t i = get_global_id(0);
  __builtin_assume(n > 0);
  int v = in[i];
  if (__builtin_expect(v > n, 0)) v = n;
  out[i] = v * 3 + (int)i;
}
