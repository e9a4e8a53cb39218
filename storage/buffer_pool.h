#pragma once
// The buffer pool: the one memory budget for everything large in the server.
//
// Base blocks, temporary blocks and blobs (hash tables, aggregation tables, sort runs, filters) are all
// allocated here, so Usage() is the server's memory use. Allocate/Free are called once per block or per
// structure, never per row.
//
// Placement: allocations of at least 1 MiB are rounded up to a multiple of kSlotAlignment (2 MiB; base blocks to
// a multiple of kBaseBlockGranularity, a page), are 2 MiB-aligned, come from mmap, are bound to the requested
// NUMA node via Topology::BindMemoryToNode and are advised to use transparent huge pages (MADV_HUGEPAGE) where
// the kernel allows. Smaller allocations come from
// aligned operator new (64-byte alignment) and are charged at a 64-byte granularity.
//
// Slot cache: freed large slots are kept in a per-node cache and handed out again to allocations of the same size
// and node, so block and table churn does not hit mmap/munmap and the kernel's zeroing of fresh pages each time.
// Cached slots are not charged to the budget but live in its unused part: a slot is cached while what is charged
// and what is cached fit in the budget (always up to kMaxCachedSlotBytes), and an allocation that has to map fresh
// pages first unmaps cached slots until they fit again.
//
// Budget: when an allocation or reservation would exceed the budget, the pool asks the Evictor (with no pool
// lock held) to free clean memory, retries, and otherwise fails with absl::ResourceExhaustedError. It never
// crashes on exhaustion; an mmap failure is also returned as ResourceExhausted.
//
// Accounts: NewAccount(pool) makes a BufferPool that allocates from `pool` (its budget, slots, slot cache and
// evictor) and counts in its own Usage() only what went through it. Every query's operators allocate through their
// own account, which gives the load controller each query's current footprint (query_execution/execution_dag.h).
//
// Spilling (accounts only, for a suspended query: scheduler/load_controller.h): SpillTo writes the contents of the
// account's slot allocations (>= 1 MiB) of temporary blocks and blobs to a file, gives their pages back to the
// kernel (madvise MADV_DONTNEED) and uncharges them, keeping their addresses reserved; RestoreSpilled charges them
// again and reads them back to the same addresses. Pointers into spilled memory (a hash table's buckets, a block
// list) therefore stay valid across a spill, and no structure needs to know about it. Small allocations and base
// blocks (a load's pending blocks) stay resident.
//
// Threading: every method is thread-safe. One mutex guards the accounting; it is never held during mmap,
// munmap, eviction or spill I/O.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "storage/topology.h"

namespace tessera {

enum class MemoryKind : uint8_t { kBaseBlock, kTemporaryBlock, kBlob };
constexpr int kNumMemoryKinds = 3;

// "base block", "temporary block" or "blob" (singular, lower case, for messages).
const char* MemoryKindName(MemoryKind kind);

// A snapshot of the pool's accounting. used_bytes == sum of by_kind (allocations plus reservations).
struct MemoryUsage {
  size_t budget_bytes = 0;
  size_t used_bytes = 0;
  size_t peak_used_bytes = 0;  // the most used_bytes has been over the pool's (or account's) life
  size_t by_kind[kNumMemoryKinds] = {};
  // Bytes of live allocations that were advised to use transparent huge pages.
  size_t huge_page_bytes = 0;
  // Number of Evictor::EvictAtLeast calls that freed memory on the pool's behalf.
  int64_t evictions = 0;
};

class Evictor {
 public:
  virtual ~Evictor() = default;
  // Frees clean, unpinned memory (e.g. base blocks that are on disk) until at least `bytes` were freed or
  // nothing more can go; returns bytes freed. Called with no BufferPool lock held; it calls BufferPool::Free
  // itself. May be called concurrently from several allocating threads.
  virtual size_t EvictAtLeast(size_t bytes) = 0;
};

class BufferPool {
 public:
  static constexpr size_t kSlotAlignment = 2 << 20;
  // Allocations of at least this many bytes are slot allocations (mmap, 2 MiB-aligned, huge pages).
  static constexpr size_t kLargeAllocationBytes = 1 << 20;
  // Base blocks of at least kLargeAllocationBytes are charged and mapped in whole pages of this size, not whole
  // slots: compressed blocks of 1 to 2 MiB would otherwise be charged 2 MiB (huge pages then back only their
  // whole 2 MiB extents).
  static constexpr size_t kBaseBlockGranularity = 4096;
  // Small allocations are charged and aligned at this granularity.
  static constexpr size_t kSmallGranularity = 64;
  // Freed slots kept for reuse, over all nodes: at least this much (more with a large budget, see FreeSlot).
  static constexpr size_t kMaxCachedSlotBytes = 64 << 20;

  // `topology` is not owned and must outlive the pool; null means one node and no memory binding.
  BufferPool(size_t budget_bytes, const Topology* topology);
  // Unmaps cached slots. Memory still allocated is leaked (and logged): owners must free before.
  ~BufferPool();

  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  // An account of `parent` (see the top of this file); `parent` is not owned and must outlive the account, and
  // everything allocated through the account must be freed through it before it goes. Its Usage() has the
  // parent's budget and only the account's own bytes. SetEvictor and SetBudgetBytes are for the top-level pool.
  static std::unique_ptr<BufferPool> NewAccount(BufferPool* parent);

  // The budget when none is given (the --memory-limit flag's 0), chosen once at start from /proc/meminfo so
  // that the page cache (block files are read through it) and other processes keep room:
  // BudgetFromMeminfo of the file, or 60% of physical RAM (sysconf) where it cannot be read.
  static size_t DefaultBudgetBytes();
  // min(60% of MemTotal, 80% of MemAvailable), but at least a quarter of MemTotal (a machine busy at start
  // still gets a usable budget; queries over it fail or wait, they do not crash). `meminfo` is /proc/meminfo's
  // text; 0 when it has no MemTotal. Without MemAvailable (kernels before 3.14), 60% of MemTotal.
  static size_t BudgetFromMeminfo(std::string_view meminfo);

  // The evictor asked for memory when the budget is exceeded; null (the default) means none. Not owned; must
  // outlive the pool or be reset to null first.
  void SetEvictor(Evictor* evictor);

  // Allocates `bytes` of zero-or-garbage memory for `kind`, homed on `node` (-1 = any; an out-of-range node
  // is treated as -1). Sizes >= 1 MiB are rounded up to a multiple of 2 MiB (base blocks: of a page) and
  // 2 MiB-aligned; smaller ones are 64-byte aligned and charged rounded up to 64 bytes (0 counts as 64). On budget exhaustion (after
  // asking the evictor) returns ResourceExhausted with a message like
  //   "buffer pool budget exceeded: cannot allocate 2.0 MiB for a temporary block; 23.1 GiB of 23.1 GiB in use
  //    (base blocks 20.0 GiB, temporary blocks 3.0 GiB, blobs 0.1 GiB)".
  absl::StatusOr<void*> Allocate(MemoryKind kind, size_t bytes, int node = -1);

  // Returns memory from Allocate. `kind` and `bytes` must be those passed to Allocate.
  void Free(void* address, MemoryKind kind, size_t bytes);

  // Resizes an allocation from Allocate (or Reallocate) of `old_bytes` to `new_bytes`, keeping its first
  // min(old_bytes, new_bytes) bytes, and returns its address, which may have changed (null `address`: Allocate).
  // Growing a slot moves its pages into a larger 2 MiB-aligned slot by remapping them (mremap), without copying;
  // otherwise the bytes are copied into a new allocation. On error (ResourceExhausted) the old allocation is
  // unchanged and still owned by the caller. `node` is used only when a new allocation is made.
  absl::StatusOr<void*> Reallocate(MemoryKind kind, void* address, size_t old_bytes, size_t new_bytes, int node = -1);

  // Charges / uncharges `bytes` to `kind` without allocating memory, for the load controller and for
  // structures that allocate lazily. Reserve asks the evictor like Allocate and fails the same way
  // (ResourceExhausted). Sizes are charged exactly as given.
  absl::Status Reserve(MemoryKind kind, size_t bytes);
  void Release(MemoryKind kind, size_t bytes);
  // Accounts only: an allocation of `bytes` made through this account now belongs to the parent's owner (a query's
  // loaded blocks becoming the table's at the load's commit). The account stops counting it; the memory stays
  // allocated and is freed later through the parent with the same kind and size.
  void HandOverToParent(MemoryKind kind, size_t bytes);

  // Spilling, accounts only (see the top of this file). Between SpillTo and RestoreSpilled nobody may read or write
  // the spilled memory (its pages read as zeros): the caller guarantees that none of the account owner's work runs.
  // Freeing a spilled allocation is allowed (a query cancelled while spilled is destroyed so): its bytes in the file
  // are forgotten. The file is removed by RestoreSpilled, or when the account is destroyed.
  //
  // Bytes SpillTo would move out now: the account's slot allocations of temporary blocks and blobs, not spilled.
  size_t SpillableBytes() const;
  // Writes the spillable allocations except those in `keep` (memory another thread may still read, e.g. result
  // blocks a client is being sent) to a new file at `path`, then releases and uncharges them; returns the bytes
  // spilled. On a write error nothing is spilled, the file is removed and the error returned. FailedPrecondition
  // while already spilled. `cancel` (may be null), set by another thread, is checked before each allocation is
  // written: once set, nothing is spilled, the file is removed and Cancelled returned (the write is the long part;
  // after it the allocations are released at once).
  absl::StatusOr<size_t> SpillTo(const std::string& path, const absl::flat_hash_set<const void*>& keep,
                                 const std::atomic<bool>* cancel = nullptr);
  // Charges the spilled allocations again (ResourceExhausted over the budget, after asking the evictor; they then
  // stay spilled), reads them back to their addresses and removes the file. Nothing spilled: OK.
  absl::Status RestoreSpilled();
  size_t spilled_bytes() const;

  MemoryUsage Usage() const;
  size_t budget_bytes() const;
  // Changes the budget. Lowering it below current use fails later allocations; nothing is freed here.
  void SetBudgetBytes(size_t budget_bytes);

 private:
  struct CachedSlot {
    void* address;
    size_t bytes;
    bool huge;
  };
  struct LiveSlot {
    int node;  // -1 when unbound
    bool huge;
  };
  // An account's slot allocation of a temporary block or blob, which SpillTo may move to its spill file.
  struct SpillableSlot {
    MemoryKind kind;
    size_t bytes;  // charged size
    bool spilled = false;
    uint64_t file_offset = 0;  // in the spill file, while spilled
  };

  explicit BufferPool(BufferPool* parent);
  // An account's own tally, after the parent accepted (+) or took back (-) `bytes`.
  void CountInAccount(MemoryKind kind, size_t bytes, bool add);

  // Charges `bytes` to `kind` within the budget, asking the evictor when needed. `verb` is "allocate" or
  // "reserve" for the error message.
  absl::Status Charge(MemoryKind kind, size_t bytes, const char* verb);
  void Uncharge(MemoryKind kind, size_t bytes);
  std::string ExhaustedMessage(MemoryKind kind, size_t bytes, const char* verb) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  absl::StatusOr<void*> AllocateSlot(size_t bytes, int node);
  // Maps a fresh 2 MiB-aligned range of `bytes` bound to `node` (-1: unbound); not yet recorded as a live slot.
  absl::StatusOr<void*> MapSlot(size_t bytes, int node);
  // Moves live slot `address` of `old_bytes` into a new slot of `new_bytes` (both charged sizes) by remapping.
  absl::StatusOr<void*> GrowSlot(void* address, size_t old_bytes, size_t new_bytes);
  void FreeSlot(void* address, size_t bytes);
  // Accounts: records or forgets a slot allocation that SpillTo may move (called after the parent's allocation
  // succeeded / before it is freed). Forget returns whether the slot was spilled (then it is no longer charged).
  void TrackSpillable(void* address, MemoryKind kind, size_t charged);
  bool ForgetSpillable(void* address);
  // Removes the spill file (no spilled allocation is left).
  void RemoveSpillFile() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Index into cached_slots_: node, or num_nodes_ for unbound slots.
  int CacheBucket(int node) const { return node < 0 ? num_nodes_ : node; }

  BufferPool* const parent_ = nullptr;  // non-null for an account
  const Topology* const topology_;
  const int num_nodes_;
  const bool huge_pages_allowed_;

  mutable absl::Mutex mutex_;
  size_t budget_bytes_ ABSL_GUARDED_BY(mutex_);
  size_t by_kind_[kNumMemoryKinds] ABSL_GUARDED_BY(mutex_) = {};
  size_t used_bytes_ ABSL_GUARDED_BY(mutex_) = 0;
  size_t peak_used_bytes_ ABSL_GUARDED_BY(mutex_) = 0;
  size_t huge_page_bytes_ ABSL_GUARDED_BY(mutex_) = 0;
  int64_t evictions_ ABSL_GUARDED_BY(mutex_) = 0;
  Evictor* evictor_ ABSL_GUARDED_BY(mutex_) = nullptr;
  // Live slot allocations, for their node and huge-page state on Free.
  absl::flat_hash_map<void*, LiveSlot> live_slots_ ABSL_GUARDED_BY(mutex_);
  // Freed slots kept for reuse, per node plus one bucket for unbound slots.
  std::vector<std::vector<CachedSlot>> cached_slots_ ABSL_GUARDED_BY(mutex_);
  size_t cached_slot_bytes_ ABSL_GUARDED_BY(mutex_) = 0;
  // Accounts: slot allocations SpillTo may move, the spill file while anything is spilled, and the bytes in it.
  absl::flat_hash_map<void*, SpillableSlot> spillable_ ABSL_GUARDED_BY(mutex_);
  int spill_fd_ ABSL_GUARDED_BY(mutex_) = -1;
  std::string spill_path_ ABSL_GUARDED_BY(mutex_);
  size_t spilled_bytes_ ABSL_GUARDED_BY(mutex_) = 0;
};

}  // namespace tessera
