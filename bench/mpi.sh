#!/bin/sh
# bench/mpi.sh - tessera solve --mpi against the one-process search.
#
# Usage: bench/mpi.sh TESSERA SRCDIR [RUNS] [PUZZLE]
# (RUNS: 3 by default, BENCH_RUNS overrides; PUZZLE: tetris-cube.)
#
# Rows (one thread per rank but for the plain t=N rows):
#   plain        tessera solve --threads=1, no MPI (the reference)
#   plain t=2    tessera solve --threads=2: what this machine gives 2 threads
#   np=1         one rank (MPI's cost when there is nothing to share)
#   np=2         two ranks of one thread: every rank searches, so this is
#                the row to compare with plain t=2
#   np=3         three ranks of one thread (on 2 cores: oversubscribed)
# and with 16 cores or more: plain t=16, np=1 t=16 (one rank of sixteen
# threads) and np=4 t=4 (four ranks of four threads).
# "search s" is the summary's seconds (MPI's start-up excluded), "wall s"
# the whole mpirun; both are the median of RUNS.  After the table: each
# rank's messages, bytes, idle and CPU seconds in the median run of each MPI
# row.  The machine may be shared and noisy: compare rows of one run of this
# script, and read speed-ups against plain t=2 (when it is no faster than
# plain, the cores are taken).
set -u
T=${1:?usage: mpi.sh TESSERA SRCDIR [RUNS] [PUZZLE]}
S=${2:?usage: mpi.sh TESSERA SRCDIR [RUNS] [PUZZLE]}
RUNS=${3:-${BENCH_RUNS:-3}}
P=${4:-tetris-cube}
command -v mpirun >/dev/null 2>&1 || { echo "bench/mpi.sh: no mpirun" >&2; exit 1; }
MPIRUN="mpirun"
if mpirun --version 2>&1 | grep -qi "open mpi"; then
    MPIRUN="mpirun --oversubscribe --allow-run-as-root"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "puzzle $P, $RUNS runs per row, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
run_row() { # name, then the command
    name=$1
    shift
    i=0
    while [ "$i" -lt "$RUNS" ]; do
        t0=$(date +%s.%N)
        "$@" -q --json "$S/puzzles/$P.json" >"$tmp/$name.$i.json" 2>/dev/null
        t1=$(date +%s.%N)
        echo "$t0 $t1" >"$tmp/$name.$i.wall"
        i=$((i + 1))
    done
}
run_row plain "$T" solve --threads=1
run_row plain2 "$T" solve --threads=2
run_row np1 $MPIRUN -np 1 "$T" solve --mpi --threads=1
run_row np2 $MPIRUN -np 2 "$T" solve --mpi --threads=1
run_row np3 $MPIRUN -np 3 "$T" solve --mpi --threads=1
# on a machine of 16 cores or more: 4 ranks of 4 threads against 1 of 16
if [ "$(nproc)" -ge 16 ]; then
    run_row plain16 "$T" solve --threads=16
    run_row np1t16 $MPIRUN -np 1 "$T" solve --mpi --threads=16
    run_row np4t4 $MPIRUN -np 4 "$T" solve --mpi --threads=4
fi

python3 - "$tmp" "$RUNS" <<'EOF'
import json, sys
tmp, runs = sys.argv[1], int(sys.argv[2])
import os
rows = [("plain", "plain (no MPI)"), ("plain2", "plain t=2"), ("np1", "np=1"),
        ("np2", "np=2"), ("np3", "np=3"), ("plain16", "plain t=16"),
        ("np1t16", "np=1 t=16"), ("np4t4", "np=4 t=4")]
rows = [r for r in rows if os.path.exists(f"{tmp}/{r[0]}.0.json")]
def load(name, i):
    with open(f"{tmp}/{name}.{i}.json") as f:
        d = json.load(f)
    t0, t1 = map(float, open(f"{tmp}/{name}.{i}.wall").read().split())
    return d, t1 - t0
print(f"{'row':16} {'search s':>9} {'wall s':>8} {'nodes/s':>9} {'speed-up':>8} {'solutions':>10} "
      f"{'nodes':>12} {'steals':>6}")
base = None
medians = {}
for name, label in rows:
    res = [load(name, i) for i in range(runs)]
    res.sort(key=lambda r: r[0]["seconds"])
    d, wall = res[len(res) // 2]
    medians[name] = d
    walls = sorted(r[1] for r in res)
    base = base or d["seconds"]
    nodes = {r[0]["nodes"] for r in res}
    sols = {r[0]["solutions"] for r in res}
    steals = d.get("cluster", {}).get("steals", "-")
    print(f"{label:16} {d['seconds']:9.3f} {walls[len(walls) // 2]:8.3f} "
          f"{d['nodes'] / d['seconds']:9.3g} {base / d['seconds']:8.2f} {'/'.join(map(str, sols)):>10} "
          f"{'/'.join(map(str, nodes)):>12} {steals:>6}")
for name, label in rows:
    c = medians[name].get("cluster")
    if c is None:
        continue
    print(f"\n{label}, per rank (median run):")
    print(f"  {'rank':>4} {'role':12} {'batches':>7} {'tasks':>6} {'back':>5} {'msgs out':>8} "
          f"{'bytes out':>10} {'msgs in':>8} {'bytes in':>10} {'busy s':>7} {'idle s':>7} "
          f"{'cpu s':>7}")
    for r in c["per_rank"]:
        print(f"  {r['rank']:4} {r['role']:12} {r['batches']:7} {r['tasks']:6} "
              f"{r['given_back']:5} {r['messages_sent']:8} {r['bytes_sent']:10} "
              f"{r['messages_received']:8} {r['bytes_received']:10} "
              f"{r['busy_seconds']:7.3f} {r['idle_seconds']:7.3f} {r['cpu_seconds']:7.3f}")
EOF
