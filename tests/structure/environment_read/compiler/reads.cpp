// A tree whose compiler reads the environment itself: the structure check must reject it.
#include <cstdlib>

const char* knob() { return std::getenv("MANIFOLD_SOMETHING"); }
