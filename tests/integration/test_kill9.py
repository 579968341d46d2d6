#!/usr/bin/env python3
"""Crash test: two tetris cube jobs on a one-thread daemon checkpointing every
0.5 s; 20 times the daemon runs a random 0.3-1.5 s and is SIGKILLed, then
restarted on the same state dir. While it is down, the SQLite file must pass
`PRAGMA integrity_check` and every job's stored solution rows must match its
stored count, numbered without gap (a checkpoint is atomic). Across restarts the recovered progress
never goes down. Finally both jobs complete with exactly the published count,
no solution twice, and the node count of an uninterrupted run."""

import os
import random
import shutil
import sqlite3
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tlib  # noqa: E402
from tlib import check, check_eq, log  # noqa: E402

KILLS = int(os.environ.get("TSR_KILLS", "5" if tlib.QUICK else "20"))


def db_checks(path, what):
    """Integrity and consistency of the store while no daemon has it open.

    Checks a copy (database + WAL), so that the daemon's own crash recovery, not
    this script's, is what the next start exercises."""
    tmp = tempfile.mkdtemp(prefix="tsr-kill9-copy-")
    copy = os.path.join(tmp, "copy.db")
    shutil.copyfile(path, copy)
    if os.path.exists(path + "-wal"):
        shutil.copyfile(path + "-wal", copy + "-wal")
    try:
        return _db_checks(copy, what)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _db_checks(path, what):
    con = sqlite3.connect(path, timeout=10)
    try:
        ic = con.execute("PRAGMA integrity_check").fetchall()
        check_eq(ic, [("ok",)], "%s: PRAGMA integrity_check" % what)
        fk = con.execute("PRAGMA foreign_key_check").fetchall()
        check_eq(fk, [], "%s: PRAGMA foreign_key_check" % what)
        # schema 2: the chunks number each job's solutions 1..stored with no
        # gap or overlap, and stored == solutions when every one is kept
        rows = con.execute("SELECT j.id, j.state, j.solutions, (SELECT coalesce(SUM(nsol), 0) FROM chunks c "
                           "WHERE c.job = j.id), j.nodes, j.fraction, j.stored FROM jobs j ORDER BY j.id").fetchall()
        gaps = con.execute("SELECT a.job, a.first FROM chunks a WHERE a.first != 1 AND NOT EXISTS (SELECT 1 FROM "
                           "chunks b WHERE b.job = a.job AND b.first + b.nsol = a.first) LIMIT 5").fetchall()
        check_eq(gaps, [], "%s: chunks numbered without gap or overlap" % what)
        for jid, state, nsol, nrows, nodes, fraction, nstored in rows:
            check_eq((nrows, nstored), (nsol, nsol), "%s: job %d (%s): chunk solutions == stored == jobs.solutions"
                     % (what, jid, state))
        return {r[0]: {"state": r[1], "solutions": r[2], "nodes": r[4], "fraction": r[5]} for r in rows}
    finally:
        con.close()


def main(t):
    seed = os.environ.get("TSR_SEED") or str(random.randrange(1 << 30))
    log("TSR_SEED=%s (set it to replay the same kill times)" % seed)
    rnd = random.Random(seed)
    tz = tlib.load_puzzle(tlib.LONG_PUZZLE)
    expect = tz["expected"]["rotations"]

    d = t.daemon(threads=1, checkpoint=0.5)
    jobs = [d.submit({"puzzle": tz, "options": {**tlib.LONG_OPTIONS, "unique": "rotations"}})["id"] for _ in range(2)]
    log("crash jobs: %s" % jobs)

    last = {j: {"solutions": 0, "nodes": 0, "fraction": 0.0} for j in jobs}
    mid_run = 0
    for k in range(1, KILLS + 1):
        run_s = rnd.uniform(0.3, 1.5)
        time.sleep(run_s)
        seen = {j: d.job(j) for j in jobs}
        d.kill()
        states = " ".join("#%d %s sol=%d nodes=%d f=%.3f" % (j, seen[j]["state"], seen[j]["solutions"],
                                                              seen[j]["progress"]["nodes"],
                                                              seen[j]["progress"]["fraction"]) for j in jobs)
        if any(seen[j]["state"] == "running" for j in jobs):
            mid_run += 1
        log("kill %2d after %.2fs: %s" % (k, run_s, states))
        stored = db_checks(d.db_path, "after kill %d" % k)
        for j in jobs:
            s = stored[j]
            check(s["solutions"] >= last[j]["solutions"] and s["nodes"] >= last[j]["nodes"]
                  and s["fraction"] >= last[j]["fraction"],
                  "after kill %d: job %d's stored progress did not go back" % (k, j), (s, last[j]))
            last[j] = s
        d.start()
        for j in jobs:
            jj = d.job(j)
            check(jj["solutions"] >= last[j]["solutions"] and jj["progress"]["nodes"] >= last[j]["nodes"],
                  "restart %d: job %d resumes from its checkpoint (solutions %d, nodes %d)"
                  % (k, j, jj["solutions"], jj["progress"]["nodes"]), (jj["progress"], last[j]))
            check(jj["state"] != "failed", "restart %d: job %d did not fail" % (k, j), jj.get("error"))
    log("%d of %d kills hit a running job" % (mid_run, KILLS))
    check(mid_run >= min(KILLS, 5), "at least 5 kills interrupted a running job", mid_run)

    done = {}
    for j in jobs:
        jj = d.wait_final(j, timeout=120)
        done[j] = jj
        check_eq(jj["state"], "completed", "job %d completes after %d kills" % (j, KILLS))
        check_eq(jj["solutions"], expect, "job %d: solutions == published rotations count" % j)
        check(jj["progress"]["fraction"] == 1, "job %d: fraction exactly 1" % j, jj["progress"])
        sols = d.all_solutions(j)
        check_eq(len(sols), expect, "job %d: solution pages hold exactly the published count" % j)
        keys = {frozenset((p["name"], frozenset(tuple(c) for c in p["cells"])) for p in s["pieces"]) for s in sols}
        check_eq(len(keys), expect, "job %d: all solutions distinct" % j)

    ref = d.submit({"puzzle": tz, "options": {**tlib.LONG_OPTIONS, "unique": "rotations"}})["id"]
    jr = d.wait_final(ref, timeout=120)
    check_eq(jr["solutions"], expect, "uninterrupted reference job: published count")
    for j in jobs:
        check_eq(done[j]["progress"]["nodes"], jr["progress"]["nodes"],
                 "job %d: nodes == nodes of the uninterrupted run" % j)

    rc, _ = d.stop()
    check_eq(rc, 0, "final SIGTERM: exit 0")
    stored = _db_checks(d.db_path, "final store (the daemon's own file, after it stopped)")
    for j in jobs + [ref]:
        check_eq(stored[j]["solutions"], expect, "final store: job %d has the published count of rows" % j)


if __name__ == "__main__":
    tlib.run(main)
