#!/usr/bin/env python3
"""bench/estimate_coverage.py - do the estimator's ranges hold the true counts?

Usage: bench/estimate_coverage.py [--seeds N] [--probes P] [--seconds S] [--cli]
                                  [--raw PATH] [--tessera PATH] [PUZZLE ...]

For every puzzle with a known count (bench/estimate_truth.txt: solutions in
the default counting mode and the nodes `tessera solve -q` prints, or a
published count alone for the records), runs the estimator with seeds
1..N and prints, per run, the solution estimate and range, whether the range
holds the true count, the node estimate and range and whether they hold the
true nodes; then per puzzle and overall how many ranges held, and the
ranges' widths (high / low; "inf" when the low end is 0 or the high end
unbounded).

By default it runs bench/estimate_raw (the estimator alone, the CLI's
defaults: 1,000,000 probes, 2 s): `tessera estimate` also runs the search
for 0.5 s and, on every small puzzle, prints the exact counts it found, so
the estimator's own ranges would never be seen.  --cli runs
`tessera estimate --json` instead (what a user sees).  Run by
`make bench-estimate` (about 5 minutes with 3 seeds).
"""

import argparse
import json
import math
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)


def load_truth(path):
    truth = {}
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].split()
            if len(line) >= 2:
                nodes = int(line[2]) if len(line) > 2 and line[2] != "-" else None
                truth[line[0]] = (int(line[1]), nodes)
    return truth


def run_raw(raw, path, seed, probes, seconds):
    out = subprocess.run([raw, path, str(seed), str(probes), str(seconds)], check=True,
                         capture_output=True, text=True).stdout.split()
    v = [float(x) for x in out]
    return {"nodes": v[0:3], "solutions": v[3:6], "samples": int(v[6]), "hits": int(v[7]),
            "seconds": v[8]}


def run_cli(tessera, path, seed, probes, seconds):
    out = subprocess.run([tessera, "estimate", "--json", "--seed=%d" % seed, "--probes=%d" % probes,
                          "--seconds=%g" % seconds, path], check=True, capture_output=True,
                         text=True).stdout
    j = json.loads(out)
    sol = j["solutions"]
    high = sol["high"] if sol["high"] is not None else -1
    nod = j["nodes"]
    return {"nodes": [nod["estimate"], nod["low"], nod["high"]],
            "solutions": [sol["estimate"], sol["low"], high], "samples": j["samples"],
            "hits": -1, "seconds": j["elapsed_s"]}


def holds(r, true):
    est, low, high = r
    return low <= true and (high < 0 or true <= high)


def width(r):
    est, low, high = r
    if high < 0 or low <= 0:
        return math.inf
    return high / low


def fmt(x):
    if x < 0:
        return "?"
    return "%.4g" % x


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--probes", type=int, default=1000000)
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--cli", action="store_true")
    ap.add_argument("--raw", default=os.path.join(os.getcwd(), "bench", "estimate_raw"))
    ap.add_argument("--tessera", default=os.path.join(os.getcwd(), "tessera"))
    ap.add_argument("--truth", default=os.path.join(HERE, "estimate_truth.txt"))
    ap.add_argument("puzzles", nargs="*")
    a = ap.parse_args()
    truth = load_truth(a.truth)
    names = a.puzzles or list(truth)
    total = {"sol": 0, "nod": 0, "runs": 0, "nodruns": 0}
    widths = []
    print("%-38s %4s %10s %10s %23s %3s %10s %10s %23s %3s %6s" %
          ("puzzle", "seed", "solutions", "estimate", "range", "in", "nodes", "estimate",
           "range", "in", "secs"))
    for name in names:
        name = name.replace(".json", "").replace("puzzles/", "")
        path = os.path.join(SRC, "puzzles", name + ".json")
        tsol, tnod = truth[name]
        for seed in range(1, a.seeds + 1):
            r = (run_cli(a.tessera, path, seed, a.probes, a.seconds) if a.cli
                 else run_raw(a.raw, path, seed, a.probes, a.seconds))
            s_in = holds(r["solutions"], tsol)
            n_in = holds(r["nodes"], tnod) if tnod is not None else None
            total["runs"] += 1
            total["sol"] += s_in
            if n_in is not None:
                total["nodruns"] += 1
                total["nod"] += n_in
            widths.append((name, width(r["solutions"]), width(r["nodes"])))
            s, n = r["solutions"], r["nodes"]
            print("%-38s %4d %10d %10s %23s %3s %10s %10s %23s %3s %6.2f" %
                  (name[-38:], seed, tsol, fmt(s[0]), "%s-%s" % (fmt(s[1]), fmt(s[2])),
                   "yes" if s_in else "NO", fmt(tnod) if tnod else "?", fmt(n[0]),
                   "%s-%s" % (fmt(n[1]), fmt(n[2])),
                   "-" if n_in is None else "yes" if n_in else "NO", r["seconds"]))
            sys.stdout.flush()
    print("solution ranges holding the true count: %d of %d" % (total["sol"], total["runs"]))
    print("node ranges holding the true nodes: %d of %d" % (total["nod"], total["nodruns"]))
    fin = sorted(w[1] for w in widths if math.isfinite(w[1]))
    nfin = sorted(w[2] for w in widths if math.isfinite(w[2]))
    if fin:
        print("solution range high/low: median %.3g, max %.3g; unbounded or from 0: %d" %
              (fin[len(fin) // 2], fin[-1], len(widths) - len(fin)))
    if nfin:
        print("node range high/low: median %.3g, max %.3g" % (nfin[len(nfin) // 2], nfin[-1]))


if __name__ == "__main__":
    main()
