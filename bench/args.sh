# Argument parsing shared by the bench scripts (sourced, not run).
#   parse_args "TOKENS N THREADS" "$@"
# Each `--some-name VALUE` sets the variable SOME_NAME, which must be in the list (the script
# gives it its default before calling); anything else exits 2 with a message.
parse_args() {
  local allowed=" $1 "
  shift
  while [ $# -gt 0 ]; do
    local var
    var=$(printf '%s' "${1#--}" | tr 'a-z-' 'A-Z_')
    if [[ "$1" != --* || "$allowed" != *" $var "* || $# -lt 2 ]]; then
      echo "unknown argument $1 (expected:$(printf ' --%s' $(printf '%s' "$allowed" | tr 'A-Z_' 'a-z-')) VALUE)" >&2
      exit 2
    fi
    printf -v "$var" '%s' "$2"
    shift 2
  done
}

# The evald binary to measure: build/ (scripts/setup.sh), else build-test/; exits 2 when neither.
find_evald() {
  local b
  for b in build/bin/evald build-test/bin/evald; do
    [ -x "$b" ] && { echo "$b"; return; }
  done
  echo "build evald first (scripts/setup.sh)" >&2
  exit 2
}
