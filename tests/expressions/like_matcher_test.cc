// LikeMatcher against a reference matcher on random texts long enough for the vectorized substring search (32
// candidate positions a step, a masked or byte-wise last step), and a text that ends at a page boundary.
#include "expressions/like_matcher.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"

namespace tessera {
namespace {

// Textbook LIKE over bytes: '%' any sequence, '_' one byte (the texts here are ASCII, so one character).
bool ReferenceLike(std::string_view text, std::string_view pattern) {
  std::vector<std::vector<char>> memo(pattern.size() + 1, std::vector<char>(text.size() + 1, -1));
  auto match = [&](auto&& self, size_t p, size_t t) -> bool {
    char& cached = memo[p][t];
    if (cached >= 0) return cached;
    bool result;
    if (p == pattern.size()) {
      result = t == text.size();
    } else if (pattern[p] == '%') {
      result = self(self, p + 1, t) || (t < text.size() && self(self, p, t + 1));
    } else {
      result = t < text.size() && (pattern[p] == '_' || pattern[p] == text[t]) && self(self, p + 1, t + 1);
    }
    cached = result;
    return result;
  };
  return match(match, 0, 0);
}

std::string RandomString(std::mt19937& rng, size_t max_size, std::string_view alphabet) {
  const size_t size = std::uniform_int_distribution<size_t>(0, max_size)(rng);
  std::string s(size, ' ');
  for (char& c : s) c = alphabet[std::uniform_int_distribution<size_t>(0, alphabet.size() - 1)(rng)];
  return s;
}

TEST(LikeMatcherTest, AgreesWithReferenceOnLongTexts) {
  std::mt19937 rng(15);
  const std::string_view alphabet = "abcs";  // few letters: many first- and last-byte candidates that fail
  int matched = 0;
  for (int round = 0; round < 3000; ++round) {
    // Patterns: pieces of 0-9 letters joined by '%' (empty pieces give '%%'), sometimes anchored, sometimes '_'.
    std::string pattern;
    const int pieces = std::uniform_int_distribution<int>(1, 4)(rng);
    if (rng() % 2) pattern += '%';
    for (int i = 0; i < pieces; ++i) {
      if (i > 0) pattern += '%';
      pattern += RandomString(rng, 9, alphabet);
      if (rng() % 8 == 0) pattern += '_';
    }
    if (rng() % 2) pattern += '%';
    const LikeMatcher matcher(pattern);
    for (int t = 0; t < 20; ++t) {
      const std::string text = RandomString(rng, 140, alphabet);
      const bool expected = ReferenceLike(text, pattern);
      matched += expected;
      ASSERT_EQ(matcher.Matches(text), expected) << "'" << text << "' LIKE '" << pattern << "'";
    }
  }
  EXPECT_GT(matched, 1000);  // both outcomes are exercised
}

TEST(LikeMatcherTest, NeedleAtEveryOffset) {
  // "special" at each offset of texts of 0-100 bytes that have near misses ("specia", "s......l") around it.
  const LikeMatcher contains("%special%");
  const LikeMatcher segments("%special%requests%");
  for (size_t size = 0; size <= 100; ++size) {
    std::string filler(size, 'x');
    for (size_t i = 0; i + 8 <= size; i += 9) filler.replace(i, 8, "sxxxxxxl");
    EXPECT_FALSE(contains.Matches(filler)) << filler;
    for (size_t at = 0; at + 7 <= size; ++at) {
      std::string text = filler;
      text.replace(at, 7, "special");
      EXPECT_TRUE(contains.Matches(text)) << text;
      EXPECT_FALSE(segments.Matches(text)) << text;
      EXPECT_TRUE(segments.Matches(text + "requests")) << text;
      EXPECT_FALSE(segments.Matches("requests" + text)) << text;
    }
  }
}

TEST(LikeMatcherTest, ReadsNothingPastTheText) {
  // A text whose last byte is the last byte of a readable page, the next page inaccessible: a load past the
  // text's end would fault.
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* mapped = mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mapped, MAP_FAILED);
  char* base = static_cast<char*>(mapped);
  ASSERT_EQ(mprotect(base + page, page, PROT_NONE), 0);
  std::memset(base, 'a', page);
  const LikeMatcher absent("%ab%");
  const LikeMatcher present("%aaa%");
  const LikeMatcher at_end("%aab%");
  for (size_t size = 0; size <= 100; ++size) {
    const std::string_view text(base + page - size, size);
    EXPECT_FALSE(absent.Matches(text));
    EXPECT_EQ(present.Matches(text), size >= 3);
    EXPECT_FALSE(at_end.Matches(text));
  }
  base[page - 1] = 'b';
  for (size_t size = 3; size <= 100; ++size) EXPECT_TRUE(at_end.Matches(std::string_view(base + page - size, size)));
  munmap(mapped, 2 * page);
}

}  // namespace
}  // namespace tessera
