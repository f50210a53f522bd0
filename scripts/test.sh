#!/usr/bin/env bash
# Runs every test: formatting check, the layering, a -Werror build, clang's thread-safety
# analysis, the whole GoogleTest suite through CTest, a short libFuzzer run of the grader's
# parsers, then the same suite built with AddressSanitizer + UndefinedBehaviorSanitizer.
# Tests that use ../shared/verilog-eval skip themselves when it is absent.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/evald-ccache}"
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"  # clones in other folders share the cache
JOBS="${JOBS:-2}"

echo "== clang-format =="
git ls-files '*.cc' '*.h' | xargs clang-format --dry-run -Werror

echo "== layers (no include edge the layering forbids) =="
python3 scripts/check_layers.py

echo "== build (warnings are errors) =="
cmake -S . -B build-test -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEVALD_WERROR=ON
cmake --build build-test -j "$JOBS"
echo "== thread safety (clang -Wthread-safety over the sources holding annotated mutexes) =="
JOBS="$JOBS" python3 scripts/check_thread_safety.py build-test
echo "== tests =="
ctest --test-dir build-test -j "$JOBS" --output-on-failure --timeout 900

echo "== libFuzzer smoke run (the grader's parsers of untrusted text) =="
scripts/fuzz_smoke.sh 30

echo "== build (ASan + UBSan) =="
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DEVALD_WERROR=ON -DEVALD_SANITIZE=ON
cmake --build build-asan -j "$JOBS"
echo "== tests under sanitizers =="
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan -j "$JOBS" --output-on-failure --timeout 1800
