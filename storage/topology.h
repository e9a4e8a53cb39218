#pragma once
// The machine's CPU / NUMA layout as storage and scheduling see it.
//
// Everything that cares about NUMA (block home nodes, memory binding, worker placement) goes through the
// Topology interface so tests can fake a 2- or 4-node machine on a single-node box. MakeSystemTopology()
// reads the real machine with libnuma; MakeFakeTopology() builds a synthetic one whose BindMemoryToNode is a
// no-op.
//
// Threading: a Topology is immutable after construction; every const method may be called from any thread.
// NodeStriper is thread-safe.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tessera {

class Topology {
 public:
  virtual ~Topology() = default;

  // Number of NUMA nodes (>= 1). Nodes are numbered 0 .. NumNodes()-1.
  virtual int NumNodes() const = 0;
  // Number of CPUs (>= 1). CPUs are numbered 0 .. NumCpus()-1.
  virtual int NumCpus() const = 0;
  // The node that `cpu` belongs to; 0 for an out-of-range cpu.
  virtual int NodeOfCpu(int cpu) const = 0;
  // The CPUs of `node` in increasing order; empty for an out-of-range node.
  virtual std::vector<int> CpusOfNode(int node) const = 0;
  // Binds the pages of [address, address+length) to node's memory (mbind on real NUMA hardware; a no-op for
  // single-node and fake topologies). Best effort: failure leaves the default placement. `address` should be
  // page-aligned. Must be called before the pages are first touched to take effect without migration.
  virtual void BindMemoryToNode(void* address, size_t length, int node) const = 0;
  // One line for logs and the shell, e.g. "2 NUMA nodes, 16 cpus (node 0: 0-7, node 1: 8-15)".
  virtual std::string Describe() const = 0;
};

// The real machine: libnuma when numa_available() >= 0, else one node with
// std::thread::hardware_concurrency() cpus. Never returns null.
std::unique_ptr<Topology> MakeSystemTopology();

// A synthetic machine for tests: num_nodes nodes with cpus_per_node cpus each, cpus assigned to nodes in
// blocks (node 0 gets cpus 0 .. cpus_per_node-1, and so on). Both arguments must be >= 1.
std::unique_ptr<Topology> MakeFakeTopology(int num_nodes, int cpus_per_node);

// Hands out home nodes round-robin (0, 1, ..., n-1, 0, ...), used to stripe a table's blocks across nodes.
// Thread-safe (one atomic counter). The Topology must outlive nothing here: only its node count is kept.
class NodeStriper {
 public:
  explicit NodeStriper(const Topology& topology);

  NodeStriper(const NodeStriper&) = delete;
  NodeStriper& operator=(const NodeStriper&) = delete;

  // The home node for the next block.
  int NextNode();

 private:
  const int num_nodes_;
  std::atomic<uint64_t> next_{0};
};

}  // namespace tessera
