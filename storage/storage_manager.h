#pragma once
// The storage manager: every base block of every table, resident in the buffer pool or only on disk.
//
// Blocks live in immutable segment files (data/segments/segment_<id>.blk), one per load. A block is identified by
// BlockId = (segment id, index in segment). Readers pin a block (PinBlock -> BlockHandle); an evicted block is read
// back from its file transparently on pin. Unpinned resident blocks are clean by construction (segments are
// written before they are registered), so under memory pressure the buffer pool asks this class (an Evictor) to
// drop some, chosen by LRU-2.
//
// Threading: all methods are thread-safe. Pin/unpin take one mutex per call (once per block per work order,
// never per row). A pinned block's memory stays valid and unchanged until its last handle is gone, even if its
// table is dropped meanwhile.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "catalog/catalog.h"
#include "storage/block_layout.h"
#include "storage/buffer_pool.h"
#include "storage/lru2_replacer.h"
#include "storage/topology.h"

namespace tessera {

struct BlockId {
  uint64_t segment_id = 0;
  uint32_t index = 0;
  uint64_t Packed() const { return (segment_id << 24) | index; }
  friend bool operator==(const BlockId&, const BlockId&) = default;
};

class StorageManager;

struct ResidentBlockBytes {
  int64_t stored = 0;
  int64_t plain = 0;
};

// A pin on a resident block. Movable, not copyable; unpins on destruction.
class BlockHandle {
 public:
  BlockHandle() = default;
  BlockHandle(BlockHandle&& other) noexcept { *this = std::move(other); }
  BlockHandle& operator=(BlockHandle&& other) noexcept;
  ~BlockHandle() { Reset(); }

  BlockView view() const { return BlockView(data_); }
  int home_node() const { return home_node_; }
  bool valid() const { return manager_ != nullptr; }
  void Reset();

 private:
  friend class StorageManager;
  StorageManager* manager_ = nullptr;
  uint64_t packed_id_ = 0;
  const void* data_ = nullptr;
  int home_node_ = -1;
};

// A block built in memory by a loader, not yet part of any segment. Owns its buffer-pool memory until handed
// to StorageManager::CommitSegment (or freed by the destructor if the load fails).
class PendingBlock {
 public:
  PendingBlock(BufferPool* pool, void* data, size_t allocated_bytes, int home_node)
      : pool_(pool), data_(data), allocated_bytes_(allocated_bytes), home_node_(home_node) {}
  PendingBlock(PendingBlock&& other) noexcept { *this = std::move(other); }
  PendingBlock& operator=(PendingBlock&& other) noexcept;
  ~PendingBlock();

  BlockView view() const { return BlockView(data_); }
  void* data() const { return data_; }
  size_t allocated_bytes() const { return allocated_bytes_; }
  int home_node() const { return home_node_; }
  // Where SegmentWriter::Append put the block in its segment file.
  const BlockLocation& location() const { return location_; }
  void set_location(const BlockLocation& location) { location_ = location; }

 private:
  friend class StorageManager;
  BufferPool* pool_ = nullptr;
  void* data_ = nullptr;
  size_t allocated_bytes_ = 0;
  int home_node_ = -1;
  BlockLocation location_;
};

// Writes one new segment file. Blocks may be appended from several threads at once (each gets its own aligned
// file range), so loaders write blocks as soon as they are built. Writeback starts early (sync_file_range) so that
// the final Finish() has little left to flush. A writer destroyed without Finish() removes its file.
class SegmentWriter {
 public:
  ~SegmentWriter();
  // Thread-safe. Writes the block and records its location in `block`.
  absl::Status Append(PendingBlock& block);
  // Flushes (fdatasync when syncing) and closes the file. Call once, after the last Append.
  absl::Status Finish();
  uint64_t segment_id() const { return segment_id_; }

 private:
  friend class StorageManager;
  SegmentWriter(uint64_t segment_id, std::string path, int fd, bool sync)
      : segment_id_(segment_id), path_(std::move(path)), fd_(fd), sync_(sync) {}

  const uint64_t segment_id_;
  const std::string path_;
  int fd_;
  const bool sync_;
  std::atomic<uint64_t> next_offset_{0};
  bool finished_ = false;
};

class StorageManager : public Evictor {
 public:
  // Opens data_directory/segments, removes segment files no table references (leftovers of interrupted loads),
  // and registers every segment of every table in `catalog` as on-disk blocks. Registers itself as the pool's
  // evictor.
  static absl::StatusOr<std::unique_ptr<StorageManager>> Open(const std::string& data_directory, const Catalog& catalog,
                                                              BufferPool* pool, const Topology* topology,
                                                              bool sync_writes);
  ~StorageManager() override;

  BufferPool& buffer_pool() { return *pool_; }
  const Topology& topology() const { return *topology_; }

  // Allocates base-block memory for a block of `bytes` bytes, homed on the next node of the round-robin stripe.
  // `account` (optional) is an account of this manager's pool (BufferPool::NewAccount) that counts the block until
  // RegisterSegment hands it over to the pool: a load's blocks count as its query's memory until its commit.
  absl::StatusOr<PendingBlock> AllocatePendingBlock(size_t bytes, BufferPool* account = nullptr);

  // Starts the new segment file `segment_id`.
  absl::StatusOr<std::unique_ptr<SegmentWriter>> CreateSegmentWriter(uint64_t segment_id);
  // Writes `blocks` (in order) as the new segment file `segment_id`, fsync'ed when sync_writes, and returns where
  // each block lives. The blocks stay pending: the caller commits them with RegisterSegment once the catalog
  // commit succeeded, or drops them (and calls DeleteSegmentFile) otherwise.
  absl::StatusOr<SegmentDescriptor> WriteSegmentFile(uint64_t segment_id, std::vector<PendingBlock>& blocks);
  // Makes a written segment's blocks readable (resident, evictable). Takes ownership of the memory. `columns`: the
  // table's, whose types every block read back from disk is checked against (BlockView::Validate).
  void RegisterSegment(const SegmentDescriptor& segment, const std::vector<ColumnSchema>& columns,
                       std::vector<PendingBlock> blocks);
  // Forgets a segment: frees its resident blocks (when their last pin goes) and deletes its file.
  void DropSegment(uint64_t segment_id);
  void DeleteSegmentFile(uint64_t segment_id);

  // Pins a block of a registered segment, reading it from disk if it is not resident. Errors: NotFound for an
  // unknown block, ResourceExhausted when memory cannot be found, DataLoss for a corrupt file.
  absl::StatusOr<BlockHandle> PinBlock(BlockId id);

  // Evictor: drops unpinned resident blocks, LRU-2 order, until `bytes` are freed.
  size_t EvictAtLeast(size_t bytes) override;

  // The NUMA node a block lives on (or will be loaded to), -1 for an unknown block.
  int HomeNode(BlockId id) const;

  std::string SegmentPath(uint64_t segment_id) const;
  int64_t ResidentBlockCount() const;
  // The resident base blocks' bytes as stored (compressed) and as they would be with every column plain.
  ResidentBlockBytes ResidentBytes() const;

 private:
  struct BlockEntry {
    uint64_t segment_id = 0;
    BlockLocation location;
    std::shared_ptr<const std::vector<Type>> column_types;  // the table's, one vector per segment
    int home_node = -1;
    void* data = nullptr;  // null when not resident
    size_t allocated_bytes = 0;
    int pins = 0;
    bool loading = false;  // a thread is reading it from disk
    bool dropped = false;  // free when the last pin goes
  };

  StorageManager(std::string segment_directory, BufferPool* pool, const Topology* topology, bool sync_writes);
  void RegisterOnDiskSegment(const SegmentDescriptor& segment, const std::vector<ColumnSchema>& columns);
  void Unpin(uint64_t packed_id);
  absl::Status ReadBlock(const BlockEntry& entry, void* destination) const;
  void FreeEntryMemoryLocked(BlockEntry& entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  friend class BlockHandle;

  const std::string segment_directory_;
  BufferPool* const pool_;
  const Topology* const topology_;
  const bool sync_writes_;
  NodeStriper striper_;
  Lru2Replacer replacer_;

  mutable absl::Mutex mutex_;
  absl::CondVar loaded_;
  absl::flat_hash_map<uint64_t, BlockEntry> blocks_ ABSL_GUARDED_BY(mutex_);
  absl::flat_hash_map<uint64_t, std::vector<uint64_t>> segment_blocks_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace tessera
