#!/usr/bin/env python3
"""What a web page, a rebound name or an oversized document can make the
daemon do (docs/api.md, "Security model").

Against the real daemon on loopback with no token (the default):
  - a request body that is not application/json (a form post, text/plain,
    multipart, none declared) is 415; one that a page on another origin sent
    (Origin of another host or port, Origin null, Sec-Fetch-Site cross-site
    or same-site) is 403, for submit, cancel and delete alike; nothing
    changes; the same requests with no Origin (curl, tessera) or from the
    server's own origin work;
  - a request whose Host is not a name of the server (DNS rebinding) is 421
    on every route, reads and static files included; loopback addresses,
    localhost and the listen address are accepted, and so is an HTTP/1.0
    request with no Host;
  - every answer carries the Content-Security-Policy (scripts and styles
    from 'self', frame-ancestors 'none'), X-Frame-Options DENY and a
    referrer policy;
  - a puzzle name over 200 bytes or a description over 4096 is 422 naming
    the JSON path; a store written before the caps, with 3.9 MB names, is
    listed with the names cut, and 20 concurrent lists of it do not grow the
    daemon by more than a few MB; a page of large solutions stops at its
    byte budget with `next`, and paging still walks every solution once.
With --allow-host and --allow-origin (and a token): the names and origins
given are accepted, others still refused, the token still required; a
malformed --allow-origin stops the daemon at start.
"""

import json
import os
import sqlite3
import threading
import time

import tlib
from tlib import check, check_eq, check_error


def job_ids(d):
    return [j["id"] for j in d.list_jobs()]


def post_raw(d, path, body, ctype=None, headers=None):
    h = dict(headers or {})
    if ctype is not None:
        h["Content-Type"] = ctype
    return d.request("POST", path, body=body, headers=h)


def content_types(d, body):
    """Bodies a page can send cross-origin without asking first: refused."""
    before = job_ids(d)
    text = json.dumps(body)
    for ctype in ("text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded",
                  "multipart/form-data; boundary=x", "application/jsonx", "text/json"):
        r = post_raw(d, "/api/v1/jobs", text, ctype)
        check_error(r, 415, "application/json", what="submit as %s" % ctype)
    # no Content-Type at all (a raw socket: http.client always sends one for a body)
    raw = text.encode()
    r = d.raw(b"POST /api/v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
              b"Content-Length: %d\r\n\r\n%s" % (len(raw), raw))
    check_error(r, 415, "none", what="submit with no Content-Type")
    for path in ("/api/v1/validate", "/api/v1/estimate", "/api/v1/batches"):
        check_error(post_raw(d, path, text, "text/plain"), 415, what="%s as text/plain" % path)
    check_eq(job_ids(d), before, "no job was created by a refused body")
    r = post_raw(d, "/api/v1/jobs", text, "Application/JSON; charset=utf-8")
    check_eq(r.status, 201, "application/json with parameters and another case is accepted")


def origins(d, body, running):
    """Writes a page on another origin sends: 403, nothing changes."""
    own = "http://127.0.0.1:%d" % d.port
    before = job_ids(d)
    bad = [{"Origin": "http://evil.example"}, {"Origin": "null"},
           {"Origin": "http://127.0.0.1:%d" % (d.port + 1)}, {"Origin": "https://127.0.0.1:%d" % d.port},
           {"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"},
           {"Sec-Fetch-Site": "cross-site"}, {"Sec-Fetch-Site": "same-site"},
           {"Origin": own + ".evil.example"}]
    for h in bad:
        what = " ".join("%s: %s" % kv for kv in h.items())
        check_error(d.post("/api/v1/jobs", body, headers=h), 403, "cross-origin",
                    what="submit with " + what)
        check_error(d.post("/api/v1/jobs/%d/cancel" % running, headers=h), 403,
                    what="cancel with " + what)
        check_error(d.post("/api/v1/jobs/%d/pause" % running, headers=h), 403,
                    what="pause with " + what)
        check_error(d.delete("/api/v1/jobs/%d" % running, headers=h), 403,
                    what="delete with " + what)
    check_eq(job_ids(d), before, "no job was created from another origin")
    check(d.job(running)["state"] in ("running", "queued"), "the job was neither paused nor cancelled")
    # reads are not writes: the browser keeps their answers from the page
    check_eq(d.get("/api/v1/jobs", headers={"Origin": "http://evil.example"}).status, 200,
             "a read with another Origin is answered (the browser does not show it to the page)")
    # the dashboard's own requests, and programs that send no Origin (a job
    # long enough to be cancelled, not finished, when the cancel comes)
    long_body = tlib.puzzle_body(tlib.LONG_PUZZLE, **tlib.LONG_OPTIONS)
    for h in ({"Origin": own}, {"Origin": own, "Sec-Fetch-Site": "same-origin"},
              {"Origin": "http://localhost:%d" % d.port, "Host": "localhost:%d" % d.port},
              {"Sec-Fetch-Site": "none"}, {}):
        r = d.post("/api/v1/jobs", long_body, headers=h)
        check_eq(r.status, 201, "submit with %s is accepted" % (h or "no Origin"))
        jid = r.json["id"]
        check_eq(d.post("/api/v1/jobs/%d/cancel" % jid, headers=h).status, 200, "and cancelled")
        check_eq(d.delete("/api/v1/jobs/%d" % jid, headers=h).status, 204, "and deleted")


def hosts(d):
    """Names of the server: accepted; any other name: 421, on every route."""
    for host in ("evil.example:%d" % d.port, "evil.example", "127.0.0.1.evil.example",
                 "localhost.evil.example", "[::2]:%d" % d.port, "10.1.2.3", "a b", "x:99999",
                 "[::1", "::1"):
        for method, path in (("GET", "/api/v1/jobs"), ("GET", "/healthz"), ("GET", "/"),
                             ("GET", "/metrics"), ("POST", "/api/v1/jobs")):
            body = {"puzzle": tlib.load_puzzle("pentominoes-6x10.json")} if method == "POST" else None
            r = d.request(method, path, body=body, headers={"Host": host})
            check_error(r, 421, "--allow-host", what="%s %s with Host %s" % (method, path, host))
    for host in ("127.0.0.1:%d" % d.port, "127.0.0.1", "localhost:%d" % d.port, "LocalHost",
                 "localhost.", "127.0.0.2:%d" % d.port, "[::1]:%d" % d.port, "[::ffff:127.0.0.1]"):
        check_eq(d.get("/healthz", headers={"Host": host}).status, 200, "Host %s is accepted" % host)
    r = d.raw(b"GET /healthz HTTP/1.0\r\n\r\n")
    check(r is not None and r.status == 200, "HTTP/1.0 with no Host is answered", r)


def headers(d):
    for path in ("/", "/api/v1/jobs", "/no/such/file.js", "/healthz"):
        r = d.get(path)
        csp = r.header("Content-Security-Policy", "")
        for part in ("default-src 'self'", "script-src 'self'", "style-src 'self'",
                     "frame-ancestors 'none'", "object-src 'none'", "base-uri 'none'"):
            check(part in csp, "%s: the CSP has %s" % (path, part), csp)
        check_eq(r.header("X-Frame-Options"), "DENY", "%s: X-Frame-Options" % path)
        check_eq(r.header("Referrer-Policy"), "no-referrer", "%s: Referrer-Policy" % path)
        check_eq(r.header("X-Content-Type-Options"), "nosniff", "%s: nosniff" % path)


def caps(d):
    pz = tlib.load_puzzle("pentominoes-6x10.json")
    before = job_ids(d)
    for key, n in (("name", 201), ("description", 4097)):
        p = dict(pz)
        p[key] = "x" * n
        check_error(d.post("/api/v1/jobs", {"puzzle": p}), 422, "$.puzzle.%s" % key, "%d bytes" % n,
                    what="a %s of %d bytes" % (key, n))
        check_error(d.post("/api/v1/jobs", p), 422, "$.%s" % key, what="a bare puzzle's %s of %d bytes" % (key, n))
        check_error(d.post("/api/v1/validate", {"puzzle": p}), 422, "$.puzzle.%s" % key,
                    what="validate: a %s of %d bytes" % (key, n))
    check_eq(job_ids(d), before, "no job was created over the caps")
    p = dict(pz, name="\u00e9" * 100, description="d" * 4096)  # 200 bytes of UTF-8
    r = d.post("/api/v1/jobs", {"puzzle": p, "options": {"limit": 1}})
    check_eq(r.status, 201, "a 200-byte name and a 4096-byte description are accepted")
    return r.json["id"]


def vm_hwm(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def oversized_store(t):
    """A store from before the caps: 25 jobs with 3.9 MB names."""
    d = t.daemon(threads=1)
    jid = d.submit({"puzzle": tlib.load_puzzle("pentominoes-6x10.json"), "options": {"limit": 1}})["id"]
    d.wait_final(jid)
    d.stop()
    con = sqlite3.connect(d.db_path)
    pz = tlib.load_puzzle("pentominoes-6x10.json")
    pz["name"] = "N" * (3900 * 1024)
    doc = json.dumps(pz)
    cols = [c[1] for c in con.execute("PRAGMA table_info(jobs)") if c[1] != "id"]
    for _ in range(25):
        con.execute("INSERT INTO jobs (%s) SELECT %s FROM jobs WHERE id = ?" % (",".join(cols), ",".join(cols)),
                    (jid,))
    con.execute("UPDATE jobs SET puzzle = ?", (doc,))
    con.execute("UPDATE jobs SET stored = 0, solutions = 0 WHERE id != ?", (jid,))  # no chunks of their own
    con.commit()
    con.close()
    d.start()
    r = d.get("/api/v1/jobs?limit=1000")
    check_eq(r.status, 200, "the old store is listed")
    names = [j["name"] for j in r.json["jobs"]]
    check_eq(len(names), 26, "every job is listed")
    check(all(len(n.encode()) <= 200 and n.endswith("\u2026") for n in names),
          "each 3.9 MB name is cut to at most 200 bytes, ending with an ellipsis", names[0][:80])
    check(len(r.body) < 100 * 1024, "the page is small (%d bytes for 26 jobs)" % len(r.body))
    base = vm_hwm(d.proc.pid)
    errors = []

    def lister():
        try:
            for _ in range(5):
                if d.get("/api/v1/jobs?limit=1000").status != 200:
                    errors.append("status")
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(repr(e))
    threads = [threading.Thread(target=lister) for _ in range(20)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    grew = vm_hwm(d.proc.pid) - base
    tlib.log("20 concurrent listers x 5: peak RSS grew by %.1f MB" % (grew / 1e6))
    check_eq(errors, [], "every concurrent list answered 200")
    check(grew < 64 * 1024 * 1024, "20 concurrent lists grew the daemon by %.1f MB (< 64 MB)" % (grew / 1e6))
    d.stop()


def solution_pages(d):
    """Solutions of 1200 cells each: a page of 1000 would be ~30 MB."""
    width = 600
    pz = {"version": 1, "name": "dominoes 2x%d" % width, "board": {"size": [width, 2]},
          "pieces": [{"name": "D", "cells": [[0, 0], [1, 0]], "count": width}]}
    jid = d.submit({"puzzle": pz, "options": {"unique": "raw", "limit": 1500}})["id"]
    j = d.wait_final(jid, timeout=120)
    check_eq(j["stored"], 1500, "the 2x%d dominoes job stored 1500 solutions" % width)
    r = d.get("/api/v1/jobs/%d/solutions?limit=1000" % jid)
    n = len(r.json["solutions"])
    tlib.log("a page asked for 1000 solutions of %d bytes each: %d in %d bytes"
             % (width * 2, n, len(r.body)))
    check(0 < n < 1000, "the page stops at its byte budget (%d solutions)" % n)
    check(len(r.body) <= 5 * 1024 * 1024, "the page is at most about 4 MiB (%d bytes)" % len(r.body))
    check_eq(r.json["next"], r.json["solutions"][-1]["seq"], "a page cut at its budget has next")
    seqs = [s["seq"] for s in r.json["solutions"]]
    after = r.json["next"]
    while after is not None:
        page = d.get("/api/v1/jobs/%d/solutions?limit=1000&after=%d" % (jid, after)).json
        seqs += [s["seq"] for s in page["solutions"]]
        after = page["next"]
    check_eq(seqs, list(range(1, 1501)), "paging by next walks every solution once, in order")
    text = d.get("/api/v1/jobs/%d/solutions?limit=1000&format=text" % jid)
    check(text.status == 200 and len(text.body) <= 5 * 1024 * 1024,
          "the text format is bounded too (%d bytes)" % len(text.body))


def allowed(t):
    d = t.daemon(token="s3cret", extra=["--allow-host", "tessera.example,other.test",
                                        "--allow-origin", "https://tessera.example",
                                        "--allow-origin", "http://localhost:3000"])
    body = {"puzzle": tlib.load_puzzle("pentominoes-6x10.json"), "options": {"limit": 1}}
    for host in ("tessera.example", "TESSERA.example:443", "other.test:%d" % d.port):
        check_eq(d.get("/healthz", headers={"Host": host}).status, 200, "--allow-host: Host %s" % host)
    r = d.get("/api/v1/jobs", headers={"Host": "evil.example", "Authorization": "Bearer s3cret"})
    check_error(r, 421, what="another Host is refused even with the token")
    for origin in ("https://tessera.example", "http://localhost:3000"):
        r = d.post("/api/v1/jobs", body, headers={"Origin": origin, "Sec-Fetch-Site": "cross-site",
                                                  "Host": "tessera.example"})
        check_eq(r.status, 201, "--allow-origin %s may submit (with the token)" % origin)
    r = d.post("/api/v1/jobs", body, headers={"Origin": "https://tessera.example"}, auth=False)
    check_eq(r.status, 401, "an allowed origin still needs the token")
    check_error(d.post("/api/v1/jobs", body, headers={"Origin": "http://tessera.example"}), 403,
                what="the same host over another scheme is another origin")
    for bad in (["--allow-origin", "tessera.example"], ["--allow-host", "tessera.example:80"],
                ["--allow-host", "http://x"]):
        b = t.daemon(start=False, extra=bad)
        try:
            b.start(timeout=10)
            check(False, "%s is refused at start" % " ".join(bad))
        except tlib.Failure:
            b.proc.wait(5)
            check(b.proc.returncode != 0 and any(bad[1] in line for line in b.stderr_lines),
                  "%s is refused at start, naming it" % " ".join(bad), b.stderr_tail())


def main(t):
    tlib.SOFT = True
    d = t.daemon(threads=2)
    body = {"puzzle": tlib.load_puzzle("pentominoes-6x10.json"), "options": {"limit": 1}}
    long_job = d.submit(tlib.puzzle_body(tlib.LONG_PUZZLE, **tlib.LONG_OPTIONS))["id"]
    content_types(d, body)
    origins(d, body, long_job)
    hosts(d)
    headers(d)
    caps(d)
    d.action(long_job, "cancel")
    solution_pages(d)
    allowed(t)
    oversized_store(t)
    check_eq(d.get("/healthz").status, 200, "the daemon is well after all of it")


if __name__ == "__main__":
    tlib.run(main)
