#!/usr/bin/env python3
"""The daemon owns the store file itself, not a name for it, and notices when
the name stops leading to it (docs/store.md, "The claim").

  - a second tesserad (or --repair) reaching a running daemon's store through
    a symbolic link or a hard link refuses to start, names the first one's
    pid, and creates nothing beside the link; once the first is killed
    (kill -9), the same command starts;
  - the store deleted (rm tessera.db*) while a job runs: within seconds
    /healthz answers 503 "lost" naming the file, submissions and actions
    answer 503, one log line names the path and the copy saved beside it,
    reads still answer; SIGTERM exits 0; the copy, put back, resumes the job
    to the exact published count with every solution once;
  - another store moved onto the name while a job runs and the daemon killed
    at once (before it can notice): the next start moves the old write-ahead
    log aside instead of replaying it onto the new file, which stays sound
    and serves its own jobs unchanged; killed after it noticed: the same,
    and the copy of the old store is sound.
"""

import os
import signal
import sqlite3
import subprocess
import time

import tlib
from tlib import check, check_eq


def integrity(path):
    con = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    try:
        return con.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        con.close()


def refused(argv, what):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    check(p.returncode != 0, "%s: refused (exit %d)" % (what, p.returncode))
    return p.stderr


def second_names(t):
    a = t.daemon(threads=1)
    jid = a.submit(tlib.puzzle_body(tlib.LONG_PUZZLE, **tlib.LONG_OPTIONS))["id"]
    a.wait_state(jid, "running")
    d = t.tempdir()
    sym, hard = os.path.join(d, "sym.db"), os.path.join(d, "hard.db")
    os.symlink(a.db_path, sym)
    os.link(a.db_path, hard)
    for path, kind in ((sym, "a symbolic link"), (hard, "a hard link")):
        b = t.daemon(start=False, extra=["--db", path])
        err = refused(b.argv(), "a second daemon through " + kind)
        check("in use by another tesserad (pid %d)" % a.proc.pid in err,
              "through %s: the message names the first daemon's pid" % kind, err)
        err = refused([tlib.BINARY, "--repair", "--db", path], "--repair through " + kind)
        check("pid %d" % a.proc.pid in err, "--repair through %s names the pid" % kind, err)
    check_eq(sorted(os.listdir(d)), ["hard.db", "sym.db"], "nothing was created beside the links")
    check_eq(a.job(jid)["state"], "running", "the first daemon's job runs on")
    a.kill()
    b = t.daemon(start=False, extra=["--db", sym])
    b.start()
    check_eq(b.job(jid)["id"], jid, "once the first is killed, a daemon starts through the link")
    b.action(jid, "cancel")
    b.stop()


def deleted(t):
    d = t.daemon(threads=2)
    name = tlib.LONG_PUZZLE
    want = tlib.expected(name, "rotations")
    jid = d.submit(tlib.puzzle_body(name, **tlib.LONG_OPTIONS))["id"]
    d.wait_for(jid, lambda j: j["stored"] > 0 and j["state"] == "running", 30, "solutions stored")
    other = d.submit(tlib.puzzle_body("pentominoes-6x10.json", limit=1))["id"]
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(d.db_path + suffix):
            os.unlink(d.db_path + suffix)
    t0 = time.monotonic()
    while time.monotonic() - t0 < 10 * tlib.SCALE and d.get("/healthz").status != 503:
        time.sleep(0.05)
    took = time.monotonic() - t0
    r = d.get("/healthz")
    check_eq(r.status, 503, "/healthz answers 503 once the store is deleted")
    check(took < 3 * tlib.SCALE, "it noticed within seconds (%.2f s)" % took)
    h = r.json
    check_eq(h["status"], "lost", "/healthz says the store is lost")
    check(d.db_path in (h["store"]["error"] or ""), "/healthz names the store's path", h)
    copies = [f for f in os.listdir(d.state_dir) if f.startswith("tessera.db.rescued-")]
    check_eq(len(copies), 1, "one copy of the store was saved beside it")
    copy = os.path.join(d.state_dir, copies[0])
    check(copy in h["store"]["error"], "/healthz names the copy", h)
    check_eq(integrity(copy), "ok", "the copy is a sound SQLite file")
    tlib.check_error(d.post("/api/v1/jobs", tlib.puzzle_body("pentominoes-6x10.json")), 503,
                     d.db_path, what="a submission")
    tlib.check_error(d.post("/api/v1/jobs/%d/cancel" % other), 503, what="an action")
    check_eq(d.get("/api/v1/jobs/%d" % jid).status, 200, "the job is still readable")
    check_eq(d.get("/api/v1/jobs/%d/solutions?limit=5" % jid).status, 200, "its solutions too")
    time.sleep(1.0)
    check(any("is no longer the file this tesserad holds" in l and d.db_path in l and copy in l
              for l in d.stderr_lines), "one log line names the path and the copy", d.stderr_tail())
    check(not os.path.exists(d.db_path), "nothing was written under the deleted name")
    d.proc.send_signal(signal.SIGTERM)
    d.proc.wait(10 * tlib.SCALE)
    check_eq(d.proc.returncode, 0, "SIGTERM ends it cleanly")
    os.rename(copy, d.db_path)
    d.start()
    j = d.wait_final(jid, timeout=120)
    check_eq(j["solutions"], want, "the copy, put back, resumes the job to the published count")
    sols = d.all_solutions(jid)
    check_eq([s["seq"] for s in sols], list(range(1, want + 1)), "every solution once, in order")
    check_eq(len({tuple(sorted(tuple(map(tuple, p["cells"])) for p in s["pieces"])) for s in sols}), want,
             "all distinct")
    d.stop()


def other_store(t):
    """A finished store, moved onto a running daemon's name later."""
    o = t.daemon(threads=1)
    jid = o.submit(tlib.puzzle_body("pentominoes-6x10.json"))["id"]
    o.wait_final(jid)
    jobs = [(j["id"], j["name"], j["state"], j["solutions"]) for j in o.list_jobs()]
    o.stop()
    return o.db_path, jobs


def replaced(t, wait):
    src, jobs = other_store(t)
    d = t.daemon(threads=2, checkpoint=0.2)
    # the flood: 13 million solutions, so it is still storing when it is killed
    # (the 6x6's 6,728 are all stored in a tenth of a second)
    jid = d.submit(tlib.puzzle_body("dominoes-8x8.json", unique="raw"))["id"]
    d.wait_for(jid, lambda j: j["stored"] > 10000, 60, "the flood stores solutions")
    wal = os.path.getsize(d.db_path + "-wal")
    os.rename(src, d.db_path)
    if wait:
        t0 = time.monotonic()
        while time.monotonic() - t0 < 10 * tlib.SCALE and d.get("/healthz").status != 503:
            time.sleep(0.05)
        check_eq(d.get("/healthz").json["status"], "lost", "it noticed the store replaced")
        check(os.path.getsize(d.db_path + "-wal") == 0, "and emptied its write-ahead log")
    d.kill()
    what = "killed %s" % ("after it noticed" if wait else "at once")
    tlib.log("%s: the old log was %d bytes" % (what, wal))
    d.start()
    time.sleep(0.3)
    aside = [f for f in os.listdir(d.state_dir) if ".foreign-" in f]
    if not wait:
        check(len(aside) == 1, "%s: the old write-ahead log was moved aside" % what, os.listdir(d.state_dir))
        check(any("not replayed onto this file" in l for l in d.stderr_lines),
              "%s: the log says so" % what, d.stderr_tail())
    got = [(j["id"], j["name"], j["state"], j["solutions"]) for j in d.list_jobs()]
    check_eq(got, jobs, "%s: the daemon serves the moved-in store's jobs, unchanged" % what)
    d.stop()
    check_eq(integrity(d.db_path), "ok", "%s: the moved-in store is sound" % what)
    if wait:
        copies = [f for f in os.listdir(d.state_dir) if f.startswith("tessera.db.rescued-")]
        check(len(copies) == 1 and integrity(os.path.join(d.state_dir, copies[0])) == "ok",
              "%s: the copy of the old store is sound" % what, copies)


def main(t):
    second_names(t)
    deleted(t)
    replaced(t, wait=False)
    replaced(t, wait=True)


if __name__ == "__main__":
    tlib.run(main)
