// OpenCL C 3.0 on the CUDA device, host side, over the simulated driver (null_cuda.cpp), so that
// it runs everywhere (CI, sanitizers): what the device reports, that programs using each feature
// build for it, CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE, and how an NDRange with smaller last
// work-groups (non-uniform) becomes launches: their grids, blocks and launch states, from the
// simulated driver's launch log. What the kernels compute is checked by the kernel corpus
// (tests/kernels/opencl_c30_test.cpp) on real GPUs.
#include <CL/cl.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "cl_test.h"
#include "compiler/gpu_launch_abi.h"

namespace {

using namespace cltest;

// null_cuda.cpp's LaunchEntry.
struct LaunchEntry {
  unsigned grid[3], block[3], shared;
  unsigned char state[256];
  size_t state_size;
};

void* null_driver() {
  static void* handle = dlopen(NULL_CUDA_PATH, RTLD_NOW | RTLD_LOCAL);
  return handle;
}
void log_launches(bool on) {
  using Fn = void (*)(bool);
  static auto fn = null_driver()
                       ? reinterpret_cast<Fn>(dlsym(null_driver(), "null_cuda_log_launches"))
                       : nullptr;
  if (fn) fn(on);
}
std::vector<LaunchEntry> launch_log() {
  using Fn = size_t (*)(LaunchEntry*, size_t);
  static auto fn = reinterpret_cast<Fn>(dlsym(null_driver(), "null_cuda_launch_log"));
  std::vector<LaunchEntry> log(fn(nullptr, 0));
  log.resize(fn(log.data(), log.size()));
  return log;
}
manifold::compiler::GpuLaunchState state_of(const LaunchEntry& entry) {
  manifold::compiler::GpuLaunchState state;
  EXPECT_EQ(entry.state_size, sizeof state) << "the module's __manifold_launch";
  std::memcpy(&state, entry.state, std::min(sizeof state, entry.state_size));
  return state;
}

class NullCudaLanguage : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    setenv("MANIFOLD_CUDA_DRIVER", NULL_CUDA_PATH, 1);
    unsetenv("MANIFOLD_DISABLE_CUDA");
  }
  void SetUp() override {
    ASSERT_NE(null_driver(), nullptr) << dlerror();
    cl_platform_id platform = findPlatform();
    ASSERT_NE(platform, nullptr);
    cl_uint n = 0;
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_GPU, 1, &device_, &n) != CL_SUCCESS)
      GTEST_SKIP() << "no GPU device (the simulated CUDA driver did not load)";
    ASSERT_NE(deviceString(device_, CL_DEVICE_NAME).find("null CUDA driver"), std::string::npos);
    cl_int err = CL_SUCCESS;
    context_.reset(clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &err));
    ASSERT_EQ(Err(CL_SUCCESS), Err(err));
    queue_.reset(clCreateCommandQueueWithProperties(context_, device_, nullptr, &err));
    ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  }
  void TearDown() override { log_launches(false); }

  Program build(const char* source, const char* options = "-cl-std=CL3.0") {
    cl_int err = CL_SUCCESS;
    Program program(clCreateProgramWithSource(context_, 1, &source, nullptr, &err));
    EXPECT_EQ(Err(CL_SUCCESS), Err(err));
    err = clBuildProgram(program, 1, &device_, options, nullptr, nullptr);
    EXPECT_EQ(Err(CL_SUCCESS), Err(err)) << build_log(program);
    return err == CL_SUCCESS ? std::move(program) : Program();
  }
  Program compile(const char* source) {
    cl_int err = CL_SUCCESS;
    Program program(clCreateProgramWithSource(context_, 1, &source, nullptr, &err));
    EXPECT_EQ(Err(CL_SUCCESS), Err(err));
    err = clCompileProgram(program, 1, &device_, "-cl-std=CL3.0", 0, nullptr, nullptr, nullptr,
                           nullptr);
    EXPECT_EQ(Err(CL_SUCCESS), Err(err)) << build_log(program);
    return program;
  }
  std::string build_log(cl_program program) const {
    size_t size = 0;
    clGetProgramBuildInfo(program, device_, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
    std::string log(size, '\0');
    clGetProgramBuildInfo(program, device_, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
    return log;
  }
  size_t global_variable_bytes(cl_program program) const {
    size_t bytes = 0;
    EXPECT_EQ(Err(CL_SUCCESS), Err(clGetProgramBuildInfo(
                                   program, device_, CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE,
                                   sizeof bytes, &bytes, nullptr)));
    return bytes;
  }

  cl_device_id device_ = nullptr;
  Context context_;
  Queue queue_;
};

TEST_F(NullCudaLanguage, ReportsOpenCLC30WithItsOptionalFeatures) {
  std::set<std::string> versions;
  for (const cl_name_version& v :
       infoVector<cl_name_version>(clGetDeviceInfo, device_, CL_DEVICE_OPENCL_C_ALL_VERSIONS))
    versions.insert(std::string(v.name) + " " + std::to_string(CL_VERSION_MAJOR(v.version)) + "." +
                    std::to_string(CL_VERSION_MINOR(v.version)));
  EXPECT_EQ(versions, (std::set<std::string>{"OpenCL C 1.0", "OpenCL C 1.1", "OpenCL C 1.2",
                                             "OpenCL C 3.0"}));
  std::set<std::string> features;
  for (const cl_name_version& f :
       infoVector<cl_name_version>(clGetDeviceInfo, device_, CL_DEVICE_OPENCL_C_FEATURES)) {
    EXPECT_EQ(f.version, CL_MAKE_VERSION(3, 0, 0)) << f.name;
    features.insert(f.name);
  }
  for (const char* f :
       {"__opencl_c_int64", "__opencl_c_fp64", "__opencl_c_generic_address_space",
        "__opencl_c_program_scope_global_variables", "__opencl_c_atomic_order_acq_rel",
        "__opencl_c_atomic_order_seq_cst", "__opencl_c_atomic_scope_device",
        "__opencl_c_atomic_scope_all_devices", "__opencl_c_work_group_collective_functions"})
    EXPECT_TRUE(features.count(f)) << f;
  EXPECT_TRUE(deviceInfo<cl_bool>(device_, CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT));
  EXPECT_TRUE(deviceInfo<cl_bool>(device_, CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT));
  EXPECT_TRUE(deviceInfo<cl_bool>(device_, CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT));
  EXPECT_EQ(deviceInfo<size_t>(device_, CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE), 64u * 1024);
  EXPECT_GE(deviceInfo<size_t>(device_, CL_DEVICE_GLOBAL_VARIABLE_PREFERRED_TOTAL_SIZE),
            64u * 1024);
  const cl_device_atomic_capabilities all =
      CL_DEVICE_ATOMIC_ORDER_RELAXED | CL_DEVICE_ATOMIC_ORDER_ACQ_REL |
      CL_DEVICE_ATOMIC_ORDER_SEQ_CST | CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP |
      CL_DEVICE_ATOMIC_SCOPE_DEVICE | CL_DEVICE_ATOMIC_SCOPE_ALL_DEVICES;
  EXPECT_EQ(
      deviceInfo<cl_device_atomic_capabilities>(device_, CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES),
      all);
  EXPECT_EQ(
      deviceInfo<cl_device_atomic_capabilities>(device_, CL_DEVICE_ATOMIC_FENCE_CAPABILITIES) & all,
      all);
}

// Each feature's builtins resolve for the NVPTX target (a missing one fails the build).
TEST_F(NullCudaLanguage, ProgramsUsingEachFeatureBuild) {
  EXPECT_TRUE(build(R"(
    kernel void generic_pointers(global int* g, global int* out) {
      local int l;
      int p = 1;
      generic int* any = g[0] ? (generic int*)g : g[1] ? (generic int*)&l : &p;
      out[0] = (to_global(any) != 0) + (to_local(any) != 0) + (to_private(any) != 0) +
               get_fence(any);
    })"));
  EXPECT_TRUE(build(R"(
    kernel void atomics(global atomic_int* g, global atomic_long* l, global int* out) {
      local atomic_uint counter;
      if (get_local_id(0) == 0) atomic_init(&counter, 0u);
      work_group_barrier(CLK_LOCAL_MEM_FENCE);
      atomic_fetch_add_explicit(&counter, 1u, memory_order_acq_rel, memory_scope_work_group);
      atomic_fetch_max_explicit(l, 3, memory_order_seq_cst, memory_scope_all_svm_devices);
      int expected = 0;
      atomic_compare_exchange_strong_explicit(g, &expected, 1, memory_order_acq_rel,
                                              memory_order_acquire, memory_scope_device);
      atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE, memory_order_release, memory_scope_device);
      out[get_global_id(0)] = atomic_load_explicit(g, memory_order_acquire, memory_scope_device);
    })"));
  EXPECT_TRUE(build(R"(
    kernel void collectives(global double* d, global long* l, global int* out) {
      size_t i = get_global_id(0);
      d[i] = work_group_scan_inclusive_add(d[i]) + work_group_broadcast(d[i], 1, 0);
      l[i] = work_group_reduce_min(l[i]) + work_group_scan_exclusive_max(l[i]);
      out[i] = work_group_all(out[i]) + work_group_any(out[i]);
    })"));
}

TEST_F(NullCudaLanguage, GlobalVariableTotalSizeCountsTheProgramsOwnVariables) {
  Program program = build(R"(
    global int counter = 5;                     // 4
    global float4 table[3] = {(float4)(1.0f)};  // 48
    static global long hidden;                  // 8
    global int* global pointer = &counter;      // 8
    constant int not_counted[64] = {1};         // __constant, not __global
    int next(void) { static global int ticket = 100; return ticket++; }  // 4
    kernel void k(global int* out) {
      out[0] = *pointer + (int)table[1].x + (int)hidden + next() + not_counted[out[1]];
    })");
  ASSERT_TRUE(program);
  EXPECT_EQ(global_variable_bytes(program), 4u + 48 + 8 + 8 + 4);
  // Variables declared in one program and defined in another of a link: counted once.
  Program a = compile(R"(
    extern global int total;
    static global int calls;
    int add(int v) { ++calls; return total += v; })");
  Program b = compile(R"(
    global int total = 40;
    static global int calls = 7;
    int add(int v);
    kernel void use(global int* out) { out[0] = add(2) + calls; })");
  cl_program inputs[] = {a, b};
  cl_int err = CL_SUCCESS;
  Program linked(clLinkProgram(context_, 1, &device_, "", 2, inputs, nullptr, nullptr, &err));
  ASSERT_EQ(Err(CL_SUCCESS), Err(err)) << (linked ? build_log(linked) : "");
  EXPECT_EQ(global_variable_bytes(linked), 3u * 4);
}

// An NDRange whose last work-groups are smaller: one launch per shape of work-group, each told
// where it is in the NDRange (tests/kernels/opencl_c30_test.cpp checks the IDs on GPUs).
TEST_F(NullCudaLanguage, SmallerLastWorkGroupsLaunchApart) {
  Program program = build(R"(
    kernel void ids(global ulong* out, local int* scratch) {
      scratch[get_local_linear_id()] = 1;
      out[get_global_linear_id()] = get_global_id(0) + get_global_id(1) * 1000 +
                                    get_enqueued_local_size(0) + get_global_size(1);
    })");
  ASSERT_TRUE(program);
  cl_int err = CL_SUCCESS;
  Kernel kernel(clCreateKernel(program, "ids", &err));
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  Mem out(clCreateBuffer(context_, CL_MEM_READ_WRITE, 37 * 10 * 8, nullptr, &err));
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  cl_mem handle = out;
  ASSERT_EQ(Err(CL_SUCCESS), Err(clSetKernelArg(kernel, 0, sizeof handle, &handle)));
  ASSERT_EQ(Err(CL_SUCCESS), Err(clSetKernelArg(kernel, 1, 8 * 4 * sizeof(int), nullptr)));
  ASSERT_EQ(Err(CL_SUCCESS), Err(clFinish(queue_)));
  log_launches(true);
  const size_t offset[2] = {1, 2}, global[2] = {37, 10}, local[2] = {8, 4};
  ASSERT_EQ(Err(CL_SUCCESS), Err(clEnqueueNDRangeKernel(queue_, kernel, 2, offset, global, local, 0,
                                                        nullptr, nullptr)));
  // Then a uniform launch of the same kernel: one grid, the state back to a whole NDRange.
  const size_t uniform[2] = {32, 8};
  ASSERT_EQ(Err(CL_SUCCESS), Err(clEnqueueNDRangeKernel(queue_, kernel, 2, nullptr, uniform, local,
                                                        0, nullptr, nullptr)));
  ASSERT_EQ(Err(CL_SUCCESS), Err(clFinish(queue_)));
  const std::vector<LaunchEntry> log = launch_log();
  ASSERT_EQ(log.size(), 5u);
  // x: groups 0-3 of 8 and group 4 of 5; y: groups 0-1 of 4 and group 2 of 2.
  struct Part {
    unsigned grid_x, grid_y, block_x, block_y, first_x, first_y;
  };
  const Part parts[4] = {
      {4, 2, 8, 4, 0, 0}, {1, 2, 5, 4, 4, 0}, {4, 1, 8, 2, 0, 2}, {1, 1, 5, 2, 4, 2}};
  for (size_t i = 0; i < 4; ++i) {
    SCOPED_TRACE("part " + std::to_string(i));
    const LaunchEntry& e = log[i];
    const Part& p = parts[i];
    EXPECT_EQ(e.grid[0], p.grid_x);
    EXPECT_EQ(e.grid[1], p.grid_y);
    EXPECT_EQ(e.grid[2], 1u);
    EXPECT_EQ(e.block[0], p.block_x);
    EXPECT_EQ(e.block[1], p.block_y);
    EXPECT_EQ(e.block[2], 1u);
    EXPECT_EQ(e.shared, 8u * 4 * sizeof(int));  // the __local argument; static scratch apart
    const manifold::compiler::GpuLaunchState s = state_of(e);
    EXPECT_EQ(s.work_dim, 2u);
    EXPECT_EQ(s.global_offset[0], 1u);
    EXPECT_EQ(s.global_offset[1], 2u);
    EXPECT_EQ(s.group_offset[0], p.first_x);
    EXPECT_EQ(s.group_offset[1], p.first_y);
    EXPECT_EQ(s.num_groups[0], 5u);
    EXPECT_EQ(s.num_groups[1], 3u);
    EXPECT_EQ(s.num_groups[2], 1u);
    EXPECT_EQ(s.global_size[0], 37u);
    EXPECT_EQ(s.global_size[1], 10u);
    EXPECT_EQ(s.local_size[0], 8u);
    EXPECT_EQ(s.local_size[1], 4u);
    EXPECT_EQ(s.global_id_base[0], 1u + 8 * p.first_x);
    EXPECT_EQ(s.global_id_base[1], 2u + 4 * p.first_y);
  }
  const LaunchEntry& whole = log[4];
  EXPECT_EQ(whole.grid[0], 4u);
  EXPECT_EQ(whole.grid[1], 2u);
  EXPECT_EQ(whole.block[0], 8u);
  EXPECT_EQ(whole.block[1], 4u);
  const manifold::compiler::GpuLaunchState s = state_of(whole);
  manifold::compiler::GpuLaunchState plain;
  plain.work_dim = 2;
  EXPECT_EQ(std::memcmp(&s, &plain, sizeof s), 0) << "a whole NDRange without offset";
}

// A smaller last group would cost a launch of its own: a local size the runtime picks divides
// the NDRange where a divisor exists, though the device takes non-uniform work-groups.
TEST_F(NullCudaLanguage, LocalSizeLeftToTheRuntimeDividesTheNDRange) {
  Program program = build("kernel void k(global int* out) { out[get_global_id(0)] = 1; }");
  ASSERT_TRUE(program);
  cl_int err = CL_SUCCESS;
  Kernel kernel(clCreateKernel(program, "k", &err));
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  const size_t global = 1000000;
  Mem out(clCreateBuffer(context_, CL_MEM_READ_WRITE, global * sizeof(int), nullptr, &err));
  ASSERT_EQ(Err(CL_SUCCESS), Err(err));
  cl_mem handle = out;
  ASSERT_EQ(Err(CL_SUCCESS), Err(clSetKernelArg(kernel, 0, sizeof handle, &handle)));
  ASSERT_EQ(Err(CL_SUCCESS), Err(clFinish(queue_)));
  log_launches(true);
  ASSERT_EQ(Err(CL_SUCCESS), Err(clEnqueueNDRangeKernel(queue_, kernel, 1, nullptr, &global,
                                                        nullptr, 0, nullptr, nullptr)));
  ASSERT_EQ(Err(CL_SUCCESS), Err(clFinish(queue_)));
  const std::vector<LaunchEntry> log = launch_log();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(size_t(log[0].grid[0]) * log[0].block[0], global);
}

}  // namespace
