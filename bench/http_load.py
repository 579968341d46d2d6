#!/usr/bin/env python3
"""bench/http_load.py - what 200 polling HTTP clients cost the solver.

Usage: bench/http_load.py TESSERAD SRCDIR [CYCLES]

Starts tesserad (all cores, a fresh state directory, a free port), submits
a long search (the one-sided pentominoes in 5x18, minutes of work), and
alternates windows of WINDOW seconds without and with load.  The load is
wrk on the same machine: 200 keep-alive connections, each polling the job's
status every second (BENCH_POLL_MS) and, every tenth request, a page of its
solutions.  BENCH_POLL_MS=100 makes it ten times harsher; note that wrk's
own CPU time then counts against the solver on a small machine.  The solver's throughput in a window is taken from the job
itself (nodes and search seconds move together in each progress update), so
the figure does not depend on when the window's HTTP samples land.

Prints one row per window, then the median nodes/s without and with load,
the cost (1 - loaded/quiet) and wrk's latency percentiles (p50, p99) of the
loaded windows.  Targets (issue 3): cost <= 5 %, p99 < 20 ms.
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

WINDOW = float(os.environ.get("BENCH_WINDOW", "15"))
CLIENTS = int(os.environ.get("BENCH_CLIENTS", "200"))
POLL_MS = int(os.environ.get("BENCH_POLL_MS", "1000"))

WRK_SCRIPT = """
local n = 0
request = function()
  n = n + 1
  if n %% 10 == 0 then
    return wrk.format("GET", "/api/v1/jobs/%d/solutions?limit=10")
  end
  return wrk.format("GET", "/api/v1/jobs/%d")
end
-- jittered, as independent pollers are
delay = function() return math.floor(%d * (0.5 + math.random())) end
"""


def get(base, path):
    with urllib.request.urlopen(base + path, timeout=10) as r:
        return json.loads(r.read())


def post(base, path, body):
    req = urllib.request.Request(base + path, data=body, method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())


def sample(base, job):
    j = get(base, "/api/v1/jobs/%d" % job)
    return j["progress"]["nodes"], j["progress"]["seconds"], j["state"]


def wait_progress(base, job, after_seconds):
    """The first sample whose search seconds moved past after_seconds."""
    while True:
        n, s, st = sample(base, job)
        if s > after_seconds or st != "running":
            return n, s, st
        time.sleep(0.05)


def parse_ms(text):
    m = re.match(r"([\d.]+)(us|ms|s)", text)
    v = float(m.group(1))
    return v / 1000 if m.group(2) == "us" else v * 1000 if m.group(2) == "s" else v


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    tesserad, src = sys.argv[1], sys.argv[2]
    cycles = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    if shutil.which("wrk") is None:
        sys.exit("http_load: wrk is not installed (apt-get install wrk)")
    state = tempfile.mkdtemp(prefix="tessera-load-")
    daemon = subprocess.Popen([tesserad, "--listen", "127.0.0.1:0", "--state-dir", state],
                              stderr=subprocess.PIPE, text=True)
    try:
        line = daemon.stderr.readline()
        port = int(re.search(r"\(port (\d+)\)", line).group(1))
        base = "http://127.0.0.1:%d" % port
        with open(os.path.join(src, "puzzles/onesided-pentominoes-5x18.json"), "rb") as f:
            job = post(base, "/api/v1/jobs", f.read())["id"]
        lua = os.path.join(state, "poll.lua")
        with open(lua, "w") as f:
            f.write(WRK_SCRIPT % (job, job, POLL_MS))
        # let preparation and the first seconds of the search pass
        n0, s0, _ = wait_progress(base, job, 3.0)
        rows, quiet, loaded, p50s, p99s = [], [], [], [], []
        print("%-8s %14s %10s %12s %9s %9s" % ("window", "nodes", "seconds", "nodes/s",
                                              "p50 ms", "p99 ms"))
        for cycle in range(cycles):
            for load in (False, True):
                wrk = None
                if load:
                    wrk = subprocess.Popen(
                        ["wrk", "-t2", "-c%d" % CLIENTS, "-d%ds" % int(WINDOW + 2),
                         "--latency", "-s", lua, base],
                        stdout=subprocess.PIPE, text=True)
                    time.sleep(1.0)  # connections up
                n0, s0, _ = wait_progress(base, job, 0)
                n0, s0, _ = wait_progress(base, job, s0)
                time.sleep(WINDOW - 1.0 if load else WINDOW)
                n1, s1, st = wait_progress(base, job, s0 + WINDOW * 0.5)
                rate = (n1 - n0) / (s1 - s0)
                p50 = p99 = float("nan")
                if wrk is not None:
                    out = wrk.communicate()[0]
                    m50 = re.search(r"^\s+50%\s+(\S+)", out, re.M)
                    m99 = re.search(r"^\s+99%\s+(\S+)", out, re.M)
                    p50, p99 = parse_ms(m50.group(1)), parse_ms(m99.group(1))
                    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
                    if errors:
                        print("http_load: %s non-2xx answers" % errors.group(1), file=sys.stderr)
                    loaded.append(rate)
                    p50s.append(p50)
                    p99s.append(p99)
                else:
                    quiet.append(rate)
                print("%-8s %14d %10.1f %12.4g %9.2f %9.2f" %
                      ("load" if load else "quiet", n1 - n0, s1 - s0, rate, p50, p99))
                if st != "running":
                    sys.exit("http_load: the job ended early; use a longer puzzle")
        q, l = statistics.median(quiet), statistics.median(loaded)
        print("quiet median %.4g nodes/s, loaded median %.4g nodes/s: cost %.1f %% "
              "(target <= 5 %%); %d clients polling every %d ms, p50 %.2f ms, p99 %.2f ms (target < 20 ms)"
              % (q, l, 100 * (1 - l / q), CLIENTS, POLL_MS, statistics.median(p50s),
                 statistics.median(p99s)))
        urllib.request.urlopen(urllib.request.Request(
            base + "/api/v1/jobs/%d/cancel" % job, method="POST"), timeout=30).read()
    finally:
        daemon.terminate()
        daemon.wait(timeout=30)
        shutil.rmtree(state, ignore_errors=True)


if __name__ == "__main__":
    main()
