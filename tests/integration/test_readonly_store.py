#!/usr/bin/env python3
"""A store that cannot be written is refused at start, saying why.

Root writes any file whatever its mode, so the daemon runs here as an
unprivileged user: as `nobody` through setpriv or runuser when the test runs
as root, else as the user running it.  On one copy of a real store:

- the database file read-only (chmod 444): tesserad exits 1 saying the file
  is read-only, naming it (not SQLite's "unable to open", and it does not
  start "ok" to fail on the first write);
- the directory read-only (chmod 555), with no lock file and with one left
  writable there: tesserad exits 1 saying the directory is not writable,
  naming it (not "cannot open ....lock");
- and, so that the refusals above are not the unprivileged user failing to
  run tesserad at all, a writable copy starts as the same user.

Each refused file is left byte for byte as it was.  Skipped (77) when the
test runs as root and no way to drop privileges works."""

import hashlib
import os
import pwd
import shutil
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tlib  # noqa: E402
from tlib import check, check_eq, log  # noqa: E402


def drop_privileges(probe_dir):
    """The command prefix that runs a program unprivileged, and the
    (uid, gid) it runs as; raises Skip when there is none."""
    if os.geteuid() != 0:
        return [], (os.getuid(), os.getgid())
    nobody = pwd.getpwnam("nobody")
    ids = (nobody.pw_uid, nobody.pw_gid)
    tries = [["setpriv", "--reuid=%d" % ids[0], "--regid=%d" % ids[1], "--clear-groups", "--"],
             ["runuser", "-u", "nobody", "--"]]
    # root's directory: an unprivileged user can read it but not write it
    probe = os.path.join(probe_dir, "probe")
    for prefix in tries:
        if shutil.which(prefix[0]) is None:
            continue
        r = subprocess.run(prefix + ["sh", "-c", "id -u; touch '%s'" % probe], capture_output=True, text=True)
        if r.stdout.strip() == str(ids[0]) and r.returncode != 0 and not os.path.exists(probe):
            log("running tesserad as uid %d through %s" % (ids[0], prefix[0]))
            return prefix, ids
        if os.path.exists(probe):
            os.unlink(probe)
    raise tlib.Skip("running as root and neither setpriv nor runuser drops the privilege to write "
                    "anywhere (a test as root would not see a read-only file)")


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def start_as(prefix, db, cwd):
    """Start tesserad on db through prefix: ("listening", lines) once it
    listens (it is then stopped), or ("exited", lines) with the exit code
    in lines[-1]."""
    argv = prefix + [tlib.BINARY, "--listen", "127.0.0.1:0", "--db", db, "--threads", "1",
                     "--puzzles", tlib.PUZZLES]
    env = {k: v for k, v in os.environ.items() if k not in ("TESSERAD_TOKEN", "STATE_DIRECTORY", "NOTIFY_SOCKET")}
    p = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    lines = []
    listening = threading.Event()

    def reader():
        for line in p.stderr:
            lines.append(line.rstrip("\n"))
            if "listening on" in line:
                listening.set()

    th = threading.Thread(target=reader, daemon=True)
    th.start()
    deadline = time.monotonic() + 20 * tlib.SCALE
    while p.poll() is None and not listening.is_set() and time.monotonic() < deadline:
        listening.wait(0.05)
    if p.poll() is None or listening.is_set():
        p.terminate()
        p.wait(10)
        th.join(5)
        return "listening", lines
    th.join(5)
    return "exited", lines + ["exit code %d" % p.returncode]


def refused(prefix, db, cwd, what, needles, absent):
    outcome, lines = start_as(prefix, db, cwd)
    text = "\n".join(lines)
    check_eq(outcome, "exited", "%s: tesserad refuses to start" % what)
    check_eq(lines[-1], "exit code 1", "%s: exit code 1" % what)
    for n in needles:
        check(n in text, "%s: the message says %r" % (what, n), text)
    for a in absent:
        check(a not in text, "%s: the message does not say %r" % (what, a), text)


def main(t):
    base = t.tempdir()
    os.chmod(base, 0o755)  # the unprivileged user must reach what is inside
    prefix, (uid, gid) = drop_privileges(base)

    # a real store with a job in it
    d = t.daemon(threads=1)
    jid = d.submit(tlib.puzzle_body("pentominoes-6x10.json", limit=5))["id"]
    d.wait_final(jid)
    d.stop()
    check(not os.path.exists(d.db_path + "-wal"), "the stopped daemon left no write-ahead log to copy")

    def copy_store(name, mode, lock=False):
        sub = os.path.join(base, name)
        os.mkdir(sub)
        db = os.path.join(sub, "tessera.db")
        shutil.copyfile(d.db_path, db)
        paths = [sub, db]
        if lock:
            open(db + ".lock", "w").close()
            paths.append(db + ".lock")
        for p in paths:
            os.chown(p, uid, gid)
        os.chmod(db, mode)
        return sub, db

    # the control: a writable copy starts as the unprivileged user
    sub, db = copy_store("writable", 0o644)
    outcome, lines = start_as(prefix, db, sub)
    check_eq(outcome, "listening", "a writable store starts as the unprivileged user", "\n".join(lines))

    # a read-only database file in a writable directory
    sub, db = copy_store("file", 0o444)
    before = digest(db)
    refused(prefix, db, sub, "a chmod-444 database", ["the file is read-only", db], ["unable to open"])
    check_eq(digest(db), before, "a chmod-444 database: the file is unchanged")

    # a read-only directory, without and with a writable lock file in it
    for lock in (False, True):
        what = "a read-only directory (%s lock file)" % ("a writable" if lock else "no")
        sub, db = copy_store("dir-lock" if lock else "dir", 0o644, lock)
        os.chmod(sub, 0o555)
        tlib.at_exit(lambda s=sub: os.chmod(s, 0o755))  # so that it can be removed
        before = digest(db)
        refused(prefix, db, sub, what, ["the directory %s is not writable" % sub],
                ["cannot open", "unable to open"])
        check_eq(digest(db), before, "%s: the database is unchanged" % what)
        check_eq(sorted(os.listdir(sub)), sorted(["tessera.db"] + (["tessera.db.lock"] if lock else [])),
                 "%s: nothing was added beside the database" % what)


if __name__ == "__main__":
    tlib.run(main)
