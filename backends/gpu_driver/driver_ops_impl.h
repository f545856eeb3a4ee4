// The device operations on a driver GPU (driver_ops.h), all their definitions. Included once per
// vendor by the file that instantiates DriverDevice.
#pragma once

#include "backends/gpu_driver/driver_ops_copy_impl.h"
#include "backends/gpu_driver/driver_ops_graph_impl.h"
#include "backends/gpu_driver/driver_ops_launch_impl.h"
