#!/usr/bin/env bash
# Decode speed of evald's core against llama.cpp (node-llama-cpp, prebuilt CPU build) on the same
# GGUF files and one thread, at Llama 1.1B shapes (random weights written by evald), Q8_0 and
# Q4_0; plus evald's n=20 aggregate. Prints tok/s, the ratio, and the fraction of the
# memory-bandwidth limit.
#   bench/decode_vs_llama_cpp.sh [--tokens 32] [--n 20] [--threads 1] [--types "q4_0 q8_0"]
set -euo pipefail
cd "$(dirname "$0")/.."
TOKENS=32
N=20
THREADS=1
TYPES="q4_0 q8_0"
BANDWIDTH=47.5  # GB/s, this machine (../shared/models/README.md)
source bench/args.sh
parse_args "TOKENS N BANDWIDTH THREADS TYPES" "$@"
EVALD=${EVALD:-$(find_evald)}  # another build: EVALD=build-test/bin/evald bench/...
REF_DIR=.cache/node-llama-cpp
[ -d "$REF_DIR/node_modules/node-llama-cpp" ] || { echo "run scripts/install-deps.sh (node-llama-cpp)" >&2; exit 2; }
VOCAB=../shared/models/llama-2-tiny-random.gguf
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cp tests/reference/llama_cpp_reference.mjs "$REF_DIR/"
echo "decode at Llama 1.1B shapes (dim 2048, 22 layers, 32 heads / 4 KV heads, FFN 5632, vocab 32000), $THREADS thread(s)"
for type in $TYPES; do
  "$EVALD" bench make-model "$TMP/tl-$type.gguf" --vocab "$VOCAB" --dim 2048 --layers 22 --heads 32 \
    --kv-heads 4 --hidden 5632 --context 2048 --type "$type"
  ref=$(cd "$REF_DIR" && node llama_cpp_reference.mjs "$TMP/tl-$type.gguf" \
    "{\"timing\": {\"prompt\": \"Once upon a time\", \"tokens\": $TOKENS, \"threads\": $THREADS}}" 2>/dev/null |
    python3 -c "import json,sys; print('%.2f' % json.load(sys.stdin)['timing']['tokens_per_second'])")
  ours=$("$EVALD" bench decode --model "$TMP/tl-$type.gguf" --tokens "$TOKENS" --n "$N" --threads "$THREADS" \
    --bandwidth "$BANDWIDTH")
  evald_tps=$(echo "$ours" | sed -n 's/^decode: \([0-9.]*\) tok\/s.*/\1/p')
  echo "$type: llama.cpp $ref tok/s | evald $evald_tps tok/s | ratio $(python3 -c "print(f'{$evald_tps/$ref:.2f}x')")"
  echo "$ours" | sed -n '2,$p' | sed 's/^/  evald /'
  rm -f "$TMP/tl-$type.gguf"
done
