#!/usr/bin/env bash
# Installs, builds, checks the C++ format (.clang-format) and runs the fast test suite (unit tests and SQL logic
# tests; not the "slow" label).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"

bash "$ROOT/scripts/build.sh" "$BUILD_DIR"
bash "$ROOT/scripts/check_format.sh"
cd "$BUILD_DIR"
ctest --output-on-failure --label-exclude slow -j"$(nproc)" --timeout 300
