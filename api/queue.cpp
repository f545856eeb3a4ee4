// Command-queue entry points.
#include "api/common.h"
#include "api/impl.h"
#include "core/info.h"

namespace manifold::api::impl {
namespace {

cl_command_queue make_queue(cl_context context, cl_device_id device,
                            cl_command_queue_properties props,
                            std::vector<cl_queue_properties> list) {
  Context& c = *resolve<Context>(context);
  Device& d = *resolve<Device>(device);
  // The spec: CL_INVALID_DEVICE if device is not associated with context.
  check(c.has_device(&d), CL_INVALID_DEVICE, "the device is not in the context");
  constexpr cl_command_queue_properties known = CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE |
                                                CL_QUEUE_PROFILING_ENABLE | CL_QUEUE_ON_DEVICE |
                                                CL_QUEUE_ON_DEVICE_DEFAULT;
  check((props & ~known) == 0, CL_INVALID_VALUE, "unknown queue property bits");
  // CL_QUEUE_ON_DEVICE_DEFAULT requires CL_QUEUE_ON_DEVICE, which requires out-of-order mode.
  check(!(props & CL_QUEUE_ON_DEVICE_DEFAULT) || (props & CL_QUEUE_ON_DEVICE), CL_INVALID_VALUE,
        "CL_QUEUE_ON_DEVICE_DEFAULT without CL_QUEUE_ON_DEVICE");
  check(!(props & CL_QUEUE_ON_DEVICE) || (props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE),
        CL_INVALID_VALUE, "CL_QUEUE_ON_DEVICE without out-of-order mode");
  // The spec: CL_INVALID_QUEUE_PROPERTIES if values specified in properties are valid but are
  // not supported by the device.
  const cl_command_queue_properties supported = d.info().queue_on_host_properties;
  check((props & ~supported) == 0, CL_INVALID_QUEUE_PROPERTIES,
        "the device does not support these queue properties");
  const bool out_of_order = props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE;
  return make_api_object<CommandQueue>(
             Ref<Context>(&c), d, props, std::move(list),
             make_submitter(d.create_native_queue(out_of_order), out_of_order))
      ->handle();
}

}  // namespace

cl_command_queue clCreateCommandQueue(cl_context context, cl_device_id device,
                                      cl_command_queue_properties properties) {
  constexpr cl_command_queue_properties legacy =
      CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | CL_QUEUE_PROFILING_ENABLE;
  resolve<Context>(context);
  resolve<Device>(device);
  check((properties & ~legacy) == 0, CL_INVALID_VALUE, "unknown queue property bits");
  return make_queue(context, device, properties, {});
}

cl_command_queue clCreateCommandQueueWithProperties(cl_context context, cl_device_id device,
                                                    const cl_queue_properties* properties) {
  resolve<Context>(context);
  resolve<Device>(device);
  cl_command_queue_properties props = 0;
  bool seen_props = false, seen_size = false, seen_printf = false, seen_printf_data = false;
  auto list = read_properties(properties, [&](cl_queue_properties name, cl_queue_properties value) {
    switch (name) {
      case CL_QUEUE_PROPERTIES:
        check(!seen_props, CL_INVALID_VALUE, "CL_QUEUE_PROPERTIES given twice");
        seen_props = true;
        props = value;
        break;
      case CL_QUEUE_SIZE:
        check(!seen_size, CL_INVALID_VALUE, "CL_QUEUE_SIZE given twice");
        seen_size = true;
        break;
      case CL_QUEUE_PRINTF_CALLBACK_MFLD:
        check(!seen_printf, CL_INVALID_VALUE, "CL_QUEUE_PRINTF_CALLBACK_MFLD given twice");
        check(value != 0, CL_INVALID_VALUE, "CL_QUEUE_PRINTF_CALLBACK_MFLD is NULL");
        seen_printf = true;
        break;
      case CL_QUEUE_PRINTF_USER_DATA_MFLD:
        check(!seen_printf_data, CL_INVALID_VALUE, "CL_QUEUE_PRINTF_USER_DATA_MFLD given twice");
        seen_printf_data = true;
        break;
      default:
        fail(CL_INVALID_VALUE, "unknown queue property");
    }
  });
  // CL_QUEUE_SIZE is only for device queues, which this device does not have.
  check(!seen_size || (props & CL_QUEUE_ON_DEVICE), CL_INVALID_VALUE,
        "CL_QUEUE_SIZE without CL_QUEUE_ON_DEVICE");
  check(!seen_printf_data || seen_printf, CL_INVALID_VALUE,
        "CL_QUEUE_PRINTF_USER_DATA_MFLD without CL_QUEUE_PRINTF_CALLBACK_MFLD");
  check(!seen_printf || resolve<Device>(device)->info().printf_to_sink, CL_INVALID_QUEUE_PROPERTIES,
        "the device cannot direct its kernels' printf output");
  return make_queue(context, device, props, std::move(list));
}

void clRetainCommandQueue(cl_command_queue q) { resolve<CommandQueue>(q)->retain_api(); }
void clReleaseCommandQueue(cl_command_queue q) { resolve<CommandQueue>(q)->release_api(); }

void clGetCommandQueueInfo(cl_command_queue command_queue, cl_command_queue_info param_name,
                           size_t param_value_size, void* param_value,
                           size_t* param_value_size_ret) {
  CommandQueue& q = *resolve<CommandQueue>(command_queue);
  InfoWriter out(param_value_size, param_value, param_value_size_ret);
  switch (param_name) {
    case CL_QUEUE_CONTEXT:
      return out.value(q.context().handle());
    case CL_QUEUE_DEVICE:
      return out.value(q.device().handle());
    case CL_QUEUE_REFERENCE_COUNT:
      return out.value(q.api_reference_count());
    case CL_QUEUE_PROPERTIES:
      return out.value(q.properties());
    case CL_QUEUE_PROPERTIES_ARRAY:
      return out.array(q.property_list());
    // Device queues are not supported: CL_QUEUE_SIZE is then CL_INVALID_COMMAND_QUEUE.
    case CL_QUEUE_SIZE:
      fail(CL_INVALID_COMMAND_QUEUE, "CL_QUEUE_SIZE is only defined for device queues");
    case CL_QUEUE_DEVICE_DEFAULT:
      return out.value(cl_command_queue{});
    default:
      unknown_param("command-queue");
  }
}

void clSetCommandQueueProperty(cl_command_queue command_queue, cl_command_queue_properties, cl_bool,
                               cl_command_queue_properties*) {
  resolve<CommandQueue>(command_queue);
  // Deprecated since OpenCL 1.1: queue properties cannot be changed after creation.
  fail(CL_INVALID_OPERATION,
       "clSetCommandQueueProperty is deprecated: properties are fixed at creation");
}

void clSetDefaultDeviceCommandQueue(cl_context context, cl_device_id device,
                                    cl_command_queue command_queue) {
  Context& c = *resolve<Context>(context);
  Device& d = *resolve<Device>(device);
  check(c.has_device(&d), CL_INVALID_DEVICE, "the device is not in the context");
  // The spec: CL_INVALID_OPERATION if device does not support a replaceable default
  // on-device queue; no device here has on-device queues, so whatever command_queue is (CTS
  // api consistency_device_enqueue passes NULL).
  static_cast<void>(command_queue);
  fail(CL_INVALID_OPERATION, "the device has no on-device queues");
}

void clFlush(cl_command_queue q) { resolve<CommandQueue>(q)->flush(); }
void clFinish(cl_command_queue q) { resolve<CommandQueue>(q)->finish(); }

}  // namespace manifold::api::impl
