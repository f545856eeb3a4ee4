kernel void math(global const float* x, global float* y) {
  size_t i = get_global_id(0);
  float v = x[i];
  y[i] = sqrt(fabs(v)) + sin(v) + exp(v * 0.25f) + fma(v, v, 1.0f) + cos(v) * log(fabs(v) + 1.0f) +
         pow(fabs(v), 0.5f) + floor(v) + fmin(v, 0.5f) + native_exp(v * 0.1f) * 0.0f;
}
