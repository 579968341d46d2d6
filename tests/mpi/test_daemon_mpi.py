#!/usr/bin/env python3
"""tesserad --mpi: the daemon's jobs on the ranks of an MPI job, on loopback.

1. published: a 3-rank daemon (every rank searching with one thread) runs
   three jobs to their published counts, with the node totals of the
   one-process search, and /healthz shows the cluster's traffic.
   lifecycle: pause, resume, cancel and a preempting job of higher priority.
2. survive: with `mpirun --enable-recovery`, one worker rank is SIGKILLed in
   the middle of a job; rank 0 gives it up after --mpi-timeout, searches its
   batch again elsewhere, and the job ends with the exact count and nodes.
3. restart: without recovery, killing a worker ends the whole MPI job (MPI's
   default); the daemon is started again on the same state directory and the
   job resumes from its last cluster-wide checkpoint to the exact count.
4. across: a job checkpointed on the cluster resumes on a plain one-machine
   tesserad, and one checkpointed there resumes on the cluster, with exact
   counts and nodes both ways.

Needs mpirun and a tesserad built with MPI (else exit 77)."""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import tlib  # noqa: E402
from tlib import check, check_eq, log  # noqa: E402

TESSERA = os.environ.get("TESSERA") or os.path.join(tlib.SRCDIR, "tessera")
MPIRUN = shutil.which("mpirun")
TIMEOUT = 3  # --mpi-timeout: a killed rank is given up this fast
# the long job: long enough to be killed in the middle of on 2 cores
LONG = tlib.LONG_PUZZLE
LONG_OPTIONS = dict(tlib.LONG_OPTIONS)


def open_mpi():
    try:
        out = subprocess.run([MPIRUN, "--version"], capture_output=True, text=True, timeout=30)
        return "open mpi" in (out.stdout + out.stderr).lower()
    except (OSError, subprocess.SubprocessError):
        return False


def mpi_env():
    """Open MPI as root (CI containers) and more ranks than cores; under the
    sanitizers, Open MPI's own leftovers and lock orders are suppressed."""
    env = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1"}
    supp = os.path.join(tlib.SRCDIR, "tests", "mpi")
    for var, extra in (("ASAN_OPTIONS", "fast_unwind_on_malloc=0"),
                       ("LSAN_OPTIONS", "suppressions=%s/lsan.supp:print_suppressions=0" % supp),
                       ("TSAN_OPTIONS", "suppressions=%s/tsan.supp" % supp)):
        env[var] = ":".join(x for x in (os.environ.get(var), extra) if x)
    return env


class MpiDaemon(tlib.Daemon):
    """tesserad --mpi under mpirun; self.proc is mpirun."""

    def __init__(self, ranks=3, recovery=False, **kw):
        kw.setdefault("env", {}).update(mpi_env())
        super().__init__(**kw)
        self.ranks = ranks
        self.recovery = recovery

    def argv(self):
        a = [MPIRUN, "--oversubscribe", "-np", str(self.ranks)]
        if self.recovery:
            a.append("--enable-recovery")
        # every rank gets the environment (sanitizer options)
        for var in ("ASAN_OPTIONS", "LSAN_OPTIONS", "TSAN_OPTIONS", "UBSAN_OPTIONS"):
            a += ["-x", var] if self._env().get(var) else []
        return a + super().argv() + ["--mpi", "--mpi-timeout", str(TIMEOUT)]

    def cluster(self):
        r = self.get("/healthz")
        check_eq(r.status, 200, "healthz answers", fatal=True)
        return r.json.get("cluster")

    def rank_pid(self, k):
        return self.cluster()["per_rank"][k]["pid"]

    def stop_rank0(self, timeout=30):
        """SIGTERM to rank 0 alone: the final checkpoint gathers the whole
        cluster, then rank 0 lets the workers go and mpirun ends."""
        os.kill(self.rank_pid(0), signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout * tlib.SCALE)
        except subprocess.TimeoutExpired:
            raise tlib.Failure("the MPI job did not end within %ds of rank 0's SIGTERM:\n%s"
                               % (timeout, self.stderr_tail()))
        if self in tlib._children:
            tlib._children.remove(self)
        return rc


_references = {}


def cluster_daemon(t, **kw):
    """A started MpiDaemon that the test cleans up."""
    d = MpiDaemon(**kw)
    t.daemons.append(d)
    d.start()
    return d


def reference(name, options):
    """Solutions and nodes of the one-process, one-thread search."""
    key = (name, json.dumps(options, sort_keys=True))
    if key not in _references:
        _references[key] = _reference(name, options)
    return _references[key]


def _reference(name, options):
    args = [TESSERA, "solve", "-q", "--json", "--threads=1"]
    for k, v in options.items():
        args.append("--%s=%s" % (k, v))
    out = subprocess.run(args + [tlib.puzzle_path(name)], capture_output=True, text=True,
                         timeout=600 * tlib.SCALE)
    check_eq(out.returncode, 0, "reference run of %s" % name, fatal=True)
    o = json.loads(out.stdout)
    return o["solutions"], o["nodes"]


def submit(d, name, **options):
    return d.submit(tlib.puzzle_body(name, **options))["id"]


def wait_fraction(d, jid, at_least, what):
    d.wait_for(jid, lambda j: j["progress"]["fraction"] >= at_least or j["state"] in tlib.FINAL_STATES,
               timeout=300, what=what)
    j = d.job(jid)
    check(j["state"] == "running", "%s: still running at fraction %.2f" % (what, j["progress"]["fraction"]),
          j["state"])


def check_done(d, jid, sols, nodes, what):
    j = d.wait_final(jid, timeout=600)
    check_eq(j["state"], "completed", "%s: completed" % what, fatal=True)
    check_eq(j["solutions"], sols, "%s: %d solutions" % (what, sols))
    check_eq(j["progress"]["nodes"], nodes, "%s: nodes of the one-process search" % what)
    got = d.all_solutions(jid)
    check_eq(len(got), sols, "%s: %d stored solutions" % (what, sols))
    return j


def published(t):
    d = cluster_daemon(t, threads=1, checkpoint=0.5)
    c = d.cluster()
    check(c is not None and c["ranks"] == 3, "healthz: a cluster of 3 ranks", c)
    jobs = [("pentominoes-6x10.json", {}), ("soma-cube.json", {"unique": "raw"}), (LONG, LONG_OPTIONS)]
    ids = [submit(d, n, **o) for n, o in jobs]
    for (name, opts), jid in zip(jobs, ids):
        mode = opts.get("unique", "rotations")
        want = tlib.expected(name, mode)
        sols, nodes = reference(name, opts)
        check_eq(sols, want, "reference %s: the published %s count" % (name, mode))
        check_done(d, jid, want, nodes, "3 ranks: %s" % name)
    c = d.cluster()
    for k in (0, 1, 2):
        r = c["per_rank"][k]
        check(r["batches"] > 0 and r["busy_seconds"] > 0, "rank %d searched batches" % k, r)
        check(not r["lost"], "rank %d not lost" % k)
    for k in (1, 2):
        r = c["per_rank"][k]
        check(r["messages_sent"] > 0 and r["bytes_sent"] > 0 and r["messages_received"] > 0,
              "rank %d sent results and received work over MPI" % k, r)
    sent = c["per_rank"][1]["bytes_sent"] + c["per_rank"][2]["bytes_sent"]
    check_eq(c["per_rank"][0]["bytes_received"], sent, "rank 0 received what the workers sent")
    check_eq(d.job(ids[-1])["threads"], 0, "a finished job holds no threads")
    rc = d.stop_rank0()
    check_eq(rc, 0, "the MPI job ends cleanly after rank 0's SIGTERM")


def lifecycle(t):
    """Pause, resume and cancel reach every rank; a priority job preempts."""
    d = cluster_daemon(t, threads=1, checkpoint=5)
    sols, nodes = reference(LONG, LONG_OPTIONS)
    jid = submit(d, LONG, **LONG_OPTIONS)
    wait_fraction(d, jid, 0.1, "lifecycle: before the preemption")
    # a job of higher priority takes the cluster at the next checkpoint
    hi = submit(d, "pentominoes-6x10.json", priority=5)
    s2, n2 = reference("pentominoes-6x10.json", {})
    check_eq(d.wait_state(jid, "queued", timeout=60)["state"], "queued",
             "lifecycle: the running job is preempted")
    d.wait_final(hi, timeout=600)
    # paused as it gets the cluster back (queued or just running again)
    d.action(jid, "pause")
    j = d.wait_state(jid, "paused", timeout=60)
    check(j["progress"]["fraction"] >= 0.1, "paused: the progress is kept", j["progress"])
    check_done(d, hi, s2, n2, "lifecycle: a job of priority 5")
    time.sleep(0.5)
    check(all(not r["busy"] for r in d.cluster()["per_rank"]), "paused: no rank holds a batch")
    d.action(jid, "resume")
    check_done(d, jid, sols, nodes, "lifecycle: preempted, paused and resumed")
    cj = submit(d, LONG, **LONG_OPTIONS)
    wait_fraction(d, cj, 0.05, "lifecycle: before the cancel")
    d.action(cj, "cancel")
    check_eq(d.wait_final(cj, timeout=60)["state"], "cancelled", "lifecycle: cancelled")
    check_eq(d.stop_rank0(), 0, "lifecycle: the MPI job ends cleanly")


def survive(t):
    d = cluster_daemon(t, threads=1, checkpoint=1, recovery=True)
    sols, nodes = reference(LONG, LONG_OPTIONS)
    jid = submit(d, LONG, **LONG_OPTIONS)
    wait_fraction(d, jid, 0.2, "survive: before the kill")
    victim = d.rank_pid(2)
    os.kill(victim, signal.SIGKILL)
    log("SIGKILLed rank 2 (pid %d) at fraction %.2f" % (victim, d.job(jid)["progress"]["fraction"]))
    check_done(d, jid, sols, nodes, "survive: rank 2 killed")
    c = d.cluster()
    check(c["per_rank"][2]["lost"], "healthz: rank 2 given up", c["per_rank"][2])
    check(not c["per_rank"][1]["lost"], "healthz: rank 1 still serving")
    # the cluster goes on with the ranks it has
    jid2 = submit(d, "pentominoes-6x10.json")
    s2, n2 = reference("pentominoes-6x10.json", {})
    check_done(d, jid2, s2, n2, "survive: a new job on the remaining ranks")
    rc = d.stop_rank0()  # raises if the MPI job does not end
    log("mpirun ended with %s after a clean stop with a rank lost" % rc)


def restart(t):
    state = t.tempdir()
    d = cluster_daemon(t, threads=1, checkpoint=0.5, state_dir=state)
    sols, nodes = reference(LONG, LONG_OPTIONS)
    jid = submit(d, LONG, **LONG_OPTIONS)
    wait_fraction(d, jid, 0.25, "restart: before the kill")
    os.kill(d.rank_pid(1), signal.SIGKILL)
    try:
        rc = d.proc.wait(60 * tlib.SCALE)
    except subprocess.TimeoutExpired:
        raise tlib.Failure("mpirun did not end the job after a rank died:\n" + d.stderr_tail())
    log("mpirun ended with %s after rank 1 was killed" % rc)
    check(rc != 0, "without recovery, MPI ends the whole job", rc)
    d2 = cluster_daemon(t, threads=1, checkpoint=0.5, state_dir=state)
    j = d2.job(jid)
    check(j["progress"]["fraction"] > 0 or j["state"] == "completed",
          "restart: the job resumes from a checkpoint, not the root", j["progress"])
    check_done(d2, jid, sols, nodes, "restart: resumed on the cluster")
    d2.stop_rank0()


def across(t):
    sols, nodes = reference(LONG, LONG_OPTIONS)
    # cluster -> one machine
    state = t.tempdir()
    d = cluster_daemon(t, threads=1, checkpoint=0.5, state_dir=state)
    jid = submit(d, LONG, **LONG_OPTIONS)
    wait_fraction(d, jid, 0.3, "across: cluster part")
    check_eq(d.stop_rank0(), 0, "across: the cluster stops cleanly mid-job")
    plain = t.daemon(threads=2, checkpoint=0.5, state_dir=state)
    j = plain.job(jid)
    check(j["progress"]["fraction"] >= 0.3, "across: the cluster's checkpoint is there",
          j["progress"])
    check_done(plain, jid, sols, nodes, "across: cluster, then one machine")
    # one machine -> cluster
    jid2 = submit(plain, LONG, **LONG_OPTIONS)
    wait_fraction(plain, jid2, 0.3, "across: one-machine part")
    plain.stop()
    d2 = cluster_daemon(t, threads=1, checkpoint=0.5, state_dir=state)
    check_done(d2, jid2, sols, nodes, "across: one machine, then the cluster")
    d2.stop_rank0()


def main(t):
    if MPIRUN is None:
        raise tlib.Skip("no mpirun")
    if not open_mpi():
        raise tlib.Skip("these tests drive Open MPI's mpirun")
    v = subprocess.run([tlib.BINARY, "--version"], capture_output=True, text=True, timeout=60)
    if "without MPI" in v.stdout:
        raise tlib.Skip("tesserad was built without MPI")
    only = os.environ.get("TSR_ONLY")
    for f in (published, lifecycle, survive, restart, across):
        if only and f.__name__ != only:
            continue
        log("---- %s" % f.__name__)
        f(t)


if __name__ == "__main__":
    tlib.run(main)
