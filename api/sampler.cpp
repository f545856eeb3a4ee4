// Sampler entry points. Samplers are only meaningful with images, which are optional in
// OpenCL 3.0: a context without an image-capable device cannot create them.
#include "core/sampler.h"

#include "api/common.h"
#include "api/impl.h"
#include "core/info.h"

namespace manifold::api::impl {
namespace {

bool valid_addressing(cl_addressing_mode m) {
  return m == CL_ADDRESS_NONE || m == CL_ADDRESS_CLAMP_TO_EDGE || m == CL_ADDRESS_CLAMP ||
         m == CL_ADDRESS_REPEAT || m == CL_ADDRESS_MIRRORED_REPEAT;
}

bool valid_filter(cl_filter_mode m) { return m == CL_FILTER_NEAREST || m == CL_FILTER_LINEAR; }

bool valid_bool(cl_bool b) { return b == CL_TRUE || b == CL_FALSE; }

cl_sampler make_sampler(Context& c, cl_bool normalized, cl_addressing_mode addressing,
                        cl_filter_mode filter, std::vector<cl_sampler_properties> properties) {
  // The spec: CL_INVALID_OPERATION if images are not supported by any device associated with
  // context (CL_DEVICE_IMAGE_SUPPORT is CL_FALSE).
  check(c.any_device([](const DeviceInfo& i) { return i.image_support; }), CL_INVALID_OPERATION,
        "no device in the context supports images");
  return make_api_object<Sampler>(Ref<Context>(&c), normalized == CL_TRUE, addressing, filter,
                                  std::move(properties))
      ->handle();
}

}  // namespace

cl_sampler clCreateSampler(cl_context context, cl_bool normalized_coords,
                           cl_addressing_mode addressing_mode, cl_filter_mode filter_mode) {
  Context& c = *resolve<Context>(context);
  // The spec: CL_INVALID_VALUE if addressing_mode, filter_mode, normalized_coords or a
  // combination of these arguments are not valid.
  check(valid_bool(normalized_coords), CL_INVALID_VALUE, "normalized_coords is not a cl_bool");
  check(valid_addressing(addressing_mode), CL_INVALID_VALUE, "invalid addressing_mode");
  check(valid_filter(filter_mode), CL_INVALID_VALUE, "invalid filter_mode");
  // CL_SAMPLER_PROPERTIES of a sampler from clCreateSampler is empty.
  return make_sampler(c, normalized_coords, addressing_mode, filter_mode, {});
}

cl_sampler clCreateSamplerWithProperties(cl_context context,
                                         const cl_sampler_properties* sampler_properties) {
  Context& c = *resolve<Context>(context);
  // Defaults: normalized coordinates, CL_ADDRESS_CLAMP, CL_FILTER_NEAREST.
  cl_bool normalized = CL_TRUE;
  cl_addressing_mode addressing = CL_ADDRESS_CLAMP;
  cl_filter_mode filter = CL_FILTER_NEAREST;
  bool seen_normalized = false, seen_addressing = false, seen_filter = false;
  // The spec: CL_INVALID_VALUE if the property name in sampler_properties is not a supported
  // property name, if the value specified for a supported property name is not valid, or if
  // the same property name is specified more than once.
  auto list = read_properties(
      sampler_properties, [&](cl_sampler_properties name, cl_sampler_properties value) {
        switch (name) {
          case CL_SAMPLER_NORMALIZED_COORDS:
            check(!seen_normalized, CL_INVALID_VALUE, "CL_SAMPLER_NORMALIZED_COORDS given twice");
            seen_normalized = true;
            check(valid_bool(static_cast<cl_bool>(value)) && value == static_cast<cl_bool>(value),
                  CL_INVALID_VALUE, "CL_SAMPLER_NORMALIZED_COORDS is not a cl_bool");
            normalized = static_cast<cl_bool>(value);
            break;
          case CL_SAMPLER_ADDRESSING_MODE:
            check(!seen_addressing, CL_INVALID_VALUE, "CL_SAMPLER_ADDRESSING_MODE given twice");
            seen_addressing = true;
            check(valid_addressing(static_cast<cl_addressing_mode>(value)) &&
                      value == static_cast<cl_addressing_mode>(value),
                  CL_INVALID_VALUE, "invalid CL_SAMPLER_ADDRESSING_MODE");
            addressing = static_cast<cl_addressing_mode>(value);
            break;
          case CL_SAMPLER_FILTER_MODE:
            check(!seen_filter, CL_INVALID_VALUE, "CL_SAMPLER_FILTER_MODE given twice");
            seen_filter = true;
            check(valid_filter(static_cast<cl_filter_mode>(value)) &&
                      value == static_cast<cl_filter_mode>(value),
                  CL_INVALID_VALUE, "invalid CL_SAMPLER_FILTER_MODE");
            filter = static_cast<cl_filter_mode>(value);
            break;
          default:
            // Mip-map filtering (cl_khr_mipmap_image) is not supported by any device.
            fail(CL_INVALID_VALUE, "unknown or unsupported sampler property");
        }
      });
  return make_sampler(c, normalized, addressing, filter, std::move(list));
}

void clRetainSampler(cl_sampler sampler) { resolve<Sampler>(sampler)->retain_api(); }
void clReleaseSampler(cl_sampler sampler) { resolve<Sampler>(sampler)->release_api(); }

void clGetSamplerInfo(cl_sampler sampler, cl_sampler_info param_name, size_t param_value_size,
                      void* param_value, size_t* param_value_size_ret) {
  Sampler& s = *resolve<Sampler>(sampler);
  InfoWriter out(param_value_size, param_value, param_value_size_ret);
  switch (param_name) {
    case CL_SAMPLER_REFERENCE_COUNT:
      return out.value(s.api_reference_count());
    case CL_SAMPLER_CONTEXT:
      return out.value(s.context().handle());
    case CL_SAMPLER_NORMALIZED_COORDS:
      return out.value<cl_bool>(s.normalized_coords() ? CL_TRUE : CL_FALSE);
    case CL_SAMPLER_ADDRESSING_MODE:
      return out.value(s.addressing_mode());
    case CL_SAMPLER_FILTER_MODE:
      return out.value(s.filter_mode());
    case CL_SAMPLER_PROPERTIES:
      // The properties given to clCreateSamplerWithProperties (with their terminating 0);
      // none (size 0) for clCreateSampler or a NULL list.
      return out.array(s.properties());
    default:
      unknown_param("sampler");
  }
}

}  // namespace manifold::api::impl
