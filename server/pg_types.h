#pragma once
// Tessera types and values as PostgreSQL clients see them: the type OID, size and modifier of each catalog type
// (RowDescription), values in PostgreSQL's text and binary formats (DataRow), and bound parameters turned into
// typed SQL literals (Tessera has no native parameters, so Bind substitutes them into the statement text).
//
//   BOOLEAN bool(16)  INTEGER int4(23)  BIGINT int8(20)  DOUBLE float8(701)  DECIMAL(p,s) numeric(1700)
//   CHAR(n) bpchar(1042)  VARCHAR(n) varchar(1043)  VARCHAR text(25)  DATE date(1082)
//   TIMESTAMP timestamp(1114)  INTERVAL interval(1186)  NULL (untyped) text(25)
//
// Text formats follow PostgreSQL's output functions with DateStyle ISO and IntervalStyle postgres: booleans 't'/'f',
// numerics exactly with their scale, floats shortest round-trip with Infinity/-Infinity/NaN. CHAR(n) values are not
// blank-padded (Tessera stores them as VARCHAR(n) does). Binary formats are the types' send functions.
//
// Thread-safe: no state.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "catalog/types.h"
#include "catalog/value.h"

namespace tessera::pg {

// Type OIDs (pg_type.oid) used here.
enum Oid : int32_t {
  kOidUnspecified = 0,
  kOidBool = 16,
  kOidBytea = 17,
  kOidInt8 = 20,
  kOidInt2 = 21,
  kOidInt4 = 23,
  kOidText = 25,
  kOidOid = 26,
  kOidFloat4 = 700,
  kOidFloat8 = 701,
  kOidUnknown = 705,
  kOidBpchar = 1042,
  kOidVarchar = 1043,
  kOidDate = 1082,
  kOidTime = 1083,
  kOidTimestamp = 1114,
  kOidTimestampTz = 1184,
  kOidInterval = 1186,
  kOidNumeric = 1700,
};

// What RowDescription says about a column: pg_type.oid, typlen (-1 = variable) and atttypmod (-1 = none).
struct PgColumnType {
  int32_t oid = kOidText;
  int16_t size = -1;
  int32_t modifier = -1;
};

PgColumnType PgColumnTypeOf(const Type& type);

// PostgreSQL's name of a type OID ("int4", "numeric"), for messages; "oid N" for others.
std::string PgTypeName(int32_t oid);

// Appends the text form of a non-NULL value.
void AppendPgText(const Value& value, std::string* out);
// Appends the binary form of a non-NULL value (bool, int4, int8, float8, numeric, text, date, timestamp, interval).
void AppendPgBinary(const Value& value, std::string* out);

// The SQL literal that parameter $`number` stands for: its bytes `data` (nullopt = NULL) in `format` (0 text,
// 1 binary) of the type `oid` (0 = unspecified: a text value becomes a string literal, which Tessera converts
// where the context needs another type). Strings are quoted with doubled quotes; numbers, booleans, dates and
// timestamps are validated and written as typed literals. InvalidArgument (naming the parameter) for values that do
// not parse as their type, binary values of unspecified type, and types Tessera cannot bind.
absl::StatusOr<std::string> ParameterLiteral(int number, int32_t oid, int16_t format,
                                             std::optional<std::string_view> data);

}  // namespace tessera::pg
