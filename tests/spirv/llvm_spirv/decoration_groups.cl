// What decoration_groups.spvasm computes, in OpenCL C.
typedef struct {
  float scale;
  float bias;
} params_t;
kernel void scaled(params_t params, global const float* in, global float* out) {
  size_t i = get_global_id(0);
  out[i] = in[i] * params.scale + params.bias;
}
