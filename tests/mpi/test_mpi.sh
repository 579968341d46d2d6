#!/bin/sh
# test_mpi.sh - `tessera solve --mpi` under mpirun gives the one-process
# run's answer exactly: the same solutions, nodes and attempts/fits per
# level, on 1, 2 and 3 ranks (1 rank: rank 0 searches alone; 2: a
# coordinator and one worker; 3: two workers, so work is taken back and
# handed out again).  Needs $TESSERA and $TSR_SRCDIR (`make check` sets
# both).  Exit 77 (skipped) without mpirun or without an MPI-built tessera.
set -u
T=${TESSERA:-./tessera}
S=${TSR_SRCDIR:-.}
# In AddressSanitizer builds (make check-asan) Open MPI's own leftovers at
# MPI_Finalize are suppressed by library; full stacks let the suppressions
# see those libraries.  Leaks with a Tessera frame are still reported.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"
LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$S/tests/mpi/lsan.supp:print_suppressions=0"
# Under ThreadSanitizer (make check-tsan) likewise for Open MPI's own locks.
TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}suppressions=$S/tests/mpi/tsan.supp"
export ASAN_OPTIONS LSAN_OPTIONS TSAN_OPTIONS
command -v mpirun >/dev/null 2>&1 || { echo "SKIP: no mpirun" >&2; exit 77; }
if "$T" solve --mpi -q /dev/null 2>&1 | grep -q "built without MPI"; then
    echo "SKIP: this tessera was built without MPI" >&2
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0

check() { # description, then a shell condition
    desc=$1
    shift
    if eval "$@"; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL: $desc" >&2
    fi
}

# Open MPI: more ranks than cores is fine here, and root (CI containers) too
MPIRUN="mpirun"
if mpirun --version 2>&1 | grep -qi "open mpi"; then
    MPIRUN="mpirun --oversubscribe --allow-run-as-root"
    OMPI_MCA_rmaps_base_oversubscribe=1
    export OMPI_MCA_rmaps_base_oversubscribe
fi

# field NAME FILE: a number or array of the compact JSON summary
field() {
    v=$(sed -n "s/.*\"$1\":\(\[[^]]*\]\).*/\1/p" "$2")
    [ -n "$v" ] || v=$(sed -n "s/.*\"$1\":\([0-9a-z]*\).*/\1/p" "$2")
    printf '%s' "$v"
}

# same PUZZLE NP [FLAGS]: summary and statistics equal to the plain run's
same() {
    p=$1
    np=$2
    shift 2
    "$T" solve -q --json --stats --threads=1 "$@" "$S/puzzles/$p.json" >"$tmp/ref" 2>/dev/null
    $MPIRUN -np "$np" "$T" solve --mpi -q --json --stats --threads=1 "$@" "$S/puzzles/$p.json" \
        >"$tmp/mpi" 2>"$tmp/err"
    rc=$?
    check "$p -np $np $*: exit 0" '[ $rc -eq 0 ]'
    check "$p -np $np $*: one summary line" '[ "$(wc -l <"$tmp/mpi")" -eq 1 ]'
    for f in solutions classes nodes attempts fits; do
        check "$p -np $np $*: $f $(field $f "$tmp/mpi") = $(field $f "$tmp/ref")" \
            '[ -n "$(field $f "$tmp/ref")" ] && [ "$(field $f "$tmp/mpi")" = "$(field $f "$tmp/ref")" ]'
    done
    check "$p -np $np $*: complete" '[ "$(field complete "$tmp/mpi")" = true ]'
    check "$p -np $np $*: cluster of $np ranks" 'grep -q "\"cluster\":{\"ranks\":$np," "$tmp/mpi"'
}

for np in 1 2 3; do
    same pentominoes-6x10 "$np"
    same soma-cube "$np"
    same l-trominoes-fixed-4x3 "$np"
    same tetris-cube "$np"
done
same pentominoes-6x10 3 --unique=raw
same soma-cube 3 --unique=raw
same soma-cube 3 --unique=mirror

# the published counts
$MPIRUN -np 3 "$T" solve --mpi -q --json --threads=1 "$S/puzzles/pentominoes-6x10.json" >"$tmp/out"
check "6x10 2339" '[ "$(field solutions "$tmp/out")" = 2339 ]'
$MPIRUN -np 3 "$T" solve --mpi -q --json --threads=1 --unique=raw \
    "$S/puzzles/pentominoes-6x10.json" >"$tmp/out"
check "6x10 raw 9356" '[ "$(field solutions "$tmp/out")" = 9356 ]'
for m in raw rotations mirror; do
    want=$(grep '"expected"' "$S/puzzles/soma-cube.json" | sed -n "s/.*\"$m\": *\([0-9]*\).*/\1/p")
    $MPIRUN -np 3 "$T" solve --mpi -q --json --threads=1 --unique=$m \
        "$S/puzzles/soma-cube.json" >"$tmp/out"
    check "soma $m $want" '[ -n "$want" ] && [ "$(field solutions "$tmp/out")" = "$want" ]'
done

# the solutions themselves, not just their number (in any order)
for p in soma-cube pentominoes-6x10; do
    "$T" solve --json --threads=1 "$S/puzzles/$p.json" 2>/dev/null | sort >"$tmp/ref"
    $MPIRUN -np 3 "$T" solve --mpi --json --threads=1 "$S/puzzles/$p.json" 2>/dev/null |
        sort >"$tmp/mpi"
    check "$p: the same solutions" '[ -s "$tmp/ref" ] && cmp -s "$tmp/ref" "$tmp/mpi"'
done

# --limit: exactly N solutions, and the JSON summary (on stderr, after the
# solutions) says the limit stopped the search, on all 3 ranks
$MPIRUN -np 3 "$T" solve --mpi --json --threads=1 --limit=7 "$S/puzzles/tetris-cube.json" \
    >"$tmp/out" 2>"$tmp/err"
check "limit: 7 solution lines" '[ "$(grep -c "^{\"pieces\"" "$tmp/out")" -eq 7 ]'
check "limit: said stopped by the limit" 'grep -q "\"limit_reached\":true" "$tmp/err" && [ "$(field solutions "$tmp/err")" = 7 ]'
check "limit: cluster of 3 ranks" 'grep -q "\"cluster\":{\"ranks\":3," "$tmp/err"'
$MPIRUN -np 3 "$T" solve --mpi --threads=1 --limit=7 "$S/puzzles/tetris-cube.json" \
    >"$tmp/out" 2>"$tmp/err"
check "limit, text: said stopped early" 'grep -q "^solutions: 7 (rotations, stopped early at" "$tmp/err"'

# only rank 0 prints; the per-rank table comes with --stats
$MPIRUN -np 3 "$T" solve --mpi --stats --threads=1 "$S/puzzles/soma-cube.json" \
    >"$tmp/out" 2>"$tmp/err"
check "one summary" '[ "$(grep -c "^solutions: 480" "$tmp/err")" -eq 1 ]'
check "rank table" 'grep -q "^   2 worker" "$tmp/err" && grep -q "^   0 coordinator" "$tmp/err"'

# usage errors: said once, exit 2 from every rank
$MPIRUN -np 3 "$T" solve --mpi --engine=plain "$S/puzzles/soma-cube.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "plain engine refused" '[ $rc -ne 0 ] && [ "$(grep -c "runs the pool engine" "$tmp/err")" -eq 1 ]'
$MPIRUN -np 3 "$T" solve --mpi --unique=bogus "$S/puzzles/soma-cube.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "bad option said once" '[ $rc -ne 0 ] && [ "$(grep -c "unique" "$tmp/err")" -eq 1 ]'
$MPIRUN -np 2 "$T" solve --mpi "$tmp/missing.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "missing file said once" '[ $rc -ne 0 ] && [ "$(grep -c "missing.json" "$tmp/err")" -eq 1 ]'

echo "test_mpi: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
