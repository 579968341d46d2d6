#!/usr/bin/env python3
"""A full disk loses nothing and fails no job (docs/store.md, "A full disk").

The database lives on a small tmpfs of its own, most of it taken by a
ballast file; the flood (32 dominoes on 8x8, 12,988,816 raw tilings, all
stored) fills the rest mid-run.  Then:
  - the job is not failed: it waits, queued, its error saying why and when
    it tries again (`retry_at`); its committed count never goes down and
    every committed solution is stored;
  - /healthz says "degraded" with the store's error, the metrics count the
    refused commits and show the store unwritable;
  - SIGTERM on the full disk still exits within 5 s;
  - the ballast removed, the daemon started again finishes the job at the
    exact count, every solution stored once, and /healthz is "ok" again.

Needs to mount a tmpfs: as root it mounts one; otherwise it runs itself
again inside a user and mount namespace of its own (`unshare --user
--map-root-user --mount`), where it may; it is skipped, saying why, only
where neither works.
"""

import os
import subprocess
import sys
import tempfile
import time

import tlib
from tlib import check, check_eq

FLOOD = "dominoes-8x8.json"
TMPFS_MB = 96
BALLAST_MB = 56  # the flood's store needs ~67 MB: it fills the rest mid-run


# set in the copy of this script that runs inside its own namespaces
IN_USERNS = "TSR_DISK_FULL_USERNS"
UNSHARE = ["unshare", "--user", "--map-root-user", "--mount"]


def try_mount(where):
    """Mount a TMPFS_MB tmpfs at where; the error text, or None when mounted."""
    try:
        p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%dM" % TMPFS_MB, "tmpfs", where],
                           capture_output=True, text=True)
    except OSError as e:
        return str(e)
    return None if p.returncode == 0 else (p.stderr.strip().split("\n")[0] or "exit %d" % p.returncode)


def in_namespaces(refused):
    """Run this script again in a user and mount namespace of its own, where
    an unprivileged user may mount a tmpfs: exec, so its exit status is
    ours.  Returns (only) when that cannot be done, with the reason."""
    if os.environ.get(IN_USERNS):
        return "not even in a user namespace of its own"
    try:
        probe = subprocess.run(UNSHARE + ["true"], capture_output=True, text=True)
    except OSError as e:
        return "no unshare (%s)" % e
    if probe.returncode != 0:
        return "unshare refused a user namespace (%s)" % (probe.stderr.strip().split("\n")[0] or
                                                          "exit %d" % probe.returncode)
    tlib.log("plain mount refused (%s): running again under %s" % (refused, " ".join(UNSHARE)))
    sys.stdout.flush()
    sys.stderr.flush()
    os.environ[IN_USERNS] = "1"
    os.execvp(UNSHARE[0], UNSHARE + [sys.executable, os.path.abspath(sys.argv[0])] + sys.argv[1:])


def mount_tmpfs():
    """A fresh tmpfs of TMPFS_MB, unmounted at exit; raises Skip if no way
    to mount one works here."""
    where = tempfile.mkdtemp(prefix="tsr-full-")
    refused = try_mount(where)
    if refused is None:
        tlib.at_exit(lambda: (subprocess.run(["umount", "-l", where]), os.rmdir(where)))
        return where
    os.rmdir(where)
    why = in_namespaces(refused)  # returns only when it could not
    raise tlib.Skip("cannot mount a tmpfs to fill: plain mount refused (%s), and %s; run as root, "
                    "or where unprivileged user namespaces are allowed" % (refused, why))


def fill(path, mb):
    with open(path, "wb") as f:
        block = b"\0" * (1 << 20)
        for _ in range(mb):
            f.write(block)


def metric(d, name):
    for line in d.get("/metrics").text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return None


def main(t):
    if tlib.QUICK:
        raise tlib.Skip("TSR_QUICK: the flood that fills the disk is too long under the sanitizers")
    where = mount_tmpfs()
    ballast = os.path.join(where, "ballast")
    fill(ballast, BALLAST_MB)
    expect = tlib.expected(FLOOD, "raw")
    d = t.daemon(threads=2, checkpoint=1, state_dir=where)
    jid = d.submit({"puzzle": tlib.load_puzzle(FLOOD), "options": {"unique": "raw"}})["id"]

    # the disk fills: the job waits for the store, never fails
    seen, polls = 0, 0
    deadline = time.monotonic() + 120 * tlib.SCALE
    while True:
        j = d.job(jid)
        polls += 1
        if j["state"] == "failed":
            check(False, "a full disk does not fail the job", j.get("error"), fatal=True)
        if j["solutions"] < seen or j["stored"] != j["solutions"]:
            check(False, "the committed count never goes down, every committed solution stored",
                  (seen, j["solutions"], j["stored"]), fatal=True)
        seen = j["solutions"]
        if j["state"] == "queued" and j.get("retry_at"):
            break
        if j["state"] == "completed" or time.monotonic() > deadline:
            check(False, "the flood filled the disk within 120 s, before it completed", j, fatal=True)
        time.sleep(0.2)
    check(True, "%d polls while the disk filled: never failed, the committed count never went down, "
          "every committed solution stored" % polls)
    tlib.log("the disk filled at %d solutions: %s" % (seen, j["error"]))
    check(0 < seen < expect, "the disk filled mid-run (%d of %d committed)" % (seen, expect))
    check("full" in j["error"] and "last checkpoint" in j["error"],
          "the job's error says the disk is full and that its checkpoint is kept", j["error"])
    check(j["retry_at"] >= j["updated"] - 1, "retry_at is a time to come (%d, updated %d)"
          % (j["retry_at"], j["updated"]))
    h = d.get("/healthz").json
    check_eq((h["status"], h["store"]["writable"]), ("degraded", False), "/healthz: degraded, store not writable")
    check("full" in (h["store"]["error"] or ""), "/healthz names the store's error", h["store"])
    check(metric(d, "tessera_store_failures_total") >= 1, "metrics: the refused commits are counted")
    check_eq(metric(d, "tessera_store_writable"), 0.0, "metrics: the store is shown unwritable")

    # it tries again, with a back-off, and still does not fail
    j = d.wait_for(jid, lambda j: j["state"] == "queued" and "(attempt 2)" in (j["error"] or ""),
                   timeout=60, what="a second attempt on the full disk")
    check(j["solutions"] >= seen, "after the second attempt: nothing committed is lost")

    rc, took = d.stop()
    check_eq(rc, 0, "SIGTERM on a full disk: exit 0")
    check(took <= 5 * tlib.SCALE, "SIGTERM on a full disk: exited in %.2f s (<= 5 s)" % took)

    # space comes back: the job ends at the exact count
    os.unlink(ballast)
    d.start()
    j = d.wait_final(jid, timeout=300)
    check_eq((j["state"], j["solutions"], j["stored"]), ("completed", expect, expect),
             "space freed: completed, solutions == stored == published count")
    h = d.get("/healthz").json
    check_eq((h["status"], h["store"]["writable"]), ("ok", True), "/healthz: ok again after a commit")
    r = d.get("/api/v1/jobs/%d/solutions?after=%d&limit=3" % (jid, expect - 3))
    check_eq([s["seq"] for s in r.json["solutions"]], [expect - 2, expect - 1, expect],
             "the last solutions are stored in order")


if __name__ == "__main__":
    tlib.run(main)
