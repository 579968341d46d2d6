#!/usr/bin/env python3
"""The memory cap a job's solver must fit in (--max-memory), as /healthz
reports it as max_memory:

- by default, half of the machine's memory or, when lower, of the least
  memory limit of the daemon's own cgroup and its ancestors (what
  /proc/self/cgroup names: cgroup v2's memory.max, v1's
  memory.limit_in_bytes), computed here independently from the same files;
- --max-memory 3G gives 3 GiB, --max-memory none gives null, and a submit
  needing more than the cap is refused (422);
- where this test may make cgroups (root, with a writable memory hierarchy):
  the daemon started in a leaf cgroup whose parent has a 1 GiB limit (a
  systemd MemoryMax= on the service's cgroup looks the same) chooses 512 MiB.
  Elsewhere that part is skipped with the reason logged; the rest still runs."""

import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tlib  # noqa: E402
from tlib import check, check_eq, log  # noqa: E402

GIB = 1 << 30


def read_limit(path):
    try:
        with open(path) as f:
            v = f.readline().strip()
    except OSError:
        return None
    return int(v) if v.isdigit() and int(v) > 0 else None


def own_cgroups():
    """[(root, cgroup path, limit file name)] for this process's cgroups."""
    out = []
    with open("/proc/self/cgroup") as f:
        for line in f:
            hid, controllers, path = line.rstrip("\n").split(":", 2)
            if hid == "0" and controllers == "":
                out += [("/sys/fs/cgroup", path, "memory.max"), ("/sys/fs/cgroup/unified", path, "memory.max")]
            elif "memory" in controllers.split(","):
                out.append(("/sys/fs/cgroup/memory", path, "memory.limit_in_bytes"))
    return out


def expected_default():
    total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGESIZE")
    for root, path, name in own_cgroups():
        parts = [p for p in path.split("/") if p]
        for i in range(len(parts) + 1):  # the cgroup and each ancestor
            v = read_limit(os.path.join(root, *parts[:i], name))
            if v is not None and v < total:
                total = v
    return total / 2


def healthz_cap(d):
    r = d.get("/healthz")
    check_eq(r.status, 200, "/healthz answers 200")
    return r.json.get("max_memory")


def writable_memory_cgroup():
    """(our cgroup's directory, limit file name) where a child with a memory
    limit can be made, or None with the reason logged."""
    if os.geteuid() != 0:
        log("not root: the nested cgroup case is skipped")
        return None
    for root, path, name in own_cgroups():
        here = os.path.join(root, *[p for p in path.split("/") if p])
        if os.path.isfile(os.path.join(here, name)) or os.path.isfile(os.path.join(here, "cgroup.procs")):
            probe = os.path.join(here, "tsr-it-probe-%d" % os.getpid())
            try:
                os.mkdir(probe)
            except OSError:
                continue
            ok = os.path.isfile(os.path.join(probe, name))
            os.rmdir(probe)
            if ok:
                return here, name
    log("no writable memory cgroup hierarchy here: the nested cgroup case is skipped")
    return None


class CgroupDaemon(tlib.Daemon):
    """A tesserad that joins the cgroup `procs` names before it starts."""

    def __init__(self, procs, **kw):
        super().__init__(**kw)
        self.procs = procs

    def argv(self):
        return ["sh", "-c", 'echo $$ > "$0" && exec "$@"', self.procs] + super().argv()


def main(t):
    want = expected_default()
    log("machine %.0f bytes; expected default cap %.0f bytes" %
        (os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGESIZE"), want))
    d = t.daemon(threads=1)
    check_eq(healthz_cap(d), want, "the default cap is half the least of the machine's memory and "
             "its cgroup limits")
    d.stop()

    d = t.daemon(threads=1, extra=["--max-memory", "3G"])
    check_eq(healthz_cap(d), 3.0 * GIB, "--max-memory 3G overrides the default")
    d.stop()

    d = t.daemon(threads=1, extra=["--max-memory", "1M"])
    check_eq(healthz_cap(d), float(1 << 20), "--max-memory 1M")
    r = d.post("/api/v1/jobs", tlib.puzzle_body("tetris-cube.json"))
    tlib.check_error(r, 422, "memory", what="a job needing more than 1M")
    check_eq(d.list_jobs(), [], "no job was created")
    d.stop()

    d = t.daemon(threads=1, extra=["--max-memory", "none"])
    check_eq(healthz_cap(d), None, "--max-memory none: max_memory is null")
    d.stop()

    found = writable_memory_cgroup()
    if found is None:
        return
    here, name = found
    outer = os.path.join(here, "tsr-it-%d" % os.getpid())
    leaf = os.path.join(outer, "leaf")
    os.mkdir(outer)
    tlib.at_exit(lambda: os.rmdir(outer))
    os.mkdir(leaf)
    tlib.at_exit(lambda: os.rmdir(leaf))  # at_exit runs the last one first
    with open(os.path.join(outer, name), "w") as f:
        f.write(str(GIB))
    check_eq(read_limit(os.path.join(outer, name)), GIB, "the outer cgroup's limit is 1 GiB")
    if GIB >= 2 * want:
        log("the machine's memory is below 1 GiB: the nested limit would not be the least")
        return
    d = CgroupDaemon(os.path.join(leaf, "cgroup.procs"), threads=1)
    t.daemons.append(d)
    d.start()
    with open("/proc/%d/cgroup" % d.proc.pid) as f:
        joined = f.read()
    check(any(line.endswith("/%s/leaf" % os.path.basename(outer)) for line in joined.splitlines()),
          "the daemon runs in the leaf cgroup", joined)
    check_eq(healthz_cap(d), GIB / 2, "a daemon in a leaf under a 1 GiB cgroup chooses 512 MiB")
    d.stop()


if __name__ == "__main__":
    tlib.run(main)
