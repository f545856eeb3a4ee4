#include "bench_app_kernels.h"

namespace manifold_tool {

namespace {

// D3Q19's directions: 0 at rest, then pairs (i, i + 1) of opposite ones.
constexpr int kCx[kLbmQ] = {0, 1, -1, 0, 0, 0, 0, 1, -1, 1, -1, 0, 0, 1, -1, 1, -1, 0, 0};
constexpr int kCy[kLbmQ] = {0, 0, 0, 1, -1, 0, 0, 1, -1, 0, 0, 1, -1, -1, 1, 0, 0, 1, -1};
constexpr int kCz[kLbmQ] = {0, 0, 0, 0, 0, 1, -1, 0, 0, 1, -1, 1, -1, 0, 0, -1, 1, -1, 1};

float weight(unsigned i) { return i == 0 ? 1.0f / 3.0f : i < 7 ? 1.0f / 18.0f : 1.0f / 36.0f; }

float equilibrium(unsigned i, float rho, float ux, float uy, float uz) {
  const float cu = kCx[i] * ux + kCy[i] * uy + kCz[i] * uz;
  const float usq = 1.5f * (ux * ux + uy * uy + uz * uz);
  return weight(i) * rho * (1.0f + 3.0f * cu + 4.5f * cu * cu - usq);
}

unsigned wrap(unsigned v, int d, unsigned n) {
  return d > 0 ? (v + 1 == n ? 0 : v + 1) : d < 0 ? (v == 0 ? n - 1 : v - 1) : v;
}

}  // namespace

Box lbm_box(bool gpu, bool quick) {
  const unsigned side = (gpu ? 256u : 128u) / (quick ? 2u : 1u);
  return {side, side, side};
}

const char* lbm_source() {
  return R"CLC(
#define CELLS ((ulong)NX * NY * NZ)
constant int cx[19] = {0, 1, -1, 0, 0, 0, 0, 1, -1, 1, -1, 0, 0, 1, -1, 1, -1, 0, 0};
constant int cy[19] = {0, 0, 0, 1, -1, 0, 0, 1, -1, 0, 0, 1, -1, -1, 1, 0, 0, 1, -1};
constant int cz[19] = {0, 0, 0, 0, 0, 1, -1, 0, 0, 1, -1, 1, -1, 0, 0, -1, 1, -1, 1};

ulong cell_at(ulong x, ulong y, ulong z) { return x + (y + z * NY) * NX; }

kernel void lbm_d3q19(global float* f, global const uchar* flags, ulong t) {
  const ulong n = get_global_id(0);
  if (n >= CELLS || (flags[n] & 1)) return;
  const ulong x = n % NX, y = (n / NX) % NY, z = n / ((ulong)NX * NY);
  const ulong xp = x + 1 == NX ? 0 : x + 1, yp = y + 1 == NY ? 0 : y + 1;
  const ulong zp = z + 1 == NZ ? 0 : z + 1, ym = y == 0 ? NY - 1 : y - 1;
  const ulong zm = z == 0 ? NZ - 1 : z - 1;
  // The neighbour along each odd direction (the even ones are their opposites).
  ulong j[19];
  j[1] = cell_at(xp, y, z);
  j[3] = cell_at(x, yp, z);
  j[5] = cell_at(x, y, zp);
  j[7] = cell_at(xp, yp, z);
  j[9] = cell_at(xp, y, zp);
  j[11] = cell_at(x, yp, zp);
  j[13] = cell_at(xp, ym, z);
  j[15] = cell_at(xp, y, zm);
  j[17] = cell_at(x, yp, zm);
  const bool odd = t & 1;
  float fh[19];
  fh[0] = f[n];
  for (uint i = 1; i < 19; i += 2) {
    fh[i] = f[(odd ? i + 1 : i) * CELLS + n];
    fh[i + 1] = f[(odd ? i : i + 1) * CELLS + j[i]];
  }
  float rho = 0.0f, ux = 0.0f, uy = 0.0f, uz = 0.0f;
  for (uint i = 0; i < 19; ++i) {
    rho += fh[i];
    ux += cx[i] * fh[i];
    uy += cy[i] * fh[i];
    uz += cz[i] * fh[i];
  }
  const float inverse = 1.0f / rho;
  ux *= inverse;
  uy *= inverse;
  uz *= inverse;
  const float usq = 1.5f * (ux * ux + uy * uy + uz * uz);
  for (uint i = 0; i < 19; ++i) {
    const float w = i == 0 ? 1.0f / 3.0f : i < 7 ? 1.0f / 18.0f : 1.0f / 36.0f;
    const float cu = cx[i] * ux + cy[i] * uy + cz[i] * uz;
    const float feq = w * rho * (1.0f + 3.0f * cu + 4.5f * cu * cu - usq);
    fh[i] += OMEGA * (feq - fh[i]);
  }
  f[n] = fh[0];
  for (uint i = 1; i < 19; i += 2) {
    f[(odd ? i : i + 1) * CELLS + j[i]] = fh[i];
    f[(odd ? i + 1 : i) * CELLS + n] = fh[i + 1];
  }
}
)CLC";
}

std::string lbm_build_options(const Box& box) {
  char omega[32];
  std::snprintf(omega, sizeof omega, "%.9gf", kLbmOmega);
  return "-DNX=" + std::to_string(box.nx) + "u -DNY=" + std::to_string(box.ny) +
         "u -DNZ=" + std::to_string(box.nz) + "u -DOMEGA=" + omega +
         " -cl-finite-math-only -cl-no-signed-zeros -cl-mad-enable";
}

std::vector<float> lbm_initial(const Box& box, bool moving) {
  const size_t cells = box.cells();
  std::vector<float> f(kLbmQ * cells);
  // A rough field (noise per cell): a neighbour taken for another changes the result clearly.
  auto noise = [](size_t n, unsigned salt) {
    const uint32_t h = static_cast<uint32_t>((n * 2654435761u) ^ (salt * 0x9e3779b9u));
    return static_cast<float>((h ^ (h >> 15)) & 1023) / 1023.0f - 0.5f;
  };
  for (unsigned z = 0; z < box.nz; ++z)
    for (unsigned y = 0; y < box.ny; ++y)
      for (unsigned x = 0; x < box.nx; ++x) {
        const size_t n = x + (y + size_t{z} * box.ny) * box.nx;
        float rho = 1.0f + 0.02f * noise(n, 1), ux = 0, uy = 0, uz = 0;
        if (moving) {
          rho = 1.0f + 0.2f * noise(n, 2);
          ux = 0.1f * noise(n, 3);
          uy = 0.1f * noise(n, 4);
          uz = 0.1f * noise(n, 5);
        }
        // Every slot of a cell starts with that cell's equilibrium: step 0 then reads, for the
        // directions that arrive from a neighbour, the neighbour's values, as if just streamed.
        for (unsigned i = 0; i < kLbmQ; ++i) f[i * cells + n] = equilibrium(i, rho, ux, uy, uz);
      }
  return f;
}

void lbm_reference_step(const Box& box, std::vector<float>& f, const std::vector<uint8_t>& flags,
                        uint64_t t) {
  const size_t cells = box.cells();
  const bool odd = t & 1;
  for (unsigned z = 0; z < box.nz; ++z)
    for (unsigned y = 0; y < box.ny; ++y)
      for (unsigned x = 0; x < box.nx; ++x) {
        const size_t n = x + (y + size_t{z} * box.ny) * box.nx;
        if (flags[n] & 1) continue;
        size_t j[kLbmQ] = {};
        for (unsigned i = 1; i < kLbmQ; i += 2)
          j[i] = wrap(x, kCx[i], box.nx) +
                 (wrap(y, kCy[i], box.ny) + size_t{wrap(z, kCz[i], box.nz)} * box.ny) * box.nx;
        float fh[kLbmQ];
        fh[0] = f[n];
        for (unsigned i = 1; i < kLbmQ; i += 2) {
          fh[i] = f[(odd ? i + 1 : i) * cells + n];
          fh[i + 1] = f[(odd ? i : i + 1) * cells + j[i]];
        }
        float rho = 0, ux = 0, uy = 0, uz = 0;
        for (unsigned i = 0; i < kLbmQ; ++i) {
          rho += fh[i];
          ux += kCx[i] * fh[i];
          uy += kCy[i] * fh[i];
          uz += kCz[i] * fh[i];
        }
        ux /= rho;
        uy /= rho;
        uz /= rho;
        for (unsigned i = 0; i < kLbmQ; ++i)
          fh[i] += kLbmOmega * (equilibrium(i, rho, ux, uy, uz) - fh[i]);
        f[n] = fh[0];
        for (unsigned i = 1; i < kLbmQ; i += 2) {
          f[(odd ? i : i + 1) * cells + j[i]] = fh[i];
          f[(odd ? i + 1 : i) * cells + n] = fh[i + 1];
        }
      }
}

Box stencil_box(bool quick) {
  const unsigned side = quick ? 128u : 256u;
  return {side, side, side};
}

const char* stencil_source() {
  return R"CLC(
kernel void stencil7(global float* out, global const float* in, uint nx, uint ny, uint nz) {
  const uint x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
  if (x >= nx || y >= ny || z >= nz) return;
  const size_t plane = (size_t)nx * ny;
  const size_t i = x + (size_t)nx * y + plane * z;
  float v = in[i];
  if (x > 0 && y > 0 && z > 0 && x + 1 < nx && y + 1 < ny && z + 1 < nz)
    v = 0.4f * v + 0.1f * (in[i - 1] + in[i + 1] + in[i - nx] + in[i + nx] + in[i - plane] +
                           in[i + plane]);
  out[i] = v;
}
)CLC";
}

float stencil_reference(const Box& box, const std::vector<float>& in, unsigned x, unsigned y,
                        unsigned z) {
  const size_t plane = size_t{box.nx} * box.ny, i = x + size_t{box.nx} * y + plane * z;
  if (x == 0 || y == 0 || z == 0 || x + 1 == box.nx || y + 1 == box.ny || z + 1 == box.nz)
    return in[i];
  return kStencilCenter * in[i] + kStencilSide * (in[i - 1] + in[i + 1] + in[i - box.nx] +
                                                  in[i + box.nx] + in[i - plane] + in[i + plane]);
}

}  // namespace manifold_tool
