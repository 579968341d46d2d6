#!/usr/bin/env python3
"""Job life cycle on a long job (tetris cube, ~3-7 s): pause stops the search,
resume continues it, cancel keeps the solutions found so far, DELETE only of
final jobs, 409 for actions that make no sense in a state, pause/resume cycles
lose and duplicate no solution (final count == published count), and the
Server-Sent Events stream of a job (ids, one-line JSON data, non-decreasing
fraction, ends after the final state)."""

import json
import os
import random
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tlib  # noqa: E402
from tlib import check, check_eq, check_error, log  # noqa: E402

TETRIS = tlib.LONG_PUZZLE


def sol_key(s):
    return frozenset((p["name"], frozenset(tuple(c) for c in p["cells"])) for p in s["pieces"])


def check_stream(es, jid, final_state, what):
    """Common checks on a finished event stream."""
    check(es.error is None, "%s: stream read without error" % what, es.error)
    check_eq(es.status, 200, "%s: events status" % what)
    check((es.header("Content-Type") or "").startswith("text/event-stream"), "%s: Content-Type text/event-stream" % what,
          es.header("Content-Type"))
    check(es.malformed == [], "%s: every event is well formed (one data line of JSON)" % what, es.malformed)
    evs = es.events
    check(len(evs) >= 1, "%s: at least one event" % what, len(evs))
    check(all(e.get("event") == "job" for e in evs), "%s: every event is `event: job`" % what,
          [e.get("event") for e in evs])
    ids = [e.get("id") for e in evs]
    check(all(i is not None and i.isdigit() for i in ids), "%s: every event has a numeric `id:`" % what, ids)
    ids = [int(i) for i in ids]
    check(all(a < b for a, b in zip(ids, ids[1:])), "%s: event ids strictly increase" % what, ids)
    datas = [e["data"] for e in evs]
    check(all(isinstance(x, dict) and x.get("id") == jid for x in datas), "%s: every data is the job object of job %d"
          % (what, jid), [x and x.get("id") for x in datas])
    check(all("stats" in x for x in datas), "%s: every event's job has stats" % what)
    fr = [x["progress"]["fraction"] for x in datas]
    check(all(0 <= a <= b <= 1 for a, b in zip(fr, fr[1:])), "%s: fraction non-decreasing across %d events"
          % (what, len(fr)), fr)
    so = [x["solutions"] for x in datas]
    check(all(a <= b for a, b in zip(so, so[1:])), "%s: solutions non-decreasing" % what, so)
    nodes = [x["progress"]["nodes"] for x in datas]
    check(all(a <= b for a, b in zip(nodes, nodes[1:])), "%s: nodes non-decreasing" % what, nodes)
    states = [x["state"] for x in datas]
    check_eq(states[-1], final_state, "%s: last event shows the final state" % what)
    check(all(s not in tlib.FINAL_STATES for s in states[:-1]), "%s: only the last event is final" % what, states)
    return datas


def main(t):
    d = t.daemon(threads=2)
    tz = tlib.load_puzzle(TETRIS)
    expect = tz["expected"]["rotations"]

    # a small completed job for the 409 checks
    small = d.submit(tlib.puzzle_body("pentominoes-5x12.json"))["id"]
    d.wait_state(small, "completed", timeout=60)
    for act in ("pause", "resume", "cancel"):
        r = d.post("/api/v1/jobs/%d/%s" % (small, act))
        check_error(r, 409, "completed", what="%s of a completed job" % act)
    check_eq(d.job(small)["state"], "completed", "the completed job is still completed after refused actions")

    # SSE of a job that is already final: one event, then the stream ends
    es = tlib.EventStream(d, small)
    check(es.ended.wait(10), "events of a completed job: the stream ends by itself")
    datas = check_stream(es, small, "completed", "events of a completed job")
    check_eq(len(datas), 1, "events of a completed job: exactly one event")

    # ---- job A: pause, resume, cancel ---------------------------------------------
    a = d.submit({"puzzle": tz, "options": {**tlib.LONG_OPTIONS, "unique": "rotations"}})["id"]
    ja = d.wait_for(a, lambda j: j["state"] == "running" and j["progress"]["fraction"] >= 0.1, 60,
                    "running with fraction >= 0.1")
    check(ja["threads"] >= 1, "running job has threads >= 1", ja["threads"])
    r = d.delete("/api/v1/jobs/%d" % a)
    check_error(r, 409, "running", what="DELETE of a running job")
    check(d.job(a)["state"] in ("running", "completed"), "the job survives the refused DELETE")

    es_a = tlib.EventStream(d, a)
    check(es_a.wait_events(1, 10), "events of job A: first event on connect")

    r = d.post("/api/v1/jobs/%d/pause" % a)
    check_eq(r.status, 200, "pause of a running job: 200")
    check_eq(r.json["state"], "paused", "pause answers the job in state paused")
    time.sleep(0.3)
    p1 = d.job(a)
    check_eq(p1["state"], "paused", "job A is paused")
    check_eq(p1["threads"], 0, "paused job has 0 threads")
    time.sleep(1.2)
    p2 = d.job(a)
    check_eq(p2["progress"]["nodes"], p1["progress"]["nodes"], "paused: nodes do not grow (1.2 s)")
    check_eq(p2["solutions"], p1["solutions"], "paused: solutions do not grow")
    check_eq(p2["progress"]["rate"], 0, "paused: rate is 0")
    check(p2["progress"]["fraction"] < 1, "paused job not finished", p2["progress"])
    r = d.post("/api/v1/jobs/%d/pause" % a)
    check(r.status == 200 and r.json["state"] == "paused" and r.json["progress"]["nodes"] == p2["progress"]["nodes"],
          "pause of a paused job is idempotent: 200, still paused, same nodes", r)
    r = d.delete("/api/v1/jobs/%d" % a)
    check_error(r, 409, what="DELETE of a paused job")

    r = d.post("/api/v1/jobs/%d/resume" % a)
    check_eq(r.status, 200, "resume: 200")
    check(r.json["state"] in ("queued", "running"), "resume answers queued or running", r.json["state"])
    ja = d.wait_for(a, lambda j: j["progress"]["nodes"] > p2["progress"]["nodes"] or j["state"] in tlib.FINAL_STATES,
                    30, "nodes to grow after resume")
    check_eq(ja["state"], "running", "after resume the job runs again")
    check(ja["progress"]["fraction"] >= p2["progress"]["fraction"], "fraction did not go down over pause/resume")
    r = d.post("/api/v1/jobs/%d/resume" % a)
    check(r.status == 200 and r.json["state"] == "running", "resume of a running job is idempotent: 200, running", r)

    r = d.post("/api/v1/jobs/%d/cancel" % a)
    check_eq(r.status, 200, "cancel of a running job: 200")
    check_eq(r.json["state"], "cancelled", "cancel answers state cancelled")
    time.sleep(0.5)
    jc = d.job(a)
    check_eq(jc["state"], "cancelled", "job A is cancelled")
    check(0 < jc["solutions"] < expect, "cancelled job kept some but not all solutions", jc["solutions"])
    check(jc["solutions"] >= p2["solutions"], "cancelled job has at least the solutions it had when paused",
          (jc["solutions"], p2["solutions"]))
    time.sleep(0.5)
    jc2 = d.job(a)
    check_eq((jc2["solutions"], jc2["progress"]["nodes"]), (jc["solutions"], jc["progress"]["nodes"]),
             "cancelled job does not change any more")
    sols = d.all_solutions(a)
    check_eq(len(sols), jc["solutions"], "cancelled job: its solutions so far are readable")
    check_eq(len({sol_key(s) for s in sols}), len(sols), "cancelled job: no duplicate solutions")
    for act in ("pause", "resume"):
        r = d.post("/api/v1/jobs/%d/%s" % (a, act))
        check_error(r, 409, "cancelled", what="%s of a cancelled job" % act)
    r = d.post("/api/v1/jobs/%d/cancel" % a)
    check(r.status == 200 and r.json["state"] == "cancelled", "cancel of a cancelled job is idempotent: 200", r)

    check(es_a.ended.wait(10), "events of job A: stream ends after the cancel")
    datas = check_stream(es_a, a, "cancelled", "events of job A")
    check("paused" in [x["state"] for x in datas], "events of job A show the pause", [x["state"] for x in datas])

    r = d.delete("/api/v1/jobs/%d" % a)
    check_eq(r.status, 204, "DELETE of a cancelled job: 204")
    check_eq(r.body, b"", "204 has no body")
    check_error(d.get("/api/v1/jobs/%d" % a), 404, str(a), what="GET of the deleted job")
    check_error(d.get("/api/v1/jobs/%d/solutions" % a), 404, what="solutions of the deleted job")
    check_error(d.delete("/api/v1/jobs/%d" % a), 404, what="second DELETE")
    check(a not in [x["id"] for x in d.list_jobs()], "deleted job is not listed")

    # ---- job C: paused at once, then pause/resume cycles, must complete exactly ------
    c = d.submit({"puzzle": tz, "options": {**tlib.LONG_OPTIONS, "unique": "rotations"}})["id"]
    check(c > a, "job ids are never reused (new id %d > deleted %d)" % (c, a))
    r = d.post("/api/v1/jobs/%d/pause" % c)
    check_eq(r.status, 200, "pause right after submit: 200")
    check_eq(r.json["state"], "paused", "pause right after submit: paused")
    n0 = d.job(c)["progress"]["nodes"]
    time.sleep(1.0)
    jcur = d.job(c)
    check_eq(jcur["state"], "paused", "job paused right after submit stays paused")
    check_eq(jcur["progress"]["nodes"], n0, "it does not search while paused")

    es_c = tlib.EventStream(d, c)
    check(es_c.wait_events(1, 10), "events of job C: first event on connect")
    check_eq(es_c.events[0]["data"]["state"], "paused", "events of job C: first event is the current state")

    rnd = random.Random(os.environ.get("TSR_SEED", "lifecycle"))
    cycles = 0
    r = d.post("/api/v1/jobs/%d/resume" % c)
    check_eq(r.status, 200, "resume job C")
    for _ in range(4):
        time.sleep(rnd.uniform(0.3, 0.9))
        r = d.post("/api/v1/jobs/%d/pause" % c)
        if r.status == 409:  # finished already on a fast machine
            break
        check_eq(r.status, 200, "pause job C (cycle %d)" % (cycles + 1))
        cycles += 1
        time.sleep(rnd.uniform(0.1, 0.4))
        check_eq(d.post("/api/v1/jobs/%d/resume" % c).status, 200, "resume job C (cycle %d)" % cycles)
    log("job C: %d pause/resume cycles" % cycles)
    check(cycles >= 1, "at least one pause/resume cycle hit the running job", cycles)
    jdone = d.wait_final(c, timeout=120)
    check_eq(jdone["state"], "completed", "job C completes")
    check_eq(jdone["solutions"], expect, "job C after pause/resume cycles: solutions == published rotations count")
    check(jdone["progress"]["fraction"] == 1, "job C: fraction exactly 1", jdone["progress"])
    sols = d.all_solutions(c)
    check_eq(len(sols), expect, "job C: the solution pages hold exactly the published count")
    check_eq(len({sol_key(s) for s in sols}), expect, "job C: no duplicate solutions")
    seqs = [s["seq"] for s in sols]
    check(all(x < y for x, y in zip(seqs, seqs[1:])), "job C: seq strictly increasing")

    check(es_c.ended.wait(10), "events of job C: the stream ends after the completed event")
    datas = check_stream(es_c, c, "completed", "events of job C")
    check_eq(datas[-1]["solutions"], expect, "events of job C: final event has the final count")
    check(datas[-1]["progress"]["fraction"] == 1, "events of job C: final event fraction exactly 1")
    states = [x["state"] for x in datas]
    check("running" in states and states.count("paused") >= 2,
          "events of job C show running and the pauses", states)
    check(len(datas) >= 3, "events of job C: progress events while running (%d events)" % len(datas))

    check_error(d.get("/api/v1/jobs/99999/events"), 404, what="events of an unknown job")
    r = d.delete("/api/v1/jobs/%d" % c)
    check_eq(r.status, 204, "DELETE of a completed job: 204")


if __name__ == "__main__":
    tlib.run(main)
