#include "expressions/aggregate_function.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <new>
#include <string_view>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "catalog/text_conversion.h"
#include "expressions/decimal_arithmetic.h"
#include "expressions/vector_kernels.h"

namespace tessera {

// __int128 that only needs 8-byte alignment, so every state is at most 8-byte aligned (GCC lets a typedef
// lower alignment; loads and stores then avoid aligned 16-byte instructions).
typedef __int128 Int128Align8 __attribute__((aligned(8)));

struct AggregateFunction::Ops {
  size_t size;
  size_t alignment;
  bool needs_arena;
  void (*initialize)(uint8_t* state);
  absl::Status (*update_scalar)(uint8_t* state, const ColumnVector& input, ActiveRows rows,
                                StringArena* arena);
  absl::Status (*update_grouped)(uint8_t* const* states, size_t offset, const ColumnVector& input,
                                 ActiveRows rows, StringArena* arena);
  absl::Status (*merge)(uint8_t* destination, const uint8_t* source, StringArena* arena);
  absl::StatusOr<Value> (*finalize)(const AggregateFunction& function, const uint8_t* state);
};

namespace {

absl::Status DecimalOverflow() { return absl::OutOfRangeError("DECIMAL overflow"); }

ActiveRows RowsOf(const ColumnVector& input, const SelectionVector* selection) {
  return selection != nullptr ? ActiveRows{selection->rows.data(), selection->count}
                              : ActiveRows{nullptr, input.size()};
}

template <typename State>
State& StateAt(uint8_t* bytes) {
  return *std::launder(reinterpret_cast<State*>(bytes));
}
template <typename State>
const State& StateAt(const uint8_t* bytes) {
  return *std::launder(reinterpret_cast<const State*>(bytes));
}

// ---- COUNT(*) and COUNT(x) ----
struct CountState {
  int64_t count;
};

struct CountStar {
  static void Initialize(uint8_t* state) { new (state) CountState{0}; }
  static absl::Status UpdateScalar(uint8_t* state, const ColumnVector&, ActiveRows rows, StringArena*) {
    StateAt<CountState>(state).count += rows.count;
    return absl::OkStatus();
  }
  static absl::Status UpdateGrouped(uint8_t* const* states, size_t offset, const ColumnVector&,
                                    ActiveRows rows, StringArena*) {
    ForEachRow(rows, [&](uint32_t r) { ++StateAt<CountState>(states[r] + offset).count; });
    return absl::OkStatus();
  }
  static absl::Status Merge(uint8_t* destination, const uint8_t* source, StringArena*) {
    StateAt<CountState>(destination).count += StateAt<CountState>(source).count;
    return absl::OkStatus();
  }
  static absl::StatusOr<Value> Finalize(const AggregateFunction&, const uint8_t* state) {
    return Value::BigInt(StateAt<CountState>(state).count);
  }
};

struct CountValues {
  static absl::Status UpdateScalar(uint8_t* state, const ColumnVector& input, ActiveRows rows, StringArena*) {
    int64_t count = 0;
    if (input.type().id() == TypeId::kNull) {
      count = 0;
    } else if (!input.has_nulls()) {
      count = rows.count;
    } else {
      ForEachRow(rows, [&](uint32_t r) { count += !input.IsNull(r); });
    }
    StateAt<CountState>(state).count += count;
    return absl::OkStatus();
  }
  static absl::Status UpdateGrouped(uint8_t* const* states, size_t offset, const ColumnVector& input,
                                    ActiveRows rows, StringArena*) {
    if (input.type().id() == TypeId::kNull) return absl::OkStatus();
    if (!input.has_nulls()) {
      ForEachRow(rows, [&](uint32_t r) { ++StateAt<CountState>(states[r] + offset).count; });
    } else {
      ForEachRow(rows,
                 [&](uint32_t r) { StateAt<CountState>(states[r] + offset).count += !input.IsNull(r); });
    }
    return absl::OkStatus();
  }
};

// ---- generic drivers over an aggregate policy Agg with State, Add, Merge ----
// Agg::Add / Agg::Merge return true on overflow (only the 128-bit decimal sums can overflow).
template <typename Agg, typename T>
absl::Status ScalarDriver(uint8_t* state, const ColumnVector& input, ActiveRows rows, StringArena* arena) {
  using State = typename Agg::State;
  State local;
  std::memcpy(&local, state, sizeof(State));  // a local copy keeps the accumulator in registers
  const T* values = input.values<T>();
  bool overflow = false;
  if (!input.has_nulls()) {
    ForEachRow(rows, [&](uint32_t r) { overflow |= Agg::Add(local, values[r], arena); });
  } else {
    ForEachRow(rows, [&](uint32_t r) {
      if (!input.IsNull(r)) overflow |= Agg::Add(local, values[r], arena);
    });
  }
  std::memcpy(state, &local, sizeof(State));
  return overflow ? DecimalOverflow() : absl::OkStatus();
}

template <typename Agg, typename T>
absl::Status GroupedDriver(uint8_t* const* states, size_t offset, const ColumnVector& input, ActiveRows rows,
                           StringArena* arena) {
  using State = typename Agg::State;
  const T* values = input.values<T>();
  bool overflow = false;
  if (!input.has_nulls()) {
    ForEachRow(rows, [&](uint32_t r) {
      overflow |= Agg::Add(StateAt<State>(states[r] + offset), values[r], arena);
    });
  } else {
    ForEachRow(rows, [&](uint32_t r) {
      if (!input.IsNull(r)) overflow |= Agg::Add(StateAt<State>(states[r] + offset), values[r], arena);
    });
  }
  return overflow ? DecimalOverflow() : absl::OkStatus();
}

template <typename Agg>
void InitializeDriver(uint8_t* state) {
  new (state) typename Agg::State();
  Agg::Initialize(StateAt<typename Agg::State>(state));
}

template <typename Agg>
absl::Status MergeDriver(uint8_t* destination, const uint8_t* source, StringArena* arena) {
  using State = typename Agg::State;
  return Agg::Merge(StateAt<State>(destination), StateAt<State>(source), arena) ? DecimalOverflow()
                                                                                : absl::OkStatus();
}

template <typename Agg>
absl::StatusOr<Value> FinalizeDriver(const AggregateFunction& function, const uint8_t* state) {
  return Agg::Finalize(StateAt<typename Agg::State>(state), function);
}

template <typename Agg, typename T>
constexpr AggregateFunction::Ops MakeOps() {
  using State = typename Agg::State;
  static_assert(std::is_trivially_copyable_v<State> && alignof(State) <= 8);
  return {sizeof(State),         alignof(State),         Agg::kNeedsArena,  &InitializeDriver<Agg>,
          &ScalarDriver<Agg, T>, &GroupedDriver<Agg, T>, &MergeDriver<Agg>, &FinalizeDriver<Agg>};
}

// ---- SUM / AVG over exact types (INTEGER, BIGINT, DECIMAL): 128-bit sum and a count ----
struct ExactSumState {
  Int128Align8 sum;
  int64_t count;
};

template <typename T>
struct ExactSum {
  using State = ExactSumState;
  static constexpr bool kNeedsArena = false;
  static void Initialize(State& s) {
    s.sum = 0;
    s.count = 0;
  }
  static bool Add(State& s, T value, StringArena*) {
    ++s.count;
    if constexpr (sizeof(T) == 16) {
      int128 sum;
      const bool overflow = __builtin_add_overflow(static_cast<int128>(s.sum), value, &sum);
      s.sum = sum;
      return overflow;
    } else {
      s.sum += value;  // |value| < 2^63: 2^64 rows would be needed to overflow 128 bits
      return false;
    }
  }
  static bool Merge(State& d, const State& s, StringArena*) {
    d.count += s.count;
    int128 sum;
    const bool overflow =
        __builtin_add_overflow(static_cast<int128>(d.sum), static_cast<int128>(s.sum), &sum);
    d.sum = sum;
    return overflow;
  }
  static absl::StatusOr<Value> Finalize(const State& s, const AggregateFunction& function) {
    const Type& result = function.result_type();
    if (s.count == 0) return Value::Null(result);
    const int128 sum = s.sum;
    if (result.id() == TypeId::kBigInt) {
      if (sum > std::numeric_limits<int64_t>::max() || sum < std::numeric_limits<int64_t>::min()) {
        return absl::OutOfRangeError("BIGINT out of range");
      }
      return Value::BigInt(static_cast<int64_t>(sum));
    }
    if (!FitsDecimalPrecision(sum, result.precision())) return DecimalOverflow();
    return Value::Decimal(sum, result);
  }
};

template <typename T>
struct ExactAverage : ExactSum<T> {
  using State = ExactSumState;
  static absl::StatusOr<Value> Finalize(const State& s, const AggregateFunction& function) {
    const Type& result = function.result_type();
    if (s.count == 0) return Value::Null(result);
    if (result.id() == TypeId::kDouble) {
      return Value::Double(static_cast<double>(static_cast<int128>(s.sum)) / static_cast<double>(s.count));
    }
    const int input_scale = function.input_type().scale();
    int128 average;
    if (!ScaledDivide(s.sum, result.scale() - input_scale, s.count, PowerOfTen(result.precision()),
                      &average)) {
      return DecimalOverflow();
    }
    return Value::Decimal(average, result);
  }
};

// ---- SUM / AVG over DOUBLE ----
struct DoubleSumState {
  double sum;
  int64_t count;
};

struct DoubleSum {
  using State = DoubleSumState;
  static constexpr bool kNeedsArena = false;
  static void Initialize(State& s) {
    s.sum = 0;
    s.count = 0;
  }
  static bool Add(State& s, double value, StringArena*) {
    s.sum += value;
    ++s.count;
    return false;
  }
  static bool Merge(State& d, const State& s, StringArena*) {
    d.sum += s.sum;
    d.count += s.count;
    return false;
  }
  static absl::StatusOr<Value> Finalize(const State& s, const AggregateFunction& function) {
    if (s.count == 0) return Value::Null(function.result_type());
    return Value::Double(s.sum);
  }
};

struct DoubleAverage : DoubleSum {
  static absl::StatusOr<Value> Finalize(const State& s, const AggregateFunction& function) {
    if (s.count == 0) return Value::Null(function.result_type());
    return Value::Double(s.sum / static_cast<double>(s.count));
  }
};

// ---- MIN / MAX over fixed-width types ----
template <typename T>
inline bool Less(const T& a, const T& b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return false;  // NaN is above every number
    if (std::isnan(b)) return true;
  }
  return a < b;
}

template <typename T>
struct ExtremeState {
  T value;
  uint8_t has_value;
};
template <>
struct ExtremeState<int128> {
  Int128Align8 value;  // relaxed to 8-byte alignment
  uint8_t has_value;
};


template <typename T, bool kMax>
struct Extreme {
  using State = ExtremeState<T>;
  static constexpr bool kNeedsArena = false;
  static void Initialize(State& s) {
    s.value = T{};
    s.has_value = 0;
  }
  static bool Better(const T& candidate, const T& current) {
    return kMax ? Less(current, candidate) : Less(candidate, current);
  }
  static bool Add(State& s, T value, StringArena*) {
    if (!s.has_value || Better(value, static_cast<T>(s.value))) {
      s.value = value;
      s.has_value = 1;
    }
    return false;
  }
  static bool Merge(State& d, const State& s, StringArena* arena) {
    if (s.has_value) Add(d, static_cast<T>(s.value), arena);
    return false;
  }
  static absl::StatusOr<Value> Finalize(const State& s, const AggregateFunction& function) {
    const Type& type = function.result_type();
    if (!s.has_value) return Value::Null(type);
    if constexpr (std::is_floating_point_v<T>) {
      return Value::Double(s.value);
    } else {
      return Value::FromExact(static_cast<int128>(static_cast<T>(s.value)), type);
    }
  }
};

// ---- MIN / MAX over strings ----
struct StringExtremeState {
  static constexpr uint32_t kInlineBytes = 15;
  uint32_t size;
  uint32_t capacity;  // of `heap`
  char* heap;         // arena bytes, used when size > kInlineBytes
  uint8_t has_value;
  char inline_bytes[kInlineBytes];

  std::string_view view() const {
    return size <= kInlineBytes ? std::string_view(inline_bytes, size) : std::string_view(heap, size);
  }
};
static_assert(sizeof(StringExtremeState) == 32);

template <bool kMax>
struct StringExtreme {
  using State = StringExtremeState;
  static constexpr bool kNeedsArena = true;
  static void Initialize(State& s) {
    s.size = 0;
    s.capacity = 0;
    s.heap = nullptr;
    s.has_value = 0;
  }
  static bool Better(std::string_view candidate, std::string_view current) {
    return kMax ? current < candidate : candidate < current;
  }
  static void Assign(State& s, std::string_view value, StringArena* arena) {
    const uint32_t size = static_cast<uint32_t>(value.size());
    if (size <= State::kInlineBytes) {
      std::memcpy(s.inline_bytes, value.data(), size);
    } else {
      if (size > s.capacity) {
        // Geometric growth bounds the abandoned arena bytes by about twice the final capacity.
        const uint32_t capacity = std::max(size, 2 * s.capacity);
        s.heap = arena->Allocate(capacity);
        s.capacity = capacity;
      }
      std::memcpy(s.heap, value.data(), size);
    }
    s.size = size;
    s.has_value = 1;
  }
  static bool Add(State& s, std::string_view value, StringArena* arena) {
    if (!s.has_value || Better(value, s.view())) Assign(s, value, arena);
    return false;
  }
  static bool Merge(State& d, const State& s, StringArena* arena) {
    if (s.has_value) Add(d, s.view(), arena);
    return false;
  }
  static absl::StatusOr<Value> Finalize(const State& s, const AggregateFunction& function) {
    if (!s.has_value) return Value::Null(function.result_type());
    return Value::String(std::string(s.view()), function.result_type());
  }
  // Scalar update: the batch's extreme is found among views first, so at most one copy per batch.
  static absl::Status UpdateScalar(uint8_t* state, const ColumnVector& input, ActiveRows rows,
                                   StringArena* arena) {
    const std::string_view* values = input.strings();
    bool found = false;
    std::string_view best;
    ForEachRow(rows, [&](uint32_t r) {
      if (input.IsNull(r)) return;
      if (!found || Better(values[r], best)) {
        best = values[r];
        found = true;
      }
    });
    if (found) Add(StateAt<State>(state), best, arena);
    return absl::OkStatus();
  }
};

template <bool kMax>
constexpr AggregateFunction::Ops MakeStringExtremeOps() {
  AggregateFunction::Ops ops = MakeOps<StringExtreme<kMax>, std::string_view>();
  ops.update_scalar = &StringExtreme<kMax>::UpdateScalar;
  return ops;
}

constexpr AggregateFunction::Ops kCountStarOps = {
    sizeof(CountState),     alignof(CountState),      false,
    &CountStar::Initialize, &CountStar::UpdateScalar, &CountStar::UpdateGrouped,
    &CountStar::Merge,      &CountStar::Finalize};
constexpr AggregateFunction::Ops kCountOps = {
    sizeof(CountState),     alignof(CountState),        false,
    &CountStar::Initialize, &CountValues::UpdateScalar, &CountValues::UpdateGrouped,
    &CountStar::Merge,      &CountStar::Finalize};

template <typename Agg, typename T>
const AggregateFunction::Ops kOps = MakeOps<Agg, T>();
template <bool kMax>
const AggregateFunction::Ops kStringExtremeOps = MakeStringExtremeOps<kMax>();

template <bool kMax>
const AggregateFunction::Ops* ExtremeOps(const Type& type) {
  switch (PhysicalTypeOf(type)) {
    case PhysicalType::kBool:
      return &kOps<Extreme<uint8_t, kMax>, uint8_t>;
    case PhysicalType::kInt32:
      return &kOps<Extreme<int32_t, kMax>, int32_t>;
    case PhysicalType::kInt64:
      return &kOps<Extreme<int64_t, kMax>, int64_t>;
    case PhysicalType::kInt128:
      return &kOps<Extreme<int128, kMax>, int128>;
    case PhysicalType::kDouble:
      return &kOps<Extreme<double, kMax>, double>;
    case PhysicalType::kString:
      return &kStringExtremeOps<kMax>;
    default:
      return nullptr;
  }
}

const char* KindName(AggregateFunctionKind kind) {
  switch (kind) {
    case AggregateFunctionKind::kCountStar:
    case AggregateFunctionKind::kCount:
      return "COUNT";
    case AggregateFunctionKind::kSum:
      return "SUM";
    case AggregateFunctionKind::kAvg:
      return "AVG";
    case AggregateFunctionKind::kMin:
      return "MIN";
    case AggregateFunctionKind::kMax:
      return "MAX";
  }
  return "?";
}

}  // namespace

absl::StatusOr<AggregateFunction> AggregateFunction::Create(AggregateFunctionKind kind,
                                                            const Type& input_type) {
  const TypeId id = input_type.id();
  const Ops* ops = nullptr;
  Type result = input_type;
  switch (kind) {
    case AggregateFunctionKind::kCountStar:
      return AggregateFunction(kind, Type::Null(), Type::BigInt(), &kCountStarOps);
    case AggregateFunctionKind::kCount:
      return AggregateFunction(kind, input_type, Type::BigInt(), &kCountOps);
    case AggregateFunctionKind::kSum:
      if (id == TypeId::kInteger) {
        ops = &kOps<ExactSum<int32_t>, int32_t>;
        result = Type::BigInt();
      } else if (id == TypeId::kBigInt) {
        ops = &kOps<ExactSum<int64_t>, int64_t>;
        result = Type::Decimal(kMaxDecimalPrecision, 0);
      } else if (id == TypeId::kDecimal) {
        ops =
            input_type.IsWideDecimal() ? &kOps<ExactSum<int128>, int128> : &kOps<ExactSum<int64_t>, int64_t>;
        result = Type::Decimal(kMaxDecimalPrecision, input_type.scale());
      } else if (id == TypeId::kDouble) {
        ops = &kOps<DoubleSum, double>;
      }
      break;
    case AggregateFunctionKind::kAvg:
      if (id == TypeId::kInteger) {
        ops = &kOps<ExactAverage<int32_t>, int32_t>;
        result = Type::Double();
      } else if (id == TypeId::kBigInt) {
        ops = &kOps<ExactAverage<int64_t>, int64_t>;
        result = Type::Double();
      } else if (id == TypeId::kDecimal) {
        ops = input_type.IsWideDecimal() ? &kOps<ExactAverage<int128>, int128>
                                         : &kOps<ExactAverage<int64_t>, int64_t>;
        result = Type::Decimal(kMaxDecimalPrecision, std::max(input_type.scale(), 6));
      } else if (id == TypeId::kDouble) {
        ops = &kOps<DoubleAverage, double>;
      }
      break;
    case AggregateFunctionKind::kMin:
      if (id != TypeId::kInterval) ops = ExtremeOps<false>(input_type);
      break;
    case AggregateFunctionKind::kMax:
      if (id != TypeId::kInterval) ops = ExtremeOps<true>(input_type);
      break;
  }
  if (ops == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("aggregate ", KindName(kind), " is not defined for ", input_type.ToString()));
  }
  return AggregateFunction(kind, input_type, result, ops);
}

size_t AggregateFunction::state_size() const { return ops_->size; }
size_t AggregateFunction::state_alignment() const { return ops_->alignment; }
bool AggregateFunction::needs_arena() const { return ops_->needs_arena; }

std::string AggregateFunction::ToString() const {
  if (kind_ == AggregateFunctionKind::kCountStar) return "COUNT(*)";
  return absl::StrCat(KindName(kind_), "(", input_type_.ToString(), ")");
}

void AggregateFunction::Initialize(uint8_t* state) const { ops_->initialize(state); }

absl::Status AggregateFunction::UpdateScalar(uint8_t* state, const ColumnVector& input,
                                             const SelectionVector* selection, StringArena* arena) const {
  return ops_->update_scalar(state, input, RowsOf(input, selection), arena);
}

absl::Status AggregateFunction::UpdateGrouped(uint8_t* const* states, size_t state_offset,
                                              const ColumnVector& input, const SelectionVector* selection,
                                              StringArena* arena) const {
  return ops_->update_grouped(states, state_offset, input, RowsOf(input, selection), arena);
}

absl::Status AggregateFunction::Merge(uint8_t* destination, const uint8_t* source, StringArena* arena) const {
  return ops_->merge(destination, source, arena);
}

absl::StatusOr<Value> AggregateFunction::Finalize(const uint8_t* state) const {
  return ops_->finalize(*this, state);
}

absl::Status AggregateFunction::FinalizeBatch(const uint8_t* const* states, size_t state_offset,
                                              uint32_t count, ColumnVector* out) const {
  out->set_type(result_type_);
  out->ResetOwned(count);
  for (uint32_t i = 0; i < count; ++i) {
    absl::StatusOr<Value> value = ops_->finalize(*this, states[i] + state_offset);
    if (!value.ok()) return value.status();
    SetRowValue(*value, i, out);
  }
  return absl::OkStatus();
}

}  // namespace tessera
