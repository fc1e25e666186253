# bench/machine.sh — sourced by bench/run.sh, run_gemm.sh, run_pipelines.sh and run_conv.sh: the
# machine-state helpers they need. Expects $root (the repository) to be set.

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

# Busy and total jiffies of all CPUs: "busy total".
jiffies() {
  local a q total=0
  a=($(head -1 /proc/stat))
  for q in 1 2 3 4 5 6 7 8; do total=$(( total + a[q] )); done
  echo "$(( total - a[4] - a[5] )) $total"
}

# run LABEL OUT_JSON [ENV... --] BINARY ARGS...: one benchmark process with the caller's
# ${common[@]} and ${extra[@]} arguments, under nice -n $niceness, after waiting up to $wait_idle
# seconds for a quiet machine; its JSON into OUT_JSON, its console into $results/console.log, and
# the share of the machine (0..1) that other processes took meanwhile into $results/others.tsv.
run() {
  local label="$1" out="$2" me
  me="$(basename "$0")"
  shift 2
  local envs=()
  if [[ " $* " == *" -- "* ]]; then
    while [[ "$1" != "--" ]]; do envs+=("$1"); shift; done
    shift
  fi
  (( wait_idle > 0 )) && wait_quiet "$wait_idle" 1 quiet
  echo "$me: $label"
  local j0 j1 e u s hz ncpu
  hz="$(getconf CLK_TCK 2>/dev/null || echo 100)"
  ncpu="$(nproc)"
  j0=($(jiffies))
  if ! env "${envs[@]}" /usr/bin/time -f "%e %U %S" -o "$out.time" nice -n "$niceness" "$@" "${common[@]}" "${extra[@]}" \
       --benchmark_out="$out" >>"$results/console.log" 2>&1; then
    tail -20 "$results/console.log" >&2
    echo "$me: $label failed (log: $results/console.log)" >&2
    exit 1
  fi
  j1=($(jiffies))
  read -r e u s <"$out.time"
  rm -f "$out.time"
  awk -v busy=$(( j1[0] - j0[0] )) -v hz="$hz" -v e="$e" -v u="$u" -v s="$s" -v n="$ncpu" -v l="$label" \
    'BEGIN { o = (busy / hz - u - s) / (e * n); if (o < 0) o = 0; printf "%s\t%.3f\n", l, o }' >>"$results/others.tsv"
  tail -1 "$results/others.tsv" | awk -F'\t' -v me="$me" '{ printf "%s:   others took %.1f%% of the machine\n", me, 100 * $2 }'
}
