#!/usr/bin/env python3
"""Preparation is checked at the door and interruptible after it
(docs/api.md, "Limits" and "Life cycle").

At the door, submit and /validate answer 422 naming the reason, and no job
is created, for everything preparation would refuse: 20000 piece copies, a
board spanning +-100000 cells, a goal above the piece count, a malformed
or inconsistent order, and a solver that would need more memory than
`--max-memory` allows (the estimate counts the placements' cells and one
DLX matrix per thread).

A puzzle of huge pieces on a huge board (8 copies of a 997-cell piece and
2672 monominoes in a 22x22x22 box: 52,728 placements of 997 cells, a DLX
matrix of 53 million nodes) takes seconds to prepare before its search
starts.  Through the real daemon, while the job prepares (running, no
`config` yet):
  - cancel takes effect within 1 s, pause too, and a paused job resumes;
  - SIGTERM exits within 1 s, and the restarted daemon prepares the job
    again and can cancel it again;
  - /api/v1/estimate of a puzzle whose preparation takes longer than the
    estimate's 10 s (20 copies of a 1000-cell piece on a 100x200 board:
    about 20 s) does not pin a server thread for its whole preparation.
    (The 3D puzzle now prepares in 2 s, and its estimate then builds two
    matrices of 53 million nodes, 11 s on a quiet machine, past the
    server's 30 s request deadline on a loaded one.)

A flat board of big pieces (81 copies of an asymmetric 100-cell piece,
8 orientations, on a 90x90 board: 51,000 placements) spends most of its
preparation in the root volume filter, which floods most of the board
around every placement (the filter once went 28 s without asking whether
to stop on a 100x200 board of 1000-cell pieces).  Pause, cancel and
SIGTERM each act within 1 s early in the preparation (images, symmetry,
the matrix), in the middle or late (the volume filter, or the second
preparation with the automatic choices pinned), and the job is still
unprepared afterwards: the action landed in the preparation.
"""

import time

import tlib
from tlib import check, check_eq

SIDE, COPIES, K = 22, 8, 10


def huge_puzzle():
    """A 10x10x10 cube less three cells (no symmetry left: 24 orientations),
    COPIES copies, and monominoes filling the rest of the SIDE^3 box."""
    cells = [[x, y, z] for z in range(K) for y in range(K) for x in range(K)]
    for c in ([0, 0, 0], [1, 0, 0], [0, 2, 0]):
        cells.remove(c)
    monos = SIDE ** 3 - COPIES * len(cells)
    return {"version": 1, "name": "huge pieces %d^3" % SIDE, "board": {"size": [SIDE] * 3},
            "pieces": [{"name": "B", "cells": cells, "count": COPIES},
                       {"name": "m", "cells": [[0, 0, 0]], "count": monos}]}


def preparing(d, jid, what):
    """Wait until the job runs and has not finished preparing; 0.5 s more
    so that the action lands inside the preparation's work."""
    j = d.wait_for(jid, lambda j: j["state"] == "running", timeout=30, what=what)
    time.sleep(0.5)
    j = d.job(jid)
    check(j["state"] == "running" and j["config"] is None,
          "%s: the job is still preparing (state %s, config %r)" % (what, j["state"], j["config"]),
          fatal=True)


def timed_action(d, jid, action, state, bound, what=""):
    t = time.monotonic()
    r = d.action(jid, action, want=None)
    j = d.wait_for(jid, lambda j: j["state"] == state, timeout=30, interval=0.01)
    took = time.monotonic() - t
    check(r.status in (200, 202), "%s during preparation%s answered %d" % (action, what, r.status), r.text)
    check(took <= bound * tlib.SCALE, "%s during preparation%s took effect in %.2f s (<= %g s)"
          % (action, what, took, bound))
    return j


def big_pieces_2d():
    """A 10x10 square less a corner notch, with a tab on one side (no
    symmetry: 8 orientations), 81 copies on a 90x90 board."""
    cells = [[x, y] for y in range(10) for x in range(10)]
    for c in ([0, 0], [1, 0], [0, 1]):
        cells.remove(c)
    cells += [[10, 2], [10, 3], [10, 4]]
    return {"version": 1, "name": "big pieces 90x90", "board": {"size": [90, 90]},
            "pieces": [{"name": "B", "cells": cells, "count": 81}]}


def big_board_2d():
    """A 25x40 rectangle less a corner notch, with a tab on one side
    (1000 cells, 8 orientations), 20 copies on a 100x200 board."""
    cells = [[x, y] for y in range(40) for x in range(25)]
    for c in ([0, 0], [1, 0], [0, 1]):
        cells.remove(c)
    cells += [[25, 5], [25, 6], [25, 7]]
    return {"version": 1, "name": "1000-cell pieces 100x200", "board": {"size": [200, 100]},
            "pieces": [{"name": "B", "cells": cells, "count": 20}]}


# Moments of the 2D puzzle's preparation (seconds after the job starts
# running; it prepares twice, about 4 s each here): the images, the
# symmetry group and the start of the volume filter; the volume filter;
# late in it.
EARLY, MIDDLE, LATE = 0.2, 1.2, 2.5


def at(d, jid, moment, what):
    """Wait until the job runs, then `moment` seconds; it must still be
    preparing."""
    d.wait_for(jid, lambda j: j["state"] == "running", timeout=30, what=what, interval=0.01)
    time.sleep(moment)
    j = d.job(jid)
    check(j["state"] == "running" and j["config"] is None,
          "%s: the job is still preparing (state %s, config %r)" % (what, j["state"], j["config"]),
          fatal=True)


def still_unprepared(d, jid, what):
    check_eq(d.job(jid)["config"], None, "%s: the job was not prepared (it acted in preparation)" % what)


def flat_big_pieces(t):
    """Pause, cancel and SIGTERM during the 2D puzzle's preparation, each
    within 1 s: pause early and late, cancel in the middle and early (after
    a restart), SIGTERM in the middle."""
    d = t.daemon(threads=1, extra=["--max-memory", "none"])
    body = {"puzzle": big_pieces_2d(), "options": {"threads": 1}}

    jid = d.submit(body)["id"]
    at(d, jid, EARLY, "2D, early")
    timed_action(d, jid, "pause", "paused", 1.0, " (2D, early)")
    still_unprepared(d, jid, "paused early")
    d.action(jid, "resume")
    at(d, jid, MIDDLE, "2D, middle")
    j = timed_action(d, jid, "cancel", "cancelled", 1.0, " (2D, middle)")
    check_eq((j["config"], j["error"]), (None, None), "cancelled in the middle: unprepared, no error")

    jid = d.submit(body)["id"]
    at(d, jid, LATE, "2D, late")
    timed_action(d, jid, "pause", "paused", 1.0, " (2D, late)")
    still_unprepared(d, jid, "paused late")
    d.action(jid, "resume")
    at(d, jid, MIDDLE, "2D, middle, before SIGTERM")
    rc, took = d.stop()
    check_eq(rc, 0, "SIGTERM during preparation (2D, middle): exit 0")
    check(took <= 1.0 * tlib.SCALE, "SIGTERM during preparation (2D, middle): exited in %.2f s (<= 1 s)"
          % took)
    d.start()
    at(d, jid, EARLY, "2D, early, after the restart")
    j = timed_action(d, jid, "cancel", "cancelled", 1.0, " (2D, early, after the restart)")
    check_eq((j["config"], j["error"]), (None, None), "cancelled after the restart: unprepared, no error")
    d.stop()


def at_the_door(t):
    d = t.daemon(threads=2, extra=["--max-memory", "1G"])
    pent = tlib.load_puzzle("pentominoes-6x10.json")
    cases = [
        ("20000 piece copies", {"puzzle": {"version": 1, "board": {"size": [200, 100]},
                                           "pieces": [{"name": "m", "cells": [[0, 0]], "count": 20000}]}},
         ["20000 piece copies", "at most"]),
        ("a board spanning +-100000", {"puzzle": {"version": 1, "board": {"cells": [[-100000, -100000, -100000],
                                                                                 [100000, 100000, 100000]]},
                                                  "pieces": [{"name": "m", "cells": [[0, 0, 0]], "count": 2}]}},
         ["200001 x 200001 x 200001", "bounding box"]),
        ("goal above the piece count", {"puzzle": pent, "options": {"goal": 13}}, ["goal 13", "12 piece"]),
        ("a malformed order", {"puzzle": pent, "options": {"order": "q=3"}}, ["order 'q=3'", "unknown heuristic"]),
        ("two fixed orders in FILA", {"puzzle": pent, "options": {"order": "x=11:y=5", "fila": 11}},
         ["one fixed order"]),
        ("more memory than --max-memory", {"puzzle": huge_puzzle()}, ["memory", "1.0 GB", "--max-memory"]),
    ]
    for what, body, needles in cases:
        for route in ("/api/v1/validate", "/api/v1/jobs"):
            r = d.post(route, body)
            tlib.check_error(r, 422, *needles, what="%s: %s" % (route, what))
    check_eq(d.get("/api/v1/jobs").json["jobs"], [], "no job was created by any of them")
    h = d.get("/healthz").json
    check_eq(h["max_memory"], 1024.0 ** 3, "/healthz shows the memory cap")
    # the cap is per job's threads: the same puzzle fits without a cap
    r = d.post("/api/v1/validate", {"puzzle": pent, "options": {"threads": 1}})
    check_eq(r.status, 200, "a small puzzle passes the memory cap")
    d.stop()


def main(t):
    at_the_door(t)
    if tlib.QUICK:
        raise tlib.Skip("TSR_QUICK: a preparation of gigabytes is too slow under the sanitizers")
    # no memory cap: the point here is the preparation (about 1.5 GB)
    d = t.daemon(threads=1, extra=["--max-memory", "none"])
    body = {"puzzle": huge_puzzle(), "options": {"threads": 1}}

    jid = d.submit(body)["id"]
    preparing(d, jid, "first job")
    timed_action(d, jid, "pause", "paused", 1.0)
    d.action(jid, "resume")
    preparing(d, jid, "after resume")
    j = timed_action(d, jid, "cancel", "cancelled", 1.0)
    check_eq(j["error"], None, "a job cancelled while preparing has no error")

    jid = d.submit(body)["id"]
    preparing(d, jid, "second job")
    rc, took = d.stop()
    check_eq(rc, 0, "SIGTERM during preparation: exit 0")
    check(took <= 1.0 * tlib.SCALE, "SIGTERM during preparation: exited in %.2f s (<= 1 s)" % took)
    d.start()
    preparing(d, jid, "after the restart")
    timed_action(d, jid, "cancel", "cancelled", 1.0)

    # the estimate prepares on a server thread: bounded, and the daemon
    # still answers meanwhile
    t0 = time.monotonic()
    r = d.post("/api/v1/estimate", {"puzzle": big_board_2d(), "options": {"threads": 1}}, timeout=120)
    took = time.monotonic() - t0
    check(r.status in (200, 422), "estimate of the big board answers 200 or 422 (%d)" % r.status, r.text)
    check(took <= 40 * tlib.SCALE, "estimate of the big board answered in %.1f s" % took)
    check_eq(d.get("/healthz").status, 200, "the daemon answers after the estimate")
    d.stop()

    flat_big_pieces(t)


if __name__ == "__main__":
    tlib.run(main)
