// OpenCL C 2.0: generic pointers to global, local and private memory through one function.
int total(const int* p, int n) {
  int s = 0;
  for (int k = 0; k < n; ++k) s += p[k];
  return s;
}
kernel void sums(global const int* in, global int* out, local int* scratch) {
  size_t l = get_local_id(0), g = get_global_id(0);
  scratch[l] = in[g];
  work_group_barrier(CLK_LOCAL_MEM_FENCE);
  int mine[2] = {(int)g, 3};
  out[g] = total(in + g, 1) + total(scratch, (int)get_local_size(0)) + total(mine, 2) +
           (to_global(in + g) != 0) + (to_local(scratch) != 0) * 2;
}
