# bench/machine.sh — sourced by bench/run.sh and bench/run_gemm.sh: the machine-state helpers
# both need. Expects $root (the repository) to be set.

# Fraction of all CPUs busy over ${1:-2} seconds, from /proc/stat.
busy_fraction() {
  local a b
  a=($(head -1 /proc/stat))
  sleep "${1:-2}"
  b=($(head -1 /proc/stat))
  local idle=$(( (b[4] + b[5]) - (a[4] + a[5]) ))
  local total=0 q
  for q in 1 2 3 4 5 6 7 8; do total=$(( total + b[q] - a[q] )); done
  awk -v i="$idle" -v t="$total" 'BEGIN { printf "%.2f", (t > 0 ? 1 - i / t : 0) }'
}

# wait_quiet MAX_WAIT [WINDOW] [quiet]: waits until fewer than 25% of the CPUs are busy, at most
# MAX_WAIT seconds; prints what it found unless told to be quiet.
wait_quiet() {
  local max_wait="$1" window="${2:-2}" quiet="${3:-}" waited=0 busy
  while :; do
    busy="$(busy_fraction "$window")"
    if awk -v b="$busy" 'BEGIN { exit !(b < 0.25) }'; then
      [[ -n "$quiet" ]] || echo "$(basename "$0"): machine quiet (busy $busy) after ${waited}s"
      return
    fi
    if (( waited >= max_wait )); then
      echo "$(basename "$0"): WARNING: machine still busy ($busy of all CPUs) after ${waited}s; running anyway (numbers will be noisy)"
      return
    fi
    sleep 1
    waited=$(( waited + window + 1 ))
  done
}

# A hash of every header under include/, as the binaries were built from it.
include_snapshot() {
  (cd "$root" && find include -type f | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-16)
}
