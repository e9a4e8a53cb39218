#!/usr/bin/env bash
# Installs every Debian package and Python tool Tessera needs, skipping what is already there.
# Safe to run repeatedly: a second run only checks and returns.
set -euo pipefail

DEBIAN_PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config git
  libabsl-dev libgoogle-glog-dev libgflags-dev libnuma-dev
  libprotobuf-dev protobuf-compiler libgrpc++-dev protobuf-compiler-grpc
  libgtest-dev libgmock-dev libbenchmark-dev libedit-dev libssl-dev
  libopenmpi-dev openmpi-bin
  python3 python3-pip
  clang-format  # scripts/check_format.sh and format.sh (Debian 12: clang-format 14)
  strace  # tests/e2e/test_shell.py slows the shell's terminal calls to test typing as the prompt appears
)

missing=()
for pkg in "${DEBIAN_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done
# psql, for the PostgreSQL protocol's end-to-end tests (any installed version will do).
command -v psql >/dev/null 2>&1 || missing+=(postgresql-client)

if ((${#missing[@]})); then
  echo "[install_deps] installing Debian packages: ${missing[*]}"
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Python tools: tpchgen-cli generates TPC-H data in dbgen's exact format; duckdb is the reference engine.
# (Debian's python3-grpcio serves only /usr/bin/python3 and its python3-grpc-tools is too old, hence pip.)
PYTHON=${PYTHON:-python3}
py_missing=()
"$PYTHON" -c "import duckdb" 2>/dev/null || py_missing+=(duckdb)
command -v tpchgen-cli >/dev/null 2>&1 || py_missing+=(tpchgen-cli)
"$PYTHON" -c "import pytest" 2>/dev/null || py_missing+=(pytest)
"$PYTHON" -c "import pexpect" 2>/dev/null || py_missing+=(pexpect)  # the shell's terminal tests
# The Python client of tessera-server (client/python) and its tests: grpcio, and grpcio-tools to generate the stubs.
"$PYTHON" -c "import grpc" 2>/dev/null || py_missing+=(grpcio)
"$PYTHON" -c "import grpc_tools.protoc" 2>/dev/null || py_missing+=(grpcio-tools)
# The PostgreSQL protocol's end-to-end tests and benchmark (psql comes from postgresql-client above).
"$PYTHON" -c "import psycopg" 2>/dev/null || py_missing+=("psycopg[binary]")
if ((${#py_missing[@]})); then
  echo "[install_deps] installing Python packages: ${py_missing[*]}"
  "$PYTHON" -m pip install -q "${py_missing[@]}" 2>/dev/null ||
    "$PYTHON" -m pip install -q --break-system-packages "${py_missing[@]}"
fi
