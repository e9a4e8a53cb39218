#pragma once
// LIKE pattern matching without a regex library (internal to expressions/). The pattern is analysed once:
// 'abc' (exact), 'abc%' (prefix), '%abc' (suffix), '%abc%' (substring search), patterns with only '%'
// wildcards (ordered segment search: anchored prefix/suffix, substring search for the middle segments), and a
// general backtracking matcher when '_' occurs. Substring search tests 32 positions at a time for the
// needle's first and last byte and memcmps the bytes between at the candidates; it never reads past the text. '%' matches any
// sequence of bytes, '_' exactly one UTF-8 character. There is no escape character (LIKE ... ESCAPE is not
// supported by the binder). Immutable after construction; thread-safe.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "expressions/column_vector.h"
#include "expressions/vector_kernels.h"

namespace tessera {

class LikeMatcher {
 public:
  enum class Kind { kAny, kExact, kPrefix, kSuffix, kContains, kSegments, kGeneral };

  explicit LikeMatcher(std::string pattern);

  Kind kind() const { return kind_; }
  bool Matches(std::string_view text) const;

  // Active non-NULL rows of `input` whose match result differs from `negated` (i.e. LIKE is TRUE, or NOT LIKE
  // is TRUE) are written to `out` (may alias rows.rows); returns their count.
  uint32_t Select(const ColumnVector& input, ActiveRows rows, bool negated, uint32_t* out) const;
  // out[r] = matches(input[r]) != negated for active rows; NULL rows get 0 (NULLs are the caller's business).
  void Values(const ColumnVector& input, ActiveRows rows, bool negated, uint8_t* out) const;

 private:
  template <Kind kKind>
  bool MatchAs(std::string_view text) const;
  template <Kind kKind>
  uint32_t SelectAs(const ColumnVector& input, ActiveRows rows, bool negated, uint32_t* out) const;
  bool MatchSegments(std::string_view text) const;
  bool MatchGeneral(std::string_view text) const;

  std::string pattern_;
  Kind kind_ = Kind::kGeneral;
  std::string literal_;                // exact / prefix / suffix / contains
  std::vector<std::string> segments_;  // kSegments: the literal parts between '%'
  bool anchored_start_ = false;
  bool anchored_end_ = false;
};

}  // namespace tessera
