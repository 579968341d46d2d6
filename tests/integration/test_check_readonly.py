#!/usr/bin/env python3
"""`tesserad --check` reads a store on read-only media (docs/store.md).

Checking is reading, so a store on a read-only file system (a backup
mounted read-only, a snapshot) must be checked where it is.  SQLite opens a
database in WAL mode through its -shm index, which it must create when it is
missing; on read-only media that fails.  The check then:

- with no write-ahead log holding commits (none, or an empty one) and no
  -shm, reads the file alone as the whole store (SQLite's immutable=1), and
  says so: exit 0 on a sound store, 1 on a damaged one;
- with a -wal and its -shm (a store left by kill -9), reads both: the
  commits in the log are checked too;
- with commits in a -wal but no -shm, cannot read the store consistently:
  exit 2, saying why and what to do (copy the files to writable storage).

Each result is compared with `--check` on a writable copy of the same
files (same chunks and jobs checked), and nothing on the read-only mount
changes.  The read-only file system is a tmpfs remounted read-only: as
root, else inside a user and mount namespace of its own (`unshare --user
--map-root-user --mount`); skipped, saying why, only where neither works.
"""

import hashlib
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

import tlib
from tlib import check, check_eq

IN_USERNS = "TSR_CHECK_READONLY_USERNS"
UNSHARE = ["unshare", "--user", "--map-root-user", "--mount"]


def mount(args):
    """Run mount with args: None when it worked, else why not."""
    try:
        p = subprocess.run(["mount"] + args, capture_output=True, text=True)
    except OSError as e:
        return str(e)
    return None if p.returncode == 0 else (p.stderr.strip().split("\n")[0] or "exit %d" % p.returncode)


def tmpfs():
    """A fresh 16 MB tmpfs, unmounted at exit; when mounting is refused,
    this script runs again in namespaces of its own (exec: its status is
    ours), and raises Skip only when that cannot be done either."""
    where = tempfile.mkdtemp(prefix="tsr-ro-")
    refused = mount(["-t", "tmpfs", "-o", "size=16M", "tmpfs", where])
    if refused is None:
        tlib.at_exit(lambda: (subprocess.run(["umount", "-l", where]), os.rmdir(where)))
        return where
    os.rmdir(where)
    why = "not even in a user namespace of its own"
    if not os.environ.get(IN_USERNS):
        try:
            probe = subprocess.run(UNSHARE + ["true"], capture_output=True, text=True)
            why = "unshare refused a user namespace (%s)" % (probe.stderr.strip().split("\n")[0]
                                                             or "exit %d" % probe.returncode)
        except OSError as e:
            probe, why = None, "no unshare (%s)" % e
        if probe is not None and probe.returncode == 0:
            tlib.log("plain mount refused (%s): running again under %s" % (refused, " ".join(UNSHARE)))
            sys.stdout.flush()
            os.environ[IN_USERNS] = "1"
            os.execvp(UNSHARE[0], UNSHARE + [sys.executable, os.path.abspath(sys.argv[0])] + sys.argv[1:])
    raise tlib.Skip("cannot make a read-only file system: mount refused (%s), and %s; run as root, "
                    "or where unprivileged user namespaces are allowed" % (refused, why))


def run_check(db):
    p = subprocess.run([tlib.BINARY, "--check", "--db", db], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def counted(report):
    """What a report says it checked: the chunks, jobs and tasks lines."""
    return re.findall(r"^(?:chunks|jobs|frontier): .*$", report, re.M)


def listing(d):
    """Every file under d with its SHA-256."""
    out = {}
    for name in sorted(os.listdir(d)):
        with open(os.path.join(d, name), "rb") as f:
            out[name] = hashlib.sha256(f.read()).hexdigest()
    return out


def main(t):
    # a stopped store (the log folded in and removed) ...
    d = t.daemon(threads=1)
    for _ in range(2):
        d.wait_final(d.submit(tlib.puzzle_body("pentominoes-6x10.json"))["id"])
    d.stop()
    check(not os.path.exists(d.db_path + "-wal"), "a stopped daemon leaves no write-ahead log")
    # ... and one killed with its last commits in the log
    k = t.daemon(threads=1)
    k.wait_final(k.submit(tlib.puzzle_body("soma-cube.json"))["id"])
    k.kill()
    check(os.path.getsize(k.db_path + "-wal") > 0 and os.path.exists(k.db_path + "-shm"),
          "kill -9 leaves commits in the write-ahead log, and its index")

    root = tmpfs()
    layouts = {  # directory: (files copied from, suffixes)
        "clean": (d.db_path, ("",)),
        "empty-wal": (d.db_path, ("",)),
        "wal-and-shm": (k.db_path, ("", "-wal", "-shm")),
        "wal-only": (k.db_path, ("", "-wal")),
        "damaged": (d.db_path, ("",)),
    }
    writable = t.tempdir()
    for name, (src, suffixes) in layouts.items():
        for where in (root, writable):
            os.mkdir(os.path.join(where, name))
            for suf in suffixes:
                shutil.copyfile(src + suf, os.path.join(where, name, "tessera.db" + suf))
            if name == "empty-wal":  # as a checkpoint that truncated it leaves it
                open(os.path.join(where, name, "tessera.db-wal"), "wb").close()
    # one bit of a chunk flipped in both copies of "damaged"
    con = sqlite3.connect(d.db_path)
    job, first, data = con.execute("SELECT job, first, data FROM chunks ORDER BY job, first LIMIT 1").fetchone()
    con.close()
    for where in (root, writable):
        path = os.path.join(where, "damaged", "tessera.db")
        raw = bytearray(open(path, "rb").read())
        at = raw.find(data[:24])
        check(at >= 0, "found the chunk's bytes in the file")
        raw[at + 12] ^= 0x10
        open(path, "wb").write(bytes(raw))
    refused = mount(["-o", "remount,ro", "-t", "tmpfs", "tmpfs", root])
    check(refused is None, "the tmpfs is remounted read-only", refused)
    probe = os.path.join(root, "clean", "probe")
    try:
        open(probe, "w").close()
        check(False, "nothing can be created on the read-only mount")
    except OSError:
        pass
    before = {name: listing(os.path.join(root, name)) for name in layouts}

    def same_as_writable(name, rc, out):
        wrc, wout, werr = run_check(os.path.join(writable, name, "tessera.db"))
        check_eq((rc, counted(out)), (wrc, counted(wout)),
                 "%s: the same result and the same rows checked as on a writable copy" % name)

    for name in ("clean", "empty-wal"):
        rc, out, err = run_check(os.path.join(root, name, "tessera.db"))
        check_eq(rc, 0, "%s on read-only media: --check exits 0" % name, out + err)
        check(out.endswith("ok\n") and "read as immutable" in out,
              "%s: the report says ok, and that the file alone was read" % name, out)
        same_as_writable(name, rc, out)

    rc, out, err = run_check(os.path.join(root, "wal-and-shm", "tessera.db"))
    check_eq(rc, 0, "a store with commits in its log and its index, read-only: --check exits 0", out + err)
    check("immutable" not in out, "its log is read, not left out", out)
    same_as_writable("wal-and-shm", rc, out)
    check("jobs: 1 checked" in out, "the job committed only in the log is checked", out)

    rc, out, err = run_check(os.path.join(root, "wal-only", "tessera.db"))
    check_eq(rc, 2, "commits in the log with no index on read-only media: exit 2 (cannot be read)", out + err)
    check("tessera.db-wal holds commits" in err and "copy the files to writable storage" in err,
          "it says why and what to do", err)
    check("unable to open" not in err, "not SQLite's bare \"unable to open\"", err)

    rc, out, err = run_check(os.path.join(root, "damaged", "tessera.db"))
    check_eq(rc, 1, "a damaged store on read-only media: exit 1", out + err)
    check("job %d: the chunk from solution %d is damaged" % (job, first) in out,
          "it names the damaged chunk", out)
    same_as_writable("damaged", rc, out)

    check_eq({name: listing(os.path.join(root, name)) for name in layouts}, before,
             "nothing on the read-only mount changed, nothing was added")


if __name__ == "__main__":
    tlib.run(main)
