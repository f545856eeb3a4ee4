#include <gtest/gtest.h>
// placeholder
TEST(X, Y) {}
