#!/usr/bin/env bash
# Installs what is missing, configures and builds Tessera. Usage: scripts/build.sh [BUILD_DIR] [extra cmake args]
# BUILD_TYPE=Debug|Release|RelWithDebInfo (default Release); TESSERA_SANITIZE=ON for ASan/UBSan.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${1:-$ROOT/build}"
shift || true

bash "$ROOT/scripts/install_deps.sh"

if [[ ! -f "$BUILD_DIR/build.ninja" ]]; then
  cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja \
    -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" \
    -DTESSERA_SANITIZE="${TESSERA_SANITIZE:-OFF}" "$@"
fi
cmake --build "$BUILD_DIR" -- -j"$(nproc)"
