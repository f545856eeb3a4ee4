// OpenGL (cl_khr_gl_sharing, cl_khr_gl_event) and EGL (cl_khr_egl_image, cl_khr_egl_event)
// interop. Manifold advertises none of these extensions and no context can be created from a
// GL or EGL context (clCreateContext rejects the GL properties), so every call validates its
// handles and then answers with the extension's code for "this context or object is not a
// shared one". The entry points exist because the ICD dispatch table must have no NULL slot.
#include <vector>

#include "api/common.h"
#include "api/impl.h"
#include "core/memory.h"
#include "core/platform.h"

namespace manifold::api::impl {
namespace {

// The cl_khr_gl_sharing spec: CL_INVALID_CONTEXT if context is not a valid context or was not
// created from a GL context.
[[noreturn]] void not_a_gl_context(cl_context context) {
  resolve<Context>(context);
  fail(CL_INVALID_CONTEXT, "the context was not created from an OpenGL context");
}

// The cl_khr_gl_sharing spec for clEnqueueAcquire/ReleaseGLObjects: CL_INVALID_VALUE if
// num_objects is zero and mem_objects is not NULL, or num_objects > 0 and mem_objects is NULL;
// CL_INVALID_MEM_OBJECT if memory objects in mem_objects are not valid OpenCL memory objects.
// The EGL variants say the same.
struct SharedTarget {
  CommandQueue& queue;
  std::vector<Event*> waits;
};
SharedTarget check_shared_objects(cl_command_queue command_queue, cl_uint num_objects,
                                  const cl_mem* mem_objects, cl_uint num_events,
                                  const cl_event* event_list) {
  CommandQueue& q = *resolve<CommandQueue>(command_queue);
  check((num_objects == 0) == (mem_objects == nullptr), CL_INVALID_VALUE,
        "num_objects and mem_objects disagree");
  for (cl_uint i = 0; i < num_objects; ++i) resolve<MemObject>(mem_objects[i]);
  return {q, resolve_wait_list(q.context(), num_events, event_list)};
}

// clEnqueueAcquire/ReleaseEGLObjectsKHR. The cl_khr_egl_image spec: CL_INVALID_EGL_OBJECT_KHR
// if memory objects in mem_objects have not been created from EGL resources (none can be).
// With no objects the command has nothing to do but still orders the queue.
void enqueue_egl_objects(cl_command_type type, cl_command_queue command_queue, cl_uint num_objects,
                         const cl_mem* mem_objects, cl_uint num_events, const cl_event* event_list,
                         cl_event* event) {
  SharedTarget t =
      check_shared_objects(command_queue, num_objects, mem_objects, num_events, event_list);
  check(num_objects == 0, CL_INVALID_EGL_OBJECT_KHR,
        "the memory objects were not created from EGL resources");
  submit_command(Command::make(t.queue, type, NoOp{}), t.waits, event);
}

// The cl_khr_egl_image spec: CL_INVALID_VALUE if flags are not valid or if properties contain
// invalid values.
void check_egl_flags(cl_mem_flags flags, const cl_egl_image_properties_khr* properties) {
  constexpr cl_mem_flags access = CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY;
  check((flags & ~access) == 0 && (flags & (flags - 1) & access) == 0, CL_INVALID_VALUE,
        "flags must be one of CL_MEM_READ_WRITE, CL_MEM_WRITE_ONLY, CL_MEM_READ_ONLY");
  // No image properties are defined by the extension itself.
  check(!properties || properties[0] == 0, CL_INVALID_VALUE, "unknown EGL image property");
}

}  // namespace

cl_mem clCreateFromGLBuffer(cl_context context, cl_mem_flags flags, cl_GLuint bufobj) {
  not_a_gl_context(context);
}

cl_mem clCreateFromGLTexture(cl_context context, cl_mem_flags flags, cl_GLenum target,
                             cl_GLint miplevel, cl_GLuint texture) {
  not_a_gl_context(context);
}

cl_mem clCreateFromGLTexture2D(cl_context context, cl_mem_flags flags, cl_GLenum target,
                               cl_GLint miplevel, cl_GLuint texture) {
  not_a_gl_context(context);
}

cl_mem clCreateFromGLTexture3D(cl_context context, cl_mem_flags flags, cl_GLenum target,
                               cl_GLint miplevel, cl_GLuint texture) {
  not_a_gl_context(context);
}

cl_mem clCreateFromGLRenderbuffer(cl_context context, cl_mem_flags flags, cl_GLuint renderbuffer) {
  not_a_gl_context(context);
}

void clGetGLObjectInfo(cl_mem memobj, cl_gl_object_type* gl_object_type,
                       cl_GLuint* gl_object_name) {
  // The spec: CL_INVALID_MEM_OBJECT if memobj is not a valid OpenCL memory object;
  // CL_INVALID_GL_OBJECT if there is no GL object associated with memobj.
  resolve<MemObject>(memobj);
  fail(CL_INVALID_GL_OBJECT, "the memory object was not created from a GL object");
}

void clGetGLTextureInfo(cl_mem memobj, cl_gl_texture_info param_name, size_t param_value_size,
                        void* param_value, size_t* param_value_size_ret) {
  // The spec: CL_INVALID_MEM_OBJECT if memobj is not a valid OpenCL memory object;
  // CL_INVALID_GL_OBJECT if there is no GL texture object associated with memobj.
  resolve<MemObject>(memobj);
  fail(CL_INVALID_GL_OBJECT, "the memory object was not created from a GL texture");
}

void clEnqueueAcquireGLObjects(cl_command_queue command_queue, cl_uint num_objects,
                               const cl_mem* mem_objects, cl_uint num_events_in_wait_list,
                               const cl_event* event_wait_list, cl_event* event) {
  check_shared_objects(command_queue, num_objects, mem_objects, num_events_in_wait_list,
                       event_wait_list);
  // The spec: CL_INVALID_CONTEXT if the context associated with command_queue was not created
  // from an OpenGL context.
  fail(CL_INVALID_CONTEXT, "the queue's context was not created from an OpenGL context");
}

void clEnqueueReleaseGLObjects(cl_command_queue command_queue, cl_uint num_objects,
                               const cl_mem* mem_objects, cl_uint num_events_in_wait_list,
                               const cl_event* event_wait_list, cl_event* event) {
  check_shared_objects(command_queue, num_objects, mem_objects, num_events_in_wait_list,
                       event_wait_list);
  fail(CL_INVALID_CONTEXT, "the queue's context was not created from an OpenGL context");
}

void clGetGLContextInfoKHR(const cl_context_properties* properties, cl_gl_context_info param_name,
                           size_t param_value_size, void* param_value,
                           size_t* param_value_size_ret) {
  // The spec: CL_INVALID_VALUE if properties is NULL, names an invalid attribute, or
  // param_name is not one of the two queries; CL_INVALID_PLATFORM if CL_CONTEXT_PLATFORM is
  // not a valid platform; CL_INVALID_OPERATION if a context binding is given that the
  // platform does not support (WGL and CGL have no meaning on Linux);
  // CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR if the GL context or share group is not one the
  // implementation can use: Manifold shares with no GL context.
  check(properties != nullptr, CL_INVALID_VALUE, "properties is NULL");
  bool gl_context = false, unsupported_binding = false;
  read_properties(properties, [&](cl_context_properties name, cl_context_properties value) {
    switch (name) {
      case CL_CONTEXT_PLATFORM:
        resolve<Platform>(reinterpret_cast<cl_platform_id>(value));
        break;
      case CL_GL_CONTEXT_KHR:
        gl_context = true;
        break;
      case CL_EGL_DISPLAY_KHR:
      case CL_GLX_DISPLAY_KHR:
        break;
      case CL_WGL_HDC_KHR:
      case CL_CGL_SHAREGROUP_KHR:
        unsupported_binding = true;
        break;
      case CL_CONTEXT_INTEROP_USER_SYNC:
        break;
      default:
        fail(CL_INVALID_VALUE, "invalid attribute name in properties");
    }
  });
  check(param_name == CL_CURRENT_DEVICE_FOR_GL_CONTEXT_KHR ||
            param_name == CL_DEVICES_FOR_GL_CONTEXT_KHR,
        CL_INVALID_VALUE, "unknown GL context query");
  check(!unsupported_binding, CL_INVALID_OPERATION,
        "WGL and CGL context bindings are not supported on this platform");
  check(gl_context, CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR, "properties name no GL context");
  fail(CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR, "Manifold cannot share with OpenGL contexts");
}

cl_event clCreateEventFromGLsyncKHR(cl_context context, cl_GLsync sync) {
  // The cl_khr_gl_event spec: CL_INVALID_CONTEXT if context is not a valid context or was not
  // created from a GL context.
  not_a_gl_context(context);
}

cl_mem clCreateFromEGLImageKHR(cl_context context, CLeglDisplayKHR egldisplay,
                               CLeglImageKHR eglimage, cl_mem_flags flags,
                               const cl_egl_image_properties_khr* properties) {
  Context& c = *resolve<Context>(context);
  check_egl_flags(flags, properties);
  // EGL images are images: without an image-capable device nothing can hold one.
  check(c.any_device([](const DeviceInfo& i) { return i.image_support; }), CL_INVALID_OPERATION,
        "no device in the context supports images");
  // The spec: CL_INVALID_EGL_OBJECT_KHR if display is not a valid EGLDisplay or image is not
  // a valid EGLImage: Manifold imports no EGL objects.
  fail(CL_INVALID_EGL_OBJECT_KHR, "Manifold cannot import EGL images");
}

void clEnqueueAcquireEGLObjectsKHR(cl_command_queue command_queue, cl_uint num_objects,
                                   const cl_mem* mem_objects, cl_uint num_events_in_wait_list,
                                   const cl_event* event_wait_list, cl_event* event) {
  enqueue_egl_objects(CL_COMMAND_ACQUIRE_EGL_OBJECTS_KHR, command_queue, num_objects, mem_objects,
                      num_events_in_wait_list, event_wait_list, event);
}

void clEnqueueReleaseEGLObjectsKHR(cl_command_queue command_queue, cl_uint num_objects,
                                   const cl_mem* mem_objects, cl_uint num_events_in_wait_list,
                                   const cl_event* event_wait_list, cl_event* event) {
  enqueue_egl_objects(CL_COMMAND_RELEASE_EGL_OBJECTS_KHR, command_queue, num_objects, mem_objects,
                      num_events_in_wait_list, event_wait_list, event);
}

cl_event clCreateEventFromEGLSyncKHR(cl_context context, CLeglSyncKHR sync,
                                     CLeglDisplayKHR display) {
  resolve<Context>(context);
  // The cl_khr_egl_event spec: CL_INVALID_VALUE if sync is not a valid EGLSyncKHR object;
  // CL_INVALID_EGL_OBJECT_KHR if display is not a valid EGLDisplay.
  check(sync != nullptr, CL_INVALID_VALUE, "sync is NULL");
  fail(CL_INVALID_EGL_OBJECT_KHR, "Manifold cannot import EGL sync objects");
}

}  // namespace manifold::api::impl
