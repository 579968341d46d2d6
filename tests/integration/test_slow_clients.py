#!/usr/bin/env python3
"""Slow and greedy clients cannot hold the server (docs/api.md, "Limits").

Through the real daemon, with clients on other loopback addresses
(127.0.0.2 and up; Linux routes all of 127/8 to lo) so that the health
checks from 127.0.0.1 count as another client:
  - 300 clients sending a request one byte a second are all cut off within
    the header bound (10 s) while /healthz keeps answering;
  - a client that sends its headers and then trickles a body is cut off at
    the body bound (30 s after its headers);
  - one address gets at most 256 connections: the rest are closed at once;
  - 1024 idle connections fill the server's limit, and /healthz still
    answers on the reserve while other routes answer 503 with a JSON error;
    once the idle ones are cut, everything answers again;
  - ids and paths have one spelling: /api/v1/jobs/01 and
    /api/v1/jobs/1%2fsolutions are 404.
"""

import errno
import json
import resource
import selectors
import socket
import time

import tlib
from tlib import check, check_eq

HEADER_S, BODY_S, PER_ADDRESS, LIMIT = 10.0, 30.0, 256, 1024
SLACK = 4.0 if tlib.QUICK else 2.0  # the guard looks every 0.25 s; load and sanitizers add some


def connect(d, source):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((source, 0))
    s.setblocking(False)
    try:
        s.connect((d.host, d.port))
    except BlockingIOError:
        pass
    return s


def closed_by_peer(s):
    """True when the server has closed or shut down the connection."""
    try:
        return s.recv(4096) == b""
    except BlockingIOError:
        return False
    except OSError as e:
        return e.errno in (errno.ECONNRESET, errno.EPIPE, errno.ENOTCONN)


class Crowd:
    """Sockets from some source addresses; each records when the server cut it."""

    def __init__(self, d, sources, per_source):
        self.t0 = time.monotonic()
        self.socks = [connect(d, src) for src in sources for _ in range(per_source)]
        self.cut_at = {}

    def poll(self):
        now = time.monotonic() - self.t0
        for i, s in enumerate(self.socks):
            if i not in self.cut_at and closed_by_peer(s):
                self.cut_at[i] = now

    def trickle(self, request, k):
        """Send byte k of `request` on every socket still open."""
        for i, s in enumerate(self.socks):
            if i not in self.cut_at and k < len(request):
                try:
                    s.send(request[k:k + 1])
                except OSError:
                    pass

    def close(self):
        for s in self.socks:
            s.close()


def healthz_time(d):
    t = time.monotonic()
    r = d.get("/healthz", timeout=10)
    return r.status, time.monotonic() - t


def slow_headers(d):
    request = b"GET /api/v1/jobs HTTP/1.1\r\nHost: x\r\nUser-Agent: " + b"s" * 200 + b"\r\n\r\n"
    crowd = Crowd(d, ["127.0.0.2", "127.0.0.3"], 150)
    # a request whose headers come at once and whose body trickles
    body = connect(d, "127.0.0.9")
    time.sleep(0.2)
    body.send(b"POST /api/v1/validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Content-Length: 100000\r\n\r\n{")
    body_t0 = time.monotonic()
    worst, k = 0.0, 0
    while time.monotonic() - crowd.t0 < HEADER_S + SLACK + 1 and len(crowd.cut_at) < len(crowd.socks):
        crowd.trickle(request, k)
        k += 1
        status, took = healthz_time(d)
        worst = max(worst, took)
        if status != 200:
            check(False, "/healthz answers 200 during the slow crowd", status)
        time.sleep(max(0.0, crowd.t0 + k - time.monotonic()))
        crowd.poll()
    crowd.poll()
    cut = sorted(crowd.cut_at.values())
    tlib.log("slow crowd: %d of %d cut, from %.1f s to %.1f s; /healthz worst %.2f s"
             % (len(cut), len(crowd.socks), cut[0] if cut else -1, cut[-1] if cut else -1, worst))
    check_eq(len(cut), len(crowd.socks), "every slow client was cut off")
    check(cut and cut[0] >= HEADER_S - 0.5 and cut[-1] <= HEADER_S + SLACK,
          "they were cut at the header bound (%.1f s to %.1f s, bound %g s)"
          % (cut[0] if cut else -1, cut[-1] if cut else -1, HEADER_S))
    check(worst < 2.0, "/healthz answered within 2 s throughout (worst %.2f s)" % worst)
    crowd.close()
    return body, body_t0


def body_cut(body, body_t0):
    """Trickle the body a byte a second until the server cuts it."""
    body.setblocking(False)
    while time.monotonic() - body_t0 < BODY_S + SLACK + 1:
        try:
            body.send(b" ")
        except OSError:
            break
        if closed_by_peer(body):
            break
        time.sleep(1)
    took = time.monotonic() - body_t0
    check(BODY_S - 1 <= took <= BODY_S + SLACK + 1,
          "a trickled body was cut at the body bound (%.1f s after its headers, bound %g s)"
          % (took, BODY_S))
    body.close()


def per_address(d):
    crowd = Crowd(d, ["127.0.0.4"], 300)
    time.sleep(1.0)
    crowd.poll()
    tlib.log("300 connections from one address: %d closed at once" % len(crowd.cut_at))
    check_eq(len(crowd.cut_at), 300 - PER_ADDRESS, "one address holds at most %d connections" % PER_ADDRESS)
    check_eq(healthz_time(d)[0], 200, "/healthz answers meanwhile")
    crowd.close()


def full_server(d):
    crowd = Crowd(d, ["127.0.0.%d" % i for i in range(5, 9)], PER_ADDRESS)  # 1024: the limit
    time.sleep(1.5)
    crowd.poll()
    check_eq(len(crowd.cut_at), 0, "%d idle connections are all admitted" % LIMIT)
    status, took = healthz_time(d)
    # (sanitizer builds, TSR_QUICK, answer several times slower: SCALE)
    check(status == 200 and took < 2.0 * tlib.SCALE,
          "the server is full: /healthz still answers (%d in %.2f s)" % (status, took))
    r = d.get("/api/v1/jobs", timeout=10)
    tlib.check_error(r, 503, "limit of 1024 connections", "/healthz", what="the server is full: other routes")
    while time.monotonic() - crowd.t0 < HEADER_S + SLACK + 1 and len(crowd.cut_at) < len(crowd.socks):
        time.sleep(0.5)
        crowd.poll()
    check_eq(len(crowd.cut_at), LIMIT, "the idle connections are cut at the header bound")
    time.sleep(0.5)
    check_eq(d.get("/api/v1/jobs").status, 200, "after them, every route answers again")
    crowd.close()


def canonical(d):
    jid = d.submit(tlib.puzzle_body("pentominoes-6x10.json", limit=1))["id"]
    check_eq(jid, 1, "the first job is job 1")
    check_eq(d.get("/api/v1/jobs/1").status, 200, "/api/v1/jobs/1 is the job")
    for path in ("/api/v1/jobs/01", "/api/v1/jobs/+1", "/api/v1/jobs/1%2fsolutions",
                 "/api/v1/jobs/1%2Fsolutions", "/api/v1/jobs%2f1"):
        r = d.get(path)
        tlib.check_error(r, 404, what=path)


def main(t):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 4096
    if hard != resource.RLIM_INFINITY and hard < want:
        raise tlib.Skip("needs %d open files (ulimit -Hn is %d)" % (want, hard))
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, want), hard))
    d = t.daemon(threads=1)
    canonical(d)
    body, body_t0 = slow_headers(d)
    per_address(d)
    body_cut(body, body_t0)
    full_server(d)
    cut = [l for l in d.get("/metrics").text.splitlines() if l.startswith("tessera_http_connections_cut_total ")]
    check(cut and float(cut[0].split()[1]) >= 300 + 44 + 1 + LIMIT,
          "metrics count the connections cut (%s)" % (cut[0] if cut else "missing"))
    check_eq(d.get("/healthz").status, 200, "the daemon is well after all of it")


if __name__ == "__main__":
    tlib.run(main)
