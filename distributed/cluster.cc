#include "distributed/cluster.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstring>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

#ifdef TESSERA_HAVE_MPI
#include <mpi.h>
#endif

namespace tessera::distributed {

#ifdef TESSERA_HAVE_MPI

namespace {

// Tags below this are fixed (kCommandTag); request tags cycle through [kFirstRequestTag, kFirstRequestTag +
// kRequestTags). MPI guarantees tags up to 32767.
constexpr int kFirstRequestTag = 100;
constexpr int kRequestTags = 30000;

absl::Status MpiError(int code, const char* what, int peer) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return absl::UnavailableError(absl::StrCat(what, " rank ", peer, " failed: ", std::string(text, length)));
}

}  // namespace

bool Cluster::Available() { return true; }

absl::StatusOr<std::unique_ptr<Cluster>> Cluster::Initialize(int* argc, char*** argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) return absl::FailedPreconditionError("MPI is already initialized in this process");
  int provided = 0;
  if (MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
    return absl::UnavailableError("MPI_Init_thread failed (is this process started by mpirun?)");
  }
  if (provided < MPI_THREAD_MULTIPLE) {
    MPI_Finalize();
    return absl::FailedPreconditionError(
        "the MPI library does not provide MPI_THREAD_MULTIPLE, which --distributed needs (every worker and the "
        "scheduler thread send and receive messages)");
  }
  // Errors come back as return codes (a peer that died fails the query that talks to it) instead of aborting.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return std::unique_ptr<Cluster>(new Cluster(rank, size));
}

Cluster::~Cluster() {
  StopHeartbeats();
  // MPI_Finalize would wait for a rank that died; the process ends without it (mpirun reports the job failed).
  if (!Health().ok()) return;
  MPI_Finalize();
}

namespace {

int64_t SteadyNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

void Cluster::StartHeartbeats(std::chrono::milliseconds peer_timeout) {
  if (size_ <= 1 || heartbeat_thread_.joinable()) return;
  last_heartbeat_ns_ = std::make_unique<std::atomic<int64_t>[]>(size_);
  for (int peer = 0; peer < size_; ++peer) last_heartbeat_ns_[peer].store(SteadyNanos());
  peer_timeout_ = peer_timeout;
  heartbeat_thread_ = std::thread([this] {
    // At most one heartbeat in flight per peer: a peer that died never takes it, and it is not sent another.
    std::vector<MPI_Request> sending(size_, MPI_REQUEST_NULL);
    auto next_send = std::chrono::steady_clock::now();
    while (!stop_heartbeats_.load()) {
      if (std::chrono::steady_clock::now() >= next_send) {
        next_send += kHeartbeatInterval;
        for (int peer = 0; peer < size_; ++peer) {
          if (peer == rank_) continue;
          int done = 1;
          if (sending[peer] != MPI_REQUEST_NULL && MPI_Test(&sending[peer], &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
            continue;
          }
          if (done) MPI_Isend(nullptr, 0, MPI_BYTE, peer, kHeartbeatTag, MPI_COMM_WORLD, &sending[peer]);
        }
      }
      for (int peer = 0; peer < size_; ++peer) {
        if (peer == rank_) continue;
        while (true) {
          int arrived = 0;
          MPI_Status status;
          if (MPI_Iprobe(peer, kHeartbeatTag, MPI_COMM_WORLD, &arrived, &status) != MPI_SUCCESS || !arrived) break;
          if (MPI_Recv(nullptr, 0, MPI_BYTE, peer, kHeartbeatTag, MPI_COMM_WORLD, &status) != MPI_SUCCESS) break;
          // A rank taken for dead stays dead (its streams were failed; it may not resume them).
          if (PeerHealth(peer).ok()) last_heartbeat_ns_[peer].store(SteadyNanos());
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    // Heartbeats not taken (a dead peer's) are left to MPI, which is not finalized then.
    for (MPI_Request& request : sending) {
      if (request != MPI_REQUEST_NULL) MPI_Request_free(&request);
    }
  });
}

void Cluster::StopHeartbeats() {
  stop_heartbeats_.store(true);
  if (heartbeat_thread_.joinable()) heartbeat_thread_.join();
}

absl::Status Cluster::PeerHealth(int peer) const {
  if (last_heartbeat_ns_ == nullptr || peer == rank_ || peer < 0 || peer >= size_) return absl::OkStatus();
  const int64_t silent_ns = SteadyNanos() - last_heartbeat_ns_[peer].load();
  if (silent_ns <= std::chrono::duration_cast<std::chrono::nanoseconds>(peer_timeout_).count()) {
    return absl::OkStatus();
  }
  return absl::UnavailableError(absl::StrCat("rank ", peer, " stopped answering (no heartbeat for ",
                                             peer_timeout_.count() / 1000.0,
                                             " s): the cluster is unhealthy; restart it (mpirun)"));
}

absl::Status Cluster::Health() const {
  for (int peer = 0; peer < size_; ++peer) {
    if (absl::Status health = PeerHealth(peer); !health.ok()) return health;
  }
  return absl::OkStatus();
}

int Cluster::NewRequestTag() {
  return kFirstRequestTag + next_tag_.fetch_add(1, std::memory_order_relaxed) % kRequestTags;
}

static_assert(sizeof(MPI_Request) <= sizeof(Cluster::PendingSend::request));

absl::Status Cluster::Send(int peer, int tag, const void* data, size_t bytes) {
  TESSERA_ASSIGN_OR_RETURN(PendingSend send, StartSend(peer, tag, data, bytes));
  return FinishSend(send);
}

absl::StatusOr<Cluster::PendingSend> Cluster::StartSend(int peer, int tag, const void* data, size_t bytes) {
  if (bytes > static_cast<size_t>(INT_MAX)) {
    return absl::InvalidArgumentError(absl::StrCat("message of ", bytes, " bytes is too large for one MPI send"));
  }
  TESSERA_RETURN_IF_ERROR(PeerHealth(peer));
  PendingSend send;
  send.peer = peer;
  send.bytes = bytes;
  MPI_Request request;
  const int code =
      MPI_Isend(const_cast<void*>(data), static_cast<int>(bytes), MPI_BYTE, peer, tag, MPI_COMM_WORLD, &request);
  if (code != MPI_SUCCESS) return MpiError(code, "sending to", peer);
  std::memcpy(send.request, &request, sizeof(request));
  return send;
}

absl::Status Cluster::FinishSend(PendingSend& send) {
  // A send the peer does not take at once (a large message waits for its receive) is polled like Probe, so that
  // a peer that died fails it instead of blocking this thread for good.
  MPI_Request request;
  std::memcpy(&request, send.request, sizeof(request));
  constexpr int kSpinPolls = 64;
  int polls = 0;
  std::chrono::microseconds pause(20);
  while (true) {
    int done = 0;
    const int code = MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (code != MPI_SUCCESS) return MpiError(code, "sending to", send.peer);
    if (done) break;
    if (absl::Status health = PeerHealth(send.peer); !health.ok()) {
      MPI_Request_free(&request);  // the dead peer never reads it
      return health;
    }
    if (++polls < kSpinPolls) {
      std::this_thread::yield();  // a receive posted already completes within microseconds
      continue;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(1000));
  }
  bytes_sent_.fetch_add(static_cast<int64_t>(send.bytes), std::memory_order_relaxed);
  return absl::OkStatus();
}

bool Cluster::AllRanksSucceeded(bool ok) {
  int mine = ok ? 1 : 0;
  int all = 0;
  if (MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD) != MPI_SUCCESS) return false;
  return all != 0;
}

absl::StatusOr<size_t> Cluster::Probe(int peer, int tag) {
  // Polls with a sleep that grows from 20 us to 1 ms: Open MPI's blocking probe spins on a core.
  std::chrono::microseconds pause(20);
  while (true) {
    int arrived = 0;
    MPI_Status status;
    const int code = MPI_Iprobe(peer, tag, MPI_COMM_WORLD, &arrived, &status);
    if (code != MPI_SUCCESS) return MpiError(code, "waiting for", peer);
    if (arrived) {
      int count = 0;
      MPI_Get_count(&status, MPI_BYTE, &count);
      return static_cast<size_t>(count);
    }
    TESSERA_RETURN_IF_ERROR(PeerHealth(peer));
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(1000));
  }
}

absl::Status Cluster::ReceiveInto(int peer, int tag, void* data, size_t bytes) {
  MPI_Status status;
  const int code = MPI_Recv(data, static_cast<int>(bytes), MPI_BYTE, peer, tag, MPI_COMM_WORLD, &status);
  if (code != MPI_SUCCESS) return MpiError(code, "receiving from", peer);
  bytes_received_.fetch_add(static_cast<int64_t>(bytes), std::memory_order_relaxed);
  return absl::OkStatus();
}

#else  // built without MPI

bool Cluster::Available() { return false; }

absl::StatusOr<std::unique_ptr<Cluster>> Cluster::Initialize(int*, char***) {
  return absl::UnimplementedError(
      "this tessera-server was built without MPI: install Open MPI (libopenmpi-dev) and rebuild to use "
      "--distributed");
}

Cluster::~Cluster() = default;
void Cluster::StartHeartbeats(std::chrono::milliseconds) {}
void Cluster::StopHeartbeats() {}
absl::Status Cluster::PeerHealth(int) const { return absl::OkStatus(); }
absl::Status Cluster::Health() const { return absl::OkStatus(); }
int Cluster::NewRequestTag() { return 0; }
bool Cluster::AllRanksSucceeded(bool ok) { return ok; }
absl::Status Cluster::Send(int, int, const void*, size_t) { return absl::UnimplementedError("built without MPI"); }
absl::StatusOr<Cluster::PendingSend> Cluster::StartSend(int, int, const void*, size_t) {
  return absl::UnimplementedError("built without MPI");
}
absl::Status Cluster::FinishSend(PendingSend&) { return absl::UnimplementedError("built without MPI"); }
absl::StatusOr<size_t> Cluster::Probe(int, int) { return absl::UnimplementedError("built without MPI"); }
absl::Status Cluster::ReceiveInto(int, int, void*, size_t) { return absl::UnimplementedError("built without MPI"); }

#endif

absl::StatusOr<std::string> Cluster::Receive(int peer, int tag) {
  absl::StatusOr<size_t> bytes = Probe(peer, tag);
  if (!bytes.ok()) return bytes.status();
  std::string message(*bytes, '\0');
  absl::Status received = ReceiveInto(peer, tag, message.data(), message.size());
  if (!received.ok()) return received;
  return message;
}

}  // namespace tessera::distributed
