#!/usr/bin/env bash
# Formats C++ files in place with the repository's .clang-format. Usage: scripts/format.sh [FILE...]
# (default: every C++ file of the tree, scripts/clang_format_files.sh). scripts/check_format.sh checks.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/clang_format_files.sh"

format_files "$@" | xargs -d '\n' -P "$(nproc)" -n 16 "$CLANG_FORMAT" --style=file -i
