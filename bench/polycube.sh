#!/usr/bin/env bash
# bench/polycube.sh - Tessera against Matt Busche's polycube, in one run.
#
# Usage: bench/polycube.sh TESSERA SRCDIR POLYCUBE [RUNS]
# POLYCUBE is a polycube binary (1.2.1 from github.com/bpasanek/puzzlecode,
# folder polycube/: unpack its polycube.tgz beside this checkout, install
# Debian's libboost-program-options-dev, libboost-graph-dev and
# libboost-regex-dev, and in its src/ run
#   make CXXFLAGS="-O3 -march=native -DDSFMT_MEXP=19937" LDFLAGS=""
# ).  For each puzzle the two solvers run in turn, Tessera then polycube,
# RUNS times (3 by default, BENCH_RUNS overrides), each on one thread; the
# table shows the median user CPU seconds of each and polycube's over
# Tessera's: the speed-up.  Tessera runs with its defaults; polycube with
# its best hand-tuned flags for the puzzle (below), on the definition file
# Tessera writes for the puzzle (`solve --goal=PIECES --polycube`), so both
# read the same pieces under the same names.  Both counts are checked.
set -u
T=${1:?usage: polycube.sh TESSERA SRCDIR POLYCUBE [RUNS]}
S=${2:?usage: polycube.sh TESSERA SRCDIR POLYCUBE [RUNS]}
PC=${3:?usage: polycube.sh TESSERA SRCDIR POLYCUBE [RUNS]}
RUNS=${4:-${BENCH_RUNS:-3}}
TIMEFORMAT=%U
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# puzzle|polycube flags|runs per sample.  The redundancy piece is named as
# in this library's files: the Tetris Cube's sphinx is L here (the fastest
# choice for polycube too); for the Bedlam Cube polycube's own pick (-r#, F)
# takes twice as long as A, Tessera's pick, so A is polycube's best here.
# A 6x10 run lasts a few hundredths of a second, within the jitter of a
# shared machine, so each of its samples is 10 runs of each solver, in
# turn (the table shows seconds per run).
rows=(
    "pentominoes-6x10|-r# --volumeFilter=-1 -b11|10"
    "tetris-cube|-rL -m9 -e6 -b3 --volumeFilter=10|1"
    "bedlam-cube|-rA -m8 -e6 -b3 --volumeFilter=10|1"
)

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

printf '%-20s %10s %12s %14s %9s\n' puzzle solutions tessera_s polycube_s ratio
for row in "${rows[@]}"; do
    IFS='|' read -r puzzle flags reps <<<"$row"
    f="$S/puzzles/$puzzle.json"
    pieces=$("$T" solve --goal=1000000 "$f" 2>&1 | sed -n 's/.*exceeds the \([0-9]*\) pieces.*/\1/p')
    "$T" solve --goal="$pieces" --polycube --threads=1 --no-progress "$f" >"$tmp/$puzzle.txt" 2>/dev/null
    ta=()
    tb=()
    for ((i = 0; i < RUNS; i++)); do
        # the runs of a sample alternate too, so that a burst of load on
        # this shared machine falls on both solvers' runs alike
        ua=()
        ub=()
        for ((r = 0; r < reps; r++)); do
            ua+=("$( { time "$T" solve -q --json --no-progress --threads=1 "$f" >"$tmp/a" 2>/dev/null; } 2>&1 )")
            # shellcheck disable=SC2086
            ub+=("$( { time "$PC" $flags -q1 -i1 "$tmp/$puzzle.txt" >"$tmp/b" 2>&1; } 2>&1 )")
        done
        ta+=("$(printf '%s\n' "${ua[@]}" | awk '{ s += $1 } END { printf "%.4f", s / NR }')")
        tb+=("$(printf '%s\n' "${ub[@]}" | awk '{ s += $1 } END { printf "%.4f", s / NR }')")
    done
    sa=$(sed -n 's/.*"solutions": *\([0-9]*\).*/\1/p' "$tmp/a")
    sb=$(sed -n 's/^SOLUTIONS=\([0-9]*\).*/\1/p' "$tmp/b")
    if [ "$sa" != "$sb" ]; then
        echo "bench: $puzzle: Tessera counts $sa, polycube $sb" >&2
        exit 1
    fi
    ma=$(printf '%s\n' "${ta[@]}" | median)
    mb=$(printf '%s\n' "${tb[@]}" | median)
    ratio=$(awk -v a="$ma" -v b="$mb" 'BEGIN { if (a > 0) printf "%.2f", b / a; else print "-" }')
    printf '%-20s %10s %12s %14s %9s\n' "$puzzle" "$sa" "$ma" "$mb" "$ratio"
done
