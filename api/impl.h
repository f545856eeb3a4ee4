// Declarations of every entry point's implementation, generated from entry_points.inc.
// An impl validates its arguments (spec sentence above each check), resolves handles and calls
// core/; it throws manifold::Error for the spec's error codes.
#pragma once

#include <CL/cl.h>
#include <CL/cl_egl.h>
#include <CL/cl_ext.h>
#include <CL/cl_gl.h>

#include "CL/cl_manifold.h"
#include "core/cl_khr_command_buffer.h"

#include "api/entry_points.inc"

namespace manifold::api::impl {

#define MF_STATUS(name, params, args) void name params;
#define MF_OBJECT(ret, name, params, args) ret name params;
#define MF_POINTER(ret, name, params, args) ret name params;
#define MF_VOID(name, params, args) void name params;
MANIFOLD_CORE_ENTRY_POINTS
MANIFOLD_EXTENSION_ENTRY_POINTS
#undef MF_STATUS
#undef MF_OBJECT
#undef MF_POINTER
#undef MF_VOID

}  // namespace manifold::api::impl
