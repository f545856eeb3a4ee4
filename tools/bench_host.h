// The host reference of `manifold bench`: plain C++ on every hardware thread, no OpenCL.
#pragma once

#include "bench_report.h"

namespace manifold_tool {

// Fills `subject` with the host's triad bandwidth and with the mad and uint16-loop kernels' work
// run on the widest vectors: the ceilings a CPU platform's figures can approach on this machine.
void run_host_subject(bool quick, Subject& subject);

}  // namespace manifold_tool
