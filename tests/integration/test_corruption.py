#!/usr/bin/env python3
"""A damaged store is refused or checked, never a crash, never served wrong.

Real stores are damaged in many ways and tesserad must meet each one with a
documented answer (docs/store.md, "Damage is found, never served").  This
harness makes real stores, damages copies of them and runs on every variant:

  tesserad --check   exit 0 sound, 1 damaged, 2 unreadable;
  tesserad --repair  exit 0 sound after, 1 not (or refused), 2 cannot run;
                     when it says 0, --check must then say 0 too;
  tesserad --db F    (start-up) either listens or exits 1, refusing the
                     store; when it listens, what it serves must be what
                     the undamaged store held: the same jobs, and for each
                     job in a final state the same state and counts
                     (solutions found and stored) and the same solutions;
                     a job that was unfinished may have run on, its counts
                     only growing.  An error answer (a damaged chunk found
                     when read) is not a wrong answer.  SIGTERM then ends
                     it with exit 0.

Never a signal (SIGBUS, SIGSEGV, an abort), never another exit status, and
in a sanitizer build (TESSERAD pointing at one) never a sanitizer report.

The stores (made here, by the daemon):
  clean   a stopped daemon's store (the write-ahead log folded in): two
          completed jobs, a paused one with a frontier, all storing every
          solution (see below); about 150 KB;
  wal     a copy run on and killed with kill -9: one more completed job
          and the paused one resumed and paused again, in a non-empty
          -wal with its -shm;
  donor   another store, killed before any WAL checkpoint: its -wal holds
          every commit since its schema was made.
What a store "held" is each state SQLite can read from it after a whole
commit: the -wal cut after each commit frame (a log damaged or cut loses
its last commits, as a crash does), or left out (a log SQLite cannot read
at all); for a -wal taken from another store, the states of that store.
These are read with Python's sqlite3 from the undamaged files, so damage
never makes its own reference.

The damage, drawn from a seeded generator: the file cut at many offsets
(page boundaries and not); a page zeroed; bits flipped anywhere, or in the
pages of one table or index (jobs, frontier, chunks, their indexes, the
schema); bytes overwritten with garbage; a byte of the 100-byte header set
to an edge value (0, 1, 2, 127, 128, 254, 255, one bit off, random); for
the wal store, the -wal cut, its bits flipped, a frame zeroed, its header
garbled, the db file damaged under it; the -wal of the donor beside a
store; the -shm missing, garbled or the donor's.  The first variants are
one of each kind, with the two the issue reported (page 20 zeroed, byte 20
at 0xff); the rest are drawn at random.

Not covered, by design: a job that keeps fewer solutions than it finds
(options.store "none" or N) has nothing that repeats its found count, so
one bit flipped there is not detectable without a check value on the job
row; the jobs here store all they find.  Likewise a task's image ids carry
no check value: a bit flipped there would resume the paused job on another
subtree.  Neither is served at start-up; both are said in docs/store.md.

Environment: TSR_CORRUPTION_VARIANTS (default 60; `make check-corruption`
runs 1000), TSR_SEED (the generator's seed, printed), TSR_CORRUPTION_ONLY=i
(run variant i alone), TSR_CORRUPTION_STORES=DIR (the stores: read from
DIR when they are there, else made and kept there).  The same seed on the
same stores makes the same variants; a failure keeps the stores and
prints the three settings that replay it.
"""

import collections
import os
import random
import re
import shutil
import signal
import sqlite3
import struct
import subprocess
import tempfile
import threading
import time

import tlib
from tlib import check, log

VARIANTS = int(os.environ.get("TSR_CORRUPTION_VARIANTS") or 60)
ONLY = os.environ.get("TSR_CORRUPTION_ONLY")
SEED = int(os.environ.get("TSR_SEED") or random.randrange(1, 1 << 31))
PAGE = 4096
SAMPLE = 20  # solutions a page, in the samples compared
FINAL = ("completed", "cancelled", "failed")
DB, WAL, SHM = "tessera.db", "tessera.db-wal", "tessera.db-shm"


# ---- the stores ------------------------------------------------------------

class Store:
    """A store's files (name -> bytes; a missing file is absent) and what it
    held: its states (a list of {job id: (state, solutions, stored)}) and
    the solutions its daemon served for each final job."""

    def __init__(self, name, files):
        self.name = name
        self.files = files
        self.states = []
        self.solutions = {}
        self.pages = {}  # page number -> table or index name (db file pages)


def read_files(dirname):
    out = {}
    for suffix, name in (("", DB), ("-wal", WAL), ("-shm", SHM)):
        path = os.path.join(dirname, DB + suffix)
        if os.path.exists(path):
            with open(path, "rb") as f:
                out[name] = f.read()
    return out


def write_files(dirname, files):
    os.makedirs(dirname, exist_ok=True)
    for name, data in files.items():
        if data is not None:
            with open(os.path.join(dirname, name), "wb") as f:
                f.write(data)


def job_rows(dirname):
    """{id: (state, solutions, stored)} as SQLite reads the store in dirname
    (which it may change: a copy)."""
    con = sqlite3.connect(os.path.join(dirname, DB))
    try:
        return {r[0]: (r[1], r[2], r[3]) for r in
                con.execute("SELECT id, state, solutions, stored FROM jobs ORDER BY id")}
    finally:
        con.close()


def wal_commit_ends(wal):
    """The offsets just after each commit frame of a write-ahead log."""
    if wal is None or len(wal) < 32:
        return []
    page_size = struct.unpack(">I", wal[8:12])[0]
    frame = 24 + page_size
    ends, off = [], 32
    while off + frame <= len(wal):
        if struct.unpack(">I", wal[off + 4:off + 8])[0] != 0:
            ends.append(off + frame)
        off += frame
    return ends


def states_of(db, wal, scratch):
    """Every state SQLite can read from db with a prefix of wal (none of it,
    and cut after each commit) that has jobs: a store with none never
    served any, so serving none is never right here."""
    out = []
    cuts = [0] + wal_commit_ends(wal)
    for n, cut in enumerate(cuts):
        d = os.path.join(scratch, "state-%d" % n)
        write_files(d, {DB: db, WAL: wal[:cut] if cut else None})
        try:
            rows = job_rows(d)
        except sqlite3.OperationalError:  # before the schema was made
            rows = {}
        if rows and rows not in out:
            out.append(rows)
        shutil.rmtree(d)
    return out


def page_owners(db, scratch):
    """Page number -> the table or index it belongs to (SQLite's dbstat)."""
    d = os.path.join(scratch, "pages")
    write_files(d, {DB: db})
    con = sqlite3.connect(os.path.join(d, DB))
    try:
        owners = {pageno: name for name, pageno in con.execute("SELECT name, pageno FROM dbstat")}
    except sqlite3.OperationalError:  # a SQLite without dbstat: flips go anywhere
        owners = {}
    con.close()
    shutil.rmtree(d)
    return owners


def sampled_solutions(host, port, jid, stored):
    """Pages of SAMPLE solutions of a job at its start, a third and two
    thirds in, and its end (every chunk of the jobs here is read; serving
    all of them would take most of the harness's time): [(after, page)],
    or the error answer."""
    out = []
    end = max(0, stored - SAMPLE)
    for after in sorted({0, stored // 3, 2 * stored // 3, end}):
        # the last one asks for one more: the list must end at `stored`
        r = tlib.http_request(host, port, "GET", "/api/v1/jobs/%d/solutions?after=%d&limit=%d"
                              % (jid, after, SAMPLE + (after == end)), timeout=30)
        if r.status != 200:
            return out, "%d %s" % (r.status, r.text[:200])
        out.append((after, r.json["solutions"], r.json["next"]))
    return out, None


def served_solutions(host, port, jid):
    """Every solution the daemon serves for a job, or the error answer."""
    out, after = [], 0
    while True:
        r = tlib.http_request(host, port, "GET", "/api/v1/jobs/%d/solutions?after=%d&limit=1000" % (jid, after),
                              timeout=30)
        if r.status != 200:
            return out, "%d %s" % (r.status, r.text[:200])
        out += r.json["solutions"]
        if r.json["next"] is None:
            return out, None
        after = r.json["next"]


def make_stores(t):
    """The clean, wal and donor stores: made by daemons, or read from
    $TSR_CORRUPTION_STORES when they were kept there (the paused job's
    progress depends on timing, so a replay needs the same stores); with
    what each held."""
    scratch = t.tempdir()
    kept = os.environ.get("TSR_CORRUPTION_STORES")
    if kept and all(os.path.exists(os.path.join(kept, n, DB)) for n in ("clean", "wal", "donor")):
        log("the stores kept in %s" % kept)
        stores = [Store(n, read_files(os.path.join(kept, n))) for n in ("clean", "wal", "donor")]
    else:
        stores = make_files(t)
        if kept:
            for s in stores:
                write_files(os.path.join(kept, s.name), s.files)
    for s in stores:
        describe(t, s, scratch)
    return stores


def make_files(t):
    """The three stores' files, made by daemons."""
    d = t.daemon(threads=2, checkpoint=0.3)
    for name in ("soma-cube.json", "pentominoes-6x10.json"):
        d.wait_final(d.submit(tlib.puzzle_body(name))["id"])
    tetris = d.submit(tlib.puzzle_body("tetris-cube.json"))["id"]
    d.wait_for(tetris, lambda j: j["stored"] > 0 and j["progress"]["fraction"] > 0.02, what="a checkpoint")
    d.action(tetris, "pause")
    d.wait_state(tetris, "paused")
    d.stop()
    clean = Store("clean", read_files(d.state_dir))
    check(WAL not in clean.files or not clean.files[WAL], "clean: no write-ahead log left")

    # the same store run on, killed: its last commits only in the -wal
    w = t.daemon(threads=2, checkpoint=0.3, start=False)
    write_files(w.state_dir, clean.files)
    w.start()
    w.wait_final(w.submit(tlib.puzzle_body("pentominoes-5x12.json"))["id"])
    w.action(tetris, "resume")
    base = w.job(tetris)["progress"]["fraction"]
    w.wait_for(tetris, lambda j: j["progress"]["fraction"] > base, what="a checkpoint after resuming")
    w.action(tetris, "pause")
    w.wait_state(tetris, "paused")
    w.kill()
    wal = Store("wal", read_files(w.state_dir))
    check(len(wal.files.get(WAL, b"")) > 0 and SHM in wal.files, "wal: commits in the -wal, and its -shm")

    # another store whose -wal holds all of it
    o = t.daemon(threads=1)
    o.wait_final(o.submit(tlib.puzzle_body("soma-cube.json", unique="mirror"))["id"])
    o.kill()
    donor = Store("donor", read_files(o.state_dir))
    # (the claim creates a new store's schema before the daemon opens it, so
    # the schema is in the file and the job's commits in the log)
    check(len(donor.files.get(WAL, b"")) > 0,
          "donor: its commits are in its -wal (%d bytes of file, %d of log)"
          % (len(donor.files[DB]), len(donor.files.get(WAL, b""))))

    return clean, wal, donor


def describe(t, s, scratch):
    """What store s held: its states, and the solutions a daemon serves
    from it undamaged (its last state exactly) for each final job."""
    s.states = states_of(s.files[DB], s.files.get(WAL), scratch)
    s.pages = page_owners(s.files[DB], scratch)
    v = t.daemon(threads=1, start=False)
    write_files(v.state_dir, s.files)
    v.start()
    jobs = {j["id"]: (j["state"], j["solutions"], j["stored"]) for j in v.list_jobs()}
    check(jobs == s.states[-1], "%s: the daemon serves the store's last state" % s.name, (jobs, s.states[-1]))
    for jid, (state, _, _) in jobs.items():
        if state in FINAL:
            s.solutions[jid], error = served_solutions(v.host, v.port, jid)
            check(error is None, "%s: job %d's solutions are served" % (s.name, jid), error)
    v.stop()
    log("%s: %s; %d states; %s" % (s.name, ", ".join("%s %d bytes" % (k, len(b)) for k, b in s.files.items()),
                                   len(s.states), s.states[-1]))


# ---- the damage ------------------------------------------------------------

def flip(data, rng, offsets):
    b = bytearray(data)
    for off in offsets:
        b[off] ^= 1 << rng.randrange(8)
    return bytes(b)


def damage(kind, rng, clean, wal, donor):
    """A damaged copy of a store: (description, files, the store whose
    states are the reference, or a list of them)."""
    if kind == "page 20 zeroed":
        db = clean.files[DB]
        return "page 20 of %d zeroed" % (len(db) // PAGE), {DB: db[:19 * PAGE] + bytes(PAGE) + db[20 * PAGE:]}, clean
    if kind == "byte 20 at 0xff":
        db = bytearray(clean.files[DB])
        db[20] = 0xff
        return "header byte 20 (reserved bytes per page) at 255", {DB: bytes(db)}, clean
    base = rng.choice((clean, wal)) if kind in ("truncate", "zero page", "flip", "garble", "header") else wal
    files = dict(base.files)
    db = files[DB]
    if kind == "truncate":
        n = rng.randrange(len(db) // PAGE) * PAGE if rng.random() < 0.5 else rng.randrange(len(db))
        files[DB] = db[:n]
        return "%s: cut to %d of %d bytes" % (base.name, n, len(db)), files, base
    if kind == "zero page":
        p = rng.randrange(len(db) // PAGE)
        files[DB] = db[:p * PAGE] + bytes(PAGE) + db[(p + 1) * PAGE:]
        return "%s: page %d (%s) zeroed" % (base.name, p + 1, base.pages.get(p + 1, "?")), files, base
    if kind == "flip":
        owners = sorted(set(base.pages.values()))
        k = rng.choice((1, 1, 1, 2, 3, 8))
        if owners and rng.random() < 0.6:
            owner = rng.choice(owners)
            pages = [p for p, o in base.pages.items() if o == owner]
            offs = [(rng.choice(pages) - 1) * PAGE + rng.randrange(PAGE) for _ in range(k)]
            where = "in %s" % owner
        else:
            offs = [rng.randrange(len(db)) for _ in range(k)]
            where = "anywhere"
        files[DB] = flip(db, rng, offs)
        return "%s: %d bit%s flipped %s at %s" % (base.name, k, "s" if k > 1 else "", where, offs), files, base
    if kind == "garble":
        off, n = rng.randrange(len(db)), rng.randrange(1, 65)
        files[DB] = db[:off] + bytes(rng.randrange(256) for _ in range(n)) + db[off + n:]
        return "%s: %d bytes at %d overwritten with garbage" % (base.name, n, off), files, base
    if kind == "header":
        at = rng.randrange(100)
        value = rng.choice((0, 1, 2, 0x7f, 0x80, 0xfe, 0xff, db[at] ^ 1, db[at] ^ 0x80, rng.randrange(256)))
        b = bytearray(db)
        b[at] = value
        files[DB] = bytes(b)
        return "%s: header byte %d from %d to %d" % (base.name, at, db[at], value), files, base
    w = files[WAL]
    if kind == "wal cut":
        n = rng.randrange(len(w))
        files[WAL] = w[:n]
        return "wal: -wal cut to %d of %d bytes" % (n, len(w)), files, base
    if kind == "wal flip":
        k = rng.choice((1, 1, 2, 8))
        offs = [rng.randrange(len(w)) for _ in range(k)]
        files[WAL] = flip(w, rng, offs)
        return "wal: %d bits of the -wal flipped at %s" % (k, offs), files, base
    if kind == "wal frame zeroed":
        frames = (len(w) - 32) // (24 + PAGE)
        f = rng.randrange(frames)
        at = 32 + f * (24 + PAGE)
        files[WAL] = w[:at] + bytes(24 + PAGE) + w[at + 24 + PAGE:]
        return "wal: frame %d of %d zeroed" % (f, frames), files, base
    if kind == "wal header":
        off, n = rng.randrange(32), rng.randrange(1, 9)
        files[WAL] = w[:off] + bytes(rng.randrange(256) for _ in range(n)) + w[off + n:]
        return "wal: %d bytes of the -wal's header at %d garbled" % (n, off), files, base
    if kind == "db damaged under its wal":
        offs = [rng.randrange(len(db)) for _ in range(rng.choice((1, 2, 8)))]
        files[DB] = flip(db, rng, offs)
        return "wal: bits of the db file flipped at %s" % offs, files, base
    if kind == "foreign wal":
        target = rng.choice((clean, wal))
        files = dict(target.files)
        files[WAL] = donor.files[WAL]
        files[SHM] = donor.files.get(SHM) if rng.random() < 0.5 else None
        # the file's own state (a log it cannot use) or the donor's
        return ("%s: the donor's -wal beside it (%s -shm)" % (target.name, "the donor's" if files[SHM] else "no"),
                files, [target, donor])
    if kind == "shm missing":
        files[SHM] = None
        return "wal: no -shm", files, base
    if kind == "shm garbled":
        shm = files[SHM]
        how = rng.choice(("random", "flip", "zero", "donor", "cut"))
        if how == "random":
            files[SHM] = bytes(rng.randrange(256) for _ in range(len(shm)))
        elif how == "flip":
            files[SHM] = flip(shm, rng, [rng.randrange(len(shm)) for _ in range(rng.choice((1, 4, 32)))])
        elif how == "zero":
            files[SHM] = bytes(len(shm))
        elif how == "donor":
            files[SHM] = donor.files[SHM]
        else:
            files[SHM] = shm[:rng.randrange(len(shm))]
        return "wal: -shm %s" % how, files, base
    raise AssertionError(kind)


KINDS = ("truncate", "zero page", "flip", "garble", "header", "wal cut", "wal flip", "wal frame zeroed",
         "wal header", "db damaged under its wal", "foreign wal", "shm missing", "shm garbled")
# how often each kind is drawn after the first round
WEIGHTS = {"truncate": 3, "zero page": 3, "flip": 6, "garble": 2, "header": 4, "wal cut": 2, "wal flip": 2,
           "wal frame zeroed": 1, "wal header": 1, "db damaged under its wal": 2, "foreign wal": 1,
           "shm missing": 1, "shm garbled": 1}


def plan(n, rng):
    """The kinds of the n variants: the issue's two, one of each kind, then
    drawn by weight."""
    kinds = ["page 20 zeroed", "byte 20 at 0xff"] + list(KINDS)
    pool = [k for k in KINDS for _ in range(WEIGHTS[k])]
    while len(kinds) < n:
        kinds.append(rng.choice(pool))
    return kinds[:n]


# ---- running tesserad on a variant -------------------------------------------

def sanitizer_lines(text):
    return [line for line in text.splitlines() if any(m in line for m in tlib.SANITIZER_MARKS)]


def run_tool(args, problems, what):
    """--check or --repair: its exit status, or None after a problem."""
    try:
        p = subprocess.run([tlib.BINARY] + args, capture_output=True, timeout=120 * tlib.SCALE)
    except subprocess.TimeoutExpired:
        problems.append("%s did not end within %d s" % (what, 120 * tlib.SCALE))
        return None
    try:  # the report is text, whatever bytes of the damaged file it quotes
        p.stdout = p.stdout.decode("utf-8")
    except UnicodeDecodeError as e:
        problems.append("%s: its report is not UTF-8 (%s): %r" % (what, e, p.stdout[-500:]))
        p.stdout = p.stdout.decode("utf-8", "replace")
    p.stderr = p.stderr.decode("utf-8", "replace")
    if p.returncode < 0:
        problems.append("%s was killed by signal %d (%s)\n%s" % (what, -p.returncode, signal.Signals(-p.returncode).name,
                                                               (p.stdout + p.stderr)[-2000:]))
        return None
    if sanitizer_lines(p.stderr):
        problems.append("%s: sanitizer report:\n%s" % (what, p.stderr[-4000:]))
    if p.returncode not in (0, 1, 2):
        problems.append("%s exited %d, not 0, 1 or 2:\n%s" % (what, p.returncode, (p.stdout + p.stderr)[-2000:]))
        return None
    return p.returncode


def served_matches(jobs, refs):
    """Whether the served jobs are one state of the reference stores: the
    same ids; final jobs exactly; unfinished ones only grown.  Returns the
    store and state matched, or None."""
    for store in refs:
        for state in store.states:
            if set(jobs) != set(state):
                continue
            ok = True
            for jid, (st, found, stored) in state.items():
                got = jobs[jid]
                if st in FINAL:
                    ok &= got == (st, found, stored)
                else:
                    ok &= got[1] >= found and got[2] >= stored
            if ok:
                return store, state
    return None


def start_up(dirname, refs, problems):
    """Start tesserad on the store in dirname: "refused", or "served" after
    comparing what it serves with the references, or None after a problem."""
    argv = [tlib.BINARY, "--db", os.path.join(dirname, DB), "--listen", "127.0.0.1:0", "--threads", "1",
            "--puzzles", tlib.PUZZLES, "--www", dirname, "--checkpoint-seconds", "60"]
    env = {k: v for k, v in os.environ.items() if k not in ("TESSERAD_TOKEN", "STATE_DIRECTORY", "NOTIFY_SOCKET")}
    p = subprocess.Popen(argv, cwd=dirname, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True, errors="replace")
    lines, port = [], []
    listening = threading.Event()

    def reader():
        for line in p.stderr:
            lines.append(line.rstrip("\n"))
            m = re.search(r"listening on \S+ \(port (\d+)\)", line)
            if m and not port:
                port.append(int(m.group(1)))
                listening.set()
        listening.set()

    th = threading.Thread(target=reader, daemon=True)
    th.start()
    outcome = None
    try:
        if not listening.wait(60 * tlib.SCALE):
            problems.append("start-up: neither listening nor exited within %d s" % (60 * tlib.SCALE))
            return None
        if not port:
            rc = p.wait(30)
            th.join(5)
            text = "\n".join(lines)
            if rc < 0:
                problems.append("start-up: killed by signal %d (%s)\n%s" % (-rc, signal.Signals(-rc).name, text[-2000:]))
            elif rc != 1:
                problems.append("start-up: exited %d, not 1 (refused)\n%s" % (rc, text[-2000:]))
            else:
                outcome = "refused"
            return outcome
        outcome = compare_served("127.0.0.1", port[0], refs, problems)
        return outcome
    except (OSError, tlib.Failure, ValueError) as e:
        problems.append("start-up: %s: %s" % (type(e).__name__, e))
        return None
    finally:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                rc = p.wait(30 * tlib.SCALE)
                if outcome is not None and rc != 0:
                    problems.append("start-up: SIGTERM ended it with %d, not 0" % rc)
                    outcome = None
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
                problems.append("start-up: SIGTERM did not end it within %d s" % (30 * tlib.SCALE))
        th.join(5)
        if sanitizer_lines("\n".join(lines)):
            problems.append("start-up: sanitizer report:\n" + "\n".join(lines[-60:]))


def compare_served(host, port, refs, problems):
    jobs, after = {}, 0
    while True:
        r = tlib.http_request(host, port, "GET", "/api/v1/jobs?after=%d&limit=1000" % after, timeout=30)
        if r.status != 200:
            problems.append("start-up: the job list answered %d: %s" % (r.status, r.text[:300]))
            return None
        for j in r.json["jobs"]:
            jobs[j["id"]] = (j["state"], j["solutions"], j["stored"])
        if r.json["next"] is None:
            break
        after = r.json["next"]
    m = served_matches(jobs, refs)
    if m is None:
        problems.append("start-up: served jobs that no undamaged state held: %s; states: %s"
                        % (jobs, [s.states for s in refs]))
        return None
    store, state = m
    errors = []
    for jid, (st, found, stored) in sorted(jobs.items()):
        if state[jid][0] not in FINAL:
            continue
        pages, error = sampled_solutions(host, port, jid, stored)
        want = store.solutions[jid]
        for after, page, nxt in pages:
            if page != want[after:after + len(page)] or len(page) != min(SAMPLE, stored - after):
                problems.append("start-up: job %d: the %d solutions served after %d differ from the undamaged "
                                "store's:\n%s\n%s" % (jid, len(page), after, page[:3], want[after:after + 3]))
                return None
        if error is None and pages[-1][2] is not None:
            problems.append("start-up: job %d: its solutions go on past the %d stored" % (jid, stored))
            return None
        if error is not None:  # refused to serve a damaged part: not wrong
            errors.append("job %d: %s" % (jid, error))
    if errors:
        log("  served errors: " + "; ".join(errors))
    return "served" + (" (with errors)" if errors else "")


# ---- the harness ---------------------------------------------------------------

def main(t):
    if not os.environ.get("TSR_SEED"):
        log("TSR_SEED=%d (set it to draw the same variants)" % SEED)
    t0 = time.monotonic()
    clean, wal, donor = make_stores(t)
    log("stores made in %.1f s" % (time.monotonic() - t0))
    rng = random.Random(SEED)
    kinds = plan(VARIANTS, rng)
    root = t.tempdir()
    tally = collections.Counter()
    seconds = collections.Counter()
    per_kind = collections.defaultdict(collections.Counter)
    t1 = time.monotonic()
    ran = 0
    keep_dir = None
    for i, kind in enumerate(kinds):
        vrng = random.Random("%d/%d" % (SEED, i))  # each variant replays alone
        if ONLY is not None and i != int(ONLY):
            continue
        what, files, ref = damage(kind, vrng, clean, wal, donor)
        refs = ref if isinstance(ref, list) else [ref]
        problems = []
        results = []
        for mode in ("check", "repair", "start"):
            tm = time.monotonic()
            d = os.path.join(root, "%d-%s" % (i, mode))
            write_files(d, files)
            db = os.path.join(d, DB)
            if mode == "check":
                rc = run_tool(["--check", "--db", db], problems, "--check")
                results.append("check %s" % rc)
            elif mode == "repair":
                rc = run_tool(["--repair", "--db", db], problems, "--repair")
                results.append("repair %s" % rc)
                if rc == 0 and run_tool(["--check", "--db", db], problems, "--check after --repair") != 0:
                    problems.append("--repair exited 0, and --check after it did not")
            else:
                outcome = start_up(d, refs, problems)
                results.append("start %s" % outcome)
            if not problems:
                shutil.rmtree(d)
            seconds[mode] += time.monotonic() - tm
        ran += 1
        summary = ", ".join(results)
        tally[summary] += 1
        per_kind[kind][summary] += 1
        if problems and not keep_dir:  # the stores, for a replay
            keep_dir = os.environ.get("TSR_CORRUPTION_STORES") or tempfile.mkdtemp(prefix="tsr-corruption-")
            for s in (clean, wal, donor):
                write_files(os.path.join(keep_dir, s.name), s.files)
        check(not problems, "variant %d (%s): %s: %s" % (i, kind, what, summary),
              "TSR_SEED=%d TSR_CORRUPTION_ONLY=%d TSR_CORRUPTION_STORES=%s replays it:\n%s"
              % (SEED, i, keep_dir, "\n".join(problems)))
    took = time.monotonic() - t1
    log("%d variants in %.1f s (%.2f s each: %s), seed %d"
        % (ran, took, took / max(ran, 1), ", ".join("%s %.2f" % (m, seconds[m] / max(ran, 1)) for m in seconds),
           SEED))
    for kind in sorted(per_kind):
        log("  %-26s %s" % (kind, "; ".join("%d: %s" % (n, s) for s, n in per_kind[kind].most_common())))
    log("all: " + "; ".join("%d: %s" % (n, s) for s, n in tally.most_common()))


if __name__ == "__main__":
    tlib.SOFT = True
    tlib.run(main)
