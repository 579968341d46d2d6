#!/usr/bin/env python3
"""tessera's daemon commands from a user's seat (README.md): a BurrTools file
(the Soma cube as BurrTools saves it, gzip-compressed XML) is submitted as
Puzzle JSON and counts the published 240 up to reflections, its problem
chosen by name; `rerun` submits
a finished job's puzzle and options again and counts the same; Ctrl-C during
`watch` stops the watching, says the job goes on, exits 130, and the job is
still running on the daemon; `status` prints DONE over the percentages."""

import os
import signal
import subprocess
import time

import tlib
from tlib import check, check_eq


def main(t):
    cli = os.environ.get("TESSERA") or os.path.join(tlib.SRCDIR, "tessera")
    if not os.access(cli, os.X_OK):
        raise tlib.Skip("no tessera binary at %s" % cli)
    d = t.daemon(threads=2)
    server = "--server=http://%s:%d" % (d.host, d.port)

    def run(*argv, timeout=120):
        return subprocess.run([cli, server] + list(argv), capture_output=True, timeout=timeout)

    out = run("submit", "--watch", "--unique=raw", tlib.puzzle_path("pentominoes-6x10.json"))
    check_eq(out.returncode, 0, "submit --watch 6x10: exit 0", out.stderr)
    first = int(out.stdout.decode().split()[0])
    check("9356 solutions" in out.stdout.decode(), "6x10 raw: 9356 solutions", out.stdout)
    out = run("rerun", "--watch", str(first))
    check_eq(out.returncode, 0, "rerun --watch: exit 0", out.stderr)
    again = int(out.stdout.decode().split()[0])
    check(again != first, "rerun made a new job (%d after %d)" % (again, first))
    check_eq(d.job(again)["solutions"], 9356, "the rerun counts the same")
    check_eq(d.job(again)["options"]["unique"], "raw", "with the job's options")
    soma = os.path.join(tlib.SRCDIR, "tests", "fuzz", "corpus", "xmpuzzle", "soma.xmpuzzle")
    out = run("submit", "--watch", "--unique=mirror", "--problem=Cube", soma)
    check_eq(out.returncode, 0, "submit --problem=Cube soma.xmpuzzle: exit 0", out.stderr)
    check("240 solutions" in out.stdout.decode(), "the Soma cube from a BurrTools file: 240", out.stdout)
    out = run("submit", "--problem=3", soma)
    check_eq(out.returncode, 2, "submit --problem=3 of a 2-problem file: exit 2", out.stderr)
    check("the file has 2 problems" in out.stderr.decode(), "and says how many there are", out.stderr)
    out = run("rerun", "999999")
    check_eq(out.returncode, 2, "rerun of no job: exit 2", out.stderr)

    # a long job, watched and interrupted
    r = d.submit(tlib.puzzle_body(tlib.LONG_PUZZLE, **tlib.LONG_OPTIONS))
    jid = r["id"]
    w = subprocess.Popen([cli, server, "watch", str(jid)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    d.wait_state(jid, "running")
    time.sleep(1.0)
    w.send_signal(signal.SIGINT)
    try:
        _, err = w.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        w.kill()
        _, err = w.communicate()
    check_eq(w.returncode, 130, "watch after Ctrl-C: exit 130", err)
    check("job %d goes on on the daemon" % jid in err.decode(), "watch says the job goes on", err)
    check_eq(d.job(jid)["state"], "running", "and the job is still running")

    out = run("status")
    lines = out.stdout.decode().splitlines()
    head, row = lines[0], next(x for x in lines[1:] if "%" in x)
    check_eq(head.index("DONE") + len("DONE"), row.index("%") + 1, "status: DONE ends over the percentages", out.stdout)
    d.action(jid, "cancel")


if __name__ == "__main__":
    tlib.run(main)
