#include "expressions/in_list_probe.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"

namespace tessera {
namespace {

constexpr size_t kLinearScanLimit = 8;

template <typename T>
class SortedProbe final : public InListProbe {
 public:
  explicit SortedProbe(std::vector<T> values) : values_(std::move(values)) {
    std::sort(values_.begin(), values_.end());
    values_.erase(std::unique(values_.begin(), values_.end()), values_.end());
  }

  void Probe(const ColumnVector& input, ActiveRows rows, uint8_t* match) const override {
    const T* in = input.values<T>();
    const T* begin = values_.data();
    const T* end = begin + values_.size();
    const bool skip_nulls = std::is_same_v<T, std::string_view> && input.has_nulls();
    if (values_.size() <= kLinearScanLimit) {
      ForEachRow(rows, [&](uint32_t r) {
        if (skip_nulls && input.IsNull(r)) return;
        const T x = in[r];
        bool found = false;
        for (const T* v = begin; v != end; ++v) found |= *v == x;
        match[r] = found;
      });
      return;
    }
    ForEachRow(rows, [&](uint32_t r) {
      if (skip_nulls && input.IsNull(r)) return;
      match[r] = std::binary_search(begin, end, in[r]);
    });
  }

 private:
  std::vector<T> values_;
};

// Owns the bytes that the string_views of its SortedProbe point to.
class StringProbe final : public InListProbe {
 public:
  explicit StringProbe(std::vector<std::string> strings)
      : strings_(std::move(strings)), probe_(Views(strings_)) {}
  void Probe(const ColumnVector& input, ActiveRows rows, uint8_t* match) const override {
    probe_.Probe(input, rows, match);
  }

 private:
  static std::vector<std::string_view> Views(const std::vector<std::string>& strings) {
    return std::vector<std::string_view>(strings.begin(), strings.end());
  }
  std::vector<std::string> strings_;
  SortedProbe<std::string_view> probe_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<InListProbe>> InListProbe::Make(const Type& type,
                                                               const std::vector<Value>& values) {
  switch (PhysicalTypeOf(type)) {
    case PhysicalType::kBool: {
      std::vector<uint8_t> v;
      for (const Value& value : values) v.push_back(value.AsBool() ? 1 : 0);
      return std::unique_ptr<InListProbe>(new SortedProbe<uint8_t>(std::move(v)));
    }
    case PhysicalType::kInt32: {
      std::vector<int32_t> v;
      for (const Value& value : values) v.push_back(static_cast<int32_t>(value.AsInt64()));
      return std::unique_ptr<InListProbe>(new SortedProbe<int32_t>(std::move(v)));
    }
    case PhysicalType::kInt64: {
      std::vector<int64_t> v;
      for (const Value& value : values) v.push_back(static_cast<int64_t>(value.AsInt128()));
      return std::unique_ptr<InListProbe>(new SortedProbe<int64_t>(std::move(v)));
    }
    case PhysicalType::kInt128: {
      std::vector<int128> v;
      for (const Value& value : values) v.push_back(value.AsInt128());
      return std::unique_ptr<InListProbe>(new SortedProbe<int128>(std::move(v)));
    }
    case PhysicalType::kDouble: {
      std::vector<double> v;
      for (const Value& value : values) {
        if (!std::isnan(value.AsDouble())) v.push_back(value.AsDouble());  // NaN equals nothing (IEEE)
      }
      return std::unique_ptr<InListProbe>(new SortedProbe<double>(std::move(v)));
    }
    case PhysicalType::kString: {
      std::vector<std::string> v;
      for (const Value& value : values) v.push_back(value.AsString());
      return std::unique_ptr<InListProbe>(new StringProbe(std::move(v)));
    }
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("IN lists of type ", type.ToString(), " are not supported"));
  }
}

}  // namespace tessera
