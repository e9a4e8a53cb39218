#include "storage/topology.h"

#include <numa.h>

#include <algorithm>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "glog/logging.h"

namespace tessera {
namespace {

// "0-7,16-23" for a sorted cpu list.
std::string CpuRanges(const std::vector<int>& cpus) {
  std::vector<std::string> ranges;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    ranges.push_back(i == j ? absl::StrCat(cpus[i]) : absl::StrCat(cpus[i], "-", cpus[j]));
    i = j + 1;
  }
  return absl::StrJoin(ranges, ",");
}

// A topology given as a table: node of each cpu, and the OS node id of each dense node index (for mbind).
// Binding happens only when `bind_with_libnuma` and there is more than one node.
class TableTopology final : public Topology {
 public:
  TableTopology(std::string kind, std::vector<int> node_of_cpu, std::vector<int> os_node_ids, bool bind_with_libnuma)
      : kind_(std::move(kind)),
        node_of_cpu_(std::move(node_of_cpu)),
        os_node_ids_(std::move(os_node_ids)),
        bind_with_libnuma_(bind_with_libnuma && os_node_ids_.size() > 1) {
    CHECK(!node_of_cpu_.empty());
    CHECK(!os_node_ids_.empty());
    cpus_of_node_.resize(os_node_ids_.size());
    for (int cpu = 0; cpu < static_cast<int>(node_of_cpu_.size()); ++cpu) {
      cpus_of_node_[node_of_cpu_[cpu]].push_back(cpu);
    }
  }

  int NumNodes() const override { return static_cast<int>(os_node_ids_.size()); }
  int NumCpus() const override { return static_cast<int>(node_of_cpu_.size()); }

  int NodeOfCpu(int cpu) const override {
    if (cpu < 0 || cpu >= NumCpus()) return 0;
    return node_of_cpu_[cpu];
  }

  std::vector<int> CpusOfNode(int node) const override {
    if (node < 0 || node >= NumNodes()) return {};
    return cpus_of_node_[node];
  }

  void BindMemoryToNode(void* address, size_t length, int node) const override {
    if (!bind_with_libnuma_ || address == nullptr || length == 0 || node < 0 || node >= NumNodes()) return;
    numa_tonode_memory(address, length, os_node_ids_[node]);
  }

  std::string Describe() const override {
    std::vector<std::string> nodes;
    for (int node = 0; node < NumNodes(); ++node) {
      nodes.push_back(absl::StrCat("node ", node, ": ", CpuRanges(cpus_of_node_[node])));
    }
    return absl::StrCat(kind_, NumNodes(), NumNodes() == 1 ? " NUMA node, " : " NUMA nodes, ", NumCpus(),
                        NumCpus() == 1 ? " cpu (" : " cpus (", absl::StrJoin(nodes, "; "), ")");
  }

 private:
  const std::string kind_;
  const std::vector<int> node_of_cpu_;
  const std::vector<int> os_node_ids_;
  const bool bind_with_libnuma_;
  std::vector<std::vector<int>> cpus_of_node_;
};

std::unique_ptr<Topology> MakeSingleNodeTopology() {
  int cpus = static_cast<int>(std::thread::hardware_concurrency());
  if (cpus <= 0) cpus = 1;
  return std::make_unique<TableTopology>("", std::vector<int>(cpus, 0), std::vector<int>{0},
                                         /*bind_with_libnuma=*/false);
}

}  // namespace

std::unique_ptr<Topology> MakeSystemTopology() {
  if (numa_available() < 0) return MakeSingleNodeTopology();
  // OS node ids may be sparse (e.g. 0 and 2); the Topology numbers the nodes that exist densely.
  std::vector<int> os_node_ids;
  std::vector<int> dense_of_os_node(numa_max_node() + 1, -1);
  for (int os_node = 0; os_node <= numa_max_node(); ++os_node) {
    if (numa_nodes_ptr != nullptr && !numa_bitmask_isbitset(numa_nodes_ptr, os_node)) continue;
    dense_of_os_node[os_node] = static_cast<int>(os_node_ids.size());
    os_node_ids.push_back(os_node);
  }
  const int num_cpus = numa_num_configured_cpus();
  if (os_node_ids.empty() || num_cpus <= 0) return MakeSingleNodeTopology();
  std::vector<int> node_of_cpu(num_cpus, 0);
  for (int cpu = 0; cpu < num_cpus; ++cpu) {
    const int os_node = numa_node_of_cpu(cpu);  // -1 for an offline cpu
    if (os_node >= 0 && os_node < static_cast<int>(dense_of_os_node.size()) && dense_of_os_node[os_node] >= 0) {
      node_of_cpu[cpu] = dense_of_os_node[os_node];
    }
  }
  return std::make_unique<TableTopology>("", std::move(node_of_cpu), std::move(os_node_ids),
                                         /*bind_with_libnuma=*/true);
}

std::unique_ptr<Topology> MakeFakeTopology(int num_nodes, int cpus_per_node) {
  CHECK_GE(num_nodes, 1);
  CHECK_GE(cpus_per_node, 1);
  std::vector<int> node_of_cpu(static_cast<size_t>(num_nodes) * cpus_per_node);
  for (size_t cpu = 0; cpu < node_of_cpu.size(); ++cpu) node_of_cpu[cpu] = static_cast<int>(cpu / cpus_per_node);
  std::vector<int> node_ids(num_nodes);
  for (int node = 0; node < num_nodes; ++node) node_ids[node] = node;
  return std::make_unique<TableTopology>("fake: ", std::move(node_of_cpu), std::move(node_ids),
                                         /*bind_with_libnuma=*/false);
}

NodeStriper::NodeStriper(const Topology& topology) : num_nodes_(std::max(1, topology.NumNodes())) {}

int NodeStriper::NextNode() {
  return static_cast<int>(next_.fetch_add(1, std::memory_order_relaxed) % static_cast<uint64_t>(num_nodes_));
}

}  // namespace tessera
