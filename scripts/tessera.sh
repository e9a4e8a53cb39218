#!/usr/bin/env bash
# The main job: install, build, and open the SQL shell on a local data directory. On first start the directory
# is filled with a TPC-H database at scale factor 0.1 so that there is something to query at once.
# Usage: scripts/tessera.sh [DATA_DIR] [shell options...]   (default DATA_DIR: ./data)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DATA_DIR="${1:-$ROOT/data}"
shift || true
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"

bash "$ROOT/scripts/build.sh" "$BUILD_DIR" >&2
TESSERA="$BUILD_DIR/cli/tessera"

if [[ ! -f "$DATA_DIR/catalog.tcat" ]]; then
  bash "$ROOT/scripts/load_tpch.sh" "$TESSERA" "$DATA_DIR" 0.1 >&2
fi
exec "$TESSERA" "$DATA_DIR" "$@"
