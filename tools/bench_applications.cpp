// Figures for the shapes of real applications (tools/bench_app_kernels.h): an LBM D3Q19 step and a
// seven-point stencil, each checked against its C++ reference.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "bench_app_kernels.h"
#include "bench_measurements.h"
#include "bench_metrics.h"

namespace manifold_tool {
namespace {

// Runs steps [first, first + count) of the LBM kernel over `f`.
void lbm_steps(const Device& device, cl_kernel kernel, size_t cells, uint64_t first,
               unsigned count) {
  const size_t local = 64, global = (cells + local - 1) / local * local;
  for (unsigned s = 0; s < count; ++s) {
    const cl_ulong t = first + s;
    set_arg(kernel, 2, t);
    run_ndrange(device, kernel, 1, &global, &local);
  }
}

}  // namespace

Outcome measure_lbm(const Device& device, bool quick) {
  // First a small odd-sized box, two steps (both parities) against the C++ reference.
  {
    const Box box = kLbmCheckBox;
    Program program = build_with_options(device, lbm_source(), lbm_build_options(box));
    Kernel kernel = make_kernel(program, "lbm_d3q19");
    std::vector<float> f = lbm_initial(box, true), expected = f;
    std::vector<uint8_t> flags(box.cells(), 0);
    Buffer f_buffer = make_buffer(device, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                  f.size() * sizeof(float), f.data());
    Buffer flags_buffer =
        make_buffer(device, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, flags.size(), flags.data());
    set_arg(kernel, 0, f_buffer.get());
    set_arg(kernel, 1, flags_buffer.get());
    lbm_steps(device, kernel, box.cells(), 0, 3);
    read_buffer(device, f_buffer, f.size() * sizeof(float), f.data());
    for (uint64_t t = 0; t < 3; ++t) lbm_reference_step(box, expected, flags, t);
    for (size_t i = 0; i < f.size(); ++i)
      if (std::fabs(expected[i] - f[i]) > 2e-5) return {0, mismatch("f", i, expected[i], f[i])};
  }
  // Then the timed box: mass is conserved.
  const Box box = lbm_box(is_gpu(device), quick);
  const size_t cells = box.cells();
  Program program = build_with_options(device, lbm_source(), lbm_build_options(box));
  Kernel kernel = make_kernel(program, "lbm_d3q19");
  std::vector<float> f = lbm_initial(box, false);
  double mass = 0;
  for (float v : f) mass += v;
  std::vector<uint8_t> flags(cells, 0);
  Buffer f_buffer = make_buffer(device, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                f.size() * sizeof(float), f.data());
  Buffer flags_buffer =
      make_buffer(device, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, flags.size(), flags.data());
  set_arg(kernel, 0, f_buffer.get());
  set_arg(kernel, 1, flags_buffer.get());
  const unsigned steps = kLbmSteps;
  uint64_t t = 0;
  const double seconds = timed_median(device, quick ? 3 : 5, [&] {
    lbm_steps(device, kernel, cells, t, steps);
    t += steps;
  });
  read_buffer(device, f_buffer, f.size() * sizeof(float), f.data());
  double after = 0;
  for (float v : f) after += v;
  if (!close_enough(mass, after, 1e-4)) return {0, mismatch("mass", 0, mass, after)};
  return {static_cast<double>(cells) * steps / seconds / 1e6, {}};
}

Outcome measure_stencil(const Device& device, bool quick) {
  const Box box = stencil_box(quick);
  const size_t cells = box.cells(), bytes = cells * sizeof(float);
  std::vector<float> in(cells), out(cells);
  std::mt19937 random(11);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (float& v : in) v = uniform(random);
  Program program = build_with_options(device, stencil_source(), "");
  Kernel kernel = make_kernel(program, "stencil7");
  Buffer in_buffer = make_buffer(device, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, in.data());
  Buffer out_buffer = make_buffer(device, CL_MEM_WRITE_ONLY, bytes);
  set_arg(kernel, 0, out_buffer.get());
  set_arg(kernel, 1, in_buffer.get());
  set_arg(kernel, 2, box.nx);
  set_arg(kernel, 3, box.ny);
  set_arg(kernel, 4, box.nz);
  const size_t global[3] = {box.nx, box.ny, box.nz}, local[3] = {64, 4, 1};
  const double seconds = timed_median(device, quick ? 4 : 10, [&] {
    for (int r = 0; r < kStencilSweeps; ++r) run_ndrange(device, kernel, 3, global, local);
  });
  read_buffer(device, out_buffer, bytes, out.data());
  for (unsigned z = 0; z < box.nz; ++z)
    for (unsigned y = 0; y < box.ny; ++y)
      for (unsigned x = 0; x < box.nx; ++x) {
        const size_t i = x + size_t{box.nx} * (y + size_t{box.ny} * z);
        const float expected = stencil_reference(box, in, x, y, z);
        if (!close_enough(expected, out[i], 1e-5)) return {0, mismatch("out", i, expected, out[i])};
      }
  return {2.0 * static_cast<double>(bytes) * kStencilSweeps / seconds / 1e9, {}};
}

}  // namespace manifold_tool
