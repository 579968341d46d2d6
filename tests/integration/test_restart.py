#!/usr/bin/env python3
"""Graceful restart with exact resume: SIGTERM a daemon while a tetris cube job
runs (exit 0 within 5 s, final checkpoint), restart it on the same state dir,
and the job continues from where it stopped and completes with exactly the
published count, the same solutions and the same node count as an identical
job run without interruption. A paused job stays paused across the restart."""

import os
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tlib  # noqa: E402
from tlib import check, check_eq, log  # noqa: E402


def sol_keys(sols):
    return {frozenset((p["name"], frozenset(tuple(c) for c in p["cells"])) for p in s["pieces"]) for s in sols}


def main(t):
    d = t.daemon(threads=2)
    tz = tlib.load_puzzle(tlib.LONG_PUZZLE)
    expect = tz["expected"]["rotations"]
    p610 = tlib.load_puzzle("pentominoes-6x10.json")

    # a paused job that must stay paused across the restart
    p = d.submit({"puzzle": p610, "options": {"unique": "rotations"}})["id"]
    r = d.post("/api/v1/jobs/%d/pause" % p)
    check_eq(r.status, 200, "pause the 6x10 job")
    pj = d.job(p)
    check(pj["state"] in ("paused", "completed"), "6x10 job paused (or already done)", pj["state"])

    a = d.submit({"puzzle": tz, "options": {**tlib.LONG_OPTIONS, "unique": "rotations"}})["id"]
    d.wait_state(a, "running", timeout=30)
    # a while into the search (preparation first: slow in sanitizer builds)
    d.wait_for(a, lambda j: j["progress"]["nodes"] > 0, timeout=60, what="search progress")
    time.sleep(1.0)
    before = d.job(a)
    check_eq(before["state"], "running", "tetris job is running after 1.5 s")
    check(before["progress"]["nodes"] > 0 and before["progress"]["fraction"] < 1, "it has made some progress",
          before["progress"])
    log("before SIGTERM: %d solutions, %d nodes, fraction %.3f" % (before["solutions"], before["progress"]["nodes"],
                                                                   before["progress"]["fraction"]))
    rc, secs = d.stop(timeout=30)
    check_eq(rc, 0, "SIGTERM: exit status 0")
    check(secs < 5, "SIGTERM: exited within 5 s (%.2f s)" % secs, secs)

    d.start()
    ja = d.job(a)
    check(ja["state"] in ("running", "queued", "completed"), "after restart the job is unfinished-and-scheduled or done",
          ja["state"])
    check(ja["solutions"] >= before["solutions"], "after restart: solutions >= before the stop (final checkpoint)",
          (ja["solutions"], before["solutions"]))
    check(ja["progress"]["nodes"] >= before["progress"]["nodes"], "after restart: nodes >= before the stop",
          (ja["progress"]["nodes"], before["progress"]["nodes"]))
    check(ja["progress"]["fraction"] >= before["progress"]["fraction"], "after restart: fraction did not go down",
          (ja["progress"]["fraction"], before["progress"]["fraction"]))
    check(ja["created"] == before["created"], "created unchanged across restart")
    ja = d.wait_for(a, lambda j: j["state"] in ("running",) + tlib.FINAL_STATES, 30, "running")
    check_eq(ja["state"], "running", "the interrupted job resumes by itself (state running)")
    pj = d.job(p)
    if pj["state"] != "completed":
        check_eq(pj["state"], "paused", "the paused job is still paused after the restart")
        time.sleep(0.5)
        check_eq(d.job(p)["progress"]["nodes"], pj["progress"]["nodes"], "and it does not run")

    ja = d.wait_final(a, timeout=120)
    check_eq(ja["state"], "completed", "the resumed job completes")
    check_eq(ja["solutions"], expect, "resumed job: solutions == published rotations count")
    check(ja["progress"]["fraction"] == 1, "resumed job: fraction exactly 1", ja["progress"])
    sa = d.all_solutions(a)
    check_eq(len(sa), expect, "resumed job: stored solutions == published count")
    ka = sol_keys(sa)
    check_eq(len(ka), expect, "resumed job: no duplicate solutions")

    # the same puzzle without interruption, in the same daemon
    b = d.submit({"puzzle": tz, "options": {**tlib.LONG_OPTIONS, "unique": "rotations"}})["id"]
    jb = d.wait_final(b, timeout=120)
    check_eq(jb["state"], "completed", "uninterrupted job completes")
    check_eq(jb["solutions"], expect, "uninterrupted job: solutions == published count")
    check_eq(ja["progress"]["nodes"], jb["progress"]["nodes"],
             "resumed job visited exactly as many nodes as the uninterrupted one")
    kb = sol_keys(d.all_solutions(b))
    check(ka == kb, "resumed and uninterrupted jobs found the same set of solutions",
          "%d only in resumed, %d only in uninterrupted" % (len(ka - kb), len(kb - ka)))
    check_eq(ja.get("stats"), jb.get("stats"), "resumed and uninterrupted jobs have the same per-level stats")

    if pj["state"] != "completed":
        check_eq(d.post("/api/v1/jobs/%d/resume" % p).status, 200, "resume the paused 6x10 job")
        jp = d.wait_final(p, timeout=60)
        check_eq(jp["solutions"], p610["expected"]["rotations"], "6x10 job paused across a restart: published count")

    rc, secs = d.stop()
    check_eq(rc, 0, "final SIGTERM with no running job: exit 0")
    check(secs < 5, "final SIGTERM: exited within 5 s", secs)


if __name__ == "__main__":
    tlib.run(main)
