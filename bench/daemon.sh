# A daemon for a bench script to measure (sourced, not run, after EVALD and TMP are set).
#   bench_token            sets TOKEN and writes "$TMP/tokens" (the token may submit)
#   start_daemon NAME ...  (re)starts `evald serve` on a free port over the store $TMP/store-NAME,
#                          its stderr in $TMP/log-NAME, the further arguments its flags; sets PID,
#                          PORT and BASE. Stop it with stop_daemon (the script's EXIT trap).
#   api ARGS...            curl -sf with the token
bench_token() {
  TOKEN="bench-token-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  echo "$TOKEN submit" > "$TMP/tokens"
}

PID=""
stop_daemon() {
  [ -n "$PID" ] && { kill "$PID" 2>/dev/null; wait "$PID" 2>/dev/null || true; }
  PID=""
}

start_daemon() {
  local name="$1"
  shift
  stop_daemon
  rm -f "$TMP/out"
  "$EVALD" serve --listen 127.0.0.1:0 --data "$TMP/store-$name" --tokens "$TMP/tokens" "$@" \
    > "$TMP/out" 2> "$TMP/log-$name" &
  PID=$!
  for _ in $(seq 100); do grep -q listening "$TMP/out" 2>/dev/null && break; sleep 0.1; done
  PORT=$(sed -n 's/^listening .*:\([0-9]*\)$/\1/p' "$TMP/out")
  BASE="http://127.0.0.1:$PORT"
}

api() { curl -sf -H "Authorization: Bearer $TOKEN" "$@"; }
