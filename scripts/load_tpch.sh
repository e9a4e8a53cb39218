#!/usr/bin/env bash
# Generates TPC-H data with tpchgen-cli (dbgen's exact format) and loads it into a Tessera data directory.
# Usage: scripts/load_tpch.sh TESSERA_BINARY DATA_DIR SCALE_FACTOR
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TESSERA="$1"
DATA_DIR="$2"
SF="$3"
TBL_DIR="${TESSERA_TPCH_CACHE:-$HOME/.cache/tessera}/tpch-sf$SF"

if [[ ! -f "$TBL_DIR/.complete" ]]; then
  echo "[tessera] generating TPC-H scale factor $SF in $TBL_DIR ..."
  mkdir -p "$TBL_DIR"
  tpchgen-cli tbl -s "$SF" -o "$TBL_DIR"
  touch "$TBL_DIR/.complete"
fi
echo "[tessera] loading TPC-H scale factor $SF into $DATA_DIR ..."
"$TESSERA" "$DATA_DIR" -f "$ROOT/benchmarks/tpch/schema.sql" >/dev/null
for table in region nation part supplier partsupp customer orders lineitem; do
  start=$(date +%s%N)
  result=$("$TESSERA" "$DATA_DIR" -c "COPY $table FROM '$TBL_DIR/$table.tbl' (DELIMITER '|')")
  printf "[tessera]   %-9s %s (%d ms)\n" "$table" "$result" $((($(date +%s%N) - start) / 1000000))
done
