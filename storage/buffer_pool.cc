#include "storage/buffer_pool.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <new>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/file_io.h"
#include "common/status_macros.h"
#include "glog/logging.h"

namespace tessera {
namespace {

// How often one Charge asks the evictor before giving up; more than one round because concurrent allocators
// may take what an eviction freed.
constexpr int kMaxEvictionRounds = 4;

constexpr size_t RoundUp(size_t value, size_t multiple) { return (value + multiple - 1) / multiple * multiple; }

// The size actually charged and allocated for a request of `bytes`: base blocks, which are allocated at their
// (compressed) used size and live long, take whole pages; other slots whole 2 MiB huge pages.
size_t ChargedBytes(MemoryKind kind, size_t bytes) {
  if (bytes >= BufferPool::kLargeAllocationBytes) {
    return RoundUp(bytes,
                   kind == MemoryKind::kBaseBlock ? BufferPool::kBaseBlockGranularity : BufferPool::kSlotAlignment);
  }
  return RoundUp(bytes == 0 ? 1 : bytes, BufferPool::kSmallGranularity);
}

bool IsSlotSize(size_t charged_bytes) { return charged_bytes >= BufferPool::kLargeAllocationBytes; }

// Reads all `size` bytes at `offset` (pread, retried on EINTR and short reads).
absl::Status ReadAllAt(int fd, void* data, size_t size, uint64_t offset, const std::string& path) {
  char* out = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t got = pread(fd, out, size, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return ErrnoStatus("cannot read spill file", path);
    if (got == 0) return absl::DataLossError(absl::StrCat("spill file '", path, "' is shorter than what was spilled"));
    out += got;
    size -= static_cast<size_t>(got);
    offset += static_cast<uint64_t>(got);
  }
  return absl::OkStatus();
}

struct ByteUnit {
  double divisor;
  const char* name;
};

ByteUnit UnitFor(size_t bytes) {
  static constexpr const char* kNames[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double divisor = 1;
  int index = 0;
  while (index + 1 < static_cast<int>(std::size(kNames)) && static_cast<double>(bytes) >= divisor * 1024) {
    divisor *= 1024;
    ++index;
  }
  return {divisor, kNames[index]};
}

std::string FormatBytesIn(size_t bytes, ByteUnit unit) {
  if (unit.divisor == 1) return absl::StrCat(bytes, " B");
  return absl::StrFormat("%.1f %s", static_cast<double>(bytes) / unit.divisor, unit.name);
}

std::string FormatBytes(size_t bytes) { return FormatBytesIn(bytes, UnitFor(bytes)); }

// Transparent huge pages can be requested with madvise when the system mode is "always" or "madvise".
bool HugePagesAllowed() {
  std::ifstream file("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string mode;
  if (!std::getline(file, mode)) return false;
  return mode.find("[always]") != std::string::npos || mode.find("[madvise]") != std::string::npos;
}

}  // namespace

const char* MemoryKindName(MemoryKind kind) {
  switch (kind) {
    case MemoryKind::kBaseBlock:
      return "base block";
    case MemoryKind::kTemporaryBlock:
      return "temporary block";
    case MemoryKind::kBlob:
      return "blob";
  }
  return "unknown memory";
}

BufferPool::BufferPool(size_t budget_bytes, const Topology* topology)
    : topology_(topology),
      num_nodes_(topology == nullptr ? 1 : std::max(1, topology->NumNodes())),
      huge_pages_allowed_(HugePagesAllowed()),
      budget_bytes_(budget_bytes),
      cached_slots_(num_nodes_ + 1) {}

BufferPool::BufferPool(BufferPool* parent)
    : parent_(parent),
      topology_(parent->topology_),
      num_nodes_(parent->num_nodes_),
      huge_pages_allowed_(parent->huge_pages_allowed_),
      budget_bytes_(0),
      cached_slots_(num_nodes_ + 1) {}

std::unique_ptr<BufferPool> BufferPool::NewAccount(BufferPool* parent) {
  CHECK(parent != nullptr);
  return std::unique_ptr<BufferPool>(new BufferPool(parent));
}

void BufferPool::CountInAccount(MemoryKind kind, size_t bytes, bool add) {
  const int k = static_cast<int>(kind);
  absl::MutexLock lock(&mutex_);
  if (add) {
    by_kind_[k] += bytes;
    used_bytes_ += bytes;
    peak_used_bytes_ = std::max(peak_used_bytes_, used_bytes_);
    return;
  }
  DCHECK_GE(by_kind_[k], bytes) << "buffer pool account: releasing more " << MemoryKindName(kind)
                                << " memory than was charged";
  const size_t released = std::min(by_kind_[k], bytes);
  by_kind_[k] -= released;
  used_bytes_ -= released;
}

BufferPool::~BufferPool() {
  absl::MutexLock lock(&mutex_);
  if (spill_fd_ >= 0) RemoveSpillFile();
  for (auto& bucket : cached_slots_) {
    for (const CachedSlot& slot : bucket) munmap(slot.address, slot.bytes);
  }
  if (used_bytes_ != 0) {
    LOG(WARNING) << "buffer pool destroyed with " << FormatBytes(used_bytes_) << " still in use (" << live_slots_.size()
                 << " slots)";
  }
}

size_t BufferPool::BudgetFromMeminfo(std::string_view meminfo) {
  // A field's value in bytes ("MemTotal:       24683088 kB"), or 0 when the field is missing.
  auto field = [&](std::string_view name) -> size_t {
    for (size_t at = meminfo.find(name); at != std::string_view::npos; at = meminfo.find(name, at + 1)) {
      if (at != 0 && meminfo[at - 1] != '\n') continue;
      size_t p = at + name.size();
      if (p >= meminfo.size() || meminfo[p] != ':') continue;
      ++p;
      while (p < meminfo.size() && meminfo[p] == ' ') ++p;
      size_t kib = 0;
      while (p < meminfo.size() && meminfo[p] >= '0' && meminfo[p] <= '9') kib = kib * 10 + (meminfo[p++] - '0');
      return kib * 1024;
    }
    return 0;
  };
  const size_t total = field("MemTotal");
  if (total == 0) return 0;
  const size_t available = field("MemAvailable");
  const size_t share_of_total = total / 5 * 3;
  if (available == 0) return share_of_total;
  return std::max(total / 4, std::min(share_of_total, available / 5 * 4));
}

size_t BufferPool::DefaultBudgetBytes() {
  std::ifstream file("/proc/meminfo");
  const std::string meminfo((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (const size_t budget = BudgetFromMeminfo(meminfo); budget > 0) return budget;
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return size_t{4} << 30;  // unknown: a conservative 4 GiB
  return static_cast<size_t>(pages) * static_cast<size_t>(page_size) / 5 * 3;
}

void BufferPool::SetEvictor(Evictor* evictor) {
  DCHECK(parent_ == nullptr) << "an account has no evictor of its own";
  absl::MutexLock lock(&mutex_);
  evictor_ = evictor;
}

absl::StatusOr<void*> BufferPool::Allocate(MemoryKind kind, size_t bytes, int node) {
  if (parent_ != nullptr) {
    absl::StatusOr<void*> memory = parent_->Allocate(kind, bytes, node);
    if (memory.ok()) {
      CountInAccount(kind, ChargedBytes(kind, bytes), /*add=*/true);
      TrackSpillable(*memory, kind, ChargedBytes(kind, bytes));
    }
    return memory;
  }
  const size_t charged = ChargedBytes(kind, bytes);
  if (node >= num_nodes_) node = -1;
  if (node < 0) node = -1;
  if (absl::Status status = Charge(kind, charged, "allocate"); !status.ok()) return status;
  if (IsSlotSize(charged)) {
    absl::StatusOr<void*> slot = AllocateSlot(charged, node);
    if (!slot.ok()) Uncharge(kind, charged);
    return slot;
  }
  void* address = ::operator new(charged, std::align_val_t(kSmallGranularity), std::nothrow);
  if (address == nullptr) {
    Uncharge(kind, charged);
    return absl::ResourceExhaustedError(
        absl::StrCat("out of memory: cannot allocate ", FormatBytes(charged), " for a ", MemoryKindName(kind)));
  }
  return address;
}

void BufferPool::Free(void* address, MemoryKind kind, size_t bytes) {
  if (address == nullptr) return;
  if (parent_ != nullptr) {
    if (ForgetSpillable(address)) {
      // Spilled: uncharged already, in the parent and here; only the reserved address range goes.
      parent_->FreeSlot(address, ChargedBytes(kind, bytes));
      return;
    }
    parent_->Free(address, kind, bytes);
    CountInAccount(kind, ChargedBytes(kind, bytes), /*add=*/false);
    return;
  }
  const size_t charged = ChargedBytes(kind, bytes);
  if (IsSlotSize(charged)) {
    FreeSlot(address, charged);
  } else {
    ::operator delete(address, std::align_val_t(kSmallGranularity));
  }
  Uncharge(kind, charged);
}

absl::Status BufferPool::Reserve(MemoryKind kind, size_t bytes) {
  if (parent_ != nullptr) {
    TESSERA_RETURN_IF_ERROR(parent_->Reserve(kind, bytes));
    CountInAccount(kind, bytes, /*add=*/true);
    return absl::OkStatus();
  }
  return Charge(kind, bytes, "reserve");
}

void BufferPool::Release(MemoryKind kind, size_t bytes) {
  if (parent_ != nullptr) {
    parent_->Release(kind, bytes);
    CountInAccount(kind, bytes, /*add=*/false);
    return;
  }
  Uncharge(kind, bytes);
}

void BufferPool::HandOverToParent(MemoryKind kind, size_t bytes) {
  CHECK(parent_ != nullptr) << "HandOverToParent on a pool that is not an account";
  CountInAccount(kind, ChargedBytes(kind, bytes), /*add=*/false);
}

MemoryUsage BufferPool::Usage() const {
  const size_t budget = parent_ != nullptr ? parent_->budget_bytes() : 0;
  absl::MutexLock lock(&mutex_);
  MemoryUsage usage;
  usage.budget_bytes = parent_ != nullptr ? budget : budget_bytes_;
  usage.used_bytes = used_bytes_;
  usage.peak_used_bytes = peak_used_bytes_;
  for (int i = 0; i < kNumMemoryKinds; ++i) usage.by_kind[i] = by_kind_[i];
  usage.huge_page_bytes = huge_page_bytes_;
  usage.evictions = evictions_;
  return usage;
}

size_t BufferPool::budget_bytes() const {
  if (parent_ != nullptr) return parent_->budget_bytes();
  absl::MutexLock lock(&mutex_);
  return budget_bytes_;
}

void BufferPool::SetBudgetBytes(size_t budget_bytes) {
  DCHECK(parent_ == nullptr) << "an account has the budget of its pool";
  absl::MutexLock lock(&mutex_);
  budget_bytes_ = budget_bytes;
}

absl::Status BufferPool::Charge(MemoryKind kind, size_t bytes, const char* verb) {
  const int k = static_cast<int>(kind);
  DCHECK(k >= 0 && k < kNumMemoryKinds);
  bool evictor_gave_nothing = false;
  for (int round = 0;; ++round) {
    Evictor* evictor;
    size_t deficit;
    {
      absl::MutexLock lock(&mutex_);
      if (used_bytes_ <= budget_bytes_ && bytes <= budget_bytes_ - used_bytes_) {
        by_kind_[k] += bytes;
        used_bytes_ += bytes;
        peak_used_bytes_ = std::max(peak_used_bytes_, used_bytes_);
        return absl::OkStatus();
      }
      // Eviction cannot help a request larger than the whole budget.
      if (evictor_ == nullptr || evictor_gave_nothing || round >= kMaxEvictionRounds || bytes > budget_bytes_) {
        return absl::ResourceExhaustedError(ExhaustedMessage(kind, bytes, verb));
      }
      evictor = evictor_;
      deficit = used_bytes_ + bytes - budget_bytes_;
    }
    const size_t freed = evictor->EvictAtLeast(deficit);
    if (freed > 0) {
      absl::MutexLock lock(&mutex_);
      ++evictions_;
    } else {
      // One more look: a concurrent Free may still have made room.
      evictor_gave_nothing = true;
    }
  }
}

void BufferPool::Uncharge(MemoryKind kind, size_t bytes) {
  const int k = static_cast<int>(kind);
  absl::MutexLock lock(&mutex_);
  DCHECK_GE(by_kind_[k], bytes) << "buffer pool: releasing more " << MemoryKindName(kind) << " memory than was charged";
  const size_t released = std::min(by_kind_[k], bytes);
  by_kind_[k] -= released;
  used_bytes_ -= released;
}

std::string BufferPool::ExhaustedMessage(MemoryKind kind, size_t bytes, const char* verb) const {
  const ByteUnit unit = UnitFor(budget_bytes_);
  return absl::StrCat("buffer pool budget exceeded: cannot ", verb, " ", FormatBytes(bytes), " for a ",
                      MemoryKindName(kind), "; ", FormatBytesIn(used_bytes_, unit), " of ",
                      FormatBytesIn(budget_bytes_, unit), " in use (base blocks ",
                      FormatBytesIn(by_kind_[static_cast<int>(MemoryKind::kBaseBlock)], unit), ", temporary blocks ",
                      FormatBytesIn(by_kind_[static_cast<int>(MemoryKind::kTemporaryBlock)], unit), ", blobs ",
                      FormatBytesIn(by_kind_[static_cast<int>(MemoryKind::kBlob)], unit), ")");
}

absl::StatusOr<void*> BufferPool::AllocateSlot(size_t bytes, int node) {
  std::vector<CachedSlot> dropped;  // cached slots unmapped to make room for fresh pages within the budget
  {
    absl::MutexLock lock(&mutex_);
    // A request for a node takes only that node's slots; a request for any node takes any slot.
    const int first = node < 0 ? 0 : CacheBucket(node);
    const int last = node < 0 ? num_nodes_ : CacheBucket(node);
    for (int bucket = first; bucket <= last; ++bucket) {
      std::vector<CachedSlot>& slots = cached_slots_[bucket];
      for (size_t i = 0; i < slots.size(); ++i) {
        if (slots[i].bytes != bytes) continue;
        const CachedSlot slot = slots[i];
        slots[i] = slots.back();
        slots.pop_back();
        cached_slot_bytes_ -= slot.bytes;
        live_slots_[slot.address] = LiveSlot{bucket == num_nodes_ ? -1 : bucket, slot.huge};
        if (slot.huge) huge_page_bytes_ += slot.bytes;
        return slot.address;
      }
    }
    // No slot of this size: fresh pages are about to be touched. Cached slots beyond kMaxCachedSlotBytes go
    // until what is charged (this allocation included) and what is cached fit in the budget together.
    for (std::vector<CachedSlot>& slots : cached_slots_) {
      while (!slots.empty() && cached_slot_bytes_ > kMaxCachedSlotBytes &&
             used_bytes_ + cached_slot_bytes_ > budget_bytes_) {
        dropped.push_back(slots.back());
        cached_slot_bytes_ -= slots.back().bytes;
        slots.pop_back();
      }
    }
  }
  for (const CachedSlot& slot : dropped) munmap(slot.address, slot.bytes);

  TESSERA_ASSIGN_OR_RETURN(void* address, MapSlot(bytes, node));
  const bool huge = huge_pages_allowed_ && madvise(address, bytes, MADV_HUGEPAGE) == 0;
  absl::MutexLock lock(&mutex_);
  live_slots_[address] = LiveSlot{node, huge};
  if (huge) huge_page_bytes_ += bytes;
  return address;
}

absl::StatusOr<void*> BufferPool::MapSlot(size_t bytes, int node) {
  // Over-allocate by one alignment unit and trim both ends to get a 2 MiB-aligned slot.
  const size_t mapped_bytes = bytes + kSlotAlignment;
  void* mapped =
      mmap(nullptr, mapped_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mapped == MAP_FAILED) {
    const int error = errno;
    return absl::ResourceExhaustedError(
        absl::StrCat("out of memory: mmap of ", FormatBytes(mapped_bytes), " failed: ", std::strerror(error)));
  }
  const uintptr_t begin = reinterpret_cast<uintptr_t>(mapped);
  const uintptr_t aligned = RoundUp(begin, kSlotAlignment);
  if (aligned > begin) munmap(mapped, aligned - begin);
  const uintptr_t end = begin + mapped_bytes;
  if (end > aligned + bytes) munmap(reinterpret_cast<void*>(aligned + bytes), end - (aligned + bytes));
  void* address = reinterpret_cast<void*>(aligned);
  // Before the first touch of the pages (the caller advises huge pages, also before touching them).
  if (node >= 0 && topology_ != nullptr) topology_->BindMemoryToNode(address, bytes, node);
  return address;
}

absl::StatusOr<void*> BufferPool::GrowSlot(void* address, size_t old_bytes, size_t new_bytes) {
  LiveSlot live;
  {
    absl::MutexLock lock(&mutex_);
    auto it = live_slots_.find(address);
    CHECK(it != live_slots_.end()) << "buffer pool: reallocating " << address << " which it did not allocate";
    live = it->second;
  }
  TESSERA_ASSIGN_OR_RETURN(void* target, MapSlot(new_bytes, live.node));
  const bool huge = huge_pages_allowed_ && madvise(target, new_bytes, MADV_HUGEPAGE) == 0;
  // Move the old pages to the start of the new slot (replacing its untouched pages there); the rest of the new
  // slot stays fresh. Nothing is copied, and huge pages stay huge (both slots are 2 MiB-aligned).
  void* moved = mremap(address, old_bytes, old_bytes, MREMAP_MAYMOVE | MREMAP_FIXED, target);
  if (moved == MAP_FAILED) {
    const int error = errno;
    munmap(target, new_bytes);
    return absl::ResourceExhaustedError(
        absl::StrCat("out of memory: mremap to ", FormatBytes(new_bytes), " failed: ", std::strerror(error)));
  }
  absl::MutexLock lock(&mutex_);
  live_slots_.erase(address);
  live_slots_[target] = LiveSlot{live.node, huge};
  if (live.huge) huge_page_bytes_ -= old_bytes;
  if (huge) huge_page_bytes_ += new_bytes;
  return target;
}

absl::StatusOr<void*> BufferPool::Reallocate(MemoryKind kind, void* address, size_t old_bytes, size_t new_bytes,
                                             int node) {
  if (address == nullptr) return Allocate(kind, new_bytes, node);
  const size_t old_charged = ChargedBytes(kind, old_bytes);
  const size_t new_charged = ChargedBytes(kind, new_bytes);
  if (new_charged == old_charged) return address;
  if (parent_ != nullptr) {
    TESSERA_ASSIGN_OR_RETURN(void* moved, parent_->Reallocate(kind, address, old_bytes, new_bytes, node));
    CountInAccount(kind, old_charged, /*add=*/false);
    CountInAccount(kind, new_charged, /*add=*/true);
    const bool was_spilled = ForgetSpillable(address);
    DCHECK(!was_spilled) << "buffer pool account: reallocating spilled memory";
    TrackSpillable(moved, kind, new_charged);
    return moved;
  }
  if (IsSlotSize(old_charged) && new_charged > old_charged) {
    TESSERA_RETURN_IF_ERROR(Charge(kind, new_charged - old_charged, "allocate"));
    absl::StatusOr<void*> grown = GrowSlot(address, old_charged, new_charged);
    if (!grown.ok()) Uncharge(kind, new_charged - old_charged);
    return grown;
  }
  TESSERA_ASSIGN_OR_RETURN(void* fresh, Allocate(kind, new_bytes, node));
  std::memcpy(fresh, address, std::min(old_bytes, new_bytes));
  Free(address, kind, old_bytes);
  return fresh;
}

void BufferPool::FreeSlot(void* address, size_t bytes) {
  {
    absl::MutexLock lock(&mutex_);
    auto it = live_slots_.find(address);
    CHECK(it != live_slots_.end()) << "buffer pool: freeing " << address << " which it did not allocate";
    const LiveSlot live = it->second;
    live_slots_.erase(it);
    if (live.huge) huge_page_bytes_ -= bytes;
    // Keep freed slots mapped while they fit in the budget beside what stays charged (at least
    // kMaxCachedSlotBytes), so that the temporary blocks and tables of one query reuse the pages of the previous
    // one instead of faulting in and zeroing fresh ones (TPC-H Q18's 15 M-group tables at SF10). Free uncharges
    // after this, so used_bytes_ still counts the slot.
    const size_t used_after = used_bytes_ >= bytes ? used_bytes_ - bytes : 0;
    const size_t cache_limit =
        std::max(kMaxCachedSlotBytes, budget_bytes_ > used_after ? budget_bytes_ - used_after : size_t{0});
    if (cached_slot_bytes_ + bytes <= cache_limit) {
      cached_slots_[CacheBucket(live.node)].push_back(CachedSlot{address, bytes, live.huge});
      cached_slot_bytes_ += bytes;
      return;
    }
  }
  munmap(address, bytes);
}

// ---------------------------------------------------------------------------------------------------------------
// Spilling (accounts).

void BufferPool::TrackSpillable(void* address, MemoryKind kind, size_t charged) {
  if (!IsSlotSize(charged) || kind == MemoryKind::kBaseBlock) return;
  absl::MutexLock lock(&mutex_);
  spillable_[address] = SpillableSlot{kind, charged};
}

bool BufferPool::ForgetSpillable(void* address) {
  absl::MutexLock lock(&mutex_);
  auto it = spillable_.find(address);
  if (it == spillable_.end()) return false;
  const bool spilled = it->second.spilled;
  if (spilled) spilled_bytes_ -= it->second.bytes;
  spillable_.erase(it);
  if (spilled && spilled_bytes_ == 0) RemoveSpillFile();
  return spilled;
}

void BufferPool::RemoveSpillFile() {
  if (spill_fd_ < 0) return;
  close(spill_fd_);
  if (unlink(spill_path_.c_str()) != 0) LOG(WARNING) << "cannot remove spill file '" << spill_path_ << "'";
  spill_fd_ = -1;
  spill_path_.clear();
}

size_t BufferPool::SpillableBytes() const {
  absl::MutexLock lock(&mutex_);
  size_t bytes = 0;
  for (const auto& [address, slot] : spillable_) {
    if (!slot.spilled) bytes += slot.bytes;
  }
  return bytes;
}

size_t BufferPool::spilled_bytes() const {
  absl::MutexLock lock(&mutex_);
  return spilled_bytes_;
}

absl::StatusOr<size_t> BufferPool::SpillTo(const std::string& path, const absl::flat_hash_set<const void*>& keep,
                                           const std::atomic<bool>* cancel) {
  CHECK(parent_ != nullptr && parent_->parent_ == nullptr) << "SpillTo on a pool that is not an account of a pool";
  struct Move {
    void* address;
    MemoryKind kind;
    size_t bytes;
  };
  std::vector<Move> moves;
  {
    absl::MutexLock lock(&mutex_);
    if (spill_fd_ >= 0) return absl::FailedPreconditionError("the account is spilled already");
    for (const auto& [address, slot] : spillable_) {
      if (!keep.contains(address)) moves.push_back({address, slot.kind, slot.bytes});
    }
  }
  if (moves.empty()) return 0;
  // Sequential in address order: the file is written and read back front to back.
  std::sort(moves.begin(), moves.end(), [](const Move& a, const Move& b) { return a.address < b.address; });
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return ErrnoStatus("cannot create spill file", path);
  uint64_t offset = 0;
  for (const Move& move : moves) {
    absl::Status written = cancel != nullptr && cancel->load(std::memory_order_acquire)
                               ? absl::CancelledError("the spill was cancelled")
                               : WriteAllAt(fd, move.address, move.bytes, offset, path);
    if (!written.ok()) {
      close(fd);
      unlink(path.c_str());
      return written;
    }
    offset += move.bytes;
  }
  offset = 0;
  for (const Move& move : moves) {
    // The range stays mapped (and NUMA-bound); its pages go back to the kernel and read as zeros until restored.
    if (madvise(move.address, move.bytes, MADV_DONTNEED) != 0) PLOG(WARNING) << "madvise(MADV_DONTNEED)";
    parent_->Release(move.kind, move.bytes);
    CountInAccount(move.kind, move.bytes, /*add=*/false);
    absl::MutexLock lock(&mutex_);
    SpillableSlot& slot = spillable_.at(move.address);
    slot.spilled = true;
    slot.file_offset = offset;
    spilled_bytes_ += move.bytes;
    offset += move.bytes;
  }
  absl::MutexLock lock(&mutex_);
  spill_fd_ = fd;
  spill_path_ = path;
  return static_cast<size_t>(offset);
}

absl::Status BufferPool::RestoreSpilled() {
  struct Move {
    void* address;
    MemoryKind kind;
    size_t bytes;
    uint64_t file_offset;
  };
  std::vector<Move> moves;
  int fd;
  std::string path;
  {
    absl::MutexLock lock(&mutex_);
    if (spill_fd_ < 0) return absl::OkStatus();
    for (const auto& [address, slot] : spillable_) {
      if (slot.spilled) moves.push_back({address, slot.kind, slot.bytes, slot.file_offset});
    }
    fd = spill_fd_;
    path = spill_path_;
  }
  std::sort(moves.begin(), moves.end(), [](const Move& a, const Move& b) { return a.file_offset < b.file_offset; });
  for (size_t i = 0; i < moves.size(); ++i) {
    if (absl::Status charged = parent_->Reserve(moves[i].kind, moves[i].bytes); !charged.ok()) {
      for (size_t j = 0; j < i; ++j) parent_->Release(moves[j].kind, moves[j].bytes);
      return charged;
    }
  }
  for (const Move& move : moves) {
    if (absl::Status read = ReadAllAt(fd, move.address, move.bytes, move.file_offset, path); !read.ok()) {
      // The memory is charged again but its contents are lost: the owner must fail (and free it).
      for (const Move& charged : moves) parent_->Release(charged.kind, charged.bytes);
      return read;
    }
  }
  absl::MutexLock lock(&mutex_);
  for (const Move& move : moves) {
    spillable_.at(move.address).spilled = false;
    spilled_bytes_ -= move.bytes;
    const int k = static_cast<int>(move.kind);
    by_kind_[k] += move.bytes;
    used_bytes_ += move.bytes;
  }
  peak_used_bytes_ = std::max(peak_used_bytes_, used_bytes_);
  RemoveSpillFile();
  return absl::OkStatus();
}

}  // namespace tessera
