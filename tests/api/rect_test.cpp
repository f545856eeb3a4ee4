// clEnqueueReadBufferRect, clEnqueueWriteBufferRect, clEnqueueCopyBufferRect: data layout,
// default pitches, pitch rules, bounds and overlap (Appendix D of the spec).
#include "cl_test.h"

using namespace cltest;

namespace {

class RectApi : public ContextTest {};

std::vector<unsigned char> pattern(size_t n) {
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>(i * 13 + 7);
  return v;
}

// Reference: copies a rectangle between two linear byte arrays.
void refCopy(const unsigned char* src, unsigned char* dst, const size_t so[3],
             const size_t dOrig[3], const size_t region[3], size_t srp, size_t ssp, size_t drp,
             size_t dsp) {
  for (size_t z = 0; z < region[2]; ++z)
    for (size_t y = 0; y < region[1]; ++y)
      for (size_t x = 0; x < region[0]; ++x)
        dst[(dOrig[2] + z) * dsp + (dOrig[1] + y) * drp + dOrig[0] + x] =
            src[(so[2] + z) * ssp + (so[1] + y) * srp + so[0] + x];
}

TEST_F(RectApi, WriteRectThenReadRect3D) {
  // Buffer: 16-byte rows, 8 rows a slice, 4 slices. Host: 20-byte rows, 10 rows a slice.
  const size_t brp = 16, bsp = 16 * 8, bsize = bsp * 4;
  const size_t hrp = 20, hsp = 20 * 10, hsize = hsp * 4;
  Mem m = makeBuffer(bsize);
  std::vector<unsigned char> zeros(bsize, 0);
  write(m, zeros.data(), bsize);
  auto host = pattern(hsize);
  const size_t borig[3] = {3, 2, 1}, horig[3] = {1, 4, 0}, region[3] = {10, 5, 3};
  Event e;
  ASSERT_CL(CL_SUCCESS, clEnqueueWriteBufferRect(queue_, m, CL_TRUE, borig, horig, region, brp, bsp,
                                                 hrp, hsp, host.data(), 0, nullptr, e.out()));
  EXPECT_EQ(cl_command_type(CL_COMMAND_WRITE_BUFFER_RECT),
            eventInfo<cl_command_type>(e, CL_EVENT_COMMAND_TYPE));
  std::vector<unsigned char> want(bsize, 0);
  refCopy(host.data(), want.data(), horig, borig, region, hrp, hsp, brp, bsp);
  EXPECT_EQ(want, read(m, bsize));

  std::vector<unsigned char> back(hsize, 0), want_back(hsize, 0);
  ASSERT_CL(CL_SUCCESS, clEnqueueReadBufferRect(queue_, m, CL_TRUE, borig, horig, region, brp, bsp,
                                                hrp, hsp, back.data(), 0, nullptr, e.out()));
  EXPECT_EQ(cl_command_type(CL_COMMAND_READ_BUFFER_RECT),
            eventInfo<cl_command_type>(e, CL_EVENT_COMMAND_TYPE));
  refCopy(want.data(), want_back.data(), borig, horig, region, brp, bsp, hrp, hsp);
  EXPECT_EQ(want_back, back);
}

TEST_F(RectApi, DefaultPitches) {
  // The spec: if buffer_row_pitch is 0, it is computed as region[0]; if buffer_slice_pitch is
  // 0, it is computed as region[1] * buffer_row_pitch (likewise for the host side).
  const size_t region[3] = {8, 4, 2}, zero[3] = {0, 0, 0};
  Mem m = makeBuffer(64);
  auto host = pattern(64);
  ASSERT_CL(CL_SUCCESS, clEnqueueWriteBufferRect(queue_, m, CL_TRUE, zero, zero, region, 0, 0, 0, 0,
                                                 host.data(), 0, nullptr, nullptr));
  EXPECT_EQ(host, read(m, 64));
  std::vector<unsigned char> back(64, 0);
  ASSERT_CL(CL_SUCCESS, clEnqueueReadBufferRect(queue_, m, CL_TRUE, zero, zero, region, 0, 0, 0, 0,
                                                back.data(), 0, nullptr, nullptr));
  EXPECT_EQ(host, back);
}

TEST_F(RectApi, CopyRectBetweenBuffers) {
  const size_t srp = 32, ssp = 32 * 4, dsp_rows = 6, drp = 24, dsp = drp * dsp_rows;
  Mem a = makeBuffer(ssp * 3), b = makeBuffer(dsp * 3);
  auto src = pattern(ssp * 3);
  write(a, src.data(), src.size());
  std::vector<unsigned char> zeros(dsp * 3, 0);
  write(b, zeros.data(), zeros.size());
  const size_t so[3] = {5, 1, 0}, dorig[3] = {2, 3, 1}, region[3] = {20, 3, 2};
  Event e;
  ASSERT_CL(CL_SUCCESS, clEnqueueCopyBufferRect(queue_, a, b, so, dorig, region, srp, ssp, drp, dsp,
                                                0, nullptr, e.out()));
  EXPECT_EQ(cl_command_type(CL_COMMAND_COPY_BUFFER_RECT),
            eventInfo<cl_command_type>(e, CL_EVENT_COMMAND_TYPE));
  std::vector<unsigned char> want(dsp * 3, 0);
  refCopy(src.data(), want.data(), so, dorig, region, srp, ssp, drp, dsp);
  EXPECT_EQ(want, read(b, want.size()));
}

TEST_F(RectApi, PitchRules) {
  Mem m = makeBuffer(4096);
  std::vector<unsigned char> host(4096);
  const size_t zero[3] = {0, 0, 0}, region[3] = {16, 4, 2};
  auto rd = [&](size_t brp, size_t bsp, size_t hrp, size_t hsp) {
    return clEnqueueReadBufferRect(queue_, m, CL_TRUE, zero, zero, region, brp, bsp, hrp, hsp,
                                   host.data(), 0, nullptr, nullptr);
  };
  auto wr = [&](size_t brp, size_t bsp, size_t hrp, size_t hsp) {
    return clEnqueueWriteBufferRect(queue_, m, CL_TRUE, zero, zero, region, brp, bsp, hrp, hsp,
                                    host.data(), 0, nullptr, nullptr);
  };
  // The spec: CL_INVALID_VALUE if buffer_row_pitch is not 0 and is less than region[0].
  EXPECT_CL(CL_INVALID_VALUE, rd(15, 0, 0, 0));
  EXPECT_CL(CL_INVALID_VALUE, wr(15, 0, 0, 0));
  // The spec: CL_INVALID_VALUE if host_row_pitch is not 0 and is less than region[0].
  EXPECT_CL(CL_INVALID_VALUE, rd(0, 0, 15, 0));
  EXPECT_CL(CL_INVALID_VALUE, wr(0, 0, 15, 0));
  // The spec: CL_INVALID_VALUE if buffer_slice_pitch is not 0 and is less than
  // region[1] * buffer_row_pitch and not a multiple of buffer_row_pitch (host side likewise).
  EXPECT_CL(CL_INVALID_VALUE, rd(16, 63, 0, 0));
  EXPECT_CL(CL_INVALID_VALUE, wr(20, 79, 0, 0));
  EXPECT_CL(CL_INVALID_VALUE, rd(0, 0, 16, 63));
  EXPECT_CL(CL_INVALID_VALUE, wr(0, 0, 20, 79));
  // Pitches whose products overflow are invalid, never a wrap-around.
  EXPECT_CL(CL_INVALID_VALUE, rd(SIZE_MAX / 2, 0, 0, 0));
  EXPECT_CL(CL_INVALID_VALUE, wr(0, 0, SIZE_MAX / 2, 0));
  // Valid larger pitches.
  EXPECT_CL_OK(rd(32, 256, 20, 100));
  EXPECT_CL_OK(wr(32, 256, 20, 100));
  // Copy: the same rules on both sides. The spec: CL_INVALID_VALUE if src_slice_pitch is not 0
  // and is less than region[1] * src_row_pitch or if src_slice_pitch is not 0 and is not a
  // multiple of src_row_pitch (dst likewise).
  Mem other = makeBuffer(4096);
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueCopyBufferRect(queue_, m, other, zero, zero, region, 15, 0,
                                                      0, 0, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueCopyBufferRect(queue_, m, other, zero, zero, region, 0, 0,
                                                      15, 0, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueCopyBufferRect(queue_, m, other, zero, zero, region, 16, 72,
                                                      0, 0, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueCopyBufferRect(queue_, m, other, zero, zero, region, 0, 0,
                                                      16, 63, 0, nullptr, nullptr));
  EXPECT_CL_OK(clEnqueueCopyBufferRect(queue_, m, other, zero, zero, region, 32, 128, 64, 512, 0,
                                       nullptr, nullptr));
  EXPECT_CL_OK(clFinish(queue_));
}

TEST_F(RectApi, RegionAndPointerRules) {
  Mem m = makeBuffer(4096), other = makeBuffer(4096);
  std::vector<unsigned char> host(4096);
  const size_t zero[3] = {0, 0, 0};
  // The spec: CL_INVALID_VALUE if any region array element is 0.
  for (int d = 0; d < 3; ++d) {
    size_t region[3] = {4, 4, 4};
    region[d] = 0;
    EXPECT_CL(CL_INVALID_VALUE, clEnqueueReadBufferRect(queue_, m, CL_TRUE, zero, zero, region, 0,
                                                        0, 0, 0, host.data(), 0, nullptr, nullptr));
    EXPECT_CL(CL_INVALID_VALUE,
              clEnqueueWriteBufferRect(queue_, m, CL_TRUE, zero, zero, region, 0, 0, 0, 0,
                                       host.data(), 0, nullptr, nullptr));
    EXPECT_CL(CL_INVALID_VALUE, clEnqueueCopyBufferRect(queue_, m, other, zero, zero, region, 0, 0,
                                                        0, 0, 0, nullptr, nullptr));
  }
  const size_t region[3] = {4, 4, 4};
  // The spec: CL_INVALID_VALUE if ptr is a NULL value.
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueReadBufferRect(queue_, m, CL_TRUE, zero, zero, region, 0, 0,
                                                      0, 0, nullptr, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueWriteBufferRect(queue_, m, CL_TRUE, zero, zero, region, 0, 0,
                                                       0, 0, nullptr, 0, nullptr, nullptr));
  // NULL origins or region are invalid values, never a crash.
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueReadBufferRect(queue_, m, CL_TRUE, nullptr, zero, region, 0,
                                                      0, 0, 0, host.data(), 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueWriteBufferRect(queue_, m, CL_TRUE, zero, nullptr, region, 0,
                                                       0, 0, 0, host.data(), 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueCopyBufferRect(queue_, m, other, zero, zero, nullptr, 0, 0,
                                                      0, 0, 0, nullptr, nullptr));
}

TEST_F(RectApi, Bounds) {
  // 4096 bytes = 16 slices of 16 rows of 16 bytes.
  Mem m = makeBuffer(4096), other = makeBuffer(4096);
  std::vector<unsigned char> host(8192);
  const size_t zero[3] = {0, 0, 0};
  // The spec: CL_INVALID_VALUE if the region being read or written specified by (buffer_origin,
  // region, buffer_row_pitch, buffer_slice_pitch) is out of bounds.
  const size_t region[3] = {16, 16, 16};
  EXPECT_CL_OK(clEnqueueReadBufferRect(queue_, m, CL_TRUE, zero, zero, region, 16, 256, 0, 0,
                                       host.data(), 0, nullptr, nullptr));
  const size_t one_x[3] = {1, 0, 0}, one_z[3] = {0, 0, 1};
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueReadBufferRect(queue_, m, CL_TRUE, one_x, zero, region, 16,
                                                      256, 0, 0, host.data(), 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE,
            clEnqueueWriteBufferRect(queue_, m, CL_TRUE, one_z, zero, region, 16, 256, 0, 0,
                                     host.data(), 0, nullptr, nullptr));
  const size_t too_wide[3] = {17, 16, 16};
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueReadBufferRect(queue_, m, CL_TRUE, zero, zero, too_wide, 0,
                                                      0, 0, 0, host.data(), 0, nullptr, nullptr));
  const size_t huge[3] = {SIZE_MAX / 2, 0, 0};
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueReadBufferRect(queue_, m, CL_TRUE, huge, zero, region, 16,
                                                      256, 0, 0, host.data(), 0, nullptr, nullptr));
  // Origins and regions whose byte offsets overflow size_t must not wrap around into range.
  const size_t wrap_z[3] = {0, 0, SIZE_MAX / 256 + 1};
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueReadBufferRect(queue_, m, CL_TRUE, wrap_z, zero, region, 16,
                                                      256, 0, 0, host.data(), 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueCopyBufferRect(queue_, m, other, zero, wrap_z, region, 16,
                                                      256, 16, 256, 0, nullptr, nullptr));
  const size_t wrap_y[3] = {0, SIZE_MAX / 16 + 1, 0};
  EXPECT_CL(CL_INVALID_VALUE,
            clEnqueueWriteBufferRect(queue_, m, CL_TRUE, wrap_y, zero, region, 16, 256, 0, 0,
                                     host.data(), 0, nullptr, nullptr));
  const size_t wrap_region[3] = {16, 16, SIZE_MAX / 256 + 2};
  EXPECT_CL(CL_INVALID_VALUE,
            clEnqueueReadBufferRect(queue_, m, CL_TRUE, zero, zero, wrap_region, 16, 256, 0, 0,
                                    host.data(), 0, nullptr, nullptr));
  // The spec: CL_INVALID_VALUE if (src_origin, region, src_row_pitch, src_slice_pitch) or
  // (dst_origin, region, dst_row_pitch, dst_slice_pitch) require accessing elements outside the
  // src_buffer and dst_buffer buffer objects respectively.
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueCopyBufferRect(queue_, m, other, one_x, zero, region, 16,
                                                      256, 16, 256, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueCopyBufferRect(queue_, m, other, zero, one_z, region, 16,
                                                      256, 16, 256, 0, nullptr, nullptr));
  EXPECT_CL_OK(clEnqueueCopyBufferRect(queue_, m, other, zero, zero, region, 16, 256, 16, 256, 0,
                                       nullptr, nullptr));
  EXPECT_CL_OK(clFinish(queue_));
}

TEST_F(RectApi, HostAccessFlags) {
  Mem wo = makeBuffer(256, CL_MEM_HOST_WRITE_ONLY), ro = makeBuffer(256, CL_MEM_HOST_READ_ONLY);
  std::vector<unsigned char> host(256);
  const size_t zero[3] = {0, 0, 0}, region[3] = {16, 16, 1};
  // The spec: CL_INVALID_OPERATION if clEnqueueReadBufferRect is called on buffer which has been
  // created with CL_MEM_HOST_WRITE_ONLY or CL_MEM_HOST_NO_ACCESS (writes: HOST_READ_ONLY).
  EXPECT_CL(CL_INVALID_OPERATION,
            clEnqueueReadBufferRect(queue_, wo, CL_TRUE, zero, zero, region, 0, 0, 0, 0,
                                    host.data(), 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_OPERATION,
            clEnqueueWriteBufferRect(queue_, ro, CL_TRUE, zero, zero, region, 0, 0, 0, 0,
                                     host.data(), 0, nullptr, nullptr));
}

TEST_F(RectApi, CopyWithinOneBufferNeedsEqualPitches) {
  Mem m = makeBuffer(4096);
  const size_t a[3] = {0, 0, 0}, b[3] = {0, 0, 8}, region[3] = {16, 4, 2};
  // The spec: CL_INVALID_VALUE if src_buffer and dst_buffer are the same buffer object and
  // src_slice_pitch is not equal to dst_slice_pitch and src_row_pitch is not equal to
  // dst_row_pitch ("If src_buffer and dst_buffer are the same buffer object, src_row_pitch must
  // equal dst_row_pitch and src_slice_pitch must equal dst_slice_pitch").
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueCopyBufferRect(queue_, m, m, a, b, region, 16, 64, 32, 128,
                                                      0, nullptr, nullptr));
  EXPECT_CL_OK(
      clEnqueueCopyBufferRect(queue_, m, m, a, b, region, 16, 64, 16, 64, 0, nullptr, nullptr));
  EXPECT_CL_OK(clFinish(queue_));
}

// Appendix D of the spec ("Checking for Memory Copy Overlap"), as the reference.
bool specOverlap(const size_t so[3], const size_t dorig[3], const size_t region[3],
                 size_t row_pitch, size_t slice_pitch) {
  const size_t slice_size = (region[1] - 1) * row_pitch + region[0];
  const size_t block_size = (region[2] - 1) * slice_pitch + slice_size;
  const size_t src_start = so[2] * slice_pitch + so[1] * row_pitch + so[0];
  const size_t src_end = src_start + block_size;
  const size_t dst_start = dorig[2] * slice_pitch + dorig[1] * row_pitch + dorig[0];
  const size_t dst_end = dst_start + block_size;
  if (dst_end <= src_start || src_end <= dst_start) return false;
  const size_t src_dx = so[0] % row_pitch, dst_dx = dorig[0] % row_pitch;
  if ((dst_dx >= src_dx + region[0] && dst_dx + region[0] <= src_dx + row_pitch) ||
      (src_dx >= dst_dx + region[0] && src_dx + region[0] <= dst_dx + row_pitch))
    return false;
  const size_t src_dy = (so[1] * row_pitch + so[0]) % slice_pitch;
  const size_t dst_dy = (dorig[1] * row_pitch + dorig[0]) % slice_pitch;
  if ((dst_dy >= src_dy + slice_size && dst_dy + slice_size <= src_dy + slice_pitch) ||
      (src_dy >= dst_dy + slice_size && src_dy + slice_size <= dst_dy + slice_pitch))
    return false;
  return true;
}

TEST_F(RectApi, OverlapWithinOneBuffer) {
  Mem m = makeBuffer(4096);
  struct Case {
    size_t so[3], dorig[3], region[3], rp, sp;
  } cases[] = {
      {{0, 0, 0}, {0, 0, 0}, {4, 4, 1}, 16, 64},   // same region
      {{0, 0, 0}, {8, 0, 0}, {8, 4, 1}, 16, 64},   // side by side in each row
      {{0, 0, 0}, {4, 0, 0}, {8, 4, 1}, 16, 64},   // overlapping columns
      {{0, 0, 0}, {0, 4, 0}, {8, 4, 1}, 16, 64},   // next rows
      {{0, 0, 0}, {0, 3, 0}, {8, 4, 1}, 16, 64},   // overlapping rows
      {{12, 0, 0}, {0, 1, 0}, {8, 1, 1}, 16, 16},  // a source row that wraps into the next row
      {{0, 0, 0}, {0, 0, 1}, {16, 4, 1}, 16, 64},  // next slice
      {{0, 0, 0}, {0, 0, 1}, {16, 4, 2}, 16, 64},  // overlapping slices
      {{0, 0, 0}, {0, 2, 0}, {4, 2, 2}, 16, 64},   // interleaved rows inside slices
      {{20, 1, 0}, {4, 2, 0}, {8, 2, 2}, 16, 64},  // origin[0] beyond the row pitch
  };
  for (const Case& c : cases) {
    const bool overlap = specOverlap(c.so, c.dorig, c.region, c.rp, c.sp);
    const cl_int want = overlap ? CL_MEM_COPY_OVERLAP : CL_SUCCESS;
    // The spec: CL_MEM_COPY_OVERLAP if src_buffer and dst_buffer are the same buffer or
    // sub-buffer object and the source and destination regions overlap (Appendix D).
    EXPECT_CL(want, clEnqueueCopyBufferRect(queue_, m, m, c.so, c.dorig, c.region, c.rp, c.sp, c.rp,
                                            c.sp, 0, nullptr, nullptr))
        << "src (" << c.so[0] << "," << c.so[1] << "," << c.so[2] << ") dst (" << c.dorig[0] << ","
        << c.dorig[1] << "," << c.dorig[2] << ") region (" << c.region[0] << "," << c.region[1]
        << "," << c.region[2] << ")";
  }
  EXPECT_CL_OK(clFinish(queue_));
}

TEST_F(RectApi, NonOverlappingCopyWithinOneBufferIsCorrect) {
  Mem m = makeBuffer(1024);
  auto init = pattern(1024);
  write(m, init.data(), 1024);
  // Columns 0..7 of rows 0..7 go to columns 8..15 of the same rows (row pitch 16).
  const size_t so[3] = {0, 0, 0}, dorig[3] = {8, 0, 0}, region[3] = {8, 8, 1};
  ASSERT_CL(CL_SUCCESS, clEnqueueCopyBufferRect(queue_, m, m, so, dorig, region, 16, 128, 16, 128,
                                                0, nullptr, nullptr));
  auto want = init;
  refCopy(init.data(), want.data(), so, dorig, region, 16, 128, 16, 128);
  EXPECT_EQ(want, read(m, 1024));
}

TEST_F(RectApi, OverlapBetweenSubBuffers) {
  const size_t align = deviceInfo<cl_uint>(device_, CL_DEVICE_MEM_BASE_ADDR_ALIGN) / 8;
  Mem parent = makeBuffer(8 * align);
  cl_buffer_region r1{0, 4 * align}, r2{align, 4 * align};
  cl_int err = -1;
  Mem a(clCreateSubBuffer(parent, 0, CL_BUFFER_CREATE_TYPE_REGION, &r1, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  Mem b(clCreateSubBuffer(parent, 0, CL_BUFFER_CREATE_TYPE_REGION, &r2, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  const size_t zero[3] = {0, 0, 0}, region[3] = {align, 2, 1};
  // Source rows at parent bytes [align, 2 align) and [2 align, 3 align); the destination starts
  // at parent byte align too.
  const size_t src_origin[3] = {0, 1, 0};
  // The spec: CL_MEM_COPY_OVERLAP if src_buffer and dst_buffer are different sub-buffers of the
  // same associated buffer object and they overlap.
  EXPECT_CL(CL_MEM_COPY_OVERLAP, clEnqueueCopyBufferRect(queue_, a, b, src_origin, zero, region,
                                                         align, 0, align, 0, 0, nullptr, nullptr));
  // Source parent bytes [0, 2 align), destination parent bytes [3 align, 5 align): disjoint.
  const size_t dst_far[3] = {0, 2, 0};
  EXPECT_CL_OK(clEnqueueCopyBufferRect(queue_, a, b, zero, dst_far, region, align, 0, align, 0, 0,
                                       nullptr, nullptr));
  EXPECT_CL_OK(clFinish(queue_));
}

}  // namespace
