#pragma once
// A table's blocks from one rank to another, as MPI messages with credit-based flow control. Blocks travel as
// the storage module's block bytes (storage/block_layout.h: position independent, the same in memory and in block
// files), one block per message, and are checked with BlockView::Validate when they arrive.
//
// The stream of one request tag (rank_protocol.h, kSendTable):
//   receiver -> sender   the kSendTable command, then credits: int32 messages, each allowing that many more blocks
//                        (kInitialCredits at first, one more for every block received), and finally -1 (closed);
//   sender -> receiver   one message per block while it holds credits, then an empty message, then a Reply
//                        (rank_protocol.h) with the sender's status; it then drains credits until it reads -1.
// So a receiver never holds more than kInitialCredits unread blocks of one sender, and a receiver that stops
// early (an error, a cancelled query) closes the stream and the sender stops at its next credit.
//
// Threading: each function runs on one thread for its whole stream (a worker, or a rank's service thread); the
// two ends of one stream are the only receivers of its tag.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "catalog/catalog.h"
#include "distributed/cluster.h"
#include "relational_operators/temporary_relation.h"
#include "storage/storage_manager.h"

namespace tessera::distributed {

inline constexpr int32_t kInitialCredits = 4;

// Sender: streams every block of `table` (the snapshot of this rank's part) to `peer` on `tag`, then the end of
// the stream and `table`'s status. Errors of the transport are returned; a block that cannot be read ends the
// stream with that error in its Reply.
absl::Status SendTableBlocks(Cluster& cluster, int peer, int tag, const std::shared_ptr<const TableDescriptor>& table,
                             StorageManager* storage);

struct StreamTotals {
  int64_t blocks = 0;
  int64_t bytes = 0;
};

// Receiver: asks rank `peer` for its part of table `table_name` and appends every block to `out` (whose schema is
// the table's), adding to `totals`. `cancelled` (may be null) is checked between blocks. Errors name the rank.
absl::Status ReceiveTableBlocks(Cluster& cluster, int peer, const std::string& table_name, TemporaryRelation* out,
                                const std::atomic<bool>* cancelled, StreamTotals* totals);

}  // namespace tessera::distributed
