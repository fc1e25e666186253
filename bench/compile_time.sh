#!/usr/bin/env bash
# bench/compile_time.sh — compile time, loom against Eigen 3.4, each probe compiled with
# $CXX -std=c++20 -O2 -march=native -fopenmp -c:
#   fused  one fused elementwise definition (bench/compile/{loom,eigen}_fused.cpp)
#   gemm   one GEMM + bias + ReLU (bench/compile/{loom,eigen}_gemm.cpp)
#   conv   one 3 x 3 convolution + bias + ReLU in index notation (bench/compile/loom_conv.cpp)
#          against Eigen's GEMM probe (eigen_gemm.cpp), the convolution issue's yardstick
#   defs   1, 5 and 10 small definitions, each its own function (bench/compile/{loom,eigen}_defs.cpp
#          with -DLOOM_DEFS=N); prints the cost of each definition after the first, (t10 - t1) / 9.
# Each probe is compiled RUNS times (default 7) and timed with /usr/bin/time: wall-clock seconds and
# CPU seconds (user + sys). loom and Eigen compiles alternate, so a change in the machine's load hits
# both alike; prints every run, the medians and their ratios. CPU time is the steadier of the two on
# a shared machine; wall time is what a user waits. With --instructions, each probe is also compiled
# once under valgrind's callgrind and the instructions of the compiler proper (cc1plus, the largest
# child of the driver) are counted: the same count on every run, whatever the load, but ~60x slower.
#
#   bench/compile_time.sh [RUNS] [--instructions] [fused|gemm|conv|defs ...]   (default: all four)
# Environment: CXX (g++), LOOM_INCLUDE (loom's headers: include/), EIGEN_INCLUDE (/usr/include/eigen3).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
runs=7
count_instructions=0
probes=()
for arg in "$@"; do
  case "$arg" in
    --instructions) count_instructions=1 ;;
    fused | gemm | conv | defs) probes+=("$arg") ;;
    *[!0-9]* | '') echo "usage: bench/compile_time.sh [RUNS] [--instructions] [fused|gemm|conv|defs ...]" >&2; exit 2 ;;
    *) runs="$arg" ;;
  esac
done
((${#probes[@]})) || probes=(fused gemm conv defs)
cxx="${CXX:-g++}"
flags=(-std=c++20 -O2 -march=native -fopenmp)
eigen_inc="${EIGEN_INCLUDE:-/usr/include/eigen3}"
loom_inc="${LOOM_INCLUDE:-$root/include}"  # another copy of loom's headers, to compare two versions
have_eigen=0
[[ -f "$eigen_inc/Eigen/Core" ]] && have_eigen=1
if ((count_instructions)) && ! command -v valgrind >/dev/null; then
  echo "compile_time.sh: --instructions needs valgrind" >&2
  exit 1
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

median_of() { printf '%s\n' "$@" | median; }

show() {  # label wall-median cpu-median wall-array-name cpu-array-name
  local -n walls="$4" cpus="$5"
  printf '%-28s median %6.2f s wall, %6.2f s CPU   wall: %s   CPU: %s\n' "$1" "$2" "$3" "${walls[*]}" "${cpus[*]}"
}

# The compile flags of a probe: loom_<name> or eigen_<name>, its source, then its flags.
probe_args() {  # library source [extra flags...]
  local lib="$1" src="$2"
  shift 2
  if [[ "$lib" == loom ]]; then
    printf '%s\n' "-I$loom_inc" "$@" -c "$src"
  else
    printf '%s\n' -isystem "$eigen_inc" "$@" -c "$src"
  fi
}

compile_once() {  # label library source [extra flags...] -> prints "wall cpu" seconds
  local label="$1" args
  shift
  mapfile -t args < <(probe_args "$@")
  if ! /usr/bin/time -f '%e %U %S' -o "$tmp/time" "$cxx" "${flags[@]}" "${args[@]}" -o "$tmp/probe.o" 2>"$tmp/cc.err"; then
    cat "$tmp/cc.err" >&2
    echo "compile_time.sh: $label failed to compile" >&2
    exit 1
  fi
  tail -1 "$tmp/time" | awk '{ printf "%.2f %.2f\n", $1, $2 + $3 }'
}

instructions_once() {  # label library source [extra flags...] -> prints cc1plus's instructions
  local label="$1" args f n best=0
  shift
  mapfile -t args < <(probe_args "$@")
  rm -f "$tmp"/cg.*
  if ! valgrind --tool=callgrind --trace-children=yes --callgrind-out-file="$tmp/cg.%p" \
    "$cxx" "${flags[@]}" "${args[@]}" -o "$tmp/probe.o" >/dev/null 2>"$tmp/cc.err"; then
    tail -20 "$tmp/cc.err" >&2
    echo "compile_time.sh: $label failed to compile under callgrind" >&2
    exit 1
  fi
  for f in "$tmp"/cg.*; do  # the driver, cc1plus and as each write one; cc1plus is the largest
    n="$(awk '/^(summary|totals):/ { print $2; exit }' "$f")"
    [[ -n "$n" ]] && ((n > best)) && best="$n"
  done
  echo "$best"
}

pair() {  # name [eigen_name]: bench/compile/loom_<name>.cpp against eigen_<eigen_name or name>.cpp, runs interleaved
  local name="$1" ename="${2:-$1}" q lt et
  local loom_wall=() loom_cpu=() eigen_wall=() eigen_cpu=()
  # Interleaved (loom, Eigen, loom, ...): a change in the machine's load hits both alike.
  for ((q = 0; q < runs; ++q)); do
    lt="$(compile_once "loom_$name" loom "$here/compile/loom_$name.cpp")" || exit 1
    loom_wall+=("${lt% *}"); loom_cpu+=("${lt#* }")
    if ((have_eigen)); then
      et="$(compile_once "eigen_$ename" eigen "$here/compile/eigen_$ename.cpp")" || exit 1
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
    show "Eigen (eigen_$ename)" "$ew" "$ec" eigen_wall eigen_cpu
    awk -v lw="$lw" -v ew="$ew" -v lc="$lc" -v ec="$ec" -v n="$name" \
      'BEGIN { printf "%-28s loom / Eigen = %.2f (wall), %.2f (CPU)\n", n, lw / ew, lc / ec }'
  else
    echo "Eigen headers not found in $eigen_inc (set EIGEN_INCLUDE); skipped"
  fi
  if ((count_instructions)); then
    local li ei
    li="$(instructions_once "loom_$name" loom "$here/compile/loom_$name.cpp")" || exit 1
    printf '%-28s %8.3f G instructions (cc1plus)\n' "loom (loom_$name)" "$(awk -v n="$li" 'BEGIN { print n / 1e9 }')"
    if ((have_eigen)); then
      ei="$(instructions_once "eigen_$ename" eigen "$here/compile/eigen_$ename.cpp")" || exit 1
      printf '%-28s %8.3f G instructions (cc1plus)\n' "Eigen (eigen_$ename)" "$(awk -v n="$ei" 'BEGIN { print n / 1e9 }')"
      awk -v l="$li" -v e="$ei" -v n="$name" 'BEGIN { printf "%-28s loom / Eigen = %.2f (instructions)\n", n, l / e }'
    fi
  fi
}

# loom_defs.cpp and eigen_defs.cpp with 1, 5 and 10 definitions: medians, then the cost of each
# definition after the first, (t10 - t1) / 9, for both libraries and its ratio.
defs_counts=(1 5 10)
defs() {
  local libs=(loom) lib n q t key
  ((have_eigen)) && libs+=(eigen)
  declare -A wall cpu med_wall med_cpu instr
  for ((q = 0; q < runs; ++q)); do
    for n in "${defs_counts[@]}"; do
      for lib in "${libs[@]}"; do
        t="$(compile_once "${lib}_defs ($n)" "$lib" "$here/compile/${lib}_defs.cpp" "-DLOOM_DEFS=$n")" || exit 1
        wall[$lib$n]+="${t% *} "
        cpu[$lib$n]+="${t#* } "
      done
    done
  done
  for lib in "${libs[@]}"; do
    for n in "${defs_counts[@]}"; do
      key="$lib$n"
      # shellcheck disable=SC2086
      med_wall[$key]="$(median_of ${wall[$key]})"
      # shellcheck disable=SC2086
      med_cpu[$key]="$(median_of ${cpu[$key]})"
      printf '%-28s median %6.2f s wall, %6.2f s CPU   wall: %s  CPU: %s\n' "${lib}_defs, $n definition(s)" \
        "${med_wall[$key]}" "${med_cpu[$key]}" "${wall[$key]}" "${cpu[$key]}"
    done
  done
  per_def() {  # lib kind(wall|cpu) -> (t10 - t1) / 9
    local -n m="med_$2"
    awk -v a="${m[${1}1]}" -v b="${m[${1}10]}" 'BEGIN { printf "%.3f", (b - a) / 9 }'
  }
  local lw lc ew ec
  lw="$(per_def loom wall)"; lc="$(per_def loom cpu)"
  printf '%-28s loom %s s wall, %s s CPU' "per added definition" "$lw" "$lc"
  if ((have_eigen)); then
    ew="$(per_def eigen wall)"; ec="$(per_def eigen cpu)"
    printf '; Eigen %s s wall, %s s CPU; loom / Eigen = %s (wall), %s (CPU)' "$ew" "$ec" \
      "$(awk -v l="$lw" -v e="$ew" 'BEGIN { printf "%.1f", (e > 0 ? l / e : 0) }')" \
      "$(awk -v l="$lc" -v e="$ec" 'BEGIN { printf "%.1f", (e > 0 ? l / e : 0) }')"
  fi
  echo
  if ((count_instructions)); then
    for lib in "${libs[@]}"; do
      for n in "${defs_counts[@]}"; do
        instr[$lib$n]="$(instructions_once "${lib}_defs ($n)" "$lib" "$here/compile/${lib}_defs.cpp" "-DLOOM_DEFS=$n")" || exit 1
        printf '%-28s %8.3f G instructions (cc1plus)\n' "${lib}_defs, $n definition(s)" \
          "$(awk -v v="${instr[$lib$n]}" 'BEGIN { print v / 1e9 }')"
      done
    done
    local li ei
    li="$(awk -v a="${instr[loom1]}" -v b="${instr[loom10]}" 'BEGIN { printf "%.3f", (b - a) / 9 / 1e9 }')"
    printf '%-28s loom %s G instructions' "per added definition" "$li"
    if ((have_eigen)); then
      ei="$(awk -v a="${instr[eigen1]}" -v b="${instr[eigen10]}" 'BEGIN { printf "%.3f", (b - a) / 9 / 1e9 }')"
      printf '; Eigen %s G; loom / Eigen = %s (instructions)' "$ei" "$(awk -v l="$li" -v e="$ei" 'BEGIN { printf "%.1f", l / e }')"
    fi
    echo
  fi
}

echo "compiler: $("$cxx" --version | head -1); flags: ${flags[*]} -c; runs: $runs (loom and Eigen interleaved)"
echo "cpu: $(lscpu 2>/dev/null | awk -F: '/^Model name/ { gsub(/^ +/, "", $2); print $2; exit }'), $(nproc) cores"
echo "loom headers: $loom_inc"
echo "load: $(uptime)"
((have_eigen)) || echo "Eigen headers not found in $eigen_inc (set EIGEN_INCLUDE): loom only"
for p in "${probes[@]}"; do
  case "$p" in
    fused | gemm) pair "$p" ;;
    conv) pair conv gemm ;;
    defs) defs ;;
  esac
done
echo "load: $(uptime)"
