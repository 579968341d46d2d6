#!/usr/bin/env python3
"""check.py - BurrTools loads what Tessera writes, and counts what Tessera counts.

    check.py TESSERA LOAD SRCDIR BURRTOOLS_SRC

TESSERA is the tessera binary, LOAD the program tests/burrtools/load.cpp
built against BurrTools' library (build.sh), SRCDIR Tessera's source tree,
BURRTOOLS_SRC BurrTools' (for its examples/).  For each case, Tessera
writes a BurrTools file (`tessera convert`), and BurrTools' own loader
reads it:

  - the shapes and the problem are the puzzle's: a part per mobile piece in
    order, with its name, its cells and its count or range; the result
    shape's filled voxels are the board's required cells (fixed pieces
    carved out), its variable voxels the optional cells;
  - BurrTools' assembler counts as many assemblies as Tessera counts
    solutions in the mode that docs/puzzle-format.md says gives BurrTools'
    assemblies: `rotations`, or `mirror` when the piece set is its own
    mirror image;
  - for BurrTools' own examples (read by Tessera, written back), BurrTools
    counts the original file and Tessera's the same.

Prints a line per case and exits 0 when every case agrees, 1 otherwise;
the files written are removed unless TSR_KEEP is set.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

# Library puzzles: (file under SRCDIR, the mode BurrTools' count is).
LIBRARY = [
    ("puzzles/soma-cube.json", "mirror"),            # mirror-closed: A and B twins
    ("puzzles/polycube/soma-cube.txt", "mirror"),    # the same from polycube text
    ("puzzles/soma-bathtub.json", "mirror"),
    ("puzzles/pentominoes-6x10.json", "rotations"),  # flat: turning over is a rotation
    ("puzzles/pentominoes-8x8-center-hole.json", "rotations"),
    ("puzzles/pentominoes-any5-5x5.json", "rotations"),                  # count ranges
    ("puzzles/pentominoes-any7-6x6-optional-centre.json", "rotations"),  # and optional cells
    ("puzzles/pentominoes-8x8-fixed-center.json", "rotations"),          # a fixed piece
    ("puzzles/l-trominoes-fixed-4x3.json", "rotations"),
    ("puzzles/dominoes-6x6.json", "rotations"),                          # a count of 18
]

# Puzzles made here for what the library lacks: (name, puzzle, mode).  The
# first two have only pieces that are their own mirror images, so their
# sets are mirror-closed and BurrTools' count is the mirror one.
GENERATED = [
    # names XML must escape, and UTF-8; a board off the origin
    ("escaped names", {
        "version": 1, "name": "Names: <V> & \"I\" caf\u00e9",
        "board": {"cells": [[x, y, z] for z in (-1, 0) for y in (3, 4) for x in (-2, -1)]},
        "pieces": [{"name": "V <&> \"\u00e9\"", "cells": [[0, 0, 0], [1, 0, 0], [0, 1, 0]], "count": 2},
                   {"name": "I'", "cells": [[0, 0, 0], [0, 0, 1]]}]}, "mirror"),
    # mirror images allowed, but every piece is its own: written, same count
    ("mirror, achiral pieces", {
        "version": 1, "name": "L-trominoes 3x3x2 with mirror",
        "board": {"size": [3, 2, 2]},
        "pieces": [{"name": "L", "rows": ["##", "#."], "count": 4}], "mirror": True}, "mirror"),
    # flat, one-sided with mirror images: every pentomino turns all ways
    ("flat one-sided + mirror", dict(json.load(open(os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "puzzles", "pentominoes-3x20.json"))),
        rotations="one-sided", mirror=True), "rotations"),
    # colours: each end of a domino on its own colour, a palette, a 3D
    # checkerboard (a 1-2 domino is its own mirror image: the mirror count)
    ("colours, flat checkerboard", {
        "version": 1, "name": "Coloured checkerboard",
        "colors": {"palette": ["#ff0000", "#0000ff"],
                   "allow": [{"piece": 1, "board": 1}, {"piece": 2, "board": 2}]},
        "board": {"rows": ["1212", "2121", "1212"]},
        "pieces": [{"name": "D", "rows": ["12"], "count": 6}]}, "rotations"),
    ("colours, 3D, one pair", {
        "version": 1, "name": "Coloured 2x2x3",
        "colors": {"allow": [{"piece": 1, "board": 1}]},
        "board": {"layers": [["12", "21"], ["21", "12"], ["12", "21"]]},
        "pieces": [{"name": "D", "rows": ["1#"], "count": 3},
                   {"name": "L", "rows": ["##", "#."], "count": 2}]}, "mirror"),
]

# BurrTools' cube-grid examples: (file, problem, mode), the mode the rule
# of docs/puzzle-format.md gives (the first three count the same in both).
EXAMPLES = [
    ("AlPackino.xmpuzzle", 1, "rotations"),
    ("CubeInCage.xmpuzzle", 1, "rotations"),
    ("PelikanBurr.xmpuzzle", 1, "rotations"),
    ("DemoMirrorParadox.xmpuzzle", 1, "mirror"),
    ("DemoMirrorParadox.xmpuzzle", 2, "mirror"),
    ("DemoPieceGenerator.xmpuzzle", 1, "mirror"),
    ("SolidSixPieceBurrs.xmpuzzle", 1, "mirror"),
    # colour constraints: read, written back with them, counted alike (84)
    ("DraculasDentalDesaster.xmpuzzle", 1, "rotations"),
]


def run(cmd, timeout=600):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def tessera_count(tessera, path, mode, problem=None):
    cmd = [tessera, "solve", "-q", "--json", "--no-progress", "--unique=" + mode, path]
    if problem is not None:
        cmd.insert(2, "--problem=%s" % problem)
    r = run(cmd)
    if r.returncode != 0:
        raise RuntimeError("tessera solve %s: %s" % (path, r.stderr.strip()))
    return json.loads(r.stdout)["solutions"]


def burrtools(load, path, problem=1):
    """BurrTools' view of a file: shapes, problems, the problem's assemblies."""
    r = run([load, path, str(problem)])
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip() or "load failed")
    out = {"shapes": [], "problems": [], "assemblies": None, "matrix_error": None}
    for line in r.stdout.splitlines():
        w = line.split()
        # a name is the rest of the line after "name " (load.cpp)
        name = line.split(" name ", 1)[1] if " name " in line else ""
        if w[0] == "shape":
            out["shapes"].append({"name": name, "box": w[2], "filled": int(w[4]),
                                  "variable": int(w[6])})
        elif w[0] == "problem":
            out["problems"].append({"name": name, "result": int(w[3]), "parts": []})
        elif w[0] == "part":
            out["problems"][-1]["parts"].append({"shape": int(w[3]), "min": int(w[5]),
                                                 "max": int(w[7])})
        elif w[0] == "assemblies":
            out["assemblies"] = int(w[1])
        elif w[0] == "matrix-error":
            out["matrix_error"] = line
    return out


def cell_set(cells):
    return {tuple(c) for c in cells}


def check_structure(model, bt):
    """The puzzle (Tessera's JSON, cells written out) against BurrTools' view.
    Returns a list of differences."""
    bad = []
    mobile = [p for p in model["pieces"] if not p.get("fixed")]
    if len(bt["problems"]) != 1:
        return ["%d problems, expected 1" % len(bt["problems"])]
    prob = bt["problems"][0]
    if model.get("name") and prob["name"] != model["name"]:
        bad.append("problem named %r, not %r" % (prob["name"], model["name"]))
    if len(prob["parts"]) != len(mobile):
        bad.append("%d parts for %d mobile pieces" % (len(prob["parts"]), len(mobile)))
    for part, piece in zip(prob["parts"], mobile):
        shape = bt["shapes"][part["shape"] - 1]
        count = piece["count"]
        lo, hi = (count, count) if isinstance(count, int) else count
        if shape["name"] != piece["name"]:
            bad.append("part %s named %r" % (piece["name"], shape["name"]))
        if shape["filled"] != len(piece["cells"]) or shape["variable"] != 0:
            bad.append("piece %s: %d cells in BurrTools" % (piece["name"], shape["filled"]))
        if (part["min"], part["max"]) != (lo, hi):
            bad.append("piece %s: count %s in BurrTools" % (piece["name"], (part["min"], part["max"])))
    board = cell_set(model["board"]["cells"])
    for p in model["pieces"]:
        if p.get("fixed"):
            board -= cell_set(p["cells"])
    optional = cell_set(model["board"].get("optional", []))
    result = bt["shapes"][prob["result"] - 1]
    if result["filled"] != len(board - optional) or result["variable"] != len(optional):
        bad.append("result shape: %d filled, %d variable; the board has %d required, %d optional"
                   % (result["filled"], result["variable"], len(board - optional), len(optional)))
    return bad


def as_json(tessera, path, problem=None):
    cmd = [tessera, "convert", "--to=json", path]
    if problem is not None:
        cmd.insert(2, "--problem=%s" % problem)
    r = run(cmd)
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip())
    return json.loads(r.stdout)


def main():
    tessera, load, srcdir, btsrc = sys.argv[1:5]
    work = tempfile.mkdtemp(prefix="tessera-burrtools-")
    failures = 0
    print("%-52s %-9s %10s %10s  %s" % ("case", "mode", "tessera", "burrtools", "result"))

    def report(case, mode, ours, theirs, problems):
        nonlocal failures
        ok = not problems and ours == theirs
        failures += not ok
        print("%-52s %-9s %10s %10s  %s" % (case, mode, ours, theirs,
                                             "ok" if ok else "DIFFERS: " + "; ".join(problems)))

    for rel, mode in LIBRARY:
        src = os.path.join(srcdir, rel)
        out = os.path.join(work, os.path.basename(rel).rsplit(".", 1)[0] + ".xmpuzzle")
        r = run([tessera, "convert", src, "-o", out])
        if r.returncode != 0:
            report(rel, mode, "-", "-", ["tessera convert: " + r.stderr.strip()])
            continue
        with open(out, "rb") as f:
            magic = f.read(2)
        problems = [] if magic == b"\x1f\x8b" else ["not gzip-compressed"]
        try:
            bt = burrtools(load, out)
            problems += check_structure(as_json(tessera, src), bt)
            ours = tessera_count(tessera, out, mode)
            if ours != tessera_count(tessera, src, mode):
                problems.append("Tessera counts the written file differently from the original")
            report(rel, mode, ours, bt["assemblies"], problems)
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            report(rel, mode, "-", "-", [str(e)])

    for name, puzzle, mode in GENERATED:
        src = os.path.join(work, name.replace(" ", "-").replace(",", "") + ".json")
        with open(src, "w") as f:
            json.dump(puzzle, f)
        out = src[:-5] + ".xmpuzzle"
        r = run([tessera, "convert", src, "-o", out])
        if r.returncode != 0:
            report(name, mode, "-", "-", ["tessera convert: " + r.stderr.strip()])
            continue
        try:
            bt = burrtools(load, out)
            model = as_json(tessera, src)
            problems = check_structure(model, bt)
            ours = tessera_count(tessera, out, mode)
            if ours != tessera_count(tessera, src, mode):
                problems.append("Tessera counts the written file differently from the original")
            report(name, mode, ours, bt["assemblies"], problems)
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            report(name, mode, "-", "-", [str(e)])

    for name, problem, mode in EXAMPLES:
        orig = os.path.join(btsrc, "examples", name)
        case = "examples/%s problem %d" % (name, problem)
        if not os.path.exists(orig):
            report(case, mode, "-", "-", ["no such example in " + btsrc])
            continue
        out = os.path.join(work, "%s-%d.xmpuzzle" % (name.rsplit(".", 1)[0], problem))
        r = run([tessera, "convert", "--problem=%d" % problem, orig, "-o", out])
        if r.returncode != 0:
            report(case, mode, "-", "-", ["tessera convert: " + r.stderr.strip()])
            continue
        try:
            theirs = burrtools(load, orig, problem)["assemblies"]
            bt = burrtools(load, out)
            problems = check_structure(as_json(tessera, orig, problem), bt)
            ours = tessera_count(tessera, out, mode)
            if bt["assemblies"] != theirs:
                problems.append("BurrTools counts Tessera's file %s, its own %s"
                                % (bt["assemblies"], theirs))
            if tessera_count(tessera, orig, mode, problem) != ours:
                problems.append("Tessera counts the written file differently from the original")
            report(case, mode, ours, bt["assemblies"], problems)
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            report(case, mode, "-", "-", [str(e)])

    print("%d case%s differ" % (failures, "" if failures == 1 else "s") if failures
          else "every case agrees")
    if os.environ.get("TSR_KEEP"):
        print("the files are in " + work)
    else:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
