#!/usr/bin/env bash
# bench/run.sh - the benchmark table behind `make bench`.
#
# Usage: bench/run.sh TESSERA SRCDIR [RUNS]
# Each row is one puzzle in one engine configuration, run RUNS times (3 by
# default, BENCH_RUNS overrides); the table shows the median seconds, with
# the solutions and nodes the runs agree on.  Seconds are user CPU seconds
# for single-threaded rows and wall seconds for multi-threaded ones (user
# time adds the threads up).  The machine is shared and noisy: compare
# ratios taken in one run of this script.
set -u
T=${1:?usage: run.sh TESSERA SRCDIR [RUNS]}
S=${2:?usage: run.sh TESSERA SRCDIR [RUNS]}
RUNS=${3:-${BENCH_RUNS:-3}}
TIMEFORMAT=%U

# puzzle|configuration|flags|threads ("plain": the engine without the pool)
rows=(
    "pentominoes-6x10|default|--engine=plain|1"
    "pentominoes-6x10|dlx-only|--engine=plain --fila=0|1"
    "pentominoes-6x10|fila-e|--engine=plain --order=s:e=11|1"
    # a long board: FILA takes the root (prepare.c, choose_root)
    "pentominoes-5x12|default|--engine=plain|1"
    "pentominoes-5x12|dlx-root|--engine=plain --fila=11|1"
    # FILA's memo of small subtrees (memo.h), on by default: without it
    "pentominoes-5x12|no-memo|--engine=plain --memo=0|1"
    "soma-cube|default|--engine=plain|1"
    "soma-cube|dlx-only|--engine=plain --fila=0|1"
    "tetris-cube|default|--engine=plain|1"
    "tetris-cube|pool|--threads=1|1"
    "tetris-cube|pool|--threads=2|2"
    "bedlam-cube|default|--engine=plain|1"
    "bedlam-cube|pool|--threads=1|1"
    "bedlam-cube|pool|--threads=2|2"
    # loose puzzles (count ranges, optional cells): DLX alone
    "pentominoes-any7-6x6-optional-centre|default|--engine=plain|1"
    "pentominoes-any8-5x8|default|--engine=plain|1"
    # the triangular and hexagonal lattices (a path: the lattice fixtures,
    # whose counts and polysolve's times tests/fixtures/lattices has)
    "tests/fixtures/lattices/hexiamonds-6x6|default|--engine=plain|1"
    "tests/fixtures/lattices/hexiamonds-6x6|fila-f|--engine=plain --order=s:f=11|1"
    "tests/fixtures/lattices/hexiamonds-9x4|default|--engine=plain|1"
    "tests/fixtures/lattices/polyhexes-34-hexagon|default|--engine=plain|1"
    # E weighing the pieces (fila.h: pieces), which the hexagons take (the
    # hexagon's schedule before: F below the constrained piece)
    "tests/fixtures/lattices/polyhexes-34-hexagon|fila-f|--engine=plain --fila=9 --order=s:f=9 --pieces=off|1"
    "tests/fixtures/lattices/polyhexes-1234-diamond-ring|no-pieces|--engine=plain --pieces=off|1"
    "tests/fixtures/lattices/polyhexes-1234-diamond-ring|default|--engine=plain|1"
    "tests/fixtures/lattices/polyhexes-1234-diamond-ring|no-memo|--engine=plain --memo=0|1"
    "tests/fixtures/lattices/polyhexes-1234-diamond-ring|fila-f|--engine=plain --order=s:f=11|1"
    "tests/fixtures/lattices/speed/polyhexes-1234-8x5|default|--engine=plain|1"
    "tests/fixtures/lattices/speed/polyhexes-34-6x6-plus-one|default|--engine=plain|1"
)
# thread scaling past 2 cores, where the machine has them
ncpu=$(nproc)
for t in 4 8 16 32 64; do
    if [ "$t" -le "$ncpu" ]; then
        rows+=("tetris-cube|pool|--threads=$t|$t" "bedlam-cube|pool|--threads=$t|$t")
    fi
done
# BENCH_LONG=1: also the one-sided pentominoes 5x18 (4.0 billion nodes with
# FILA from the root, 15 billion below it before that choice; a few
# minutes on one thread) on 1 thread and on each count above up to
# the machine's CPUs: thread scaling on a search long enough that the
# preparation and the pool's start and end do not count
if [ -n "${BENCH_LONG:-}" ]; then
    # a node on triangles against squares, both in 128-bit fields
    # (tests/fixtures/lattices/polysolve/README.md, nodes per second)
    rows+=("tests/fixtures/lattices/speed/onesided-hexiamonds-12x5-hole|default|--engine=plain|1")
    for t in 1 2 4 8 16 32 64; do
        if [ "$t" -le "$ncpu" ]; then
            rows+=("onesided-pentominoes-5x18|pool|--threads=$t|$t")
        fi
    done
fi
if [ -n "${BENCH_ROWS:-}" ]; then
    IFS=';' read -r -a rows <<<"$BENCH_ROWS"
fi

printf '%-36s %-12s %10s %13s %9s %12s %7s\n' puzzle configuration solutions nodes seconds nodes/s threads
for row in "${rows[@]}"; do
    IFS='|' read -r puzzle name flags threads <<<"$row"
    if [ "${threads:-1}" -gt 1 ]; then TIMEFORMAT=%R; else TIMEFORMAT=%U; fi
    times=()
    sol=""
    nodes=""
    for ((i = 0; i < RUNS; i++)); do
        # shellcheck disable=SC2086
        case $puzzle in */*) file=$S/$puzzle.json ;; *) file=$S/puzzles/$puzzle.json ;; esac
        t=$( { time "$T" solve -q --json --no-progress $flags "$file" >/tmp/tessera-bench.$$ 2>/dev/null; } 2>&1 )
        out=$(cat /tmp/tessera-bench.$$)
        s=$(sed -n 's/.*"solutions": *\([0-9]*\).*/\1/p' <<<"$out")
        n=$(sed -n 's/.*"nodes": *\([0-9]*\).*/\1/p' <<<"$out")
        if [ -n "$sol" ] && { [ "$s" != "$sol" ] || [ "$n" != "$nodes" ]; }; then
            echo "bench: $puzzle $name: runs disagree ($s/$n vs $sol/$nodes)" >&2
            exit 1
        fi
        sol=$s
        nodes=$n
        times+=("$t")
    done
    median=$(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
    rate=$(awk -v n="$nodes" -v t="$median" 'BEGIN { if (t > 0) printf "%.3g", n / t; else print "-" }')
    printf '%-36s %-12s %10s %13s %9s %12s %7s\n' "${puzzle##*/}" "$name" "$sol" "$nodes" "$median" "$rate" "${threads:-1}"
done
rm -f /tmp/tessera-bench.$$
