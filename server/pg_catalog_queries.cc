#include "server/pg_catalog_queries.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "catalog/catalog.h"
#include "engine/session.h"
#include "engine/statement_handlers.h"

namespace tessera::pg {
namespace {

constexpr int64_t kFirstRelationOid = 16384;

// One relation as the emulated pg_class row sees it.
struct Relation {
  int64_t oid;
  std::string name;
  char kind;  // 'r' table, 'v' view
};

std::vector<Relation> Relations(Database& database) {
  std::vector<Relation> relations;
  for (const auto& table : database.catalog().ListTables()) relations.push_back({0, table->name, 'r'});
  for (const auto& view : database.catalog().ListViews()) relations.push_back({0, view->name, 'v'});
  std::sort(relations.begin(), relations.end(), [](const Relation& a, const Relation& b) { return a.name < b.name; });
  for (size_t i = 0; i < relations.size(); ++i) relations[i].oid = kFirstRelationOid + static_cast<int64_t>(i);
  return relations;
}

// `text` with every run of white space made one space.
std::string Normalized(std::string_view text) {
  std::string out;
  bool space = false;
  for (char c : text) {
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      space = true;
      continue;
    }
    if (space && !out.empty()) out.push_back(' ');
    space = false;
    out.push_back(c);
  }
  return out;
}

// The string literal that follows `marker` in `text` (with '' undoubled); nullopt when there is none.
std::optional<std::string> LiteralAfter(const std::string& text, std::string_view marker) {
  size_t at = text.find(std::string(marker));
  if (at == std::string::npos) return std::nullopt;
  at = text.find('\'', at + marker.size());
  if (at == std::string::npos) return std::nullopt;
  std::string value;
  for (size_t i = at + 1; i < text.size(); ++i) {
    if (text[i] == '\'') {
      if (i + 1 < text.size() && text[i + 1] == '\'') {
        value.push_back('\'');
        ++i;
        continue;
      }
      return value;
    }
    value.push_back(text[i]);
  }
  return std::nullopt;
}

// Matches `name` against psql's regular expression for a name pattern: "^(" body ")$" where the body holds literal
// characters, '.' (any character), '.*' (any run) and backslash escapes. Other regular expressions match nothing.
bool PatternMatches(const std::string& regex, const std::string& name) {
  if (!absl::StartsWith(regex, "^(") || !absl::EndsWith(regex, ")$")) return false;
  const std::string body = regex.substr(2, regex.size() - 4);
  struct Item {
    char c;
    bool any;
    bool star;
  };
  std::vector<Item> items;
  for (size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    if (c == '\\' && i + 1 < body.size()) {
      items.push_back({body[++i], false, false});
    } else if (c == '.') {
      const bool star = i + 1 < body.size() && body[i + 1] == '*';
      items.push_back({0, true, star});
      if (star) ++i;
    } else if (std::string_view("[]()|?+*{}^$").find(c) != std::string_view::npos) {
      return false;
    } else {
      items.push_back({c, false, false});
    }
  }
  // Classic backtracking over items and name positions (patterns are short).
  std::function<bool(size_t, size_t)> match = [&](size_t item, size_t at) {
    if (item == items.size()) return at == name.size();
    const Item& it = items[item];
    if (it.star) {
      for (size_t skip = at; skip <= name.size(); ++skip) {
        if (match(item + 1, skip)) return true;
      }
      return false;
    }
    if (at == name.size() || (!it.any && name[at] != it.c)) return false;
    return match(item + 1, at + 1);
  };
  return match(0, 0);
}

// The relations a query's "c.relname OPERATOR(pg_catalog.~) '...'" condition admits (all without one).
std::vector<Relation> Matching(const std::string& text, Database& database) {
  std::vector<Relation> relations = Relations(database);
  std::optional<std::string> pattern = LiteralAfter(text, "c.relname OPERATOR(pg_catalog.~)");
  if (!pattern) return relations;
  std::vector<Relation> matching;
  for (const Relation& relation : relations) {
    if (PatternMatches(*pattern, relation.name)) matching.push_back(relation);
  }
  return matching;
}

QueryResult Rows(std::vector<std::pair<std::string, Type>> columns) {
  QueryResult result;
  result.returns_rows = true;
  for (auto& [name, type] : columns) result.columns.push_back({std::move(name), type});
  return result;
}

Value Text(std::string text) { return Value::String(std::move(text)); }

// The relation list of \dt, \dv, \d: the relkinds asked for in "c.relkind IN ('r','p','')".
QueryResult RelationList(const std::string& text, Database& database) {
  std::string kinds;
  if (size_t at = text.find("c.relkind IN ("); at != std::string::npos) {
    const size_t end = text.find(')', at);
    kinds = text.substr(at, end == std::string::npos ? std::string::npos : end - at);
  }
  QueryResult result = Rows(
      {{"Schema", Type::Varchar()}, {"Name", Type::Varchar()}, {"Type", Type::Varchar()}, {"Owner", Type::Varchar()}});
  for (const Relation& relation : Matching(text, database)) {
    if (!absl::StrContains(kinds, absl::StrCat("'", std::string(1, relation.kind), "'"))) continue;
    result.rows.push_back(
        {Text("public"), Text(relation.name), Text(relation.kind == 'r' ? "table" : "view"), Text("tessera")});
  }
  return result;
}

// The relation named by "WHERE c.oid = 'N'" or "a.attrelid = 'N'".
std::optional<Relation> RelationByOid(const std::string& text, std::string_view marker, Database& database) {
  std::optional<std::string> literal = LiteralAfter(text, marker);
  int64_t oid = 0;
  if (!literal || !absl::SimpleAtoi(*literal, &oid)) return std::nullopt;
  for (const Relation& relation : Relations(database)) {
    if (relation.oid == oid) return relation;
  }
  return std::nullopt;
}

std::string DefaultExpression(const Value& value) {
  if (value.is_null()) return "NULL";
  if (!value.type().IsString()) {
    if (value.type().id() == TypeId::kDate) return absl::StrCat("'", value.ToString(), "'::date");
    return value.ToString();
  }
  std::string quoted = "'";
  for (char c : value.AsString()) {
    quoted.push_back(c);
    if (c == '\'') quoted.push_back('\'');
  }
  return quoted + "'";
}

absl::StatusOr<QueryResult> Attributes(const Relation& relation, Database& database) {
  QueryResult result = Rows({{"attname", Type::Varchar()},
                             {"format_type", Type::Varchar()},
                             {"pg_get_expr", Type::Varchar()},
                             {"attnotnull", Type::Boolean()},
                             {"attcollation", Type::Varchar()},
                             {"attidentity", Type::Varchar()},
                             {"attgenerated", Type::Varchar()}});
  if (relation.kind == 'v') {
    absl::StatusOr<std::vector<ResultColumn>> columns = DescribeView(database, relation.name);
    if (!columns.ok()) return columns.status();
    for (const ResultColumn& column : *columns) {
      result.rows.push_back({Text(column.name), Text(PgFormatType(column.type)), Value::Null(Type::Varchar()),
                             Value::Boolean(false), Value::Null(Type::Varchar()), Text(""), Text("")});
    }
    return result;
  }
  absl::StatusOr<std::shared_ptr<const TableDescriptor>> table = database.catalog().GetTable(relation.name);
  if (!table.ok()) return table.status();
  for (const ColumnSchema& column : (*table)->columns) {
    result.rows.push_back(
        {Text(column.name), Text(PgFormatType(column.type)),
         column.default_value ? Text(DefaultExpression(*column.default_value)) : Value::Null(Type::Varchar()),
         Value::Boolean(column.not_null), Value::Null(Type::Varchar()), Text(""), Text("")});
  }
  return result;
}

QueryResult Properties(const Relation& relation) {
  QueryResult result = Rows({{"relchecks", Type::Integer()},
                             {"relkind", Type::Varchar()},
                             {"relhasindex", Type::Boolean()},
                             {"relhasrules", Type::Boolean()},
                             {"relhastriggers", Type::Boolean()},
                             {"relrowsecurity", Type::Boolean()},
                             {"relforcerowsecurity", Type::Boolean()},
                             {"relhasoids", Type::Boolean()},
                             {"relispartition", Type::Boolean()},
                             {"array_to_string", Type::Varchar()},
                             {"reltablespace", Type::Integer()},
                             {"reloftype", Type::Varchar()},
                             {"relpersistence", Type::Varchar()},
                             {"relreplident", Type::Varchar()},
                             {"amname", Type::Varchar()}});
  result.rows.push_back({Value::Integer(0), Text(std::string(1, relation.kind)), Value::Boolean(false),
                         Value::Boolean(false), Value::Boolean(false), Value::Boolean(false), Value::Boolean(false),
                         Value::Boolean(false), Value::Boolean(false), Text(""), Value::Integer(0), Text(""), Text("p"),
                         Text("d"), relation.kind == 'r' ? Text("heap") : Value::Null(Type::Varchar())});
  return result;
}

}  // namespace

std::string PgFormatType(const Type& type) {
  switch (type.id()) {
    case TypeId::kBoolean:
      return "boolean";
    case TypeId::kInteger:
      return "integer";
    case TypeId::kBigInt:
      return "bigint";
    case TypeId::kDouble:
      return "double precision";
    case TypeId::kDecimal:
      return absl::StrCat("numeric(", type.precision(), ",", type.scale(), ")");
    case TypeId::kChar:
      return absl::StrCat("character(", type.length(), ")");
    case TypeId::kVarchar:
      return type.length() == 0 ? "text" : absl::StrCat("character varying(", type.length(), ")");
    case TypeId::kDate:
      return "date";
    case TypeId::kTimestamp:
      return "timestamp without time zone";
    case TypeId::kInterval:
      return "interval";
    case TypeId::kNull:
      return "unknown";
  }
  return "unknown";
}

std::optional<absl::StatusOr<QueryResult>> AnswerCatalogQuery(std::string_view statement, Database& database) {
  if (statement.find("pg_catalog.pg_") == std::string_view::npos) return std::nullopt;
  const std::string text = Normalized(statement);
  if (!absl::StrContains(text, " FROM pg_catalog.pg_") && !absl::StrContains(text, ", pg_catalog.pg_")) {
    return std::nullopt;
  }
  if (absl::StrContains(text, "FROM pg_catalog.pg_class c") && absl::StrContains(text, "as \"Schema\"") &&
      absl::StrContains(text, "as \"Name\"")) {
    return RelationList(text, database);
  }
  if (absl::StartsWith(text, "SELECT c.oid, n.nspname, c.relname FROM pg_catalog.pg_class c")) {
    QueryResult result = Rows({{"oid", Type::BigInt()}, {"nspname", Type::Varchar()}, {"relname", Type::Varchar()}});
    for (const Relation& relation : Matching(text, database)) {
      result.rows.push_back({Value::BigInt(relation.oid), Text("public"), Text(relation.name)});
    }
    return result;
  }
  if (absl::StartsWith(text, "SELECT c.relchecks, c.relkind")) {
    std::optional<Relation> relation = RelationByOid(text, "WHERE c.oid =", database);
    if (!relation) return Rows({{"relchecks", Type::Integer()}});
    return Properties(*relation);
  }
  if (absl::StartsWith(text, "SELECT a.attname,") && absl::StrContains(text, "FROM pg_catalog.pg_attribute a")) {
    std::optional<Relation> relation = RelationByOid(text, "a.attrelid =", database);
    if (!relation) return Rows({{"attname", Type::Varchar()}});
    return Attributes(*relation, database);
  }
  // Indexes, constraints, rules, policies, statistics objects, publications, inheritance, triggers: Tessera has
  // none, so these lists are empty.
  return Rows({{"none", Type::Varchar()}});
}

}  // namespace tessera::pg
