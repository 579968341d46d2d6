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
  - `tesserad --check` on a sound store says ok and exits 0;
  - `tesserad --repair` (docs/store.md, recovery) is refused beside a live
    daemon, and on a damaged store keeps each job's solutions before the
    damaged chunk exactly as they were, drops the rest, says so in the job's
    `error` and leaves the counts standing; the daemon then starts, serves
    the kept solutions and nothing else, and a paused job resumes and
    completes with the exact count, storing nothing under a removed
    solution's number;
  - `tesserad --repair` refuses, changing nothing, a file whose SQLite
    structure is damaged;
  - `tesserad --check` finds a store whose every check value holds but
    whose invariants do not (exit 1, naming the job), and the daemon
    refuses it: a job counted twice, as two daemons on one file leave it
    (its chunks again, numbered on from its count, with their check
    values); an unfinished job's frontier short of a task; a count moved.
"""

import hashlib
import os
import shutil
import sqlite3
import struct
import subprocess
import zlib

import tlib
from tlib import check, check_eq


def run_check(db):
    p = subprocess.run([tlib.BINARY, "--check", "--db", db], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def run_repair(db):
    p = subprocess.run([tlib.BINARY, "--repair", "--db", db], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def start_fails(d):
    """Start a daemon that must refuse; return its stderr."""
    p = subprocess.run(d.argv(), capture_output=True, text=True, timeout=60, cwd=d.state_dir)
    check(p.returncode != 0, "the daemon refused to start (exit %d)" % p.returncode)
    return p.stderr


def flip_chunk_bit(db, job, index=0):
    """Flip one bit of the job's index-th chunk, in the file's bytes (a chunk
    may run over several pages: the bit is among the 24 bytes found together).
    Returns the chunk's first solution number."""
    con = sqlite3.connect(db)
    first, data = con.execute("SELECT first, data FROM chunks WHERE job = ? ORDER BY first LIMIT 1 OFFSET ?",
                              (job, index)).fetchone()
    con.close()
    raw = bytearray(open(db, "rb").read())
    at = raw.find(data[:24])
    check(at >= 0, "found the chunk's bytes in the file")
    raw[at + 12] ^= 0x10
    with open(db, "wb") as f:
        f.write(raw)
    return first


def chunk_firsts(db, job):
    con = sqlite3.connect(db)
    rows = [r[0] for r in con.execute("SELECT first FROM chunks WHERE job = ? ORDER BY first", (job,))]
    con.close()
    return rows


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

    # --repair: the first chunk was damaged, so the job keeps no stored
    # solution, and says so; its count stands
    rc, out, err = run_repair(d.db_path)
    check_eq(rc, 0, "--repair of a damaged chunk exits 0", out + err)
    check("job %d: the chunk from solution 1 is damaged" % jid in out and out.strip().endswith("ok"),
          "--repair names what it mended and ends with the check of the result", out)
    check_eq(run_check(d.db_path)[0], 0, "--check after --repair exits 0")
    d.start()
    j = d.job(jid)
    check_eq((j["state"], j["solutions"], j["stored"]), ("completed", 2339, 0),
             "the repaired job: completed, its count stands, nothing stored")
    check("removed stored solutions 1 to 2339" in (j["error"] or ""), "the job's error says what was removed",
          j["error"])
    check_eq(d.all_solutions(jid), [], "no solution of the damaged chunk is served")
    d.stop()

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


    repair(t)
    invariants(t)


def repair(t):
    """A completed job and a paused one damaged in a later chunk, a sound
    job beside them: --repair keeps what came before the damage."""
    d = t.daemon(threads=1, checkpoint=0.1)
    six = d.submit(tlib.puzzle_body("pentominoes-6x10.json"))["id"]
    soma = d.submit(tlib.puzzle_body("soma-cube.json"))["id"]
    for jid in (six, soma):
        d.wait_final(jid)
    # the tetris cube takes seconds on one thread: paused with a few chunks
    tetris = d.submit(tlib.puzzle_body("tetris-cube.json"))["id"]
    d.wait_for(tetris, lambda j: len(chunk_firsts(d.db_path, tetris)) >= 3, what="three chunks stored",
               interval=0.02)
    d.action(tetris, "pause", want=None)
    before = {jid: d.all_solutions(d.wait_for(jid, lambda j: j["state"] in ("paused", "completed"))["id"])
              for jid in (six, soma, tetris)}
    check_eq(d.job(tetris)["state"], "paused", "the tetris cube job is paused, unfinished")
    rc, _, err = run_repair(d.db_path)
    check(rc == 2 and "in use by another tesserad (pid %d)" % d.proc.pid in err,
          "--repair beside a live daemon is refused by its claim", err)
    d.stop()
    check(len(chunk_firsts(d.db_path, six)) >= 2 and len(chunk_firsts(d.db_path, tetris)) >= 3,
          "several chunks to damage one of",
          (chunk_firsts(d.db_path, six), chunk_firsts(d.db_path, tetris)))
    cut6 = flip_chunk_bit(d.db_path, six, 1)
    cutt = flip_chunk_bit(d.db_path, tetris, 1)
    rc, out, _ = run_check(d.db_path)
    check_eq(rc, 1, "--check on the damaged store exits 1")

    rc, out, err = run_repair(d.db_path)
    check_eq(rc, 0, "--repair exits 0", out + err)
    for jid, cut in ((six, cut6), (tetris, cutt)):
        check("job %d: the chunk from solution %d is damaged" % (jid, cut) in out and
              "keeps solutions 1 to %d" % (cut - 1) in out, "--repair reports job %d" % jid, out)
    check("repaired: 2 jobs" in out and "job %d:" % soma not in out, "--repair leaves the sound job alone", out)
    check_eq(run_check(d.db_path)[0], 0, "--check after --repair exits 0")

    d.checkpoint = None  # the default period: the resumed search runs at full speed
    d.start()
    j = d.job(six)
    check_eq((j["state"], j["solutions"], j["stored"]), ("completed", 2339, cut6 - 1),
             "the completed job keeps its count and the solutions before the damage")
    check("removed stored solutions %d to 2339" % cut6 in (j["error"] or ""), "its error says so", j["error"])
    check(d.all_solutions(six) == before[six][:cut6 - 1], "it serves exactly the solutions it had before the damage")
    j = d.job(soma)
    check(j["error"] is None and d.all_solutions(soma) == before[soma], "the sound job is as it was")

    kept = cutt - 1
    j = d.job(tetris)
    check_eq((j["state"], j["stored"], j["options"].get("store")), ("paused", kept, kept),
             "the paused job: still paused, stores no more than it keeps")
    check("options.store is now %d" % kept in (j["error"] or ""), "its error says why", j["error"])
    check(d.all_solutions(tetris) == before[tetris][:kept], "it serves exactly its solutions before the damage")
    d.action(tetris, "resume")
    j = d.wait_final(tetris, timeout=300)
    check_eq((j["state"], j["solutions"], j["stored"]),
             ("completed", tlib.expected("tetris-cube.json", "rotations"), kept),
             "resumed after the repair: the exact count, nothing stored past the kept solutions")
    check(d.all_solutions(tetris) == before[tetris][:kept], "no solution number was given to another solution")
    d.stop()
    d.start()
    check("removed stored solutions" in (d.job(tetris)["error"] or ""),
          "the note outlives resume, completion and a restart", d.job(tetris)["error"])
    d.stop()

    # structure damage is not --repair's to mend: refused, the file unchanged
    con = sqlite3.connect(d.db_path)
    con.execute("PRAGMA writable_schema = ON")
    con.execute("UPDATE sqlite_master SET sql = 'CREATE UNIQUE INDEX chunks_first ON chunks (job, nsol, first)' "
                "WHERE name = 'chunks_first'")
    con.commit()
    con.close()
    sha = digest(d.db_path)
    rc, out, err = run_repair(d.db_path)
    check(rc == 1 and "missing from index chunks_first" in out and ".recover" in out,
          "--repair refuses a damaged structure and points at the salvage", out + err)
    check_eq(digest(d.db_path), sha, "the refused file is unchanged")

    # ... nor a page SQLite cannot read at all (the frontier's root page
    # garbled): damage for --check (exit 1, not "unreadable"), refused by
    # --repair with the file unchanged
    con = sqlite3.connect(d.db_path)
    page = con.execute("PRAGMA page_size").fetchone()[0]
    root = con.execute("SELECT rootpage FROM sqlite_master WHERE name = 'frontier'").fetchone()[0]
    con.close()
    with open(d.db_path, "r+b") as f:
        f.seek((root - 1) * page)
        f.write(b"\xab" * 8)
    sha = digest(d.db_path)
    rc, out, _ = run_check(d.db_path)
    check(rc == 1 and "could not go on" in out, "--check: a malformed page is damage, exit 1", out)
    rc, out, err = run_repair(d.db_path)
    check(rc == 1 and "structure is damaged" in out, "--repair refuses a malformed page", out + err)
    check_eq(digest(d.db_path), sha, "the refused file is unchanged")


def chunk_crc(job, first, data):
    """A chunk's check value, as the store computes it (store.c, chunk_crc)."""
    return zlib.crc32(data, zlib.crc32(struct.pack("<qq", job, first)))


def invariants(t):
    """Stores whose every check value holds but whose invariants do not."""
    d = t.daemon(threads=1, checkpoint=0.2)
    six = d.submit(tlib.puzzle_body("pentominoes-6x10.json"))["id"]
    d.wait_final(six)
    tetris = d.submit(tlib.puzzle_body("tetris-cube.json"))["id"]
    d.wait_for(tetris, lambda j: j["progress"]["fraction"] > 0.05 and j["stored"] > 0, what="some progress")
    d.action(tetris, "pause")
    d.wait_state(tetris, "paused")
    d.stop()
    rc, out, err = run_check(d.db_path)
    check_eq(rc, 0, "the store before: --check exits 0", out + err)

    def variant(name, sql_of):
        """A copy of the store changed by sql_of(con); its --check."""
        v = t.daemon(start=False, threads=1)
        shutil.copyfile(d.db_path, v.db_path)
        con = sqlite3.connect(v.db_path)
        sql_of(con)
        con.commit()
        con.close()
        rc, out, err = run_check(v.db_path)
        check_eq(rc, 1, "%s: --check exits 1" % name, out + err)
        return v, out

    def doubled(con):
        # what a second daemon on the same file adds: the same classes,
        # numbered on from the count it reads, with their check values
        stored, = con.execute("SELECT stored FROM jobs WHERE id = ?", (six,)).fetchone()
        rows = con.execute("SELECT first, nsol, nclass, data FROM chunks WHERE job = ? ORDER BY first",
                           (six,)).fetchall()
        for first, nsol, nclass, data in rows:
            con.execute("INSERT INTO chunks VALUES (?, ?, ?, ?, ?, ?)",
                        (six, first + stored, nsol, nclass, data, chunk_crc(six, first + stored, data)))
        con.execute("UPDATE jobs SET stored = 2 * stored, solutions = 2 * solutions WHERE id = ?", (six,))

    v, out = variant("a job counted twice", doubled)
    check("job %d: 2339 classes are stored more than once" % six in out,
          "--check names the job counted twice", out)
    err = start_fails(v)
    check("is damaged" in err and "stored more than once" in err, "the daemon refuses it, saying why", err)

    def lost_task(con):  # the heaviest: a light one may weigh less than the check's rounding, 1e-6
        con.execute("DELETE FROM frontier WHERE job = ? AND seq = (SELECT seq FROM frontier WHERE job = ? "
                    "ORDER BY weight DESC LIMIT 1)", (tetris, tetris))

    v, out = variant("a frontier short of a task", lost_task)
    check("job %d: its frontier weighs" % tetris in out and "not 1" in out,
          "--check names the job whose frontier lost a task", out)
    err = start_fails(v)
    check("is damaged" in err and "job %d: " % tetris in err, "the daemon refuses it, naming the job", err)

    v, out = variant("a count moved", lambda con: con.execute(
        "UPDATE jobs SET solutions = solutions + 64 WHERE id = ?", (six,)))
    check("job %d: 2339 of its 2403 solutions stored, where its options.store keeps 2403" % six in out,
          "--check names the job whose count no longer matches what it stores", out)
    start_fails(v)


if __name__ == "__main__":
    tlib.run(main)
