#pragma once
// Which rank holds a row of a hash-partitioned table (CREATE TABLE ... PARTITION BY HASH (column)): the rank is
// the partition key's hash modulo the rank count. Integer keys (INTEGER, BIGINT) hash their value, so an INTEGER
// and a BIGINT column with the same values place equal keys on the same rank (co-located joins); strings hash
// their bytes (CHAR without trailing blanks); other types hash their canonical serialized value. NULL keys go to
// rank 0. Thread-compatible, allocation-free for integer and string keys.

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"
#include "catalog/types.h"

namespace tessera::distributed {

// Key types a row can be placed by in memory (RankOfKey, the hash-split exchange): INTEGER, BIGINT, CHAR and
// VARCHAR. Other types place COPY lines by their serialized value only.
bool PlaceableKeyType(const Type& type);

// The rank of an integer key (INTEGER or BIGINT value) and of a string key (CHAR: trailing blanks are ignored),
// exactly as RankOfKeyText places the same value, so rows split in memory meet the rows COPY placed.
int RankOfIntegerKey(int64_t value, int ranks);
int RankOfStringKey(std::string_view value, bool is_char, int ranks);

// The rank of the key written as `text` (a field of a COPY line) in a column of `type`, among `ranks` ranks.
// `is_null`: the field is the file's NULL marker. InvalidArgument when the text is not a value of the type.
absl::StatusOr<int> RankOfKeyText(std::string_view text, bool is_null, const Type& type, int ranks);

}  // namespace tessera::distributed
