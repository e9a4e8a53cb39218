#include "distributed/cluster.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <thread>

#include "absl/strings/str_cat.h"

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

Cluster::~Cluster() { MPI_Finalize(); }

int Cluster::NewRequestTag() {
  return kFirstRequestTag + next_tag_.fetch_add(1, std::memory_order_relaxed) % kRequestTags;
}

absl::Status Cluster::Send(int peer, int tag, const void* data, size_t bytes) {
  if (bytes > static_cast<size_t>(INT_MAX)) {
    return absl::InvalidArgumentError(absl::StrCat("message of ", bytes, " bytes is too large for one MPI send"));
  }
  const int code = MPI_Send(const_cast<void*>(data), static_cast<int>(bytes), MPI_BYTE, peer, tag, MPI_COMM_WORLD);
  if (code != MPI_SUCCESS) return MpiError(code, "sending to", peer);
  bytes_sent_.fetch_add(static_cast<int64_t>(bytes), std::memory_order_relaxed);
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
int Cluster::NewRequestTag() { return 0; }
bool Cluster::AllRanksSucceeded(bool ok) { return ok; }
absl::Status Cluster::Send(int, int, const void*, size_t) { return absl::UnimplementedError("built without MPI"); }
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
