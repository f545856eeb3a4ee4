// A fixture for the layer check (tests/structure): core may not include the scheduler.
#include "scheduler/command.h"
