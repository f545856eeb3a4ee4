// Global atomics: a sum, a count, a maximum and a minimum over all work-items.
kernel void count(global const int* in, global int* totals) {
  int v = in[get_global_id(0)];
  atomic_add(&totals[0], v);
  atomic_inc(&totals[1]);
  atomic_max(&totals[2], v);
  atomic_min(&totals[3], v);
  atomic_xchg(&totals[4], 7);
}
