#include "distributed/repartition_operator.h"

#include <thread>

#include "absl/strings/str_cat.h"
#include "common/byte_stream.h"
#include "common/status_macros.h"
#include "distributed/exchange_outcome.h"
#include "distributed/partitioning.h"
#include "distributed/rank_protocol.h"

namespace tessera::distributed {

std::string EncodeShuffleRequest(const ShuffleRequest& request) {
  ByteWriter out;
  out.PutU32(static_cast<uint32_t>(request.tags.data));
  out.PutU32(static_cast<uint32_t>(request.tags.credits));
  out.PutU32(static_cast<uint32_t>(request.key_column));
  out.PutString(request.fragment);
  return out.Release();
}

absl::StatusOr<ShuffleRequest> DecodeShuffleRequest(std::string_view text) {
  ByteReader in(text);
  uint32_t data = 0, credits = 0, key = 0;
  ShuffleRequest request;
  if (!in.GetU32(&data) || !in.GetU32(&credits) || !in.GetU32(&key) || !in.GetString(&request.fragment) ||
      !in.AtEnd() || data > INT32_MAX || credits > INT32_MAX || key > INT32_MAX) {
    return absl::DataLossError("malformed hash-split request from the master");
  }
  request.tags = {static_cast<int>(data), static_cast<int>(credits)};
  request.key_column = static_cast<int>(key);
  return request;
}

HashSplitter::HashSplitter(const std::vector<TemporaryRelation*>& parts, int key_column)
    : key_column_(key_column), selections_(parts.size()) {
  for (TemporaryRelation* part : parts) writers_.push_back(std::make_unique<VectorBlockWriter>(part));
  for (SelectionVector& selection : selections_) selection.rows.resize(kVectorSize);
}

absl::Status HashSplitter::Add(const Batch& batch, const SelectionVector* selection, size_t width) {
  const int ranks = static_cast<int>(writers_.size());
  for (SelectionVector& part : selections_) part.count = 0;
  const ColumnVector& keys = batch.columns[key_column_];
  const uint32_t count = selection != nullptr ? selection->count : batch.size;
  const auto place = [&](auto rank_of) {
    for (uint32_t i = 0; i < count; ++i) {
      const uint32_t row = selection != nullptr ? selection->rows[i] : i;
      SelectionVector& part = selections_[keys.IsNull(row) ? 0 : rank_of(row)];
      part.rows[part.count++] = row;
    }
  };
  switch (keys.type().id()) {
    case TypeId::kInteger:
      place([&](uint32_t row) { return RankOfIntegerKey(keys.values<int32_t>()[row], ranks); });
      break;
    case TypeId::kBigInt:
      place([&](uint32_t row) { return RankOfIntegerKey(keys.values<int64_t>()[row], ranks); });
      break;
    case TypeId::kChar:
    case TypeId::kVarchar: {
      const bool is_char = keys.type().id() == TypeId::kChar;
      place([&](uint32_t row) { return RankOfStringKey(keys.strings()[row], is_char, ranks); });
      break;
    }
    default:
      return absl::InternalError(absl::StrCat("a hash split cannot place rows by a ", keys.type().ToString(), " key"));
  }
  columns_.clear();
  for (size_t c = 0; c < width; ++c) columns_.push_back(&batch.columns[c]);
  for (int rank = 0; rank < ranks; ++rank) {
    if (selections_[rank].count == 0) continue;
    TESSERA_RETURN_IF_ERROR(writers_[rank]->Append(columns_, &selections_[rank], batch.size));
  }
  rows_ += count;
  return absl::OkStatus();
}

absl::Status HashSplitter::Flush() {
  for (auto& writer : writers_) TESSERA_RETURN_IF_ERROR(writer->Flush());
  return absl::OkStatus();
}

absl::Status ExchangeParts(Cluster& cluster, StreamTags tags,
                           const std::vector<std::shared_ptr<TemporaryRelation>>& parts, TemporaryRelation* out,
                           const std::atomic<bool>* cancelled, StreamTotals* sent, StreamTotals* received,
                           GrowingRelations* growing) {
  const int ranks = cluster.size();
  std::vector<absl::Status> send_status(ranks);
  std::vector<StreamTotals> sent_to(ranks);
  std::vector<std::thread> senders;
  for (int peer = 0; peer < ranks; ++peer) {
    if (peer == cluster.rank()) continue;
    const std::shared_ptr<TemporaryRelation>& part = parts[peer];
    if (growing != nullptr) {
      senders.emplace_back([&cluster, &send_status, &sent_to, growing, tags, peer, part] {
        send_status[peer] = SendGrowingStream(cluster, peer, tags, part, *growing, &sent_to[peer]);
      });
      continue;
    }
    for (uint32_t b = 0; b < part->block_count(); ++b) {
      sent->blocks += 1;
      sent->bytes += static_cast<int64_t>(part->block(b).used_bytes());
    }
    senders.emplace_back([&cluster, &send_status, tags, peer, part] {
      send_status[peer] = SendBlockStream(cluster, peer, tags, BlockInput::FromRelation(part), part->block_count());
    });
  }
  // Receives from each rank in turn: a rank's sender waits for credits, which only this thread grants.
  absl::Status status;
  for (int peer = 0; peer < ranks; ++peer) {
    if (peer == cluster.rank()) continue;
    absl::Status one = ReceiveBlockStream(cluster, peer, tags, out, cancelled, received);
    // A peer that cancelled its side (the master's query ended early) is a consequence; another error is the cause.
    if (status.ok() || (absl::IsCancelled(status) && !one.ok() && !absl::IsCancelled(one))) status = one;
  }
  for (std::thread& sender : senders) sender.join();
  for (const StreamTotals& to : sent_to) {
    sent->blocks += to.blocks;
    sent->bytes += to.bytes;
  }
  for (int peer = 0; peer < ranks && status.ok(); ++peer) {
    if (!send_status[peer].ok()) {
      status = absl::Status(send_status[peer].code(), absl::StrCat("rank ", peer, ": ", send_status[peer].message()));
    }
  }
  return status;
}

void FailExchange(Cluster& cluster, StreamTags tags, const absl::Status& failure, BufferPool* pool) {
  std::vector<std::thread> senders;
  for (int peer = 0; peer < cluster.size(); ++peer) {
    if (peer == cluster.rank()) continue;
    senders.emplace_back(
        [&cluster, tags, peer, failure] { SendFailedStream(cluster, peer, tags, failure).IgnoreError(); });
  }
  TemporaryRelation discarded({}, pool);
  const std::atomic<bool> closed{true};
  StreamTotals received;
  for (int peer = 0; peer < cluster.size(); ++peer) {
    if (peer != cluster.rank()) ReceiveBlockStream(cluster, peer, tags, &discarded, &closed, &received).IgnoreError();
  }
  for (std::thread& sender : senders) sender.join();
}

void ExchangeResults::DropAbandoned(std::chrono::steady_clock::time_point now) {
  absl::erase_if(entries_, [&](const auto& entry) { return now - entry.second.stored > kAbandoned; });
  absl::erase_if(released_, [&](const auto& entry) { return now - entry.second > kAbandoned; });
}

void ExchangeResults::Put(int tag, absl::StatusOr<std::shared_ptr<TemporaryRelation>> result) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto now = std::chrono::steady_clock::now();
    DropAbandoned(now);
    if (released_.erase(tag) > 0) return;  // `result` is freed here, outside the map
    entries_.insert_or_assign(tag, Entry{std::move(result), now});
  }
  changed_.notify_all();
}

void ExchangeResults::Release(int tag) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto now = std::chrono::steady_clock::now();
  DropAbandoned(now);
  if (entries_.erase(tag) == 0) released_.insert_or_assign(tag, now);
}

size_t ExchangeResults::size() {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

PartitionRelease::~PartitionRelease() {
  for (int rank = 0; rank < cluster_->size(); ++rank) {
    if (!shuffled_[rank] || read_[rank]) continue;
    // A rank that cannot be told (it died) holds nothing worth freeing.
    cluster_->Send(rank, kCommandTag, EncodeCommand({CommandKind::kRelease, tag_, ""})).IgnoreError();
  }
}

absl::StatusOr<std::shared_ptr<TemporaryRelation>> ExchangeResults::Take(int tag, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!changed_.wait_for(lock, timeout, [&] { return entries_.contains(tag); })) {
    return absl::DeadlineExceededError(
        absl::StrCat("the hash-split exchange (tag ", tag, ") did not end within ", timeout.count(), " ms"));
  }
  auto entry = entries_.extract(tag);
  return std::move(entry.mapped().result);
}

class RepartitionOperator::SplitWorkOrder : public WorkOrder {
 public:
  SplitWorkOrder(RepartitionOperator* op, uint32_t block, int node)
      : WorkOrder(op->index(), node), op_(op), block_(block) {
    if (!op->input_.is_table()) DeclareConsumedBlock(0, block);
  }

  absl::Status Execute(const WorkOrderContext& context) override {
    absl::Status status = Split(*op_->SplitterOf(context.worker_index));
    op_->splits_finished_.fetch_add(1);
    return status;
  }

 private:
  absl::Status Split(HashSplitter& splitter) {
    TESSERA_ASSIGN_OR_RETURN(PinnedBlock block, op_->input_.Pin(block_));
    rows_in_ = block.view.row_count();
    BlockScanner scanner(op_->scan_);
    scanner.SetBlockRows(block.deleted, block.ordinal);
    if (scanner.CanSkip(block.view)) return absl::OkStatus();
    const int64_t before = splitter.rows();
    const size_t width = op_->parts_[0]->schema().size();
    while (true) {
      TESSERA_ASSIGN_OR_RETURN(bool more, scanner.Next(block.view));
      if (!more) break;
      if (scanner.selected_count() == 0) continue;
      TESSERA_RETURN_IF_ERROR(splitter.Add(scanner.batch(), scanner.selection(), width));
    }
    rows_out_ = splitter.rows() - before;
    op_->rows_split_.fetch_add(rows_out_);
    return absl::OkStatus();
  }

  RepartitionOperator* const op_;
  const uint32_t block_;
};

void RepartitionOperator::Exchange() {
  TemporaryRelation* out = parts_[cluster_->rank()].get();
  absl::Status status;
  for (auto& [worker, splitter] : splitters_) {
    if (status.ok()) status = splitter->Flush();
  }
  splitters_.clear();
  const int64_t before = out->row_count();
  if (status.ok()) {
    status = ExchangeParts(*cluster_, tags_, parts_, out, &stop_, &sent_, &received_);
  } else {
    FailExchange(*cluster_, tags_, status, out->pool());
  }
  // The parts sent are no longer needed.
  for (int rank = 0; rank < cluster_->size(); ++rank) {
    if (rank != cluster_->rank()) parts_[rank] = std::make_shared<TemporaryRelation>(out->schema(), out->pool());
  }
  rows_received_ = out->row_count() - before;
  exchange_status_ = std::move(status);
  exchange_ended_.store(true);
  std::lock_guard<std::mutex> lock(wake_up_mutex_);
  if (wake_up_) wake_up_();
}

RepartitionOperator::RepartitionOperator(std::string fragment, BlockInput input, ScanSpec scan, int key_column,
                                         std::vector<ColumnSchema> schema, StreamTags tags, Cluster* cluster,
                                         BufferPool* pool, std::shared_ptr<PartitionRelease> release,
                                         std::vector<std::shared_ptr<PartitionRelease>> reads)
    : RelationalOperator("hash split"),
      request_(std::move(fragment)),
      input_(std::move(input)),
      scan_(std::move(scan)),
      key_column_(key_column),
      cluster_(cluster),
      tags_(tags),
      release_(std::move(release)),
      reads_(std::move(reads)) {
  scan_.Prepare();
  for (int rank = 0; rank < cluster->size(); ++rank)
    parts_.push_back(std::make_shared<TemporaryRelation>(schema, pool));
}

RepartitionOperator::~RepartitionOperator() {
  if (exchanger_.joinable()) {
    stop_.store(true);
    exchanger_.join();
    return;
  }
  if (!started_) return;
  FailExchange(*cluster_, tags_, absl::CancelledError("the master's query ended before its hash-split exchange"),
               parts_[0]->pool());
}

void RepartitionOperator::SetWakeUp(std::function<void()> wake_up) {
  std::lock_guard<std::mutex> lock(wake_up_mutex_);
  wake_up_ = std::move(wake_up);
}

absl::Status RepartitionOperator::ExternalFailure() const {
  return exchange_ended_.load() ? exchange_status_ : absl::OkStatus();
}

HashSplitter* RepartitionOperator::SplitterOf(int worker) {
  std::lock_guard<std::mutex> lock(splitters_mutex_);
  std::unique_ptr<HashSplitter>& splitter = splitters_[worker];
  if (splitter == nullptr) {
    std::vector<TemporaryRelation*> parts;
    for (const auto& part : parts_) parts.push_back(part.get());
    splitter = std::make_unique<HashSplitter>(parts, key_column_);
  }
  return splitter.get();
}

void RepartitionOperator::Start() {
  if (started_) return;
  // Every rank starts its part now, while this rank's workers compute the master's.
  started_ = true;
  const std::string request = EncodeShuffleRequest({tags_, key_column_, request_});
  for (int peer = 0; peer < cluster_->size(); ++peer) {
    if (peer == cluster_->rank()) continue;
    // A rank that cannot be told fails the exchange work order when it receives from that rank.
    if (!cluster_->Send(peer, kCommandTag, EncodeCommand({CommandKind::kShuffle, tags_.data, request})).ok()) {
      continue;
    }
    if (release_ != nullptr) release_->Shuffled(peer);
    // The rank's split takes the partitions its fragment reads, even when the fragment cannot run.
    for (const auto& read : reads_) read->Read(peer);
  }
}

bool RepartitionOperator::GetWorkOrders(std::vector<std::unique_ptr<WorkOrder>>* out) {
  if (!activated_) {
    activated_ = true;
    Start();  // a no-op once the query started it
    if (input_.is_table()) {
      for (size_t b = 0; b < input_.table_block_count(); ++b) {
        out->push_back(std::make_unique<SplitWorkOrder>(this, static_cast<uint32_t>(b), input_.HomeNode(b)));
      }
      splits_issued_ += static_cast<int64_t>(input_.table_block_count());
      input_done_ = true;  // base tables are complete from the start
    }
  }
  while (!pending_.empty()) {
    out->push_back(std::make_unique<SplitWorkOrder>(this, pending_.front(), -1));
    pending_.pop_front();
    ++splits_issued_;
  }
  if (input_done_ && !exchange_started_ && splits_finished_.load() == splits_issued_ && out->empty()) {
    // Every split work order has finished (their splitters are idle): the exchange's wake-up asks again.
    exchange_started_ = true;
    exchanger_ = std::thread([this] { Exchange(); });
  }
  if (!exchange_ended_.load()) return false;
  if (!outcome_issued_) {
    outcome_issued_ = true;
    out->push_back(std::make_unique<ExchangeOutcomeWorkOrder>(index(), exchange_status_, rows_received_));
  }
  return true;
}

std::string RepartitionOperator::RuntimeDetail() const {
  return absl::StrCat("split ", rows_split_.load(), " rows; sent ", sent_.bytes, " bytes, received ", received_.bytes,
                      " bytes");
}

}  // namespace tessera::distributed
