#!/usr/bin/env bash
# Runs every test: formatting check, the layering, a -Werror build, clang's thread-safety
# analysis, the whole GoogleTest suite through CTest, a short libFuzzer run of the grader's
# parsers, then the same suite built with AddressSanitizer + UndefinedBehaviorSanitizer (less
# the few simulator-bound tests named below).
# Tests that use ../shared/verilog-eval skip themselves when it is absent.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/evald-ccache}"
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"  # clones in other folders share the cache
JOBS="${JOBS:-2}"
# Each phase says when it began, so a CI log shows where the time went.
phase() { echo "== $1 == (at ${SECONDS} s)"; }

phase "clang-format"
git ls-files '*.cc' '*.h' | xargs clang-format --dry-run -Werror

phase "layers (no include edge the layering forbids)"
python3 scripts/check_layers.py

phase "build (warnings are errors)"
# Optimized as shipped, without debug information (CI reads only text; it is a third of the
# compile time); the sanitizer build keeps the line tables its stack traces print.
cmake -S . -B build-test -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEVALD_WERROR=ON \
  -DEVALD_DEBUG_INFO=-g0
cmake --build build-test -j "$JOBS"
phase "thread safety (clang -Wthread-safety over the sources holding annotated mutexes)"
JOBS="$JOBS" python3 scripts/check_thread_safety.py build-test
phase "tests"
ctest --test-dir build-test -j "$JOBS" --output-on-failure --timeout 900

phase "libFuzzer smoke run (the grader's parsers of untrusted text)"
scripts/fuzz_smoke.sh 30

phase "build (ASan + UBSan, clang)"
# clang: half of gcc's time for this build (389 s against 703 s here), and a second compiler's
# warnings as errors beside gcc's above.
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DEVALD_WERROR=ON -DEVALD_SANITIZE=ON \
  -DEVALD_DEBUG_INFO=-g1 -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++
cmake --build build-asan -j "$JOBS"
phase "tests under sanitizers"
# Every test but a few whose time goes to the simulators (whole benchmarks graded, Verilator's
# C++ compile of each design, the preprocessors run on generated texts): they ran above on the
# optimized build, here the sanitizers would watch grader paths that lighter tests and the fuzz
# targets cover, and they are two-fifths of the optimized suite's test time.
SIMULATOR_BOUND='AutoSimulatorGradesEveryProblemAnySimulatorCan|EveryReferencePassesExceptTheKnownBrokenOnes'
SIMULATOR_BOUND+='|HostileCorpus\.ContainedAndGradedAsFailure/verilator|JudgeIsolation\..*/verilator'
SIMULATOR_BOUND+='|PreprocessorDifferential\.GeneratedTextsReadAlikeAndStayFinal'
SIMULATOR_BOUND+='|VerilogEvalV1\.EveryReferenceCalibratesAsDocumented'
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan -j "$JOBS" --output-on-failure --timeout 1800 -E "$SIMULATOR_BOUND"
phase "all passed"
