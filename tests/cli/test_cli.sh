#!/bin/sh
# test_cli.sh - the tessera command line as a user meets it: real files,
# real output, real exit codes.  Needs $TESSERA (the binary) and
# $TSR_SRCDIR (the source tree); `make check` sets both.
set -u
T=${TESSERA:-./tessera}
S=${TSR_SRCDIR:-.}
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

# -q --json: exactly one JSON object with the count
"$T" solve -q --json "$S/puzzles/pentominoes-6x10.json" >"$tmp/out" 2>"$tmp/err"; rc=$?
check "6x10 exits 0" '[ $rc -eq 0 ]'
check "6x10 one line" '[ "$(wc -l <"$tmp/out")" -eq 1 ]'
check "6x10 count" 'grep -q "\"solutions\": *2339" "$tmp/out"'
check "json has config" 'grep -q "\"config\"" "$tmp/out"'

# modes
"$T" solve -q --json --unique=raw "$S/puzzles/pentominoes-6x10.json" >"$tmp/out"
check "raw count" 'grep -q "\"solutions\": *9356" "$tmp/out"'
"$T" solve -q --json --unique=mirror "$S/puzzles/soma-cube.json" >"$tmp/out"
check "soma mirror count" 'grep -q "\"solutions\": *240" "$tmp/out"'

# text layers by default: 2339 grids of 6 rows, names are piece letters
"$T" solve "$S/puzzles/pentominoes-6x10.json" >"$tmp/out" 2>/dev/null
check "text solutions" '[ "$(grep -c "^[A-Z ]*$" "$tmp/out")" -ge $((2339 * 6)) ]'

# 3D text: each solution headed "# solution N" (as the daemon's text), each
# layer headed "z = K"
"$T" solve --limit=2 "$S/puzzles/soma-cube.json" >"$tmp/out" 2>/dev/null
check "3D text: numbered solutions" '[ "$(grep -c "^# solution [12]$" "$tmp/out")" -eq 2 ]'
check "3D text: labelled layers" '[ "$(grep -c "^z = [012]$" "$tmp/out")" -eq 6 ] && [ "$(sed -n 2p "$tmp/out")" = "z = 0" ]'

# Ctrl-C (SIGINT) during a long solve: the summary so far, exit 130
# (the one-sided 5x18 takes many minutes on one thread)
long=$S/puzzles/onesided-pentominoes-5x18.json
# Ctrl-C comes after 2 s, once the search has found solutions; sanitizer
# builds (TSR_QUICK) prepare and search many times slower: 12 s there
pause=2
[ -n "${TSR_QUICK:-}" ] && pause=12
interrupt() { # solve FLAGS... the long puzzle, Ctrl-C after $pause s; its exit status
    "$T" solve --threads=1 "$@" "$long" >"$tmp/out" 2>"$tmp/err" &
    pid=$!
    sleep $pause
    kill -INT $pid
    wait $pid
}
# json_count NAME FILE: a number of the compact JSON summary in FILE
json_count() { sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p" "$2"; }
# partial FILE: the JSON summary in FILE has a fraction strictly between 0
# and 1 (a slow start may leave it small enough to print as 5e-05)
partial() {
    f=$(sed -n 's/.*"fraction": *\([-+.eE0-9]*\).*/\1/p' "$1")
    [ -n "$f" ] && awk -v f="$f" 'BEGIN { exit !(f > 0 && f < 1) }'
}
interrupt -q; rc=$?
check "SIGINT -q: exit 130" '[ $rc -eq 130 ]'
check "SIGINT -q: the summary says how far it got" 'grep -q "^solutions: [0-9]* (rotations, interrupted at [0-9.]*% of the search)$" "$tmp/out"'
check "SIGINT -q: nodes and time" 'grep -q "^nodes: [1-9]" "$tmp/out" && grep -q "^seconds: [1-9]" "$tmp/out"'
interrupt -q --json; rc=$?
check "SIGINT -q --json: exit 130, one line" '[ $rc -eq 130 ] && [ "$(wc -l <"$tmp/out")" -eq 1 ]'
check "SIGINT -q --json: interrupted, incomplete, with the fraction" 'grep -q "\"interrupted\": *true" "$tmp/out" && grep -q "\"complete\": *false" "$tmp/out" && partial "$tmp/out" && grep -q "\"nodes\": *[1-9]" "$tmp/out"'
# with the solutions printed: they stay on stdout, the summary follows on stderr
interrupt; rc=$?
check "SIGINT text: exit 130" '[ $rc -eq 130 ]'
check "SIGINT text: the summary on stderr says how far it got" 'grep -q "^solutions: [1-9][0-9]* (rotations, interrupted at [0-9.]*% of the search)$" "$tmp/err" && grep -q "^nodes: [1-9]" "$tmp/err" && grep -q "^seconds: [1-9]" "$tmp/err"'
check "SIGINT text: as many solutions printed as counted" '[ "$(grep -c "^# solution " "$tmp/out")" = "$(sed -n "s/^solutions: \([0-9]*\) .*/\1/p" "$tmp/err")" ]'
# Ctrl-C while preparing (20 copies of a 1000-cell piece on 200x100 take
# many seconds to prepare): the summary at once, nothing searched, exit 130
python3 - "$tmp/big.json" <<'PY'
import json, sys
cells = [[x, y] for y in range(20) for x in range(50)]
cells = [c for c in cells if c not in ([0, 0], [1, 0], [0, 2])] + [[50, 0], [51, 0], [50, 1]]
json.dump({"version": 1, "name": "big", "board": {"size": [200, 100]},
           "pieces": [{"name": "B", "cells": cells, "count": [0, 20]},
                      {"name": "m", "cells": [[0, 0]], "count": [0, 20000]}]}, open(sys.argv[1], "w"))
PY
"$T" solve -q --json --threads=1 "$tmp/big.json" >"$tmp/out" 2>"$tmp/err" &
pid=$!
sleep 1
start=$(date +%s%N)
kill -INT $pid
wait $pid; rc=$?
took=$(( ($(date +%s%N) - start) / 1000000 ))
check "SIGINT while preparing: exit 130" '[ $rc -eq 130 ]'
check "SIGINT while preparing: within a second ($took ms)" '[ $took -lt 1000 ] || [ -n "${TSR_QUICK:-}" ]'
check "SIGINT while preparing: the summary, nothing searched" 'grep -q "\"interrupted\": *true" "$tmp/out" && grep -q "\"nodes\": *0" "$tmp/out" && grep -q "\"config\": *null" "$tmp/out"'
check "SIGINT text: no summary on stdout" '! grep -q "^solutions: " "$tmp/out"'
interrupt --json; rc=$?
tail -n 1 "$tmp/err" >"$tmp/summary"
check "SIGINT --json: exit 130" '[ $rc -eq 130 ]'
check "SIGINT --json: stdout holds only solutions" '[ -s "$tmp/out" ] && ! grep -qv "^{\"pieces\"" "$tmp/out"'
check "SIGINT --json: the summary is the last line of stderr, a JSON object" 'grep -q "^{\"file\":.*}$" "$tmp/summary" && ! grep -q "^solutions: " "$tmp/err"'
check "SIGINT --json: interrupted, incomplete, with the fraction, nodes and time" 'grep -q "\"interrupted\":true" "$tmp/summary" && grep -q "\"complete\":false" "$tmp/summary" && partial "$tmp/summary" && grep -q "\"nodes\":[1-9]" "$tmp/summary" && grep -q "\"seconds\":[1-9]" "$tmp/summary"'
check "SIGINT --json: as many solutions printed as counted" '[ "$(wc -l <"$tmp/out")" -eq "$(json_count solutions "$tmp/summary")" ]'

# JSON lines
"$T" solve --json --limit=5 "$S/puzzles/soma-cube.json" >"$tmp/out" 2>"$tmp/err"
check "limit 5 json lines" '[ "$(grep -c "^{\"pieces\"" "$tmp/out")" -eq 5 ] && [ "$(wc -l <"$tmp/out")" -eq 5 ]'
check "limit 5: the JSON summary on stderr says the limit stopped it" '[ "$(json_count solutions "$tmp/err")" = 5 ] && grep -q "\"limit_reached\":true" "$tmp/err" && grep -q "\"complete\":false" "$tmp/err" && grep -q "\"interrupted\":false" "$tmp/err"'
"$T" solve --json "$S/puzzles/soma-cube.json" >"$tmp/out" 2>"$tmp/err"
check "soma json: 480 lines, the summary complete" '[ "$(wc -l <"$tmp/out")" -eq 480 ] && [ "$(json_count solutions "$tmp/err")" = 480 ] && grep -q "\"complete\":true" "$tmp/err" && grep -q "\"fraction\":1" "$tmp/err"'

# polycube format input gives the same count as JSON
"$T" solve -q --json "$S/puzzles/polycube/tetris-cube.txt" --limit=3 >"$tmp/out"
check "polycube input" 'grep -q "\"solutions\": *3" "$tmp/out"'

# goal: partial assemblies as polycube sub-puzzles that solve on their own
"$T" solve --polycube --goal=4 --limit=1 "$S/puzzles/soma-cube.json" >"$tmp/sub.txt" 2>/dev/null
check "goal writes a sub-puzzle" 'grep -q "^D:" "$tmp/sub.txt"'
"$T" solve -q --json --unique=raw "$tmp/sub.txt" >"$tmp/out"
check "sub-puzzle solves" 'grep -q "\"solutions\": *[1-9]" "$tmp/out"'

# engine options are echoed in the configuration
"$T" solve -q --json --fila=0 --order=s --redundancy=off "$S/puzzles/soma-cube.json" >"$tmp/out"
check "options used" 'grep -q "fila=0" "$tmp/out" && grep -q "redundancy=off" "$tmp/out"'
check "options keep the count" 'grep -q "\"solutions\": *480" "$tmp/out"'

# sampling
"$T" solve -q --sample=50,5,7 "$S/puzzles/pentominoes-6x10.json" >"$tmp/out"
check "sampling reports a rate" 'grep -q "solutions per second" "$tmp/out"'

# bad input: exit 2, message names the file and the place
printf '{"board": {"size": [2, 2]}, "pieces": [{"name": "A", "cells": [[0,0],[1,0]], "count": "x"}]}' >"$tmp/bad.json"
"$T" solve "$tmp/bad.json" >"$tmp/out" 2>"$tmp/err"; rc=$?
check "bad json exit 2" '[ $rc -eq 2 ]'
check "bad json names path" 'grep -q "bad.json" "$tmp/err" && grep -q "pieces\[0\].count" "$tmp/err"'
check "bad json prints nothing" '[ ! -s "$tmp/out" ]'
printf 'D:xDim=2:yDim=2:zDim=1\nC:name=A:type=Q:layout=0 0 0\n~D\n' >"$tmp/bad.txt"
"$T" solve "$tmp/bad.txt" 2>"$tmp/err" >/dev/null; rc=$?
check "bad polycube exit 2" '[ $rc -eq 2 ]'
check "bad polycube names line" 'grep -q "bad.txt:2" "$tmp/err"'
"$T" solve "$tmp/missing.json" 2>"$tmp/err" >/dev/null; rc=$?
check "missing file exit 2" '[ $rc -eq 2 ] && grep -q "missing.json" "$tmp/err"'
"$T" solve --unique=sideways "$S/puzzles/soma-cube.json" 2>"$tmp/err" >/dev/null; rc=$?
check "bad option exit 2" '[ $rc -eq 2 ] && grep -q "unique" "$tmp/err"'
"$T" solve --order=q "$S/puzzles/soma-cube.json" 2>"$tmp/err" >/dev/null; rc=$?
check "bad order exit 2" '[ $rc -eq 2 ] && grep -q "heuristic" "$tmp/err"'
"$T" frobnicate 2>/dev/null; rc=$?
check "unknown command exit 2" '[ $rc -eq 2 ]'
"$T" help >"$tmp/out"
check "help" 'grep -q "usage: tessera solve" "$tmp/out"'

# the options: one list makes the help, the checks and the docs' table
"$T" help options --markdown >"$tmp/table"
sed -n '/^<!-- options table -->$/,/^<!-- end of the options table -->$/p' \
    "$S/docs/puzzle-format.md" | sed '1d;$d' >"$tmp/doc-table"
check "docs/puzzle-format.md's option table is tessera help options --markdown" \
    'diff -u "$tmp/doc-table" "$tmp/table" >&2'
"$T" help options >"$tmp/out"
check "help options lists the flags" 'grep -q -- "--no-nof" "$tmp/out" && grep -q -- "--store=all|none|N" "$tmp/out"'
"$T" solve --limit=x "$S/puzzles/soma-cube.json" 2>"$tmp/err" >/dev/null; rc=$?
check "a bad value names the flag and the text" '[ $rc -eq 2 ] && grep -q "^tessera: --limit: expected an integer >= 0, got .x.$" "$tmp/err"'
"$T" solve -q --json --no-nof --volume --parity=off --redundancy=off "$S/puzzles/soma-cube.json" >"$tmp/out"
check "flags without values and --no-" 'grep -q "nof=off volume=once" "$tmp/out" && grep -q "redundancy=off" "$tmp/out"'
"$T" solve -q --json --no-volume --no-parity --no-redundancy "$S/puzzles/soma-cube.json" >"$tmp/out"
check "--no- on options that take off" 'grep -q "volume=off vtrigger=0 parity=0 " "$tmp/out" && grep -q "redundancy=off" "$tmp/out" && grep -q "\"solutions\": *480" "$tmp/out"'
"$T" solve -q --threads=1 --unique=raw --stats --pieces=3 "$S/tests/fixtures/lattices/polyhexes-1234-diamond-ring.json" >"$tmp/out"
"$T" solve -q --threads=1 --unique=raw --stats --no-pieces "$S/tests/fixtures/lattices/polyhexes-1234-diamond-ring.json" >"$tmp/out2"
check "E's pieces from a level, and --no-pieces" 'grep -q "^solutions: 335348 (raw)" "$tmp/out" && grep -q " pieces=3 redundancy=" "$tmp/out" && grep -q "^solutions: 335348 (raw)" "$tmp/out2" && grep -q "fit=off pairs=on redundancy=" "$tmp/out2"'
"$T" solve --pairs --goal=2 "$S/puzzles/soma-cube.json" 2>"$tmp/err" >/dev/null; rc=$?
check "the two-piece table refuses partial assemblies" '[ $rc -eq 2 ] && grep -q "option .pairs. needs complete solutions (goal 0)" "$tmp/err"'
"$T" solve -q --threads=1 --unique=raw --pairs "$S/tests/fixtures/lattices/tetrahexes-7x4.json" >"$tmp/out"
check "the two-piece table: its count, named in the configuration" 'grep -q "^solutions: 18 (raw)" "$tmp/out" && grep -q "fit=off pairs=on redundancy=" "$tmp/out"'
"$T" solve -q --threads=1 --unique=raw --no-pairs "$S/tests/fixtures/lattices/tetrahexes-7x4.json" >"$tmp/out"
check "without the table the configuration is as before it" 'grep -q "^solutions: 18 (raw)" "$tmp/out" && grep -q "fit=off redundancy=" "$tmp/out"'
"$T" solve --priority=3 "$S/puzzles/soma-cube.json" 2>"$tmp/err" >/dev/null; rc=$?
check "solve refuses the daemon-only options" '[ $rc -eq 2 ] && grep -q "priority" "$tmp/err"'

# daemon commands, without a daemon: usage errors and local checks come
# first, and an address where nothing listens gives a clear message
nowhere=http://127.0.0.1:1
"$T" watch 2>"$tmp/err"; rc=$?
check "watch without id exit 2" '[ $rc -eq 2 ] && grep -q "needs a job id" "$tmp/err"'
"$T" status abc 2>"$tmp/err"; rc=$?
check "bad job id exit 2" '[ $rc -eq 2 ] && grep -q "bad job id .abc." "$tmp/err"'
"$T" cancel 0 2>/dev/null; rc=$?
check "job id 0 exit 2" '[ $rc -eq 2 ]'
"$T" pause 1 2 2>/dev/null; rc=$?
check "two job ids exit 2" '[ $rc -eq 2 ]'
"$T" resume --frobnicate 1 2>"$tmp/err"; rc=$?
check "unknown option exit 2" '[ $rc -eq 2 ] && grep -q "frobnicate" "$tmp/err"'
"$T" delete --watch 1 2>"$tmp/err"; rc=$?
check "option of another command exit 2" '[ $rc -eq 2 ] && grep -q "does not apply to delete" "$tmp/err"'
"$T" solutions --limit=0 1 2>/dev/null; rc=$?
check "solutions bad limit exit 2" '[ $rc -eq 2 ]'
"$T" status --state=sleeping 2>"$tmp/err"; rc=$?
check "status bad state exit 2" '[ $rc -eq 2 ] && grep -q "state" "$tmp/err"'
"$T" submit 2>"$tmp/err"; rc=$?
check "submit without file exit 2" '[ $rc -eq 2 ] && grep -q "needs a puzzle file" "$tmp/err"'
"$T" status --server=ftp://example.org 1 2>/dev/null; rc=$?
check "bad server URL exit 2" '[ $rc -eq 2 ]'
"$T" submit --server=$nowhere "$tmp/bad.json" >"$tmp/out" 2>"$tmp/err"; rc=$?
check "submit bad json exit 2" '[ $rc -eq 2 ] && [ ! -s "$tmp/out" ]'
check "submit bad json names path" 'grep -q "bad.json" "$tmp/err" && grep -q "pieces\[0\].count" "$tmp/err"'
check "submit checks before connecting" '! grep -q "cannot reach" "$tmp/err"'
"$T" submit --server=$nowhere - <"$tmp/bad.txt" 2>"$tmp/err"; rc=$?
check "submit bad polycube exit 2" '[ $rc -eq 2 ] && grep -q "<stdin>:2" "$tmp/err"'
"$T" submit --server=$nowhere --unique=sideways "$S/puzzles/soma-cube.json" 2>"$tmp/err"; rc=$?
check "submit bad option exit 2" '[ $rc -eq 2 ] && grep -q "unique" "$tmp/err"'
"$T" submit --server=$nowhere "$S/puzzles/soma-cube.json" >"$tmp/out" 2>"$tmp/err"; rc=$?
check "no daemon exit 1" '[ $rc -eq 1 ] && [ ! -s "$tmp/out" ]'
check "no daemon message" 'grep -q "cannot reach tesserad at $nowhere: Connection refused (is it running" "$tmp/err"'
"$T" --server=$nowhere status 2>"$tmp/err"; rc=$?
check "--server before the command" '[ $rc -eq 1 ] && grep -q "cannot reach tesserad at $nowhere" "$tmp/err"'
"$T" --token t --server $nowhere watch 3 2>"$tmp/err"; rc=$?
check "--token and --server before the command" '[ $rc -eq 1 ] && grep -q "cannot reach tesserad at $nowhere" "$tmp/err"'
"$T" --server=$nowhere solve "$S/puzzles/soma-cube.json" 2>"$tmp/err"; rc=$?
check "--server before solve: exit 2, says why" '[ $rc -eq 2 ] && grep -q "daemon commands" "$tmp/err"'
TESSERA_SERVER=$nowhere "$T" status 2>"$tmp/err"; rc=$?
check "TESSERA_SERVER used" '[ $rc -eq 1 ] && grep -q "$nowhere" "$tmp/err"'
"$T" help >"$tmp/out"
check "help lists daemon commands" 'grep -q "tessera submit" "$tmp/out" && grep -q "TESSERA_SERVER" "$tmp/out"'
check "help lists the batch commands" 'grep -q "tessera batch submit" "$tmp/out" && grep -q -- "--hole=SHAPE" "$tmp/out"'
"$T" batch submit --hole=each-cell "$S/puzzles/soma-cube.json" "$S/puzzles/soma-cube.json" 2>"$tmp/err"; rc=$?
check "batch submit --hole takes one file: exit 2 before any request" '[ $rc -eq 2 ] && grep -q "one puzzle file" "$tmp/err"'
TESSERA_SERVER=$nowhere "$T" batch list 2>"$tmp/err"; rc=$?
check "batch list without a daemon: exit 1, names the address" '[ $rc -eq 1 ] && grep -q "$nowhere" "$tmp/err"'
"$T" batch 2>"$tmp/err"; rc=$?
check "batch without a subcommand: exit 2" '[ $rc -eq 2 ] && grep -q "submit, show or list" "$tmp/err"'

# estimate: a search the timing run finishes gives its exact counts
"$T" estimate --seconds=0.3 "$S/puzzles/soma-cube.json" >"$tmp/out" 2>"$tmp/err"; rc=$?
check "estimate exits 0" '[ $rc -eq 0 ] && [ ! -s "$tmp/err" ]'
check "estimate lists nodes and solutions" 'grep -q "^nodes: " "$tmp/out" && grep -q "^solutions (rotations): 480 (480 to 480)" "$tmp/out"'
check "estimate lists rate and times" 'grep -q "^node rate: " "$tmp/out" && grep -q "^time on 1 thread: " "$tmp/out"'
check "estimate says the run was exact" 'grep -q "^exact: " "$tmp/out"'
"$T" estimate --json --threads=4 --probes=2000 --seconds=300 --seed=3 "$S/puzzles/tetris-cube.json" >"$tmp/out" 2>"$tmp/err"; rc=$?
check "estimate --json exits 0, one line" '[ $rc -eq 0 ] && [ "$(wc -l <"$tmp/out")" -eq 1 ]'
check "estimate --json fields" 'grep -q "\"nodes\":{\"estimate\":" "$tmp/out" && grep -q "\"solutions\":{" "$tmp/out" && grep -q "\"rate\":" "$tmp/out" && grep -q "\"probes\":2000," "$tmp/out"'
check "estimate --json times for 1 and 4 threads" 'grep -q "\"seconds\":{\"1\":{.*\"text\":.*\"4\":{" "$tmp/out"'
check "estimate --json: the search did not finish" 'grep -q "\"exact\":null" "$tmp/out"'
"$T" estimate --probes=0 "$S/puzzles/soma-cube.json" 2>"$tmp/err" >/dev/null; rc=$?
check "estimate bad --probes exit 2" '[ $rc -eq 2 ] && grep -q "probes" "$tmp/err"'
"$T" estimate --seconds=-1 "$S/puzzles/soma-cube.json" 2>"$tmp/err" >/dev/null; rc=$?
check "estimate bad --seconds exit 2" '[ $rc -eq 2 ] && grep -q "seconds" "$tmp/err"'
"$T" estimate "$tmp/bad.json" 2>"$tmp/err" >"$tmp/out"; rc=$?
check "estimate bad json exit 2, names the path" '[ $rc -eq 2 ] && grep -q "pieces\[0\].count" "$tmp/err" && [ ! -s "$tmp/out" ]'
"$T" estimate --order=q "$S/puzzles/soma-cube.json" 2>"$tmp/err" >/dev/null; rc=$?
check "estimate bad order exit 2" '[ $rc -eq 2 ] && grep -q "heuristic" "$tmp/err"'
"$T" help >"$tmp/out"
check "help documents estimate" 'grep -q "tessera estimate" "$tmp/out" && grep -q -- "--probes=N" "$tmp/out"'

# convert: every pair of formats, each output read back and counted (the
# Soma cube: 480 up to rotations); the format from --to or OUT's extension
cp "$S/puzzles/soma-cube.json" "$tmp/soma.json"
cp "$S/puzzles/polycube/soma-cube.txt" "$tmp/soma.txt"
"$T" convert "$tmp/soma.json" -o "$tmp/soma.xmpuzzle" 2>"$tmp/err"; rc=$?
check "convert json -> xmpuzzle by extension: exit 0, quiet" '[ $rc -eq 0 ] && [ ! -s "$tmp/err" ]'
check "convert xmpuzzle output is gzip" '[ "$(head -c 2 "$tmp/soma.xmpuzzle" | od -An -tx1 | tr -d " ")" = "1f8b" ]'
for from in json txt xmpuzzle; do
    for to in json polycube xmpuzzle; do
        "$T" convert --to=$to "$tmp/soma.$from" >"$tmp/conv.$from.$to" 2>"$tmp/err"; rc=$?
        check "convert $from -> $to: exit 0" '[ $rc -eq 0 ] && [ -s "$tmp/conv.$from.$to" ]'
        "$T" solve -q --json "$tmp/conv.$from.$to" >"$tmp/out" 2>/dev/null
        check "convert $from -> $to: reads back, 480 solutions" 'grep -q "\"solutions\": *480" "$tmp/out"'
    done
done
"$T" convert "$tmp/soma.xmpuzzle" -o "$tmp/back.txt" && "$T" solve -q --json --unique=mirror "$tmp/back.txt" >"$tmp/out"
check "convert xmpuzzle -> polycube by extension, 240 up to reflections" 'grep -q "\"solutions\": *240" "$tmp/out"'
# a BurrTools file's problem by number and name
"$T" convert --problem=Square --to=json "$S/tests/fuzz/corpus/xmpuzzle/soma.xmpuzzle" >"$tmp/out" 2>"$tmp/err"; rc=$?
check "convert --problem=NAME: the 3x3 square with its optional centre and range" '[ $rc -eq 0 ] && grep -q "\"optional\": *\[\[1, *1, *0\]\]" "$tmp/out" && grep -q "\"count\": *\[0, *3\]" "$tmp/out"'
"$T" convert --problem=3 --to=json "$S/tests/fuzz/corpus/xmpuzzle/soma.xmpuzzle" >"$tmp/out" 2>"$tmp/err"; rc=$?
check "convert --problem out of range: exit 2, says how many" '[ $rc -eq 2 ] && grep -q "the file has 2 problems" "$tmp/err" && [ ! -s "$tmp/out" ]'
"$T" convert --problem=1 --to=json "$tmp/soma.json" 2>"$tmp/err" >/dev/null; rc=$?
check "convert --problem of a JSON file: exit 2" '[ $rc -eq 2 ] && grep -q "problem is for BurrTools files" "$tmp/err"'
# refusals name what the format cannot say, and leave OUT as it was
echo keep >"$tmp/kept.xmpuzzle"
"$T" convert "$S/puzzles/onesided-pentominoes-3x30.json" -o "$tmp/kept.xmpuzzle" 2>"$tmp/err"; rc=$?
check "convert one-sided -> xmpuzzle refused: exit 2, names the piece and rule" '[ $rc -eq 2 ] && grep -q "cannot be written as xmpuzzle: piece F: \"rotations\": \"one-sided\"" "$tmp/err"'
check "a refused convert leaves OUT as it was, no temporary left" '[ "$(cat "$tmp/kept.xmpuzzle")" = keep ] && [ -z "$(ls "$tmp" | grep "tmp-")" ]'
"$T" convert --to=polycube "$S/puzzles/pentominoes-any5-5x5.json" >"$tmp/out" 2>"$tmp/err"; rc=$?
check "convert ranges -> polycube refused: exit 2, says why" '[ $rc -eq 2 ] && grep -q "count range \[0, 1\]: a polycube definition has no ranges" "$tmp/err" && [ ! -s "$tmp/out" ]'

# the plane lattices (issue 24): JSON carries them, the cubic formats refuse them
hex="$S/tests/fixtures/lattices/tetrahexes-7x4.json"
"$T" convert --to=json "$hex" >"$tmp/hex.json" 2>"$tmp/err"; rc=$?
check "convert hexagonal -> json: the lattice and [x, y] cells" '[ $rc -eq 0 ] && grep -q "\"lattice\": \"hexagonal\"" "$tmp/hex.json" && grep -q "\"cells\": \[\[0, 0\], \[1, 0\]" "$tmp/hex.json"'
"$T" convert --to=json "$tmp/hex.json" >"$tmp/hex2.json" && cmp -s "$tmp/hex.json" "$tmp/hex2.json"; rc=$?
check "convert hexagonal json -> json: the same bytes" '[ $rc -eq 0 ]'
for to in polycube xmpuzzle; do
    "$T" convert --to=$to "$hex" >"$tmp/out" 2>"$tmp/err"; rc=$?
    check "convert hexagonal -> $to refused: exit 2, names the lattice" '[ $rc -eq 2 ] && grep -q "the puzzle is on the hexagonal lattice" "$tmp/err" && [ ! -s "$tmp/out" ]'
done
"$T" solve --polycube "$S/tests/fixtures/lattices/hexiamonds-9x4.json" >"$tmp/out" 2>"$tmp/err"; rc=$?
check "solve --polycube on triangles refused before searching: exit 2" '[ $rc -eq 2 ] && grep -q "polycube definitions describe the cubic lattice only; this puzzle is on the triangular lattice" "$tmp/err" && [ ! -s "$tmp/out" ]'
"$T" convert "$S/puzzles/dominoes-6x6.json" -o "$tmp/dominoes.txt" 2>"$tmp/err"; rc=$?
check "convert copies -> polycube refused: exit 2, no file" '[ $rc -eq 2 ] && grep -q "piece D: 18 copies: a polycube definition has no counts" "$tmp/err" && [ ! -e "$tmp/dominoes.txt" ]'
"$T" convert "$S/puzzles/pentominoes-8x8-fixed-center.json" -o "$tmp/fixed.xmpuzzle" 2>"$tmp/err"; rc=$?
check "convert a fixed piece -> xmpuzzle: written with a note" '[ $rc -eq 0 ] && grep -q "note: BurrTools has no fixed pieces" "$tmp/err"'
"$T" solve -q --json --unique=raw "$tmp/fixed.xmpuzzle" >"$tmp/out"
check "the fixed piece carved out: the same 520 solutions" 'grep -q "\"solutions\": *520" "$tmp/out"'
"$T" convert --to=yaml "$tmp/soma.json" 2>"$tmp/err"; rc=$?
check "convert --to unknown: exit 2" '[ $rc -eq 2 ] && grep -q "expected json, polycube or xmpuzzle" "$tmp/err"'
"$T" convert "$tmp/soma.json" -o "$tmp/soma.out" 2>"$tmp/err"; rc=$?
check "convert without a format: exit 2, says how to give one" '[ $rc -eq 2 ] && grep -q "say the format with --to" "$tmp/err" && [ ! -e "$tmp/soma.out" ]'
"$T" convert --to=json "$tmp/soma.json" -o "$tmp/x.xmpuzzle" 2>"$tmp/err"; rc=$?
check "convert --to against OUT's extension: exit 2" '[ $rc -eq 2 ] && [ ! -e "$tmp/x.xmpuzzle" ]'
"$T" convert --to=json "$tmp/missing.json" 2>"$tmp/err"; rc=$?
check "convert a missing file: exit 2, names it" '[ $rc -eq 2 ] && grep -q "missing.json: No such file" "$tmp/err"'
if command -v script >/dev/null; then # a terminal on stdout: binary refused
    script -qec "\"$T\" convert --to=xmpuzzle \"$tmp/soma.json\"" /dev/null >"$tmp/out" 2>&1; rc=$?
    check "convert xmpuzzle to a terminal: exit 2, says to use -o" '[ $rc -eq 2 ] && grep -q "give -o FILE.xmpuzzle" "$tmp/out"'
fi
"$T" help >"$tmp/out"
check "help documents convert" 'grep -q "tessera convert \[--problem=N|NAME\] \[--to=json|polycube|xmpuzzle\] \[-o OUT\] IN" "$tmp/out"'

# a write error (a full disk) is an error, whatever was written before it
if [ -w /dev/full ]; then
    "$T" solve -q "$S/puzzles/pentominoes-6x10.json" >/dev/full 2>"$tmp/err"; rc=$?
    check "solve to a full disk exits 1" '[ $rc -eq 1 ]'
    check "solve to a full disk says so" 'grep -q "cannot write the output: No space left on device" "$tmp/err"'
    "$T" solve --limit=50 "$S/puzzles/soma-cube.json" >/dev/full 2>"$tmp/err"; rc=$?
    check "solutions to a full disk: non-zero exit" '[ $rc -ne 0 ] && [ -s "$tmp/err" ]'
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
