#!/usr/bin/env bash
# Decode speed of evald's core against llama.cpp (node-llama-cpp, prebuilt CPU build) on the same
# GGUF files and one thread, at Llama 1.1B or 7B shapes (random weights written by evald), Q8_0
# and Q4_0; plus evald's n=20 aggregate. Prints tok/s, the ratio, and the fraction of the
# memory-bandwidth limit (measured in the same run, for the machine and for --threads threads).
# With --repeats R the two are measured alternately R times on the same file and the median
# ratio is printed too (this machine's speed moves between minutes). EVALD_ISA=avx2 (or avx-vnni,
# scalar) makes evald take that path on a CPU that runs it, so that an AVX-512 host measures the
# AVX2 kernels too; llama.cpp keeps its own choice, so such a ratio is not like for like.
#   bench/decode_vs_llama_cpp.sh [--shape 1.1b|7b] [--tokens 32] [--n 20] [--threads 1]
#                                [--types "q4_0 q8_0"] [--repeats 1]
set -euo pipefail
cd "$(dirname "$0")/.."
TOKENS=32
N=20
THREADS=1
TYPES="q4_0 q8_0"
SHAPE=1.1b
REPEATS=1
BANDWIDTH=0  # GB/s; 0: measured by evald in the same run, with all hardware threads and with --threads
source bench/args.sh
parse_args "TOKENS N BANDWIDTH THREADS TYPES SHAPE REPEATS" "$@"
EVALD=${EVALD:-$(find_evald)}  # another build: EVALD=build-test/bin/evald bench/...
REF_DIR=.cache/node-llama-cpp
[ -d "$REF_DIR/node_modules/node-llama-cpp" ] || { echo "run scripts/install-deps.sh (node-llama-cpp)" >&2; exit 2; }
VOCAB=../shared/models/llama-2-tiny-random.gguf
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cp tests/reference/llama_cpp_reference.mjs "$REF_DIR/"
case "$SHAPE" in
  1.1b) DIMS=(--dim 2048 --layers 22 --heads 32 --kv-heads 4 --hidden 5632 --context 2048)
        echo "decode at Llama 1.1B shapes (dim 2048, 22 layers, 32 heads / 4 KV heads, FFN 5632, vocab 32000), $THREADS thread(s)" ;;
  7b)   DIMS=(--dim 4096 --layers 32 --heads 32 --kv-heads 32 --hidden 11008 --context 2048)
        echo "decode at Llama 2 7B shapes (dim 4096, 32 layers, 32 heads / 32 KV heads, FFN 11008, vocab 32000), $THREADS thread(s)" ;;
  *) echo "--shape 1.1b | 7b" >&2; exit 2 ;;
esac
for type in $TYPES; do
  "$EVALD" bench make-model "$TMP/m-$type.gguf" --vocab "$VOCAB" "${DIMS[@]}" --type "$type"
  echo "$type: file $(du -BM "$TMP/m-$type.gguf" | cut -f1)"
  ratios=""
  for r in $(seq "$REPEATS"); do
    ref=$(cd "$REF_DIR" && node llama_cpp_reference.mjs "$TMP/m-$type.gguf" \
      "{\"timing\": {\"prompt\": \"Once upon a time\", \"tokens\": $TOKENS, \"threads\": $THREADS}}" 2>/dev/null |
      python3 -c "import json,sys; print('%.2f' % json.load(sys.stdin)['timing']['tokens_per_second'])")
    ours=$("$EVALD" bench decode --model "$TMP/m-$type.gguf" --tokens "$TOKENS" --n "$N" --threads "$THREADS" \
      --bandwidth "$BANDWIDTH")
    evald_tps=$(echo "$ours" | sed -n 's/^decode: \([0-9.]*\) tok\/s.*/\1/p')
    ratio=$(python3 -c "print(f'{$evald_tps/$ref:.2f}')")
    ratios="$ratios $ratio"
    echo "$type run $r: llama.cpp $ref tok/s | evald $evald_tps tok/s | ratio ${ratio}x"
    if [ "$r" = 1 ]; then echo "$ours" | sed -n '2,$p' | sed 's/^/  evald /'; fi
  done
  if [ "$REPEATS" -gt 1 ]; then echo "$type: median ratio $(python3 -c "import statistics,sys; print(f'{statistics.median(map(float, sys.argv[1:])):.2f}x')" $ratios) over $REPEATS alternating runs ($ratios )"; fi
  rm -f "$TMP/m-$type.gguf"
done
