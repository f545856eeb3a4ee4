// A struct passed by value, and a struct in global memory.
typedef struct {
  float scale;
  int offset;
  float bias[2];
} params_t;
typedef struct {
  int key;
  float value;
} pair_t;
kernel void apply(params_t p, global const pair_t* in, global float* out) {
  size_t i = get_global_id(0);
  pair_t e = in[i];
  out[i] = e.value * p.scale + (float)(e.key + p.offset) + p.bias[i & 1];
}
