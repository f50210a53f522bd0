#!/usr/bin/env bash
# Installs evald's build and run dependencies from Debian 12 packages (idempotent).
# Boost is 1.81 throughout: the libboost1.81-* packages conflict with the 1.74 defaults.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config clang-format clang libclang-rt-14-dev
  iverilog verilator yosys perl make
  libboost1.81-dev libboost-url1.81-dev libprotobuf-dev protobuf-compiler librocksdb-dev libcurl4-openssl-dev
  libseccomp-dev libspdlog-dev libfmt-dev libcli11-dev libpcre2-dev libssl-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  chromium wrk python3 python3-jinja2 curl openssl
  munge slurmctld slurmd slurm-client
)

# llama.cpp as the reference for the decoding core's tests: the npm package node-llama-cpp with
# only its x86-64 CPU binaries (83 MB instead of 730 MB with every GPU variant), in .cache/.
install_llama_cpp_reference() {
  local dir
  dir="$(cd "$(dirname "$0")/.." && pwd)/.cache/node-llama-cpp"
  if [ -d "$dir/node_modules/node-llama-cpp" ]; then return 0; fi
  if ! command -v npm >/dev/null; then
    echo "install-deps: npm not found; the llama.cpp comparison tests will be skipped"
    return 0
  fi
  mkdir -p "$dir"
  (cd "$dir" && npm i -E --omit=optional --no-audit --no-fund --loglevel=error \
      node-llama-cpp@3.21.1 @node-llama-cpp/linux-x64@3.21.1) ||
    echo "install-deps: could not install node-llama-cpp; the llama.cpp comparison tests will be skipped"
}

# The official OpenAI Node client, for the test that runs it unmodified against evald's server
# (tests/reference/openai_client.mjs), and an OpenAPI 3.1 validator for the document the daemon
# serves (tests/reference/validate_openapi.mjs), beside node-llama-cpp so that the same scripts
# folder resolves them. Pinned; each installed once.
install_node_clients() {
  local dir
  dir="$(cd "$(dirname "$0")/.." && pwd)/.cache/node-llama-cpp"
  if ! command -v npm >/dev/null; then return 0; fi
  mkdir -p "$dir"
  local want=()
  [ -d "$dir/node_modules/openai" ] || want+=(openai@7.59.0)
  [ -d "$dir/node_modules/@seriousme/openapi-schema-validator" ] ||
    want+=(@seriousme/openapi-schema-validator@2.11.0)
  if [ ${#want[@]} -eq 0 ]; then return 0; fi
  (cd "$dir" && npm i -E --omit=optional --no-audit --no-fund --loglevel=error "${want[@]}") ||
    echo "install-deps: could not install ${want[*]}; the tests that run them will be skipped"
}

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  install_llama_cpp_reference
  install_node_clients
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
install_llama_cpp_reference
install_node_clients
