#include <filesystem>
#include <system_error>
#include <thread>

#include "catalog/catalog.h"
#include "common/file_io.h"
#include "common/status_macros.h"
#include "distributed/cluster_layout.h"
#include "engine/session.h"
#include "engine/table_compactor.h"
#include "scheduler/foreman.h"
#include "storage/buffer_pool.h"
#include "storage/storage_manager.h"
#include "storage/topology.h"

namespace tessera {

Database::Database(DatabaseOptions options) : options_(std::move(options)) {}

Database::~Database() {
  compactor_.reset();  // waits for a running compaction, a query under the Foreman
  foreman_.reset();    // stops the workers before anything they might touch goes
  storage_.reset();    // frees every block before the pool goes
  catalog_.reset();
  buffer_pool_.reset();
}

absl::StatusOr<std::unique_ptr<Database>> Database::Open(const DatabaseOptions& options) {
  if (options.data_directory.empty()) return absl::InvalidArgumentError("no data directory given");
  if (options.cluster == nullptr) TESSERA_RETURN_IF_ERROR(distributed::CheckNotRankDirectory(options.data_directory));
  std::unique_ptr<Database> database(new Database(options));
  if (database->options_.worker_threads <= 0) {
    database->options_.worker_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  }
  database->topology_ = MakeSystemTopology();
  size_t budget = options.memory_budget_bytes > 0 ? options.memory_budget_bytes : BufferPool::DefaultBudgetBytes();
  database->buffer_pool_ = std::make_unique<BufferPool>(budget, database->topology_.get());
  TESSERA_ASSIGN_OR_RETURN(database->catalog_, Catalog::Open(options.data_directory, options.sync_writes));
  TESSERA_ASSIGN_OR_RETURN(database->storage_, StorageManager::Open(options.data_directory, *database->catalog_,
                                                                    database->buffer_pool_.get(),
                                                                    database->topology_.get(), options.sync_writes));
  ForemanOptions foreman_options = database->options_.scheduler;
  foreman_options.pool.num_workers = database->options_.worker_threads;
  const Topology* topology = database->topology_.get();
  foreman_options.pool.node_of_cpu = [topology](int cpu) { return cpu < 0 ? 0 : topology->NodeOfCpu(cpu); };
  // The gauge is always there, so that admission control can be switched on at run time (0 = off).
  BufferPool* pool = database->buffer_pool_.get();
  foreman_options.load_control.threshold_fraction = options.admission_threshold;
  foreman_options.load_control.max_admitted =
      options.max_active_queries < 0 ? 2 * database->options_.worker_threads : options.max_active_queries;
  foreman_options.load_control.memory = [pool] {
    const MemoryUsage usage = pool->Usage();
    return MemoryGauge{static_cast<int64_t>(usage.used_bytes), static_cast<int64_t>(usage.budget_bytes)};
  };
  if (options.spill_suspended_queries && foreman_options.load_control.spill_directory.empty()) {
    // Suspended queries spill here; files left by a server that was killed are removed.
    const std::string spill_directory = options.data_directory + "/temp";
    TESSERA_RETURN_IF_ERROR(CreateDirectories(spill_directory));
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(spill_directory, error)) {
      if (entry.path().extension() == ".spill") std::filesystem::remove(entry.path(), error);
    }
    foreman_options.load_control.spill_directory = spill_directory;
  }
  TESSERA_ASSIGN_OR_RETURN(database->foreman_, Foreman::Create(foreman_options));
  database->compactor_ = std::make_unique<TableCompactor>(database.get());
  return database;
}

Catalog& Database::catalog() { return *catalog_; }
StorageManager& Database::storage() { return *storage_; }
BufferPool& Database::buffer_pool() { return *buffer_pool_; }
Foreman& Database::foreman() { return *foreman_; }

}  // namespace tessera
