#!/usr/bin/env python3
"""Record jobs (options.record) through a real daemon and the real CLI.

A record job's tree is split at a fixed depth before it runs; the daemon
keeps each subtree's solutions, nodes and digest across checkpoints.  Here
a record job is killed (SIGKILL) and stopped (SIGTERM) part way and
restarted each time; it must end with the published count, its record's
tasks must add up to the job's own figures, and `tessera verify` must
re-run every task (and a chosen few on another thread count) and find
each one as recorded.  A record edited by one node is caught; records
that cannot be had are refused with a reason (no split, not finished, no
job, a depth that reaches a leaf, a puzzle with count ranges, a limit)."""

import json
import os
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tlib  # noqa: E402
from tlib import check, check_eq, log  # noqa: E402

TESSERA = os.path.join(os.path.dirname(tlib.BINARY), "tessera")


def cli(*args, want=0):
    p = subprocess.run([TESSERA, *args], capture_output=True, text=True, timeout=600 * tlib.SCALE)
    check_eq(p.returncode, want, "tessera %s exits %d (stderr: %s)" % (" ".join(args), want,
                                                                      p.stderr.strip()[:400]))
    return p


def interrupted_run(t, tmp):
    pz = tlib.load_puzzle(tlib.LONG_PUZZLE)
    expect = pz["expected"]["rotations"]
    d = t.daemon(threads=2, checkpoint=0.2)
    options = {**tlib.LONG_OPTIONS, "unique": "rotations", "record": 2}
    jid = d.submit({"puzzle": pz, "options": options})["id"]
    early = d.wait_for(jid, lambda j: j["progress"]["fraction"] > 0.15 or j["state"] == "completed",
                       120, "the record job gets under way")
    d.kill()
    d.start()
    log("killed at %.1f%%; restarted" % (100 * early["progress"]["fraction"]))
    r = d.get("/api/v1/jobs/%d/record" % jid)
    if d.job(jid)["state"] != "completed":
        check_eq(r.status, 409, "a record job not yet completed has no record to export")
        check("completed" in r.text, "the refusal says why: %s" % r.text[:200])
    mid = d.wait_for(jid, lambda j: j["progress"]["fraction"] > 0.45 or j["state"] == "completed",
                     120, "it goes on")
    rc, secs = d.stop()
    check_eq(rc, 0, "SIGTERM ends it cleanly")
    d.start()
    log("stopped at %.1f%% in %.2f s; restarted" % (100 * mid["progress"]["fraction"], secs))
    done = d.wait_for(jid, lambda j: j["state"] in tlib.FINAL_STATES, 300, "it completes")
    check_eq((done["state"], done["solutions"]), ("completed", expect),
             "the interrupted record job ends with the published count")

    r = d.get("/api/v1/jobs/%d/record" % jid)
    check_eq(r.status, 200, "GET /api/v1/jobs/%d/record" % jid)
    rec = json.loads(r.text)
    tasks = rec["tasks"]
    check_eq((rec["format"], rec["split"]["depth"], rec["split"]["tasks"]),
             ("tessera-record", 2, len(tasks)), "the record names its split")
    sols = rec["split"]["solutions"] + sum(x["solutions"] for x in tasks)
    nodes = rec["split"]["nodes"] + sum(x["nodes"] for x in tasks)
    check_eq((sols, nodes), (done["solutions"], done["progress"]["nodes"]),
             "its tasks add up to the job's solutions and nodes")
    check_eq((rec["totals"]["solutions"], rec["totals"]["nodes"]), (sols, nodes), "and to its totals")
    check(sum(1 for x in tasks if x["solutions"] > 0) > 1, "solutions lie in several tasks")
    weight = rec["split"]["pruned"] + sum(x["weight"] for x in tasks)
    check(abs(weight - 1) < 1e-9, "the tasks' weights and the part pruned above make the whole (%r)" % weight)

    # the CLI's copy (one task a line) is the same record
    path = os.path.join(tmp, "record.json")
    p = cli("record", "--server", "http://%s:%d" % (d.host, d.port), str(jid))
    with open(path, "w") as f:
        f.write(p.stdout)
    check_eq(json.loads(p.stdout), rec, "tessera record writes the daemon's record")
    check(p.stdout.count("\n") >= len(tasks), "one task a line")
    d.stop()
    return path, rec


def verify(path, rec, tmp):
    p = cli("verify", "--threads", "2", path)
    check("all as recorded" in p.stdout and "split as recorded" in p.stdout,
          "tessera verify re-runs every task and finds each as recorded: %s" % p.stdout[-300:])
    heavy = sorted(rec["tasks"], key=lambda x: -x["nodes"])[:3]
    spec = ",".join(str(x["task"]) for x in heavy)
    p = cli("verify", "--threads", "3", "--tasks", spec, "--quiet", path)
    check("3 of %d tasks checked" % len(rec["tasks"]) in p.stdout, "the three largest tasks on 3 threads")
    p = cli("verify", "--sample", "5", "--seed", "7", "--threads", "1", "--quiet", path)
    check("5 of" in p.stdout and "all as recorded" in p.stdout, "a random sample of five")

    bad = dict(rec)
    bad["tasks"] = [dict(x) for x in rec["tasks"]]
    victim = heavy[0]["task"]
    bad["tasks"][victim - 1]["nodes"] += 1
    bad["totals"] = dict(rec["totals"], nodes=rec["totals"]["nodes"] + 1)
    bpath = os.path.join(tmp, "edited.json")
    with open(bpath, "w") as f:
        json.dump(bad, f)
    p = cli("verify", "--tasks", str(victim), bpath, want=1)
    check("task %d DIFFERS" % victim in p.stdout, "a task edited by one node is caught: %s" % p.stdout[-300:])
    bad["format"] = "something else"
    with open(bpath, "w") as f:
        json.dump(bad, f)
    p = cli("verify", bpath, want=2)
    check("$.format" in p.stderr, "a document that is not a record is refused, naming $.format")
    p = cli("verify", "--tasks", "0-3", path, want=2)
    check("--tasks" in p.stderr, "task numbers start at 1")


def refusals(t):
    d = t.daemon(threads=1)
    plain = d.submit(tlib.puzzle_body("pentominoes-6x10.json"))["id"]
    d.wait_for(plain, lambda j: j["state"] == "completed", 60, "a plain job completes")
    r = d.get("/api/v1/jobs/%d/record" % plain)
    check_eq(r.status, 409, "a job submitted without options.record has no record")
    check("options.record" in r.text, "and the answer says how to get one: %s" % r.text[:200])
    check_eq(d.get("/api/v1/jobs/999/record").status, 404, "no job, no record")
    r = d.post("/api/v1/jobs", tlib.puzzle_body("pentominoes-6x10.json", record=9))
    check_eq(r.status, 400, "a depth over 8 is refused at the door, as every bad option")
    check("record" in r.text, "naming the option: %s" % r.text[:200])
    for body, why in ((tlib.puzzle_body("pentominoes-6x10.json", record=8, goal=4),
                       "a depth that reaches a leaf"),
                      (tlib.puzzle_body("pentominoes-any7-6x6-optional-centre.json", record=2),
                       "a puzzle with count ranges and optional cells"),
                      (tlib.puzzle_body("pentominoes-6x10.json", record=2, limit=5),
                       "a limit")):
        jid = d.submit(body)["id"]
        j = d.wait_for(jid, lambda j: j["state"] in tlib.FINAL_STATES, 60, why)
        check(j["state"] == "failed" and "options.record" in (j["error"] or ""),
              "%s: the record job fails saying why (%s: %s)" % (why, j["state"], j["error"]))


def main(t):
    if not os.access(TESSERA, os.X_OK):
        raise tlib.Skip("no tessera binary beside %s" % tlib.BINARY)
    tmp = tempfile.mkdtemp(prefix="tsr-records-")
    path, rec = interrupted_run(t, tmp)
    verify(path, rec, tmp)
    refusals(t)


if __name__ == "__main__":
    tlib.run(main)
