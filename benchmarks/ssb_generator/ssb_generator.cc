#include "benchmarks/ssb_generator/ssb_generator.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>

#include "common/fast_random.h"

namespace tessera::ssb {
namespace {

// ---------------------------------------------------------------------------------------------------------------
// Constants of the SSB specification / ssb-dbgen.

constexpr int64_t kCustomerBase = 30'000;
constexpr int64_t kSupplierBase = 2'000;
constexpr int64_t kPartBase = 200'000;
constexpr int64_t kOrderBase = 1'500'000;
constexpr int kNumDates = 2'557;  // 1992-01-01 .. 1998-12-31
// Orders are dated 1992-01-01 .. 1998-08-02 (day indices 0..2405): dbgen's O_ODATE_MAX keeps 151 days
// (max ship delay 121 + max receipt delay 30) before the end of the calendar.
constexpr int kLastOrderDateIndex = kNumDates - 151 - 1;
constexpr int kMinCommitDelay = 30;
constexpr int kMaxCommitDelay = 90;
constexpr int kCustomerMortality = 3;  // dbgen: customers whose key is a multiple of 3 never order

constexpr int64_t kOrdersPerChunk = 10'000;
constexpr int64_t kRowsPerChunk = 10'000;
constexpr size_t kMaxRowBytes = 256;  // upper bound of one formatted row of any table

struct Nation {
  const char* name;
  int region;
};
// TPC-H's 25 nations in dbgen order (the index is the nation key; phone country code = 10 + index).
constexpr std::array<Nation, 25> kNations = {{
    {"ALGERIA", 0},      {"ARGENTINA", 1},  {"BRAZIL", 1},  {"CANADA", 1},         {"EGYPT", 4},
    {"ETHIOPIA", 0},     {"FRANCE", 3},     {"GERMANY", 3}, {"INDIA", 2},          {"INDONESIA", 2},
    {"IRAN", 4},         {"IRAQ", 4},       {"JAPAN", 2},   {"JORDAN", 4},         {"KENYA", 0},
    {"MOROCCO", 0},      {"MOZAMBIQUE", 0}, {"PERU", 1},    {"CHINA", 2},          {"ROMANIA", 3},
    {"SAUDI ARABIA", 4}, {"VIETNAM", 2},    {"RUSSIA", 3},  {"UNITED KINGDOM", 3}, {"UNITED STATES", 1},
}};
constexpr std::array<const char*, 5> kRegions = {"AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"};

constexpr std::array<const char*, 5> kSegments = {"AUTOMOBILE", "BUILDING", "FURNITURE", "MACHINERY", "HOUSEHOLD"};
constexpr std::array<const char*, 5> kPriorities = {"1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECIFIED", "5-LOW"};
constexpr std::array<const char*, 7> kShipModes = {"REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB"};

// TPC-H's 92 colors (dists.dss "colors").
constexpr std::array<const char*, 92> kColors = {
    "almond",   "antique", "aquamarine", "azure",     "beige",      "bisque",    "black",     "blanched", "blue",
    "blush",    "brown",   "burlywood",  "burnished", "chartreuse", "chiffon",   "chocolate", "coral",    "cornflower",
    "cornsilk", "cream",   "cyan",       "dark",      "deep",       "dim",       "dodger",    "drab",     "firebrick",
    "floral",   "forest",  "frosted",    "gainsboro", "ghost",      "goldenrod", "green",     "grey",     "honeydew",
    "hot",      "indian",  "ivory",      "khaki",     "lace",       "lavender",  "lawn",      "lemon",    "light",
    "lime",     "linen",   "magenta",    "maroon",    "medium",     "metallic",  "midnight",  "mint",     "misty",
    "moccasin", "navajo",  "navy",       "olive",     "orange",     "orchid",    "pale",      "papaya",   "peach",
    "peru",     "pink",    "plum",       "powder",    "puff",       "purple",    "red",       "rose",     "rosy",
    "royal",    "saddle",  "salmon",     "sandy",     "seashell",   "sienna",    "sky",       "slate",    "smoke",
    "snow",     "spring",  "steel",      "tan",       "thistle",    "tomato",    "turquoise", "violet",   "wheat",
    "white",    "yellow"};

// TPC-H part types: 6 x 5 x 5 = 150 combinations, uniform.
constexpr std::array<const char*, 6> kTypeSyllable1 = {"STANDARD", "SMALL", "MEDIUM", "LARGE", "ECONOMY", "PROMO"};
constexpr std::array<const char*, 5> kTypeSyllable2 = {"ANODIZED", "BURNISHED", "PLATED", "POLISHED", "BRUSHED"};
constexpr std::array<const char*, 5> kTypeSyllable3 = {"TIN", "NICKEL", "BRASS", "STEEL", "COPPER"};
// TPC-H containers: 5 x 8 = 40 combinations, uniform.
constexpr std::array<const char*, 5> kContainerSyllable1 = {"SM", "LG", "MED", "JUMBO", "WRAP"};
constexpr std::array<const char*, 8> kContainerSyllable2 = {"CASE", "BOX", "BAG", "JAR", "PKG", "PACK", "CAN", "DRUM"};

// dbgen's a_rnd alphabet (64 symbols, 6 random bits each).
constexpr char kAddressAlphabet[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ ,";
static_assert(sizeof(kAddressAlphabet) == 65);
constexpr int kAddressMinLength = 6;   // dbgen V_STR: C_ADDR_LEN / S_ADDR_LEN (15) * 0.4
constexpr int kAddressMaxLength = 24;  // ... * 1.6

constexpr std::array<const char*, 12> kMonthNames = {"January",   "February", "March",    "April",
                                                     "May",       "June",     "July",     "August",
                                                     "September", "October",  "November", "December"};
constexpr std::array<const char*, 7> kWeekdayNames = {"Sunday",   "Monday", "Tuesday", "Wednesday",
                                                      "Thursday", "Friday", "Saturday"};

// ---------------------------------------------------------------------------------------------------------------
// Random numbers: xoshiro256** seeded through SplitMix64; bounded draws with Lemire's unbiased method (uses the
// unsigned __int128 of GCC and Clang).

uint64_t SplitMix64(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t Mix(uint64_t a, uint64_t b) {
  uint64_t state = a ^ (b * 0xD6E8FEB86659FD93ull);
  return SplitMix64(&state);
}

uint64_t ChunkSeed(uint64_t seed, SsbTable table, int64_t chunk) {
  uint64_t s = Mix(seed, 0x55B5'DB6E'0000'0000ull);
  s = Mix(s, static_cast<uint64_t>(table) + 1);
  return Mix(s, static_cast<uint64_t>(chunk) + 1);
}

class Rng {
 public:
  explicit Rng(uint64_t seed) : random_(seed) {}

  uint64_t Next() { return random_.Next(); }

  // Uniform in [0, n), n >= 1.
  uint64_t Below(uint64_t n) {
    unsigned __int128 m = static_cast<unsigned __int128>(Next()) * n;
    uint64_t low = static_cast<uint64_t>(m);
    if (low < n) {
      const uint64_t threshold = (0 - n) % n;
      while (low < threshold) {
        m = static_cast<unsigned __int128>(Next()) * n;
        low = static_cast<uint64_t>(m);
      }
    }
    return static_cast<uint64_t>(m >> 64);
  }

  // Uniform in [low, high], low <= high.
  int64_t Uniform(int64_t low, int64_t high) {
    return low + static_cast<int64_t>(Below(static_cast<uint64_t>(high - low) + 1));
  }

 private:
  FastRandom random_;
};

// A pseudo-random permutation of [0, n): a 4-round Feistel network on the smallest even-width power of two
// >= n, with cycle walking. O(1) per element, so any chunk can evaluate it for its own rows.
class RandomPermutation {
 public:
  RandomPermutation(uint64_t n, uint64_t key) : n_(n) {
    int bits = 2;
    while (bits < 62 && (uint64_t{1} << bits) < n) bits += 2;
    half_bits_ = bits / 2;
    mask_ = (uint64_t{1} << half_bits_) - 1;
    for (int r = 0; r < 4; ++r) keys_[r] = Mix(key, static_cast<uint64_t>(r) + 1);
  }

  // x < n.
  uint64_t operator()(uint64_t x) const {
    do {
      x = Encrypt(x);
    } while (x >= n_);
    return x;
  }

 private:
  uint64_t Encrypt(uint64_t x) const {
    uint64_t left = x >> half_bits_;
    uint64_t right = x & mask_;
    for (uint64_t key : keys_) {
      const uint64_t next = left ^ (Mix(key, right) & mask_);
      left = right;
      right = next;
    }
    return (left << half_bits_) | right;
  }

  uint64_t n_;
  int half_bits_;
  uint64_t mask_;
  uint64_t keys_[4];
};

// Assigns each of `rows` rows one of `labels` labels so that the labels are used as evenly as possible: every
// label floor(rows / labels) or ceil(rows / labels) times (a random subset of distinct labels when rows <
// labels). Each row's label is uniformly distributed, as with independent draws, but the counts per label are
// exact: sampling without replacement from a balanced population. Which row gets which label depends on `key`
// only.
class BalancedLabels {
 public:
  BalancedLabels(uint64_t rows, uint64_t labels, uint64_t key)
      : labels_(labels), row_order_(rows, Mix(key, 1)), label_order_(labels, Mix(key, 2)) {}

  // row < rows.
  uint64_t operator()(uint64_t row) const { return label_order_(row_order_(row) % labels_); }

 private:
  uint64_t labels_;
  RandomPermutation row_order_;
  RandomPermutation label_order_;
};

uint64_t TableKey(uint64_t seed, SsbTable table) {
  return Mix(Mix(seed, 0xBA1A'9CED'0000'0000ull), static_cast<uint64_t>(table) + 1);
}

// ---------------------------------------------------------------------------------------------------------------
// Formatting helpers: write through a raw pointer into space the caller reserved.

constexpr char kDigitPairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

inline char* PutUint(char* p, uint64_t v) {
  char tmp[20];
  char* end = tmp + sizeof(tmp);
  char* s = end;
  while (v >= 100) {
    const uint64_t r = v % 100;
    v /= 100;
    s -= 2;
    std::memcpy(s, kDigitPairs + 2 * r, 2);
  }
  if (v >= 10) {
    s -= 2;
    std::memcpy(s, kDigitPairs + 2 * v, 2);
  } else {
    *--s = static_cast<char>('0' + v);
  }
  const size_t n = static_cast<size_t>(end - s);
  std::memcpy(p, s, n);
  return p + n;
}

// Zero-padded to `width` digits (v must fit).
inline char* PutPadded(char* p, uint64_t v, int width) {
  for (int i = width - 1; i >= 0; --i) {
    p[i] = static_cast<char>('0' + v % 10);
    v /= 10;
  }
  return p + width;
}

inline char* PutBytes(char* p, const char* s, size_t n) {
  std::memcpy(p, s, n);
  return p + n;
}

inline char* PutStr(char* p, std::string_view s) { return PutBytes(p, s.data(), s.size()); }

inline char* Sep(char* p) {
  *p = '|';
  return p + 1;
}

// ---------------------------------------------------------------------------------------------------------------
// The calendar of the date dimension: day index 0 = 1992-01-01.

struct Day {
  int year;
  int month;        // 1..12
  int day;          // 1..31
  int day_of_year;  // 1..366
  int weekday;      // 0 = Sunday .. 6 = Saturday
  bool last_in_month;
  char key[8];  // YYYYMMDD
};

bool IsLeap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int DaysInMonth(int y, int m) {
  static constexpr int kDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeap(y) ? 29 : kDays[m - 1];
}

class Calendar {
 public:
  Calendar() {
    int y = 1992, m = 1, d = 1, doy = 1;
    int weekday = 3;  // 1992-01-01 was a Wednesday
    for (Day& day : days_) {
      day.year = y;
      day.month = m;
      day.day = d;
      day.day_of_year = doy;
      day.weekday = weekday;
      day.last_in_month = d == DaysInMonth(y, m);
      PutPadded(day.key, static_cast<uint64_t>(y * 10000 + m * 100 + d), 8);
      weekday = (weekday + 1) % 7;
      ++doy;
      if (++d > DaysInMonth(y, m)) {
        d = 1;
        if (++m > 12) {
          m = 1;
          ++y;
          doy = 1;
        }
      }
    }
  }
  const Day& operator[](int index) const { return days_[index]; }

 private:
  std::array<Day, kNumDates> days_;
};

const Calendar& GetCalendar() {
  static const Calendar calendar;
  return calendar;
}

// ssb-dbgen's selling seasons (first match): Nov-Dec Christmas, May-Aug Summer, Jan-Mar Winter, Apr Spring,
// Sep-Oct Fall.
const char* SellingSeason(int month) {
  if (month >= 11) return "Christmas";
  if (month >= 5 && month <= 8) return "Summer";
  if (month <= 3) return "Winter";
  if (month == 4) return "Spring";
  return "Fall";
}

// ssb-dbgen's holiday list.
bool IsHoliday(int month, int day) {
  static constexpr int kHolidays[][2] = {{12, 24}, {1, 1},  {2, 20}, {4, 20},  {5, 20},
                                         {7, 20},  {8, 20}, {9, 20}, {10, 20}, {11, 20}};
  for (const auto& h : kHolidays) {
    if (h[0] == month && h[1] == day) return true;
  }
  return false;
}

// ---------------------------------------------------------------------------------------------------------------
// Shared column generators.

// dbgen's sparse order keys: of every 32 keys the first 8 are used.
int64_t SparseOrderKey(int64_t order_number) { return ((order_number >> 3) << 5) | (order_number & 7); }

// dbgen's P_RETAILPRICE in cents: 90000 + ((key / 10) mod 20001) + 100 * (key mod 1000).
int64_t RetailPriceCents(int64_t partkey) { return 90000 + (partkey / 10) % 20001 + (partkey % 1000) * 100; }

// Uniform customer key; keys that are multiples of 3 are nudged to a neighbour as dbgen does, so a third of
// the customers never order.
int64_t DrawCustomer(Rng& rng, int64_t customers) {
  int64_t key = rng.Uniform(1, customers);
  int64_t delta = 1;
  while (key % kCustomerMortality == 0) {
    key = std::min(key + delta, customers);
    delta = -delta;
  }
  return key;
}

char* PutAddress(char* p, Rng& rng) {
  const int length = static_cast<int>(rng.Uniform(kAddressMinLength, kAddressMaxLength));
  uint64_t bits = 0;
  for (int i = 0; i < length; ++i) {
    if (i % 10 == 0) bits = rng.Next();
    *p++ = kAddressAlphabet[bits & 63];
    bits >>= 6;
  }
  return p;
}

// City: the nation's name cut or blank-padded to 9 characters, then one digit 0..9 ('UNITED KI1').
char* PutCity(char* p, int nation, int digit) {
  const char* name = kNations[nation].name;
  const size_t n = std::min<size_t>(std::strlen(name), 9);
  std::memcpy(p, name, n);
  std::memset(p + n, ' ', 9 - n);
  p[9] = static_cast<char>('0' + digit);
  return p + 10;
}

// The geography of customers and suppliers: 250 cities (25 nations x 10), balanced over the table.
constexpr uint64_t kNumCities = kNations.size() * 10;
// The part hierarchy: 1,000 brands (5 manufacturers x 5 categories x 40 brands), balanced over the table.
constexpr uint64_t kNumBrands = 5 * 5 * 40;

// Phone: CC-AAA-EEE-NNNN with CC = 10 + nation key.
char* PutPhone(char* p, int nation, Rng& rng) {
  p = PutPadded(p, static_cast<uint64_t>(10 + nation), 2);
  *p++ = '-';
  p = PutPadded(p, static_cast<uint64_t>(rng.Uniform(100, 999)), 3);
  *p++ = '-';
  p = PutPadded(p, static_cast<uint64_t>(rng.Uniform(100, 999)), 3);
  *p++ = '-';
  return PutPadded(p, static_cast<uint64_t>(rng.Uniform(1000, 9999)), 4);
}

// ---------------------------------------------------------------------------------------------------------------
// Table generators. Each writes rows for units [begin, end) of one chunk.

struct Range {
  int64_t begin;
  int64_t end;
};

Range ChunkRange(SsbTable table, const ScaleCounts& counts, int64_t chunk) {
  const int64_t per_chunk = UnitsPerChunk(table);
  const int64_t begin = chunk * per_chunk;
  return {begin, std::min(begin + per_chunk, NumUnits(table, counts))};
}

// customer: c_custkey|c_name|c_address|c_city|c_nation|c_region|c_phone|c_mktsegment|
int64_t GenerateCustomers(Range range, const ScaleCounts& counts, uint64_t seed, Rng& rng, ChunkBuffer* out) {
  const BalancedLabels cities(static_cast<uint64_t>(counts.customers), kNumCities, TableKey(seed, SsbTable::kCustomer));
  for (int64_t i = range.begin; i < range.end; ++i) {
    const int64_t key = i + 1;
    char* p = out->Reserve(kMaxRowBytes);
    p = Sep(PutUint(p, static_cast<uint64_t>(key)));
    p = PutStr(p, "Customer#");
    p = Sep(PutPadded(p, static_cast<uint64_t>(key), 9));
    p = Sep(PutAddress(p, rng));
    const uint64_t city = cities(static_cast<uint64_t>(i));
    const int nation = static_cast<int>(city / 10);
    p = Sep(PutCity(p, nation, static_cast<int>(city % 10)));
    p = Sep(PutStr(p, kNations[nation].name));
    p = Sep(PutStr(p, kRegions[kNations[nation].region]));
    p = Sep(PutPhone(p, nation, rng));
    p = Sep(PutStr(p, kSegments[rng.Below(kSegments.size())]));
    *p++ = '\n';
    out->Commit(p);
  }
  return range.end - range.begin;
}

// supplier: s_suppkey|s_name|s_address|s_city|s_nation|s_region|s_phone|
int64_t GenerateSuppliers(Range range, const ScaleCounts& counts, uint64_t seed, Rng& rng, ChunkBuffer* out) {
  const BalancedLabels cities(static_cast<uint64_t>(counts.suppliers), kNumCities, TableKey(seed, SsbTable::kSupplier));
  for (int64_t i = range.begin; i < range.end; ++i) {
    const int64_t key = i + 1;
    char* p = out->Reserve(kMaxRowBytes);
    p = Sep(PutUint(p, static_cast<uint64_t>(key)));
    p = PutStr(p, "Supplier#");
    p = Sep(PutPadded(p, static_cast<uint64_t>(key), 9));
    p = Sep(PutAddress(p, rng));
    const uint64_t city = cities(static_cast<uint64_t>(i));
    const int nation = static_cast<int>(city / 10);
    p = Sep(PutCity(p, nation, static_cast<int>(city % 10)));
    p = Sep(PutStr(p, kNations[nation].name));
    p = Sep(PutStr(p, kRegions[kNations[nation].region]));
    p = Sep(PutPhone(p, nation, rng));
    *p++ = '\n';
    out->Commit(p);
  }
  return range.end - range.begin;
}

// part: p_partkey|p_name|p_mfgr|p_category|p_brand1|p_color|p_type|p_size|p_container|
int64_t GenerateParts(Range range, const ScaleCounts& counts, uint64_t seed, Rng& rng, ChunkBuffer* out) {
  constexpr uint64_t kNumColors = kColors.size();
  const BalancedLabels brands(static_cast<uint64_t>(counts.parts), kNumBrands, TableKey(seed, SsbTable::kPart));
  for (int64_t i = range.begin; i < range.end; ++i) {
    const int64_t key = i + 1;
    // Three distinct colors, as ssb-dbgen's agg_str(colors, 3): the first is p_color, the other two p_name.
    uint64_t c0 = rng.Below(kNumColors);
    uint64_t c1 = rng.Below(kNumColors - 1);
    uint64_t c2 = rng.Below(kNumColors - 2);
    if (c1 >= c0) ++c1;
    const uint64_t lo = std::min(c0, c1), hi = std::max(c0, c1);
    if (c2 >= lo) ++c2;
    if (c2 >= hi) ++c2;
    const uint64_t brand_label = brands(static_cast<uint64_t>(i));
    const uint64_t mfgr = 1 + brand_label / 200;
    const uint64_t category = 1 + brand_label / 40 % 5;
    const uint64_t brand = 1 + brand_label % 40;
    const uint64_t type = rng.Below(150);
    const uint64_t size = 1 + rng.Below(50);
    const uint64_t container = rng.Below(40);

    char* p = out->Reserve(kMaxRowBytes);
    p = Sep(PutUint(p, static_cast<uint64_t>(key)));
    p = PutStr(p, kColors[c1]);
    *p++ = ' ';
    p = Sep(PutStr(p, kColors[c2]));
    p = PutStr(p, "MFGR#");
    *p++ = static_cast<char>('0' + mfgr);
    p = Sep(p);
    p = PutStr(p, "MFGR#");
    *p++ = static_cast<char>('0' + mfgr);
    *p++ = static_cast<char>('0' + category);
    p = Sep(p);
    p = PutStr(p, "MFGR#");
    *p++ = static_cast<char>('0' + mfgr);
    *p++ = static_cast<char>('0' + category);
    p = Sep(PutUint(p, brand));
    p = Sep(PutStr(p, kColors[c0]));
    p = PutStr(p, kTypeSyllable1[type / 25]);
    *p++ = ' ';
    p = PutStr(p, kTypeSyllable2[(type / 5) % 5]);
    *p++ = ' ';
    p = Sep(PutStr(p, kTypeSyllable3[type % 5]));
    p = Sep(PutUint(p, size));
    p = PutStr(p, kContainerSyllable1[container / 8]);
    *p++ = ' ';
    p = Sep(PutStr(p, kContainerSyllable2[container % 8]));
    *p++ = '\n';
    out->Commit(p);
  }
  return range.end - range.begin;
}

// date:
// d_datekey|d_date|d_dayofweek|d_month|d_year|d_yearmonthnum|d_yearmonth|d_daynuminweek|d_daynuminmonth|
//       d_daynuminyear|d_monthnuminyear|d_weeknuminyear|d_sellingseason|d_lastdayinweekfl|d_lastdayinmonthfl|
//       d_holidayfl|d_weekdayfl|
int64_t GenerateDates(Range range, ChunkBuffer* out) {
  const Calendar& calendar = GetCalendar();
  for (int64_t i = range.begin; i < range.end; ++i) {
    const Day& d = calendar[static_cast<int>(i)];
    const char* month = kMonthNames[d.month - 1];
    char* p = out->Reserve(kMaxRowBytes);
    p = Sep(PutBytes(p, d.key, 8));
    p = PutStr(p, month);
    *p++ = ' ';
    p = PutUint(p, static_cast<uint64_t>(d.day));
    *p++ = ',';
    *p++ = ' ';
    p = Sep(PutUint(p, static_cast<uint64_t>(d.year)));
    p = Sep(PutStr(p, kWeekdayNames[d.weekday]));
    p = Sep(PutStr(p, month));
    p = Sep(PutUint(p, static_cast<uint64_t>(d.year)));
    p = Sep(PutUint(p, static_cast<uint64_t>(d.year * 100 + d.month)));
    p = PutBytes(p, month, 3);
    p = Sep(PutUint(p, static_cast<uint64_t>(d.year)));
    p = Sep(PutUint(p, static_cast<uint64_t>(d.weekday + 1)));  // Sunday = 1 .. Saturday = 7
    p = Sep(PutUint(p, static_cast<uint64_t>(d.day)));
    p = Sep(PutUint(p, static_cast<uint64_t>(d.day_of_year)));
    p = Sep(PutUint(p, static_cast<uint64_t>(d.month)));
    p = Sep(PutUint(p, static_cast<uint64_t>(d.day_of_year / 7 + 1)));  // ssb-dbgen's week number
    p = Sep(PutStr(p, SellingSeason(d.month)));
    *p++ = d.weekday == 6 ? '1' : '0';  // last day in week: Saturday
    p = Sep(p);
    *p++ = d.last_in_month ? '1' : '0';
    p = Sep(p);
    *p++ = IsHoliday(d.month, d.day) ? '1' : '0';
    p = Sep(p);
    *p++ = d.weekday >= 1 && d.weekday <= 5 ? '1' : '0';  // Monday .. Friday
    p = Sep(p);
    *p++ = '\n';
    out->Commit(p);
  }
  return range.end - range.begin;
}

struct LineValues {
  int64_t partkey;
  int64_t suppkey;
  int64_t quantity;
  int64_t extended_price;
  int64_t discount;
  int64_t revenue;
  int64_t supply_cost;
  int64_t tax;
  int commit_date;  // day index
  int ship_mode;
};

// lineorder: lo_orderkey|lo_linenumber|lo_custkey|lo_partkey|lo_suppkey|lo_orderdate|lo_orderpriority|
//            lo_shippriority|lo_quantity|lo_extendedprice|lo_ordertotalprice|lo_discount|lo_revenue|
//            lo_supplycost|lo_tax|lo_commitdate|lo_shipmode|
int64_t GenerateLineorders(Range range, const ScaleCounts& counts, Rng& rng, ChunkBuffer* out) {
  const Calendar& calendar = GetCalendar();
  int64_t rows = 0;
  LineValues lines[7];
  for (int64_t i = range.begin; i < range.end; ++i) {
    const int64_t orderkey = SparseOrderKey(i + 1);
    const int order_date = static_cast<int>(rng.Uniform(0, kLastOrderDateIndex));
    const int64_t custkey = DrawCustomer(rng, counts.customers);
    const char* priority = kPriorities[rng.Below(kPriorities.size())];
    const int num_lines = static_cast<int>(1 + rng.Below(7));
    int64_t total_price = 0;
    for (int l = 0; l < num_lines; ++l) {
      LineValues& v = lines[l];
      v.partkey = rng.Uniform(1, counts.parts);
      v.suppkey = rng.Uniform(1, counts.suppliers);
      v.quantity = rng.Uniform(1, 50);
      v.discount = rng.Uniform(0, 10);
      v.tax = rng.Uniform(0, 8);
      v.commit_date = order_date + static_cast<int>(rng.Uniform(kMinCommitDelay, kMaxCommitDelay));
      v.ship_mode = static_cast<int>(rng.Below(kShipModes.size()));
      const int64_t retail_price = RetailPriceCents(v.partkey);
      v.extended_price = retail_price * v.quantity;
      v.revenue = v.extended_price * (100 - v.discount) / 100;
      v.supply_cost = 6 * retail_price / 10;
      total_price += v.revenue * (100 + v.tax) / 100;
    }

    // Columns shared by the order's lines, formatted once: "orderkey|" and "|custkey|" are split around the
    // line number; "orderdate|priority|0|" follows partkey and suppkey.
    char key_text[24];
    const size_t key_len = static_cast<size_t>(Sep(PutUint(key_text, static_cast<uint64_t>(orderkey))) - key_text);
    char cust_text[24];
    const size_t cust_len = static_cast<size_t>(Sep(PutUint(cust_text, static_cast<uint64_t>(custkey))) - cust_text);
    char mid_text[48];
    char* m = Sep(PutBytes(mid_text, calendar[order_date].key, 8));
    m = Sep(PutStr(m, priority));
    *m++ = '0';
    m = Sep(m);
    const size_t mid_len = static_cast<size_t>(m - mid_text);
    char total_text[24];
    const size_t total_len =
        static_cast<size_t>(Sep(PutUint(total_text, static_cast<uint64_t>(total_price))) - total_text);

    char* p = out->Reserve(kMaxRowBytes * static_cast<size_t>(num_lines));
    for (int l = 0; l < num_lines; ++l) {
      const LineValues& v = lines[l];
      p = PutBytes(p, key_text, key_len);
      *p++ = static_cast<char>('1' + l);
      p = Sep(p);
      p = PutBytes(p, cust_text, cust_len);
      p = Sep(PutUint(p, static_cast<uint64_t>(v.partkey)));
      p = Sep(PutUint(p, static_cast<uint64_t>(v.suppkey)));
      p = PutBytes(p, mid_text, mid_len);
      p = Sep(PutUint(p, static_cast<uint64_t>(v.quantity)));
      p = Sep(PutUint(p, static_cast<uint64_t>(v.extended_price)));
      p = PutBytes(p, total_text, total_len);
      p = Sep(PutUint(p, static_cast<uint64_t>(v.discount)));
      p = Sep(PutUint(p, static_cast<uint64_t>(v.revenue)));
      p = Sep(PutUint(p, static_cast<uint64_t>(v.supply_cost)));
      p = Sep(PutUint(p, static_cast<uint64_t>(v.tax)));
      p = Sep(PutBytes(p, calendar[v.commit_date].key, 8));
      p = Sep(PutStr(p, kShipModes[v.ship_mode]));
      *p++ = '\n';
    }
    out->Commit(p);
    rows += num_lines;
  }
  return rows;
}

int64_t ScaledCount(int64_t base, double scale_factor) {
  const double x = static_cast<double>(base) * scale_factor;
  const double nearest = std::nearbyint(x);
  const double count = std::fabs(x - nearest) <= 1e-9 * std::max(1.0, x) ? nearest : std::floor(x);
  return std::max<int64_t>(1, static_cast<int64_t>(count));
}

// ---------------------------------------------------------------------------------------------------------------
// Parallel driver.

// Accepts chunks of one table in any order and appends them to its file in chunk order. Whoever submits the
// chunk the file is waiting for writes it and every chunk queued behind it.
class OrderedFile {
 public:
  OrderedFile(std::FILE* file, int64_t num_chunks) : file_(file), num_chunks_(num_chunks) {}

  // Queues `buffer` as chunk `chunk`; returns the buffers it wrote (for reuse). `written` is called, outside
  // any lock but from one thread at a time, after each chunk reaches the file.
  template <typename OnWritten>
  std::vector<std::unique_ptr<ChunkBuffer>> Submit(int64_t chunk, int64_t rows, std::unique_ptr<ChunkBuffer> buffer,
                                                   OnWritten written) {
    std::vector<std::unique_ptr<ChunkBuffer>> done;
    std::unique_lock<std::mutex> lock(mu_);
    pending_.emplace(chunk, Pending{rows, std::move(buffer)});
    if (writing_) return done;
    writing_ = true;
    while (true) {
      auto it = pending_.find(next_);
      if (it == pending_.end()) break;
      Pending item = std::move(it->second);
      pending_.erase(it);
      lock.unlock();
      const bool ok = failed_ || std::fwrite(item.buffer->data(), 1, item.buffer->size(), file_) == item.buffer->size();
      written(item.rows, static_cast<int64_t>(item.buffer->size()), ok);
      lock.lock();
      if (!ok) failed_ = true;
      done.push_back(std::move(item.buffer));
      ++next_;
    }
    writing_ = false;
    return done;
  }

  bool complete() {
    std::lock_guard<std::mutex> lock(mu_);
    return next_ == num_chunks_;
  }

 private:
  struct Pending {
    int64_t rows;
    std::unique_ptr<ChunkBuffer> buffer;
  };

  std::FILE* file_;
  const int64_t num_chunks_;
  std::mutex mu_;
  std::map<int64_t, Pending> pending_;
  int64_t next_ = 0;
  bool writing_ = false;
  bool failed_ = false;
};

struct TableJob {
  SsbTable table;
  std::string path;
  std::FILE* file = nullptr;
  int64_t num_chunks = 0;
  std::unique_ptr<OrderedFile> sink;
  std::atomic<int64_t> rows{0};
  std::atomic<int64_t> bytes{0};
  std::atomic<int64_t> chunks_written{0};
};

std::string FormatMillions(int64_t rows) {
  char buf[64];
  if (rows >= 1'000'000) {
    std::snprintf(buf, sizeof(buf), "%.2fM", static_cast<double>(rows) / 1e6);
  } else {
    std::snprintf(buf, sizeof(buf), "%lld", static_cast<long long>(rows));
  }
  return buf;
}

}  // namespace

// -----------------------------------------------------------------------------------------------------------------
// Public functions.

std::string_view TableName(SsbTable table) {
  switch (table) {
    case SsbTable::kLineorder:
      return "lineorder";
    case SsbTable::kCustomer:
      return "customer";
    case SsbTable::kSupplier:
      return "supplier";
    case SsbTable::kPart:
      return "part";
    case SsbTable::kDate:
      return "date";
  }
  return "unknown";
}

bool ParseTableName(std::string_view name, SsbTable* table) {
  for (int i = 0; i < kNumSsbTables; ++i) {
    if (TableName(static_cast<SsbTable>(i)) == name) {
      *table = static_cast<SsbTable>(i);
      return true;
    }
  }
  return false;
}

bool ComputeScaleCounts(double scale_factor, ScaleCounts* counts, std::string* error) {
  if (!std::isfinite(scale_factor) || scale_factor <= 0 || scale_factor > 100000) {
    *error = "scale factor must be a number in (0, 100000]";
    return false;
  }
  counts->customers = ScaledCount(kCustomerBase, scale_factor);
  counts->suppliers = ScaledCount(kSupplierBase, scale_factor);
  counts->orders = ScaledCount(kOrderBase, scale_factor);
  if (scale_factor < 1) {
    counts->parts = ScaledCount(kPartBase, scale_factor);
  } else {
    int log2_floor = 0;  // largest k with 2^k <= SF, exactly
    while (std::ldexp(1.0, log2_floor + 1) <= scale_factor) ++log2_floor;
    counts->parts = kPartBase * (1 + log2_floor);
  }
  counts->dates = kNumDates;
  return true;
}

int64_t MaxOrderKey(const ScaleCounts& counts) { return SparseOrderKey(counts.orders); }

int64_t UnitsPerChunk(SsbTable table) {
  switch (table) {
    case SsbTable::kLineorder:
      return kOrdersPerChunk;
    case SsbTable::kDate:
      return kNumDates;
    default:
      return kRowsPerChunk;
  }
}

int64_t NumUnits(SsbTable table, const ScaleCounts& counts) {
  switch (table) {
    case SsbTable::kLineorder:
      return counts.orders;
    case SsbTable::kCustomer:
      return counts.customers;
    case SsbTable::kSupplier:
      return counts.suppliers;
    case SsbTable::kPart:
      return counts.parts;
    case SsbTable::kDate:
      return counts.dates;
  }
  return 0;
}

int64_t NumChunks(SsbTable table, const ScaleCounts& counts) {
  const int64_t per_chunk = UnitsPerChunk(table);
  return (NumUnits(table, counts) + per_chunk - 1) / per_chunk;
}

void ChunkBuffer::Grow(size_t min_capacity) {
  size_t capacity = std::max<size_t>(capacity_ * 2, 1 << 16);
  while (capacity < min_capacity) capacity *= 2;
  std::unique_ptr<char[]> data(new char[capacity]);
  if (size_ > 0) std::memcpy(data.get(), data_.get(), size_);
  data_ = std::move(data);
  capacity_ = capacity;
}

int64_t GenerateChunk(SsbTable table, const ScaleCounts& counts, uint64_t seed, int64_t chunk, ChunkBuffer* out) {
  const Range range = ChunkRange(table, counts, chunk);
  if (range.begin >= range.end) return 0;
  Rng rng(ChunkSeed(seed, table, chunk));
  switch (table) {
    case SsbTable::kLineorder:
      return GenerateLineorders(range, counts, rng, out);
    case SsbTable::kCustomer:
      return GenerateCustomers(range, counts, seed, rng, out);
    case SsbTable::kSupplier:
      return GenerateSuppliers(range, counts, seed, rng, out);
    case SsbTable::kPart:
      return GenerateParts(range, counts, seed, rng, out);
    case SsbTable::kDate:
      return GenerateDates(range, out);
  }
  return 0;
}

bool GenerateSsb(const GeneratorOptions& options, GenerationReport* report, std::string* error) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();

  ScaleCounts counts;
  if (!ComputeScaleCounts(options.scale_factor, &counts, error)) return false;
  if (options.output_dir.empty()) {
    *error = "no output directory given";
    return false;
  }
  std::error_code ec;
  std::filesystem::create_directories(options.output_dir, ec);
  if (ec) {
    *error = "cannot create output directory " + options.output_dir + ": " + ec.message();
    return false;
  }

  std::vector<SsbTable> tables = options.tables;
  if (tables.empty()) {
    tables = {SsbTable::kLineorder, SsbTable::kPart, SsbTable::kCustomer, SsbTable::kSupplier, SsbTable::kDate};
  }
  bool requested[kNumSsbTables] = {};
  for (SsbTable t : tables) {
    if (requested[static_cast<int>(t)]) {
      *error = "table " + std::string(TableName(t)) + " requested twice";
      return false;
    }
    requested[static_cast<int>(t)] = true;
  }
  if (requested[static_cast<int>(SsbTable::kLineorder)] && MaxOrderKey(counts) > std::numeric_limits<int32_t>::max() &&
      options.progress) {
    std::fprintf(stderr, "ssb-dbgen: warning: lo_orderkey reaches %lld, beyond the INTEGER range of schema.sql\n",
                 static_cast<long long>(MaxOrderKey(counts)));
  }

  int threads = options.threads;
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));

  // Open every file first so that a bad path fails before any work.
  std::vector<std::unique_ptr<TableJob>> jobs;
  for (SsbTable t : tables) {
    auto job = std::make_unique<TableJob>();
    job->table = t;
    job->path = (std::filesystem::path(options.output_dir) / (std::string(TableName(t)) + ".tbl")).string();
    job->num_chunks = NumChunks(t, counts);
    job->file = std::fopen(job->path.c_str(), "wb");
    if (job->file == nullptr) {
      *error = "cannot open " + job->path + " for writing: " + std::strerror(errno);
      for (auto& j : jobs) std::fclose(j->file);
      return false;
    }
    std::setvbuf(job->file, nullptr, _IONBF, 0);  // we always write whole chunks
    job->sink = std::make_unique<OrderedFile>(job->file, job->num_chunks);
    jobs.push_back(std::move(job));
  }

  // The task list: every chunk of every table, largest table first.
  struct Task {
    int job;
    int64_t chunk;
  };
  std::vector<Task> tasks;
  for (int j = 0; j < static_cast<int>(jobs.size()); ++j) {
    for (int64_t c = 0; c < jobs[j]->num_chunks; ++c) tasks.push_back({j, c});
  }

  std::atomic<size_t> next_task{0};
  std::atomic<bool> failed{false};
  // Back-pressure: at most `max_in_flight` chunks claimed but not yet on disk, which bounds memory when one
  // slow chunk holds back the file order. The chunk a file waits for is always claimed already, so this
  // cannot block.
  const int64_t max_in_flight = 4 * static_cast<int64_t>(threads);
  int64_t in_flight = 0;
  std::mutex flight_mu;
  std::condition_variable flight_cv;
  std::vector<std::unique_ptr<ChunkBuffer>> free_buffers;

  // Progress: one line per 10% of lineorder (when it is large) and one per finished table.
  std::mutex progress_mu;
  int next_percent = 10;
  auto report_progress = [&](TableJob& job, int64_t rows, int64_t bytes) {
    job.rows += rows;
    job.bytes += bytes;
    const int64_t written = ++job.chunks_written;
    if (!options.progress) return;
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    std::lock_guard<std::mutex> lock(progress_mu);
    if (job.table == SsbTable::kLineorder && job.num_chunks >= 20) {
      const int percent = static_cast<int>(100 * written / job.num_chunks);
      if (percent >= next_percent && written != job.num_chunks) {
        std::fprintf(stderr, "ssb-dbgen: lineorder %3d%% (%s rows, %.1f s)\n", percent,
                     FormatMillions(job.rows.load()).c_str(), seconds);
        next_percent = (percent / 10 + 1) * 10;
      }
    }
    if (written == job.num_chunks) {
      std::fprintf(stderr, "ssb-dbgen: %-9s done: %s rows, %.1f MB (%.1f s)\n",
                   std::string(TableName(job.table)).c_str(), FormatMillions(job.rows.load()).c_str(),
                   static_cast<double>(job.bytes.load()) / 1e6, seconds);
    }
  };

  auto worker = [&]() {
    while (!failed.load(std::memory_order_relaxed)) {
      std::unique_ptr<ChunkBuffer> buffer;
      {
        std::unique_lock<std::mutex> lock(flight_mu);
        flight_cv.wait(lock, [&] { return in_flight < max_in_flight || failed.load(); });
        if (failed.load()) return;
        ++in_flight;
        if (!free_buffers.empty()) {
          buffer = std::move(free_buffers.back());
          free_buffers.pop_back();
        }
      }
      const size_t index = next_task.fetch_add(1);
      if (index >= tasks.size()) {
        std::lock_guard<std::mutex> lock(flight_mu);
        --in_flight;
        flight_cv.notify_all();
        return;
      }
      if (buffer == nullptr) buffer = std::make_unique<ChunkBuffer>();
      buffer->Clear();
      const Task task = tasks[index];
      TableJob& job = *jobs[task.job];
      const int64_t rows = GenerateChunk(job.table, counts, options.seed, task.chunk, buffer.get());
      int64_t written = 0;
      std::vector<std::unique_ptr<ChunkBuffer>> done =
          job.sink->Submit(task.chunk, rows, std::move(buffer), [&](int64_t chunk_rows, int64_t bytes, bool ok) {
            if (!ok) failed = true;
            ++written;
            report_progress(job, chunk_rows, bytes);
          });
      std::lock_guard<std::mutex> lock(flight_mu);
      in_flight -= written;
      for (auto& b : done) free_buffers.push_back(std::move(b));
      flight_cv.notify_all();
    }
  };

  std::vector<std::thread> pool;
  pool.reserve(static_cast<size_t>(threads));
  for (int i = 0; i < threads; ++i) pool.emplace_back(worker);
  for (std::thread& t : pool) t.join();

  bool ok = !failed.load();
  for (auto& job : jobs) {
    if (std::fclose(job->file) != 0 && ok) {
      ok = false;
      *error = "cannot close " + job->path + ": " + std::strerror(errno);
    }
    if (ok && !job->sink->complete()) {
      ok = false;
      *error = "internal error: " + job->path + " is incomplete";
    }
  }
  if (failed.load()) *error = "write failed (disk full?) in " + options.output_dir;
  if (!ok) return false;

  if (report != nullptr) {
    report->tables.clear();
    for (auto& job : jobs) {
      report->tables.push_back({job->table, job->path, job->rows.load(), job->bytes.load()});
    }
    report->seconds = std::chrono::duration<double>(Clock::now() - start).count();
    report->threads = threads;
  }
  return true;
}

}  // namespace tessera::ssb
