#!/usr/bin/env python3
"""Scheduling on a two-thread daemon: a higher-priority job takes the threads
from a lower-priority one, equal priorities share the pool (one thread each),
options.threads caps a job, the pool is never oversubscribed; and a job stored
by another engine version is failed at start with a message saying so while
the other jobs are unaffected."""

import os
import sqlite3
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tlib  # noqa: E402
from tlib import check, check_eq, log  # noqa: E402

POOL = 2


class Sampler:
    """Snapshots of all jobs (one GET /api/v1/jobs is consistent) with pool checks."""

    def __init__(self, d):
        self.d = d
        self.n = 0
        self.max_threads = {}

    def snap(self):
        r = self.d.get("/api/v1/jobs?limit=1000")
        if r.status != 200:
            raise tlib.Failure("job list answered %r" % r)
        jobs = {j["id"]: j for j in r.json["jobs"]}
        total = sum(j["threads"] for j in jobs.values())
        self.n += 1
        if total > POOL:
            raise tlib.Failure("FAIL: pool oversubscribed: %s" % {i: (j["state"], j["threads"]) for i, j in jobs.items()})
        for i, j in jobs.items():
            if j["state"] != "running" and j["threads"] != 0:
                raise tlib.Failure("FAIL: job %d is %s with %d threads" % (i, j["state"], j["threads"]))
            self.max_threads[i] = max(self.max_threads.get(i, 0), j["threads"])
        return jobs

    def until(self, pred, timeout, what):
        deadline = time.monotonic() + timeout
        while True:
            s = self.snap()
            if pred(s):
                return s
            if time.monotonic() > deadline:
                raise tlib.Failure("FAIL: timeout waiting for %s; last: %s"
                                   % (what, {i: (j["state"], j["threads"]) for i, j in s.items()}))
            time.sleep(0.03)


def fmt(s):
    return " ".join("#%d:%s/%d" % (i, j["state"][:4], j["threads"]) for i, j in sorted(s.items()))


def main(t):
    tz = tlib.load_puzzle(tlib.LONG_PUZZLE)
    d = t.daemon(threads=POOL)
    S = Sampler(d)
    check_eq(d.get("/healthz").json["threads"], POOL, "daemon pool has 2 threads")

    # ---- priority --------------------------------------------------------------------------
    a = d.submit({"puzzle": tz, "options": {**tlib.LONG_OPTIONS, "unique": "raw", "priority": 0}})["id"]
    s = S.until(lambda s: s[a]["state"] == "running" and s[a]["threads"] == POOL, 30, "A running on both threads")
    check(True, "A (priority 0) alone runs on both threads: %s" % fmt(s))
    b = d.submit({"puzzle": tz, "options": {**tlib.LONG_OPTIONS, "unique": "rotations", "priority": 10}})
    check_eq(b["priority"], 10, "B's priority is 10")
    b = b["id"]
    s = S.until(lambda s: s[b]["state"] in tlib.FINAL_STATES or (s[b]["state"] == "running" and s[b]["threads"] >= 1),
                30, "B to get threads")
    check(s[b]["state"] == "running" and 1 <= s[b]["threads"] <= POOL,
          "B (priority 10) gets threads: %s" % fmt(s), fmt(s))
    samples = 0
    t_end = time.monotonic() + 1.5
    while time.monotonic() < t_end:
        s = S.snap()
        if s[b]["state"] != "running":
            break
        if s[b]["threads"] >= 1:
            samples += 1
            if not (s[a]["state"] == "queued" or s[a]["threads"] < s[b]["threads"] or s[a]["threads"] < POOL):
                raise tlib.Failure("FAIL: A not demoted while B runs: %s" % fmt(s))
        time.sleep(0.03)
    check(samples >= 5, "while B runs, A is queued or has fewer threads (%d samples)" % samples, samples)
    log("while B runs: %s" % fmt(s))
    r = d.post("/api/v1/jobs/%d/cancel" % b)
    check_eq(r.status, 200, "cancel B")
    s = S.until(lambda s: s[a]["state"] == "running" and s[a]["threads"] == POOL, 30, "A back on both threads")
    check(True, "after B is cancelled, A runs on both threads again: %s" % fmt(s))

    # ---- equal priorities share -----------------------------------------------------------
    c = d.submit({"puzzle": tz, "options": {**tlib.LONG_OPTIONS, "unique": "rotations", "priority": 0}})["id"]
    s = S.until(lambda s: s[c]["state"] in tlib.FINAL_STATES or (s[a]["threads"] == 1 and s[c]["threads"] == 1), 30,
                "A and C on one thread each")
    check(s[a]["threads"] == 1 and s[c]["threads"] == 1 and s[a]["state"] == s[c]["state"] == "running",
          "two jobs of equal priority get one thread each: %s" % fmt(s))
    steady = 0
    for _ in range(20):
        s = S.snap()
        if s[c]["state"] != "running":
            break
        if s[a]["threads"] == 1 and s[c]["threads"] == 1:
            steady += 1
        time.sleep(0.05)
    check(steady >= 15, "and keep one each (%d of 20 samples)" % steady, steady)

    # ---- options.threads = 1 caps a job -------------------------------------------------------
    for x in (a, c):
        check_eq(d.post("/api/v1/jobs/%d/cancel" % x).status, 200, "cancel job %d" % x)
    p610 = tlib.load_puzzle("pentominoes-6x10.json")
    e = d.submit({"puzzle": p610, "options": {"unique": "raw", "threads": 1, "priority": 5}})
    check_eq(e["options"]["threads"], 1, "options.threads echoed")
    e = e["id"]
    saw_running = False
    while True:
        s = S.snap()
        if s[e]["state"] == "running" and s[e]["threads"] == 1:
            saw_running = True
        if s[e]["state"] in tlib.FINAL_STATES:
            break
        time.sleep(0.02)
    check_eq(S.max_threads[e], 1, "job with options.threads=1 never had more than 1 thread (%d samples)" % S.n)
    check(saw_running, "it was seen running on 1 thread")
    check_eq(s[e]["solutions"], p610["expected"]["raw"], "capped job: published raw count")
    check(S.max_threads[a] <= POOL and S.max_threads[b] <= POOL, "no job ever had more threads than the pool")
    check_eq(d.get("/api/v1/jobs?state=running").json["jobs"], [], "nothing left running")

    # ---- engine version refusal ---------------------------------------------------------------
    f = d.submit({"puzzle": tz, "options": {**tlib.LONG_OPTIONS, "unique": "rotations"}})["id"]
    check_eq(d.post("/api/v1/jobs/%d/pause" % f).status, 200, "pause job F (unfinished, to be 'from another engine')")
    g = d.submit(tlib.puzzle_body("pentominoes-5x12.json"))["id"]
    check_eq(d.post("/api/v1/jobs/%d/pause" % g).status, 200, "pause job G (unfinished, unaffected)")
    h = d.submit(tlib.puzzle_body("pentominoes-4x15.json"))["id"]
    jh = d.wait_state(h, "completed", timeout=60)
    fj = d.job(f)
    check(fj["state"] == "paused", "F is paused", fj["state"])
    before = {x["id"]: x for x in d.list_jobs()}
    rc, _ = d.stop()
    check_eq(rc, 0, "stop: exit 0")
    con = sqlite3.connect(d.db_path)
    with con:
        n = con.execute("UPDATE jobs SET engine_version = 999 WHERE id = ?", (f,)).rowcount
    con.close()
    check_eq(n, 1, "set job F's engine_version to 999 in the store")
    d.start()
    jf = d.job(f)
    check_eq(jf["state"], "failed", "job F from engine 999 is failed at start")
    msg = jf.get("error") or ""
    check("engine" in msg.lower() and "version" in msg.lower() and "999" in msg,
          "its error names the engine version 999", msg)
    check_eq(d.get("/healthz").json["jobs"]["failed"], 1, "healthz counts one failed job")
    after = {x["id"]: x for x in d.list_jobs()}
    check_eq(sorted(after), sorted(before), "no job appeared or vanished")
    for x in before:
        if x == f:
            continue
        check_eq((after[x]["state"], after[x]["solutions"], after[x]["progress"]["nodes"]),
                 (before[x]["state"], before[x]["solutions"], before[x]["progress"]["nodes"]),
                 "job %d unaffected by the refusal" % x)
    check_eq(len(d.all_solutions(h)), jh["solutions"], "completed job H's solutions still readable")
    check_eq(d.post("/api/v1/jobs/%d/resume" % g).status, 200, "resume G")
    jg = d.wait_final(g, timeout=60)
    check_eq(jg["solutions"], tlib.expected("pentominoes-5x12.json", "rotations"), "G completes with the published count")
    time.sleep(0.3)
    check_eq(d.job(f)["state"], "failed", "F stays failed")
    r = d.delete("/api/v1/jobs/%d" % f)
    check_eq(r.status, 204, "a failed job can be deleted")


if __name__ == "__main__":
    tlib.run(main)
