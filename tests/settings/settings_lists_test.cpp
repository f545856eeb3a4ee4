// The lists that environment variables hold (settings/settings.cpp): MANIFOLD_GPU_PARTITION and
// MANIFOLD_REMOTE, parsed into typed values; what is not understood is kept for the debug log.
#include <gtest/gtest.h>

#include "settings/settings.h"

namespace {

using manifold::parse_gpu_partition;
using manifold::parse_remote_servers;

TEST(GpuPartitionList, EveryGpuOrSomeByIndex) {
  const auto s = parse_gpu_partition(" 2 , 1:4,0:3");
  EXPECT_EQ(s.every, 2u);
  EXPECT_EQ(s.parts_of(0), 3u);
  EXPECT_EQ(s.parts_of(1), 4u);
  EXPECT_EQ(s.parts_of(7), 2u);
  EXPECT_TRUE(s.invalid.empty());
  EXPECT_TRUE(s.any());
}

TEST(GpuPartitionList, KeepsWhatItDoesNotUnderstand) {
  const auto s = parse_gpu_partition("x,1:,:2,3:y,,");
  EXPECT_EQ(s.every, 0u);
  EXPECT_TRUE(s.gpus.empty());
  EXPECT_EQ(s.invalid, "x,1:,:2,3:y");
  EXPECT_FALSE(s.any());
}

TEST(RemoteServerList, NamesAddressesAndBracketedIpv6) {
  const auto s = parse_remote_servers("node1:7700, 10.0.0.2:80,[fd00::2]:7701");
  ASSERT_EQ(s.servers.size(), 3u);
  EXPECT_EQ(s.servers[0].host, "node1");
  EXPECT_EQ(s.servers[0].port, 7700);
  EXPECT_EQ(s.servers[1].host, "10.0.0.2");
  EXPECT_EQ(s.servers[1].port, 80);
  EXPECT_EQ(s.servers[2].host, "fd00::2");
  EXPECT_EQ(s.servers[2].port, 7701);
  EXPECT_TRUE(s.invalid.empty());
}

TEST(RemoteServerList, RefusesItemsWithoutAUsablePort) {
  const auto s =
      parse_remote_servers("node1,node2:0,node3:65536,fd00::2:7700,:7700,node4:77x,ok:1");
  ASSERT_EQ(s.servers.size(), 1u);
  EXPECT_EQ(s.servers[0].host, "ok");
  EXPECT_EQ(s.invalid, "node1,node2:0,node3:65536,fd00::2:7700,:7700,node4:77x");
}

}  // namespace
