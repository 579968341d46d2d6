#!/usr/bin/env python3
"""Token authentication: on loopback with --token, POST and DELETE need
`Authorization: Bearer T` (401 + WWW-Authenticate otherwise) and reading does
not; a non-loopback listen address without a token is refused at start; on a
non-loopback address with a token every /api and /metrics call needs it while
/healthz and static files do not."""

import os
import socket
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tlib  # noqa: E402
from tlib import check, check_eq, check_error  # noqa: E402

TOKEN = "s3cret-token-xyz"


def check_401(r, what):
    check_error(r, 401, what=what)
    wa = r.header("WWW-Authenticate") or ""
    check(wa.lower().startswith("bearer"), "%s: WWW-Authenticate: Bearer ..." % what, wa)


def non_loopback_addr():
    """An address of this machine that is not loopback, or None."""
    try:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.connect(("10.255.255.255", 1))  # no packet is sent
        ip = s.getsockname()[0]
        s.close()
        if not ip.startswith("127."):
            return ip
    except OSError:
        pass
    try:
        for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET):
            ip = info[4][0]
            if not ip.startswith("127."):
                return ip
    except OSError:
        pass
    return None


def main(t):
    body = tlib.puzzle_body("pentominoes-3x20.json", unique="raw")
    expect = tlib.expected("pentominoes-3x20.json", "raw")

    # ---- loopback with a token ------------------------------------------------------
    d = t.daemon(threads=2, token=TOKEN)
    r = d.post("/api/v1/jobs", body, auth=False)
    check_401(r, "POST without Authorization")
    r = d.post("/api/v1/jobs", body, auth="wrong-token")
    check_401(r, "POST with a wrong token")
    r = d.post("/api/v1/jobs", body, auth=TOKEN + "x")
    check_401(r, "POST with the token plus one character")
    r = d.post("/api/v1/jobs", body, auth=TOKEN[:-1])
    check_401(r, "POST with a prefix of the token")
    r = d.post("/api/v1/jobs", body, headers={"Authorization": "Basic " + TOKEN})
    check_401(r, "POST with the token as Basic credentials")
    r = d.post("/api/v1/jobs", body, headers={"Authorization": "Bearer"})
    check_401(r, "POST with an empty Bearer")
    check_eq(d.list_jobs(), [], "refused POSTs created no job")

    r = d.post("/api/v1/jobs", body)
    check_eq(r.status, 201, "POST with the right token: 201")
    jid = r.json["id"]
    r = d.post("/api/v1/jobs", body, headers={"Authorization": "bearer " + TOKEN})
    check(r.status in (201, 401), "lower-case scheme 'bearer': 201 or 401", r)
    if r.status == 201:
        d.wait_final(r.json["id"])
        d.delete("/api/v1/jobs/%d" % r.json["id"])
    j = d.wait_state(jid, "completed", timeout=60)
    check_eq(j["solutions"], expect, "the job submitted with the token runs (published count)")

    for path in ("/api/v1/jobs", "/api/v1/jobs/%d" % jid, "/api/v1/jobs/%d/solutions" % jid, "/healthz",
                 "/metrics", "/api/v1/puzzles", "/"):
        r = d.get(path, auth=False)
        check_eq(r.status, 200, "GET %s without token on loopback" % path)
    for act in ("pause", "resume", "cancel"):
        r = d.post("/api/v1/jobs/%d/%s" % (jid, act), auth=False)
        check_401(r, "POST %s without token" % act)
    r = d.delete("/api/v1/jobs/%d" % jid, auth=False)
    check_401(r, "DELETE without token")
    r = d.delete("/api/v1/jobs/%d" % jid, auth="nope")
    check_401(r, "DELETE with a wrong token")
    check_eq(d.job(jid)["state"], "completed", "the job is still there")
    r = d.delete("/api/v1/jobs/%d" % jid)
    check_eq(r.status, 204, "DELETE with the token: 204")
    d.stop()

    # the token from the environment
    de = t.daemon(threads=1, start=False, env={"TESSERAD_TOKEN": TOKEN})
    de.start()
    r = de.post("/api/v1/jobs", body)
    check_401(r, "TESSERAD_TOKEN: POST without token")
    r = de.post("/api/v1/jobs", body, auth=TOKEN)
    check_eq(r.status, 201, "TESSERAD_TOKEN: POST with it: 201")
    de.stop()

    # ---- non-loopback without a token: refused at start ------------------------------
    sd = t.tempdir()
    p = subprocess.run([tlib.BINARY, "--listen", "0.0.0.0:0", "--state-dir", sd, "--threads", "1",
                        "--puzzles", tlib.PUZZLES],
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=30,
                       env={k: v for k, v in os.environ.items() if k != "TESSERAD_TOKEN"})
    err = (p.stderr + p.stdout).decode("utf-8", "replace")
    check(p.returncode != 0, "--listen 0.0.0.0:0 without a token: nonzero exit", (p.returncode, err))
    check("token" in err.lower(), "the refusal message mentions the token", err)
    check("listening on" not in err, "it never listened", err)

    # ---- non-loopback with a token ----------------------------------------------------
    dn = t.daemon(threads=1, token=TOKEN, listen="0.0.0.0:0")
    addrs = ["127.0.0.1"]
    ext = non_loopback_addr()
    if ext:
        addrs.append(ext)
    for host in addrs:
        dn.host = host
        r = dn.get("/api/v1/jobs", auth=False)
        check_401(r, "0.0.0.0 via %s: GET /api/v1/jobs without token" % host)
        r = dn.get("/metrics", auth=False)
        check_401(r, "0.0.0.0 via %s: GET /metrics without token" % host)
        r = dn.get("/api/v1/puzzles", auth=False)
        check_401(r, "0.0.0.0 via %s: GET /api/v1/puzzles without token" % host)
        r = dn.get("/api/v1/jobs/1/events", auth=False)
        check_401(r, "0.0.0.0 via %s: GET events without token" % host)
        r = dn.get("/api/v1/jobs", auth="wrong")
        check_401(r, "0.0.0.0 via %s: GET /api/v1/jobs with a wrong token" % host)
        r = dn.get("/healthz", auth=False)
        check_eq(r.status, 200, "0.0.0.0 via %s: /healthz without token" % host)
        r = dn.get("/", auth=False)
        check_eq(r.status, 200, "0.0.0.0 via %s: static / without token" % host)
        r = dn.get("/api/v1/jobs")
        check_eq(r.status, 200, "0.0.0.0 via %s: GET /api/v1/jobs with the token" % host)
        r = dn.get("/metrics")
        check_eq(r.status, 200, "0.0.0.0 via %s: GET /metrics with the token" % host)
    dn.host = "127.0.0.1"
    r = dn.post("/api/v1/jobs", body)
    check_eq(r.status, 201, "0.0.0.0: POST with the token: 201")
    rc, _ = dn.stop()
    check_eq(rc, 0, "0.0.0.0 daemon: SIGTERM exit 0")


if __name__ == "__main__":
    tlib.run(main)
