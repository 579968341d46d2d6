#!/usr/bin/env python3
"""bench/daemon.py - the same searches through tesserad, checkpoints included.

Usage: bench/daemon.py TESSERAD SRCDIR [RUNS]

Starts tesserad with every core and its default checkpoint interval (and
once more with one checkpoint a second), submits each puzzle RUNS times
one after the other and prints rows in the format of bench/run.sh: the
median of the jobs' own search seconds (wall time, all threads), so the
rows compare directly with the "pool" rows of that table taken in the same
`make bench`.
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

PUZZLES = os.environ.get("BENCH_DAEMON_PUZZLES", "tetris-cube bedlam-cube").split()


def call(base, path, body=None):
    req = urllib.request.Request(base + path, data=body, method="POST" if body else "GET",
                                 headers={"Content-Type": "application/json"} if body else {})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


def run_daemon(tesserad, src, runs, checkpoint):
    state = tempfile.mkdtemp(prefix="tessera-bench-")
    args = [tesserad, "--listen", "127.0.0.1:0", "--state-dir", state]
    if checkpoint:
        args += ["--checkpoint-seconds", str(checkpoint)]
    d = subprocess.Popen(args, stderr=subprocess.PIPE, text=True)
    try:
        port = int(re.search(r"\(port (\d+)\)", d.stderr.readline()).group(1))
        base = "http://127.0.0.1:%d" % port
        threads = call(base, "/healthz")["threads"]
        for puzzle in PUZZLES:
            with open(os.path.join(src, "puzzles", puzzle + ".json"), "rb") as f:
                body = f.read()
            secs, sols, nodes = [], set(), set()
            for _ in range(runs):
                job = call(base, "/api/v1/jobs", body)["id"]
                while True:
                    j = call(base, "/api/v1/jobs/%d" % job)
                    if j["state"] not in ("queued", "running"):
                        break
                    time.sleep(0.05)
                if j["state"] != "completed":
                    sys.exit("bench: job %d of %s ended %s" % (job, puzzle, j["state"]))
                secs.append(j["progress"]["seconds"])
                sols.add(j["solutions"])
                nodes.add(j["progress"]["nodes"])
            if len(sols) != 1 or len(nodes) != 1:
                sys.exit("bench: %s: runs disagree: %s %s" % (puzzle, sols, nodes))
            t = statistics.median(secs)
            name = "daemon" + ("-cp%g" % checkpoint if checkpoint else "")
            print("%-20s %-12s %10d %13d %9.3f %12.3g %7d" %
                  (puzzle, name, sols.pop(), nodes.pop(), t, j["progress"]["nodes"] / t,
                   threads))
    finally:
        d.terminate()
        d.wait(timeout=30)
        shutil.rmtree(state, ignore_errors=True)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else int(os.environ.get("BENCH_RUNS", "3"))
    run_daemon(sys.argv[1], sys.argv[2], runs, None)
    run_daemon(sys.argv[1], sys.argv[2], runs, 1)


if __name__ == "__main__":
    main()
