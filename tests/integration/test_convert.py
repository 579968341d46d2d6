#!/usr/bin/env python3
"""POST /api/v1/convert?to=FORMAT (docs/api.md, "Convert a puzzle").

Every puzzle form the submit endpoint takes (a job with a puzzle, a bare
puzzle, polycube text, a BurrTools file's XML with its problem) is answered
as a file in each format with its Content-Type and a Content-Disposition
file name; the file read back (BurrTools' inflated, as the dashboard sends
it) is the same puzzle: /validate gives the same board and pieces, and a
job on it counts the published 480.  The writer is the one `tessera
convert` uses: the daemon's BurrTools file is byte for byte the CLI's.
Refusals: a format the puzzle cannot be written in is 422 naming the
piece and the rule; no or an unknown `to` is 400; a bad body is 400 with
its JSON path, as submit; a cross-site page (Origin) is 403 and a form's
Content-Type is 415 (the request-trust rules); only POST is allowed."""

import gzip
import json
import os
import subprocess
import tempfile

import tlib
from tlib import check, check_eq, check_error

SOMA = "soma-cube.json"


def cells(puzzle):
    """A validated puzzle's board and pieces, comparable across formats."""
    board = sorted(map(tuple, puzzle["board"]["cells"]))
    pieces = sorted((p["name"], len(p["cells"]), json.dumps(p["count"])) for p in puzzle["pieces"])
    return board, pieces


def main(t):
    d = t.daemon(threads=2)
    soma = tlib.load_puzzle(SOMA)
    want = cells(d.post("/api/v1/validate", {"puzzle": soma}).json["puzzle"])

    # each format from the job form, read back and validated
    types = {"json": "application/json", "polycube": "text/plain", "xmpuzzle": "application/gzip"}
    names = {"json": "Soma-cube.json", "polycube": "Soma-cube.txt", "xmpuzzle": "Soma-cube.xmpuzzle"}
    files = {}
    for fmt in ("json", "polycube", "xmpuzzle"):
        r = d.post("/api/v1/convert?to=" + fmt, {"puzzle": soma, "options": {"unique": "raw"}})
        check_eq(r.status, 200, "convert to %s: 200" % fmt, r.text[:300] if fmt != "xmpuzzle" else None)
        check((r.header("Content-Type") or "").startswith(types[fmt]),
              "convert to %s: Content-Type %s" % (fmt, types[fmt]), r.header("Content-Type"))
        check_eq(r.header("Content-Disposition"), 'attachment; filename="%s"' % names[fmt],
                 "convert to %s: a download named after the puzzle" % fmt)
        files[fmt] = r.body
    check(files["xmpuzzle"][:2] == b"\x1f\x8b", "the BurrTools file is gzip-compressed")
    xml = gzip.decompress(files["xmpuzzle"]).decode()
    check('<problem name="Soma cube" state="0">' in xml, "its problem is named after the puzzle", xml[:400])
    backs = {"json": {"puzzle": json.loads(files["json"])},
             "polycube": {"polycube": files["polycube"].decode()},
             "xmpuzzle": {"xmpuzzle": xml, "problem": 1}}
    for fmt, body in backs.items():
        r = d.post("/api/v1/validate", body)
        check_eq(r.status, 200, "the %s file validates" % fmt, r.text[:300])
        check_eq(cells(r.json["puzzle"]), want, "the %s file is the same board and pieces" % fmt)
    job = d.wait_final(d.submit({"xmpuzzle": xml, "options": {"unique": "rotations"}})["id"])
    check_eq(job["solutions"], 480, "a job on the daemon's BurrTools file counts 480")

    # the same bytes as tessera convert (one writer)
    cli = os.environ.get("TESSERA") or os.path.join(tlib.SRCDIR, "tessera")
    if os.access(cli, os.X_OK):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "soma.xmpuzzle")
            p = subprocess.run([cli, "convert", tlib.puzzle_path(SOMA), "-o", out], capture_output=True)
            check_eq(p.returncode, 0, "tessera convert exits 0", p.stderr)
            with open(out, "rb") as f:
                check(f.read() == files["xmpuzzle"], "the daemon's file is byte for byte the CLI's")

    # other forms: a bare puzzle, polycube text, a BurrTools problem by name
    r = d.post("/api/v1/convert?to=json", soma)
    check(r.status == 200 and cells(json.loads(r.body)) == want, "a bare puzzle converts", r.text[:300])
    r = d.post("/api/v1/convert?to=xmpuzzle", {"polycube": tlib.load_polycube("soma-cube.txt")})
    check(r.status == 200 and r.body[:2] == b"\x1f\x8b", "polycube text converts", r.text[:300] if r.status != 200 else None)
    check_eq(r.header("Content-Disposition"), 'attachment; filename="puzzle.xmpuzzle"',
             "an unnamed puzzle downloads as puzzle.xmpuzzle")
    corpus = os.path.join(tlib.SRCDIR, "tests", "fuzz", "corpus", "xmpuzzle", "soma.xml")
    with open(corpus) as f:
        two = f.read()
    r = d.post("/api/v1/convert?to=json", {"xmpuzzle": two, "problem": "Square"})
    check_eq(r.status, 200, "a BurrTools problem by name converts", r.text[:300])
    sq = json.loads(r.body)
    check(sq["board"].get("optional") == [[1, 1, 0]] and sq["pieces"][0]["count"] == [0, 3],
          "problem Square: its optional centre and its range", sq)

    # refusals
    onesided = tlib.load_puzzle("onesided-pentominoes-3x30.json")
    r = d.post("/api/v1/convert?to=xmpuzzle", {"puzzle": onesided})
    check_error(r, 422, "cannot be written as xmpuzzle: piece F", "\"rotations\": \"one-sided\"",
                what="one-sided pentominoes to BurrTools")
    r = d.post("/api/v1/convert?to=polycube", {"puzzle": tlib.load_puzzle("pentominoes-any5-5x5.json")})
    check_error(r, 422, "count range [0, 1]: a polycube definition has no ranges", what="ranges to polycube")
    r = d.post("/api/v1/convert", {"puzzle": soma})
    check_error(r, 400, "query parameter to: required", what="no to")
    r = d.post("/api/v1/convert?to=stl", {"puzzle": soma})
    check_error(r, 400, "query parameter to: expected json, polycube or xmpuzzle, got \"stl\"", what="to=stl")
    r = d.post("/api/v1/convert?to=json&limit=3", {"puzzle": soma})
    check_error(r, 400, "unknown query parameter \"limit\"", what="another parameter")
    r = d.post("/api/v1/convert?to=json", {"puzzle": {"version": 1, "board": {"size": [2, 2]},
                                                      "pieces": [{"name": "D", "rows": ["##"], "count": "2"}]}})
    check_error(r, 400, "$.puzzle.pieces[0].count", what="a bad body names its JSON path")
    r = d.post("/api/v1/convert?to=json", {"xmpuzzle": two, "problem": 7})
    check_error(r, 400, "problem 7: the file has 2 problems", what="a problem out of range")
    r = d.request("POST", "/api/v1/convert?to=json", {"puzzle": soma},
                  headers={"Origin": "http://evil.example"})
    check_eq(r.status, 403, "a cross-site page may not post to convert", r.text)
    r = d.request("POST", "/api/v1/convert?to=json", b"puzzle=x",
                  headers={"Content-Type": "application/x-www-form-urlencoded"})
    check_eq(r.status, 415, "a form post is refused (Content-Type)", r.text)
    r = d.get("/api/v1/convert?to=json")
    check_eq(r.status, 405, "GET convert: 405", r.text)
    check_eq(r.header("Allow"), "POST", "Allow: POST")


if __name__ == "__main__":
    tlib.run(main)
