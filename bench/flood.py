#!/usr/bin/env python3
"""bench/flood.py - the solution flood: what storing 13 million solutions
costs the daemon.

Usage: bench/flood.py TESSERA TESSERAD SRCDIR [RUNS]

Runs puzzles/dominoes-8x8.json in raw mode (12,988,816 solutions) RUNS
times (3 by default, BENCH_RUNS overrides) each way, alternating: `tessera
solve -q --unique=raw --threads=2` (wall seconds of the process) and one job
through a fresh tesserad with --threads 2 (wall seconds from the submit to
the completed state, less the time the bench held it paused).  Prints the
medians and their ratio daemon/CLI, the daemon's peak RSS (VmHWM), the
store's bytes per solution (database + WAL file once the job completed) and
the pause latency: in every daemon run, 2 s into the search, the time from
sending POST .../pause to the answer that shows the job paused (the call
returns once the runner has stopped and checkpointed).  Targets: ratio <= 2
(aim 1.2), RSS <= 512 MB, <= 16 bytes per solution (aim 8), pause <= 1 s.
"""
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

# BENCH_FLOOD_PUZZLE (a path under SRCDIR) floods with another puzzle that
# publishes its raw count, e.g. the 30,353,640 tilings of
# tests/fixtures/lattices/speed/polyhexes-1234-8x5.json
PUZZLE = os.environ.get("BENCH_FLOOD_PUZZLE", "puzzles/dominoes-8x8.json")
THREADS = 2


def call(base, path, post=False, body=None):
    """GET path, or POST it (with body, or empty); the JSON answer."""
    post = post or body is not None
    req = urllib.request.Request(base + path, data=body if body is not None else (b"" if post else None),
                                 method="POST" if post else "GET",
                                 headers={"Content-Type": "application/json"} if post else {})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read())


def vm_hwm_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def cli_run(tessera, path):
    t = time.monotonic()
    out = subprocess.run([tessera, "solve", "-q", "--unique=raw", "--threads=%d" % THREADS, path],
                         capture_output=True, text=True, check=True).stdout
    took = time.monotonic() - t
    return took, int(re.search(r"solutions: (\d+)", out).group(1))


def daemon_run(tesserad, path):
    """One job through a fresh daemon: (seconds, solutions, peak RSS kB,
    store bytes, pause seconds)."""
    state = tempfile.mkdtemp(prefix="tessera-flood-")
    d = subprocess.Popen([tesserad, "--listen", "127.0.0.1:0", "--state-dir", state,
                          "--threads", str(THREADS)], stderr=subprocess.PIPE, text=True)
    try:
        base = "http://127.0.0.1:%s" % re.search(r"\(port (\d+)\)", d.stderr.readline()).group(1)
        with open(path, "rb") as f:
            body = json.dumps({"puzzle": json.load(f), "options": {"unique": "raw"}}).encode()
        t0 = time.monotonic()
        jid = call(base, "/api/v1/jobs", body=body)["id"]
        while call(base, "/api/v1/jobs/%d" % jid)["state"] != "running":
            time.sleep(0.01)
        time.sleep(2.0)
        t = time.monotonic()
        j = call(base, "/api/v1/jobs/%d/pause" % jid, post=True)
        pause = time.monotonic() - t
        if j["state"] != "paused":
            sys.exit("bench: the pause answered state %s" % j["state"])
        t = time.monotonic()
        call(base, "/api/v1/jobs/%d/resume" % jid, post=True)
        held = time.monotonic() - t + pause
        while True:
            j = call(base, "/api/v1/jobs/%d" % jid)
            if j["state"] not in ("queued", "running"):
                break
            time.sleep(0.02)
        took = time.monotonic() - t0 - held
        if j["state"] != "completed":
            sys.exit("bench: the flood job ended %s" % j["state"])
        db = os.path.join(state, "tessera.db")
        size = sum(os.path.getsize(p) for p in (db, db + "-wal") if os.path.exists(p))
        return took, j["solutions"], vm_hwm_kb(d.pid), size, pause
    finally:
        d.terminate()
        d.wait(timeout=30)
        shutil.rmtree(state, ignore_errors=True)


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    tessera, tesserad, src = sys.argv[1:4]
    runs = int(sys.argv[4]) if len(sys.argv) > 4 else int(os.environ.get("BENCH_RUNS", "3"))
    path = os.path.join(src, PUZZLE)
    with open(path) as f:
        expect = json.load(f)["expected"]["raw"]
    cli, dmn = [], []
    for _ in range(runs):  # A B A B: the machine's drift hits both alike
        cli.append(cli_run(tessera, path))
        dmn.append(daemon_run(tesserad, path))
    for what, rows in (("CLI", cli), ("daemon", dmn)):
        if any(r[1] != expect for r in rows):
            sys.exit("bench: a %s run counted %s, want %d" % (what, [r[1] for r in rows], expect))
    tc = statistics.median(r[0] for r in cli)
    td = statistics.median(r[0] for r in dmn)
    rss = max(r[2] for r in dmn)
    size = statistics.median(r[3] for r in dmn)
    pause = max(r[4] for r in dmn)
    print()
    print("solution flood: %s raw, %d solutions, %d threads, medians of %d runs (alternating)"
          % (PUZZLE, expect, THREADS, runs))
    print("  %-28s %8.2f s   (%s)" % ("tessera solve -q", tc, " ".join("%.2f" % r[0] for r in cli)))
    print("  %-28s %8.2f s   (%s)" % ("tesserad job", td, " ".join("%.2f" % r[0] for r in dmn)))
    print("  %-28s %8.2f     (target <= 2, aim 1.2)" % ("ratio daemon/CLI", td / tc))
    print("  %-28s %8.1f MB  (target <= 512)" % ("daemon peak RSS (VmHWM)", rss / 1024))
    print("  %-28s %8.2f     (%d bytes db + wal; target <= 16, aim 8)"
          % ("store bytes per solution", size / expect, size))
    print("  %-28s %8.0f ms  (slowest of %d; target <= 1000)" % ("pause latency", pause * 1000, runs))


if __name__ == "__main__":
    main()
