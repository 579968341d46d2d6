#!/usr/bin/env python3
"""Batches of jobs: POST /api/v1/batches, GET /api/v1/batches[/{id}] and
`tessera batch submit|show|list`, on a real daemon.

The hole variants are checked against the solver itself: the 12
pentominoes on an 8x8 board with a 2x2 hole, one job per symmetry class of
the hole's position (10 classes), must add up to the count of Scott's 8x8
puzzle (the square tetromino as a 13th piece, anywhere), solved as one job;
and the 9 single-cell holes of a 3x3 board (every position, raw counts)
to the tilings of the whole board by 4 dominoes and a monomino.  Bad
batches are refused naming the member and create nothing; a batch outlives
a restart."""

import copy
import json
import os
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tlib  # noqa: E402
from tlib import check, check_eq, check_error, log  # noqa: E402


def wait_batch(d, bid, timeout=180):
    r = None
    for _ in range(int(timeout * 10 * tlib.SCALE)):
        r = d.get("/api/v1/batches/%d" % bid)
        if r.status == 200 and r.json["done"]:
            return r.json
        tlib.time.sleep(0.1)
    check(False, "batch %d finishes" % bid, r.text if r else None, fatal=True)


def pentominoes_8x8():
    scott = tlib.load_puzzle("pentominoes-scott-8x8.json")
    p = copy.deepcopy(scott)
    p["pieces"] = [x for x in p["pieces"] if x["name"] != "O"]
    p["name"] = "Pentominoes 8x8"
    p.pop("description", None)
    return scott, p


def hole_variants(d):
    scott, board = pentominoes_8x8()
    whole = d.submit({"puzzle": scott, "options": {"store": "none"}})
    r = d.post("/api/v1/batches", {"name": "8x8, a 2x2 hole", "puzzle": board,
                                   "options": {"store": 0},
                                   "variants": {"hole": {"rows": ["##", "##"]},
                                                "up_to_symmetry": True}})
    check(r.status == 201, "a batch of variants answers 201", r.text, fatal=True)
    b = r.json
    check_eq(r.header("Location"), "/api/v1/batches/%d" % b["id"], "Location names the batch")
    # 49 positions of a 2x2 square in 8x8, 10 classes under the square's 8 symmetries
    check_eq(b["jobs"], 10, "one job per symmetry class of the hole's position")
    names = sorted(m["name"] for m in b["members"])
    check(all(n.startswith("Pentominoes 8x8, hole at (") for n in names), "members are named by the hole",
          names)
    done = wait_batch(d, b["id"])
    check_eq(done["states"]["completed"], 10, "every member completed", done["states"])
    whole = d.wait_final(whole["id"])
    check_eq(done["solutions"], whole["solutions"],
             "the classes' counts add up to Scott's 8x8 solved as one job")
    counts = [m["solutions"] for m in done["members"]]
    check_eq(counts, sorted(counts), "members come fewest solutions first")
    centre = [m for m in done["members"] if m["name"].endswith("hole at (3, 3)")]
    check(len(centre) == 1 and centre[0]["solutions"] == tlib.expected("pentominoes-8x8-center-hole.json",
                                                                       "rotations"),
          "the centre hole has Scott's 65", centre)
    m = done["members"][0]
    check_eq(d.job(m["id"])["batch"], b["id"], "a member's job object names its batch")
    pz = d.get("/api/v1/jobs/%d/puzzle" % m["id"]).json
    check_eq(len(pz["board"]["cells"]), 60, "a member's board is the 8x8 less the hole")
    return b["id"], whole["solutions"]


def every_position(d):
    """Every position (no symmetry), raw counts: the sum is the raw count of the
    whole board with the hole as a piece."""
    board = {"name": "3x3", "board": {"size": [3, 3]},
             "pieces": [{"name": "D", "rows": ["##"], "count": 4}]}
    whole = copy.deepcopy(board)
    whole["pieces"].append({"name": "M", "rows": ["#"]})
    w = d.submit({"puzzle": whole, "options": {"unique": "raw"}})
    r = d.post("/api/v1/batches", {"puzzle": board, "options": {"unique": "raw"},
                                   "variants": {"hole": "each-cell", "up_to_symmetry": False}})
    check(r.status == 201, "each-cell, every position: 201", r.text, fatal=True)
    check_eq(r.json["jobs"], 9, "9 positions of a cell in 3x3")
    done = wait_batch(d, r.json["id"])
    w = d.wait_final(w["id"])
    check_eq(done["solutions"], w["solutions"], "every position's raw counts add up to the whole's")
    r = d.post("/api/v1/batches", {"puzzle": board, "variants": {"hole": "each-cell"}})
    check_eq(r.json.get("jobs"), 3, "up to symmetry (the default): corner, edge, centre")


def coloured_variants(d):
    """A coloured board's holes: up to the symmetries that keep its colouring
    (docs/puzzle-format.md, "Colours"), and each member keeps the colours."""
    board = {"name": "3x3, one coloured corner", "board": {"rows": ["1..", "...", "..."]},
             "pieces": [{"name": "D", "rows": ["##"], "count": 4}]}
    r = d.post("/api/v1/batches", {"puzzle": board, "variants": {"hole": "each-cell"}})
    check(r.status == 201, "a coloured board's holes: 201", r.text, fatal=True)
    # only the diagonal flip keeps colour 1 at (0, 0): 3 cells on the
    # diagonal alone, 3 pairs across it
    check_eq(r.json["jobs"], 6, "holes up to the symmetries that keep the colouring")
    done = wait_batch(d, r.json["id"])
    for m in done["members"]:
        pz = d.get("/api/v1/jobs/%d/puzzle" % m["id"]).json
        b = pz["board"]
        colored = [c for c, k in zip(b["cells"], b.get("colors", [])) if k]
        check_eq(len(b["cells"]), 8, "a member's board is the 3x3 less its hole")
        check(colored == [[0, 0, 0]] or (colored == [] and "(0, 0)" in m["name"]),
              "a member's board keeps the corner's colour", (m["name"], b))


def job_list(d):
    centre = tlib.load_puzzle("pentominoes-8x8-center-hole.json")
    r = d.post("/api/v1/batches", {"name": "uniqueness", "jobs": [
        {"puzzle": centre, "options": {"limit": 2}},
        tlib.load_puzzle("pentominoes-6x10.json"),
        {"puzzle": tlib.load_puzzle("soma-cube.json"), "options": {"limit": 2}}]})
    check(r.status == 201, "a list of jobs answers 201", r.text, fatal=True)
    done = wait_batch(d, r.json["id"])
    by_name = {m["name"]: m for m in done["members"]}
    c = by_name.get(centre["name"], {})
    check(c.get("solutions") == 2 and c.get("limit_reached") is True,
          "a member stopped at its limit of 2", c)
    six = by_name.get("Pentominoes 6x10", {})
    check_eq(six.get("solutions"), tlib.expected("pentominoes-6x10.json", "rotations"),
             "a member without options counts all")
    return r.json["id"]


def refusals(d):
    before_jobs = len(d.list_jobs())
    before = d.get("/api/v1/batches").json["batches"]
    pz = tlib.load_puzzle("pentominoes-6x10.json")
    _, board = pentominoes_8x8()
    check_error(d.post("/api/v1/batches", b""), 400, "empty", what="empty body")
    check_error(d.post("/api/v1/batches", b"{"), 400, "not valid JSON", what="not JSON")
    check_error(d.post("/api/v1/batches", {"jobs": []}), 400, "$.jobs", what="no jobs")
    check_error(d.post("/api/v1/batches", {"jobs": [pz] * 1001}), 422, "1000", what="1001 jobs")
    check_error(d.post("/api/v1/batches", {"jobs": [pz, {"puzzle": pz, "options": {"limit": "x"}}]}),
                400, "$.jobs[1].options.limit", what="a bad member, named")
    check_error(d.post("/api/v1/batches", {"jobs": [pz, 3]}), 400, "$.jobs[1]", what="a member not an object")
    check_error(d.post("/api/v1/batches", {"jobs": [pz], "frob": 1}), 400, "$.frob", what="unknown member")
    check_error(d.post("/api/v1/batches", {"jobs": [pz], "name": 7}), 400, "$.name", what="bad name")
    check_error(d.post("/api/v1/batches", {"puzzle": board}), 400, "variants", what="puzzle without variants")
    check_error(d.post("/api/v1/batches", {"puzzle": board, "variants": {"hole": "each-row"}}), 400,
                "$.variants.hole", what="unknown hole")
    check_error(d.post("/api/v1/batches", {"puzzle": board, "variants": {"hole": {"rows": ["#x"]}}}), 400,
                "$.variants.hole.rows[0]", what="bad hole rows")
    check_error(d.post("/api/v1/batches", {"puzzle": board, "variants": {"hole": "each-cell",
                                                                         "up_to_symmetry": 1}}),
                400, "up_to_symmetry", what="bad up_to_symmetry")
    check_error(d.post("/api/v1/batches", {"puzzle": board, "variants": {"hole": "each-cell"}}), 422,
                "with the hole (1 cell)", "61 cells", what="a hole that leaves the wrong volume")
    check_error(d.post("/api/v1/batches", {"puzzle": board, "variants": {"hole": {"rows": ["#" * 9]}}}),
                422, "$.variants", what="a hole that fits nowhere")
    hexes = {"lattice": "hexagonal", "board": {"size": [3, 3]},
             "pieces": [{"name": "m", "cells": [[0, 0]], "count": 8}]}
    check_error(d.post("/api/v1/batches", {"puzzle": hexes, "variants": {"hole": "each-cell"}}), 422,
                "$.puzzle.lattice", "cubic lattice only", what="hole variants on the hexagonal lattice")
    check_error(d.get("/api/v1/batches/99"), 404, "no batch 99", what="unknown batch")
    check_error(d.get("/api/v1/batches/abc"), 404, "no batch abc", what="batch id not a number")
    check_error(d.get("/api/v1/batches?frob=1"), 400, "frob", what="unknown parameter")
    r = d.delete("/api/v1/batches/1")
    check_eq(r.status, 405, "DELETE on a batch is 405")
    check_eq(len(d.list_jobs()), before_jobs, "refused batches created no job")
    check_eq(d.get("/api/v1/batches").json["batches"], before, "refused batches created no batch")


def cli(d, bid, total):
    exe = os.environ.get("TESSERA") or os.path.join(tlib.SRCDIR, "tessera")
    if not os.access(exe, os.X_OK):
        log("no tessera binary at %s: CLI checks skipped" % exe)
        return
    env = dict(os.environ, TESSERA_SERVER="http://%s:%d" % (d.host, d.port))

    def run(*argv):
        p = subprocess.run([exe] + list(argv), capture_output=True, timeout=60, env=env)
        return p.returncode, p.stdout.decode(), p.stderr.decode()

    rc, out, err = run("batch", "list")
    check(rc == 0 and "8x8, a 2x2 hole" in out and str(total) in out, "tessera batch list", out + err)
    rc, out, err = run("batch", "show", str(bid))
    lines = [l for l in out.splitlines() if "hole at" in l]
    check(rc == 0 and len(lines) == 10 and "10 completed" in out, "tessera batch show: 10 members", out + err)
    rc, out, err = run("batch", "show", "--json", str(bid))
    check(rc == 0 and json.loads(out)["solutions"] == total, "tessera batch show --json", out + err)
    tmp = tlib.tempfile.mkdtemp(prefix="tsr-batch-")
    path = os.path.join(tmp, "3x3.json")
    with open(path, "w") as f:
        json.dump({"name": "3x3", "board": {"size": [3, 3]},
                   "pieces": [{"name": "D", "rows": ["##"], "count": 4}]}, f)
    rc, out, err = run("batch", "submit", "--name=cli holes", "--hole=each-cell", "--unique=raw", path)
    check(rc == 0 and out.strip().isdigit(), "tessera batch submit --hole prints the batch id", out + err)
    if rc == 0:
        b = d.get("/api/v1/batches/%s" % out.strip()).json
        check(b["name"] == "cli holes" and b["jobs"] == 3 and
              all(m["options"].get("unique") == "raw" for m in b["members"]),
              "the batch has its name, 3 classes and the job options", b)
    rc, out, err = run("batch", "submit", "--limit=2", tlib.puzzle_path("pentominoes-6x10.json"),
                       tlib.puzzle_path("pentominoes-5x12.json"))
    check(rc == 0 and d.get("/api/v1/batches/%s" % out.strip()).json["jobs"] == 2,
          "tessera batch submit FILE FILE: a batch of two", out + err)
    rc, out, err = run("batch", "submit", "--hole=each-cell", path, path)
    check(rc == 2 and "one puzzle file" in err, "--hole with two files is a usage error", err)
    rc, out, err = run("batch", "submit", "--hole=ab", path)
    check(rc == 2 and "--hole" in err, "a bad --hole is a usage error", err)
    rc, out, err = run("batch", "show", "999")
    check(rc == 2 and "no batch 999" in err, "tessera batch show of no batch: exit 2, the daemon's words", err)
    rc, out, err = run("batch", "frob")
    check(rc == 2 and "submit, show or list" in err, "an unknown batch command", err)
    shutil_rm(tmp)


def shutil_rm(p):
    import shutil
    shutil.rmtree(p, ignore_errors=True)


def main(t):
    d = t.daemon(threads=2)
    bid, total = hole_variants(d)
    every_position(d)
    coloured_variants(d)
    job_list(d)
    refusals(d)
    cli(d, bid, total)
    d.restart()
    b = d.get("/api/v1/batches/%d" % bid).json
    check(b.get("jobs") == 10 and b.get("finished") == 10 and b.get("solutions") == total and b.get("done") is True,
          "a batch and its members' counts outlive a restart", b)
    page = d.get("/api/v1/batches?limit=1").json
    check(len(page["batches"]) == 1 and page["next"] == page["batches"][0]["id"], "the list pages", page)


if __name__ == "__main__":
    tlib.run(main)
