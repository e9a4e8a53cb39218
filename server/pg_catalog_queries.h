#pragma once
// The catalog queries psql sends for \dt, \dv, \d and \d NAME, answered from Tessera's catalog. Tessera has no
// pg_catalog schema (and its SQL lacks the regular-expression operators, casts to regclass and the functions those
// queries use), so each query psql 15 issues is recognized by the pg_catalog relations and columns it names, and
// answered with the columns psql reads:
//
//   the relation list (\dt, \dv, \d [PATTERN]): Schema, Name, Type, Owner of tables and views (schema "public")
//   the relation lookup of \d NAME: oid, nspname, relname of the relations whose name matches psql's pattern
//   the relation's properties (relchecks, relkind, relhasindex, ...: 15 columns)
//   the relation's columns (attname, format_type, default, attnotnull, collation, identity, generated)
//   any other query on pg_catalog relations (indexes, constraints, policies, statistics objects, publications,
//   inheritance, triggers): no rows, for Tessera has none of these.
//
// Relation OIDs are 16384 + the relation's position among the catalog's tables and views in name order, so they
// are stable while the catalog does not change. Patterns are psql's regular expressions for its patterns: literal
// characters, '.', '.*', escapes, alternation of whole patterns is not supported (such a pattern matches nothing).
//
// Thread-safe: reads the catalog only.

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "catalog/types.h"
#include "engine/query_result.h"

namespace tessera {
class Database;
}

namespace tessera::pg {

// The answer to `statement` when it is one of psql's catalog queries (any statement naming pg_catalog.pg_class,
// pg_attribute, ... in a FROM clause); nullopt otherwise.
std::optional<absl::StatusOr<QueryResult>> AnswerCatalogQuery(std::string_view statement, Database& database);

// PostgreSQL's name of a Tessera type as format_type prints it: "integer", "numeric(15,2)", "character(1)",
// "character varying(25)", "text", "double precision", "timestamp without time zone".
std::string PgFormatType(const Type& type);

}  // namespace tessera::pg
