// Kernels of the shapes real applications run, for `manifold bench`: a D3Q19 lattice-Boltzmann
// step with in-place (esoteric-pull) streaming and a 3D 7-point stencil. Their OpenCL C sources,
// problem sizes and plain C++ references; bench/cuda_native/cuda_native.cu has the CUDA twins.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace manifold_tool {

// A periodic box of lattice cells.
struct Box {
  unsigned nx, ny, nz;
  size_t cells() const { return size_t{nx} * ny * nz; }
};

// ---- D3Q19 lattice Boltzmann, BGK collision, esoteric pull ----
// One buffer of 19 floats per cell, direction-major (f[i * cells + n]), and a flags byte per cell
// (bit 0: solid, skipped). Each step reads and writes the same slots of a cell and its
// neighbours along the odd directions; which slot holds which population alternates with the
// step's parity. Bytes moved per cell and step: 2 * 19 * 4 + 1.
inline constexpr unsigned kLbmQ = 19;
inline constexpr double kLbmBytesPerCell = 2.0 * kLbmQ * sizeof(float) + 1.0;
inline constexpr float kLbmOmega = 1.0f / 0.6f;
// The timed box (256^3 on GPUs, 128^3 on other devices; --quick halves each side) and the box
// whose steps are compared with the reference, odd-sized to catch index mistakes.
Box lbm_box(bool gpu, bool quick);
inline constexpr Box kLbmCheckBox = {24, 20, 18};
// The source (kernel lbm_d3q19(global float* f, global const uchar* flags, ulong t)) and its
// build options: the box as macros, and the math options of the application it stands for.
const char* lbm_source();
std::string lbm_build_options(const Box& box);
// Equilibrium populations of a field with noise per cell in the step-0 layout; `moving` = false:
// at rest, with the density varying a little.
std::vector<float> lbm_initial(const Box& box, bool moving);
// Step `t` of the kernel, in C++.
void lbm_reference_step(const Box& box, std::vector<float>& f, const std::vector<uint8_t>& flags,
                        uint64_t t);

// ---- 3D 7-point stencil (one Jacobi sweep; boundary cells copied) ----
// kernel stencil7(global float* out, global const float* in, uint nx, uint ny, uint nz),
// a 3D NDRange over the box with work-groups of 64 x 4 x 1.
Box stencil_box(bool quick);
const char* stencil_source();
inline constexpr float kStencilCenter = 0.4f, kStencilSide = 0.1f;
inline constexpr int kStencilSweeps = 50;  // per timed sample
inline constexpr unsigned kLbmSteps = 10;  // per timed sample
float stencil_reference(const Box& box, const std::vector<float>& in, unsigned x, unsigned y,
                        unsigned z);

}  // namespace manifold_tool
