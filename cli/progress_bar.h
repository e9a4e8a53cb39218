#pragma once
// The shell's progress line for a running query, e.g.
//   " 42% [███████████▌               ] HashJoin (3 of 7 operators done) 2.4 s"
// Pure rendering: the shell polls Connection::Progress() and redraws this line on stderr (statement_monitor.h).

#include <cstddef>
#include <string>

#include "scheduler/schedulable_query.h"

namespace tessera {

// One line (no newline) that fits in `width` characters (at least 20): the percentage done, a bar, the operator
// running now (the running one with the most work orders left, with the rows it wrote so far when any, e.g. a
// COPY's "CopyFrom 1.2M rows"; "+N" when more run), how many operators are done,
// and the elapsed time. Uses UTF-8 block characters for the bar.
std::string RenderProgressLine(const QueryProgress& progress, double elapsed_seconds, size_t width);

// Erases the progress line: a carriage return and "erase to end of line".
inline constexpr char kClearProgressLine[] = "\r\x1b[K";

}  // namespace tessera
