// Worst ULP error of OpenCL math builtins on one platform's device, against long double
// references on the host, over dense sweeps of each function's domain, every binade, and special
// points. The same inputs for every platform, so that two platforms' columns compare directly.
//   g++ -O2 -std=c++20 math_ulp.cpp -lOpenCL -o math_ulp
//   OCL_ICD_VENDORS=build/icd ./math_ulp Manifold cpu
//   OCL_ICD_VENDORS=/etc/OpenCL/vendors ./math_ulp Portable cpu
// Arguments: a substring of the platform name, the device type (cpu or gpu), optionally the
// functions to measure (all by default). Output: "function type worst-ulp at-input" lines.
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

using Real = long double;

struct Function {
  const char* name;
  Real (*reference)(Real, Real);
  int arity;
  // Linear sweep range of the first argument (the second's, for binary functions, is lo2..hi2).
  double lo, hi, lo2, hi2;
};

#define UNARY(fn, expr) \
  {                     \
#fn, [](Real x, Real) -> Real { return expr; }, 1
const Real kPi = 3.141592653589793238462643383279502884L;
const Function kFunctions[] = {UNARY(atan, std::atan(x)), -4, 4, 0, 0}, UNARY(asin, std::asin(x)),
               -1, 1, 0, 0
}
, UNARY(acos, std::acos(x)), -1, 1, 0, 0
}
, UNARY(sinh, std::sinh(x)), -89, 89, 0, 0
}
, UNARY(cosh, std::cosh(x)), -89, 89, 0, 0
}
, UNARY(tanh, std::tanh(x)), -20, 20, 0, 0
}
, UNARY(asinh, std::asinh(x)), -20, 20, 0, 0
}
, UNARY(acosh, std::acosh(x)), 1, 50, 0, 0
}
, UNARY(atanh, std::atanh(x)), -1, 1, 0, 0
}
, UNARY(atanpi, std::atan(x) / kPi), -4, 4, 0, 0
}
, UNARY(exp, std::exp(x)), -104, 89, 0, 0
}
, UNARY(exp2, std::exp2(x)), -152, 129, 0, 0
}
, UNARY(exp10, std::pow(10.0L, x)), -46, 39, 0, 0
}
, UNARY(expm1, std::expm1(x)), -104, 89, 0, 0
}
, UNARY(log, std::log(x)), 0, 8, 0, 0
}
, UNARY(log2, std::log2(x)), 0, 8, 0, 0
}
, UNARY(log10, std::log10(x)), 0, 8, 0, 0
}
, UNARY(log1p, std::log1p(x)), -1, 8, 0, 0
}
, UNARY(sin, std::sin(x)), -100, 100, 0, 0
}
, UNARY(cos, std::cos(x)), -100, 100, 0, 0
}
, UNARY(tan, std::tan(x)), -100, 100, 0, 0
}
, UNARY(cbrt, std::cbrt(x)), -8, 8, 0, 0
}
, UNARY(erf, std::erf(x)), -6, 6, 0, 0
}
, UNARY(erfc, std::erfc(x)), -6, 27, 0, 0
}
, UNARY(tgamma, std::tgamma(x)), -40, 36, 0, 0
}
, UNARY(lgamma, std::lgamma(x)), -40, 100, 0, 0
}
, {"atan2", [](Real y, Real x) -> Real { return std::atan2(y, x); }, 2, -4, 4, -4, 4},
    {"pow", [](Real x, Real y) -> Real { return std::pow(x, y); }, 2, 0, 8, -12, 12},
    {"sqrt", [](Real x, Real) -> Real { return std::sqrt(x); }, 1, 0, 8, 0, 0},
    // The operators, through the helpers of the kernel's source: x / y and 1 / x.
    {"divide", [](Real x, Real y) -> Real { return x / y; }, 2, -8, 8, -8, 8},
    {"reciprocal", [](Real x, Real) -> Real { return 1 / x; }, 1, -8, 8, 0, 0},
}
;
#undef UNARY

// ULP error as the OpenCL spec defines it: against the exact value, in units of the ulp of the
// binade that holds it (denormals: the smallest ulp). Kind mismatches (NaN, infinity) count huge.
template <class T>
double ulp_error(T got, Real exact) {
  if (std::isnan(exact)) return std::isnan(got) ? 0 : 1e30;
  if (std::isnan(got)) return 1e30;
  if (std::isinf(exact)) return got == T(exact) ? 0 : 1e30;
  if (std::fabs(exact) > Real(std::numeric_limits<T>::max()))
    return std::isinf(got) && std::signbit(got) == std::signbit(exact) ? 0 : 1e30;
  if (std::isinf(got)) return 1e30;
  const int digits = std::numeric_limits<T>::digits;
  const int min_exponent = std::numeric_limits<T>::min_exponent - digits;  // of the denormal ulp
  int exponent;
  std::frexp(exact, &exponent);
  const Real ulp = std::ldexp(Real(1), std::max(exponent - digits, min_exponent));
  return double(std::fabs(Real(got) - exact) / ulp);
}

// A dense linear sweep over [lo, hi], every binade of both signs (sampled), the edges of the
// domain, and random bit patterns.
template <class T>
std::vector<T> inputs_for(double lo, double hi, size_t linear) {
  std::vector<T> v;
  for (size_t i = 0; i <= linear; ++i) v.push_back(T(lo + (hi - lo) * double(i) / double(linear)));
  const int min_e = std::numeric_limits<T>::min_exponent - std::numeric_limits<T>::digits;
  const int max_e = std::numeric_limits<T>::max_exponent;
  for (int e = min_e; e < max_e; ++e)
    for (int k = 0; k < 64; ++k) {
      const T x = std::ldexp(T(1) + T(k) / 64, e);
      v.push_back(x);
      v.push_back(-x);
    }
  for (double edge : {lo, hi, 0.0, 1.0, -1.0})
    for (T x = T(edge), y = T(edge), n = 0; n < 256; ++n) {
      v.push_back(x = std::nextafter(x, std::numeric_limits<T>::infinity()));
      v.push_back(y = std::nextafter(y, -std::numeric_limits<T>::infinity()));
    }
  const T inf = std::numeric_limits<T>::infinity();
  for (T x : {T(0), -T(0), inf, -inf, std::numeric_limits<T>::quiet_NaN(),
              std::numeric_limits<T>::denorm_min(), std::numeric_limits<T>::max()})
    v.push_back(x);
  std::mt19937_64 engine(12345);
  for (int i = 0; i < 65536; ++i) {
    uint64_t bits = engine();
    T x;
    std::memcpy(&x, &bits, sizeof x);
    if (!std::isnan(x)) v.push_back(x);
  }
  return v;
}

struct Device {
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
  cl_device_id device = nullptr;
  bool has_double = false;
};

Device open_device(const char* platform_name, cl_device_type type) {
  cl_platform_id platforms[16];
  cl_uint count = 0;
  clGetPlatformIDs(16, platforms, &count);
  for (cl_uint i = 0; i < count; ++i) {
    char name[256] = {0};
    clGetPlatformInfo(platforms[i], CL_PLATFORM_NAME, sizeof name - 1, name, nullptr);
    if (!std::strstr(name, platform_name)) continue;
    Device d;
    if (clGetDeviceIDs(platforms[i], type, 1, &d.device, nullptr) != CL_SUCCESS) continue;
    cl_int status;
    d.context = clCreateContext(nullptr, 1, &d.device, nullptr, nullptr, &status);
    d.queue = clCreateCommandQueueWithProperties(d.context, d.device, nullptr, &status);
    cl_device_fp_config fp64 = 0;
    clGetDeviceInfo(d.device, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp64, &fp64, nullptr);
    d.has_double = fp64 != 0;
    char device_name[256] = {0};
    clGetDeviceInfo(d.device, CL_DEVICE_NAME, sizeof device_name - 1, device_name, nullptr);
    std::printf("# platform %s, device %s\n", name, device_name);
    return d;
  }
  std::fprintf(stderr, "no platform named like '%s' with such a device\n", platform_name);
  std::exit(1);
}

// Runs name(x[, y]) over the inputs on the device.
template <class T>
std::vector<T> evaluate(Device& d, const Function& f, const std::vector<T>& x,
                        const std::vector<T>& y) {
  const char* type = sizeof(T) == 4 ? "float" : "double";
  std::string source = sizeof(T) == 8 ? "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" : "";
  source += std::string(type) + " divide(" + type + " x, " + type + " y) { return x / y; }\n";
  source += std::string(type) + " reciprocal(" + type + " x) { return 1 / x; }\n";
  source += "kernel void k(global const " + std::string(type) + "* x, global const " + type +
            "* y, global " + type + "* r) { size_t i = get_global_id(0); r[i] = " + f.name +
            (f.arity == 2 ? "(x[i], y[i]); }" : "(x[i]); }");
  const char* text = source.c_str();
  cl_int status;
  cl_program program = clCreateProgramWithSource(d.context, 1, &text, nullptr, &status);
  if (clBuildProgram(program, 1, &d.device, "", nullptr, nullptr) != CL_SUCCESS) {
    std::fprintf(stderr, "build of %s(%s) failed\n", f.name, type);
    std::exit(1);
  }
  cl_kernel kernel = clCreateKernel(program, "k", &status);
  const size_t local = 64;
  const size_t n = (x.size() + local - 1) / local * local;
  std::vector<T> xs(x), ys(y.empty() ? x : y), r(n);
  xs.resize(n, T(1));
  ys.resize(n, T(1));
  cl_mem bx = clCreateBuffer(d.context, CL_MEM_COPY_HOST_PTR, n * sizeof(T), xs.data(), &status);
  cl_mem by = clCreateBuffer(d.context, CL_MEM_COPY_HOST_PTR, n * sizeof(T), ys.data(), &status);
  cl_mem br = clCreateBuffer(d.context, CL_MEM_WRITE_ONLY, n * sizeof(T), nullptr, &status);
  clSetKernelArg(kernel, 0, sizeof bx, &bx);
  clSetKernelArg(kernel, 1, sizeof by, &by);
  clSetKernelArg(kernel, 2, sizeof br, &br);
  status = clEnqueueNDRangeKernel(d.queue, kernel, 1, nullptr, &n, &local, 0, nullptr, nullptr);
  if (status == CL_SUCCESS)
    status =
        clEnqueueReadBuffer(d.queue, br, CL_TRUE, 0, n * sizeof(T), r.data(), 0, nullptr, nullptr);
  if (status != CL_SUCCESS) {
    std::fprintf(stderr, "running %s(%s) failed: %d\n", f.name, type, status);
    std::exit(1);
  }
  clReleaseMemObject(bx);
  clReleaseMemObject(by);
  clReleaseMemObject(br);
  clReleaseKernel(kernel);
  clReleaseProgram(program);
  r.resize(x.size());
  return r;
}

template <class T>
void measure(Device& d, const Function& f) {
  std::vector<T> x, y;
  if (f.arity == 1) {
    x = inputs_for<T>(f.lo, f.hi, 1 << 21);
  } else {
    // A grid of the two linear sweeps, plus each argument's binades against a few of the other's.
    const int side = 1024;
    for (int i = 0; i <= side; ++i)
      for (int j = 0; j <= side; ++j) {
        x.push_back(T(f.lo + (f.hi - f.lo) * i / side));
        y.push_back(T(f.lo2 + (f.hi2 - f.lo2) * j / side));
      }
    const std::vector<T> wide = inputs_for<T>(f.lo, f.hi, 0);
    for (T a : wide)
      for (T b : {T(0.5), T(-1.5), T(3), T(-7.25), T(1e-3), T(100)}) {
        x.push_back(a);
        y.push_back(b);
        x.push_back(b);
        y.push_back(a);
      }
  }
  const std::vector<T> r = evaluate(d, f, x, y);
  double worst = 0;
  size_t at = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const Real exact = f.reference(Real(x[i]), f.arity == 2 ? Real(y[i]) : Real(0));
    const double e = ulp_error<T>(r[i], exact);
    if (e > worst) worst = e, at = i;
  }
  if (f.arity == 1)
    std::printf("%-7s %-6s %8.3f  x=%.17g (got %.17g)\n", f.name,
                sizeof(T) == 4 ? "float" : "double", worst, double(x[at]), double(r[at]));
  else
    std::printf("%-7s %-6s %8.3f  x=%.17g y=%.17g (got %.17g)\n", f.name,
                sizeof(T) == 4 ? "float" : "double", worst, double(x[at]), double(y[at]),
                double(r[at]));
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s PLATFORM cpu|gpu [FUNCTION...]\n", argv[0]);
    return 2;
  }
  Device d = open_device(
      argv[1], std::strcmp(argv[2], "gpu") == 0 ? CL_DEVICE_TYPE_GPU : CL_DEVICE_TYPE_CPU);
  for (const Function& f : kFunctions) {
    bool wanted = argc == 3;
    for (int i = 3; i < argc; ++i) wanted |= std::strcmp(argv[i], f.name) == 0;
    if (!wanted) continue;
    measure<float>(d, f);
    if (d.has_double) measure<double>(d, f);
  }
  return 0;
}
