#!/usr/bin/env bash
# Shared by check_format.sh and format.sh (source it): CLANG_FORMAT, the Debian clang-format that
# scripts/install_deps.sh installs, and format_files, the C++ files to act on: the arguments, or else every
# tracked and untracked (not ignored) .h / .cc / .cpp file of the tree outside third_party/.
CLANG_FORMAT=${CLANG_FORMAT:-/usr/bin/clang-format}
if [[ ! -x "$CLANG_FORMAT" ]]; then
  echo "$CLANG_FORMAT not found: run scripts/install_deps.sh (Debian's clang-format)" >&2
  exit 2
fi

format_files() {
  if (($#)); then
    printf '%s\n' "$@"
  else
    git -C "$ROOT" ls-files --cached --others --exclude-standard -- '*.h' '*.cc' '*.cpp' ':!third_party/**' |
      sed "s|^|$ROOT/|"
  fi
}
