#!/usr/bin/env python3
"""tesserad API round trip: health, submit, poll, solutions (JSON and text,
paging), job list paging and filters, metrics, puzzle library, the job
options' list (GET /api/v1/options) against what the reader takes, raw mode,
polycube text jobs, bare puzzle bodies and solution limits.

Every count is compared with the "expected" counts published in puzzles/*.json."""

import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tlib  # noqa: E402
from tlib import check, check_eq, log  # noqa: E402

P610 = "pentominoes-6x10.json"


def sol_key(sol):
    return frozenset((p["name"], frozenset(tuple(c) for c in p["cells"])) for p in sol["pieces"])


def cli_status(d, job):
    """`tessera status ID` and `watch ID` of a job its limit stopped: the limit
    and the fraction reached, no time left and an average rate (not "eta ?" and
    "0 nodes/s"); --server given before the command."""
    cli = os.environ.get("TESSERA") or os.path.join(tlib.SRCDIR, "tessera")
    if not os.access(cli, os.X_OK):
        log("no tessera binary at %s: CLI checks skipped" % cli)
        return
    server = "--server=http://%s:%d" % (d.host, d.port)
    pct = tlib.fraction_text(job["progress"]["fraction"])
    for argv in ([cli, server, "status", str(job["id"])], [cli, "watch", server, str(job["id"])]):
        out = subprocess.run(argv, capture_output=True, timeout=60)
        text = out.stdout.decode()
        what = " ".join(argv[1:3])
        check_eq(out.returncode, 0, "tessera %s: exit 0" % what, out.stderr)
        check("stopped at its limit of 100 solutions after %s of the search" % pct in text,
              "tessera %s: says the limit stopped it, and where" % what, text)
        check("eta" not in text and " 0 nodes/s" not in text and "nodes/s on average" in text,
              "tessera %s: a finished job has no eta and an average rate" % what, text)


def rect_symmetries(size):
    """The rotations/reflections of an X x Y (x Z) box that map it onto itself, as
    functions on (x, y, z). For a 2D board (Z == 1) the reflections are rotations in
    space, so these are the symmetries the 'rotations' mode divides by."""
    X, Y, Z = size
    fs = [lambda c: c,
          lambda c: (X - 1 - c[0], Y - 1 - c[1], c[2]),
          lambda c: (X - 1 - c[0], c[1], c[2]),
          lambda c: (c[0], Y - 1 - c[1], c[2])]
    if X == Y:
        fs += [lambda c: (c[1], c[0], c[2]),
               lambda c: (Y - 1 - c[1], X - 1 - c[0], c[2]),
               lambda c: (Y - 1 - c[1], c[0], c[2]),
               lambda c: (c[1], X - 1 - c[0], c[2])]
    return fs


def canon(sol, syms):
    """Canonical form of a solution under board symmetries, ignoring piece names
    (identical pieces may swap) but keeping them as labels of shapes."""
    forms = []
    for f in syms:
        forms.append(tuple(sorted((p["name"], tuple(sorted(f(tuple(c)) for c in p["cells"])))
                                  for p in sol["pieces"])))
    return min(forms)


def check_cover(sols, board, piece_names, what):
    """Each solution covers every board cell exactly once with the puzzle's pieces."""
    bad = None
    for s in sols:
        cells = [tuple(c) for p in s["pieces"] for c in p["cells"]]
        names = sorted(p["name"] for p in s["pieces"])
        if len(cells) != len(board) or set(cells) != board or names != piece_names:
            bad = s
            break
        if any(len(c) != 3 or not all(isinstance(v, int) for v in c) for c in cells):
            bad = s
            break
    check(bad is None, "%s: all %d solutions cover the %d board cells exactly once with pieces %s"
          % (what, len(sols), len(board), "".join(piece_names) if len(piece_names) < 20 else len(piece_names)), bad)


def job_options(d):
    """GET /api/v1/options lists what the reader takes: every option's
    bounds and named values pass validation, one past a bound or a value of
    the wrong type is a 400 naming the option's path and what it accepts."""
    r = d.get("/api/v1/options")
    check_eq(r.status, 200, "GET /api/v1/options status")
    check(r.header("Content-Type", "").startswith("application/json"), "options list is JSON",
          r.header("Content-Type"))
    doc = r.json
    modes = doc.get("counting_modes", [])
    check_eq([m["name"] for m in modes], ["raw", "rotations", "mirror"], "the counting modes, in order")
    check(all(m.get("text") for m in modes) and "turned over" in modes[1]["text"],
          "each counting mode says what it identifies; rotations: a flat board turned over", modes)
    opts = doc.get("options", [])
    names = [o["name"] for o in opts]
    check({"unique", "limit", "threads", "priority", "store", "fila", "order", "nof", "volume",
           "parity", "redundancy"} <= set(names), "the list has the options docs/api.md names", names)
    puzzle = {"board": {"size": [2, 2]}, "pieces": [{"name": "D", "rows": ["##"]},
                                                    {"name": "E", "rows": ["##"]}]}

    def validate(name, value):
        return d.post("/api/v1/validate", {"puzzle": puzzle, "options": {name: value}})

    for o in opts:
        for k in ("kind", "group", "daemon_only", "default", "accepts", "cli", "help"):
            check(k in o, "option %s has %r" % (o["name"], k), o)
        good = [c["value"] for c in o.get("choices", [])]
        if "integer" in o:
            good += [o["integer"]["min"], o["integer"]["max"]]
        if o["kind"] == "order":
            good.append("s")
        if o["kind"] == "piece":
            good.append("D")
        check(good, "option %s: the list says what it takes" % o["name"], o)
        for v in good:
            r = validate(o["name"], v)
            # 422: the engine's own refusal of a sound value (a goal beyond the pieces)
            check(r.status == 200 or (r.status == 422 and "$." not in r.text),
                  "option %s: %r is read" % (o["name"], v), r.text[:300])
        bad = [{}]
        if "integer" in o and o["integer"]["min"] > -2**63:
            bad.append(o["integer"]["min"] - 1)
        if "integer" in o and o["integer"]["max"] < 2**63 - 1:
            bad.append(o["integer"]["max"] + 1)
        for v in bad:
            r = validate(o["name"], v)
            msg = (r.json or {}).get("error", {}).get("message", "")
            check(r.status == 400 and ("$.options.%s: expected %s" % (o["name"], o["accepts"])) in msg,
                  "option %s: %r is refused, naming the path and what it accepts" % (o["name"], v),
                  (r.status, msg))
    r = validate("speed", 1)
    msg = (r.json or {}).get("error", {}).get("message", "")
    check(r.status == 400 and all('"%s"' % n in msg for n in names),
          "an unknown option is refused with the list's names", msg)


def main(t):
    d = t.daemon(threads=2)

    # ---- health ------------------------------------------------------------
    r = d.get("/healthz")
    check_eq(r.status, 200, "GET /healthz status")
    check(r.header("Content-Type", "").startswith("application/json"), "healthz is JSON", r.header("Content-Type"))
    h = r.json
    check_eq(h.get("status"), "ok", "healthz status")
    check(isinstance(h.get("version"), str) and re.match(r"^\d+\.\d+", h["version"]), "healthz version is a version string", h)
    check(isinstance(h.get("engine_version"), int) and h["engine_version"] >= 1, "healthz engine_version is a positive integer", h)
    check(isinstance(h.get("jobs"), dict) and all(isinstance(h["jobs"].get(s), int) for s in tlib.ALL_STATES),
          "healthz jobs counts every state", h)
    check_eq(sum(h["jobs"].values()), 0, "healthz: a fresh daemon has no jobs")
    check_eq(h.get("threads"), 2, "healthz threads == --threads 2")

    # ---- submit 6x10 ---------------------------------------------------------
    pz = tlib.load_puzzle(P610)
    exp = pz["expected"]
    r = d.post("/api/v1/jobs", {"puzzle": pz, "options": {"unique": "rotations"}})
    check_eq(r.status, 201, "submit 6x10 status")
    j = r.json
    jid = j.get("id")
    check(isinstance(jid, int) and jid > 0, "job id is a positive integer", j)
    check_eq(r.header("Location"), "/api/v1/jobs/%d" % jid, "Location header")
    for k in ("id", "name", "state", "priority", "created", "updated", "solutions", "progress", "threads",
              "options", "config", "puzzle", "error"):
        check(k in j, "job object has field %r" % k, j)
    check(j["state"] in ("queued", "running", "completed"), "new job state is queued/running/completed", j["state"])
    for k in ("fraction", "nodes", "rate", "eta_s"):
        check(k in j["progress"], "progress has %r" % k, j["progress"])
    check(0 <= j["progress"]["fraction"] <= 1, "fraction in [0,1]", j["progress"])
    check(isinstance(j["created"], int) and isinstance(j["updated"], int) and j["updated"] >= j["created"] > 1.5e9,
          "created/updated are unix seconds, updated >= created", (j["created"], j["updated"]))
    check_eq(j["options"].get("unique"), "rotations", "options.unique echoed")
    check_eq(j["options"].get("limit"), 0, "options.limit default 0")
    check_eq(j["name"], pz["name"], "job name is the puzzle name")
    check_eq(j["puzzle"].get("cells"), 60, "puzzle summary cells")
    check_eq(j["puzzle"].get("pieces"), 12, "puzzle summary pieces")
    check_eq(j["puzzle"].get("dimensions"), 2, "puzzle summary dimensions")
    check_eq(j["puzzle"].get("expected"), exp, "puzzle summary expected counts")
    check(j["error"] is None, "error is null", j["error"])

    j = d.wait_state(jid, "completed", timeout=60)
    check_eq(j["solutions"], exp["rotations"], "6x10 rotations solutions == published count")
    check(j["progress"]["fraction"] == 1 and isinstance(j["progress"]["fraction"], (int, float)),
          "completed: fraction exactly 1", j["progress"])
    check(isinstance(j["progress"]["nodes"], int) and j["progress"]["nodes"] > 0, "completed: nodes > 0", j["progress"])
    check_eq(j["progress"]["rate"], 0, "completed: rate is 0 (not running)")
    check_eq(j["threads"], 0, "completed: threads 0")
    check(isinstance(j["config"], str) and j["config"], "completed: config is a string", j["config"])
    levels = (j.get("stats") or {}).get("levels")
    check(isinstance(levels, list) and levels and all({"pieces_left", "attempts", "fits"} <= set(lv) for lv in levels),
          "GET job has stats.levels with pieces_left/attempts/fits", j.get("stats"))
    check_eq([lv["pieces_left"] for lv in levels], list(range(12, 0, -1)),
             "stats.levels: 12 pieces left down to 1 (nothing is placed with none left)")
    check_eq(j["limit_reached"], False, "a search that ran to its end did not reach a limit")
    check(j["error"] is None, "completed: error null", j["error"])

    # ---- solutions paging ---------------------------------------------------
    total = exp["rotations"]
    for lim in (250, 1000, 7):
        seqs = []
        sols = []
        after = 0
        pages = 0
        while True:
            r = d.get("/api/v1/jobs/%d/solutions?after=%d&limit=%d" % (jid, after, lim))
            if r.status != 200:
                raise tlib.Failure("solutions page answered %r" % r)
            page = r.json
            pages += 1
            ps = page["solutions"]
            if len(ps) > lim:
                raise tlib.Failure("page holds %d > limit %d" % (len(ps), lim))
            if ps and not all(s["seq"] > after for s in ps):
                raise tlib.Failure("page after=%d holds seq <= after: %r" % (after, [s["seq"] for s in ps][:10]))
            if len(ps) == lim:
                if page["next"] != ps[-1]["seq"]:
                    raise tlib.Failure("full page: next=%r, want last seq %r" % (page["next"], ps[-1]["seq"]))
            else:
                if page["next"] is not None:
                    raise tlib.Failure("short page (%d < %d): next=%r, want null" % (len(ps), lim, page["next"]))
            seqs += [s["seq"] for s in ps]
            sols += ps
            if page["next"] is None:
                break
            after = page["next"]
        check(all(a < b for a, b in zip(seqs, seqs[1:])), "limit=%d: seq strictly increasing over %d pages" % (lim, pages))
        check_eq(len(seqs), total, "limit=%d: paging walks every solution exactly once" % lim)
        check_eq(pages, total // lim + 1, "limit=%d: number of pages (next null only on the short page)" % lim)
    # past the end
    r = d.get("/api/v1/jobs/%d/solutions?after=%d&limit=10" % (jid, seqs[-1]))
    check(r.status == 200 and r.json["solutions"] == [] and r.json["next"] is None,
          "after=last seq: empty page, next null", r)
    # default limit is 100
    r = d.get("/api/v1/jobs/%d/solutions" % jid)
    check(r.status == 200 and len(r.json["solutions"]) == 100 and r.json["next"] == r.json["solutions"][-1]["seq"],
          "default page: 100 solutions, next = last seq", r)
    # a middle cursor continues exactly after it
    mid = seqs[1234]
    r = d.get("/api/v1/jobs/%d/solutions?after=%d&limit=5" % (jid, mid))
    check_eq([s["seq"] for s in r.json["solutions"]], seqs[1235:1240], "after=<middle seq> continues right after it")

    board = tlib.board_cells(pz)
    check_eq(len(board), 60, "6x10 board has 60 cells")
    names = sorted(p["name"] for p in pz["pieces"])
    check_cover(sols, board, names, "6x10 rotations")
    keys = {sol_key(s) for s in sols}
    check_eq(len(keys), total, "6x10 rotations: solutions pairwise different")
    syms = rect_symmetries(pz["board"]["size"] + [1])
    canons = {canon(s, syms) for s in sols}
    check_eq(len(canons), total, "6x10 rotations: no two solutions are rotations/reflections of each other")

    # ---- text format ------------------------------------------------------
    r = d.get("/api/v1/jobs/%d/solutions?format=text&limit=3" % jid)
    check_eq(r.status, 200, "format=text status")
    check(r.header("Content-Type", "").startswith("text/plain"), "format=text is text/plain", r.header("Content-Type"))
    blocks = re.split(r"^# solution (\d+)\n", r.text, flags=re.M)
    check_eq(blocks[0], "", "text starts with '# solution N'")
    tseqs = [int(x) for x in blocks[1::2]]
    check_eq(tseqs, seqs[:3], "text blocks are the first 3 seqs")
    for seq, body, js in zip(tseqs, blocks[2::2], sols[:3]):
        rows = [ln.split() for ln in body.split("\n") if ln.strip()]
        check(len(rows) == 6 and all(len(rw) == 10 for rw in rows), "solution %d text grid is 10x6" % seq, body)
        cellname = {tuple(c[:2]): p["name"] for p in js["pieces"] for c in p["cells"]}
        down = all(rows[y][x] == cellname[(x, y)] for y in range(6) for x in range(10))
        up = all(rows[5 - y][x] == cellname[(x, y)] for y in range(6) for x in range(10))
        check(down or up, "solution %d text grid shows the same placement as the JSON" % seq, (body, js))
        check(body.endswith("\n\n"), "solution %d text block ends with a blank line" % seq, repr(body[-20:]))
    r = d.get("/api/v1/jobs/%d/solutions?format=text&limit=2&after=%d" % (jid, seqs[-2]))
    check_eq([int(x) for x in re.findall(r"^# solution (\d+)$", r.text, flags=re.M)], seqs[-1:],
             "format=text honours after")

    # ---- raw mode ---------------------------------------------------------
    jraw = d.submit({"puzzle": pz, "options": {"unique": "raw"}})
    jr = d.wait_state(jraw["id"], "completed", timeout=90)
    check_eq(jr["solutions"], exp["raw"], "6x10 raw solutions == published raw count")
    check_eq(jr["options"]["unique"], "raw", "raw job options.unique")
    rsols = d.all_solutions(jraw["id"])
    check_eq(len(rsols), exp["raw"], "raw job: solutions pages hold every solution")
    check_eq(len({sol_key(s) for s in rsols}), exp["raw"], "raw job: solutions pairwise different")
    check_eq(len({canon(s, syms) for s in rsols}), exp["rotations"],
             "raw job: solutions fall into exactly the published number of symmetry classes")
    check_cover(rsols[:500], board, names, "6x10 raw (first 500)")

    # ---- polycube text jobs -------------------------------------------------
    soma = tlib.load_puzzle("soma-cube.json")
    jp = d.submit({"polycube": tlib.load_polycube("soma-cube.txt"), "options": {"unique": "rotations"}})
    jp = d.wait_state(jp["id"], "completed", timeout=60)
    check_eq(jp["solutions"], soma["expected"]["rotations"], "polycube soma-cube.txt: rotations == soma-cube.json expected")
    check_eq(jp["puzzle"]["dimensions"], 3, "polycube soma job is 3D")
    psols = d.all_solutions(jp["id"])
    check_cover(psols, tlib.board_cells(soma), sorted(p["name"] for p in soma["pieces"]), "soma polycube")
    jp2 = d.submit({"polycube": tlib.load_polycube("pentominoes-6x10.txt"), "options": {"unique": "raw"}})
    jp2 = d.wait_state(jp2["id"], "completed", timeout=90)
    check_eq(jp2["solutions"], exp["raw"], "polycube pentominoes-6x10.txt raw == 6x10 expected raw")

    # ---- bare puzzle body, default options -----------------------------------
    p512 = tlib.load_puzzle("pentominoes-5x12.json")
    jb = d.submit(p512)
    check_eq(jb["options"].get("unique"), "rotations", "bare puzzle: default unique is rotations")
    jb = d.wait_state(jb["id"], "completed", timeout=60)
    check_eq(jb["solutions"], p512["expected"]["rotations"], "bare 5x12 puzzle: rotations == published count")

    # ---- limit -------------------------------------------------------------
    jl = d.submit({"puzzle": pz, "options": {"unique": "raw", "limit": 100}})
    check_eq(jl["options"].get("limit"), 100, "limit echoed in options")
    jl = d.wait_final(jl["id"], timeout=60)
    check_eq(jl["state"], "completed", "limit job ends completed")
    check_eq(jl["solutions"], 100, "limit job stops at exactly limit solutions")
    check_eq(len(d.all_solutions(jl["id"], page=30)), 100, "limit job stores exactly limit solutions")
    check(0 < jl["progress"]["fraction"] < 1, "limit job fraction in (0,1): how far it got", jl["progress"])
    check_eq(jl["limit_reached"], True, "limit job: limit_reached says what stopped it")
    cli_status(d, jl)
    # pages that end exactly at the last solution: the full page still has `next`,
    # the page after it is empty with next null
    p1 = d.get("/api/v1/jobs/%d/solutions?limit=50" % jl["id"]).json
    p2 = d.get("/api/v1/jobs/%d/solutions?limit=50&after=%d" % (jl["id"], p1["next"])).json
    check(len(p2["solutions"]) == 50 and p2["next"] == p2["solutions"][-1]["seq"],
          "solutions: a full last page (100 = 2 x 50) still has next = last seq", p2["next"])
    p3 = d.get("/api/v1/jobs/%d/solutions?limit=50&after=%d" % (jl["id"], p2["next"])).json
    check(p3["solutions"] == [] and p3["next"] is None, "solutions: the page after it is empty, next null", p3)

    # ---- job list -----------------------------------------------------------
    jobs_all = d.list_jobs()
    ids = [x["id"] for x in jobs_all]
    check_eq(len(ids), 6, "job list holds the 6 jobs submitted")
    check(ids == sorted(ids) and len(set(ids)) == len(ids), "job list in increasing id order", ids)
    r = d.get("/api/v1/jobs?state=completed&limit=1000")
    check(r.status == 200 and all(x["state"] == "completed" for x in r.json["jobs"]), "state=completed filter", r)
    n_completed = len(r.json["jobs"])
    check_eq(n_completed, 6, "all 6 jobs completed")
    for st in ("running", "queued", "paused", "cancelled", "failed"):
        r = d.get("/api/v1/jobs?state=" + st)
        check(r.status == 200 and r.json["jobs"] == [] and r.json["next"] is None, "state=%s filter: empty" % st, r)
    h = d.get("/healthz").json
    check_eq(h["jobs"]["completed"], 6, "healthz counts 6 completed jobs")

    # ---- metrics ---------------------------------------------------------------
    r = d.get("/metrics")
    check_eq(r.status, 200, "GET /metrics status")
    check(r.header("Content-Type", "").startswith("text/plain") and "0.0.4" in r.header("Content-Type", ""),
          "metrics Content-Type is text/plain version=0.0.4", r.header("Content-Type"))
    m = {}
    types = {}
    for ln in r.text.splitlines():
        if ln.startswith("# TYPE "):
            _, _, name, typ = ln.split(None, 3)
            types[name] = typ
        elif ln and not ln.startswith("#"):
            k, v = ln.rsplit(" ", 1)
            m[k] = float(v)
    for st in tlib.ALL_STATES:
        check(('tessera_jobs{state="%s"}' % st) in m, "metrics has tessera_jobs{state=%r}" % st)
    check_eq(m.get('tessera_jobs{state="completed"}'), 6, 'tessera_jobs{state="completed"}')
    check_eq(m.get('tessera_jobs{state="running"}'), 0, 'tessera_jobs{state="running"}')
    for name, typ in (("tessera_jobs", "gauge"), ("tessera_nodes_total", "counter"),
                      ("tessera_solutions_total", "counter"), ("tessera_checkpoints_total", "counter"),
                      ("tessera_checkpoint_seconds_sum", "counter"), ("tessera_threads", "gauge"),
                      ("tessera_http_requests_total", "counter"), ("tessera_http_connections", "gauge")):
        check_eq(types.get(name), typ, "# TYPE %s" % name)
    check_eq(m.get("tessera_threads"), 2, "tessera_threads")
    sum_sol = sum(x["solutions"] for x in jobs_all)
    check_eq(m.get("tessera_solutions_total"), sum_sol, "tessera_solutions_total == sum of the jobs' solutions")
    sum_nodes = sum(d.job(x)["progress"]["nodes"] for x in ids)
    check_eq(m.get("tessera_nodes_total"), sum_nodes, "tessera_nodes_total == sum of the jobs' nodes")
    check(m.get("tessera_checkpoints_total", 0) >= 1, "tessera_checkpoints_total >= 1", m.get("tessera_checkpoints_total"))
    check(m.get('tessera_http_requests_total{code="2xx"}', 0) >= 20, "2xx requests counted",
          m.get('tessera_http_requests_total{code="2xx"}'))
    check(m.get("tessera_http_connections", 0) >= 1, "tessera_http_connections counts this connection")

    # ---- puzzle library -----------------------------------------------------
    r = d.get("/api/v1/puzzles")
    check_eq(r.status, 200, "GET /api/v1/puzzles status")
    lib = {p["file"]: p for p in r.json["puzzles"]}
    files = sorted(f for f in os.listdir(tlib.PUZZLES) if f.endswith(".json"))
    check(set(files) <= set(lib), "every puzzles/*.json is listed", sorted(set(files) - set(lib)))
    e = lib.get(P610, {})
    check(e.get("name") == pz["name"] and e.get("dimensions") == 2 and e.get("cells") == 60 and e.get("pieces") == 12
          and e.get("expected") == exp, "library entry for 6x10 has name/dimensions/cells/pieces/expected", e)
    check_eq(lib["tetris-cube.json"].get("expected"), tlib.load_puzzle("tetris-cube.json")["expected"],
             "library entry for tetris-cube expected")
    r = d.get("/api/v1/puzzles/" + P610)
    with open(tlib.puzzle_path(P610), "rb") as f:
        raw = f.read()
    check_eq(r.status, 200, "GET /api/v1/puzzles/pentominoes-6x10.json status")
    check(r.body == raw, "puzzle file is returned byte for byte", r.body[:200])
    check(r.header("Content-Type", "").startswith("application/json"), "puzzle file is JSON", r.header("Content-Type"))
    r = d.get("/api/v1/puzzles/no-such-puzzle.json")
    tlib.check_error(r, 404, what="unknown puzzle file")

    # ---- the job options' list ------------------------------------------------------
    job_options(d)

    # ---- the daemon is still healthy and unchanged after a restart --------------
    rc = d.restart()
    check_eq(rc, 0, "SIGTERM exit status")
    check_eq([(x["id"], x["state"], x["solutions"]) for x in d.list_jobs()],
             [(x["id"], x["state"], x["solutions"]) for x in jobs_all], "jobs survive a restart unchanged")
    check_eq(len(d.all_solutions(jid)), total, "solutions survive a restart")


    # ---- job list paging (last: the rule for `next` is strict) ------------------
    walked = []
    after = 0
    while True:
        r = d.get("/api/v1/jobs?limit=2&after=%d" % after)
        check(r.status == 200, "job list page after=%d limit=2" % after, r)
        pg = r.json
        if len(pg["jobs"]) == 2:
            check_eq(pg["next"], pg["jobs"][-1]["id"], "full job page: next is the last id")
        else:
            check(pg["next"] is None, "short job page: next null", pg["next"])
        walked += [x["id"] for x in pg["jobs"]]
        if pg["next"] is None:
            break
        after = pg["next"]
    check_eq(walked, ids, "job list paging (limit=2) walks every job once, in order")


if __name__ == "__main__":
    tlib.run(main)
