#!/usr/bin/env bash
# bench/scaling.sh - what predicts the pool's scaling past this machine's
# cores (docs/engine.md section 10).  Opt-in: `make bench-scaling`.
#
# Usage: bench/scaling.sh TESSERA SRCDIR [RUNS] [PARTS]
#   RUNS  runs per row (3 by default, BENCH_RUNS overrides); medians shown
#   PARTS any of: inflation tasks tail long daemon mpi (default: all but
#         long, which takes another 15 minutes or so)
# Needs bench/tasks and bench/idle_tail built beside TESSERA (the
# bench-scaling target builds them), python3, and for "mpi" an MPI build
# and mpirun.
#
# inflation  user+sys CPU of `tessera solve -q` at 1, 2, 4, 16 and 64
#            threads against 1, whole process (bash's times), median of
#            RUNS, on the 6x10 pentominoes, the Tetris Cube, the Bedlam
#            Cube and a one-sided pentomino sub-board (the 5x18 with I
#            standing at x=9; the whole 5x18 took 10 minutes a run below the root); the
#            counts must agree at every thread count.  CPU time is what a
#            machine of more cores would also spend, so oversubscribing 2
#            cores measures it; wall time here says nothing about 64 cores.
# tasks      bench/tasks at 2, 16 and 64 threads: preparation, first split,
#            task counts and sizes, idle shares, checkpoint parking.
# tail       bench/idle_tail at 2, 16 and 64 threads.
# long       bench/tasks at 16 and 64 threads on the 5x18 with the I at x=0
#            (2 billion nodes, a minute of one core): how the figures of
#            "tasks" hold on a longer search.
# daemon     tesserad --threads 2, 16 and 64 with a checkpoint a second on
#            the Tetris Cube: the commits' mean time (/metrics) and the
#            job's time outside search.
# mpi        tessera solve --mpi on 1, 2, 4 and 8 ranks of one thread (all
#            on this machine, oversubscribed): messages and bytes in all,
#            batches, tasks, steals, and the ranks' idle time per batch.
set -u
T=${1:?usage: scaling.sh TESSERA SRCDIR [RUNS] [PARTS]}
S=${2:?usage: scaling.sh TESSERA SRCDIR [RUNS] [PARTS]}
RUNS=${3:-${BENCH_RUNS:-3}}
PARTS=${4:-inflation tasks tail daemon mpi}
B=$(dirname "$T")/bench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
want() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }
# cpu_run OUT CMD...: run CMD (stdout to OUT) and print its user, sys and
# wall seconds: the child's CPU as bash's `times` reports it (to the
# millisecond; /usr/bin/time rounds to the hundredth, and the 6x10 takes a
# tenth of a second)
cpu_run() {
    local out=$1 t0=$EPOCHREALTIME
    shift
    ( "$@" >"$out" 2>/dev/null; times ) | awk '
        function sec(x,   m) { m = x; sub(/m.*/, "", m); sub(/^[0-9]+m/, "", x); sub(/s$/, "", x); return 60 * m + x }
        NR == 2 { printf "%.3f %.3f\n", sec($1), sec($2) }' | tr '\n' ' '
    echo "$EPOCHREALTIME $t0" | awk '{ printf "%.3f\n", $1 - $2 }'
}

# one-sided sub-boards: the I fixed upright in the middle (x=9: 1e8 nodes)
# or at the end (x=0: 2e9 nodes, for "long"), 17 pieces left
for x in 9 0; do
    python3 - "$S/puzzles/onesided-pentominoes-5x18.json" "$tmp/onesided-5x18-I$x.json" "$x" <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))
x = int(sys.argv[3])
p["name"] = "One-sided pentominoes 5x18, I at x=%d" % x
p.pop("expected", None)
for pc in p["pieces"]:
    if pc["name"] == "I":
        del pc["rows"]
        pc["cells"] = [[x, y, 0] for y in range(5)]
        pc["fixed"] = True
json.dump(p, open(sys.argv[2], "w"))
EOF
done
P6=$S/puzzles/pentominoes-6x10.json
PT=$S/puzzles/tetris-cube.json
PB=$S/puzzles/bedlam-cube.json
PO=$tmp/onesided-5x18-I9.json

echo "scaling: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%FT%TZ)"

if want inflation; then
    echo
    echo "== work inflation: whole-process CPU (user+sys) against 1 thread, median of $RUNS"
    printf '%-34s %7s %10s %12s %8s %8s %8s %8s %8s\n' puzzle threads solutions nodes \
        "user s" "sys s" "cpu s" "ratio" "wall s"
    for P in "$P6" "$PT" "$PB" "$PO"; do
        base=""
        refcounts=""
        runs=$RUNS
        [ "$P" = "$P6" ] && runs=$((RUNS * 3)) # a tenth of a second: more runs
        for t in plain 1 2 4 16 64; do
            if [ "$t" = plain ]; then flags="--engine=plain"; else flags="--threads=$t"; fi
            : >"$tmp/rows"
            for ((i = 0; i < runs; i++)); do
                # shellcheck disable=SC2086
                cpu_run "$tmp/out" "$T" solve -q --json --no-progress $flags "$P" >"$tmp/time"
                c="$(sed -n 's/.*"solutions": *\([0-9]*\).*/\1/p' "$tmp/out") $(sed -n 's/.*"nodes": *\([0-9]*\).*/\1/p' "$tmp/out")"
                if [ -n "$refcounts" ] && [ "$c" != "$refcounts" ]; then
                    echo "scaling: $P at $t threads: $c, not $refcounts" >&2
                    exit 1
                fi
                refcounts=$c
                echo "$(cat "$tmp/time")" >>"$tmp/rows"
            done
            read -r u s c w < <(awk '{u[NR]=$1; s[NR]=$2; c[NR]=$1+$2; w[NR]=$3}
                function med(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
                    if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }; return a[int((n + 1) / 2)] }
                END { n = NR; printf "%.4f %.4f %.4f %.3f\n", med(u, n), med(s, n), med(c, n), med(w, n) }' "$tmp/rows")
            [ "$t" = 1 ] && base=$c
            ratio=$(awk -v c="$c" -v b="${base:-$c}" 'BEGIN { printf "%.3f", c / b }')
            [ "$t" = plain ] && ratio="-"
            read -r sol nodes <<<"$refcounts"
            printf '%-34s %7s %10s %12s %8s %8s %8s %8s %8s\n' "$(basename "$P" .json)" "$t" \
                "$sol" "$nodes" "$u" "$s" "$c" "$ratio" "$w"
        done
    done
fi

if want tasks; then
    echo
    echo "== tasks, preparation, first split, idle shares, checkpoints (bench/tasks, $RUNS runs)"
    for P in "$P6" "$PT" "$PB" "$PO"; do
        for t in 2 16 64; do
            "$B/tasks" "$P" "$t" "$RUNS" || exit 1
        done
    done
fi

if want tail; then
    echo
    echo "== idle workers in the last 10% of the run (bench/idle_tail, $RUNS runs)"
    for P in "$PT" "$PB" "$PO"; do
        for t in 2 16 64; do
            "$B/idle_tail" "$P" "$t" "$RUNS" | awk -v t="$t" 'NR == 1 { next }
                { s = 0; for (i = NF - t + 1; i <= NF; i++) s += $i # the last t fields
                  w = $(NF - t); name = $1; for (i = 2; i < NF - t - 1; i++) name = name " " $i
                  printf "%-28.28s %3d threads  wall %7.3f s  idle in the last 10%%: %.3f worker-s, %.2f%% of %d x wall\n",
                      name, t, w, s, 100 * s / (t * w), t }' || exit 1
        done
    done
fi

if want long; then
    echo
    echo "== a search 19 times longer: bench/tasks on the 5x18 with the I at x=0, one run"
    for t in 16 64; do
        "$B/tasks" "$tmp/onesided-5x18-I0.json" "$t" 1 || exit 1
    done
fi

if want daemon; then
    echo
    echo "== tesserad --threads N, a checkpoint a second, on the Tetris Cube (2 jobs each)"
    python3 - "$(dirname "$T")/tesserad" "$PT" <<'EOF' || exit 1
import json, re, subprocess, sys, tempfile, time, urllib.request, shutil
def call(base, path, body=None):
    req = urllib.request.Request(base + path, data=body, method="POST" if body else "GET",
                                 headers={"Content-Type": "application/json"} if body else {})
    with urllib.request.urlopen(req, timeout=30) as r:
        data = r.read()
    return json.loads(data) if path != "/metrics" else data.decode()
body = open(sys.argv[2], "rb").read()
for threads in (2, 16, 64):
    state = tempfile.mkdtemp(prefix="tessera-scaling-")
    d = subprocess.Popen([sys.argv[1], "--listen", "127.0.0.1:0", "--state-dir", state,
                          "--threads", str(threads), "--checkpoint-seconds", "1"],
                         stderr=subprocess.PIPE, text=True)
    try:
        base = "http://127.0.0.1:%s" % re.search(r"\(port (\d+)\)", d.stderr.readline()).group(1)
        def metric(name):
            m = re.search(r"^%s (\S+)" % name, call(base, "/metrics"), re.M)
            return float(m.group(1))
        for _ in range(2):
            c0, s0 = metric("tessera_checkpoints_total"), metric("tessera_checkpoint_seconds_sum")
            t0 = time.time()
            job = call(base, "/api/v1/jobs", body)["id"]
            used = 0
            while True:
                j = call(base, "/api/v1/jobs/%d" % job)
                used = max(used, j.get("threads", 0))
                if j["state"] not in ("queued", "running"):
                    break
                time.sleep(0.02)
            t1 = time.time()
            c1, s1 = metric("tessera_checkpoints_total"), metric("tessera_checkpoint_seconds_sum")
            n = c1 - c0
            print("%2d threads, job %d: %s, %d solutions, %d nodes, %d threads used; %.3f s "
                  "searching of %.3f s from submission to completed (polled every 20 ms); "
                  "%d commits, %.2f ms each on average (%.3f s in all)" %
                  (threads, job, j["state"], j["solutions"], j["progress"]["nodes"],
                   used, j["progress"]["seconds"], t1 - t0, n,
                   1e3 * (s1 - s0) / max(n, 1), s1 - s0))
    finally:
        d.terminate()
        d.wait(timeout=30)
        shutil.rmtree(state, ignore_errors=True)
EOF
fi

if want mpi; then
    echo
    if ! command -v mpirun >/dev/null 2>&1 || ! "$T" version 2>&1 | grep -qi "with MPI"; then
        echo "== mpi: skipped (no mpirun, or tessera built without MPI)"
    else
        MPIRUN="mpirun"
        mpirun --version 2>&1 | grep -qi "open mpi" && MPIRUN="mpirun --oversubscribe --allow-run-as-root"
        echo "== tessera solve --mpi, one thread per rank, all ranks on this machine (traffic, not speed)"
        for P in "$PT" "$PB"; do
            for np in 1 2 4 8; do
                # shellcheck disable=SC2086
                $MPIRUN -np "$np" "$T" solve --mpi --threads=1 -q --json "$P" >"$tmp/mpi.json" 2>/dev/null || {
                    echo "scaling: mpirun -np $np failed" >&2
                    exit 1
                }
                python3 - "$tmp/mpi.json" "$(basename "$P" .json)" "$np" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
c = d["cluster"]
r = c["per_rank"]
msgs = sum(x["messages_sent"] + x["messages_received"] for x in r)
byts = sum(x["bytes_sent"] + x["bytes_received"] for x in r)
batches = sum(x["batches"] for x in r)
tasks = sum(x["tasks"] for x in r)
back = sum(x["given_back"] for x in r)
idle = sum(x["idle_seconds"] for x in r)
# messages and bytes: rank 0 counts every one, each once from each side
print("%-14s np=%s  %d solutions %d nodes  search %.2f s  steals %d  batches %d  tasks %d  "
      "given back %d  messages %d  bytes %d  (%.0f bytes/task)  idle %.3f s, %.1f ms a batch" %
      (sys.argv[2], sys.argv[3], d["solutions"], d["nodes"], d["seconds"], c["steals"], batches,
       tasks, back, msgs // 2, byts // 2, byts / 2 / max(tasks, 1), idle,
       1e3 * idle / max(batches, 1)))
EOF
            done
        done
    fi
fi
