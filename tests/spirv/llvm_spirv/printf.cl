kernel void say(global int* status, int v, float f) {
  status[get_global_id(0)] = printf("id=%d v=%d f=%.2f %s\n", (int)get_global_id(0), v, f, "ok");
}
