// clEnqueueMapBuffer / clEnqueueUnmapMemObject (flags, bounds, misuse of mapped regions, map
// counts, USE_HOST_PTR) and clEnqueueMigrateMemObjects.
#include "cl_test.h"

using namespace cltest;

namespace {

class MapApi : public ContextTest {
 protected:
  void* map(cl_mem m, cl_map_flags flags, size_t offset, size_t size, cl_bool blocking = CL_TRUE,
            cl_event* ev = nullptr) {
    cl_int err = -1;
    void* p = clEnqueueMapBuffer(queue_, m, blocking, flags, offset, size, 0, nullptr, ev, &err);
    EXPECT_ERR(CL_SUCCESS, err) << "map offset " << offset << " size " << size;
    EXPECT_NE(nullptr, p);
    return p;
  }
  cl_int mapErr(cl_mem m, cl_map_flags flags, size_t offset, size_t size) {
    cl_int err = CL_SUCCESS;
    void* p =
        clEnqueueMapBuffer(queue_, m, CL_TRUE, flags, offset, size, 0, nullptr, nullptr, &err);
    EXPECT_EQ(nullptr, p);
    return err;
  }
};

TEST_F(MapApi, MapReadSeesBufferContents) {
  Mem m = makeBuffer(1024);
  std::vector<unsigned char> d(1024);
  for (size_t i = 0; i < d.size(); ++i) d[i] = static_cast<unsigned char>(i ^ 0x5a);
  write(m, d.data(), d.size());
  auto* p = static_cast<unsigned char*>(map(m, CL_MAP_READ, 100, 200));
  ASSERT_NE(nullptr, p);
  EXPECT_EQ(0, std::memcmp(p, d.data() + 100, 200));
  EXPECT_CL_OK(clEnqueueUnmapMemObject(queue_, m, p, 0, nullptr, nullptr));
  EXPECT_CL_OK(clFinish(queue_));
}

TEST_F(MapApi, MapWriteIsVisibleAfterUnmap) {
  Mem m = makeBuffer(512);
  std::vector<unsigned char> zeros(512, 0);
  write(m, zeros.data(), 512);
  for (cl_map_flags f : {cl_map_flags(CL_MAP_WRITE), cl_map_flags(CL_MAP_WRITE_INVALIDATE_REGION),
                         cl_map_flags(CL_MAP_READ | CL_MAP_WRITE)}) {
    auto* p = static_cast<unsigned char*>(map(m, f, 256, 128));
    ASSERT_NE(nullptr, p);
    std::memset(p, static_cast<int>(f), 128);
    Event u;
    ASSERT_CL(CL_SUCCESS, clEnqueueUnmapMemObject(queue_, m, p, 0, nullptr, u.out()));
    EXPECT_EQ(cl_command_type(CL_COMMAND_UNMAP_MEM_OBJECT),
              eventInfo<cl_command_type>(u, CL_EVENT_COMMAND_TYPE));
    auto got = read(m, 512);
    for (size_t i = 0; i < 512; ++i)
      ASSERT_EQ(i >= 256 && i < 384 ? static_cast<unsigned char>(f) : 0, got[i]);
  }
}

TEST_F(MapApi, NonBlockingMapWithEvent) {
  Mem m = makeBuffer(256);
  std::vector<unsigned char> d(256, 0x33);
  write(m, d.data(), 256);
  Event gate = makeUserEvent();
  cl_event g = gate;
  Event me;
  cl_int err = -1;
  auto* p = static_cast<unsigned char*>(
      clEnqueueMapBuffer(queue_, m, CL_FALSE, CL_MAP_READ, 0, 256, 1, &g, me.out(), &err));
  ASSERT_ERR(CL_SUCCESS, err);
  ASSERT_NE(nullptr, p);
  EXPECT_EQ(cl_command_type(CL_COMMAND_MAP_BUFFER),
            eventInfo<cl_command_type>(me, CL_EVENT_COMMAND_TYPE));
  EXPECT_GT(eventStatus(me), CL_COMPLETE);
  EXPECT_CL_OK(clSetUserEventStatus(gate, CL_COMPLETE));
  cl_event mev = me;
  EXPECT_CL_OK(clWaitForEvents(1, &mev));
  // The spec: the mapped data can be used once the map command's event is complete.
  EXPECT_EQ(0x33, p[0]);
  EXPECT_EQ(0x33, p[255]);
  EXPECT_CL_OK(clEnqueueUnmapMemObject(queue_, m, p, 0, nullptr, nullptr));
  EXPECT_CL_OK(clFinish(queue_));
}

TEST_F(MapApi, MapCount) {
  Mem m = makeBuffer(256);
  EXPECT_EQ(0u, memInfo<cl_uint>(m, CL_MEM_MAP_COUNT));
  void* a = map(m, CL_MAP_READ, 0, 64);
  void* b = map(m, CL_MAP_READ, 0, 64);  // the same region twice
  void* c = map(m, CL_MAP_WRITE, 128, 64);
  EXPECT_EQ(3u, memInfo<cl_uint>(m, CL_MEM_MAP_COUNT));
  EXPECT_CL_OK(clEnqueueUnmapMemObject(queue_, m, b, 0, nullptr, nullptr));
  EXPECT_CL_OK(clEnqueueUnmapMemObject(queue_, m, c, 0, nullptr, nullptr));
  EXPECT_CL_OK(clFinish(queue_));
  EXPECT_EQ(1u, memInfo<cl_uint>(m, CL_MEM_MAP_COUNT));
  EXPECT_CL_OK(clEnqueueUnmapMemObject(queue_, m, a, 0, nullptr, nullptr));
  EXPECT_CL_OK(clFinish(queue_));
  EXPECT_EQ(0u, memInfo<cl_uint>(m, CL_MEM_MAP_COUNT));
}

TEST_F(MapApi, UnmapMisuse) {
  Mem m = makeBuffer(256), other = makeBuffer(256);
  auto* p = static_cast<unsigned char*>(map(m, CL_MAP_READ, 64, 64));
  // The spec: CL_INVALID_VALUE if mapped_ptr is not a valid pointer returned by
  // clEnqueueMapBuffer or clEnqueueMapImage for memobj.
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueUnmapMemObject(queue_, m, p + 1, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueUnmapMemObject(queue_, m, nullptr, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueUnmapMemObject(queue_, other, p, 0, nullptr, nullptr));
  int stack = 0;
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueUnmapMemObject(queue_, m, &stack, 0, nullptr, nullptr));
  // The failed attempts did not consume the mapping.
  EXPECT_EQ(1u, memInfo<cl_uint>(m, CL_MEM_MAP_COUNT));
  EXPECT_CL_OK(clEnqueueUnmapMemObject(queue_, m, p, 0, nullptr, nullptr));
  // A second unmap of the same pointer is misuse too.
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueUnmapMemObject(queue_, m, p, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_MEM_OBJECT,
            clEnqueueUnmapMemObject(queue_, nullptr, p, 0, nullptr, nullptr));
  EXPECT_CL_OK(clFinish(queue_));
  EXPECT_EQ(0u, memInfo<cl_uint>(m, CL_MEM_MAP_COUNT));
}

TEST_F(MapApi, UnmapOnAnotherContextsQueue) {
  Context other = makeOtherContext(device_);
  cl_int err = -1;
  Queue oq(clCreateCommandQueueWithProperties(other, device_, nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  Mem m = makeBuffer(64);
  void* p = map(m, CL_MAP_READ, 0, 64);
  // The spec: CL_INVALID_CONTEXT if context associated with command_queue and memobj are not
  // the same.
  EXPECT_CL(CL_INVALID_CONTEXT, clEnqueueUnmapMemObject(oq, m, p, 0, nullptr, nullptr));
  cl_int merr = CL_SUCCESS;
  EXPECT_EQ(nullptr,
            clEnqueueMapBuffer(oq, m, CL_TRUE, CL_MAP_READ, 0, 64, 0, nullptr, nullptr, &merr));
  EXPECT_ERR(CL_INVALID_CONTEXT, merr);
  EXPECT_CL_OK(clEnqueueUnmapMemObject(queue_, m, p, 0, nullptr, nullptr));
  EXPECT_CL_OK(clFinish(queue_));
}

TEST_F(MapApi, MapValidation) {
  Mem m = makeBuffer(256);
  // The spec: CL_INVALID_VALUE if region being mapped given by (offset, size) is out of bounds
  // or if size is 0 or if values specified in map_flags are not valid.
  EXPECT_ERR(CL_INVALID_VALUE, mapErr(m, CL_MAP_READ, 0, 0));
  EXPECT_ERR(CL_INVALID_VALUE, mapErr(m, CL_MAP_READ, 0, 257));
  EXPECT_ERR(CL_INVALID_VALUE, mapErr(m, CL_MAP_READ, 256, 1));
  EXPECT_ERR(CL_INVALID_VALUE, mapErr(m, CL_MAP_READ, 2, SIZE_MAX));
  EXPECT_ERR(CL_INVALID_VALUE, mapErr(m, cl_map_flags(1) << 10, 0, 16));
  // CL_MAP_WRITE_INVALIDATE_REGION is mutually exclusive with CL_MAP_READ and CL_MAP_WRITE.
  EXPECT_ERR(CL_INVALID_VALUE, mapErr(m, CL_MAP_WRITE_INVALIDATE_REGION | CL_MAP_READ, 0, 16));
  EXPECT_ERR(CL_INVALID_VALUE, mapErr(m, CL_MAP_WRITE_INVALIDATE_REGION | CL_MAP_WRITE, 0, 16));
  EXPECT_ERR(CL_INVALID_MEM_OBJECT, mapErr(nullptr, CL_MAP_READ, 0, 16));
  EXPECT_EQ(0u, memInfo<cl_uint>(m, CL_MEM_MAP_COUNT));
  // map_flags 0 is a valid (read-write) mapping.
  void* p = map(m, 0, 0, 16);
  EXPECT_CL_OK(clEnqueueUnmapMemObject(queue_, m, p, 0, nullptr, nullptr));
  EXPECT_CL_OK(clFinish(queue_));
}

TEST_F(MapApi, BlockingMapAfterFailedEventGivesNoMapping) {
  Mem m = makeBuffer(64);
  Event gate = makeUserEvent();
  EXPECT_CL_OK(clSetUserEventStatus(gate, -50));
  cl_event g = gate;
  cl_int err = CL_SUCCESS;
  // The spec: CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST if the map operation is blocking and
  // the execution status of any of the events in event_wait_list is a negative integer value.
  void* p = clEnqueueMapBuffer(queue_, m, CL_TRUE, CL_MAP_READ, 0, 64, 1, &g, nullptr, &err);
  EXPECT_ERR(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, err);
  EXPECT_EQ(nullptr, p);
  EXPECT_EQ(0u, memInfo<cl_uint>(m, CL_MEM_MAP_COUNT));
}

TEST_F(MapApi, UseHostPtrMapReturnsHostRegion) {
  AlignedBuf host(1024);
  std::memset(host.p, 0x11, 1024);
  Mem m = makeBuffer(1024, CL_MEM_USE_HOST_PTR, host.p);
  auto* base = host.as<unsigned char>();
  void* p = map(m, CL_MAP_READ | CL_MAP_WRITE, 300, 100);
  // The spec: if the buffer was created with CL_MEM_USE_HOST_PTR, the pointer returned is
  // host_ptr + offset (the host_ptr given at creation).
  EXPECT_EQ(base + 300, p);
  std::memset(p, 0x22, 100);
  EXPECT_CL_OK(clEnqueueUnmapMemObject(queue_, m, p, 0, nullptr, nullptr));
  auto got = read(m, 1024);
  for (size_t i = 0; i < 1024; ++i) ASSERT_EQ(i >= 300 && i < 400 ? 0x22 : 0x11, got[i]);
  // Sub-buffers of it map inside the same host region.
  const size_t align = deviceInfo<cl_uint>(device_, CL_DEVICE_MEM_BASE_ADDR_ALIGN) / 8;
  if (align < 1024) {
    cl_buffer_region r{align, 1024 - align};
    cl_int err = -1;
    Mem s(clCreateSubBuffer(m, 0, CL_BUFFER_CREATE_TYPE_REGION, &r, &err));
    ASSERT_ERR(CL_SUCCESS, err);
    void* q = map(s, CL_MAP_READ, 4, 4);
    EXPECT_EQ(base + align + 4, q);
    EXPECT_CL_OK(clEnqueueUnmapMemObject(queue_, s, q, 0, nullptr, nullptr));
  }
  EXPECT_CL_OK(clFinish(queue_));
}

TEST_F(MapApi, ReleaseWhileMappedDoesNotCrash) {
  cl_mem m = makeBuffer(64).take();
  void* p = map(m, CL_MAP_WRITE, 0, 64);
  std::memset(p, 1, 64);
  // The spec only asks the application to unmap; releasing a mapped buffer must stay safe.
  EXPECT_CL_OK(clEnqueueUnmapMemObject(queue_, m, p, 0, nullptr, nullptr));
  EXPECT_CL_OK(clReleaseMemObject(m));
  EXPECT_CL_OK(clFinish(queue_));
}

class MigrateApi : public ContextTest {};

TEST_F(MigrateApi, Migrate) {
  Mem a = makeBuffer(64), b = makeBuffer(64);
  std::vector<unsigned char> d(64, 0x44);
  write(a, d.data(), 64);
  cl_mem both[] = {a, b};
  for (cl_mem_migration_flags f :
       {cl_mem_migration_flags(0), cl_mem_migration_flags(CL_MIGRATE_MEM_OBJECT_HOST),
        cl_mem_migration_flags(CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED),
        cl_mem_migration_flags(CL_MIGRATE_MEM_OBJECT_HOST |
                               CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED)}) {
    Event e;
    ASSERT_CL(CL_SUCCESS, clEnqueueMigrateMemObjects(queue_, 2, both, f, 0, nullptr, e.out()))
        << "flags " << f;
    EXPECT_EQ(cl_command_type(CL_COMMAND_MIGRATE_MEM_OBJECTS),
              eventInfo<cl_command_type>(e, CL_EVENT_COMMAND_TYPE));
  }
  EXPECT_CL_OK(clFinish(queue_));
  // Migration without CONTENT_UNDEFINED keeps the contents.
  cl_mem just_a = a;
  EXPECT_CL_OK(clEnqueueMigrateMemObjects(queue_, 1, &just_a, 0, 0, nullptr, nullptr));
  EXPECT_EQ(d, read(a, 64));
}

TEST_F(MigrateApi, Validation) {
  Mem a = makeBuffer(64);
  cl_mem list[] = {a};
  // The spec: CL_INVALID_VALUE if num_mem_objects is zero or if mem_objects is NULL.
  EXPECT_CL(CL_INVALID_VALUE, clEnqueueMigrateMemObjects(queue_, 0, list, 0, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_VALUE,
            clEnqueueMigrateMemObjects(queue_, 1, nullptr, 0, 0, nullptr, nullptr));
  // The spec: CL_INVALID_VALUE if flags is not 0 or is not any of the values described in the
  // table.
  EXPECT_CL(CL_INVALID_VALUE,
            clEnqueueMigrateMemObjects(queue_, 1, list, 1 << 8, 0, nullptr, nullptr));
  // The spec: CL_INVALID_MEM_OBJECT if any of the memory objects in mem_objects is not a valid
  // memory object.
  cl_mem with_null[] = {a, nullptr};
  EXPECT_CL(CL_INVALID_MEM_OBJECT,
            clEnqueueMigrateMemObjects(queue_, 2, with_null, 0, 0, nullptr, nullptr));
  cl_mem wrong_type[] = {reinterpret_cast<cl_mem>(queue_.get())};
  EXPECT_CL(CL_INVALID_MEM_OBJECT,
            clEnqueueMigrateMemObjects(queue_, 1, wrong_type, 0, 0, nullptr, nullptr));
  // The spec: CL_INVALID_CONTEXT if the context associated with command_queue and memory
  // objects in mem_objects are not the same.
  Context other = makeOtherContext(device_);
  cl_int err = -1;
  Mem foreign(clCreateBuffer(other, 0, 64, nullptr, &err));
  ASSERT_ERR(CL_SUCCESS, err);
  cl_mem mixed[] = {a, foreign};
  EXPECT_CL(CL_INVALID_CONTEXT,
            clEnqueueMigrateMemObjects(queue_, 2, mixed, 0, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_COMMAND_QUEUE,
            clEnqueueMigrateMemObjects(nullptr, 1, list, 0, 0, nullptr, nullptr));
  EXPECT_CL(CL_INVALID_EVENT_WAIT_LIST,
            clEnqueueMigrateMemObjects(queue_, 1, list, 0, 1, nullptr, nullptr));
}

TEST_F(MigrateApi, MigrateWaitsForItsWaitList) {
  Mem a = makeBuffer(64);
  Event gate = makeUserEvent();
  cl_event g = gate;
  cl_mem list[] = {a};
  Event e;
  ASSERT_CL(CL_SUCCESS, clEnqueueMigrateMemObjects(queue_, 1, list, 0, 1, &g, e.out()));
  EXPECT_CL_OK(clFlush(queue_));
  EXPECT_GT(eventStatus(e), CL_COMPLETE);
  EXPECT_CL_OK(clSetUserEventStatus(gate, CL_COMPLETE));
  EXPECT_STATUS(CL_COMPLETE, waitStatus(e));
}

}  // namespace
