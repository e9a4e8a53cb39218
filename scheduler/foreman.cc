#include "scheduler/foreman.h"

#include <glog/logging.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "common/status_macros.h"

namespace tessera {
namespace {

// Work orders handed to one worker per queue push while a dispatch round is still filling it: lets a worker
// start before a large round (e.g. the first one) is complete.
constexpr size_t kSubmitEvery = 16;
// Picks a query in shared-scan debt may pass over per work order dispatched (Dispatch).
constexpr int kMaxPassesPerPick = 16;

template <typename... Handlers>
struct Overloaded : Handlers... {
  using Handlers::operator()...;
};
template <typename... Handlers>
Overloaded(Handlers...) -> Overloaded<Handlers...>;

}  // namespace

struct Foreman::QueryState {
  std::shared_ptr<SchedulableQuery> query;
  QueryId id = 0;
  std::shared_ptr<QueryHandle::State> handle;
  int slot = -1;  // PolicyEnforcer slot; -1 once the query no longer competes (cancelled, finishing)
  LearningAgent::QueryHistory* history = nullptr;
  std::atomic<bool> cancelled{false};  // read by workers: skip queued work orders
  bool cancelling = false;
  absl::Status cancel_status;
  int64_t running = 0;  // dispatched, not yet reported back
  int64_t submit_ns = 0;
  int priority = 1;
  uint64_t arrival = 0;
  // Set while the LoadController holds the query back (waiting or suspended): when that began.
  int64_t held_since_ns = -1;
  int64_t memory_wait_ns = 0;
  bool spill_tried = false;  // since its suspension (MaybeSpill); reset when it resumes
  // The spill in flight on a background thread (MaybeSpill), null when none: its thread, and its result, set by
  // that thread before it pokes the Foreman (CompleteSpill joins the thread and takes it).
  struct SpillJob {
    std::thread thread;
    std::mutex mu;
    bool done = false;
    // Set on the Foreman thread when the spill is no longer wanted (a resume, a cancel, Stop); read by SpillMemory.
    std::atomic<bool> cancel{false};
    absl::StatusOr<int64_t> spilled = 0;
    int64_t used_before = 0;
    int64_t start_ns = 0;
  };
  std::unique_ptr<SpillJob> spill;
  bool resume_after_spill = false;  // Activate came while the spill was in flight
  int64_t first_dispatch_ns = -1;
  int64_t executed = 0;
  int64_t skipped = 0;
  int64_t busy_ns = 0;
  int predicted_operator = -1;  // the NextWorkOrderOperator the candidate's prediction was made for
  // Shared scans: CPU time of work orders that rode along with other queries' picks, not yet paid back by
  // passing over picks of this query (Dispatch), so that the policy's shares hold with sharing on.
  int64_t ride_debt_ns = 0;
  // Time slices (ForemanOptions::dispatch_run_ns): the query's virtual time (CPU over its share weight, ns) and
  // its CPU share weight relative to the mean of the ready queries (1 for every query under fair), as last
  // computed (LeastReadyVirtualTime).
  double virtual_time_ns = 0;
  double share_weight = 1;
};

absl::StatusOr<std::unique_ptr<Foreman>> Foreman::Create(const ForemanOptions& options) {
  if (options.min_pending_per_worker < 1 || options.max_pending_per_worker < options.min_pending_per_worker) {
    return absl::InvalidArgumentError("need 1 <= min_pending_per_worker <= max_pending_per_worker");
  }
  if (options.pool.max_workers < 1) return absl::InvalidArgumentError("max_workers must be at least 1");
  if (options.dispatch_run_ns < 0) return absl::InvalidArgumentError("dispatch_run_ns must be >= 0");
  std::unique_ptr<Foreman> foreman(new Foreman(options));
  TESSERA_RETURN_IF_ERROR(foreman->Start());
  return foreman;
}

Foreman::Foreman(const ForemanOptions& options)
    : options_(options),
      enforcer_(options.policy, options.random_seed),
      agent_(options.learning),
      load_controller_(
          options.load_control,
          [](LoadController::Owner owner) { return static_cast<QueryState*>(owner)->query->MemoryFootprint(); },
          [](LoadController::Owner owner) { return static_cast<QueryState*>(owner)->query->SpillableBytes(); },
          [this](LoadController::Owner owner) { return HeldBackRank(static_cast<QueryState*>(owner)); }),
      loads_(options.pool.max_workers) {
  shared_scan_cache_bytes_ = options.shared_scan_cache_bytes;
  if (shared_scan_cache_bytes_ <= 0) shared_scan_cache_bytes_ = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (shared_scan_cache_bytes_ <= 0) shared_scan_cache_bytes_ = int64_t{32} << 20;
}

absl::Status Foreman::Start() {
  if (!options_.work_order_log_path.empty()) {
    TESSERA_ASSIGN_OR_RETURN(log_, WorkOrderLog::Open(options_.work_order_log_path, options_.work_order_log_max_bytes));
  }
  TESSERA_ASSIGN_OR_RETURN(pool_, WorkerPool::Create(options_.pool, &inbox_));
  for (const WorkerInfo& worker : pool_->Workers()) loads_.AddWorker(worker.worker_id, worker.node);
  desired_workers_ = loads_.num_dispatchable();
  outgoing_.resize(pool_->max_workers());
  slice_holders_.resize(pool_->max_workers(), nullptr);
  thread_ = std::thread([this] { Run(); });
  return absl::OkStatus();
}

Foreman::~Foreman() { Stop(); }

// ---------------------------------------------------------------------------------------------------------------
// Client side.

bool Foreman::IsActive(QueryId query_id) {
  std::lock_guard<std::mutex> lock(ids_mu_);
  return active_ids_.contains(query_id);
}

absl::StatusOr<QueryHandle> Foreman::Submit(std::shared_ptr<SchedulableQuery> query,
                                            std::shared_ptr<QueryHandle::State> state) {
  if (query == nullptr) return absl::InvalidArgumentError("null query");
  const QueryId id = query->query_id();
  {
    std::lock_guard<std::mutex> lock(ids_mu_);
    if (!active_ids_.insert(id).second) {
      return absl::AlreadyExistsError(absl::StrCat("query ", id, " is already running"));
    }
  }
  std::shared_ptr<QueryHandle::State> handle =
      state != nullptr ? std::move(state) : std::make_shared<QueryHandle::State>();
  if (!inbox_.Post(foreman_message::Submit{std::move(query), handle, MonotonicNanos()})) {
    std::lock_guard<std::mutex> lock(ids_mu_);
    active_ids_.erase(id);
    return absl::FailedPreconditionError("the scheduler is stopped");
  }
  return QueryHandle(id, std::move(handle));
}

absl::Status Foreman::Cancel(QueryId query_id) {
  if (!IsActive(query_id)) return absl::NotFoundError(absl::StrCat("no active query ", query_id));
  if (!inbox_.Post(foreman_message::Cancel{query_id})) return absl::FailedPreconditionError("scheduler stopped");
  return absl::OkStatus();
}

absl::Status Foreman::SetPriority(QueryId query_id, int priority) {
  if (priority < 1) return absl::InvalidArgumentError(absl::StrCat("priority must be >= 1, got ", priority));
  if (!IsActive(query_id)) return absl::NotFoundError(absl::StrCat("no active query ", query_id));
  if (!inbox_.Post(foreman_message::SetPriority{query_id, priority})) {
    return absl::FailedPreconditionError("scheduler stopped");
  }
  return absl::OkStatus();
}

absl::Status Foreman::SetPolicy(const PolicyOptions& policy) {
  if (!inbox_.Post(foreman_message::SetPolicy{policy})) return absl::FailedPreconditionError("scheduler stopped");
  return absl::OkStatus();
}

absl::Status Foreman::SetLoadControl(double threshold_fraction, double max_query_fraction) {
  const bool threshold_ok = threshold_fraction >= 0 && threshold_fraction <= 1;
  if (!threshold_ok || !(max_query_fraction > 0 && max_query_fraction <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("admission threshold must be in [0, 1] and the per-query cap in (0, 1], got ", threshold_fraction,
                     " and ", max_query_fraction));
  }
  if (!inbox_.Post(foreman_message::SetLoadControl{threshold_fraction, max_query_fraction})) {
    return absl::FailedPreconditionError("scheduler stopped");
  }
  return absl::OkStatus();
}

absl::Status Foreman::ResizePool(int num_workers) {
  if (num_workers < 1 || num_workers > options_.pool.max_workers) {
    return absl::InvalidArgumentError(
        absl::StrCat("worker count must be in [1, ", options_.pool.max_workers, "], got ", num_workers));
  }
  if (!inbox_.Post(foreman_message::ResizePool{num_workers})) {
    return absl::FailedPreconditionError("scheduler stopped");
  }
  return absl::OkStatus();
}

absl::Status Foreman::Poke(QueryId query_id) {
  if (!inbox_.Post(foreman_message::Poke{query_id})) return absl::FailedPreconditionError("scheduler stopped");
  return absl::OkStatus();
}

absl::StatusOr<QueryProgress> Foreman::GetProgress(QueryId query_id) {
  if (!IsActive(query_id)) return absl::NotFoundError(absl::StrCat("no active query ", query_id));
  auto reply = std::make_shared<Reply<QueryProgress>>();
  if (!inbox_.Post(foreman_message::GetProgress{query_id, reply})) {
    return absl::FailedPreconditionError("scheduler stopped");
  }
  return reply->Get();
}

absl::StatusOr<ForemanStats> Foreman::GetStats() {
  auto reply = std::make_shared<Reply<ForemanStats>>();
  if (!inbox_.Post(foreman_message::GetStats{reply})) return absl::FailedPreconditionError("scheduler stopped");
  return reply->Get();
}

void Foreman::Stop() {
  std::lock_guard<std::mutex> lock(stop_mu_);
  if (!thread_.joinable()) return;
  inbox_.Post(foreman_message::Shutdown{});
  thread_.join();
}

// ---------------------------------------------------------------------------------------------------------------
// Foreman thread.

void Foreman::Run() {
  pthread_setname_np(pthread_self(), "tessera-sched");
  ForemanInbox::Batch batch;
  while (true) {
    inbox_.Drain(&batch);
    // Completions before retire notices: a retired worker's last completions may be in the same batch.
    for (TaskCompletion& completion : batch.completions) HandleCompletion(completion);
    for (int worker_id : batch.retired_workers) HandleRetired(worker_id);
    for (ControlMessage& message : batch.controls) HandleControl(message);
    batch.clear();
    if (stopping_) {
      if (queries_.empty()) break;
      continue;
    }
    Dispatch();
  }
  pool_->Shutdown();  // every queue is empty: no query has work in flight
  for (ControlMessage& message : inbox_.Close()) {
    std::visit(Overloaded{
                   [&](foreman_message::Submit& submit) {
                     QueryOutcome outcome;
                     outcome.query_id = submit.query->query_id();
                     outcome.status = absl::AbortedError("the scheduler stopped");
                     {
                       std::lock_guard<std::mutex> lock(ids_mu_);
                       active_ids_.erase(outcome.query_id);
                     }
                     submit.handle->Complete(std::move(outcome));
                   },
                   [&](foreman_message::GetProgress& request) {
                     request.reply->Set(absl::FailedPreconditionError("the scheduler stopped"));
                   },
                   [&](foreman_message::GetStats& request) {
                     request.reply->Set(absl::FailedPreconditionError("the scheduler stopped"));
                   },
                   [](auto&) {},
               },
               message);
  }
  if (log_ != nullptr) {
    absl::Status closed = log_->Close();
    if (!closed.ok()) LOG(WARNING) << closed.message();
  }
}

void Foreman::HandleCompletion(TaskCompletion& completion) {
  auto* task = static_cast<WorkOrderTask*>(completion.task.get());
  DCHECK(dynamic_cast<WorkOrderTask*>(completion.task.get()) != nullptr);
  auto* state = static_cast<QueryState*>(task->dispatch_owner());
  loads_.OnFinished(completion.worker_id, task->predicted_ns());
  --state->running;
  if (task->skipped()) {
    ++state->skipped;
  } else {
    const int64_t end_ns =
        task->cost_override_ns() > 0 ? completion.start_ns + task->cost_override_ns() : completion.end_ns;
    const WorkOrderCompletion record{state->id,
                                     task->operator_id(),
                                     completion.worker_id,
                                     completion.start_ns,
                                     end_ns,
                                     task->rows(),
                                     task->shared() ? task->shared_scan_key() : 0};
    ++state->executed;
    ++executed_;
    state->busy_ns += record.end_ns - record.start_ns;
    // Rides are paid back by passing over draws; with time slices virtual time accounts for them instead.
    if (task->rode_along() && task->charged_ns() <= 0) state->ride_debt_ns += record.end_ns - record.start_ns;
    if (task->charged_ns() > 0) {
      ChargeVirtualTime(state, static_cast<double>(record.end_ns - record.start_ns) - task->charged_ns());
    }
    if (log_ != nullptr) log_->Append(record);
    state->query->OnWorkOrderFinished(record);
    if (!state->cancelling) {
      agent_.Record(state->history, record.operator_id, record.end_ns - record.start_ns);
      if (state->query->IsOperatorDone(record.operator_id)) {
        agent_.RemoveOperator(state->history, record.operator_id);
      }
      RefreshCandidate(state);
    }
  }
  completion.task.reset();  // destroyed on the thread that allocated it
  MaybeSpill(state);        // a suspended query's last running work order
  MaybeFinish(state);
}

void Foreman::HandleRetired(int worker_id) {
  if (!loads_.known(worker_id)) return;
  loads_.RemoveWorker(worker_id);
  ReconcilePoolSize();
}

void Foreman::HandleControl(ControlMessage& message) {
  auto find = [&](QueryId id) -> QueryState* {
    auto it = queries_.find(id);
    return it == queries_.end() ? nullptr : it->second.get();
  };
  std::visit(Overloaded{
                 [&](foreman_message::Submit& submit) { Admit(submit); },
                 [&](foreman_message::Cancel& cancel) {
                   if (QueryState* state = find(cancel.query_id)) {
                     BeginCancel(state, absl::CancelledError(absl::StrCat("query ", cancel.query_id, " cancelled")));
                   }
                 },
                 [&](foreman_message::SetPriority& change) {
                   QueryState* state = find(change.query_id);
                   if (state == nullptr) return;
                   state->priority = change.priority;
                   load_controller_.SetPriority(state, change.priority);
                   if (state->slot >= 0) enforcer_.mutable_candidate(state->slot).priority = change.priority;
                 },
                 [&](foreman_message::SetPolicy& change) {
                   enforcer_.SetPolicy(change.policy);
                   for (auto& [id, state] : queries_) RefreshCandidate(state.get());
                 },
                 [&](foreman_message::SetLoadControl& change) {
                   for (LoadController::Owner owner :
                        load_controller_.Reconfigure(change.threshold_fraction, change.max_query_fraction)) {
                     Activate(static_cast<QueryState*>(owner));
                   }
                 },
                 [&](foreman_message::ResizePool& resize) {
                   desired_workers_ = resize.num_workers;
                   ReconcilePoolSize();
                 },
                 [&](foreman_message::Poke& poke) {
                   QueryState* state = find(poke.query_id);
                   if (state == nullptr) return;
                   if (state->spill != nullptr) {
                     CompleteSpill(state);  // the spill thread's poke (a query's own Poke may come meanwhile)
                     state = find(poke.query_id);
                     if (state == nullptr) return;
                   }
                   state->query->OnPoke();  // e.g. an exchange's wake-up: operators waiting for messages are polled
                   RefreshCandidate(state);
                   MaybeFinish(state);
                 },
                 [&](foreman_message::GetProgress& request) {
                   QueryState* state = find(request.query_id);
                   if (state == nullptr) {
                     request.reply->Set(absl::NotFoundError(absl::StrCat("no active query ", request.query_id)));
                   } else {
                     QueryProgress progress = state->query->Progress();
                     progress.admission = load_controller_.StateName(state);
                     progress.priority = state->priority;
                     request.reply->Set(std::move(progress));
                   }
                 },
                 [&](foreman_message::GetStats& request) { request.reply->Set(CollectStats()); },
                 [&](foreman_message::Shutdown&) {
                   stopping_ = true;
                   std::vector<QueryState*> active;
                   for (auto& [id, state] : queries_) active.push_back(state.get());
                   for (QueryState* state : active) BeginCancel(state, absl::AbortedError("the scheduler stopped"));
                 },
             },
             message);
}

void Foreman::Admit(foreman_message::Submit& submit) {
  const QueryId id = submit.query->query_id();
  if (stopping_) {
    QueryOutcome outcome;
    outcome.query_id = id;
    outcome.status = absl::AbortedError("the scheduler stopped");
    {
      std::lock_guard<std::mutex> lock(ids_mu_);
      active_ids_.erase(id);
    }
    submit.handle->Complete(std::move(outcome));
    return;
  }
  auto state = std::make_unique<QueryState>();
  state->query = std::move(submit.query);
  state->id = id;
  state->handle = std::move(submit.handle);
  state->submit_ns = submit.submit_ns;
  state->history = agent_.AddQuery(state->query->PlanSignature());
  state->priority = std::max(1, state->query->priority());
  state->arrival = next_arrival_++;
  QueryState* raw = state.get();
  queries_.emplace(id, std::move(state));
  const LoadController::Decision decision = load_controller_.Arrive(raw, raw->priority, raw->query->MemoryRequest(),
                                                                    RanksByPriority(enforcer_.policy().kind));
  for (LoadController::Owner victim : decision.suspend) Suspend(static_cast<QueryState*>(victim));
  if (decision.admitted) {
    Activate(raw);
  } else {
    raw->held_since_ns = MonotonicNanos();
  }
  MaybeFinish(raw);  // a query without any work order
}

void Foreman::Activate(QueryState* state) {
  if (state->held_since_ns >= 0) {
    state->memory_wait_ns += MonotonicNanos() - state->held_since_ns;
    state->held_since_ns = -1;
  }
  if (state->cancelling || state->slot >= 0) return;
  if (state->spill != nullptr) {
    // Resumed by CompleteSpill once the spill is done; cut short, since the memory is wanted back: a write still
    // before its last block stops and leaves the memory resident.
    state->resume_after_spill = true;
    state->spill->cancel.store(true, std::memory_order_release);
    return;
  }
  if (state->spill_tried) {
    state->spill_tried = false;
    if (absl::Status restored = state->query->RestoreMemory(); !restored.ok()) {
      BeginCancel(state, std::move(restored));  // may finish (and destroy) the query
      return;
    }
  }
  PolicyCandidate candidate;
  candidate.priority = state->priority;
  candidate.arrival = state->arrival;
  candidate.arrival_ns = state->submit_ns;
  state->slot = enforcer_.Add(state, candidate);
  UpdateWorkerShares();
  RefreshCandidate(state);
}

void Foreman::Suspend(QueryState* state) {
  Deactivate(state);
  state->held_since_ns = MonotonicNanos();
  MaybeSpill(state);
}

void Foreman::MaybeSpill(QueryState* state) {
  if (!load_controller_.spilling() || state->spill_tried || state->running > 0 || state->cancelling ||
      load_controller_.state(state) != AdmissionState::kSuspended || state->query->IsFinished()) {
    return;
  }
  state->spill_tried = true;
  // The write (tens to hundreds of ms) runs on a thread of its own, so the Foreman keeps dispatching; the query stays
  // suspended, and its cancellation, resumption and end wait for CompleteSpill.
  state->spill = std::make_unique<QueryState::SpillJob>();
  QueryState::SpillJob* job = state->spill.get();
  job->used_before = options_.load_control.memory().used_bytes;
  job->start_ns = MonotonicNanos();
  load_controller_.SpillStarted(state);
  SchedulableQuery* query = state->query.get();
  job->thread = std::thread([this, job, query, id = state->id, directory = options_.load_control.spill_directory] {
    pthread_setname_np(pthread_self(), "tessera-spill");
    absl::StatusOr<int64_t> spilled = query->SpillMemory(directory, job->cancel);
    {
      std::lock_guard<std::mutex> lock(job->mu);
      job->spilled = std::move(spilled);
      job->done = true;
    }
    inbox_.Post(foreman_message::Poke{id});
  });
}

void Foreman::CompleteSpill(QueryState* state) {
  QueryState::SpillJob* job = state->spill.get();
  if (job == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(job->mu);
    if (!job->done) return;
  }
  job->thread.join();
  const absl::StatusOr<int64_t> spilled = std::move(job->spilled);
  if (absl::IsCancelled(spilled.status())) {
    VLOG(1) << "query " << state->id << ": spill cancelled after " << (MonotonicNanos() - job->start_ns) / 1000000
            << " ms, its memory stays resident";
  } else if (!spilled.ok()) {
    LOG(WARNING) << "query " << state->id << " keeps its memory: " << spilled.status();
  } else {
    VLOG(1) << "query " << state->id << " suspended: spilled " << (*spilled >> 20) << " MiB in "
            << (MonotonicNanos() - job->start_ns) / 1000000 << " ms; buffer pool in use " << (job->used_before >> 20)
            << " -> " << (options_.load_control.memory().used_bytes >> 20) << " MiB";
  }
  state->spill.reset();
  // Resumed meanwhile (the LoadController re-admitted it when another query left): the LoadController no longer
  // counts these bytes as spilled, and Activate below reads them back.
  for (LoadController::Owner owner : load_controller_.Spilled(state, spilled.ok() ? *spilled : 0)) {
    Activate(static_cast<QueryState*>(owner));
  }
  if (state->cancelling) {
    state->query->Cancel();  // deferred by BeginCancel while the spill ran
    MaybeFinish(state);      // may destroy the query
  } else if (state->resume_after_spill) {
    state->resume_after_spill = false;
    Activate(state);
  }
}

void Foreman::Deactivate(QueryState* state) {
  if (state->slot < 0) return;
  for (QueryState*& holder : slice_holders_) {
    if (holder == state) holder = nullptr;
  }
  void* moved = enforcer_.Remove(state->slot);
  if (moved != nullptr) static_cast<QueryState*>(moved)->slot = state->slot;
  state->slot = -1;
  UpdateWorkerShares();
}

void Foreman::UpdateWorkerShares() {
  // Shares by the policy's CPU weights over the admitted queries, ready or not (a query between phases keeps its
  // share): fair and static 1 each; lottery and pp the priority (pp-exp 2^priority); hpf 1 at the highest
  // priority and 0 below (those only fill idle workers: one worker's worth); FCFS, SRPT and
  // IF-SRPT give one query every worker at a time, so each may use them all.
  const double workers = std::max(1, loads_.num_dispatchable());
  const PolicyKind kind = enforcer_.policy().kind;
  int top_priority = 0;
  for (int slot = 0; slot < enforcer_.size(); ++slot) {
    top_priority = std::max(top_priority, enforcer_.candidate(slot).priority);
  }
  auto weight = [&](const PolicyCandidate& candidate) -> double {
    switch (kind) {
      case PolicyKind::kLottery:
      case PolicyKind::kProportionalPriority:
        return kind == PolicyKind::kProportionalPriority && enforcer_.policy().scale == PriorityScale::kExponential
                   ? std::pow(enforcer_.policy().exponential_base, std::min(candidate.priority, 60))
                   : static_cast<double>(candidate.priority);
      case PolicyKind::kHighestPriorityFirst:
        return candidate.priority == top_priority ? 1 : 0;
      default:
        return 1;
    }
  };
  double sum = 0;
  for (int slot = 0; slot < enforcer_.size(); ++slot) sum += weight(enforcer_.candidate(slot));
  const bool one_at_a_time =
      kind == PolicyKind::kFcfs || kind == PolicyKind::kSrpt || kind == PolicyKind::kInelasticFirstSrpt;
  for (int slot = 0; slot < enforcer_.size(); ++slot) {
    auto* state = static_cast<QueryState*>(enforcer_.owner(slot));
    const double own = weight(enforcer_.candidate(slot));
    state->query->SetWorkerShare(one_at_a_time || sum <= 0 ? workers : own > 0 ? workers * own / sum : 1.0);
    // Its readiness may change with its share (elastic pipelining's limits): a query that leaves frees workers
    // for the others at once, not at their next completion.
    if (enforcer_.candidate(slot).ready != state->query->HasReadyWorkOrder()) RefreshCandidate(state);
  }
}

void Foreman::RefreshCandidate(QueryState* state) {
  if (state->slot < 0) return;
  PolicyCandidate& candidate = enforcer_.mutable_candidate(state->slot);
  const SchedulableQuery& query = *state->query;
  const bool was_ready = candidate.ready;
  candidate.ready = query.HasReadyWorkOrder();
  if (candidate.ready && !was_ready && SlicesOn()) {
    // Arrived or woke: at most one slice behind the others, so waiting earns no more than one slice of credit.
    const double least = LeastReadyVirtualTime(state);
    if (least < std::numeric_limits<double>::infinity()) {
      state->virtual_time_ns = std::max(state->virtual_time_ns, least - static_cast<double>(options_.dispatch_run_ns));
    }
  }
  state->predicted_operator = query.NextWorkOrderOperator();
  double predicted = 0;
  candidate.has_prediction = agent_.Predict(state->history, state->predicted_operator, &predicted);
  candidate.predicted_ns = predicted;
  const PolicyKind kind = enforcer_.policy().kind;
  const bool size_based = kind == PolicyKind::kSrpt || kind == PolicyKind::kInelasticFirstSrpt;
  candidate.remaining_ns = size_based ? EstimateRemainingNs(state) : -1;
  if (candidate.remaining_ns >= 0) agent_.NoteRemainingEstimate(state->history, candidate.remaining_ns);
  candidate.inelastic = query.InInelasticPhase();
}

double Foreman::EstimateRemainingNs(QueryState* state) {
  const SchedulableQuery& query = *state->query;
  // Operators not measured yet in this query nor in an earlier one of its plan: the query's combined prediction,
  // else the global mean.
  double fallback_ns = 0;
  if (!agent_.Predict(state->history, &fallback_ns)) fallback_ns = agent_.global_mean_ns();
  if (fallback_ns <= 0) fallback_ns = 1e6;  // nothing learned yet anywhere: assume 1 ms
  if (query.EstimatedRemainingWorkOrdersByOperator(&remaining_scratch_)) {
    return agent_.EstimateRemainingNs(state->history, remaining_scratch_, fallback_ns,
                                      enforcer_.policy().srpt_estimate);
  }
  const int64_t remaining = query.EstimatedRemainingWorkOrders();
  return remaining < 0 ? -1 : static_cast<double>(remaining) * fallback_ns;
}

double Foreman::HeldBackRank(QueryState* state) {
  const PolicyOptions& policy = enforcer_.policy();
  if (policy.kind != PolicyKind::kSrpt && policy.kind != PolicyKind::kInelasticFirstSrpt) return -1;
  const double remaining = EstimateRemainingNs(state);
  return remaining < 0 ? -1 : remaining + policy.srpt_aging * static_cast<double>(state->submit_ns);
}

bool Foreman::SlicesOn() const {
  if (options_.dispatch_run_ns <= 0) return false;
  switch (enforcer_.policy().kind) {
    case PolicyKind::kFcfs:
    case PolicyKind::kSrpt:
    case PolicyKind::kInelasticFirstSrpt:
      return false;
    default:
      return true;
  }
}

double Foreman::LeastReadyVirtualTime(const QueryState* except) {
  // The CPU share weight of a ready query, relative to the mean over the ready queries. Fair: equal; HPF: equal
  // within the highest ready priority, 0 below; lottery: its tickets (its priority). Otherwise what one draw
  // gives it in expectation: its probability times its predicted work-order time (static: CPU in proportion
  // to work-order time; pp: its class's share split fairly). Fair and HPF do not use the draw's probabilities,
  // which are uniform while some ready query has no prediction yet (cold start) and would then weigh queries
  // by their work-order times.
  const PolicyKind kind = enforcer_.policy().kind;
  int top_priority = 0;
  if (kind == PolicyKind::kHighestPriorityFirst) {
    for (int slot = 0; slot < enforcer_.size(); ++slot) {
      const PolicyCandidate& candidate = enforcer_.candidate(slot);
      if (candidate.ready) top_priority = std::max(top_priority, candidate.priority);
    }
  }
  double sum = 0;
  int ready = 0;
  const double fallback_ns = agent_.global_mean_ns() > 0 ? agent_.global_mean_ns() : 1e6;
  for (int slot = 0; slot < enforcer_.size(); ++slot) {
    const PolicyCandidate& candidate = enforcer_.candidate(slot);
    if (!candidate.ready) continue;
    auto* state = static_cast<QueryState*>(enforcer_.owner(slot));
    switch (kind) {
      case PolicyKind::kFair:
        state->share_weight = 1;
        break;
      case PolicyKind::kHighestPriorityFirst:
        state->share_weight = candidate.priority == top_priority ? 1 : 0;
        break;
      case PolicyKind::kLottery:
        state->share_weight = candidate.priority;
        break;
      default:
        state->share_weight =
            enforcer_.Probability(slot) * (candidate.has_prediction ? candidate.predicted_ns : fallback_ns);
        break;
    }
    sum += state->share_weight;
    ++ready;
  }
  double least = std::numeric_limits<double>::infinity();
  for (int slot = 0; slot < enforcer_.size(); ++slot) {
    if (!enforcer_.candidate(slot).ready) continue;
    auto* state = static_cast<QueryState*>(enforcer_.owner(slot));
    state->share_weight = sum > 0 ? state->share_weight * ready / sum : 0;
    if (state != except && state->share_weight > 0) least = std::min(least, state->virtual_time_ns);
  }
  return least;
}

void Foreman::ChargeVirtualTime(QueryState* state, double cpu_ns) {
  // A weight of 0 (a lower HPF level) or a stale tiny one must not blow the virtual time up.
  state->virtual_time_ns += cpu_ns / std::max(state->share_weight, 1e-3);
}

Foreman::QueryState* Foreman::NextInSlice(QueryState* holder) {
  const double least = LeastReadyVirtualTime(nullptr);
  if (least == std::numeric_limits<double>::infinity()) return nullptr;
  if (holder != nullptr && holder->slot >= 0 && enforcer_.candidate(holder->slot).ready && holder->share_weight > 0 &&
      holder->virtual_time_ns < least + static_cast<double>(options_.dispatch_run_ns)) {
    return holder;
  }
  for (int slot = 0; slot < enforcer_.size(); ++slot) {
    auto* state = static_cast<QueryState*>(enforcer_.owner(slot));
    if (enforcer_.candidate(slot).ready && state->share_weight > 0 && state->virtual_time_ns == least) return state;
  }
  return nullptr;
}

void Foreman::RefreshAfterTake(QueryState* state) {
  enforcer_.SetReady(state->slot, state->query->HasReadyWorkOrder());
  const int next_operator = state->query->NextWorkOrderOperator();
  if (next_operator == state->predicted_operator) return;  // the prediction changes only with records
  state->predicted_operator = next_operator;
  double predicted = 0;
  if (agent_.Predict(state->history, next_operator, &predicted) &&
      predicted != enforcer_.candidate(state->slot).predicted_ns) {
    enforcer_.mutable_candidate(state->slot).predicted_ns = predicted;
  }
}

void Foreman::BeginCancel(QueryState* state, absl::Status status) {
  if (state->cancelling) return;
  state->cancelling = true;
  state->cancel_status = std::move(status);
  state->cancelled.store(true, std::memory_order_relaxed);
  // A query whose spill is in flight is cancelled (and finished) once the spill is done (CompleteSpill), which it is
  // asked to cut short: its methods other than those the spill may run beside are called on the Foreman thread only
  // then.
  if (state->spill == nullptr) {
    state->query->Cancel();
  } else {
    state->spill->cancel.store(true, std::memory_order_release);
  }
  Deactivate(state);
  MaybeFinish(state);
}

void Foreman::MaybeFinish(QueryState* state) {
  if (state->spill != nullptr) return;  // CompleteSpill comes back here
  if (state->running == 0 && (state->cancelling || state->query->IsFinished())) Finish(state);
}

void Foreman::Finish(QueryState* state) {
  Deactivate(state);
  if (state->held_since_ns >= 0) state->memory_wait_ns += MonotonicNanos() - state->held_since_ns;
  QueryOutcome outcome;
  outcome.query_id = state->id;
  outcome.status = state->cancelling ? state->cancel_status : absl::OkStatus();
  outcome.submit_ns = state->submit_ns;
  outcome.first_dispatch_ns = state->first_dispatch_ns;
  outcome.finish_ns = MonotonicNanos();
  ++finished_queries_;
  sum_submit_to_finish_ns_ += outcome.finish_ns - outcome.submit_ns;
  sum_submit_to_first_dispatch_ns_ +=
      (outcome.first_dispatch_ns >= 0 ? outcome.first_dispatch_ns : outcome.finish_ns) - outcome.submit_ns;
  outcome.work_orders_executed = state->executed;
  outcome.work_orders_skipped = state->skipped;
  outcome.busy_ns = state->busy_ns;
  outcome.memory_wait_ns = state->memory_wait_ns;
  outcome.suspensions = load_controller_.suspensions(state);
  outcome.final_progress = state->query->Progress();
  outcome.learning = agent_.stats(state->history);
  agent_.RemoveQuery(state->history);
  std::shared_ptr<QueryHandle::State> handle = std::move(state->handle);
  state->query.reset();  // the Foreman is done with the query before anyone can see the outcome
  {
    std::lock_guard<std::mutex> lock(ids_mu_);
    active_ids_.erase(state->id);
  }
  const std::vector<LoadController::Owner> admitted = load_controller_.Leave(state);
  queries_.erase(state->id);
  handle->Complete(std::move(outcome));
  for (LoadController::Owner owner : admitted) Activate(static_cast<QueryState*>(owner));
}

void Foreman::ReconcilePoolSize() {
  const int live = loads_.num_dispatchable();
  if (desired_workers_ < live) {
    std::vector<int> ids = loads_.dispatchable_ids();
    std::sort(ids.rbegin(), ids.rend());  // the most recently numbered go first
    for (int i = 0; i < live - desired_workers_; ++i) {
      loads_.DisableWorker(ids[i]);
      absl::Status removed = pool_->RemoveWorker(ids[i]);
      if (!removed.ok()) LOG(WARNING) << "removing worker " << ids[i] << ": " << removed.message();
    }
  } else if (desired_workers_ > live && loads_.num_disabled() == 0) {
    // Growing waits until every removed worker has retired: the pool may then hand out a retired worker's id
    // again, and no stale retire notice for that id can still be on its way.
    for (int i = live; i < desired_workers_; ++i) {
      absl::StatusOr<int> id = pool_->AddWorker();
      if (!id.ok()) {
        LOG(WARNING) << "cannot grow the worker pool: " << id.status().message();
        desired_workers_ = i;
        break;
      }
      int node = 0;
      for (const WorkerInfo& worker : pool_->Workers()) {
        if (worker.worker_id == *id) node = worker.node;
      }
      loads_.AddWorker(*id, node);
    }
  }
}

int Foreman::PendingTarget() const {
  const double mean = agent_.global_mean_ns();
  if (mean <= 0) return options_.min_pending_per_worker;
  const double wanted = std::ceil(static_cast<double>(options_.target_pending_ns) / mean);
  return static_cast<int>(std::clamp(wanted, static_cast<double>(options_.min_pending_per_worker),
                                     static_cast<double>(options_.max_pending_per_worker)));
}

int Foreman::ChooseWorker(int preferred_node) const {
  if (options_.pending_by_count) return loads_.Choose(preferred_node, PendingTarget());
  return loads_.Choose(preferred_node, PendingLimit{options_.min_pending_per_worker, options_.max_pending_per_worker,
                                                    static_cast<double>(options_.target_pending_ns)});
}

void Foreman::Dispatch() {
  while (true) {
    int worker = ChooseWorker(-1);
    if (worker < 0) break;
    // With time slices the worker's slice goes on or passes to the query with the least virtual time;
    // otherwise the policy draws.
    const bool slices = SlicesOn();
    QueryState* state = slices ? NextInSlice(slice_holders_[worker]) : PickPayingBackRides();
    if (state == nullptr) {
      // No admitted query has work ready: an idle worker lets a query waiting for a slot in (the cap on admitted
      // queries is work-conserving, load_controller.h).
      if (loads_.pending(worker) > 0) break;
      const std::vector<LoadController::Owner> admitted = load_controller_.AdmitBeyondTheCap();
      if (admitted.empty()) break;
      for (LoadController::Owner owner : admitted) Activate(static_cast<QueryState*>(owner));
      continue;
    }
    slice_holders_[worker] = slices ? state : nullptr;
    std::unique_ptr<WorkOrderTask> work_order = state->query->NextWorkOrder();
    if (work_order == nullptr) {
      enforcer_.SetReady(state->slot, false);
      continue;
    }
    if (work_order->preferred_node() >= 0) {
      const int preferred = ChooseWorker(work_order->preferred_node());
      if (preferred != worker) {
        slice_holders_[preferred] = slice_holders_[worker];  // the slice moves with the work order
        slice_holders_[worker] = nullptr;
        worker = preferred;
      }
    }
    if (slices) ChargeAtDispatch(state, work_order.get());
    NoteDispatched(state, work_order.get(), worker);
    std::vector<std::unique_ptr<Task>>& out = outgoing_[worker];
    if (out.empty()) touched_workers_.push_back(worker);
    WorkOrderTask* leader = work_order.get();
    out.push_back(std::move(work_order));
    if (leader->shared_scan_key() != 0 && state->query->scan_sharing() != ScanSharing::kOff) {
      ShareScan(state, leader, worker, &out);
    }
    if (out.size() >= kSubmitEvery) CHECK(pool_->Submit(worker, &out)) << "worker " << worker << " is gone";
    RefreshAfterTake(state);
  }
  FlushOutgoing();
}

Foreman::QueryState* Foreman::PickPayingBackRides() {
  auto* state = static_cast<QueryState*>(enforcer_.Pick());
  // A query that got CPU by riding along in shared scans pays it back by passing over its picks: each pass
  // counts as one predicted work order. Bounded, so that a round where every query owes still dispatches.
  for (int pass = 0; state != nullptr && pass < kMaxPassesPerPick && state->ride_debt_ns > 0; ++pass) {
    const double predicted = enforcer_.candidate(state->slot).predicted_ns;
    state->ride_debt_ns -= std::max<int64_t>(1000, static_cast<int64_t>(predicted));
    auto* next = static_cast<QueryState*>(enforcer_.Pick());
    if (next == nullptr) break;
    state = next;
  }
  return state;
}

double Foreman::PredictedWorkOrderNs(const QueryState* state) const {
  const PolicyCandidate& candidate = enforcer_.candidate(state->slot);
  const double predicted = candidate.has_prediction ? candidate.predicted_ns : agent_.global_mean_ns();
  return predicted > 0 ? predicted : 1e6;  // nothing learned yet anywhere: assume 1 ms
}

void Foreman::ChargeAtDispatch(QueryState* state, WorkOrderTask* work_order) {
  const double predicted = PredictedWorkOrderNs(state);
  work_order->set_charged_ns(predicted);
  ChargeVirtualTime(state, predicted);
}

void Foreman::NoteDispatched(QueryState* state, WorkOrderTask* work_order, int worker) {
  work_order->BindForDispatch(state, &state->cancelled);
  ++state->running;
  ++dispatched_;
  if (state->first_dispatch_ns < 0) state->first_dispatch_ns = MonotonicNanos();
  work_order->set_predicted_ns(PredictedWorkOrderNs(state));
  loads_.OnDispatched(worker, work_order->predicted_ns());
}

void Foreman::ShareScan(QueryState* state, WorkOrderTask* leader, int worker, std::vector<std::unique_ptr<Task>>* out) {
  const bool same_priority_only = RanksByPriority(enforcer_.policy().kind);
  const bool batch = state->query->scan_sharing() == ScanSharing::kBatch;
  // Batch mode's runtime similarity compares each query's predicted work-order time (pooled over its operators).
  double leader_ns = 0;
  const bool leader_predicted = batch && agent_.Predict(state->history, &leader_ns);
  // Batch mode: the members' working sets (what they hold in the pool: hash tables, aggregation states) and the
  // block itself must fit the cache together.
  int64_t cache_left = shared_scan_cache_bytes_ - state->query->MemoryFootprint() - (int64_t{2} << 20);
  // With time slices a query rides along only while its virtual time is less than a slice ahead of the least
  // one (as rides' debt is bounded without slices), so that rides do not give it its share in bursts.
  const bool slices = SlicesOn();
  const double ride_limit_ns =
      slices ? LeastReadyVirtualTime(nullptr) + static_cast<double>(options_.dispatch_run_ns) : 0;
  int members = 1;
  for (auto& [id, other_state] : queries_) {
    QueryState* other = other_state.get();
    if (other == state || other->slot < 0 || other->cancelling) continue;
    if (other->query->scan_sharing() == ScanSharing::kOff) continue;
    if (same_priority_only && other->priority != state->priority) continue;
    // Its rides not yet paid back are bounded (about one queue of work), so that passing over its picks later
    // stays short and the policy's shares hold over short windows too.
    if (other->ride_debt_ns > options_.shared_scan_ride_debt_ns) continue;
    if (slices && !(other->virtual_time_ns < ride_limit_ns)) continue;
    int64_t working_set = 0;
    if (batch) {
      working_set = other->query->MemoryFootprint();
      if (working_set > cache_left) continue;
      double member_ns = 0;
      if (leader_predicted && agent_.Predict(other->history, &member_ns) &&
          std::max(member_ns, leader_ns) > options_.shared_scan_similarity * std::min(member_ns, leader_ns)) {
        continue;
      }
    }
    std::unique_ptr<WorkOrderTask> member = other->query->TakeSharedScanWorkOrder(leader->shared_scan_key());
    if (member == nullptr) continue;
    cache_left -= working_set;
    member->set_shared(true, /*rode_along=*/true);
    if (slices) ChargeAtDispatch(other, member.get());
    NoteDispatched(other, member.get(), worker);
    out->push_back(std::move(member));
    RefreshAfterTake(other);
    ++members;
    ++shared_;
  }
  if (members > 1) {
    leader->set_shared(true);
    ++shared_;
  }
}

void Foreman::FlushOutgoing() {
  for (int worker : touched_workers_) {
    if (!outgoing_[worker].empty()) CHECK(pool_->Submit(worker, &outgoing_[worker])) << "worker " << worker;
  }
  touched_workers_.clear();
}

ForemanStats Foreman::CollectStats() const {
  ForemanStats stats;
  stats.policy = PolicyName(enforcer_.policy());
  stats.workers = loads_.num_dispatchable();
  stats.pending_target = PendingTarget();
  stats.active_queries = static_cast<int>(queries_.size());
  stats.dispatched = dispatched_;
  stats.executed = executed_;
  stats.shared = shared_;
  stats.mean_prediction_error = agent_.total_error(PredictorKind::kWindowMean);
  stats.autoregression_prediction_error = agent_.total_error(PredictorKind::kAutoregression);
  stats.remaining_estimate_error = agent_.remaining_estimate_error();
  stats.load = load_controller_.Stats();
  stats.finished_queries = finished_queries_;
  stats.sum_submit_to_finish_ns = sum_submit_to_finish_ns_;
  stats.sum_submit_to_first_dispatch_ns = sum_submit_to_first_dispatch_ns_;
  return stats;
}

}  // namespace tessera
