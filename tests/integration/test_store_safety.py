#!/usr/bin/env python3
"""The store is this daemon's, and damage is found, never served (docs/store.md).

  - a second tesserad on the same database refuses to start and names the
    first one's pid; the claim dies with its holder (kill -9 included);
  - an existing empty file is not taken for a new store;
  - one bit flipped in a stored solution chunk (on disk, as a failing disk
    would) is caught: `tesserad --check` reports the job and the solution
    number and exits 1, the daemon refuses to start on it, and a chunk
    damaged while the daemon runs is answered as an error naming the job
    and position, never served as a solution;
  - `tesserad --check` on a sound store says ok and exits 0.
"""

import os
import sqlite3
import subprocess

import tlib
from tlib import check, check_eq


def run_check(db):
    p = subprocess.run([tlib.BINARY, "--check", "--db", db], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def start_fails(d):
    """Start a daemon that must refuse; return its stderr."""
    p = subprocess.run(d.argv(), capture_output=True, text=True, timeout=60, cwd=d.state_dir)
    check(p.returncode != 0, "the daemon refused to start (exit %d)" % p.returncode)
    return p.stderr


def flip_chunk_bit(db, job):
    """Flip one bit of the job's first chunk, in the file's bytes (a chunk may
    run over several pages: the bit is among the 24 bytes found together)."""
    con = sqlite3.connect(db)
    data = con.execute("SELECT data FROM chunks WHERE job = ? ORDER BY first LIMIT 1", (job,)).fetchone()[0]
    con.close()
    raw = bytearray(open(db, "rb").read())
    at = raw.find(data[:24])
    check(at >= 0, "found the chunk's bytes in the file")
    raw[at + 12] ^= 0x10
    with open(db, "wb") as f:
        f.write(raw)


def main(t):
    d = t.daemon(threads=2)
    # a finished job with solutions, and the WAL folded into the file
    jid = d.submit(tlib.puzzle_body("pentominoes-6x10.json"))["id"]
    d.wait_final(jid)
    check_eq(d.job(jid)["solutions"], tlib.expected("pentominoes-6x10.json", "rotations"), "6x10 count")

    # two daemons on one database
    second = tlib.Daemon(state_dir=d.state_dir, threads=1)
    err = start_fails(second)
    check("in use by another tesserad (pid %d)" % d.proc.pid in err,
          "the second daemon names the first one's pid", err)
    check_eq(d.get("/healthz").status, 200, "the first daemon is untouched")

    # the claim dies with its holder
    d.kill()
    d.start()
    check_eq(d.job(jid)["state"], "completed", "after kill -9 the daemon starts again on its store")
    rc, _ = d.stop()
    check_eq(rc, 0, "clean stop")

    rc, out, err = run_check(d.db_path)
    check_eq(rc, 0, "--check on a sound store exits 0")
    check(out.strip().endswith("ok"), "--check says ok", out)

    # one bit flipped on disk in a stored chunk
    flip_chunk_bit(d.db_path, jid)
    rc, out, err = run_check(d.db_path)
    check_eq(rc, 1, "--check on the damaged store exits 1")
    check("job %d: the chunk from solution 1 is damaged" % jid in out,
          "--check names the job and the solution number", out)
    err = start_fails(d)
    check("is damaged" in err and "--check" in err, "the daemon refuses the damaged store and says why", err)

    # an existing empty file is not a new store
    empty = os.path.join(t.tempdir(), "empty.db")
    open(empty, "w").close()
    e = tlib.Daemon(threads=1, extra=["--db", empty])
    err = start_fails(e)
    check("empty (0 bytes)" in err, "an empty file is refused, not initialised", err)
    check_eq(os.path.getsize(empty), 0, "the empty file is left as it was")

    # damage while the daemon runs: an error naming the job and position
    d2 = t.daemon(threads=2)
    jid = d2.submit(tlib.puzzle_body("soma-cube.json"))["id"]
    d2.wait_final(jid)
    con = sqlite3.connect(d2.db_path, timeout=10)
    row = con.execute("SELECT first, data FROM chunks WHERE job = ? ORDER BY first LIMIT 1", (jid,)).fetchone()
    bad = bytearray(row[1])
    bad[len(bad) // 2] ^= 0x01
    con.execute("UPDATE chunks SET data = ? WHERE job = ? AND first = ?", (bytes(bad), jid, row[0]))
    con.commit()
    con.close()
    r = d2.get("/api/v1/jobs/%d/solutions?limit=5" % jid)
    check(r.status >= 500, "a damaged chunk is not served as solutions (status %d)" % r.status)
    msg = r.json["error"]["message"] if r.json else r.text
    check("job %d" % jid in msg and "solution %d" % row[0] in msg and "damaged" in msg,
          "the error names the job and the position", msg)


if __name__ == "__main__":
    tlib.run(main)
