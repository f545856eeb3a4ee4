// cl_arm_import_memory (revision 6): clImportMemoryARM makes the application's memory (malloc'ed,
// an mmap'ed file, an unaligned range) a buffer that every device of the context uses in place:
// kernels change the application's bytes with no copy and no read back. Every error of the
// extension, and the commands it forbids on imported buffers.
#include <fcntl.h>
#include <linux/udmabuf.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "cl_test.h"

using namespace cltest;

namespace {

// One emulated GPU (the CPU with memory of its own) joins the CPU in the all-devices context.
const bool kEmulated = [] { return setenv("MANIFOLD_EMULATED_GPUS", "1", /*overwrite=*/0) == 0; }();

using ImportFn = cl_mem(CL_API_CALL*)(cl_context, cl_mem_flags, const cl_import_properties_arm*,
                                      void*, size_t, cl_int*);

class ImportMemory : public ContextTest {
 protected:
  void SetUp() override {
    ContextTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    import_ = reinterpret_cast<ImportFn>(
        clGetExtensionFunctionAddressForPlatform(platform_, "clImportMemoryARM"));
    ASSERT_NE(import_, nullptr) << "clImportMemoryARM is not reachable";
    const std::string extensions = deviceString(device_, CL_DEVICE_EXTENSIONS);
    if (!hasWord(extensions, "cl_arm_import_memory_host"))
      GTEST_SKIP() << "the device does not report cl_arm_import_memory_host";
    EXPECT_TRUE(hasWord(extensions, "cl_arm_import_memory"));
  }

  Mem import(void* memory, size_t size, cl_mem_flags flags = CL_MEM_READ_WRITE,
             const cl_import_properties_arm* properties = nullptr, cl_context context = nullptr) {
    cl_int err = CL_SUCCESS;
    Mem m(import_(context ? context : context_.get(), flags, properties, memory, size, &err));
    last_error_ = err;
    return m;
  }
  cl_int import_error(void* memory, size_t size, cl_mem_flags flags = CL_MEM_READ_WRITE,
                      const cl_import_properties_arm* properties = nullptr) {
    Mem m = import(memory, size, flags, properties);
    EXPECT_EQ(m.get() == nullptr, last_error_ != CL_SUCCESS);
    return last_error_;
  }

  // add(global uchar* p, uchar v): p[i] += v on `queue` (the fixture's by default).
  void add(cl_context context, cl_device_id device, cl_command_queue queue, cl_mem buffer, size_t n,
           cl_uchar v) {
    const char* source = "kernel void add(global uchar* p, uchar v) { p[get_global_id(0)] += v; }";
    cl_int err = CL_SUCCESS;
    Program p(clCreateProgramWithSource(context, 1, &source, nullptr, &err));
    ASSERT_CL(CL_SUCCESS, clBuildProgram(p, 1, &device, nullptr, nullptr, nullptr));
    Kernel k(clCreateKernel(p, "add", &err));
    ASSERT_ERR(CL_SUCCESS, err);
    ASSERT_CL(CL_SUCCESS, clSetKernelArg(k, 0, sizeof buffer, &buffer));
    ASSERT_CL(CL_SUCCESS, clSetKernelArg(k, 1, sizeof v, &v));
    ASSERT_CL(CL_SUCCESS,
              clEnqueueNDRangeKernel(queue, k, 1, nullptr, &n, nullptr, 0, nullptr, nullptr));
    ASSERT_CL(CL_SUCCESS, clFinish(queue));
  }

  ImportFn import_ = nullptr;
  cl_int last_error_ = CL_SUCCESS;
};

TEST_F(ImportMemory, KernelChangesMallocedMemoryInPlace) {
  SKIP_IF_KERNELS_COMPUTE_NOTHING(device_);
  const size_t n = 1 << 20;
  std::vector<cl_uchar> host(n);
  for (size_t i = 0; i < n; ++i) host[i] = cl_uchar(i);
  Mem m = import(host.data(), n);
  ASSERT_ERR(CL_SUCCESS, last_error_);
  EXPECT_EQ(memInfo<size_t>(m, CL_MEM_SIZE), n);
  add(context_, device_, queue_, m, n, 3);
  // No read: the kernel wrote the application's own bytes.
  for (size_t i = 0; i < n; i += 4099) ASSERT_EQ(host[i], cl_uchar(i + 3)) << i;
  // The host's change is what the next kernel sees.
  host[7] = 100;
  add(context_, device_, queue_, m, n, 1);
  EXPECT_EQ(host[7], 101);
  EXPECT_EQ(host[n - 1], cl_uchar(n - 1 + 4));
}

TEST_F(ImportMemory, UnalignedRangeAndSubBuffer) {
  SKIP_IF_KERNELS_COMPUTE_NOTHING(device_);
  std::vector<cl_uchar> host(10000, 1);
  // From the third byte: only the imported range changes.
  Mem m = import(host.data() + 3, 9000);
  ASSERT_ERR(CL_SUCCESS, last_error_);
  add(context_, device_, queue_, m, 9000, 5);
  EXPECT_EQ(host[2], 1);
  EXPECT_EQ(host[3], 6);
  EXPECT_EQ(host[9002], 6);
  EXPECT_EQ(host[9003], 1);
  // A sub-buffer of an imported buffer is the same memory.
  const size_t align = size_t(deviceInfo<cl_uint>(device_, CL_DEVICE_MEM_BASE_ADDR_ALIGN)) / 8;
  cl_buffer_region region{align, 100};
  cl_int err = CL_SUCCESS;
  Mem sub(clCreateSubBuffer(m, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  add(context_, device_, queue_, sub, 100, 10);
  EXPECT_EQ(host[3 + align], 16);
  EXPECT_EQ(host[3 + align + 99], 16);
  EXPECT_EQ(host[3 + align + 100], 6);
}

TEST_F(ImportMemory, FileMappedWithMmap) {
  SKIP_IF_KERNELS_COMPUTE_NOTHING(device_);
  char path[] = "/tmp/manifold-import-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  unlink(path);
  const size_t n = 3 * 4096;
  ASSERT_EQ(ftruncate(fd, n), 0);
  auto* bytes = static_cast<cl_uchar*>(mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
  ASSERT_NE(bytes, MAP_FAILED);
  {
    Mem m = import(bytes, n);
    cl_device_type type = 0;
    clGetDeviceInfo(device_, CL_DEVICE_TYPE, sizeof type, &type, nullptr);
    if (last_error_ == CL_INVALID_OPERATION && type == CL_DEVICE_TYPE_GPU) {
      munmap(bytes, n);
      close(fd);
      // Seen on the H100 machine: the GPU driver cannot page-lock pages of an ordinary file
      // (Linux refuses long-term pins of file-backed pages), and imports never fall back to a
      // copy. The CPU must import them.
      GTEST_SKIP() << "the GPU driver cannot page-lock file-backed pages on this machine";
    }
    ASSERT_ERR(CL_SUCCESS, last_error_);
    add(context_, device_, queue_, m, n, 9);
  }
  // Through the file: the kernel's bytes reached the page cache.
  cl_uchar b = 0;
  ASSERT_EQ(pread(fd, &b, 1, n - 1), 1);
  EXPECT_EQ(b, 9);
  munmap(bytes, n);
  close(fd);
}

TEST_F(ImportMemory, EveryDeviceOfTheContextUsesTheOneRange) {
  // Every device that imports (the CPU, emulated GPUs, CUDA GPUs: the simulated driver's too,
  // whose kernels compute nothing, so that its mapping of the range is exercised in CI).
  cl_uint count = 0;
  ASSERT_CL(CL_SUCCESS, clGetDeviceIDs(platform_, CL_DEVICE_TYPE_ALL, 0, nullptr, &count));
  std::vector<cl_device_id> all(count);
  ASSERT_CL(CL_SUCCESS, clGetDeviceIDs(platform_, CL_DEVICE_TYPE_ALL, count, all.data(), nullptr));
  std::vector<cl_device_id> devices;
  bool all_compute = true;
  for (cl_device_id d : all)
    if (hasWord(deviceString(d, CL_DEVICE_EXTENSIONS), "cl_arm_import_memory_host")) {
      devices.push_back(d);
      all_compute = all_compute && !kernelsComputeNothing(d);
    }
  if (devices.size() < 2) GTEST_SKIP() << "fewer than two devices that import memory";
  cl_int err = CL_SUCCESS;
  Context context(
      clCreateContext(nullptr, cl_uint(devices.size()), devices.data(), nullptr, nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  std::vector<cl_uchar> host(4096, 0);
  Mem m = import(host.data(), host.size(), CL_MEM_READ_WRITE, nullptr, context);
  ASSERT_ERR(CL_SUCCESS, last_error_);
  // Each device in turn adds 1: each sees the others' writes, with no migration in between.
  for (cl_device_id d : devices) {
    Queue q(clCreateCommandQueueWithProperties(context, d, nullptr, &err));
    ASSERT_ERR(CL_SUCCESS, err);
    add(context, d, q, m, host.size(), 1);
  }
  if (!all_compute) return;
  EXPECT_EQ(host[0], cl_uchar(devices.size()));
  EXPECT_EQ(host[4095], cl_uchar(devices.size()));
}

TEST_F(ImportMemory, ErrorsOfTheExtension) {
  std::vector<cl_uchar> host(4096);
  // The spec: CL_INVALID_CONTEXT on invalid context.
  cl_int err = CL_SUCCESS;
  EXPECT_EQ(import_(nullptr, CL_MEM_READ_WRITE, nullptr, host.data(), host.size(), &err), nullptr);
  EXPECT_ERR(CL_INVALID_CONTEXT, err);
  // The spec: CL_INVALID_VALUE on invalid flag input; CL_MEM_USE_HOST_PTR is ignored.
  EXPECT_ERR(CL_INVALID_VALUE, import_error(host.data(), host.size(), CL_MEM_ALLOC_HOST_PTR));
  EXPECT_ERR(CL_INVALID_VALUE, import_error(host.data(), host.size(), CL_MEM_COPY_HOST_PTR));
  EXPECT_ERR(CL_INVALID_VALUE,
             import_error(host.data(), host.size(), CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY));
  EXPECT_ERR(CL_INVALID_VALUE,
             import_error(host.data(), host.size(), CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS));
  EXPECT_ERR(CL_SUCCESS,
             import_error(host.data(), host.size(), CL_MEM_READ_ONLY | CL_MEM_USE_HOST_PTR));
  EXPECT_ERR(CL_SUCCESS, import_error(host.data(), host.size(), CL_MEM_HOST_NO_ACCESS));
  EXPECT_ERR(CL_INVALID_VALUE, import_error(nullptr, host.size()));
  EXPECT_ERR(CL_INVALID_VALUE, import_error(host.data(), 0));
  // The spec: CL_INVALID_PROPERTY when invalid properties are passed; the default type (HOST)
  // given explicitly, or an empty list, is fine.
  const cl_import_properties_arm host_type[] = {CL_IMPORT_TYPE_ARM, CL_IMPORT_TYPE_HOST_ARM, 0};
  const cl_import_properties_arm empty[] = {0};
  const cl_import_properties_arm dma_buf[] = {CL_IMPORT_TYPE_ARM, CL_IMPORT_TYPE_DMA_BUF_ARM, 0};
  const cl_import_properties_arm protected_type[] = {CL_IMPORT_TYPE_ARM,
                                                     CL_IMPORT_TYPE_PROTECTED_ARM, 0};
  const cl_import_properties_arm unknown[] = {0x1234, 1, 0};
  EXPECT_ERR(CL_SUCCESS, import_error(host.data(), host.size(), CL_MEM_READ_WRITE, host_type));
  EXPECT_ERR(CL_SUCCESS, import_error(host.data(), host.size(), CL_MEM_READ_WRITE, empty));
  // DMA_BUF: where every device of the context imports dma_buf, `memory` must point at a dma_buf
  // descriptor (a memfd is none); elsewhere the type is refused.
  const bool takes_dma_buf =
      hasWord(deviceString(device_, CL_DEVICE_EXTENSIONS), "cl_arm_import_memory_dma_buf");
  const int not_a_dma_buf = memfd_create("not-a-dma-buf", 0);
  ASSERT_GE(not_a_dma_buf, 0);
  ASSERT_EQ(ftruncate(not_a_dma_buf, 4096), 0);
  int fd_value = not_a_dma_buf;
  EXPECT_ERR(takes_dma_buf ? CL_INVALID_VALUE : CL_INVALID_PROPERTY,
             import_error(&fd_value, 4096, CL_MEM_READ_WRITE, dma_buf));
  fd_value = -1;
  EXPECT_ERR(takes_dma_buf ? CL_INVALID_VALUE : CL_INVALID_PROPERTY,
             import_error(&fd_value, 4096, CL_MEM_READ_WRITE, dma_buf));
  close(not_a_dma_buf);
  EXPECT_ERR(CL_INVALID_PROPERTY,
             import_error(host.data(), host.size(), CL_MEM_READ_WRITE, protected_type));
  EXPECT_ERR(CL_INVALID_PROPERTY,
             import_error(host.data(), host.size(), CL_MEM_READ_WRITE, unknown));
  // The spec: CL_INVALID_OPERATION when host virtual pages in the range are not mapped.
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  void* gone = mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(gone, MAP_FAILED);
  munmap(static_cast<char*>(gone) + page, page);  // the second page is not mapped any more
  EXPECT_ERR(CL_INVALID_OPERATION, import_error(gone, 2 * page));
  EXPECT_ERR(CL_SUCCESS, import_error(gone, page));
  munmap(gone, page);
}

// The seed: imported buffers are compatible with every other use of cl_mem, images made from them
// included. A 1D image buffer over imported memory is read by a kernel into another import.
TEST_F(ImportMemory, ImageMadeFromAnImportedBuffer) {
  cl_bool images = CL_FALSE;
  clGetDeviceInfo(device_, CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, nullptr);
  if (!images) GTEST_SKIP() << "the device has no images";
  SKIP_IF_KERNELS_COMPUTE_NOTHING(device_);
  const size_t n = 1024;
  std::vector<cl_uint> pixels(n), out(n, 0);
  for (size_t i = 0; i < n; ++i) pixels[i] = cl_uint(i * 3 + 1);
  Mem src = import(pixels.data(), n * sizeof(cl_uint), CL_MEM_READ_ONLY);
  ASSERT_ERR(CL_SUCCESS, last_error_);
  Mem dst = import(out.data(), n * sizeof(cl_uint), CL_MEM_WRITE_ONLY);
  ASSERT_ERR(CL_SUCCESS, last_error_);
  const cl_image_format format{CL_R, CL_UNSIGNED_INT32};
  cl_image_desc desc{};
  desc.image_type = CL_MEM_OBJECT_IMAGE1D_BUFFER;
  desc.image_width = n;
  desc.buffer = src;
  cl_int err = CL_SUCCESS;
  Mem image(clCreateImage(context_, CL_MEM_READ_ONLY, &format, &desc, nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  const char* source =
      "kernel void copy(read_only image1d_buffer_t src, global uint* dst) {\n"
      "  int i = get_global_id(0); dst[i] = read_imageui(src, i).x; }";
  Program p(clCreateProgramWithSource(context_, 1, &source, nullptr, &err));
  ASSERT_CL(CL_SUCCESS, clBuildProgram(p, 1, &device_, nullptr, nullptr, nullptr));
  Kernel k(clCreateKernel(p, "copy", &err));
  ASSERT_ERR(CL_SUCCESS, err);
  cl_mem args[2] = {image, dst};
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(k, 0, sizeof(cl_mem), &args[0]));
  ASSERT_CL(CL_SUCCESS, clSetKernelArg(k, 1, sizeof(cl_mem), &args[1]));
  ASSERT_CL(CL_SUCCESS,
            clEnqueueNDRangeKernel(queue_, k, 1, nullptr, &n, nullptr, 0, nullptr, nullptr));
  ASSERT_CL(CL_SUCCESS, clFinish(queue_));
  EXPECT_EQ(out, pixels);
}

// A dma_buf from the kernel's udmabuf driver (a memfd's pages exported as a dma_buf), where the
// machine offers /dev/udmabuf: a kernel changes it in place, seen through the memfd.
TEST_F(ImportMemory, DmaBufIsUsedInPlace) {
  if (!hasWord(deviceString(device_, CL_DEVICE_EXTENSIONS), "cl_arm_import_memory_dma_buf"))
    GTEST_SKIP() << "the device does not report cl_arm_import_memory_dma_buf";
  SKIP_IF_KERNELS_COMPUTE_NOTHING(device_);
  const int dev = open("/dev/udmabuf", O_RDWR);
  if (dev < 0) GTEST_SKIP() << "no /dev/udmabuf on this machine: no dma_buf to import";
  const size_t size = size_t(sysconf(_SC_PAGESIZE)) * 4;
  const int mem = memfd_create("udmabuf-pages", MFD_ALLOW_SEALING);
  ASSERT_GE(mem, 0);
  ASSERT_EQ(ftruncate(mem, off_t(size)), 0);
  ASSERT_EQ(fcntl(mem, F_ADD_SEALS, F_SEAL_SHRINK), 0);
  udmabuf_create create{};
  create.memfd = uint32_t(mem);
  create.size = size;
  const int dma_buf = ioctl(dev, UDMABUF_CREATE, &create);
  close(dev);
  if (dma_buf < 0) {
    close(mem);
    GTEST_SKIP() << "UDMABUF_CREATE refused: " << std::strerror(errno);
  }
  auto* pages =
      static_cast<cl_uchar*>(mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, mem, 0));
  ASSERT_NE(pages, MAP_FAILED);
  pages[0] = 5;
  const cl_import_properties_arm dma_buf_type[] = {CL_IMPORT_TYPE_ARM, CL_IMPORT_TYPE_DMA_BUF_ARM,
                                                   0};
  {
    Mem m = import(const_cast<int*>(&dma_buf), size, CL_MEM_READ_WRITE, dma_buf_type);
    ASSERT_ERR(CL_SUCCESS, last_error_);
    add(context_, device_, queue_, m, size, 3);
  }
  EXPECT_EQ(pages[0], 8);
  EXPECT_EQ(pages[size - 1], 3);
  munmap(pages, size);
  close(dma_buf);
  close(mem);
}

TEST_F(ImportMemory, CommandsTheExtensionForbidsOnImportedBuffers) {
  std::vector<cl_uchar> host(4096), other(4096);
  Mem m = import(host.data(), host.size());
  ASSERT_ERR(CL_SUCCESS, last_error_);
  Mem plain = makeBuffer(host.size());
  const size_t origin[3] = {0, 0, 0}, region[3] = {16, 1, 1};
  const cl_uchar pattern = 1;
  // The spec: CL_INVALID_OPERATION when an imported memory object is passed to these.
  EXPECT_CL(CL_INVALID_OPERATION,
            clEnqueueReadBuffer(queue_, m, CL_TRUE, 0, 16, other.data(), 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_OPERATION,
            clEnqueueWriteBuffer(queue_, m, CL_TRUE, 0, 16, other.data(), 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_OPERATION,
            clEnqueueCopyBuffer(queue_, m, plain, 0, 0, 16, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_OPERATION,
            clEnqueueCopyBuffer(queue_, plain, m, 0, 0, 16, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_OPERATION,
            clEnqueueFillBuffer(queue_, m, &pattern, 1, 0, 16, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_OPERATION,
            clEnqueueReadBufferRect(queue_, m, CL_TRUE, origin, origin, region, 0, 0, 0, 0,
                                    other.data(), 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_OPERATION,
            clEnqueueWriteBufferRect(queue_, m, CL_TRUE, origin, origin, region, 0, 0, 0, 0,
                                     other.data(), 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_OPERATION, clEnqueueCopyBufferRect(queue_, m, plain, origin, origin, region,
                                                          0, 0, 0, 0, 0, nullptr, nullptr));
  cl_int err = CL_SUCCESS;
  EXPECT_EQ(clEnqueueMapBuffer(queue_, m, CL_TRUE, CL_MAP_READ, 0, 16, 0, nullptr, nullptr, &err),
            nullptr);
  EXPECT_ERR(CL_INVALID_OPERATION, err);
  EXPECT_CL(CL_INVALID_OPERATION,
            clEnqueueUnmapMemObject(queue_, m, host.data(), 0, nullptr, nullptr));
  // A sub-buffer of it is imported memory too.
  cl_buffer_region sub_region{0, 64};
  Mem sub(clCreateSubBuffer(m, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &sub_region, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  EXPECT_CL(CL_INVALID_OPERATION,
            clEnqueueReadBuffer(queue_, sub, CL_TRUE, 0, 16, other.data(), 0, nullptr, nullptr));
  // Other buffers are unaffected.
  EXPECT_CL(CL_SUCCESS,
            clEnqueueReadBuffer(queue_, plain, CL_TRUE, 0, 16, other.data(), 0, nullptr, nullptr));
}

}  // namespace
