#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "distributed/block_stream.h"
#include "distributed/partitioning.h"
#include "distributed/repartition_operator.h"
#include "gtest/gtest.h"
#include "relational_operators/block_input.h"
#include "storage/block_builder.h"
#include "storage/topology.h"

namespace tessera::distributed {
namespace {

// The hash split places every row on the rank COPY places the same key on (so split rows meet a PARTITION BY
// HASH table's rows), keeps every row exactly once, and NULL keys go to rank 0.
TEST(HashSplitTest, RowsGoWhereCopyPlacesTheirKey) {
  std::unique_ptr<Topology> topology = MakeFakeTopology(1, 1);
  BufferPool pool(64 << 20, topology.get());
  constexpr int kRanks = 3;
  const std::vector<ColumnSchema> schema = {{"k", Type::BigInt(), true, {}}, {"s", Type::Char(10), false, {}}};
  std::vector<std::shared_ptr<TemporaryRelation>> parts;
  std::vector<TemporaryRelation*> targets;
  for (int rank = 0; rank < kRanks; ++rank) {
    parts.push_back(std::make_shared<TemporaryRelation>(schema, &pool));
    targets.push_back(parts.back().get());
  }
  constexpr uint32_t kRows = 1000;
  std::vector<std::string> texts;
  for (uint32_t i = 0; i < kRows; ++i) texts.push_back("key" + std::to_string(i));
  Batch batch;
  batch.columns.emplace_back(Type::BigInt());
  batch.columns.emplace_back(Type::Char(10));
  batch.columns[0].ResetOwned(kRows);
  batch.columns[1].ResetOwned(kRows);
  for (uint32_t i = 0; i < kRows; ++i) {
    batch.columns[0].mutable_values<int64_t>()[i] = static_cast<int64_t>(i) * 7919 - 50000;
    batch.columns[1].mutable_strings()[i] = texts[i];
  }
  batch.columns[0].SetNull(5);
  batch.size = kRows;

  for (int key_column : {0, 1}) {
    for (auto& part : parts) part = std::make_shared<TemporaryRelation>(schema, &pool);
    for (int rank = 0; rank < kRanks; ++rank) targets[rank] = parts[rank].get();
    HashSplitter splitter(targets, key_column);
    ASSERT_TRUE(splitter.Add(batch, nullptr, schema.size()).ok());
    ASSERT_TRUE(splitter.Flush().ok());
    EXPECT_EQ(splitter.rows(), kRows);
    int64_t total = 0;
    for (int rank = 0; rank < kRanks; ++rank) {
      total += parts[rank]->row_count();
      EXPECT_GT(parts[rank]->row_count(), 0) << rank;
      for (uint32_t b = 0; b < parts[rank]->block_count(); ++b) {
        const BlockView block = parts[rank]->block(b);
        for (uint32_t row = 0; row < block.row_count(); ++row) {
          const Value key = block.GetValue(key_column, row, schema[key_column].type);
          const bool is_null = key.is_null();
          const std::string text = is_null ? "" : key.ToString();
          EXPECT_EQ(*RankOfKeyText(text, is_null, schema[key_column].type, kRanks), rank) << text;
        }
      }
    }
    EXPECT_EQ(total, kRows);
  }
}

// A rank streams the parts of its split while it is still writing them (GrowingRelations): a sender waiting for a
// block is woken when it is appended, learns the end once the writer finishes, and a writer that failed ends the
// wait with its error, also for blocks already appended.
TEST(HashSplitTest, SendersWaitForGrowingPartsUntilTheirWriterFinishes) {
  std::unique_ptr<Topology> topology = MakeFakeTopology(1, 1);
  BufferPool pool(64 << 20, topology.get());
  const std::vector<ColumnSchema> schema = {{"k", Type::BigInt(), false, {}}};
  constexpr int kBlocks = 5;
  for (const bool fails : {false, true}) {
    auto part = std::make_shared<TemporaryRelation>(schema, &pool);
    GrowingRelations growing;
    std::atomic<int> seen{0};
    absl::Status ended;
    std::thread sender([&] {
      for (size_t block = 0;; ++block) {
        absl::StatusOr<bool> more = growing.WaitForBlock(*part, block);
        if (!more.ok()) {
          ended = more.status();
          return;
        }
        if (!*more) return;
        seen.store(static_cast<int>(block) + 1);
      }
    });
    for (int b = 0; b < kBlocks; ++b) {
      BlockBuilder builder(schema, 1 << 16);
      ASSERT_TRUE(part->AppendValueRow(builder, {Value::BigInt(b)}).ok());
      ASSERT_TRUE(part->AppendBlock(builder).ok());
      growing.Appended();
      // The sender takes each block as it appears (it never waits for the end to see it).
      for (int i = 0; i < 6000 && seen.load() < b + 1; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      ASSERT_EQ(seen.load(), b + 1);
    }
    growing.Finish(fails ? absl::DataLossError("the fragment failed") : absl::OkStatus());
    sender.join();
    EXPECT_EQ(seen.load(), kBlocks);
    EXPECT_EQ(ended.ok(), !fails) << ended;
    if (fails) {
      EXPECT_FALSE(growing.WaitForBlock(*part, 0).ok());  // the error, though block 0 exists
    } else {
      absl::StatusOr<bool> last = growing.WaitForBlock(*part, kBlocks - 1);
      EXPECT_TRUE(last.ok() && *last);
    }
  }
}

TEST(HashSplitTest, ShuffleRequestsRoundTrip) {
  const ShuffleRequest request{{123, 124}, 2, std::string("fragment\0bytes", 14)};
  absl::StatusOr<ShuffleRequest> decoded = DecodeShuffleRequest(EncodeShuffleRequest(request));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->tags.data, 123);
  EXPECT_EQ(decoded->tags.credits, 124);
  EXPECT_EQ(decoded->key_column, 2);
  EXPECT_EQ(decoded->fragment, request.fragment);
  const std::string encoded = EncodeShuffleRequest(request);
  for (size_t cut = 0; cut < encoded.size(); ++cut) {
    EXPECT_EQ(DecodeShuffleRequest(encoded.substr(0, cut)).status().code(), absl::StatusCode::kDataLoss) << cut;
  }
}

// kRelease from the master (a query that ended before its gather sent the fragment): the partition is dropped
// whether it arrived before the release or after it; the others stay for their fragments.
TEST(HashSplitTest, ReleasedPartitionsAreDroppedWheneverTheyArrive) {
  std::unique_ptr<Topology> topology = MakeFakeTopology(1, 1);
  BufferPool pool(16 << 20, topology.get());
  const std::vector<ColumnSchema> schema = {{"k", Type::BigInt(), false, {}}};
  ExchangeResults results;
  results.Put(10, std::make_shared<TemporaryRelation>(schema, &pool));
  results.Put(11, std::make_shared<TemporaryRelation>(schema, &pool));
  EXPECT_EQ(results.size(), 2u);
  results.Release(10);  // arrived first
  EXPECT_EQ(results.size(), 1u);
  results.Release(12);  // its split has not ended yet
  results.Put(12, std::make_shared<TemporaryRelation>(schema, &pool));
  EXPECT_EQ(results.size(), 1u);
  EXPECT_TRUE(results.Take(11, std::chrono::milliseconds(1)).ok());
  EXPECT_EQ(results.Take(10, std::chrono::milliseconds(1)).status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(results.Take(12, std::chrono::milliseconds(1)).status().code(), absl::StatusCode::kDeadlineExceeded);
  // A later split with a released tag (after the tags cycled) is kept: the release was used up.
  results.Put(12, std::make_shared<TemporaryRelation>(schema, &pool));
  EXPECT_TRUE(results.Take(12, std::chrono::milliseconds(1)).ok());
}

}  // namespace
}  // namespace tessera::distributed
