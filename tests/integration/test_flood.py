#!/usr/bin/env python3
"""The solution flood through the real daemon: puzzles/dominoes-8x8.json in
raw mode (12,988,816 solutions in seconds; dominoes-6x6.json, 6,728, under
TSR_QUICK) on a daemon with --threads 2.

  1. a plain run completes with exactly the published count, stored ==
     solutions, the daemon's peak RSS (VmHWM) stays under 512 MB, a page at
     the end answers in milliseconds with the right seqs, the export's tail
     matches the pages, and deleting the job mid-export ends the export with
     a 404 error line;
  2. store "none" and store 1000 (side by side) count every solution and
     keep none, or exactly the first 1000 (pages and export agree);
  3. one job through a pause (in effect within 1 s of the POST), a resume,
     a SIGTERM (the daemon exits within 5 s), a restart and 10 kill -9 at
     random moments, each after 0.5-3 s of running, with a restart after
     each: it completes with exactly the published count, and the export
     yields seq 1..stored in order, every solution distinct;
  4. a damaged chunk (its CRC no longer matches) ends an export with a 500
     error line.

Distinctness: the daemon expands a class into solutions made of sorted
image ids, so a solution's line without its "seq" is a canonical form of
the solution; its hash goes into one of 256 buckets, which keeps 13 million
of them in about 100 MB."""

import array
import json
import http.client
import os
import random
import sqlite3
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tlib  # noqa: E402
from tlib import check, check_eq, log  # noqa: E402

FLOOD = "dominoes-6x6.json" if tlib.QUICK else "dominoes-8x8.json"
KILLS = 10
RSS_LIMIT_KB = 512 * 1024


def flood_body(**options):
    return {"puzzle": tlib.load_puzzle(FLOOD), "options": {"unique": "raw", **options}}


def peak_rss_kb(d):
    with open("/proc/%d/status" % d.proc.pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return None


def open_export(d, jid, after=0):
    conn = http.client.HTTPConnection(d.host, d.port, timeout=120 * tlib.SCALE)
    q = "&after=%d" % after if after else ""
    conn.request("GET", "/api/v1/jobs/%d/solutions?format=jsonl&all=1%s" % (jid, q))
    return conn, conn.getresponse()


def export(d, jid, after=0, on_block=None):
    """Read a whole export.  Returns a dict: lines (solution lines), in_order
    (their seqs ran after+1, after+2, ... without a break), distinct (how
    many distinct solutions), error (the error line's {"status", "message"}
    or None),
    tail (the last few solution lines, parsed)."""
    conn, r = open_export(d, jid, after)
    check_eq(r.status, 200, "job %d: the export answers 200" % jid, fatal=True)
    check_eq(r.getheader("Content-Type"), "application/x-ndjson", "job %d: export Content-Type" % jid)
    buckets = [array.array("q") for _ in range(256)]
    want, rest, error, tail, in_order = after + 1, b"", None, [], True
    blocks = 0
    while True:
        block = r.read(1 << 20)
        if not block:
            break
        blocks += 1
        if on_block:
            on_block(blocks)
        lines = (rest + block).split(b"\n")
        rest = lines.pop()
        for line in lines:
            i = line.rfind(b',"seq":')
            if i < 0:
                error = json.loads(line)["error"]
                continue
            if in_order and (error is not None or int(line[i + 7:-1]) != want):
                in_order = False
                log("out of order at seq %d: %s" % (want, line[-60:]))
            h = hash(line[:i])
            buckets[h & 255].append(h)
            want += 1
            if len(tail) == 8:
                tail.pop(0)
            tail.append(line)
    conn.close()
    check_eq(rest, b"", "job %d: the export ends with a whole line" % jid)
    return {"lines": want - after - 1, "in_order": in_order, "error": error,
            "distinct": sum(len(set(b)) for b in buckets),
            "tail": [json.loads(t) for t in tail]}


def page(d, jid, after, limit):
    t = time.monotonic()
    r = d.get("/api/v1/jobs/%d/solutions?after=%d&limit=%d" % (jid, after, limit))
    return r, time.monotonic() - t


def plain_run(d, expect):
    """The whole flood; returns its wall time, which paces the kills."""
    started = time.monotonic()
    jid = d.submit(flood_body())["id"]
    peak = 0
    j = d.job(jid)
    fractions = []  # a second apart while it runs
    polled = time.monotonic()
    while j["state"] not in tlib.FINAL_STATES:
        peak = max(peak, peak_rss_kb(d))
        time.sleep(0.2)
        j = d.job(jid)
        if time.monotonic() - polled >= 1 and j["state"] == "running":
            fractions.append(j["progress"]["fraction"])
            polled = time.monotonic()
    peak = max(peak, peak_rss_kb(d))
    wall = time.monotonic() - started
    log("plain flood: %s in %.1f s of search, peak RSS %.1f MB" % (j["state"], j["progress"]["seconds"], peak / 1024))
    check_eq((j["state"], j["solutions"], j["stored"]), ("completed", expect, expect),
             "plain flood: completed, solutions == stored == published raw count")
    check(peak < RSS_LIMIT_KB, "plain flood: daemon peak RSS %.1f MB < 512 MB" % (peak / 1024), peak)
    moving = [f for f in fractions if 0 < f < 1]
    check(all(b > a for a, b in zip(moving, moving[1:])),
          "plain flood: the fraction moved between every two polls a second apart", fractions)

    stored = j["stored"]
    r, took = page(d, jid, stored - 5, 100)
    check_eq(r.status, 200, "page after=stored-5 answers 200")
    check_eq([s["seq"] for s in r.json["solutions"]], list(range(stored - 4, stored + 1)),
             "page after=stored-5: seqs stored-4..stored")
    check(took < 0.5, "page after=stored-5 answered in %.1f ms (< 500 ms)" % (took * 1000), took)
    check_eq(r.json["next"], None, "page after=stored-5: no next page")

    e = export(d, jid, after=stored - 1000)
    check_eq((e["lines"], e["in_order"], e["error"], e["distinct"]), (1000, True, None, 1000),
             "export from after=stored-1000: 1000 distinct lines, seqs in order, no error line")
    check_eq(e["tail"][-5:], r.json["solutions"], "the export's last 5 lines == the last page's solutions")

    # deleted mid-export: the stream ends, its last line a 404 error
    conn, resp = open_export(d, jid)
    first = resp.read(1 << 16)
    r = d.delete("/api/v1/jobs/%d" % jid)
    check_eq(r.status, 204, "delete the flood job while an export of it is open")
    t = time.monotonic()
    rest = resp.read()
    conn.close()
    last = (first + rest).rstrip(b"\n").rsplit(b"\n", 1)[-1]
    err = json.loads(last).get("error") if last.startswith(b'{"error"') else None
    check(err is not None and err["status"] == 404,
          "export of a job deleted meanwhile ends (in %.2f s, %d bytes) with a 404 error line"
          % (time.monotonic() - t, len(first) + len(rest)), last[:300])
    return wall


def store_options(d, expect):
    none = d.submit(flood_body(store="none"))["id"]
    first = d.submit(flood_body(store=1000))["id"]
    for jid, keep in ((none, 0), (first, 1000)):
        j = d.wait_final(jid, timeout=600)
        check_eq((j["state"], j["solutions"], j["stored"]), ("completed", expect, keep),
                 "store %s: completed, every solution counted, %d stored" % (j["options"].get("store"), keep))
    r = d.get("/api/v1/jobs/%d/solutions" % none)
    check_eq((r.status, r.json["solutions"], r.json["next"]), (200, [], None), 'store "none": the page is empty')
    e = export(d, none)
    check_eq((e["lines"], e["error"]), (0, None), 'store "none": the export is empty')
    e = export(d, first)
    check_eq((e["lines"], e["in_order"], e["distinct"], e["error"]), (1000, True, 1000, None),
             "store 1000: the export is seq 1..1000, all distinct")
    cli_solutions(d, first, e["tail"])


def cli_solutions(d, jid, tail):
    """`tessera solutions --all` reads the export; --format=text still pages."""
    cli = os.environ.get("TESSERA") or os.path.join(tlib.SRCDIR, "tessera")
    if not os.access(cli, os.X_OK):
        log("no tessera binary at %s: CLI checks skipped" % cli)
        return
    server = "--server=http://%s:%d" % (d.host, d.port)
    out = subprocess.run([cli, "solutions", server, "--all", str(jid)], capture_output=True, timeout=60)
    lines = out.stdout.decode().splitlines()
    check_eq((out.returncode, len(lines)), (0, 1000), "tessera solutions --all: exit 0, 1000 JSON lines")
    check_eq([json.loads(x) for x in lines[-len(tail):]], tail, "tessera solutions --all: the export's lines")
    out = subprocess.run([cli, "solutions", server, "--all", "--format=text", str(jid)], capture_output=True,
                         timeout=60)
    heads = [x for x in out.stdout.decode().splitlines() if x.startswith("# solution ")]
    check_eq((out.returncode, heads[0], heads[-1], len(heads)), (0, "# solution 1", "# solution 1000", 1000),
             "tessera solutions --all --format=text: solutions 1..1000 as text")


def pause_and_sigterm(d, jid, rnd):
    d.wait_state(jid, "running")
    time.sleep(rnd.uniform(0.5, 1.5))
    t = time.monotonic()
    r = d.action(jid, "pause")
    took = time.monotonic() - t
    j = d.job(jid)
    log("pause answered %s after %.3f s with %d solutions" % (r.json["state"], took, j["solutions"]))
    check_eq((r.json["state"], j["state"]), ("paused", "paused"), "pause during the flood: the job is paused")
    check(took < 1.0, "pause took effect %.0f ms after the POST (< 1 s)" % (took * 1000), took)
    time.sleep(0.3)
    check_eq(d.job(jid)["solutions"], j["solutions"], "a paused job finds nothing more")
    d.action(jid, "resume")
    d.wait_state(jid, "running")
    time.sleep(rnd.uniform(0.5, 1.5))
    rc, took = d.stop()
    check_eq(rc, 0, "SIGTERM during the flood: exit 0")
    check(took < 5.0, "SIGTERM during the flood: exited in %.2f s (< 5 s)" % took, took)
    d.start()


def interrupted_run(d, expect, rnd, wall):
    """Pause, resume, SIGTERM, then the kills, on one flood job (`wall`: the
    plain flood's time, which paces them)."""
    jid = d.submit(flood_body())["id"]
    if tlib.QUICK:
        # the small flood is over in a moment: nothing to pause, but the
        # restarts and the export still run under the sanitizers
        log("TSR_QUICK: the %s flood is too short to pause mid-run" % FLOOD)
    else:
        pause_and_sigterm(d, jid, rnd)
    killed_run(d, jid, expect, rnd, wall)
    return jid


def killed_run(d, jid, expect, rnd, wall):
    """KILLS kill -9, each after about a second (a checkpoint comes within
    about a second of a solution, so the job gets on between kills) plus a
    random share of the plain flood's time.  When a job has completed by the
    next kill (a fast machine gets through the flood in a few restarts), a
    new flood job takes its place, so that the kills keep falling on a
    running flood however fast the machine; every job must end exact."""
    jobs = [jid]
    mid_run = 0
    for k in range(1, KILLS + 1):
        run_s = rnd.uniform(0.6, 1.4) + rnd.uniform(0, 0.3) * wall / (KILLS + 1)
        time.sleep(run_s)
        j = d.job(jobs[-1])
        d.kill()
        mid_run += j["state"] == "running"
        log("kill %2d after %.2f s: job %d %s, %d solutions" % (k, run_s, jobs[-1], j["state"], j["solutions"]))
        d.start()
        check(d.job(jobs[-1])["state"] != "failed", "restart %d: the job did not fail" % k)
        if d.job(jobs[-1])["state"] in tlib.FINAL_STATES and k < KILLS:
            jobs.append(d.submit(flood_body())["id"])
    log("%d of %d kills hit a running flood (jobs %s)" % (mid_run, KILLS, jobs))
    if not tlib.QUICK:
        check(mid_run >= KILLS // 2, "at least half the kills interrupted a running flood", mid_run)

    for other in jobs:
        j = d.wait_final(other, timeout=600)
        check_eq((j["state"], j["solutions"], j["stored"]), ("completed", expect, expect),
                 "job %d after %s kill -9: completed, solutions == stored == published count"
                 % (other, "pause, SIGTERM and" if other == jid else "its"))
    t = time.monotonic()
    e = export(d, jid)
    log("export of %d lines read in %.1f s" % (e["lines"], time.monotonic() - t))
    check_eq(e["lines"], expect, "the export yields exactly `stored` lines")
    check(e["in_order"], "the export's seqs run 1..stored in order")
    check_eq(e["distinct"], expect, "every exported solution is distinct: no duplicate, no gap")
    check_eq(e["error"], None, "the export has no error line")


def damaged_chunk(d, jid):
    """Flip a byte of the job's last chunk (its data, not its CRC) while the
    daemon runs (a daemon started on a damaged store refuses it at its
    start-up check: test_store_safety.py), then export from 20,000
    solutions before it (far more than one step of the export): the lines
    before the chunk come, then a 500 error line naming it.  When the job
    has fewer solutions before that chunk (TSR_QUICK), the first step may
    fail already: then the answer is a plain 500."""
    con = sqlite3.connect(d.db_path, timeout=30)
    try:
        first, data = con.execute("SELECT first, data FROM chunks WHERE job = ? ORDER BY first DESC LIMIT 1",
                                  (jid,)).fetchone()
        bad = bytes([data[0] ^ 0x01]) + data[1:]
        con.execute("UPDATE chunks SET data = ? WHERE job = ? AND first = ?", (bad, jid, first))
        con.commit()
    finally:
        con.close()
    after = max(0, first - 1 - 20000)
    if after == 0:
        r = d.get("/api/v1/jobs/%d/solutions?format=jsonl&all=1" % jid)
        if r.status == 500:
            check("chunk" in r.json["error"]["message"], "damaged chunk in the first step: 500 naming it", r.text)
            return
    e = export(d, jid, after)
    err = e["error"] or {}
    check(0 < e["lines"] <= first - 1 - after and e["in_order"] and err.get("status") == 500,
          "an export over a damaged chunk: %d lines before it, in order, then a 500 error line" % e["lines"],
          (e["lines"], first - 1 - after, err))
    check("chunk" in err.get("message", ""), "the error line names the damaged chunk", err)


def main(t):
    seed = os.environ.get("TSR_SEED") or str(random.randrange(1 << 30))
    log("TSR_SEED=%s (set it to replay the same kill times)" % seed)
    rnd = random.Random(seed)
    expect = tlib.expected(FLOOD, "raw")
    d = t.daemon(threads=2)
    wall = plain_run(d, expect)
    store_options(d, expect)
    flood = interrupted_run(d, expect, rnd, wall)
    damaged_chunk(d, flood)


if __name__ == "__main__":
    tlib.run(main)
