#!/usr/bin/env bash
# Checks that C++ files follow the repository's .clang-format. Usage: scripts/check_format.sh [FILE...]
# (default: every C++ file of the tree, scripts/clang_format_files.sh). Prints the files that clang-format would
# change and exits 1 when there are any; scripts/format.sh FILE... applies the format.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/clang_format_files.sh"

unformatted=$(format_files "$@" | xargs -d '\n' -P "$(nproc)" -n 16 sh -c '
  for file; do "$0" --style=file "$file" | cmp -s - "$file" || echo "$file"; done' "$CLANG_FORMAT" | sort)
if [[ -n "$unformatted" ]]; then
  echo "not formatted by .clang-format ($(wc -l <<<"$unformatted") files; scripts/format.sh FILE... fixes them):"
  echo "$unformatted"
  exit 1
fi
