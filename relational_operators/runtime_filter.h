#pragma once
// Filters on join keys that one operator builds at run time and the block scanners of other operators apply
// (Quickstep D§2.5.2 and D§2.5.3):
//   - LIP filters (bloom_filter.h): Bloom filters over a hash join's build keys, applied by the probe-side scan
//     before any hash probe; they may let non-matching rows through, never drop a matching one.
//   - Exact filters (exact_filter.h): bit vectors over a dense integer key that replace a semi / anti join's
//     hash table; the scan that applies them *is* the join.
//
// Lifecycle: the plan builder creates the filter object and hands it to the building operator and to the
// scans that read it; the builder fills it; a DAG edge from the builder to every reading operator makes the
// readers start only after the filter is complete. From then on the filter is immutable and probed
// concurrently by any number of work orders.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "expressions/column_vector.h"

namespace tessera {

class RuntimeFilter {
 public:
  virtual ~RuntimeFilter() = default;

  // Keeps the candidate rows (`in`'s rows, or rows 0..size-1 when `in` is null) whose key may be in the set,
  // writing them in order to `out` (capacity kVectorSize; `out` must not be `in`). `keys` are the key columns
  // of the batch (one per key pair, types as the build keys). A row with a NULL key is never in the set.
  virtual void KeepMembers(const std::vector<const ColumnVector*>& keys, const SelectionVector* in, uint32_t size,
                           SelectionVector* out) const = 0;
  // The complement of KeepMembers (rows whose key is certainly not in the set, NULL keys included); only exact
  // filters can answer it.
  virtual void KeepNonMembers(const std::vector<const ColumnVector*>& keys, const SelectionVector* in, uint32_t size,
                              SelectionVector* out) const = 0;

  // Some kept rows stand for several join results (an inner join turned into a semi join whose build keys
  // turned out not to be unique); then Multiplicity gives the count for a kept row. Valid once complete.
  virtual bool expands_rows() const { return false; }
  // Whether a probe costs about one bit test per row (valid once complete): scanners apply such filters before
  // their own filter predicate, which then runs on fewer rows.
  virtual bool probes_before_scan_filter() const { return false; }
  virtual uint32_t Multiplicity(const std::vector<const ColumnVector*>& keys, uint32_t row) const { return 1; }

  // A filter over one INTEGER, DATE, BIGINT or TIMESTAMP key that is a bit vector over the key's values (a dense
  // LIP filter, an exact filter): bit k of `words` (little-endian 64-bit words) is set iff key min + k is in the
  // set, for k < bits; keys outside [min, min + bits) are not in it. Scanners test frame-of-reference codes
  // against it without decoding the key (block_scanner.h). Valid once complete.
  struct DenseKeyBits {
    const uint64_t* words = nullptr;
    int64_t min = 0;
    uint64_t bits = 0;
  };
  // False when the filter is not such a bit vector.
  virtual bool dense_key_bits(DenseKeyBits* out) const { return false; }
};

// Rows that went into and came out of one filter at one scan, summed over work orders: the scanner orders its
// filters by the pass rate observed so far (the most selective first, D§2.5.3's adaptive order).
struct RuntimeFilterCounters {
  std::atomic<int64_t> rows_in{0};
  std::atomic<int64_t> rows_out{0};
};

// One filter applied by one scan: keep the rows whose key columns are (member) or are not (!member) in the set.
struct RuntimeFilterProbe {
  std::shared_ptr<const RuntimeFilter> filter;
  std::vector<int> key_columns;  // batch columns of the scan
  bool member = true;
  // Whether the filter only saves work: a LIP filter, whose join checks every row it lets through anyway, so that
  // leaving it out changes no answer (exact semi / anti join filters *are* their join and are never optional).
  // The scanner leaves out optional filters that earlier work orders saw pass almost every row.
  bool optional = false;
  std::shared_ptr<RuntimeFilterCounters> counters = std::make_shared<RuntimeFilterCounters>();
};

}  // namespace tessera
