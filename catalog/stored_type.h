#pragma once
// The Type that a stored form names by its id and parameters: a column type in the catalog file, the type of a
// serialized Value (Value::Deserialize). Parameters are checked as a CREATE TABLE checks them, so that a corrupt
// file or value cannot make an invalid type.

#include <cstdint>

#include "absl/status/statusor.h"
#include "catalog/types.h"

namespace tessera {

// `id`: a TypeId's value (NULL included). `first`: DECIMAL's precision, CHAR's or VARCHAR's length (VARCHAR 0:
// unbounded); `second`: DECIMAL's scale; both ignored for the other types. InvalidArgument when `id` is no TypeId
// or a parameter is out of range.
absl::StatusOr<Type> TypeFromStoredParts(int64_t id, int64_t first, int64_t second);

}  // namespace tessera
