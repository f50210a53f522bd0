#!/usr/bin/env bash
# Installs evald's build and run dependencies from Debian 12 packages (idempotent).
# Boost is 1.81 throughout: the libboost1.81-* packages conflict with the 1.74 defaults.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config clang-format
  iverilog verilator perl make
  libboost1.81-dev libboost-url1.81-dev libprotobuf-dev protobuf-compiler librocksdb-dev libcurl4-openssl-dev
  libseccomp-dev libspdlog-dev libfmt-dev libcli11-dev libpcre2-dev libssl-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  chromium wrk
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
