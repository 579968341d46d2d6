#!/usr/bin/env python3
"""Every search measurable and interruptible at any depth (docs/engine.md §6, §7).

On deep searches whose subtrees outlast any run (the 35 hexominoes in the
15x14 parallelogram, whose tree is astronomically large, and on the hexagonal
lattice the 34 polyhexes of orders 1 to 5 in the 15x10 parallelogram) and on
the Tetris Cube, through the real daemon:
  - the fraction moves between any two polls a second apart (where its
    moves are down at a double's last digits, the nodes do), and never goes
    down, across the checkpoints taken every second;
  - the ETA is a range in words, past a century said so, never 1e17 s;
  - pause, cancel and SIGTERM take effect within a second (SIGTERM: the
    process exits with its checkpoint written), and the job resumes where
    it stopped.
"""

import math
import time

import tlib
from tlib import check, check_eq

HEX = "hexominoes-parallelogram-15x14.json"
CENTURY = 100 * 365.25 * 86400
POLLS = 4 if tlib.QUICK else 6


def polyhexes(order):
    """Every free polyhex of 1 .. order cells ({size: [cells]}), in Polyform
    Puzzler's axial coordinates: grown a cell at a time, each kept in the
    smallest of its 12 images (turn (x, y) -> (-y, x + y), flip (x, y) ->
    (-x, x + y)) moved to x, y >= 0."""
    def norm(cells):
        mx, my = min(x for x, _ in cells), min(y for _, y in cells)
        return tuple(sorted((x - mx, y - my) for x, y in cells))

    def canon(cells):
        best, cur = None, list(cells)
        for _ in range(2):
            for _ in range(6):
                n = norm(cur)
                best = n if best is None or n < best else best
                cur = [(-y, x + y) for x, y in cur]
            cur = [(-x, x + y) for x, y in cur]
        return best

    sets = {1: {canon([(0, 0)])}}
    for k in range(2, order + 1):
        sets[k] = {canon(list(p) + [(x + dx, y + dy)]) for p in sets[k - 1] for x, y in p
                   for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1), (1, -1), (-1, 1))
                   if (x + dx, y + dy) not in p}
    return {k: sorted(v) for k, v in sets.items()}


def polyhex_board():
    """The 34 polyhexes of orders 1 to 5 (150 cells) in the 15x10
    parallelogram: a 34-piece search on the hexagonal lattice."""
    sets = polyhexes(5)
    check_eq([len(sets[k]) for k in range(1, 6)], [1, 1, 3, 7, 22], "the free polyhexes of orders 1-5")
    pieces = [{"name": "H%d-%d" % (k, i + 1), "cells": [list(c) for c in p]}
              for k in range(1, 6) for i, p in enumerate(sets[k])]
    return {"version": 1, "name": "Polyhexes of orders 1-5, 15x10", "lattice": "hexagonal",
            "board": {"cells": [[x, y] for x in range(15) for y in range(10)]},
            "pieces": pieces, "rotations": "all"}


def progress(d, jid):
    return d.job(jid)["progress"]


# A move of the fraction this small (in units of its last digit) is at the
# resolution of a double: the next second's move may round to nothing.
LAST_DIGITS_ULPS = 4096


def watch_fraction(d, jid, what, stalls=0, polls=POLLS):
    """Poll a second apart: the fraction never goes down and moves every time,
    with two exceptions, each checked for what it is:
      - on a loaded machine one second may move it by less than a digit:
        `stalls` such seconds are allowed, never two in a row;
      - once the search is deep enough that its moves are a few units of the
        double's last digit (on the 34 polyhexes, moves of 1e-35 on 5e-20,
        1 to 50 ulps a second, reached 4 to 8 seconds in), a second may
        round to no move at all: then the nodes must have moved instead,
        showing the search went on and reported."""
    if tlib.QUICK:
        # sanitizer builds search several times slower: deep moves are rarer,
        # and a deep search's node count, published at its ticks, may stand
        # still for a second (seen under ThreadSanitizer on a loaded machine);
        # such a second is a stall, and only the whole window must move
        stalls, polls = polls - 1, max(polls, 4)
    p = progress(d, jid)
    first = last = p["fraction"]
    last_nodes = p["nodes"]
    last_move = None
    stalled = 0
    previous_stalled = False
    seen = []
    for i in range(polls):
        time.sleep(1)
        p = progress(d, jid)
        seen.append(p)
        f = p["fraction"]
        check(f >= last, "%s: fraction never goes down (poll %d: %r -> %r)" % (what, i + 1, last, f))
        moved = f > last
        if moved:
            check(True, "%s: fraction moved in poll %d (%r -> %r)" % (what, i + 1, last, f))
            last_move = f - last
        elif (last_move is not None and last_move <= LAST_DIGITS_ULPS * math.ulp(last)
              and not (tlib.QUICK and p["nodes"] == last_nodes and stalled < stalls)):
            check(p["nodes"] > last_nodes,
                  "%s: poll %d: the fraction moves at its last digits (last move %d ulps), "
                  "the nodes moved (%d -> %d)"
                  % (what, i + 1, round(last_move / math.ulp(last)), last_nodes, p["nodes"]))
        else:
            stalled += 1
            check(stalled <= stalls and (tlib.QUICK or not previous_stalled),
                  "%s: fraction moved in poll %d (%r -> %r)" % (what, i + 1, last, f))
        previous_stalled = not moved
        last, last_nodes = f, p["nodes"]
    check(last > first, "%s: fraction moved over %d polls (%r -> %r)" % (what, polls, first, last))
    return seen


def watch_to_end(d, jid, what):
    """Poll a second apart until the job ends: the fraction never goes down
    and moves between any two polls of the running job.  Returns the
    progress of the polls that found it running."""
    running = []
    j = d.job(jid)
    last = j["progress"]["fraction"]
    while j["state"] not in tlib.FINAL_STATES:
        time.sleep(1)
        j = d.job(jid)
        f = j["progress"]["fraction"]
        check(f >= last, "%s: fraction never goes down (poll %d: %r -> %r)" % (what, len(running) + 1, last, f))
        if j["state"] == "running":
            check(f > last, "%s: fraction moved in poll %d (%r -> %r)" % (what, len(running) + 1, last, f))
            running.append(j["progress"])
        last = f
    return running


def timed(d, jid, action, state, bound):
    t = time.monotonic()
    d.action(jid, action)
    d.wait_state(jid, state, timeout=10)
    took = time.monotonic() - t
    check(took <= bound * tlib.SCALE, "%s took effect in %.3fs (<= %gs)" % (action, took, bound))
    return took


def pause_and_resume(d, jid, what):
    """Pause acts within a second and keeps the fraction; after resume the
    fraction moves again (the runner prepares the solver first)."""
    before = progress(d, jid)["fraction"]
    timed(d, jid, "pause", "paused", 1.0)
    paused = progress(d, jid)["fraction"]
    check(paused >= before, "%s: the paused job kept its fraction (%r >= %r)" % (what, paused, before))
    d.action(jid, "resume")
    d.wait_for(jid, lambda j: j["progress"]["fraction"] > paused, timeout=30,
               what="%s: progress after resume" % what)


def sigterm_and_restart(d, jid, what):
    """SIGTERM writes the final checkpoint and exits at once; the restarted
    daemon resumes the job from it.  Returns the job as it runs again."""
    f0 = progress(d, jid)["fraction"]
    rc, took = d.stop()
    check_eq(rc, 0, "%s: SIGTERM: exit status 0" % what)
    check(took <= 5 * tlib.SCALE, "%s: SIGTERM during the search: exit in %.2fs (<= 5s)" % (what, took))
    d.start()
    j = d.wait_state(jid, "running")
    check(j["progress"]["fraction"] >= f0 * (1 - 1e-12) and j["progress"]["fraction"] > 0,
          "%s: the restarted job resumes from its checkpoint (%r vs %r)" % (what, j["progress"]["fraction"], f0))
    return j


def main(t):
    d = t.daemon(threads=2, checkpoint=1)
    # the deep tree on one thread: its fraction is around 1e-7 and moves by
    # ~1e-18 a second (on two threads a worker soon finishes a shallow
    # subtree worth 1e-4, and the moves fall to the last digit of a double)
    jid = d.submit(tlib.puzzle_body(HEX, threads=1))["id"]
    d.wait_for(jid, lambda j: j["progress"]["fraction"] > 0, timeout=30, what="a first fraction")
    p = watch_fraction(d, jid, "35 hexominoes", stalls=1)[-1]
    eta = p["eta"]
    check(eta is not None and eta["text"].endswith("more than a century"),
          "35 hexominoes: the ETA reaches 'more than a century' (%r)" % (eta,))
    check(p["eta_s"] is None and eta["high_s"] is None and eta["estimate_s"] is None,
          "35 hexominoes: no number past a century")
    pause_and_resume(d, jid, "35 hexominoes")
    watch_fraction(d, jid, "35 hexominoes after resume", stalls=1)
    sigterm_and_restart(d, jid, "35 hexominoes")
    timed(d, jid, "cancel", "cancelled", 1.0)

    # the same on the hexagonal lattice, on both threads: the fraction moves,
    # pause and cancel act within a second, SIGTERM exits with the
    # checkpoint and the job goes on from it
    jid = d.submit({"puzzle": polyhex_board(), "options": {"threads": 2}})["id"]
    d.wait_for(jid, lambda j: j["progress"]["fraction"] > 0, timeout=30, what="a first fraction")
    watch_fraction(d, jid, "34 polyhexes", stalls=1)
    pause_and_resume(d, jid, "34 polyhexes")
    # its first solutions come within seconds (later under a sanitizer's
    # slowness): waited for, so that the restart has some to keep
    found = d.wait_for(jid, lambda j: j["solutions"] > 0, timeout=60,
                       what="34 polyhexes: a first solution")["solutions"]
    j = sigterm_and_restart(d, jid, "34 polyhexes")
    check(j["solutions"] >= found,
          "34 polyhexes: the restarted job kept its solutions (%d >= %d)" % (j["solutions"], found))
    timed(d, jid, "cancel", "cancelled", 1.0)

    # the Tetris Cube on one thread (a few seconds on any machine): pause at
    # once, while it surely runs; then, polled to its end, the fraction moves
    # and the ETA is a finite range
    jid = d.submit(tlib.puzzle_body(tlib.LONG_PUZZLE, **dict(tlib.LONG_OPTIONS, threads=1)))["id"]
    d.wait_for(jid, lambda j: j["progress"]["fraction"] > 0, timeout=30, what="a first fraction")
    if not tlib.QUICK:
        timed(d, jid, "pause", "paused", 1.0)
        paused = progress(d, jid)["fraction"]
        d.action(jid, "resume")
        # as above: the solver is prepared again (the estimates, 0.15 s of CPU
        # here) and its search first reports 0.5 s in, so on a loaded machine
        # the first second after a resume may show no move yet
        d.wait_for(jid, lambda j: j["progress"]["fraction"] > paused or j["state"] in tlib.FINAL_STATES,
                   timeout=30, what="progress after resume")
        running = watch_to_end(d, jid, "Tetris Cube")
        check(len(running) >= 1, "Tetris Cube: polled while running at least once", len(running))
        eta = running[-1]["eta"]
        check(eta is not None and 0 <= eta["low_s"] <= eta["estimate_s"] <= eta["high_s"] < CENTURY,
              "Tetris Cube: a finite ETA range (%r)" % (eta,))
        check(isinstance(eta["text"], str) and eta["text"], "Tetris Cube: the range in words")
    j = d.wait_final(jid)
    check_eq(j["state"], "completed", "Tetris Cube completed after the pause")
    want = tlib.expected(tlib.LONG_PUZZLE, "rotations")
    if want is not None:
        check_eq(j["solutions"], want, "Tetris Cube: the published count after a pause")
    check_eq(j["progress"]["fraction"], 1.0, "completed: fraction exactly 1")


if __name__ == "__main__":
    tlib.run(main)
