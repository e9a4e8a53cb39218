#include "catalog/catalog.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <tuple>

#include "common/byte_stream.h"
#include "common/hash.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

class CatalogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ =
        std::filesystem::temp_directory_path() / ("tessera_catalog_test_" + std::to_string(::getpid()) + "_" +
                                                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(directory_);
  }
  void TearDown() override { std::filesystem::remove_all(directory_); }

  static TableDescriptor Orders() {
    TableDescriptor table;
    table.name = "orders";
    table.columns = {{"o_orderkey", Type::BigInt(), true, {}},
                     {"o_totalprice", Type::Decimal(15, 2), true, {}},
                     {"o_comment", Type::Varchar(79), false, Value::String("none", Type::Varchar(79))}};
    return table;
  }

  std::string directory_;
};

TEST_F(CatalogTest, PersistsTablesSegmentsAndStatistics) {
  {
    auto catalog = Catalog::Open(directory_, false);
    ASSERT_TRUE(catalog.ok());
    ASSERT_TRUE((*catalog)->CreateTable(Orders()).ok());
    auto table = (*catalog)->GetTable("orders");
    ASSERT_TRUE(table.ok());
    auto updated = std::make_shared<TableDescriptor>(**table);
    SegmentDescriptor segment;
    segment.segment_id = (*catalog)->AllocateSegmentId();
    segment.blocks = {{0, 1000, 10}, {4096, 2000, 20}};
    segment.row_count = 30;
    updated->segments.push_back(segment);
    updated->row_count = 30;
    updated->statistics[0].UpdateMinMax(Value::BigInt(-5));
    updated->statistics[0].UpdateMinMax(Value::BigInt(77));
    updated->statistics[1].null_count = 0;
    updated->statistics[2].null_count = 3;
    for (int i = 0; i < 1000; ++i) updated->statistics[0].distinct.AddHash(HashInt64(i));
    ASSERT_TRUE((*catalog)->ReplaceTable(*table, updated).ok());
    // A second writer that started from the old snapshot loses.
    EXPECT_EQ((*catalog)->ReplaceTable(*table, updated).code(), absl::StatusCode::kAborted);
  }
  auto reopened = Catalog::Open(directory_, false);
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  auto table = (*reopened)->GetTable("orders");
  ASSERT_TRUE(table.ok());
  EXPECT_EQ((*table)->row_count, 30);
  ASSERT_EQ((*table)->segments.size(), 1u);
  EXPECT_EQ((*table)->segments[0].blocks[1].file_offset, 4096u);
  EXPECT_EQ((*table)->columns[1].type, Type::Decimal(15, 2));
  EXPECT_TRUE((*table)->columns[0].not_null);
  ASSERT_TRUE((*table)->columns[2].default_value.has_value());
  EXPECT_EQ((*table)->columns[2].default_value->ToString(), "none");
  EXPECT_EQ((*table)->statistics[0].min.ToString(), "-5");
  EXPECT_EQ((*table)->statistics[0].max.ToString(), "77");
  EXPECT_EQ((*table)->statistics[2].null_count, 3);
  EXPECT_NEAR((*table)->statistics[0].DistinctEstimate(1000000), 1000, 60);
  EXPECT_EQ((*reopened)->LiveSegmentIds(), std::vector<uint64_t>{(*table)->segments[0].segment_id});
  EXPECT_GT((*reopened)->AllocateSegmentId(), (*table)->segments[0].segment_id);
}

TEST_F(CatalogTest, UnknownNamesSuggestTheClosestTable) {
  auto catalog = Catalog::Open(directory_, false);
  ASSERT_TRUE(catalog.ok());
  ASSERT_TRUE((*catalog)->CreateTable(Orders()).ok());
  auto missing = (*catalog)->GetTable("ordres");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(), "table 'ordres' does not exist; did you mean 'orders'?");
  EXPECT_EQ((*catalog)->GetTable("zzzzzz").status().message(), "table 'zzzzzz' does not exist");
  EXPECT_EQ((*catalog)->CreateTable(Orders()).code(), absl::StatusCode::kAlreadyExists);
}

TEST_F(CatalogTest, DetectsACorruptCatalogFile) {
  {
    auto catalog = Catalog::Open(directory_, false);
    ASSERT_TRUE(catalog.ok());
    ASSERT_TRUE((*catalog)->CreateTable(Orders()).ok());
  }
  std::string path = directory_ + "/catalog.tcat";
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  file.seekp(20);
  file.put('\x7f');
  file.close();
  auto reopened = Catalog::Open(directory_, false);
  EXPECT_EQ(reopened.status().code(), absl::StatusCode::kDataLoss);
}

// Counts and type parameters read from a catalog file are checked before anything is sized or built from them
// (tests/fuzz/catalog_fuzzer.cc found a block count of 4 billion making the reader allocate 64 GB). The files here
// carry a valid checksum, as a bug in a writer would produce.
TEST_F(CatalogTest, ImpossibleCountsAndTypeParametersAreDataLossNotAllocations) {
  std::filesystem::create_directories(directory_);
  auto open_with_body = [&](ByteWriter body) {
    std::string contents = body.Release();
    const uint64_t checksum = HashBytes(contents.data(), contents.size());
    contents.append(reinterpret_cast<const char*>(&checksum), sizeof(checksum));
    std::ofstream(directory_ + "/catalog.tcat", std::ios::binary | std::ios::trunc) << contents;
    return Catalog::Open(directory_, false).status();
  };
  auto header = [](uint32_t tables) {
    ByteWriter out;
    out.PutU32(0x54435431);  // magic "TCT1"
    out.PutU32(1);           // version
    out.PutU32(2);           // next table id
    out.PutU64(2);           // next segment id
    out.PutU32(tables);
    return out;
  };
  auto table_start = [](ByteWriter& out, uint32_t columns) {
    out.PutU32(1);
    out.PutString("t");
    out.PutU32(kDefaultBlockSizeBytes);
    out.PutI64(0);
    out.PutU32(columns);
  };

  ByteWriter huge_block_count = header(1);
  table_start(huge_block_count, 0);
  huge_block_count.PutU32(1);           // one segment
  huge_block_count.PutU64(1);           // its id
  huge_block_count.PutI64(0);           // rows
  huge_block_count.PutU32(0xFFFFFFF0);  // blocks, none of which follow
  absl::Status status = open_with_body(std::move(huge_block_count));
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;

  ByteWriter huge_view = header(0);
  huge_view.PutU32(1);  // one view
  huge_view.PutString("v");
  huge_view.PutString("SELECT 1");
  huge_view.PutU32(0xFFFFFFF0);  // column names, none of which follow
  status = open_with_body(std::move(huge_view));
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;

  for (auto [id, precision, scale, length] : {std::tuple<uint8_t, uint8_t, uint8_t, uint32_t>{5, 200, 0, 0},
                                              {5, 10, 11, 0},
                                              {5, 0, 0, 0},
                                              {6, 0, 0, 0},
                                              {7, 0, 0, 0xFFFFFFFF}}) {
    ByteWriter bad_type = header(1);
    table_start(bad_type, 1);
    bad_type.PutString("c");
    bad_type.PutU8(id);
    bad_type.PutU8(precision);
    bad_type.PutU8(scale);
    bad_type.PutU32(length);
    status = open_with_body(std::move(bad_type));
    EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << int{id} << " " << int{precision} << " " << status;
  }
}

TEST_F(CatalogTest, PersistsThePartitionColumn) {
  {
    auto catalog = Catalog::Open(directory_, false);
    ASSERT_TRUE(catalog.ok());
    TableDescriptor partitioned = Orders();
    partitioned.partition_column = 0;
    ASSERT_TRUE((*catalog)->CreateTable(partitioned).ok());
    TableDescriptor replicated = Orders();
    replicated.name = "replicated";
    ASSERT_TRUE((*catalog)->CreateTable(replicated).ok());
  }
  auto catalog = Catalog::Open(directory_, false);
  ASSERT_TRUE(catalog.ok());
  EXPECT_EQ((*(*catalog)->GetTable("orders"))->partition_column, 0);
  EXPECT_EQ((*(*catalog)->GetTable("replicated"))->partition_column, -1);
}

// A version-4 file (the last hand-written body, before the protobuf message of version 5) opens with every field,
// and the next commit rewrites it as version 5 with the same contents.
TEST_F(CatalogTest, AVersion4FileOpensAndIsRewrittenAsVersion5) {
  std::filesystem::create_directories(directory_);
  DeletedRows deleted(100);
  deleted.Delete(3);
  deleted.Delete(99);
  ByteWriter body;
  body.PutU32(0x54435431);  // magic "TCT1"
  body.PutU32(4);           // version
  body.PutU32(8);           // next table id
  body.PutU64(12);          // next segment id
  body.PutU32(1);           // tables
  body.PutU32(7);           // table id
  body.PutString("t");
  body.PutU32(kDefaultBlockSizeBytes);
  body.PutI64(198);  // live rows
  body.PutU32(2);    // columns
  for (const char* name : {"k", "v"}) {
    const bool is_key = std::string(name) == "k";
    body.PutString(name);
    body.PutU8(static_cast<uint8_t>(is_key ? TypeId::kInteger : TypeId::kVarchar));
    body.PutU8(0);
    body.PutU8(0);
    body.PutU32(is_key ? 0 : 12);
    body.PutU8(is_key ? 1 : 0);  // NOT NULL
    body.PutU8(is_key ? 0 : 1);  // DEFAULT
    if (!is_key) body.PutString(Value::String("none", Type::Varchar(12)).Serialize());
    body.PutI64(is_key ? 0 : 5);  // nulls
    body.PutString((is_key ? Value::Integer(1) : Value::String("a", Type::Varchar(12))).Serialize());
    body.PutString((is_key ? Value::Integer(200) : Value::String("z", Type::Varchar(12))).Serialize());
    body.PutString(DistinctSketch().Serialize());
  }
  body.PutU32(1);   // segments
  body.PutU64(11);  // segment id
  body.PutI64(200);
  body.PutU32(2);  // blocks
  for (uint64_t offset : {0, 4096}) {
    body.PutU64(offset);
    body.PutU32(4096);
    body.PutU32(100);
  }
  body.PutU32(1);  // blocks with deleted rows
  body.PutU32(1);
  body.PutString(deleted.Serialize());
  body.PutU32(1);  // partition column + 1
  body.PutI64(2);  // stale rows
  body.PutU32(1);  // views
  body.PutString("w");
  body.PutString("SELECT k FROM t");
  body.PutU32(1);
  body.PutString("k");
  std::string contents = body.Release();
  const uint64_t checksum = HashBytes(contents.data(), contents.size());
  contents.append(reinterpret_cast<const char*>(&checksum), sizeof(checksum));
  const std::string path = directory_ + "/catalog.tcat";
  std::ofstream(path, std::ios::binary | std::ios::trunc) << contents;

  auto file_version = [&path] {
    std::ifstream file(path, std::ios::binary);
    uint32_t header[2] = {0, 0};
    file.read(reinterpret_cast<char*>(header), sizeof(header));
    return header[1];
  };
  auto expect_contents = [](const Catalog& catalog) {
    absl::StatusOr<std::shared_ptr<const TableDescriptor>> table = catalog.GetTable("t");
    ASSERT_TRUE(table.ok()) << table.status();
    const TableDescriptor& t = **table;
    EXPECT_EQ(t.table_id, 7u);
    EXPECT_EQ(t.row_count, 198);
    ASSERT_EQ(t.columns.size(), 2u);
    EXPECT_EQ(t.columns[0].type, Type::Integer());
    EXPECT_TRUE(t.columns[0].not_null);
    EXPECT_EQ(t.columns[1].type, Type::Varchar(12));
    ASSERT_TRUE(t.columns[1].default_value.has_value());
    EXPECT_EQ(t.columns[1].default_value->ToString(), "none");
    EXPECT_EQ(t.statistics[0].max.ToString(), "200");
    EXPECT_EQ(t.statistics[1].null_count, 5);
    ASSERT_EQ(t.segments.size(), 1u);
    EXPECT_EQ(t.segments[0].segment_id, 11u);
    ASSERT_EQ(t.segments[0].blocks.size(), 2u);
    EXPECT_EQ(t.segments[0].blocks[1].file_offset, 4096u);
    EXPECT_EQ(t.segments[0].DeletedIn(0), nullptr);
    ASSERT_NE(t.segments[0].DeletedIn(1), nullptr);
    EXPECT_EQ(t.segments[0].DeletedIn(1)->deleted_count(), 2u);
    EXPECT_TRUE(t.segments[0].DeletedIn(1)->IsDeleted(99));
    EXPECT_EQ(t.partition_column, 0);
    EXPECT_EQ(t.stale_rows, 2);
    absl::StatusOr<std::shared_ptr<const ViewDescriptor>> view = catalog.GetView("w");
    ASSERT_TRUE(view.ok()) << view.status();
    EXPECT_EQ((*view)->query_text, "SELECT k FROM t");
    EXPECT_EQ((*view)->column_names, std::vector<std::string>{"k"});
  };
  {
    auto catalog = Catalog::Open(directory_, false);
    ASSERT_TRUE(catalog.ok()) << catalog.status();
    expect_contents(**catalog);
    EXPECT_EQ(file_version(), 4u);  // opening alone rewrites nothing
    ASSERT_TRUE((*catalog)->CreateTable(Orders()).ok());
  }
  EXPECT_EQ(file_version(), 5u);
  auto catalog = Catalog::Open(directory_, false);
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  expect_contents(**catalog);
  EXPECT_EQ((*(*catalog)->GetTable("orders"))->table_id, 8u);  // the next table id came through too
}

// A version-5 file whose message does not parse is DataLoss, as a corrupt older body is.
TEST_F(CatalogTest, AnUnreadableVersion5MessageIsDataLoss) {
  std::filesystem::create_directories(directory_);
  ByteWriter body;
  body.PutU32(0x54435431);
  body.PutU32(5);
  body.PutU32(0xFFFFFFFF);  // not a protobuf message: a field number 0 tag
  std::string contents = body.Release();
  const uint64_t checksum = HashBytes(contents.data(), contents.size());
  contents.append(reinterpret_cast<const char*>(&checksum), sizeof(checksum));
  std::ofstream(directory_ + "/catalog.tcat", std::ios::binary | std::ios::trunc) << contents;
  absl::Status status = Catalog::Open(directory_, false).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
  EXPECT_NE(status.message().find("unreadable message"), absl::string_view::npos) << status;
}

TEST(DistinctSketchTest, EstimatesWithinAFewPercentAndMerges) {
  DistinctSketch a, b;
  for (uint64_t i = 0; i < 100000; ++i) a.AddHash(HashInt64(i));
  for (uint64_t i = 50000; i < 150000; ++i) b.AddHash(HashInt64(i));
  EXPECT_NEAR(a.Estimate(), 100000, 5000);
  a.Merge(b);
  EXPECT_NEAR(a.Estimate(), 150000, 7500);
  DistinctSketch copy;
  ASSERT_TRUE(copy.Deserialize(a.Serialize()));
  EXPECT_EQ(copy.Estimate(), a.Estimate());
}

TEST(ClosestNameTest, OnlySuggestsPlausibleTypos) {
  EXPECT_EQ(ClosestName("lineitme", {"lineitem", "orders"}), "lineitem");
  EXPECT_EQ(ClosestName("x", {"lineitem", "orders"}), "");
}

TEST_F(CatalogTest, ASecondOpenerOfTheDirectoryIsRefusedUntilTheFirstCloses) {
  auto first = Catalog::Open(directory_, false);
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = Catalog::Open(directory_, false);
  ASSERT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(
      second.status().message().find("is in use by another server or shell (pid " + std::to_string(getpid()) + ")"),
      std::string::npos)
      << second.status();
  first->reset();  // closing releases the lock: reopening sequentially keeps working
  auto third = Catalog::Open(directory_, false);
  EXPECT_TRUE(third.ok()) << third.status();
}

// Another process holds the directory: the refusal names its pid; once it dies (even killed) the lock is gone.
TEST_F(CatalogTest, AnotherProcessHoldingTheDirectoryIsNamedAndItsDeathReleasesIt) {
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto held = Catalog::Open(directory_, false);
    const char byte = held.ok() ? 'y' : 'n';
    (void)!write(ready[1], &byte, 1);
    while (true) pause();
  }
  close(ready[1]);
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  close(ready[0]);
  EXPECT_EQ(byte, 'y');
  auto refused = Catalog::Open(directory_, false);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("(pid " + std::to_string(child) + ")"), std::string::npos)
      << refused.status();
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  auto reopened = Catalog::Open(directory_, false);
  EXPECT_TRUE(reopened.ok()) << reopened.status();
}

}  // namespace
}  // namespace tessera
