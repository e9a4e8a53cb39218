#include "expressions/in_list_probe.h"

#include <algorithm>
#include <cmath>
#include <cstring>
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

// Up to the first 8 bytes of `s` as a word, read with fixed-size loads inside the string: 4-8 bytes as the first
// and the last four (overlapping), 1-3 as the first, middle and last byte. With the size, the word determines
// the bytes it covers.
uint64_t PrefixWord(std::string_view s) {
  const auto* p = reinterpret_cast<const uint8_t*>(s.data());
  const size_t size = std::min<size_t>(s.size(), 8);
  if (size >= 4) {
    uint32_t first, last;
    std::memcpy(&first, p, 4);
    std::memcpy(&last, p + size - 4, 4);
    return first | (static_cast<uint64_t>(last) << 32);
  }
  if (size == 0) return 0;
  return p[0] | (static_cast<uint64_t>(p[size / 2]) << 8) | (static_cast<uint64_t>(p[size - 1]) << 16);
}

// Owns the bytes that the string_views of its SortedProbe point to. Short lists (TPC-H's `l_shipmode IN ('MAIL',
// 'SHIP')`) compare each value's size and PrefixWord first, so that a row costs no memcmp call unless its first
// 8 bytes match a value longer than 8 bytes; long lists use the sorted probe's binary search.
class StringProbe final : public InListProbe {
 public:
  explicit StringProbe(std::vector<std::string> strings) : strings_(std::move(strings)), probe_(Views(strings_)) {
    for (const std::string& s : strings_) short_list_.push_back({s.size(), PrefixWord(s), s.data()});
  }
  void Probe(const ColumnVector& input, ActiveRows rows, uint8_t* match) const override {
    if (short_list_.size() > kLinearScanLimit) {
      probe_.Probe(input, rows, match);
      return;
    }
    const std::string_view* in = input.strings();
    const bool nulls = input.has_nulls();
    ForEachRow(rows, [&](uint32_t r) {
      if (nulls && input.IsNull(r)) return;
      const std::string_view x = in[r];
      const uint64_t word = PrefixWord(x);
      bool found = false;
      for (const Entry& v : short_list_) {
        found |= v.size == x.size() && v.word == word &&
                 (v.size <= 8 || std::memcmp(v.data + 8, x.data() + 8, v.size - 8) == 0);
      }
      match[r] = found;
    });
  }

 private:
  struct Entry {
    size_t size;
    uint64_t word;
    const char* data;
  };
  static std::vector<std::string_view> Views(const std::vector<std::string>& strings) {
    return std::vector<std::string_view>(strings.begin(), strings.end());
  }
  std::vector<std::string> strings_;
  SortedProbe<std::string_view> probe_;
  std::vector<Entry> short_list_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<InListProbe>> InListProbe::Make(const Type& type, const std::vector<Value>& values) {
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
      return absl::InvalidArgumentError(absl::StrCat("IN lists of type ", type.ToString(), " are not supported"));
  }
}

}  // namespace tessera
