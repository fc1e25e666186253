#!/usr/bin/env bash
# bench/compile_time.sh — compile time of one fused elementwise definition, and of one GEMM +
# bias + ReLU, with loom and with Eigen 3.4: bench/compile/{loom,eigen}_{fused,gemm}.cpp, each compiled
# RUNS times (default 7) with  $CXX -std=c++20 -O2 -march=native -fopenmp -c  and timed with
# /usr/bin/time: wall-clock seconds and CPU seconds (user + sys). loom and Eigen compiles
# alternate, so a change in the machine's load hits both alike; prints every run, the medians and
# their ratios. CPU time is the steadier of the two on a shared machine (another process on the
# other core barely moves it); wall time is what a user waits. Run it on a quiet machine (the load
# average is printed along).
#
#   bench/compile_time.sh [RUNS]
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
runs="${1:-7}"
cxx="${CXX:-g++}"
flags=(-std=c++20 -O2 -march=native -fopenmp)
eigen_inc="${EIGEN_INCLUDE:-/usr/include/eigen3}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

median_of() { printf '%s\n' "$@" | median; }

show() {  # label wall-median cpu-median wall-array-name cpu-array-name
  local -n walls="$4" cpus="$5"
  printf '%-22s median %6.2f s wall, %6.2f s CPU   wall: %s   CPU: %s\n' "$1" "$2" "$3" "${walls[*]}" "${cpus[*]}"
}

compile_once() {  # label source include-flags... -> prints "wall cpu" seconds
  local label="$1" src="$2"
  shift 2
  if ! /usr/bin/time -f '%e %U %S' -o "$tmp/time" "$cxx" "${flags[@]}" "$@" -c "$src" -o "$tmp/probe.o" 2>"$tmp/cc.err"; then
    cat "$tmp/cc.err" >&2
    echo "compile_time.sh: $label failed to compile" >&2
    exit 1
  fi
  tail -1 "$tmp/time" | awk '{ printf "%.2f %.2f\n", $1, $2 + $3 }'
}

pair() {  # name: bench/compile/loom_<name>.cpp against eigen_<name>.cpp, runs interleaved
  local name="$1" q lt et
  local loom_wall=() loom_cpu=() eigen_wall=() eigen_cpu=()
  local have_eigen=0
  [[ -f "$eigen_inc/Eigen/Core" ]] && have_eigen=1
  # Interleaved (loom, Eigen, loom, ...): a change in the machine's load hits both alike.
  for ((q = 0; q < runs; ++q)); do
    lt="$(compile_once "loom_$name" "$here/compile/loom_$name.cpp" -I"$root/include")" || exit 1
    loom_wall+=("${lt% *}"); loom_cpu+=("${lt#* }")
    if ((have_eigen)); then
      et="$(compile_once "eigen_$name" "$here/compile/eigen_$name.cpp" -isystem "$eigen_inc")" || exit 1
      eigen_wall+=("${et% *}"); eigen_cpu+=("${et#* }")
    fi
  done
  local lw lc ew ec
  lw="$(median_of "${loom_wall[@]}")"
  lc="$(median_of "${loom_cpu[@]}")"
  show "loom (loom_$name)" "$lw" "$lc" loom_wall loom_cpu
  if ((have_eigen)); then
    ew="$(median_of "${eigen_wall[@]}")"
    ec="$(median_of "${eigen_cpu[@]}")"
    show "Eigen (eigen_$name)" "$ew" "$ec" eigen_wall eigen_cpu
    awk -v lw="$lw" -v ew="$ew" -v lc="$lc" -v ec="$ec" -v n="$name" \
      'BEGIN { printf "%-22s loom / Eigen = %.2f (wall), %.2f (CPU)\n", n, lw / ew, lc / ec }'
  else
    echo "Eigen headers not found in $eigen_inc (set EIGEN_INCLUDE); skipped"
  fi
}

echo "compiler: $("$cxx" --version | head -1); flags: ${flags[*]} -c; runs: $runs (loom and Eigen interleaved)"
echo "load: $(uptime)"
pair fused
pair gemm
echo "load: $(uptime)"
