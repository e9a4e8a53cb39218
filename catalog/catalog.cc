#include "catalog/catalog.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "catalog/catalog_file.pb.h"
#include "catalog/stored_type.h"
#include "common/byte_stream.h"
#include "common/file_io.h"
#include "common/hash.h"
#include "common/status_macros.h"

namespace tessera {
namespace {

constexpr char kCatalogFileName[] = "catalog.tcat";
constexpr char kLockFileName[] = "LOCK";
constexpr uint32_t kCatalogMagic = 0x54435431;  // "TCT1"
// The body of version 5 is a catalog_file::CatalogFile message (catalog/catalog_file.proto). Versions 1 to 4 are
// the hand-written body ReadTable reads: version 2 added each table's partition column
// (TableDescriptor::partition_column), version 3 the deleted rows of each segment, version 4 each table's
// stale_rows. Older files still open (version 1: tables replicated; 1 and 2: no deletions; 1 to 3: statistics taken
// as exact) and are rewritten as the current version at the next commit.
constexpr uint32_t kCatalogVersion = 5;
constexpr uint32_t kOldestCatalogVersion = 1;
constexpr uint32_t kLastHandWrittenVersion = 4;

bool ParseValue(const std::string& bytes, Value* value) {
  absl::StatusOr<Value> parsed = Value::Deserialize(bytes);
  if (!parsed.ok()) return false;
  *value = *std::move(parsed);
  return true;
}

// The type a file names, its parameters checked as for a CREATE TABLE: a corrupt file must not make an invalid type
// (and no column has the NULL type).
bool MakeStoredType(uint32_t id, uint32_t precision, uint32_t scale, uint32_t length, Type* type) {
  if (id == static_cast<uint32_t>(TypeId::kNull)) return false;
  const bool is_string = id == static_cast<uint32_t>(TypeId::kChar) || id == static_cast<uint32_t>(TypeId::kVarchar);
  absl::StatusOr<Type> made = TypeFromStoredParts(id, is_string ? length : precision, scale);
  if (!made.ok()) return false;
  *type = *made;
  return true;
}

// --- Versions 1 to 4: read only ---

bool ReadValue(ByteReader& in, Value* value) {
  std::string bytes;
  return in.GetString(&bytes) && ParseValue(bytes, value);
}

bool ReadType(ByteReader& in, Type* type) {
  uint8_t id, precision, scale;
  uint32_t length;
  if (!in.GetU8(&id) || !in.GetU8(&precision) || !in.GetU8(&scale) || !in.GetU32(&length)) return false;
  return MakeStoredType(id, precision, scale, length, type);
}

bool ReadTable(ByteReader& in, uint32_t version, TableDescriptor* table) {
  uint32_t column_count, segment_count;
  if (!in.GetU32(&table->table_id) || !in.GetString(&table->name) || !in.GetU32(&table->block_size_bytes) ||
      !in.GetI64(&table->row_count) || !in.GetU32(&column_count)) {
    return false;
  }
  for (uint32_t i = 0; i < column_count; ++i) {
    ColumnSchema column;
    ColumnStatistics stats;
    uint8_t not_null, has_default;
    if (!in.GetString(&column.name) || !ReadType(in, &column.type) || !in.GetU8(&not_null) || !in.GetU8(&has_default)) {
      return false;
    }
    column.not_null = not_null != 0;
    if (has_default) {
      Value value;
      if (!ReadValue(in, &value)) return false;
      column.default_value = std::move(value);
    }
    std::string sketch;
    if (!in.GetI64(&stats.null_count) || !ReadValue(in, &stats.min) || !ReadValue(in, &stats.max) ||
        !in.GetString(&sketch) || !stats.distinct.Deserialize(sketch)) {
      return false;
    }
    table->columns.push_back(std::move(column));
    table->statistics.push_back(std::move(stats));
  }
  if (!in.GetU32(&segment_count)) return false;
  for (uint32_t s = 0; s < segment_count; ++s) {
    SegmentDescriptor segment;
    uint32_t block_count;
    if (!in.GetU64(&segment.segment_id) || !in.GetI64(&segment.row_count) || !in.GetU32(&block_count)) return false;
    if (block_count > in.remaining() / 16) return false;  // 16 bytes per block: the count cannot be right
    segment.blocks.resize(block_count);
    for (BlockLocation& block : segment.blocks) {
      if (!in.GetU64(&block.file_offset) || !in.GetU32(&block.bytes) || !in.GetU32(&block.rows)) return false;
    }
    uint32_t with_deletions = 0;
    if (version >= 3 && !in.GetU32(&with_deletions)) return false;
    for (uint32_t i = 0; i < with_deletions; ++i) {
      uint32_t block;
      std::string bytes;
      if (!in.GetU32(&block) || block >= block_count || !in.GetString(&bytes)) return false;
      std::optional<DeletedRows> rows = DeletedRows::Deserialize(bytes, segment.blocks[block].rows);
      if (!rows.has_value()) return false;
      segment.deleted.resize(block_count);
      segment.deleted[block] = std::make_shared<const DeletedRows>(*std::move(rows));
    }
    table->segments.push_back(std::move(segment));
  }
  if (version >= 2) {
    uint32_t partition;
    if (!in.GetU32(&partition) || partition > column_count) return false;
    table->partition_column = static_cast<int>(partition) - 1;
  }
  if (version >= 4 && (!in.GetI64(&table->stale_rows) || table->stale_rows < 0)) return false;
  return true;
}

// --- Version 5: catalog_file::CatalogFile ---

void WriteTable(const TableDescriptor& table, catalog_file::Table* out) {
  out->set_table_id(table.table_id);
  out->set_name(table.name);
  out->set_block_size_bytes(table.block_size_bytes);
  out->set_row_count(table.row_count);
  for (size_t i = 0; i < table.columns.size(); ++i) {
    const ColumnSchema& column = table.columns[i];
    catalog_file::Column* stored = out->add_columns();
    stored->set_name(column.name);
    stored->mutable_type()->set_id(static_cast<uint32_t>(column.type.id()));
    stored->mutable_type()->set_precision(static_cast<uint32_t>(column.type.precision()));
    stored->mutable_type()->set_scale(static_cast<uint32_t>(column.type.scale()));
    stored->mutable_type()->set_length(column.type.length());
    stored->set_not_null(column.not_null);
    if (column.default_value.has_value()) stored->set_default_value(column.default_value->Serialize());
    const ColumnStatistics& stats = table.statistics[i];
    catalog_file::ColumnStatistics* stored_stats = stored->mutable_statistics();
    stored_stats->set_null_count(stats.null_count);
    stored_stats->set_min(stats.min.Serialize());
    stored_stats->set_max(stats.max.Serialize());
    stored_stats->set_distinct_sketch(stats.distinct.Serialize());
  }
  for (const SegmentDescriptor& segment : table.segments) {
    catalog_file::Segment* stored = out->add_segments();
    stored->set_segment_id(segment.segment_id);
    stored->set_row_count(segment.row_count);
    for (const BlockLocation& block : segment.blocks) {
      catalog_file::BlockLocation* location = stored->add_blocks();
      location->set_file_offset(block.file_offset);
      location->set_bytes(block.bytes);
      location->set_rows(block.rows);
    }
    for (size_t b = 0; b < segment.deleted.size(); ++b) {
      if (segment.deleted[b] == nullptr) continue;
      catalog_file::DeletedRows* deleted = stored->add_deleted();
      deleted->set_block(static_cast<uint32_t>(b));
      deleted->set_rows(segment.deleted[b]->Serialize());
    }
  }
  if (table.partition_column >= 0) out->set_partition_column(static_cast<uint32_t>(table.partition_column));
  out->set_stale_rows(table.stale_rows);
}

// False when the message names what a table cannot be (an invalid type, a deletion bitmap of a block that is not
// there, a partition column out of range, ...), as ReadTable for the older versions.
bool ReadTable(const catalog_file::Table& stored, TableDescriptor* table) {
  table->table_id = stored.table_id();
  table->name = stored.name();
  table->block_size_bytes = stored.block_size_bytes();
  table->row_count = stored.row_count();
  for (const catalog_file::Column& stored_column : stored.columns()) {
    ColumnSchema column;
    ColumnStatistics stats;
    column.name = stored_column.name();
    const catalog_file::Type& type = stored_column.type();
    if (!MakeStoredType(type.id(), type.precision(), type.scale(), type.length(), &column.type)) return false;
    column.not_null = stored_column.not_null();
    if (stored_column.has_default_value()) {
      Value value;
      if (!ParseValue(stored_column.default_value(), &value)) return false;
      column.default_value = std::move(value);
    }
    const catalog_file::ColumnStatistics& stored_stats = stored_column.statistics();
    stats.null_count = stored_stats.null_count();
    if (!ParseValue(stored_stats.min(), &stats.min) || !ParseValue(stored_stats.max(), &stats.max) ||
        !stats.distinct.Deserialize(stored_stats.distinct_sketch())) {
      return false;
    }
    table->columns.push_back(std::move(column));
    table->statistics.push_back(std::move(stats));
  }
  for (const catalog_file::Segment& stored_segment : stored.segments()) {
    SegmentDescriptor segment;
    segment.segment_id = stored_segment.segment_id();
    segment.row_count = stored_segment.row_count();
    segment.blocks.reserve(stored_segment.blocks_size());
    for (const catalog_file::BlockLocation& block : stored_segment.blocks()) {
      segment.blocks.push_back(BlockLocation{block.file_offset(), block.bytes(), block.rows()});
    }
    for (const catalog_file::DeletedRows& deleted : stored_segment.deleted()) {
      if (deleted.block() >= segment.blocks.size()) return false;
      std::optional<DeletedRows> rows = DeletedRows::Deserialize(deleted.rows(), segment.blocks[deleted.block()].rows);
      if (!rows.has_value()) return false;
      segment.deleted.resize(segment.blocks.size());
      segment.deleted[deleted.block()] = std::make_shared<const DeletedRows>(*std::move(rows));
    }
    table->segments.push_back(std::move(segment));
  }
  if (stored.has_partition_column()) {
    if (stored.partition_column() >= table->columns.size()) return false;
    table->partition_column = static_cast<int>(stored.partition_column());
  }
  table->stale_rows = stored.stale_rows();
  return table->stale_rows >= 0;
}

}  // namespace

int64_t TableDescriptor::BlockCount() const {
  int64_t count = 0;
  for (const SegmentDescriptor& segment : segments) count += static_cast<int64_t>(segment.blocks.size());
  return count;
}

absl::StatusOr<std::unique_ptr<Catalog>> Catalog::Open(const std::string& data_directory, bool sync) {
  TESSERA_RETURN_IF_ERROR(CreateDirectories(data_directory));
  std::unique_ptr<Catalog> catalog(new Catalog(data_directory, sync));
  TESSERA_RETURN_IF_ERROR(catalog->LockDirectory());
  TESSERA_RETURN_IF_ERROR(catalog->Load());
  return catalog;
}

Catalog::~Catalog() {
  if (lock_fd_ >= 0) close(lock_fd_);  // releases the flock; the file stays (removing it would race a new opener)
}

absl::Status Catalog::LockDirectory() {
  const std::string path = absl::StrCat(data_directory_, "/", kLockFileName);
  lock_fd_ = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd_ < 0) {
    return absl::FailedPreconditionError(absl::StrCat("cannot open lock file '", path, "': ", std::strerror(errno)));
  }
  if (flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    char holder[32] = {};
    const ssize_t got = pread(lock_fd_, holder, sizeof(holder) - 1, 0);
    std::string pid = got > 0 ? std::string(holder, static_cast<size_t>(got)) : "";
    while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
    close(lock_fd_);
    lock_fd_ = -1;
    if (error != EWOULDBLOCK) {
      return absl::FailedPreconditionError(absl::StrCat("cannot lock '", path, "': ", std::strerror(error)));
    }
    return absl::FailedPreconditionError(
        absl::StrCat("data directory '", data_directory_, "' is in use by another server or shell",
                     pid.empty() ? "" : absl::StrCat(" (pid ", pid, ")"), "; lock file '", path, "'"));
  }
  const std::string pid = absl::StrCat(getpid(), "\n");
  if (ftruncate(lock_fd_, 0) != 0 || pwrite(lock_fd_, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    return absl::InternalError(absl::StrCat("cannot write lock file '", path, "': ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status Catalog::Load() {
  std::string path = absl::StrCat(data_directory_, "/", kCatalogFileName);
  if (!std::filesystem::exists(path)) return absl::OkStatus();
  TESSERA_ASSIGN_OR_RETURN(std::string contents, ReadFileToString(path));
  auto corrupt = [&](std::string_view why) {
    return absl::DataLossError(absl::StrCat("catalog file '", path, "' is corrupt: ", std::string(why)));
  };
  if (contents.size() < 8) return corrupt("too short");
  uint64_t stored_checksum;
  std::memcpy(&stored_checksum, contents.data() + contents.size() - 8, 8);
  std::string_view body(contents.data(), contents.size() - 8);
  if (HashBytes(body.data(), body.size()) != stored_checksum) return corrupt("checksum mismatch");
  ByteReader in(body);
  uint32_t magic, version, table_count, view_count;
  absl::MutexLock lock(&mutex_);
  if (!in.GetU32(&magic) || magic != kCatalogMagic) return corrupt("bad magic number");
  if (!in.GetU32(&version) || version < kOldestCatalogVersion || version > kCatalogVersion) {
    return corrupt("unsupported version");
  }
  if (version > kLastHandWrittenVersion) {
    catalog_file::CatalogFile file;
    const std::string_view message = body.substr(8);
    if (!file.ParseFromArray(message.data(), static_cast<int>(message.size()))) return corrupt("unreadable message");
    next_table_id_ = file.next_table_id();
    next_segment_id_ = file.next_segment_id();
    for (const catalog_file::Table& stored : file.tables()) {
      auto table = std::make_shared<TableDescriptor>();
      if (!ReadTable(stored, table.get())) return corrupt(absl::StrCat("invalid table entry '", stored.name(), "'"));
      tables_[table->name] = std::move(table);
    }
    for (const catalog_file::View& stored : file.views()) {
      auto view = std::make_shared<ViewDescriptor>();
      view->name = stored.name();
      view->query_text = stored.query_text();
      view->column_names.assign(stored.column_names().begin(), stored.column_names().end());
      views_[view->name] = std::move(view);
    }
    return absl::OkStatus();
  }
  if (!in.GetU32(&next_table_id_) || !in.GetU64(&next_segment_id_) || !in.GetU32(&table_count)) {
    return corrupt("truncated header");
  }
  for (uint32_t i = 0; i < table_count; ++i) {
    auto table = std::make_shared<TableDescriptor>();
    if (!ReadTable(in, version, table.get())) return corrupt("truncated table entry");
    tables_[table->name] = std::move(table);
  }
  if (!in.GetU32(&view_count)) return corrupt("truncated view list");
  for (uint32_t i = 0; i < view_count; ++i) {
    auto view = std::make_shared<ViewDescriptor>();
    uint32_t column_count;
    if (!in.GetString(&view->name) || !in.GetString(&view->query_text) || !in.GetU32(&column_count)) {
      return corrupt("truncated view entry");
    }
    if (column_count > in.remaining() / 4) return corrupt("truncated view entry");  // 4+ bytes per name
    view->column_names.resize(column_count);
    for (std::string& name : view->column_names) {
      if (!in.GetString(&name)) return corrupt("truncated view entry");
    }
    views_[view->name] = std::move(view);
  }
  if (!in.AtEnd()) return corrupt("trailing bytes");
  return absl::OkStatus();
}

absl::Status Catalog::PersistLocked() {
  catalog_file::CatalogFile file;
  file.set_next_table_id(next_table_id_);
  file.set_next_segment_id(next_segment_id_);
  std::vector<const TableDescriptor*> tables;
  for (const auto& [name, table] : tables_) tables.push_back(table.get());
  std::sort(tables.begin(), tables.end(), [](auto* a, auto* b) { return a->name < b->name; });
  for (const TableDescriptor* table : tables) WriteTable(*table, file.add_tables());
  std::vector<const ViewDescriptor*> views;
  for (const auto& [name, view] : views_) views.push_back(view.get());
  std::sort(views.begin(), views.end(), [](auto* a, auto* b) { return a->name < b->name; });
  for (const ViewDescriptor* view : views) {
    catalog_file::View* stored = file.add_views();
    stored->set_name(view->name);
    stored->set_query_text(view->query_text);
    for (const std::string& column : view->column_names) stored->add_column_names(column);
  }
  ByteWriter out;
  out.PutU32(kCatalogMagic);
  out.PutU32(kCatalogVersion);
  std::string contents = out.Release();
  if (!file.AppendToString(&contents)) return absl::InternalError("cannot encode the catalog");
  uint64_t checksum = HashBytes(contents.data(), contents.size());
  contents.append(reinterpret_cast<const char*>(&checksum), sizeof(checksum));
  return WriteFileAtomically(absl::StrCat(data_directory_, "/", kCatalogFileName), contents, sync_);
}

absl::Status Catalog::NotFoundWithHint(const std::string& kind, const std::string& name) const {
  if (kind == "table" && views_.contains(name)) {
    return absl::InvalidArgumentError(absl::StrCat("'", name, "' is a view, not a table"));
  }
  if (kind == "view" && tables_.contains(name)) {
    return absl::InvalidArgumentError(absl::StrCat("'", name, "' is a table, not a view"));
  }
  std::vector<std::string> candidates;
  for (const auto& [table_name, table] : tables_) {
    if (table_name != name) candidates.push_back(table_name);
  }
  for (const auto& [view_name, view] : views_) {
    if (view_name != name) candidates.push_back(view_name);
  }
  std::string hint = ClosestName(name, candidates);
  return absl::NotFoundError(absl::StrCat(kind, " '", name, "' does not exist",
                                          hint.empty() ? "" : absl::StrCat("; did you mean '", hint, "'?")));
}

absl::StatusOr<std::shared_ptr<const TableDescriptor>> Catalog::GetTable(const std::string& name) const {
  absl::ReaderMutexLock lock(&mutex_);
  auto it = tables_.find(name);
  if (it == tables_.end()) return NotFoundWithHint("table", name);
  return it->second;
}

absl::StatusOr<std::shared_ptr<const ViewDescriptor>> Catalog::GetView(const std::string& name) const {
  absl::ReaderMutexLock lock(&mutex_);
  auto it = views_.find(name);
  if (it == views_.end()) return NotFoundWithHint("view", name);
  return it->second;
}

bool Catalog::HasTable(const std::string& name) const {
  absl::ReaderMutexLock lock(&mutex_);
  return tables_.contains(name);
}

bool Catalog::HasView(const std::string& name) const {
  absl::ReaderMutexLock lock(&mutex_);
  return views_.contains(name);
}

std::vector<std::shared_ptr<const TableDescriptor>> Catalog::ListTables() const {
  absl::ReaderMutexLock lock(&mutex_);
  std::vector<std::shared_ptr<const TableDescriptor>> result;
  for (const auto& [name, table] : tables_) result.push_back(table);
  std::sort(result.begin(), result.end(), [](const auto& a, const auto& b) { return a->name < b->name; });
  return result;
}

std::vector<std::shared_ptr<const ViewDescriptor>> Catalog::ListViews() const {
  absl::ReaderMutexLock lock(&mutex_);
  std::vector<std::shared_ptr<const ViewDescriptor>> result;
  for (const auto& [name, view] : views_) result.push_back(view);
  std::sort(result.begin(), result.end(), [](const auto& a, const auto& b) { return a->name < b->name; });
  return result;
}

absl::Status Catalog::CreateTable(TableDescriptor table) {
  absl::MutexLock lock(&mutex_);
  if (tables_.contains(table.name) || views_.contains(table.name)) {
    return absl::AlreadyExistsError(absl::StrCat("relation '", table.name, "' already exists"));
  }
  table.table_id = next_table_id_++;
  table.segments.clear();
  table.row_count = 0;
  table.statistics.assign(table.columns.size(), ColumnStatistics{});
  std::string name = table.name;
  tables_[name] = std::make_shared<const TableDescriptor>(std::move(table));
  absl::Status status = PersistLocked();
  if (!status.ok()) tables_.erase(name);
  return status;
}

absl::StatusOr<std::shared_ptr<const TableDescriptor>> Catalog::DropTable(const std::string& name) {
  absl::MutexLock lock(&mutex_);
  auto it = tables_.find(name);
  if (it == tables_.end()) return NotFoundWithHint("table", name);
  std::shared_ptr<const TableDescriptor> dropped = it->second;
  tables_.erase(it);
  absl::Status status = PersistLocked();
  if (!status.ok()) {
    tables_[name] = dropped;
    return status;
  }
  return dropped;
}

absl::Status Catalog::CreateView(ViewDescriptor view, bool or_replace) {
  absl::MutexLock lock(&mutex_);
  if (tables_.contains(view.name) || (!or_replace && views_.contains(view.name))) {
    return absl::AlreadyExistsError(absl::StrCat("relation '", view.name, "' already exists"));
  }
  std::string name = view.name;
  std::shared_ptr<const ViewDescriptor> previous;
  if (auto it = views_.find(name); it != views_.end()) previous = it->second;
  views_[name] = std::make_shared<const ViewDescriptor>(std::move(view));
  absl::Status status = PersistLocked();
  if (!status.ok()) {
    if (previous) views_[name] = previous;
    else views_.erase(name);
  }
  return status;
}

absl::Status Catalog::DropView(const std::string& name) {
  absl::MutexLock lock(&mutex_);
  auto it = views_.find(name);
  if (it == views_.end()) return NotFoundWithHint("view", name);
  std::shared_ptr<const ViewDescriptor> dropped = it->second;
  views_.erase(it);
  absl::Status status = PersistLocked();
  if (!status.ok()) views_[name] = dropped;
  return status;
}

absl::Status Catalog::ReplaceTable(const std::shared_ptr<const TableDescriptor>& expected,
                                   std::shared_ptr<const TableDescriptor> updated) {
  absl::MutexLock lock(&mutex_);
  auto it = tables_.find(expected->name);
  if (it == tables_.end() || it->second != expected) {
    return absl::AbortedError(absl::StrCat("table '", expected->name, "' was changed or dropped concurrently"));
  }
  it->second = std::move(updated);
  absl::Status status = PersistLocked();
  if (!status.ok()) tables_[expected->name] = expected;
  return status;
}

uint64_t Catalog::AllocateSegmentId() {
  absl::MutexLock lock(&mutex_);
  return next_segment_id_++;
}

std::vector<uint64_t> Catalog::LiveSegmentIds() const {
  absl::ReaderMutexLock lock(&mutex_);
  std::vector<uint64_t> ids;
  for (const auto& [name, table] : tables_) {
    for (const SegmentDescriptor& segment : table->segments) ids.push_back(segment.segment_id);
  }
  return ids;
}

}  // namespace tessera
