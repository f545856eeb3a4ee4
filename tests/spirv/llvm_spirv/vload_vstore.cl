// vload/vstore of 4 and 3 elements, and a half-precision round trip.
kernel void vectors(global const float* in, global float* out, global half* h) {
  size_t i = get_global_id(0);
  float4 v = vload4(i, in);
  float3 t = vload3(i, in + 4 * get_global_size(0));
  vstore4(v * 2.0f + (float4)(t.x, t.y, t.z, 1.0f), i, out);
  vstore_half(v.x, i, h);
  out[4 * get_global_size(0) + i] = vload_half(i, h);
}
