#pragma once
// Bounds how deep the recursive-descent parser recurses and how high the trees it builds are, so that neither
// the parser nor any later stage that walks the AST recursively (ToString, the binder, destructors) can
// overflow the stack, whatever the input.
//
// Two quantities are tracked in the same unit (roughly one AST level):
//  - depth: how many nested recursive parse calls are active. Every parse function that can recurse into
//  itself
//    opens a NestingScope; more than kMaxRecursionDepth is an error.
//  - height: loops that build left-deep chains (a + b + c, t1 JOIN t2 JOIN t3, x::a::b, UNION chains) create
//    their nodes after their operands, so the depth at which an operand was parsed does not include the chain
//    nodes above it. A ChainTracker measures each operand's height (the deepest point reached while parsing
//    it) and fails once the chain would make the tree higher than kMaxTreeHeight. Long flat chains such as `a
//    OR b OR ... ` with hundreds of terms are fine; unbounded ones are not.
//
// One instance per parse; not thread-safe.

#include <algorithm>

namespace tessera::parser {

class NestingBudget {
 public:
  static constexpr int kMaxRecursionDepth = 200;
  static constexpr int kMaxTreeHeight = 1000;

  // Returns false when the new depth exceeds kMaxRecursionDepth; Leave() must be called either way.
  bool Enter() {
    depth_++;
    peak_ = std::max(peak_, depth_);
    return depth_ <= kMaxRecursionDepth;
  }
  void Leave() { depth_--; }

 private:
  friend class ChainTracker;
  int depth_ = 0;
  int peak_ = 0;  // deepest level reached by any node parsed so far (within the current chain operand)
};

// RAII: one level of recursion. Check ok() right after construction.
class NestingScope {
 public:
  explicit NestingScope(NestingBudget& budget) : budget_(budget), ok_(budget.Enter()) {}
  ~NestingScope() { budget_.Leave(); }
  NestingScope(const NestingScope&) = delete;
  NestingScope& operator=(const NestingScope&) = delete;
  bool ok() const { return ok_; }

 private:
  NestingBudget& budget_;
  bool ok_;
};

// RAII: one left-deep chain. Usage:
//   ChainTracker chain(budget);
//   chain.BeforeOperand(); parse first operand; chain.AfterOperand();
//   while (operator) { chain.BeforeOperand(); parse operand; chain.AfterOperand();
//                      build node; if (!chain.NodeBuilt()) fail; }
// A node built from the chain alone (a postfix cast) calls NodeBuilt() without an operand.
class ChainTracker {
 public:
  explicit ChainTracker(NestingBudget& budget) : budget_(budget), base_(budget.depth_), saved_peak_(budget.peak_) {}
  ~ChainTracker() { budget_.peak_ = std::max(saved_peak_, base_ + std::max(height_, pending_)); }
  ChainTracker(const ChainTracker&) = delete;
  ChainTracker& operator=(const ChainTracker&) = delete;

  void BeforeOperand() { budget_.peak_ = budget_.depth_; }
  void AfterOperand() { pending_ = std::max(pending_, budget_.peak_ - base_); }
  // Returns false when the tree built so far is higher than kMaxTreeHeight.
  bool NodeBuilt() {
    height_ = 1 + std::max(height_, pending_);
    pending_ = 0;
    return base_ + height_ <= NestingBudget::kMaxTreeHeight;
  }

 private:
  NestingBudget& budget_;
  const int base_;
  const int saved_peak_;
  int height_ = 0;   // height of the chain built so far, above base_
  int pending_ = 0;  // highest operand parsed since the last node was built
};

}  // namespace tessera::parser
