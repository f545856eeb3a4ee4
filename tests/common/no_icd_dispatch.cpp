// For tests that link the runtime directly (no api/): the runtime's handles point at the ICD's
// dispatch table (api/icd.cpp), and none of these tests' objects reaches an ICD loader, so an
// empty table does.
#include "core/object.h"

const cl_icd_dispatch manifold::kIcdDispatch{};
