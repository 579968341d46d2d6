#!/usr/bin/env python3
"""bench/eta.py - how honest the daemon's ETA range is.

Usage: bench/eta.py TESSERAD SRCDIR PUZZLE [THREADS]

Starts tesserad on a free loopback port with a fresh state dir, submits
PUZZLE (a file in SRCDIR/puzzles), polls the job four times a second until
it completes, and prints, at the first poll past 25%, 50% and 75% done, the
ETA range the API gave against the time that actually remained.  Run by
`make bench-eta` (opt-in: the one-sided 5x18 takes minutes).
"""

import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request


def main():
    if len(sys.argv) < 4:
        sys.exit("usage: eta.py TESSERAD SRCDIR PUZZLE [THREADS]")
    daemon, src, puzzle = sys.argv[1:4]
    threads = sys.argv[4] if len(sys.argv) > 4 else "2"
    state = tempfile.mkdtemp(prefix="tsr-eta-")
    proc = subprocess.Popen([daemon, "--listen", "127.0.0.1:0", "--state-dir", state, "--threads", threads,
                             "--www", state, "--puzzles", os.path.join(src, "puzzles")],
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
    port = None
    for raw in proc.stderr:
        m = re.search(r"\(port (\d+)\)", raw.decode())
        if m:
            port = int(m.group(1))
            break
    base = "http://127.0.0.1:%d" % port

    def call(method, path, body=None):
        req = urllib.request.Request(base + path, data=body, method=method,
                                     headers={"Content-Type": "application/json"} if body else {})
        with urllib.request.urlopen(req, timeout=30) as f:
            return json.loads(f.read())

    try:
        with open(os.path.join(src, "puzzles", puzzle), "rb") as f:
            jid = call("POST", "/api/v1/jobs", f.read())["id"]
        polls = []
        while True:
            j = call("GET", "/api/v1/jobs/%d" % jid)
            t = time.monotonic()
            if j["state"] in ("completed", "cancelled", "failed"):
                end = t
                break
            p = j["progress"]
            polls.append((t, p["fraction"], p.get("eta")))
            time.sleep(0.25)  # the end is seen within a quarter second
        print("%-34s %6s %10s %12s  %s" % ("puzzle", "done", "remained", "ETA range", "inside"))
        start = polls[0][0] if polls else end
        for target in (0.25, 0.5, 0.75):
            hit = next(((t, f, e) for t, f, e in polls if f >= target and e), None)
            if hit is None:
                continue
            t, f, e = hit
            left = end - t
            low, high = e["low_s"], e["high_s"]
            inside = low is not None and low <= left and (high is None or left <= high)
            print("%-34s %5.1f%% %9.1fs  %s  %s" % (puzzle, 100 * f, left, e["text"], "yes" if inside else "no"))
        print("%-34s total %.1fs on %s threads" % (puzzle, end - start, threads))
    finally:
        proc.terminate()
        proc.wait()


if __name__ == "__main__":
    main()
