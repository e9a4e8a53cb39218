#pragma once
// The MPI world of a `tessera-server --distributed` process: its rank, the number of ranks, and point-to-point
// messages between ranks (distributed/README.md). Rank 0 is the master: it parses, plans and serves clients; every
// rank (the master included) holds a part of the data and executes with its own Foreman and workers.
//
// MPI is initialized with MPI_THREAD_MULTIPLE, so any thread may call any method at the same time (the scheduler
// thread, workers running exchange work orders, a rank's service threads). Messages are matched by (peer, tag):
// the master gives every request its own tag (NewRequestTag), so concurrent queries never see each other's
// messages. Blocking receives poll (MPI_Iprobe and a short sleep) instead of spinning in the MPI library, so an
// idle rank does not take a core from the workers of its neighbours on the same machine.
//
// Built without MPI (libopenmpi-dev absent), Initialize returns Unimplemented and nothing else may be called.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tessera::distributed {

// The tag every rank's service receives the master's commands on (distributed/rank_protocol.h).
inline constexpr int kCommandTag = 1;
// The tag of the heartbeats every other rank sends the master (StartHeartbeats).
inline constexpr int kHeartbeatTag = 2;
// How long a silent peer is waited for before it is taken for dead (StartHeartbeats; tessera-server
// --distributed-peer-timeout-ms).
inline constexpr std::chrono::milliseconds kDefaultPeerTimeout{10000};
// The fewest estimated groups of a decomposable aggregation whose partial aggregates the ranks merge themselves
// after a hash split by a group key, instead of the master merging the gathered partials
// (query_execution/plan_distribution.h; tessera-server --distributed-split-groups; docs/decisions/0011, round 6).
inline constexpr double kDefaultSplitGroups = 1e4;

class Cluster {
 public:
  // Whether this binary was built with MPI.
  static bool Available();
  // MPI_Init_thread with MPI_THREAD_MULTIPLE; FailedPrecondition when the library gives less. At most once per
  // process; the Cluster finalizes MPI when destroyed.
  static absl::StatusOr<std::unique_ptr<Cluster>> Initialize(int* argc, char*** argv);
  ~Cluster();
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool is_master() const { return rank_ == 0; }

  // A tag no other request of this process uses now (tags wrap around after about 30,000 requests, far more than
  // can be in flight).
  int NewRequestTag();

  // Sends `bytes` bytes to `peer` (blocking until the buffer may be reused). An empty message is allowed.
  absl::Status Send(int peer, int tag, const void* data, size_t bytes);

  // A send started by StartSend and not yet finished: MPI may still read its buffer. Every started send must be
  // finished (FinishSend) before its buffer is freed; messages to one peer with one tag arrive in the order they
  // were started. Several sends in flight overlap their hand-overs, which one at a time cost a poll interval each
  // (a broadcast's blocks, block_stream.h; docs/decisions/0011, round 11).
  struct PendingSend {
    alignas(8) unsigned char request[16] = {};  // the MPI_Request
    int peer = -1;
    size_t bytes = 0;
  };
  // Send without the wait: the buffer must stay valid until FinishSend returns.
  absl::StatusOr<PendingSend> StartSend(int peer, int tag, const void* data, size_t bytes);
  // Waits until `send` went out, polling like Send; fails (leaving the message to MPI) when the peer died.
  absl::Status FinishSend(PendingSend& send);
  absl::Status Send(int peer, int tag, std::string_view message) {
    return Send(peer, tag, message.data(), message.size());
  }
  // Waits for the next message from `peer` with `tag` and returns its size in bytes, without receiving it.
  absl::StatusOr<size_t> Probe(int peer, int tag);
  // Receives the next message from `peer` with `tag` into `data`, which holds `bytes` bytes: exactly the size
  // Probe returned for it.
  absl::Status ReceiveInto(int peer, int tag, void* data, size_t bytes);
  // Probe + ReceiveInto into a string.
  absl::StatusOr<std::string> Receive(int peer, int tag);

  // Collective (every rank calls it once, in the same order): true when every rank passed `ok`. Used at startup
  // so that a rank that cannot open its data directory stops the whole cluster instead of leaving it half up.
  bool AllRanksSucceeded(bool ok);

  // Liveness, once the cluster is up (after the start-up vote): every rank sends every other rank a heartbeat
  // every kHeartbeatInterval from a thread of its own, which also records the heartbeats it receives. A peer
  // silent for longer than the peer timeout is taken for dead: from then on every wait for it (Probe, Send)
  // fails with Unavailable naming the rank and saying the cluster is unhealthy, so a query that needs a rank
  // killed mid-query fails instead of hanging (Open MPI must be told not to end the whole job when one process
  // dies: mpirun --mca orte_enable_recovery 1). On the master that fails the query; on another rank it ends
  // the hash-split streams it had with the dead peer (and a rank whose master died stops serving).
  // `peer_timeout` must be longer than the interval (the server's flag asks for at least twice) and the same on
  // every rank.
  static constexpr std::chrono::milliseconds kHeartbeatInterval{500};
  void StartHeartbeats(std::chrono::milliseconds peer_timeout = kDefaultPeerTimeout);
  // OK while every other rank is alive, else Unavailable naming the first rank taken for dead.
  absl::Status Health() const;

  // The master's planning setting for the cluster (kDefaultSplitGroups): set once at start-up, before queries.
  double split_groups() const { return split_groups_; }
  void set_split_groups(double groups) { split_groups_ = groups; }

  // Bytes this process sent and received (all peers, all tags), for EXPLAIN ANALYZE and the benchmark.
  int64_t bytes_sent() const { return bytes_sent_.load(std::memory_order_relaxed); }
  int64_t bytes_received() const { return bytes_received_.load(std::memory_order_relaxed); }

 private:
  Cluster(int rank, int size) : rank_(rank), size_(size) {}
  // This rank's view of `peer`: OK, or Unavailable once it missed its heartbeats (then for good).
  absl::Status PeerHealth(int peer) const;
  void StopHeartbeats();

  const int rank_;
  const int size_;
  std::atomic<int> next_tag_{0};
  std::atomic<int64_t> bytes_sent_{0};
  std::atomic<int64_t> bytes_received_{0};
  double split_groups_ = kDefaultSplitGroups;

  std::chrono::milliseconds peer_timeout_{0};                  // 0: liveness not watched
  std::unique_ptr<std::atomic<int64_t>[]> last_heartbeat_ns_;  // per rank, steady clock
  std::atomic<bool> stop_heartbeats_{false};
  std::thread heartbeat_thread_;
};

}  // namespace tessera::distributed
