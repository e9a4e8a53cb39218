#pragma once
// Propagation helpers for absl::Status / absl::StatusOr across module boundaries.

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define TESSERA_CONCAT_INNER(a, b) a##b
#define TESSERA_CONCAT(a, b) TESSERA_CONCAT_INNER(a, b)

// Returns from the current function with the status if `expr` is not OK.
#define TESSERA_RETURN_IF_ERROR(expr)                  \
  do {                                                 \
    ::absl::Status _tessera_status = (expr);           \
    if (!_tessera_status.ok()) return _tessera_status; \
  } while (0)

// `TESSERA_ASSIGN_OR_RETURN(auto x, MakeX());` assigns the value or returns the error.
#define TESSERA_ASSIGN_OR_RETURN(lhs, expr) \
  TESSERA_ASSIGN_OR_RETURN_IMPL(TESSERA_CONCAT(_tessera_statusor_, __LINE__), lhs, expr)
#define TESSERA_ASSIGN_OR_RETURN_IMPL(statusor, lhs, expr) \
  auto statusor = (expr);                                  \
  if (!statusor.ok()) return std::move(statusor).status(); \
  lhs = std::move(statusor).value()
