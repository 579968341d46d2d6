#!/usr/bin/env python3
"""Placement diagnostics at the door (docs/api.md, "Where pieces fit").

A puzzle that can have no solution because a required piece fits nowhere
(an I-hexomino on a 4x4 board) or a required cell can be covered by no
piece (a cell cut off from the rest, with no monomino) is refused with 422
by /validate, submit and /estimate, with a message that names the piece or
the cell, and no job is created.  A piece that may stay out (count [0, 1])
and fits nowhere is a warning, not an error.  /validate's summary and
/estimate give each piece's placements: on the 6x10 the X pentomino fits in
(6-2)*(10-2) = 32 places and the I in 6*6 + 10*2 = 56 (counted by hand).
The CLI says the same: `tessera solve` exits 2 with the message, and
`tessera estimate --json` lists the pieces.  Colours (docs/puzzle-format.md,
"Colours") count: on a checkerboard of colours 1 and 2, a domino with ends 1
and 2 fits in 4 places when each end must sit on its own colour (2
tilings, whose solutions give each domino's colours as it lies) and
nowhere without the pairs, which the 422 says."""

import json
import os
import subprocess
import tempfile

import tlib
from tlib import check, check_eq, check_error

I6 = {"name": "I6 in a 4x4", "board": {"size": [4, 4]}, "pieces": [
    {"name": "I6", "rows": ["######"]},
    {"name": "O", "rows": ["##", "##"], "count": 2},
    {"name": "D", "rows": ["##"]}]}

# a 2x3 rectangle and a cell cut off at (5, 0): an L-tromino and two
# dominoes have the volume, but nothing covers a cell without neighbours
ISLAND = {"name": "island", "board": {"cells": [[x, y] for y in range(3) for x in range(2)] + [[5, 0]]},
          "pieces": [{"name": "L", "rows": ["##", "#."]}, {"name": "D", "rows": ["##"], "count": 2}]}

# dominoes on a 6x4 board, and a 7-long bar that may stay out
OPTIONAL = {"name": "optional bar", "board": {"size": [6, 4]}, "pieces": [
    {"name": "D", "rows": ["##"], "count": 12},
    {"name": "I7", "rows": ["#######"], "count": [0, 1]}]}


CHECKER = {"name": "coloured checkerboard", "board": {"rows": ["12", "21"]},
           "pieces": [{"name": "D", "rows": ["12"], "count": 2}],
           "colors": {"allow": [{"piece": 1, "board": 1}, {"piece": 2, "board": 2}]}}


def colours(d):
    r = d.post("/api/v1/validate", {"puzzle": CHECKER})
    check_eq(r.status, 200, "coloured checkerboard: validate answers 200", r.text)
    check_eq(r.json["summary"]["fits"]["pieces"][0]["placements"], 4,
             "the domino fits where its colours may sit: 4 places")
    bare = dict(CHECKER)
    del bare["colors"]
    r = d.post("/api/v1/validate", {"puzzle": bare})
    check_error(r, 422, "piece D fits nowhere on this 2x2 board with its colours",
                what="coloured dominoes without pairs")
    r = d.post("/api/v1/jobs", {"puzzle": CHECKER, "options": {"unique": "raw"}})
    check_eq(r.status, 201, "the coloured job is accepted", r.text)
    job = d.wait_final(r.json["id"])
    check_eq(job["solutions"], 2, "coloured checkerboard, raw: 2 tilings")
    board = {(0, 0): 1, (1, 0): 2, (0, 1): 2, (1, 1): 1}
    for s in d.all_solutions(job["id"]):
        on = [(p["colors"][i], board[tuple(c[:2])]) for p in s["pieces"] for i, c in enumerate(p["cells"])]
        check(all(a == b for a, b in on), "each domino's colours sit on their own colour", s)
    pz = d.get("/api/v1/jobs/%d/puzzle" % job["id"]).json
    check_eq(pz.get("colors"), CHECKER["colors"], "the stored puzzle keeps the allowed pairs")


def main(t):
    d = t.daemon(threads=2)
    colours(d)
    before = len(d.list_jobs())
    for path in ("/api/v1/validate", "/api/v1/jobs", "/api/v1/estimate"):
        r = d.post(path, {"puzzle": I6})
        check_error(r, 422, "piece I6 fits nowhere on this 4x4 board", what="I6 on 4x4: POST %s" % path)
        r = d.post(path, {"puzzle": ISLAND})
        check_error(r, 422, "board cell (5, 0)", "covered by no piece", what="island: POST %s" % path)
    check_eq(len(d.list_jobs()), before, "no job was created for them")

    r = d.post("/api/v1/validate", {"puzzle": OPTIONAL})
    check_eq(r.status, 200, "an optional piece that fits nowhere: validate answers 200", r.text)
    fits = r.json["summary"]["fits"]
    bar = [p for p in fits["pieces"] if p["piece"] == "I7"]
    check(bar and bar[0]["placements"] == 0 and bar[0]["copies"] == [0, 1],
          "validate: I7 has 0 placements and copies [0, 1]", fits)
    check(any("I7 fits nowhere" in w for w in fits["warnings"]), "validate warns about I7", fits)
    r = d.post("/api/v1/jobs", {"puzzle": OPTIONAL, "options": {"unique": "raw"}})
    check_eq(r.status, 201, "and the job is accepted", r.text)
    job = d.wait_final(r.json["id"])
    check_eq(job["solutions"], 281, "6x4 by dominoes, raw, without the bar: 281 tilings (the known count)")

    body = tlib.puzzle_body("pentominoes-6x10.json")
    r = d.post("/api/v1/validate", body)
    check_eq(r.status, 200, "6x10: validate answers 200", r.text)
    fits = {p["piece"]: p for p in r.json["summary"]["fits"]["pieces"]}
    check_eq(fits["X"]["placements"], 32, "6x10 validate: X fits in 32 places")
    check_eq(fits["I"]["placements"], 56, "6x10 validate: I fits in 56 places")
    check_eq(r.json["summary"]["fits"]["warnings"], [], "6x10 validate: no warnings")
    r = d.post("/api/v1/estimate", body)
    check_eq(r.status, 200, "6x10: estimate answers 200", r.text)
    fits = {p["piece"]: p for p in r.json["pieces"]}
    check(fits["X"]["placements"] == 32 and 1 <= fits["X"]["usable"] < 32,
          "6x10 estimate: X has 32 placements, fewer searched (the redundancy filter)", fits["X"])
    check(fits["I"]["usable"] <= fits["I"]["placements"] == 56, "6x10 estimate: I 56", fits["I"])

    cli = os.environ.get("TESSERA") or os.path.join(tlib.SRCDIR, "tessera")
    if not os.access(cli, os.X_OK):
        tlib.log("no tessera binary: CLI checks skipped")
        return
    with tempfile.TemporaryDirectory() as tmp:
        f = os.path.join(tmp, "i6.json")
        with open(f, "w") as fh:
            json.dump(I6, fh)
        out = subprocess.run([cli, "solve", f], capture_output=True, timeout=60)
        check_eq(out.returncode, 2, "tessera solve I6-on-4x4: exit 2", out.stderr)
        check("piece I6 fits nowhere on this 4x4 board" in out.stderr.decode(),
              "tessera solve names the piece", out.stderr)
        f = os.path.join(tmp, "bar.json")
        with open(f, "w") as fh:
            json.dump(OPTIONAL, fh)
        out = subprocess.run([cli, "solve", "-q", "--unique=raw", f], capture_output=True, timeout=60)
        check_eq(out.returncode, 0, "tessera solve optional bar: exit 0", out.stderr)
        check("warning: piece I7 fits nowhere" in out.stderr.decode(), "tessera solve warns", out.stderr)
        out = subprocess.run([cli, "estimate", "--json", "--seconds=0.2",
                              tlib.puzzle_path("pentominoes-6x10.json")], capture_output=True, timeout=60)
        check_eq(out.returncode, 0, "tessera estimate --json 6x10: exit 0", out.stderr)
        pieces = {p["piece"]: p for p in json.loads(out.stdout)["pieces"]}
        check_eq(pieces["X"]["placements"], 32, "tessera estimate --json: X 32 placements")


if __name__ == "__main__":
    tlib.run(main)
