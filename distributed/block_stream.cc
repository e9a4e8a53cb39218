#include "distributed/block_stream.h"

#include <deque>
#include <functional>
#include <memory>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "distributed/rank_protocol.h"
#include "relational_operators/block_input.h"
#include "storage/block_layout.h"

namespace tessera::distributed {
namespace {

constexpr int32_t kClosed = -1;

absl::Status SendCredit(Cluster& cluster, int peer, int tag, int32_t credits) {
  return cluster.Send(peer, tag, &credits, sizeof(credits));
}

absl::StatusOr<int32_t> ReceiveCredit(Cluster& cluster, int peer, int tag) {
  int32_t credits = 0;
  absl::StatusOr<size_t> bytes = cluster.Probe(peer, tag);
  if (!bytes.ok()) return bytes.status();
  if (*bytes != sizeof(credits)) return absl::DataLossError(absl::StrCat("malformed credit message from rank ", peer));
  if (absl::Status received = cluster.ReceiveInto(peer, tag, &credits, sizeof(credits)); !received.ok()) {
    return received;
  }
  return credits;
}

// Streams the blocks while credits allow, as long as `has_block(i)` says there is a block i (it may wait for it).
// Returns the status to report in the Reply; `closed` is set when the receiver closed the stream before the end.
// `sent_block(i, bytes)` (may be empty) runs after block i went out.
absl::Status SendBlocks(Cluster& cluster, int peer, StreamTags tags, const BlockInput& input,
                        const std::function<absl::StatusOr<bool>(size_t)>& has_block, bool* closed,
                        const std::function<void(size_t, size_t)>& sent_block = nullptr) {
  int32_t credits = 0;
  for (size_t i = 0;; ++i) {
    absl::StatusOr<bool> more = has_block(i);
    if (!more.ok()) return more.status();
    if (!*more) break;
    while (credits == 0) {
      absl::StatusOr<int32_t> more = ReceiveCredit(cluster, peer, tags.credits);
      if (!more.ok()) return more.status();
      if (*more == kClosed) {
        *closed = true;
        return absl::CancelledError("the receiver closed the stream");
      }
      credits += *more;
    }
    absl::StatusOr<PinnedBlock> block = input.Pin(i);
    if (!block.ok()) return block.status();
    const size_t bytes = block->view.used_bytes();
    if (bytes == 0) return absl::InternalError("empty block");
    absl::Status sent = cluster.Send(peer, tags.data, block->view.data(), bytes);
    if (!sent.ok()) return sent;
    --credits;
    if (sent_block) sent_block(i, bytes);
  }
  return absl::OkStatus();
}

// The end of a stream: an empty message, the Reply, and the credits still coming until the receiver closes.
absl::Status EndStream(Cluster& cluster, int peer, StreamTags tags, const absl::Status& status, bool closed) {
  if (absl::Status end = cluster.Send(peer, tags.data, nullptr, 0); !end.ok()) return end;
  if (absl::Status reply = cluster.Send(peer, tags.data, EncodeReply(status, 0)); !reply.ok()) return reply;
  while (!closed) {  // drain, so that no credit is left unread under this tag
    absl::StatusOr<int32_t> credit = ReceiveCredit(cluster, peer, tags.credits);
    if (!credit.ok()) return credit.status();
    closed = *credit == kClosed;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status SendBlockStream(Cluster& cluster, int peer, StreamTags tags, const BlockInput& input, size_t block_count) {
  bool closed = false;
  const absl::Status status = SendBlocks(
      cluster, peer, tags, input, [block_count](size_t i) -> absl::StatusOr<bool> { return i < block_count; }, &closed);
  if (absl::IsUnavailable(status)) return status;  // the transport itself failed: nothing more can be said
  return EndStream(cluster, peer, tags, status, closed);
}

void GrowingRelations::Appended() {
  std::lock_guard<std::mutex> lock(mutex_);
  changed_.notify_all();
}

void GrowingRelations::Finish(absl::Status status) {
  std::lock_guard<std::mutex> lock(mutex_);
  finished_ = true;
  status_ = std::move(status);
  changed_.notify_all();
}

absl::StatusOr<bool> GrowingRelations::WaitForBlock(const TemporaryRelation& relation, size_t block) {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    // Read under the mutex: Appended and Finish notify under it, so an append is never missed.
    if (finished_ && !status_.ok()) return status_;
    if (relation.block_count() > block) return true;
    if (finished_) return false;
    changed_.wait(lock);
  }
}

absl::Status SendGrowingStream(Cluster& cluster, int peer, StreamTags tags,
                               const std::shared_ptr<TemporaryRelation>& relation, GrowingRelations& growing,
                               StreamTotals* sent) {
  bool closed = false;
  const absl::Status status = SendBlocks(
      cluster, peer, tags, BlockInput::FromRelation(relation),
      [&](size_t i) { return growing.WaitForBlock(*relation, i); }, &closed,
      [&](size_t i, size_t bytes) {
        sent->blocks += 1;
        sent->bytes += static_cast<int64_t>(bytes);
        relation->ReleaseBlock(static_cast<uint32_t>(i));  // sent: this rank no longer needs it
      });
  if (absl::IsUnavailable(status)) return status;
  return EndStream(cluster, peer, tags, status, closed);
}

absl::Status SendFailedStream(Cluster& cluster, int peer, StreamTags tags, const absl::Status& failure) {
  return EndStream(cluster, peer, tags, failure, /*closed=*/false);
}

absl::Status SendRelation(Cluster& cluster, int peer, int tag, std::shared_ptr<TemporaryRelation> relation,
                          int64_t* bytes) {
  const uint64_t blocks = relation->block_count();
  const BlockInput input = BlockInput::FromRelation(std::move(relation));
  if (absl::Status sent = cluster.Send(peer, tag, &blocks, sizeof(blocks)); !sent.ok()) return sent;
  // Up to kBroadcastWindow blocks on their way at once (pinned until their sends finish): the rank takes them
  // as fast as it can, without a hand-over per block.
  constexpr size_t kBroadcastWindow = 8;
  std::deque<std::pair<PinnedBlock, Cluster::PendingSend>> in_flight;
  const auto finish_oldest = [&]() -> absl::Status {
    const absl::Status finished = cluster.FinishSend(in_flight.front().second);
    if (finished.ok()) *bytes += static_cast<int64_t>(in_flight.front().second.bytes);
    in_flight.pop_front();
    return finished;
  };
  absl::Status status;
  for (uint64_t i = 0; i < blocks && status.ok(); ++i) {
    absl::StatusOr<PinnedBlock> block = input.Pin(i);
    if (!block.ok()) {
      status = block.status();
      break;
    }
    if (in_flight.size() >= kBroadcastWindow) status = finish_oldest();
    if (!status.ok()) break;
    absl::StatusOr<Cluster::PendingSend> send =
        cluster.StartSend(peer, tag, block->view.data(), block->view.used_bytes());
    if (!send.ok()) {
      status = send.status();
      break;
    }
    in_flight.emplace_back(*std::move(block), *send);
  }
  // Every started send finishes before its block is unpinned.
  while (!in_flight.empty()) {
    const absl::Status finished = finish_oldest();
    if (status.ok()) status = finished;
  }
  return status;
}

absl::Status ReceiveRelation(Cluster& cluster, int peer, int tag, TemporaryRelation* out) {
  uint64_t blocks = 0;
  absl::StatusOr<size_t> bytes = cluster.Probe(peer, tag);
  if (!bytes.ok()) return bytes.status();
  if (*bytes == sizeof(int32_t)) return absl::CancelledError("the receiver closed the stream");  // abandoned
  if (*bytes != sizeof(blocks)) return absl::DataLossError("malformed broadcast input from the master");
  TESSERA_RETURN_IF_ERROR(cluster.ReceiveInto(peer, tag, &blocks, sizeof(blocks)));
  for (uint64_t i = 0; i < blocks; ++i) {
    bytes = cluster.Probe(peer, tag);
    if (!bytes.ok()) return bytes.status();
    TESSERA_ASSIGN_OR_RETURN(void* memory, out->pool()->Allocate(MemoryKind::kTemporaryBlock, *bytes));
    absl::Status received = cluster.ReceiveInto(peer, tag, memory, *bytes);
    if (received.ok()) received = BlockView::Validate(memory, *bytes, out->schema().size());
    if (!received.ok()) {
      out->pool()->Free(memory, MemoryKind::kTemporaryBlock, *bytes);
      return received;
    }
    out->AdoptBlock(memory, *bytes);
  }
  return absl::OkStatus();
}

absl::StatusOr<int> StartBlockStream(Cluster& cluster, int peer, const std::string& request) {
  const int tag = cluster.NewRequestTag();
  if (absl::Status sent = cluster.Send(peer, kCommandTag, EncodeCommand({CommandKind::kRunFragment, tag, request}));
      !sent.ok()) {
    return absl::Status(sent.code(), absl::StrCat("rank ", peer, ": ", sent.message()));
  }
  return tag;
}

absl::Status ReceiveBlockStream(Cluster& cluster, int peer, StreamTags tags, TemporaryRelation* out,
                                const std::atomic<bool>* cancelled, StreamTotals* totals,
                                const std::function<void()>& appended) {
  const int tag = tags.data;
  auto named = [peer](const absl::Status& status) {
    if (status.ok() || absl::StartsWith(status.message(), "rank ")) return status;
    return absl::Status(status.code(), absl::StrCat("rank ", peer, ": ", status.message()));
  };
  if (absl::Status sent = SendCredit(cluster, peer, tags.credits, kInitialCredits); !sent.ok()) return named(sent);
  const size_t columns = out->schema().size();
  absl::Status failure;
  while (true) {
    if (failure.ok() && cancelled != nullptr && cancelled->load(std::memory_order_relaxed)) {
      failure = absl::CancelledError("cancelled");
      if (absl::Status sent = SendCredit(cluster, peer, tags.credits, kClosed); !sent.ok()) return named(sent);
    }
    absl::StatusOr<size_t> bytes = cluster.Probe(peer, tag);
    if (!bytes.ok()) return named(bytes.status());
    if (*bytes == 0) break;
    absl::StatusOr<void*> memory = out->pool()->Allocate(MemoryKind::kTemporaryBlock, *bytes);
    if (!memory.ok()) {
      // Still take the message off the wire, then close the stream.
      std::string discard(*bytes, '\0');
      if (absl::Status received = cluster.ReceiveInto(peer, tag, discard.data(), discard.size()); !received.ok()) {
        return named(received);
      }
      if (failure.ok()) {
        failure = memory.status();
        if (absl::Status sent = SendCredit(cluster, peer, tags.credits, kClosed); !sent.ok()) return named(sent);
      }
      continue;
    }
    if (absl::Status received = cluster.ReceiveInto(peer, tag, *memory, *bytes); !received.ok()) {
      out->pool()->Free(*memory, MemoryKind::kTemporaryBlock, *bytes);
      return named(received);
    }
    absl::Status valid = BlockView::Validate(*memory, *bytes, columns);
    if (!valid.ok() || !failure.ok()) {
      out->pool()->Free(*memory, MemoryKind::kTemporaryBlock, *bytes);
      if (failure.ok()) {
        failure = absl::DataLossError(absl::StrCat("malformed block received: ", valid.message()));
        if (absl::Status sent = SendCredit(cluster, peer, tags.credits, kClosed); !sent.ok()) return named(sent);
      }
      continue;
    }
    out->AdoptBlock(*memory, *bytes);
    totals->blocks += 1;
    totals->bytes += static_cast<int64_t>(*bytes);
    if (appended) appended();
    if (failure.ok()) {
      if (absl::Status sent = SendCredit(cluster, peer, tags.credits, 1); !sent.ok()) return named(sent);
    }
  }
  if (absl::Status received = cluster.ReceiveInto(peer, tag, nullptr, 0); !received.ok()) return named(received);
  absl::StatusOr<std::string> reply = cluster.Receive(peer, tag);
  if (!reply.ok()) return named(reply.status());
  if (failure.ok()) {
    if (absl::Status sent = SendCredit(cluster, peer, tags.credits, kClosed); !sent.ok()) return named(sent);
  }
  if (!failure.ok()) return named(failure);
  return DecodeReply(*reply, peer).status();
}

}  // namespace tessera::distributed
