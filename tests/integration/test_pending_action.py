#!/usr/bin/env python3
"""A pause or cancel that the job's runner cannot honour at once answers 202
Accepted with the job as it is, and takes effect later; a resume or a
delete meanwhile answers for itself (200, 409), never 202.

A real case: another process (here a sqlite3 connection of this test, as a
person with the sqlite3 shell might) holds the database's write lock.  The
runner must commit a checkpoint to pause or cancel, so it waits for the lock
(up to the store's 10 s busy timeout).  The daemon runs with
TESSERAD_ACTION_WAIT_MS=1000 (docs/api.md: the testing knob) so that the API
gives up waiting after 1 s instead of 15 s.  Once the lock goes, the pause
(then the cancel) is committed and the job's state shows it."""

import os
import sqlite3
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tlib  # noqa: E402
from tlib import check, check_eq, log  # noqa: E402

HOLD_S = 3.0  # the lock is held this long: past the 1 s wait, short of the 10 s busy timeout


def hold_write_lock(db_path):
    """A connection that holds the database's write lock until closed."""
    con = sqlite3.connect(db_path, isolation_level=None, timeout=10)
    con.execute("BEGIN IMMEDIATE")
    return con


def pending(d, jid, action, want_state):
    """POST action while the write lock is held: 202 with the job still
    running; once the lock goes, the job reaches want_state."""
    con = hold_write_lock(d.db_path)
    try:
        t0 = time.monotonic()
        r = d.action(jid, action, want=None)
        dt = time.monotonic() - t0
        check_eq(r.status, 202, "%s under a held write lock answers 202 Accepted" % action)
        check(1.0 <= dt < HOLD_S, "%s: the answer came after the 1 s wait, before the lock went" % action,
              "%.2f s" % dt)
        check_eq(r.json.get("id"), jid, "%s: the 202 body is the job" % action)
        check_eq(r.json.get("state"), "running", "%s: the 202 body shows the job as it is (running)" % action)
        # another request meanwhile answers for itself: 202 is only a pause's or a cancel's own
        r = d.action(jid, "resume", want=None)
        check_eq(r.status, 200, "resume while the %s is under way answers 200, not 202" % action)
        r = d.delete("/api/v1/jobs/%d" % jid)
        check_eq(r.status, 409, "delete while the %s is under way answers 409" % action)
        time.sleep(max(0.0, HOLD_S - (time.monotonic() - t0)))
        check_eq(d.job(jid)["state"], "running", "%s: nothing changes while the lock is held" % action)
    finally:
        con.rollback()
        con.close()
    j = d.wait_state(jid, want_state, timeout=10)
    log("%s took effect once the lock went: state %s, %d nodes" % (action, j["state"], j["progress"]["nodes"]))
    return j


def main(t):
    d = t.daemon(threads=2, env={"TESSERAD_ACTION_WAIT_MS": "1000"})

    jid = d.submit(tlib.puzzle_body(tlib.LONG_PUZZLE, **tlib.LONG_OPTIONS))["id"]
    d.wait_for(jid, lambda j: j["state"] == "running" and j["progress"]["nodes"] > 0, 30, "the search running")

    j = pending(d, jid, "pause", "paused")
    nodes = j["progress"]["nodes"]
    time.sleep(0.5)
    check_eq(d.job(jid)["progress"]["nodes"], nodes, "the paused job searches no more")

    check_eq(d.action(jid, "resume").status, 200, "resume answers 200")
    d.wait_for(jid, lambda j: j["state"] == "running" and j["progress"]["nodes"] > nodes, 30,
               "the search running again")
    pending(d, jid, "cancel", "cancelled")

    # the committed state is what a restart finds
    d.restart()
    check_eq(d.job(jid)["state"], "cancelled", "after a restart the job is still cancelled")

    # without the knob the wait is 15 s: a bad value is refused at start
    bad = t.daemon(start=False, env={"TESSERAD_ACTION_WAIT_MS": "10"})
    try:
        bad.start(timeout=10)
        check(False, "TESSERAD_ACTION_WAIT_MS=10 is refused at start")
    except tlib.Failure:
        bad.proc.wait(5)
        check(bad.proc.returncode == 2 and any("TESSERAD_ACTION_WAIT_MS" in line for line in bad.stderr_lines),
              "TESSERAD_ACTION_WAIT_MS=10 is refused at start (exit 2, naming it)", bad.stderr_tail())


if __name__ == "__main__":
    tlib.run(main)
