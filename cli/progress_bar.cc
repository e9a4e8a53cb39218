#include "cli/progress_bar.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/result_format.h"

namespace tessera {
namespace {

// Eighths of a block, for a smooth bar end.
constexpr const char* kPartialBlocks[] = {"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"};
constexpr char kFullBlock[] = "█";

// "950 rows", "12.3k rows", "6.0M rows".
std::string RowCountText(int64_t rows) {
  if (rows < 1000) return absl::StrCat(rows, rows == 1 ? " row" : " rows");
  if (rows < 1000000) return absl::StrFormat("%.1fk rows", rows / 1e3);
  return absl::StrFormat("%.1fM rows", rows / 1e6);
}

// The operator to name (with the rows it wrote so far, e.g. a COPY's rows loaded): among the running ones, the one with the most work orders left (unknown totals last).
std::string RunningOperatorText(const QueryProgress& progress) {
  // Held back by the load controller: say so rather than name an operator that cannot run.
  if (progress.admission != "admitted" && !progress.admission.empty()) return progress.admission;
  const OperatorProgress* chosen = nullptr;
  int64_t chosen_left = -2;
  int running = 0;
  for (const OperatorProgress& op : progress.operators) {
    if (op.state != OperatorState::kRunning) continue;
    ++running;
    int64_t left = op.estimated_total >= 0 ? op.estimated_total - op.finished : -1;
    if (chosen == nullptr || left > chosen_left) {
      chosen = &op;
      chosen_left = left;
    }
  }
  if (chosen == nullptr) return progress.operators.empty() ? "starting" : "waiting";
  std::string text = chosen->name;
  if (chosen->rows_out > 0) absl::StrAppend(&text, " ", RowCountText(chosen->rows_out));
  if (running > 1) absl::StrAppend(&text, " +", running - 1);
  return text;
}

}  // namespace

std::string RenderProgressLine(const QueryProgress& progress, double elapsed_seconds, size_t width) {
  width = std::max<size_t>(width, 20);
  const double fraction = std::clamp(progress.fraction_done, 0.0, 1.0);
  size_t done_operators = 0;
  for (const OperatorProgress& op : progress.operators) done_operators += op.state == OperatorState::kDone;

  std::string percent = absl::StrFormat("%3d%% ", static_cast<int>(std::floor(fraction * 100)));
  std::string detail = absl::StrCat(" ", RunningOperatorText(progress));
  if (!progress.operators.empty()) {
    absl::StrAppend(&detail, " (", done_operators, " of ", progress.operators.size(), " operators done)");
  }
  std::string elapsed = absl::StrFormat(" %.1f s", elapsed_seconds);
  // The bar takes what is left, between 10 and 40 cells; the detail is cut when even that does not fit.
  const size_t fixed = DisplayWidth(percent) + 2 + DisplayWidth(elapsed);
  size_t bar_cells = width > fixed + DisplayWidth(detail) ? width - fixed - DisplayWidth(detail) : 0;
  bar_cells = std::clamp<size_t>(bar_cells, 10, 40);
  if (fixed + bar_cells > width) bar_cells = width > fixed + 1 ? width - fixed : 1;
  if (fixed + bar_cells + DisplayWidth(detail) > width) {
    size_t room = width > fixed + bar_cells ? width - fixed - bar_cells : 0;
    std::string cut;
    size_t kept = 0;
    for (size_t i = 0; i < detail.size() && kept < room; ++i) {
      cut.push_back(detail[i]);
      if (i + 1 == detail.size() || (static_cast<unsigned char>(detail[i + 1]) & 0xC0) != 0x80) ++kept;
    }
    detail = cut;
  }

  const size_t eighths = static_cast<size_t>(std::floor(fraction * bar_cells * 8));
  std::string bar = "[";
  for (size_t i = 0; i < eighths / 8; ++i) bar += kFullBlock;
  size_t cells = eighths / 8;
  if (cells < bar_cells && eighths % 8 != 0) {
    bar += kPartialBlocks[eighths % 8];
    ++cells;
  }
  bar.append(bar_cells - cells, ' ');
  bar += "]";
  return absl::StrCat(percent, bar, detail, elapsed);
}

}  // namespace tessera
