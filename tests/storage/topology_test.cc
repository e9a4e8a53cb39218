#include "storage/topology.h"

#include <atomic>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

using ::testing::ElementsAre;

TEST(TopologyTest, FakeTwoNodeTopologyAssignsCpusInBlocks) {
  std::unique_ptr<Topology> topology = MakeFakeTopology(2, 4);
  EXPECT_EQ(topology->NumNodes(), 2);
  EXPECT_EQ(topology->NumCpus(), 8);
  EXPECT_THAT(topology->CpusOfNode(0), ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(topology->CpusOfNode(1), ElementsAre(4, 5, 6, 7));
  EXPECT_EQ(topology->NodeOfCpu(3), 0);
  EXPECT_EQ(topology->NodeOfCpu(4), 1);
  EXPECT_TRUE(topology->CpusOfNode(2).empty());
  EXPECT_EQ(topology->Describe(), "fake: 2 NUMA nodes, 8 cpus (node 0: 0-3; node 1: 4-7)");
}

TEST(TopologyTest, FakeFourNodeTopology) {
  std::unique_ptr<Topology> topology = MakeFakeTopology(4, 2);
  EXPECT_EQ(topology->NumNodes(), 4);
  EXPECT_EQ(topology->NumCpus(), 8);
  for (int cpu = 0; cpu < 8; ++cpu) EXPECT_EQ(topology->NodeOfCpu(cpu), cpu / 2);
  EXPECT_THAT(topology->CpusOfNode(3), ElementsAre(6, 7));
}

TEST(TopologyTest, FakeBindMemoryIsANoOp) {
  std::unique_ptr<Topology> topology = MakeFakeTopology(2, 1);
  std::vector<char> memory(4096, 'x');
  topology->BindMemoryToNode(memory.data(), memory.size(), 1);
  EXPECT_EQ(memory[100], 'x');
}

TEST(TopologyTest, SystemTopologyIsConsistent) {
  std::unique_ptr<Topology> topology = MakeSystemTopology();
  ASSERT_NE(topology, nullptr);
  ASSERT_GE(topology->NumNodes(), 1);
  ASSERT_GE(topology->NumCpus(), 1);
  int cpus = 0;
  for (int node = 0; node < topology->NumNodes(); ++node) {
    for (int cpu : topology->CpusOfNode(node)) {
      EXPECT_EQ(topology->NodeOfCpu(cpu), node);
      ++cpus;
    }
  }
  EXPECT_EQ(cpus, topology->NumCpus());
  EXPECT_FALSE(topology->Describe().empty());
}

TEST(NodeStriperTest, RoundRobinOverTwoNodes) {
  std::unique_ptr<Topology> topology = MakeFakeTopology(2, 4);
  NodeStriper striper(*topology);
  std::vector<int> homes;
  for (int block = 0; block < 6; ++block) homes.push_back(striper.NextNode());
  EXPECT_THAT(homes, ElementsAre(0, 1, 0, 1, 0, 1));
}

TEST(NodeStriperTest, RoundRobinOverFourNodes) {
  std::unique_ptr<Topology> topology = MakeFakeTopology(4, 1);
  NodeStriper striper(*topology);
  std::vector<int> homes;
  for (int block = 0; block < 8; ++block) homes.push_back(striper.NextNode());
  EXPECT_THAT(homes, ElementsAre(0, 1, 2, 3, 0, 1, 2, 3));
}

TEST(NodeStriperTest, ConcurrentCallersGetBalancedNodes) {
  std::unique_ptr<Topology> topology = MakeFakeTopology(4, 1);
  NodeStriper striper(*topology);
  constexpr int kThreads = 4;
  constexpr int kPerThread = 1000;
  std::atomic<int> counts[4] = {};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kPerThread; ++i) counts[striper.NextNode()].fetch_add(1);
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int node = 0; node < 4; ++node) EXPECT_EQ(counts[node].load(), kThreads * kPerThread / 4);
}

}  // namespace
}  // namespace tessera
