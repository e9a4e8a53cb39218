// Comparison kernels over one physical type: a boolean-vector form and a selection form (for filters), each
// for vector-vector and vector-constant operands. Strings compare bytewise, doubles as IEEE (NaN is
// unordered), intervals as PostgreSQL orders them (1 month = 30 days, 1 day = 24 hours; ties by months, then
// days).

#include <string_view>

#include "absl/strings/str_cat.h"
#include "catalog/text_conversion.h"
#include "expressions/vector_kernels.h"

namespace tessera {
namespace {

inline int CompareIntervals(const Interval& a, const Interval& b) {
  auto total = [](const Interval& i) {
    return (static_cast<int128>(i.months) * 30 + i.days) * kMicrosPerDay + i.micros;
  };
  const int128 ta = total(a), tb = total(b);
  if (ta != tb) return ta < tb ? -1 : 1;
  if (a.months != b.months) return a.months < b.months ? -1 : 1;
  if (a.days != b.days) return a.days < b.days ? -1 : 1;
  return 0;
}

template <ComparisonOp kOp, typename T>
inline bool Apply(const T& a, const T& b) {
  if constexpr (std::is_same_v<T, Interval>) {
    const int c = CompareIntervals(a, b);
    switch (kOp) {
      case ComparisonOp::kEqual:
        return c == 0;
      case ComparisonOp::kNotEqual:
        return c != 0;
      case ComparisonOp::kLess:
        return c < 0;
      case ComparisonOp::kLessEqual:
        return c <= 0;
      case ComparisonOp::kGreater:
        return c > 0;
      case ComparisonOp::kGreaterEqual:
        return c >= 0;
    }
    return false;
  } else {
    switch (kOp) {
      case ComparisonOp::kEqual:
        return a == b;
      case ComparisonOp::kNotEqual:
        return a != b;
      case ComparisonOp::kLess:
        return a < b;
      case ComparisonOp::kLessEqual:
        return a <= b;
      case ComparisonOp::kGreater:
        return a > b;
      case ComparisonOp::kGreaterEqual:
        return a >= b;
    }
    return false;
  }
}

// Strings of NULL rows may be garbage views, so string kernels never touch them.
template <typename T>
constexpr bool kMustSkipNulls = std::is_same_v<T, std::string_view>;

template <typename T, ComparisonOp kOp, bool kConst>
void CompareValues(const ColumnVector& left, const ColumnVector& right, ActiveRows rows, uint8_t* out) {
  const T* a = left.values<T>();
  const T* b = right.values<T>();
  if (kMustSkipNulls<T> && (left.has_nulls() || right.has_nulls())) {
    ForEachRow(rows, [&](uint32_t r) {
      out[r] = !left.IsNull(r) && !right.IsNull(kConst ? 0 : r) && Apply<kOp>(a[r], b[kConst ? 0 : r]);
    });
    return;
  }
  if constexpr (kConst) {
    const T c = b[0];
    ForEachRow(rows, [&](uint32_t r) { out[r] = Apply<kOp>(a[r], c); });
  } else {
    ForEachRow(rows, [&](uint32_t r) { out[r] = Apply<kOp>(a[r], b[r]); });
  }
}

// Whether `value` equals the short `constant` (at most kShortConstantBytes), comparing the length and then the bytes
// inline: no memcmp call per row (TPC-H Q10's l_returnflag = 'R' spent more in the call than in the compare).
constexpr size_t kShortConstantBytes = 16;
inline bool EqualsShortConstant(std::string_view value, std::string_view constant) {
  if (value.size() != constant.size()) return false;
  bool equal = true;
  for (size_t i = 0; i < constant.size(); ++i) equal &= value[i] == constant[i];
  return equal;
}

template <typename T, ComparisonOp kOp, bool kConst>
uint32_t CompareSelect(const ColumnVector& left, const ColumnVector& right, ActiveRows rows, uint32_t* out) {
  const T* a = left.values<T>();
  const T* b = right.values<T>();
  uint32_t n = 0;
  if (kConst && right.IsNull(0)) return 0;
  if (!left.has_nulls() && (kConst || !right.has_nulls())) {
    if constexpr (kConst && std::is_same_v<T, std::string_view> &&
                  (kOp == ComparisonOp::kEqual || kOp == ComparisonOp::kNotEqual)) {
      const std::string_view c = b[0];
      if (c.size() <= kShortConstantBytes) {
        ForEachRow(rows, [&](uint32_t r) {
          out[n] = r;
          n += EqualsShortConstant(a[r], c) == (kOp == ComparisonOp::kEqual);
        });
        return n;
      }
    }
    if constexpr (kConst) {
      const T c = b[0];
      ForEachRow(rows, [&](uint32_t r) {
        out[n] = r;
        n += Apply<kOp>(a[r], c);
      });
    } else {
      ForEachRow(rows, [&](uint32_t r) {
        out[n] = r;
        n += Apply<kOp>(a[r], b[r]);
      });
    }
    return n;
  }
  ForEachRow(rows, [&](uint32_t r) {
    const bool keep = !left.IsNull(r) && (kConst || !right.IsNull(r)) && Apply<kOp>(a[r], b[kConst ? 0 : r]);
    out[n] = r;
    n += keep;
  });
  return n;
}

template <typename T, ComparisonOp kOp>
ComparisonPlan PlanFor(bool constant) {
  if (constant) return {&CompareValues<T, kOp, true>, &CompareSelect<T, kOp, true>};
  return {&CompareValues<T, kOp, false>, &CompareSelect<T, kOp, false>};
}

template <typename T>
ComparisonPlan PlanForType(ComparisonOp op, bool constant) {
  switch (op) {
    case ComparisonOp::kEqual:
      return PlanFor<T, ComparisonOp::kEqual>(constant);
    case ComparisonOp::kNotEqual:
      return PlanFor<T, ComparisonOp::kNotEqual>(constant);
    case ComparisonOp::kLess:
      return PlanFor<T, ComparisonOp::kLess>(constant);
    case ComparisonOp::kLessEqual:
      return PlanFor<T, ComparisonOp::kLessEqual>(constant);
    case ComparisonOp::kGreater:
      return PlanFor<T, ComparisonOp::kGreater>(constant);
    case ComparisonOp::kGreaterEqual:
      return PlanFor<T, ComparisonOp::kGreaterEqual>(constant);
  }
  return {};
}

}  // namespace

absl::StatusOr<ComparisonPlan> PlanComparison(ComparisonOp op, const Type& type, bool right_is_constant) {
  switch (PhysicalTypeOf(type)) {
    case PhysicalType::kBool:
      return PlanForType<uint8_t>(op, right_is_constant);
    case PhysicalType::kInt32:
      return PlanForType<int32_t>(op, right_is_constant);
    case PhysicalType::kInt64:
      return PlanForType<int64_t>(op, right_is_constant);
    case PhysicalType::kInt128:
      return PlanForType<int128>(op, right_is_constant);
    case PhysicalType::kDouble:
      return PlanForType<double>(op, right_is_constant);
    case PhysicalType::kInterval:
      return PlanForType<Interval>(op, right_is_constant);
    case PhysicalType::kString:
      return PlanForType<std::string_view>(op, right_is_constant);
    case PhysicalType::kNone:
      break;
  }
  return absl::InvalidArgumentError(absl::StrCat("cannot compare values of type ", type.ToString()));
}

}  // namespace tessera
