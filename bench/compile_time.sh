#!/usr/bin/env bash
# bench/compile_time.sh — compile time of one fused elementwise definition, and of one GEMM +
# bias + ReLU, with loom and with Eigen 3.4: bench/compile/{loom,eigen}_{fused,gemm}.cpp, each compiled
# RUNS times (default 3) with  $CXX -std=c++20 -O2 -march=native -fopenmp -c  and timed with
# /usr/bin/time -f %e. loom and Eigen compiles alternate, so a change in the machine's load hits
# both alike; prints every run, the medians and their ratio. Compile time is wall-clock time: run
# it on a quiet machine (the load average is printed along).
#
#   bench/compile_time.sh [RUNS]
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
runs="${1:-3}"
cxx="${CXX:-g++}"
flags=(-std=c++20 -O2 -march=native -fopenmp)
eigen_inc="${EIGEN_INCLUDE:-/usr/include/eigen3}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

compile_once() {  # label source include-flags... -> prints the wall seconds
  local label="$1" src="$2"
  shift 2
  if ! /usr/bin/time -f %e -o "$tmp/time" "$cxx" "${flags[@]}" "$@" -c "$src" -o "$tmp/probe.o" 2>"$tmp/cc.err"; then
    cat "$tmp/cc.err" >&2
    echo "compile_time.sh: $label failed to compile" >&2
    exit 1
  fi
  tail -1 "$tmp/time"
}

pair() {  # name: bench/compile/loom_<name>.cpp against eigen_<name>.cpp, runs interleaved
  local name="$1" q lt et
  local loom_times=() eigen_times=()
  local have_eigen=0
  [[ -f "$eigen_inc/Eigen/Core" ]] && have_eigen=1
  # Interleaved (loom, Eigen, loom, ...): a change in the machine's load hits both alike.
  for ((q = 0; q < runs; ++q)); do
    lt="$(compile_once "loom_$name" "$here/compile/loom_$name.cpp" -I"$root/include")" || exit 1
    loom_times+=("$lt")
    if ((have_eigen)); then
      et="$(compile_once "eigen_$name" "$here/compile/eigen_$name.cpp" -isystem "$eigen_inc")" || exit 1
      eigen_times+=("$et")
    fi
  done
  local lm em
  lm="$(printf '%s\n' "${loom_times[@]}" | median)"
  printf '%-22s median %6.2f s   runs: %s\n' "loom (loom_$name)" "$lm" "${loom_times[*]}"
  if ((have_eigen)); then
    em="$(printf '%s\n' "${eigen_times[@]}" | median)"
    printf '%-22s median %6.2f s   runs: %s\n' "Eigen (eigen_$name)" "$em" "${eigen_times[*]}"
    awk -v l="$lm" -v e="$em" -v n="$name" 'BEGIN { printf "%-22s loom / Eigen = %.2f\n", n, l / e }'
  else
    echo "Eigen headers not found in $eigen_inc (set EIGEN_INCLUDE); skipped"
  fi
}

echo "compiler: $("$cxx" --version | head -1); flags: ${flags[*]} -c; runs: $runs (loom and Eigen interleaved)"
echo "load: $(uptime)"
pair fused
pair gemm
echo "load: $(uptime)"
