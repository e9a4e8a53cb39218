#include "storage/storage_manager.h"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/file_io.h"
#include "common/status_macros.h"
#include "glog/logging.h"

namespace tessera {
namespace {

constexpr char kSegmentPrefix[] = "segment_";
constexpr char kSegmentSuffix[] = ".blk";
constexpr uint64_t kFileAlignment = 4096;

uint64_t AlignFile(uint64_t n) { return (n + kFileAlignment - 1) & ~(kFileAlignment - 1); }

}  // namespace

BlockHandle& BlockHandle::operator=(BlockHandle&& other) noexcept {
  if (this != &other) {
    Reset();
    manager_ = other.manager_;
    packed_id_ = other.packed_id_;
    data_ = other.data_;
    home_node_ = other.home_node_;
    other.manager_ = nullptr;
    other.data_ = nullptr;
  }
  return *this;
}

void BlockHandle::Reset() {
  if (manager_ != nullptr) manager_->Unpin(packed_id_);
  manager_ = nullptr;
  data_ = nullptr;
}

PendingBlock& PendingBlock::operator=(PendingBlock&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) pool_->Free(data_, MemoryKind::kBaseBlock, allocated_bytes_);
    pool_ = other.pool_;
    data_ = other.data_;
    allocated_bytes_ = other.allocated_bytes_;
    home_node_ = other.home_node_;
    location_ = other.location_;
    other.data_ = nullptr;
  }
  return *this;
}

PendingBlock::~PendingBlock() {
  if (data_ != nullptr) pool_->Free(data_, MemoryKind::kBaseBlock, allocated_bytes_);
}

StorageManager::StorageManager(std::string segment_directory, BufferPool* pool, const Topology* topology,
                               bool sync_writes)
    : segment_directory_(std::move(segment_directory)),
      pool_(pool),
      topology_(topology),
      sync_writes_(sync_writes),
      striper_(*topology) {}

absl::StatusOr<std::unique_ptr<StorageManager>> StorageManager::Open(const std::string& data_directory,
                                                                     const Catalog& catalog, BufferPool* pool,
                                                                     const Topology* topology, bool sync_writes) {
  std::string segment_directory = data_directory + "/segments";
  TESSERA_RETURN_IF_ERROR(CreateDirectories(segment_directory));
  std::unique_ptr<StorageManager> manager(new StorageManager(segment_directory, pool, topology, sync_writes));

  std::vector<uint64_t> live = catalog.LiveSegmentIds();
  absl::flat_hash_map<uint64_t, bool> is_live;
  for (uint64_t id : live) is_live[id] = true;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(segment_directory, error)) {
    std::string name = entry.path().filename().string();
    uint64_t id = 0;
    bool is_segment = name.starts_with(kSegmentPrefix) && name.ends_with(kSegmentSuffix) &&
                      absl::SimpleAtoi(name.substr(sizeof(kSegmentPrefix) - 1, name.size() - sizeof(kSegmentPrefix) +
                                                                                   1 - (sizeof(kSegmentSuffix) - 1)),
                                       &id);
    if (!is_segment || !is_live.contains(id)) {
      LOG(INFO) << "removing leftover file of an interrupted load: " << entry.path();
      std::filesystem::remove(entry.path(), error);
    }
  }
  for (const auto& table : catalog.ListTables()) {
    for (const SegmentDescriptor& segment : table->segments) {
      if (!std::filesystem::exists(manager->SegmentPath(segment.segment_id))) {
        return absl::DataLossError(absl::StrCat("segment file '", manager->SegmentPath(segment.segment_id),
                                                "' of table '", table->name, "' is missing"));
      }
      manager->RegisterOnDiskSegment(segment, table->columns);
    }
  }
  pool->SetEvictor(manager.get());
  return manager;
}

StorageManager::~StorageManager() {
  pool_->SetEvictor(nullptr);
  absl::MutexLock lock(&mutex_);
  for (auto& [id, entry] : blocks_) {
    LOG_IF(ERROR, entry.pins > 0) << "block " << id << " still pinned at shutdown";
    FreeEntryMemoryLocked(entry);
  }
}

std::string StorageManager::SegmentPath(uint64_t segment_id) const {
  return absl::StrCat(segment_directory_, "/", kSegmentPrefix, segment_id, kSegmentSuffix);
}

absl::StatusOr<PendingBlock> StorageManager::AllocatePendingBlock(size_t bytes, BufferPool* account) {
  int node = striper_.NextNode();
  BufferPool* pool = account != nullptr ? account : pool_;
  TESSERA_ASSIGN_OR_RETURN(void* data, pool->Allocate(MemoryKind::kBaseBlock, bytes, node));
  return PendingBlock(pool, data, bytes, node);
}

SegmentWriter::~SegmentWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!finished_) ::unlink(path_.c_str());
}

absl::Status SegmentWriter::Append(PendingBlock& block) {
  BlockView view = block.view();
  const uint64_t bytes = view.used_bytes();
  const uint64_t offset = next_offset_.fetch_add(AlignFile(bytes));
  TESSERA_RETURN_IF_ERROR(WriteAllAt(fd_, block.data(), bytes, offset, path_));
  if (sync_) ::sync_file_range(fd_, static_cast<off_t>(offset), static_cast<off_t>(bytes), SYNC_FILE_RANGE_WRITE);
  block.set_location(BlockLocation{offset, static_cast<uint32_t>(bytes), view.row_count()});
  return absl::OkStatus();
}

absl::Status SegmentWriter::Finish() {
  absl::Status status;
  if (sync_) status = SyncFile(fd_, path_, /*data_only=*/true);
  ::close(fd_);
  fd_ = -1;
  finished_ = status.ok();
  return status;
}

absl::StatusOr<std::unique_ptr<SegmentWriter>> StorageManager::CreateSegmentWriter(uint64_t segment_id) {
  std::string path = SegmentPath(segment_id);
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus("cannot create segment file", path);
  return std::unique_ptr<SegmentWriter>(new SegmentWriter(segment_id, std::move(path), fd, sync_writes_));
}

absl::StatusOr<SegmentDescriptor> StorageManager::WriteSegmentFile(uint64_t segment_id,
                                                                   std::vector<PendingBlock>& blocks) {
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<SegmentWriter> writer, CreateSegmentWriter(segment_id));
  SegmentDescriptor segment;
  segment.segment_id = segment_id;
  for (PendingBlock& block : blocks) {
    TESSERA_RETURN_IF_ERROR(writer->Append(block));
    segment.blocks.push_back(block.location());
    segment.row_count += block.location().rows;
  }
  TESSERA_RETURN_IF_ERROR(writer->Finish());
  return segment;
}

void StorageManager::DeleteSegmentFile(uint64_t segment_id) { ::unlink(SegmentPath(segment_id).c_str()); }

namespace {

std::shared_ptr<const std::vector<Type>> TypesOf(const std::vector<ColumnSchema>& columns) {
  auto types = std::make_shared<std::vector<Type>>();
  for (const ColumnSchema& column : columns) types->push_back(column.type);
  return types;
}

}  // namespace

void StorageManager::RegisterOnDiskSegment(const SegmentDescriptor& segment, const std::vector<ColumnSchema>& columns) {
  std::shared_ptr<const std::vector<Type>> types = TypesOf(columns);
  absl::MutexLock lock(&mutex_);
  std::vector<uint64_t>& ids = segment_blocks_[segment.segment_id];
  for (uint32_t i = 0; i < segment.blocks.size(); ++i) {
    BlockId id{segment.segment_id, i};
    BlockEntry& entry = blocks_[id.Packed()];
    entry.segment_id = segment.segment_id;
    entry.location = segment.blocks[i];
    entry.column_types = types;
    entry.home_node = static_cast<int>(i % static_cast<uint32_t>(topology_->NumNodes()));
    ids.push_back(id.Packed());
  }
}

void StorageManager::RegisterSegment(const SegmentDescriptor& segment, const std::vector<ColumnSchema>& columns,
                                     std::vector<PendingBlock> blocks) {
  CHECK_EQ(segment.blocks.size(), blocks.size());
  std::shared_ptr<const std::vector<Type>> types = TypesOf(columns);
  absl::MutexLock lock(&mutex_);
  std::vector<uint64_t>& ids = segment_blocks_[segment.segment_id];
  for (uint32_t i = 0; i < blocks.size(); ++i) {
    BlockId id{segment.segment_id, i};
    BlockEntry& entry = blocks_[id.Packed()];
    entry.segment_id = segment.segment_id;
    entry.location = segment.blocks[i];
    entry.column_types = types;
    entry.home_node = blocks[i].home_node_;
    entry.data = blocks[i].data_;
    entry.allocated_bytes = blocks[i].allocated_bytes_;
    // Ownership moves to the entry, which frees through pool_; an account that allocated the block lets go of it.
    if (blocks[i].pool_ != pool_) blocks[i].pool_->HandOverToParent(MemoryKind::kBaseBlock, blocks[i].allocated_bytes_);
    blocks[i].data_ = nullptr;
    ids.push_back(id.Packed());
    replacer_.RecordAccess(id.Packed());
    replacer_.SetEvictable(id.Packed(), true);
  }
}

void StorageManager::FreeEntryMemoryLocked(BlockEntry& entry) {
  if (entry.data != nullptr) {
    pool_->Free(entry.data, MemoryKind::kBaseBlock, entry.allocated_bytes);
    entry.data = nullptr;
  }
}

void StorageManager::DropSegment(uint64_t segment_id) {
  {
    absl::MutexLock lock(&mutex_);
    auto it = segment_blocks_.find(segment_id);
    if (it != segment_blocks_.end()) {
      for (uint64_t packed : it->second) {
        auto block = blocks_.find(packed);
        if (block == blocks_.end()) continue;
        replacer_.Remove(packed);
        if (block->second.pins > 0 || block->second.loading) {
          block->second.dropped = true;  // freed by the last Unpin
        } else {
          FreeEntryMemoryLocked(block->second);
          blocks_.erase(block);
        }
      }
      segment_blocks_.erase(it);
    }
  }
  DeleteSegmentFile(segment_id);
}

absl::Status StorageManager::ReadBlock(const BlockEntry& entry, void* destination) const {
  std::string path = SegmentPath(entry.segment_id);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("cannot open segment file", path);
  size_t done = 0;
  absl::Status status;
  while (done < entry.location.bytes) {
    ssize_t n = ::pread(fd, static_cast<char*>(destination) + done, entry.location.bytes - done,
                        static_cast<off_t>(entry.location.file_offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      status = n == 0 ? absl::DataLossError(absl::StrCat("segment file '", path, "' is truncated"))
                      : ErrnoStatus("cannot read segment file", path);
      break;
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  if (!status.ok()) return status;
  absl::Status valid = BlockView::Validate(destination, entry.location.bytes, entry.column_types->size(),
                                           /*from_disk=*/true, entry.column_types.get());
  if (!valid.ok()) {
    absl::Status status = absl::DataLossError(
        absl::StrCat(valid.message(), " (the block at byte ", entry.location.file_offset, " of '", path, "')"));
    auto column = valid.GetPayload(BlockView::kDamagedColumnPayload);
    if (column.has_value()) status.SetPayload(BlockView::kDamagedColumnPayload, *column);
    return status;
  }
  return absl::OkStatus();
}

absl::StatusOr<BlockHandle> StorageManager::PinBlock(BlockId id) {
  const uint64_t packed = id.Packed();
  BlockEntry snapshot;
  {
    absl::MutexLock lock(&mutex_);
    while (true) {
      auto it = blocks_.find(packed);
      if (it == blocks_.end() || it->second.dropped) {
        return absl::NotFoundError(absl::StrCat("block ", id.index, " of segment ", id.segment_id, " not found"));
      }
      BlockEntry& entry = it->second;
      if (entry.loading) {
        loaded_.Wait(&mutex_);
        continue;
      }
      if (entry.data != nullptr) {
        ++entry.pins;
        replacer_.RecordAccess(packed);
        replacer_.SetEvictable(packed, false);
        BlockHandle handle;
        handle.manager_ = this;
        handle.packed_id_ = packed;
        handle.data_ = entry.data;
        handle.home_node_ = entry.home_node;
        return handle;
      }
      entry.loading = true;
      snapshot = entry;
      break;
    }
  }
  // Read outside the lock: allocation may evict other blocks, which takes the lock.
  size_t bytes = snapshot.location.bytes;
  absl::StatusOr<void*> memory = pool_->Allocate(MemoryKind::kBaseBlock, bytes, snapshot.home_node);
  absl::Status status = memory.status();
  if (status.ok()) {
    status = ReadBlock(snapshot, *memory);
    if (!status.ok()) pool_->Free(*memory, MemoryKind::kBaseBlock, bytes);
  }
  absl::MutexLock lock(&mutex_);
  BlockEntry& entry = blocks_[packed];
  entry.loading = false;
  loaded_.SignalAll();
  if (!status.ok()) return status;
  entry.data = *memory;
  entry.allocated_bytes = bytes;
  if (entry.dropped) {
    FreeEntryMemoryLocked(entry);
    blocks_.erase(packed);
    return absl::NotFoundError(absl::StrCat("block ", id.index, " of segment ", id.segment_id, " was dropped"));
  }
  ++entry.pins;
  replacer_.RecordAccess(packed);
  replacer_.SetEvictable(packed, false);
  BlockHandle handle;
  handle.manager_ = this;
  handle.packed_id_ = packed;
  handle.data_ = entry.data;
  handle.home_node_ = entry.home_node;
  return handle;
}

void StorageManager::Unpin(uint64_t packed_id) {
  absl::MutexLock lock(&mutex_);
  auto it = blocks_.find(packed_id);
  CHECK(it != blocks_.end());
  BlockEntry& entry = it->second;
  CHECK_GT(entry.pins, 0);
  if (--entry.pins == 0) {
    if (entry.dropped) {
      FreeEntryMemoryLocked(entry);
      blocks_.erase(it);
    } else {
      replacer_.SetEvictable(packed_id, true);
    }
  }
}

size_t StorageManager::EvictAtLeast(size_t bytes) {
  size_t freed = 0;
  absl::MutexLock lock(&mutex_);
  while (freed < bytes) {
    std::optional<uint64_t> victim = replacer_.PickVictim();
    if (!victim.has_value()) break;
    auto it = blocks_.find(*victim);
    if (it == blocks_.end() || it->second.pins > 0 || it->second.data == nullptr) continue;
    freed += it->second.allocated_bytes;
    FreeEntryMemoryLocked(it->second);
  }
  return freed;
}

int StorageManager::HomeNode(BlockId id) const {
  absl::MutexLock lock(&mutex_);
  auto it = blocks_.find(id.Packed());
  return it == blocks_.end() ? -1 : it->second.home_node;
}

int64_t StorageManager::ResidentBlockCount() const {
  absl::MutexLock lock(&mutex_);
  int64_t count = 0;
  for (const auto& [id, entry] : blocks_) count += entry.data != nullptr;
  return count;
}

ResidentBlockBytes StorageManager::ResidentBytes() const {
  absl::MutexLock lock(&mutex_);
  ResidentBlockBytes bytes;
  for (const auto& [id, entry] : blocks_) {
    if (entry.data == nullptr) continue;
    const BlockHeader& header = BlockView(entry.data).header();
    bytes.stored += header.used_bytes;
    bytes.plain += header.plain_bytes != 0 ? header.plain_bytes : header.used_bytes;  // version 1: plain
  }
  return bytes;
}

}  // namespace tessera
