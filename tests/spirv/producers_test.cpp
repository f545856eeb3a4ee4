// SPIR-V from other producers than clang's SPIR-V target: modules of SPIRV-LLVM-Translator
// (llvm-spirv-15) and hand-written ones in the forms other producers use, committed with their
// sources and the script that made them (tests/spirv/llvm_spirv/generate.sh). Each is built with
// clCreateProgramWithIL on every device of the platform under test (MANIFOLD_TEST_DEVICE_TYPE)
// and its results checked element by element against the same kernel built from OpenCL C, and
// against the host where that is simple to say.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "device_session.h"

namespace {

using namespace corpus;

std::vector<uint8_t> read_corpus_file(const std::string& name) {
  std::ifstream in(std::filesystem::path(MANIFOLD_PRODUCERS_CORPUS) / name, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

// What a buffer holds: its inputs are made, its outputs compared, element by element.
enum class Data { Floats, Ints, Longs, IntFloatPairs, Halves };

size_t element_bytes(Data d) { return d == Data::Longs ? 8 : d == Data::Halves ? 2 : 4; }

struct Arg {
  enum Kind { In, Out, Local, Value } kind;
  size_t elements = 0;
  Data data = Data::Ints;
  std::vector<uint8_t> value;
  size_t bytes() const { return elements * element_bytes(data); }
};

Arg in(size_t n, Data d) { return {Arg::In, n, d, {}}; }
Arg out(size_t n, Data d) { return {Arg::Out, n, d, {}}; }
Arg local_ints(size_t n) { return {Arg::Local, n, Data::Ints, {}}; }
template <class T>
Arg value(const T& v) {
  Arg a{Arg::Value, 0, Data::Ints, std::vector<uint8_t>(sizeof(T))};
  std::memcpy(a.value.data(), &v, sizeof(T));
  return a;
}

struct Results {
  std::vector<std::vector<uint8_t>> inputs, outputs;  // each In and Out buffer after the run
  std::string printed;                                // stdout of the launch (sorted lines)
};

struct Module {
  const char* name;     // <name>.spv in the corpus
  const char* source;   // the kernel in OpenCL C (.cl)
  const char* options;  // building the OpenCL C
  const char* kernel;
  cl_uint dims;
  size_t global[3], local[3], offset[3];
  std::vector<Arg> args;
  const char* feature = nullptr;  // an OpenCL C feature the device needs (else skipped)
  std::function<void(const Results&)> host_check = {};
};

void PrintTo(const Module& m, std::ostream* os) { *os << m.name; }

template <class T>
std::vector<T> as(const std::vector<uint8_t>& bytes) {
  std::vector<T> v(bytes.size() / sizeof(T));
  if (!v.empty()) std::memcpy(v.data(), bytes.data(), v.size() * sizeof(T));
  return v;
}

struct Params {
  float scale;
  int offset;
  float bias[2];
};
struct ScaleBias {
  float scale, bias;
};

// c[i] = a[i] + b[i], exactly.
void check_vector_add(const Results& r) {
  const auto a = as<float>(r.inputs[0]), b = as<float>(r.inputs[1]), c = as<float>(r.outputs[0]);
  for (size_t i = 0; i < c.size(); ++i) ASSERT_EQ(c[i], a[i] + b[i]) << "element " << i;
}

// work_item_queries.cl over 64 work-items in groups of 16 from offset 5.
void check_work_item_queries(const Results& r) {
  const auto o = as<uint32_t>(r.outputs[0]);
  for (uint32_t i = 0; i < 64; ++i) {
    const uint32_t expected[10] = {i + 5, i % 16, i / 16, 16, 64, 4, 1, 5, 111, 0};
    for (int k = 0; k < 10; ++k)
      ASSERT_EQ(o[10 * i + k], expected[k]) << "item " << i << " query " << k;
  }
}

// all_builtins.cl's first and last queries over a 16x4 range of 4x2 groups from offset (3, 5).
void check_all_builtins(const Results& r) {
  const auto o = as<uint64_t>(r.outputs[0]);
  for (uint64_t y = 0; y < 4; ++y)
    for (uint64_t x = 0; x < 16; ++x) {
      const uint64_t* q = &o[15 * (y * 16 + x)];
      const uint64_t expected[15] = {x + 3, y + 5, x % 4, y % 2, y / 2,      4,
                                     4,     4,     5,     4,     y * 16 + x, (y % 2) * 4 + x % 4,
                                     2,     x + 3, y + 5};
      for (int k = 0; k < 15; ++k)
        ASSERT_EQ(q[k], expected[k]) << "item (" << x << ", " << y << ") query " << k;
    }
}

// printf.cl's lines, one per work-item, and printf's results.
void check_printf(const Results& r) {
  EXPECT_EQ(r.printed,
            "id=0 v=42 f=2.25 ok\nid=1 v=42 f=2.25 ok\nid=2 v=42 f=2.25 ok\nid=3 v=42 f=2.25 ok\n");
  EXPECT_EQ(as<int32_t>(r.outputs[0]), std::vector<int32_t>(4, 0));
}

const std::vector<Module>& modules() {
  // clang-format off
  static const std::vector<Module> all = {
      {"vector_add", "vector_add", "", "sum", 1, {1024}, {64}, {0},
       {in(1024, Data::Floats), in(1024, Data::Floats), out(1024, Data::Floats)}, nullptr,
       check_vector_add},
      {"vector_add_debug_info", "vector_add", "", "sum", 1, {256}, {64}, {0},
       {in(256, Data::Floats), in(256, Data::Floats), out(256, Data::Floats)}, nullptr,
       check_vector_add},
      {"vector_add_global_builtin", "vector_add", "", "sum", 1, {512}, {64}, {0},
       {in(512, Data::Floats), in(512, Data::Floats), out(512, Data::Floats)}, nullptr,
       check_vector_add},
      {"work_item_queries", "work_item_queries", "", "queries", 1, {64}, {16}, {5},
       {out(640, Data::Ints)}, nullptr, check_work_item_queries},
      {"indexing_2d", "indexing_2d", "", "transpose", 2, {32, 16}, {8, 4}, {0, 0},
       {in(512, Data::Floats), out(512, Data::Floats)}},
      {"helper_function", "helper_function", "", "helpers", 2, {16, 8}, {4, 4}, {0, 0},
       {in(128, Data::Floats), out(128, Data::Floats)}},
      {"helper_function_o2", "helper_function", "", "helpers", 2, {16, 8}, {4, 4}, {0, 0},
       {in(128, Data::Floats), out(128, Data::Floats)}},
      {"local_reduction", "local_reduction", "", "reduce", 1, {1024}, {128}, {0},
       {in(1024, Data::Ints), out(8, Data::Ints), local_ints(128)}},
      {"local_reduction_spirv_1_2", "local_reduction", "", "reduce", 1, {512}, {64}, {0},
       {in(512, Data::Ints), out(8, Data::Ints), local_ints(64)}},
      {"atomics", "atomics", "", "count", 1, {512}, {64}, {0},
       {in(512, Data::Ints), out(5, Data::Ints)}},
      {"math_builtins", "math_builtins", "", "math", 1, {256}, {64}, {0},
       {in(256, Data::Floats), out(256, Data::Floats)}},
      {"vload_vstore", "vload_vstore", "", "vectors", 1, {64}, {16}, {0},
       {in(64 * 7, Data::Floats), out(64 * 5, Data::Floats), out(64, Data::Halves)}},
      {"struct_argument", "struct_argument", "", "apply", 1, {128}, {32}, {0},
       {value(Params{1.5f, 7, {0.25f, -0.5f}}), in(256, Data::IntFloatPairs),
        out(128, Data::Floats)}},
      {"printf", "printf", "", "say", 1, {4}, {4}, {0},
       {out(4, Data::Ints), value(int32_t(42)), value(2.25f)}, nullptr, check_printf},
      {"expect_assume_all_extensions", "expect_assume", "", "expect", 1, {256}, {64}, {0},
       {in(256, Data::Ints), out(256, Data::Ints), value(int32_t(300))}},
      {"generic_address_space", "generic_address_space", "-cl-std=CL2.0", "sums", 1, {256},
       {32}, {0}, {in(256, Data::Ints), out(256, Data::Ints), local_ints(32)},
       "__opencl_c_generic_address_space"},
      {"spirv_friendly_builtins", "spirv_friendly_builtins", "-cl-std=CL2.0", "ids", 1, {96},
       {32}, {4}, {out(96 * 12, Data::Longs)}},
      {"all_builtins", "all_builtins", "-cl-std=CL2.0", "builtins", 2, {16, 4}, {4, 2}, {3, 5},
       {out(16 * 4 * 15, Data::Longs)}, nullptr, check_all_builtins},
      {"all_subgroup_builtins", "all_subgroup_builtins", "-cl-std=CL3.0", "sub_groups", 1, {96},
       {48}, {0}, {out(96 * 6, Data::Ints)}, "__opencl_c_subgroups"},
      {"decoration_groups", "decoration_groups", "", "scaled", 1, {256}, {64}, {0},
       {value(ScaleBias{-2.0f, 0.75f}), in(256, Data::Floats), out(256, Data::Floats)}},
  };
  // clang-format on
  return all;
}

std::vector<uint8_t> make_input(const Arg& a, uint32_t seed) {
  std::mt19937 random(seed);
  std::vector<uint8_t> bytes(a.bytes(), 0);
  for (size_t e = 0; e < a.elements; ++e) {
    const bool as_float = a.data == Data::Floats || (a.data == Data::IntFloatPairs && (e & 1) == 1);
    if (as_float) {
      const float f = std::uniform_real_distribution<float>(-4.0f, 4.0f)(random);
      std::memcpy(&bytes[e * 4], &f, 4);
    } else if (a.data == Data::Longs) {
      const int64_t v = std::uniform_int_distribution<int64_t>(-1000, 1000)(random);
      std::memcpy(&bytes[e * 8], &v, 8);
    } else {
      const int32_t v = std::uniform_int_distribution<int32_t>(-1000, 1000)(random);
      std::memcpy(&bytes[e * 4], &v, 4);
    }
  }
  return bytes;
}

std::string sorted_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  std::sort(lines.begin(), lines.end());
  std::string out;
  for (const std::string& line : lines) out += line + "\n";
  return out;
}

Results run(DeviceSession& s, cl_program program, const Module& m) {
  Results r;
  Kernel kernel = s.kernel(program, m.kernel);
  if (!kernel) return r;
  std::vector<Mem> buffers;
  for (cl_uint i = 0; i < m.args.size(); ++i) {
    const Arg& a = m.args[i];
    cl_int err = CL_SUCCESS;
    if (a.kind == Arg::Local) {
      err = clSetKernelArg(kernel.get(), i, a.bytes(), nullptr);
    } else if (a.kind == Arg::Value) {
      err = clSetKernelArg(kernel.get(), i, a.value.size(), a.value.data());
    } else {
      std::vector<uint8_t> data =
          a.kind == Arg::In ? make_input(a, 11 + i) : std::vector<uint8_t>(a.bytes(), 0);
      buffers.push_back(s.buffer(data));
      cl_mem handle = buffers.back().get();
      err = clSetKernelArg(kernel.get(), i, sizeof handle, &handle);
    }
    EXPECT_EQ(Err(CL_SUCCESS), Err(err)) << "argument " << i;
  }
  testing::internal::CaptureStdout();
  s.run(kernel.get(), m.dims, m.global, m.local, m.offset);
  EXPECT_EQ(Err(CL_SUCCESS), Err(clFinish(s.queue())));
  r.printed = sorted_lines(testing::internal::GetCapturedStdout());
  size_t b = 0;
  for (const Arg& a : m.args) {
    if (a.kind != Arg::In && a.kind != Arg::Out) continue;
    std::vector<uint8_t> bytes = s.read<uint8_t>(buffers[b++].get(), a.bytes());
    (a.kind == Arg::In ? r.inputs : r.outputs).push_back(std::move(bytes));
  }
  return r;
}

bool close_enough(float a, float b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  return std::fabs(a - b) <= 1e-5f * std::max(1.0f, std::fabs(b));
}

void compare(const Module& m, const Results& expected, const Results& actual) {
  ASSERT_EQ(expected.outputs.size(), actual.outputs.size());
  EXPECT_EQ(actual.printed, expected.printed);
  size_t index = 0;
  for (const Arg& a : m.args) {
    if (a.kind != Arg::Out) continue;
    const std::vector<uint8_t>& e = expected.outputs[index];
    const std::vector<uint8_t>& g = actual.outputs[index];
    ASSERT_EQ(e.size(), g.size());
    const size_t size = element_bytes(a.data);
    for (size_t k = 0; k < a.elements; ++k) {
      if (a.data == Data::Floats) {
        float x, y;
        std::memcpy(&x, &e[k * 4], 4);
        std::memcpy(&y, &g[k * 4], 4);
        ASSERT_TRUE(close_enough(y, x)) << "output " << index << "[" << k << "]: " << y
                                        << " from SPIR-V, " << x << " from OpenCL C";
      } else {
        ASSERT_EQ(0, std::memcmp(&e[k * size], &g[k * size], size))
            << "output " << index << "[" << k << "] differs from OpenCL C's";
      }
    }
    ++index;
  }
}

class ProducerModules : public KernelCorpus, public ::testing::WithParamInterface<Module> {};

TEST_P(ProducerModules, SameResultsAsOpenClC) {
  const Module& m = GetParam();
  const std::vector<uint8_t> il = read_corpus_file(std::string(m.name) + ".spv");
  const std::vector<uint8_t> source_bytes = read_corpus_file(std::string(m.source) + ".cl");
  if (il.empty() || source_bytes.empty())
    GTEST_SKIP() << "the corpus is not at " << MANIFOLD_PRODUCERS_CORPUS;
  const std::string source(source_bytes.begin(), source_bytes.end());
  for_each_device([&](DeviceSession& s) {
    if (deviceString(s.device(), CL_DEVICE_IL_VERSION).find("SPIR-V") == std::string::npos) {
      std::cout << "[ SKIPPED  ] " << deviceString(s.device(), CL_DEVICE_NAME) << ": no SPIR-V\n";
      return;
    }
    if (m.feature && !s.has_feature(m.feature)) {
      std::cout << "[ SKIPPED  ] " << deviceString(s.device(), CL_DEVICE_NAME) << ": no "
                << m.feature << "\n";
      return;
    }
    cl_int err = CL_SUCCESS;
    Program from_il(clCreateProgramWithIL(s.context(), il.data(), il.size(), &err));
    ASSERT_EQ(Err(CL_SUCCESS), Err(err)) << "clCreateProgramWithIL";
    const cl_device_id device = s.device();
    err = clBuildProgram(from_il.get(), 1, &device, "", nullptr, nullptr);
    ASSERT_EQ(Err(CL_SUCCESS), Err(err)) << s.build_log(from_il.get());
    // One kernel of the entry point's name, though the translator also exports a function of
    // that name.
    std::string names(256, '\0');
    size_t size = 0;
    ASSERT_EQ(Err(CL_SUCCESS), Err(clGetProgramInfo(from_il.get(), CL_PROGRAM_KERNEL_NAMES,
                                                    names.size(), names.data(), &size)));
    names.resize(size ? size - 1 : 0);
    EXPECT_EQ(names, m.kernel);
    Program from_source = s.build(source.c_str(), m.options);
    ASSERT_TRUE(from_source.get());
    const Results expected = run(s, from_source.get(), m);
    const Results actual = run(s, from_il.get(), m);
    if (HasFailure()) return;
    compare(m, expected, actual);
    if (m.host_check) m.host_check(actual);
  });
}

INSTANTIATE_TEST_SUITE_P(LlvmSpirv, ProducerModules, ::testing::ValuesIn(modules()),
                         [](const ::testing::TestParamInfo<Module>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
