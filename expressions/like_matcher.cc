#include "expressions/like_matcher.h"

#include <cstring>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace tessera {
namespace {

inline bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() && std::memcmp(text.data(), prefix.data(), prefix.size()) == 0;
}
inline bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() &&
         std::memcmp(text.data() + text.size() - suffix.size(), suffix.data(), suffix.size()) == 0;
}
// First occurrence of `needle` (non-empty) in `text`. Candidate positions are those where both the needle's
// first and its last byte match, tested 32 positions at a time (two unaligned loads and compares); only those
// get a memcmp of the bytes between. A search on the first byte alone (memchr) stopped at every 's' of
// "special" in TPC-H's o_comment and called memcmp there. Loads never pass the end of `text`: the last
// partial step uses a masked load (AVX-512) or goes byte by byte.
inline const char* Find(const char* text, size_t size, std::string_view needle) {
  const size_t m = needle.size();
  if (size < m) return nullptr;
  if (m == 1) return static_cast<const char*>(std::memchr(text, needle[0], size));
  const size_t positions = size - m + 1;  // candidate starts 0 .. positions - 1
  const char* const middle = needle.data() + 1;
  const size_t middle_size = m - 2;
  size_t i = 0;
#if defined(__AVX2__)
  const __m256i first = _mm256_set1_epi8(needle[0]);
  const __m256i last = _mm256_set1_epi8(needle[m - 1]);
  for (; i + 32 <= positions; i += 32) {
    const __m256i at_first = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(text + i));
    const __m256i at_last = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(text + i + m - 1));
    uint32_t mask = static_cast<uint32_t>(
        _mm256_movemask_epi8(_mm256_and_si256(_mm256_cmpeq_epi8(at_first, first), _mm256_cmpeq_epi8(at_last, last))));
    while (mask != 0) {
      const size_t at = i + static_cast<size_t>(__builtin_ctz(mask));
      if (std::memcmp(text + at + 1, middle, middle_size) == 0) return text + at;
      mask &= mask - 1;
    }
  }
#if defined(__AVX512BW__) && defined(__AVX512VL__)
  if (i < positions) {
    const __mmask32 valid = (1u << (positions - i)) - 1;  // positions - i < 32 here
    const __m256i at_first = _mm256_maskz_loadu_epi8(valid, text + i);
    const __m256i at_last = _mm256_maskz_loadu_epi8(valid, text + i + m - 1);
    uint32_t mask = _mm256_mask_cmpeq_epi8_mask(valid, at_first, first) & _mm256_cmpeq_epi8_mask(at_last, last);
    while (mask != 0) {
      const size_t at = i + static_cast<size_t>(__builtin_ctz(mask));
      if (std::memcmp(text + at + 1, middle, middle_size) == 0) return text + at;
      mask &= mask - 1;
    }
    return nullptr;
  }
#endif
#endif
  for (; i < positions; ++i) {
    if (text[i] == needle[0] && text[i + m - 1] == needle[m - 1] &&
        std::memcmp(text + i + 1, middle, middle_size) == 0) {
      return text + i;
    }
  }
  return nullptr;
}
inline bool Contains(std::string_view text, std::string_view needle) {
  return needle.empty() || Find(text.data(), text.size(), needle) != nullptr;
}
// Bytes of the UTF-8 character starting with `lead` (1 for continuation or invalid bytes).
inline size_t CharacterBytes(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead & 0xE0) == 0xC0) return 2;
  if ((lead & 0xF0) == 0xE0) return 3;
  if ((lead & 0xF8) == 0xF0) return 4;
  return 1;
}

}  // namespace

LikeMatcher::LikeMatcher(std::string pattern) : pattern_(std::move(pattern)) {
  const std::string_view p = pattern_;
  if (p.find('_') != std::string_view::npos) {
    kind_ = Kind::kGeneral;
    return;
  }
  // Only '%' wildcards: split into literal segments.
  anchored_start_ = p.empty() || p.front() != '%';
  anchored_end_ = p.empty() || p.back() != '%';
  size_t begin = 0;
  bool any_wildcard = false;
  while (begin <= p.size()) {
    size_t end = p.find('%', begin);
    if (end == std::string_view::npos) end = p.size();
    else any_wildcard = true;
    if (end > begin) segments_.emplace_back(p.substr(begin, end - begin));
    begin = end + 1;
  }
  if (!any_wildcard) {
    kind_ = Kind::kExact;
    literal_ = pattern_;
  } else if (segments_.empty()) {
    kind_ = Kind::kAny;
  } else if (segments_.size() == 1 && anchored_start_ && !anchored_end_) {
    kind_ = Kind::kPrefix;
    literal_ = segments_[0];
  } else if (segments_.size() == 1 && !anchored_start_ && anchored_end_) {
    kind_ = Kind::kSuffix;
    literal_ = segments_[0];
  } else if (segments_.size() == 1 && !anchored_start_ && !anchored_end_) {
    kind_ = Kind::kContains;
    literal_ = segments_[0];
  } else {
    kind_ = Kind::kSegments;
  }
}

bool LikeMatcher::MatchSegments(std::string_view text) const {
  size_t first = 0, last = segments_.size();
  size_t pos = 0, limit = text.size();
  if (anchored_start_) {
    if (!StartsWith(text, segments_[0])) return false;
    pos = segments_[0].size();
    first = 1;
  }
  if (anchored_end_ && last > first) {
    const std::string& suffix = segments_[last - 1];
    if (text.size() < pos + suffix.size() || !EndsWith(text, suffix)) return false;
    limit = text.size() - suffix.size();
    --last;
  }
  for (size_t i = first; i < last; ++i) {
    const std::string& segment = segments_[i];
    if (limit - pos < segment.size()) return false;
    const char* found = Find(text.data() + pos, limit - pos, segment);
    if (found == nullptr) return false;
    pos = static_cast<size_t>(found - text.data()) + segment.size();
  }
  return true;
}

// Iterative wildcard matching with backtracking to the last '%' (linear for most patterns, O(n*m) worst
// case).
bool LikeMatcher::MatchGeneral(std::string_view text) const {
  const std::string_view p = pattern_;
  size_t t = 0, i = 0;
  size_t star_pattern = std::string_view::npos, star_text = 0;
  while (t < text.size()) {
    if (i < p.size() && p[i] == '%') {
      star_pattern = ++i;
      star_text = t;
      continue;
    }
    if (i < p.size() && p[i] == '_') {
      t += CharacterBytes(static_cast<unsigned char>(text[t]));
      if (t > text.size()) t = text.size();
      ++i;
      continue;
    }
    if (i < p.size() && p[i] == text[t]) {
      ++i;
      ++t;
      continue;
    }
    if (star_pattern == std::string_view::npos) return false;
    i = star_pattern;
    star_text += CharacterBytes(static_cast<unsigned char>(text[star_text]));
    if (star_text > text.size()) star_text = text.size();
    t = star_text;
  }
  while (i < p.size() && p[i] == '%') ++i;
  return i == p.size();
}

template <LikeMatcher::Kind kKind>
bool LikeMatcher::MatchAs(std::string_view text) const {
  switch (kKind) {
    case Kind::kAny:
      return true;
    case Kind::kExact:
      return text == literal_;
    case Kind::kPrefix:
      return StartsWith(text, literal_);
    case Kind::kSuffix:
      return EndsWith(text, literal_);
    case Kind::kContains:
      return Contains(text, literal_);
    case Kind::kSegments:
      return MatchSegments(text);
    case Kind::kGeneral:
      return MatchGeneral(text);
  }
  return false;
}

bool LikeMatcher::Matches(std::string_view text) const {
  switch (kind_) {
    case Kind::kAny:
      return MatchAs<Kind::kAny>(text);
    case Kind::kExact:
      return MatchAs<Kind::kExact>(text);
    case Kind::kPrefix:
      return MatchAs<Kind::kPrefix>(text);
    case Kind::kSuffix:
      return MatchAs<Kind::kSuffix>(text);
    case Kind::kContains:
      return MatchAs<Kind::kContains>(text);
    case Kind::kSegments:
      return MatchAs<Kind::kSegments>(text);
    case Kind::kGeneral:
      return MatchAs<Kind::kGeneral>(text);
  }
  return false;
}

template <LikeMatcher::Kind kKind>
uint32_t LikeMatcher::SelectAs(const ColumnVector& input, ActiveRows rows, bool negated, uint32_t* out) const {
  const std::string_view* strings = input.strings();
  uint32_t n = 0;
  if (!input.has_nulls()) {
    ForEachRow(rows, [&](uint32_t r) {
      out[n] = r;
      n += MatchAs<kKind>(strings[r]) != negated;
    });
  } else {
    ForEachRow(rows, [&](uint32_t r) {
      out[n] = r;
      n += !input.IsNull(r) && MatchAs<kKind>(strings[r]) != negated;
    });
  }
  return n;
}

uint32_t LikeMatcher::Select(const ColumnVector& input, ActiveRows rows, bool negated, uint32_t* out) const {
  switch (kind_) {
    case Kind::kAny:
      return SelectAs<Kind::kAny>(input, rows, negated, out);
    case Kind::kExact:
      return SelectAs<Kind::kExact>(input, rows, negated, out);
    case Kind::kPrefix:
      return SelectAs<Kind::kPrefix>(input, rows, negated, out);
    case Kind::kSuffix:
      return SelectAs<Kind::kSuffix>(input, rows, negated, out);
    case Kind::kContains:
      return SelectAs<Kind::kContains>(input, rows, negated, out);
    case Kind::kSegments:
      return SelectAs<Kind::kSegments>(input, rows, negated, out);
    case Kind::kGeneral:
      return SelectAs<Kind::kGeneral>(input, rows, negated, out);
  }
  return 0;
}

void LikeMatcher::Values(const ColumnVector& input, ActiveRows rows, bool negated, uint8_t* out) const {
  const std::string_view* strings = input.strings();
  ForEachRow(rows, [&](uint32_t r) { out[r] = !input.IsNull(r) && Matches(strings[r]) != negated; });
}

}  // namespace tessera
