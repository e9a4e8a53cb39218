#include "distributed/partitioning.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "catalog/value.h"
#include "common/hash.h"

namespace tessera::distributed {

bool PlaceableKeyType(const Type& type) {
  return type.id() == TypeId::kInteger || type.id() == TypeId::kBigInt || type.IsString();
}

int RankOfIntegerKey(int64_t value, int ranks) {
  if (ranks <= 1) return 0;
  return static_cast<int>(HashInt64(static_cast<uint64_t>(value)) % static_cast<uint64_t>(ranks));
}

int RankOfStringKey(std::string_view value, bool is_char, int ranks) {
  if (ranks <= 1) return 0;
  absl::string_view bytes(value.data(), value.size());
  if (is_char) bytes = absl::StripTrailingAsciiWhitespace(bytes);
  return static_cast<int>(HashBytes(bytes.data(), bytes.size()) % static_cast<uint64_t>(ranks));
}

absl::StatusOr<int> RankOfKeyText(std::string_view text, bool is_null, const Type& type, int ranks) {
  if (is_null || ranks <= 1) return 0;
  const absl::string_view field(text.data(), text.size());
  uint64_t hash = 0;
  switch (type.id()) {
    case TypeId::kInteger:
    case TypeId::kBigInt: {
      int64_t value = 0;
      if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(field), &value)) {
        return absl::InvalidArgumentError(absl::StrCat("partition key '", field, "' is not a valid ", type.ToString()));
      }
      return RankOfIntegerKey(value, ranks);
    }
    case TypeId::kChar:
    case TypeId::kVarchar:
      return RankOfStringKey(text, type.id() == TypeId::kChar, ranks);
    default: {
      absl::StatusOr<Value> value = Value::String(std::string(text)).CastTo(type);
      if (!value.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("partition key '", field, "' is not a valid ", type.ToString(),
                                                       ": ", value.status().message()));
      }
      hash = HashString(value->Serialize());
      break;
    }
  }
  return static_cast<int>(hash % static_cast<uint64_t>(ranks));
}

}  // namespace tessera::distributed
