"""Shared helpers for the tesserad integration tests (Python 3 stdlib only).

A test script does:

    import tlib
    from tlib import check, check_eq

    def main(t):
        d = t.daemon(threads=2)          # fresh temp state dir, port 0
        r = d.post("/api/v1/jobs", tlib.puzzle_body("pentominoes-6x10.json"))
        check_eq(r.status, 201, "submit answers 201")
        ...

    if __name__ == "__main__":
        tlib.run(main)

tlib.run() prints every check, exits 0 on success, 1 on the first failed check
(or any exception), 77 when the test is skipped (e.g. no tesserad binary), and
always kills the daemons it started and removes their state dirs (set
TSR_KEEP=1 to keep the state dirs for inspection).

Environment:
  TSR_SRCDIR  the source tree (puzzles/ lives there); default: this file's ../..
  TESSERAD    the daemon binary; default: $TSR_SRCDIR/tesserad, else ./tesserad
  TSR_VERBOSE print every HTTP request
"""

import atexit
import http.client
import json
import math
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.path.abspath(os.environ.get("TSR_SRCDIR") or os.path.join(HERE, "..", ".."))
PUZZLES = os.path.join(SRCDIR, "puzzles")
VERBOSE = bool(os.environ.get("TSR_VERBOSE"))
# Sanitizer builds (make check-asan / check-tsan set TSR_QUICK=1) run several
# times slower: the long job becomes a smaller search and every timeout
# stretches by TSR_TIMEOUT_SCALE (default 10 there, 1 otherwise).
QUICK = bool(os.environ.get("TSR_QUICK"))
SCALE = float(os.environ.get("TSR_TIMEOUT_SCALE") or (10 if QUICK else 1))
LONG_PUZZLE = "pentominoes-6x10.json" if QUICK else "tetris-cube.json"
LONG_OPTIONS = {"fila": 0} if QUICK else {}

FINAL_STATES = ("completed", "cancelled", "failed")


def fraction_text(f):
    """A fraction done as the CLI and the dashboard print it
    (tsr_fraction_text, fmtPercent): "42.1%", four digits below 0.1%."""
    p = 100 * min(max(f, 0), 1)
    if 0 < p < 0.1:
        e = math.floor(math.log10(p))
        return "%.*f%%" % (3 - e, p) if e >= -6 else "%.3fe%d%%" % (p / 10 ** e, e)
    return "%.1f%%" % (99.9 if p >= 99.95 and f < 1 else p)
ALL_STATES = ("queued", "running", "paused", "completed", "cancelled", "failed")


def find_binary():
    b = os.environ.get("TESSERAD")
    if b:
        return os.path.abspath(b)
    for cand in (os.path.join(SRCDIR, "tesserad"), os.path.join(os.getcwd(), "tesserad")):
        if os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    return os.path.join(SRCDIR, "tesserad")


BINARY = find_binary()


# --------------------------------------------------------------------------
# checks


class Failure(Exception):
    pass


class Skip(Exception):
    pass


_checks = [0]
_t0 = time.monotonic()
_soft_failures = []

# When SOFT is true, a failed check() is recorded and the test goes on (the script
# still exits 1 at the end); tests of many independent requests set it so that one
# run reports every failure.  check(..., fatal=True) always stops.
SOFT = False


def log(msg):
    print("[%6.2fs] %s" % (time.monotonic() - _t0, msg), flush=True)


def check(cond, what, detail=None, fatal=False):
    """Assert `cond`; `what` says what is checked (printed on success too).
    Returns whether it held (only matters with SOFT)."""
    _checks[0] += 1
    if not cond:
        msg = "FAIL: " + what
        if detail is not None:
            msg += "\n      " + _short(detail)
        if SOFT and not fatal:
            _soft_failures.append(msg)
            log(msg + "\n      (continuing)")
            return False
        raise Failure(msg)
    log("ok: " + what)
    return True


def check_eq(got, want, what, fatal=False):
    return check(got == want, "%s (== %s)" % (what, _short(want, 120)),
                 "got %s, want %s" % (_short(got), _short(want)), fatal)


def _short(x, n=2000):
    s = x if isinstance(x, str) else repr(x)
    return s if len(s) <= n else s[:n] + "...(%d chars)" % len(s)


# --------------------------------------------------------------------------
# puzzles


def puzzle_path(name):
    return os.path.join(PUZZLES, name)


def load_puzzle(name):
    with open(puzzle_path(name), "rb") as f:
        return json.loads(f.read().decode("utf-8"))


def load_polycube(name):
    with open(os.path.join(PUZZLES, "polycube", name), "rb") as f:
        return f.read().decode("utf-8")


def expected(name, mode):
    """The published count of a puzzle file for unique mode `mode`."""
    e = load_puzzle(name).get("expected") or {}
    if mode not in e:
        raise Skip("%s publishes no expected %s count" % (name, mode))
    return e[mode]


def puzzle_body(name, **options):
    body = {"puzzle": load_puzzle(name)}
    if options:
        body["options"] = options
    return body


def board_cells(puzzle):
    """The set of (x, y, z) cells of a puzzle's board as the puzzle file gives it.

    Supports "board": {"size": [X, Y(, Z)]} optionally with "holes"/"rows"/"layers"
    kinds used in puzzles/; returns None when the shape is not understood."""
    b = puzzle.get("board", {})
    if "size" in b and set(b) <= {"size"}:
        size = list(b["size"]) + [1] * (3 - len(b["size"]))
        return {(x, y, z) for x in range(size[0]) for y in range(size[1]) for z in range(size[2])}
    return None


# --------------------------------------------------------------------------
# HTTP


class Response:
    def __init__(self, status, reason, headers, body):
        self.status = status
        self.reason = reason
        self.headers = headers  # list of (name, value)
        self.body = body        # bytes
        self._json = None

    def header(self, name, default=None):
        name = name.lower()
        for k, v in self.headers:
            if k.lower() == name:
                return v
        return default

    @property
    def text(self):
        return self.body.decode("utf-8", "replace")

    @property
    def json(self):
        if self._json is None:
            try:
                self._json = json.loads(self.body.decode("utf-8"))
            except Exception as e:
                raise Failure("response is not JSON (%s): status %d body %r" % (e, self.status, self.body[:500]))
        return self._json

    def __repr__(self):
        return "<%d %s %s>" % (self.status, self.reason, _short(self.text, 300))


def http_request(host, port, method, path, body=None, headers=None, timeout=30):
    if body is not None and not isinstance(body, (bytes, str)):
        body = json.dumps(body)
    if isinstance(body, str):
        body = body.encode("utf-8")
    h = {}
    if body is not None:
        h["Content-Type"] = "application/json"
    h.update(headers or {})
    conn = http.client.HTTPConnection(host, port, timeout=timeout * SCALE)
    try:
        conn.request(method, path, body=body, headers=h)
        r = conn.getresponse()
        data = r.read()
        resp = Response(r.status, r.reason, r.getheaders(), data)
    finally:
        conn.close()
    if VERBOSE:
        log("%s %s -> %r" % (method, path, resp))
    return resp


def raw_request(host, port, data, timeout=30, half_close=False):
    """Send raw bytes, read until the server closes (or one full response).

    Returns a Response, or None when the server closed without answering."""
    s = socket.create_connection((host, port), timeout=timeout)
    try:
        try:
            s.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            pass
        if half_close:
            try:
                s.shutdown(socket.SHUT_WR)
            except OSError:
                pass
        buf = b""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                chunk = s.recv(65536)
            except ConnectionResetError:
                break
            except socket.timeout:
                break
            if not chunk:
                break
            buf += chunk
            r = _parse_response(buf)
            if r is not None:
                return r
        return _parse_response(buf, eof=True)
    finally:
        s.close()


def _parse_response(buf, eof=False):
    i = buf.find(b"\r\n\r\n")
    if i < 0:
        return None
    head = buf[:i].decode("latin-1").split("\r\n")
    m = re.match(r"HTTP/1\.[01] (\d{3}) ?(.*)", head[0])
    if not m:
        return None
    headers = []
    for line in head[1:]:
        k, _, v = line.partition(":")
        headers.append((k.strip(), v.strip()))
    rest = buf[i + 4:]
    hd = {k.lower(): v for k, v in headers}
    if "content-length" in hd:
        n = int(hd["content-length"])
        if len(rest) < n and not eof:
            return None
        return Response(int(m.group(1)), m.group(2), headers, rest[:n])
    if hd.get("transfer-encoding", "").lower() == "chunked":
        body = b""
        p = 0
        while True:
            j = rest.find(b"\r\n", p)
            if j < 0:
                return Response(int(m.group(1)), m.group(2), headers, body) if eof else None
            n = int(rest[p:j].split(b";")[0], 16)
            if n == 0:
                return Response(int(m.group(1)), m.group(2), headers, body)
            if len(rest) < j + 2 + n + 2:
                return Response(int(m.group(1)), m.group(2), headers, body) if eof else None
            body += rest[j + 2:j + 2 + n]
            p = j + 2 + n + 2
    if not eof:
        return None
    return Response(int(m.group(1)), m.group(2), headers, rest)


# --------------------------------------------------------------------------
# daemons

_children = []
_tempdirs = []
_at_exit = []


def at_exit(fn):
    """Run fn() when the test ends, after its daemons are killed and before
    its temporary directories go (e.g. unmount a file system made for it)."""
    _at_exit.append(fn)


def _cleanup():
    for d in list(_children):
        d.kill()
    while _at_exit:
        try:
            _at_exit.pop()()
        except OSError:
            pass
    if not os.environ.get("TSR_KEEP"):
        for t in _tempdirs:
            shutil.rmtree(t, ignore_errors=True)
    elif _tempdirs:
        print("TSR_KEEP: state kept in " + " ".join(_tempdirs), flush=True)


atexit.register(_cleanup)


def _on_signal(signum, frame):
    _cleanup()
    sys.exit(128 + signum)


class Daemon:
    """One tesserad with a state dir that survives stop()/kill()/start()."""

    def __init__(self, threads=2, token=None, listen="127.0.0.1:0", checkpoint=None,
                 state_dir=None, extra=(), www=None, env=None):
        if not (os.path.isfile(BINARY) and os.access(BINARY, os.X_OK)):
            raise Skip("no tesserad binary at %s (set TESSERAD or build it)" % BINARY)
        if state_dir is None:
            state_dir = tempfile.mkdtemp(prefix="tsr-it-")
            _tempdirs.append(state_dir)
        self.state_dir = state_dir
        self.db_path = os.path.join(state_dir, "tessera.db")
        if www is None:
            www = os.path.join(state_dir, "www")
            os.makedirs(www, exist_ok=True)
            with open(os.path.join(www, "index.html"), "w") as f:
                f.write("<!doctype html><title>tesserad test</title>\n")
        self.www = www
        self.threads = threads
        self.token = token
        self.listen = listen
        self.checkpoint = checkpoint
        self.extra = list(extra)
        self.env = env
        self.proc = None
        self.port = None
        self.host = "127.0.0.1"
        self.stderr_lines = []
        self.starts = 0

    def argv(self):
        a = [BINARY, "--listen", self.listen, "--state-dir", self.state_dir,
             "--puzzles", PUZZLES, "--www", self.www]
        if self.threads is not None:
            a += ["--threads", str(self.threads)]
        if self.token is not None:
            a += ["--token", self.token]
        if self.checkpoint is not None:
            a += ["--checkpoint-seconds", str(self.checkpoint)]
        return a + self.extra

    def _env(self):
        env = dict(os.environ)
        env.pop("TESSERAD_TOKEN", None)
        env.pop("STATE_DIRECTORY", None)
        env.pop("NOTIFY_SOCKET", None)
        if self.env:
            env.update(self.env)
        return env

    def start(self, timeout=30):
        """Start and wait until it listens and /healthz answers 200."""
        assert self.proc is None or self.proc.poll() is not None, "daemon already running"
        self.starts += 1
        self.port = None
        ready = threading.Event()
        self.proc = subprocess.Popen(self.argv(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, env=self._env(), cwd=self.state_dir)
        _children.append(self)
        proc = self.proc
        gen = self.starts

        def reader():
            for raw in proc.stderr:
                line = raw.decode("utf-8", "replace").rstrip("\n")
                self.stderr_lines.append("[%d] %s" % (gen, line))
                m = re.search(r"listening on (\S+) \(port (\d+)\)", line)
                if m and self.port is None:
                    self.port = int(m.group(2))
                    ready.set()
            ready.set()

        threading.Thread(target=reader, daemon=True).start()
        timeout *= SCALE
        deadline = time.monotonic() + timeout
        if not ready.wait(timeout):
            raise Failure("tesserad printed no 'listening on' line in %ds:\n%s" % (timeout, self.stderr_tail()))
        if self.port is None:
            proc.wait(5)
            raise Failure("tesserad exited (rc %s) before listening:\n%s" % (proc.returncode, self.stderr_tail()))
        while time.monotonic() < deadline:
            try:
                if self.get("/healthz", timeout=5).status == 200:
                    return self
            except OSError:
                pass
            if proc.poll() is not None:
                raise Failure("tesserad exited (rc %s) at start:\n%s" % (proc.returncode, self.stderr_tail()))
            time.sleep(0.05)
        raise Failure("tesserad /healthz did not answer 200 within %ds" % timeout)

    def stderr_tail(self, n=40):
        return "\n".join(self.stderr_lines[-n:])

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self, timeout=15):
        """SIGTERM and wait; returns (exit code, seconds it took)."""
        if not self.alive():
            return (self.proc.returncode if self.proc else None), 0.0
        t = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout * SCALE)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise Failure("tesserad did not exit within %ds of SIGTERM:\n%s" % (timeout, self.stderr_tail()))
        if self in _children:
            _children.remove(self)
        return rc, time.monotonic() - t

    def kill(self):
        """SIGKILL (no checkpoint) and reap."""
        if self.proc is not None and self.proc.poll() is None:
            try:
                self.proc.kill()
            except OSError:
                pass
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                pass
        if self in _children:
            _children.remove(self)

    def restart(self, timeout=30):
        rc, _ = self.stop()
        self.start(timeout)
        return rc

    # HTTP ---------------------------------------------------------------

    def request(self, method, path, body=None, headers=None, auth=True, timeout=30):
        h = {}
        if isinstance(auth, str):
            h["Authorization"] = "Bearer " + auth
        elif auth and self.token is not None:
            h["Authorization"] = "Bearer " + self.token
        h.update(headers or {})
        return http_request(self.host, self.port, method, path, body, h, timeout)

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, body=None, **kw):
        return self.request("POST", path, body, **kw)

    def delete(self, path, **kw):
        return self.request("DELETE", path, **kw)

    def raw(self, data, **kw):
        return raw_request(self.host, self.port, data, **kw)

    # jobs ---------------------------------------------------------------

    def submit(self, body, want=201):
        r = self.post("/api/v1/jobs", body)
        if r.status != want:
            raise Failure("submit answered %d, want %d: %s" % (r.status, want, r.text[:1000]))
        return r.json

    def job(self, jid):
        r = self.get("/api/v1/jobs/%d" % jid)
        if r.status != 200:
            raise Failure("GET job %d answered %d: %s" % (jid, r.status, r.text[:500]))
        return r.json

    def action(self, jid, what, want=200):
        r = self.post("/api/v1/jobs/%d/%s" % (jid, what))
        if want is not None and r.status != want:
            raise Failure("POST /api/v1/jobs/%d/%s answered %d, want %d: %s" % (jid, what, r.status, want, r.text[:500]))
        return r

    def wait_for(self, jid, pred, timeout=90, what=None, interval=0.05):
        timeout *= SCALE
        """Poll GET /api/v1/jobs/{id} until pred(job) holds; return the job."""
        deadline = time.monotonic() + timeout
        j = None
        while True:
            j = self.job(jid)
            if pred(j):
                return j
            if time.monotonic() > deadline:
                raise Failure("timeout (%ds) waiting for job %d: %s; last: state=%s solutions=%s progress=%s error=%s"
                              % (timeout, jid, what or "condition", j.get("state"), j.get("solutions"),
                                 j.get("progress"), j.get("error")))
            if not self.alive():
                raise Failure("tesserad died while waiting for job %d:\n%s" % (jid, self.stderr_tail()))
            time.sleep(interval)

    def wait_final(self, jid, timeout=120):
        return self.wait_for(jid, lambda j: j["state"] in FINAL_STATES, timeout, "a final state")

    def wait_state(self, jid, state, timeout=90):
        return self.wait_for(jid, lambda j: j["state"] == state, timeout, "state " + state)

    def all_solutions(self, jid, page=1000):
        """Walk the solutions pages; returns the list of solutions."""
        out = []
        after = 0
        while True:
            r = self.get("/api/v1/jobs/%d/solutions?after=%d&limit=%d" % (jid, after, page))
            if r.status != 200:
                raise Failure("solutions page answered %d: %s" % (r.status, r.text[:500]))
            out += r.json["solutions"]
            if r.json["next"] is None:
                return out
            after = r.json["next"]

    def list_jobs(self, state=None):
        out = []
        after = 0
        while True:
            q = "/api/v1/jobs?after=%d&limit=1000" % after + ("&state=" + state if state else "")
            r = self.get(q)
            if r.status != 200:
                raise Failure("job list answered %d: %s" % (r.status, r.text[:500]))
            out += r.json["jobs"]
            if r.json["next"] is None:
                return out
            after = r.json["next"]


class EventStream:
    """Follow GET /api/v1/jobs/{id}/events in a background thread.

    .status/.headers once connected; .events: list of dicts {"id", "event", "data"
    (parsed JSON), "raw_data", "t"}; .comments: comment lines; .ended is set when
    the server closed the stream; .error holds an exception, if any."""

    def __init__(self, d, jid, timeout=120):
        self.d = d
        self.jid = jid
        self.status = None
        self.headers = []
        self.events = []
        self.comments = []
        self.malformed = []
        self.connected = threading.Event()
        self.ended = threading.Event()
        self.end_time = None
        self.error = None
        self.body = b""
        self._conn = http.client.HTTPConnection(d.host, d.port, timeout=timeout)
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        try:
            h = {"Accept": "text/event-stream"}
            if self.d.token:
                h["Authorization"] = "Bearer " + self.d.token
            self._conn.request("GET", "/api/v1/jobs/%d/events" % self.jid, headers=h)
            r = self._conn.getresponse()
            self.status = r.status
            self.headers = r.getheaders()
            self.connected.set()
            if r.status != 200:
                self.body = r.read()
                return
            ev = {}
            while True:
                line = r.readline()
                if not line:
                    break
                line = line.decode("utf-8")
                if not line.endswith("\n"):
                    self.malformed.append(line)
                    break
                line = line.rstrip("\r\n")
                if line == "":
                    if ev:
                        ev["t"] = time.monotonic()
                        try:
                            ev["data"] = json.loads(ev.get("raw_data", ""))
                        except ValueError:
                            self.malformed.append(ev.get("raw_data"))
                            ev["data"] = None
                        self.events.append(ev)
                    ev = {}
                elif line.startswith(":"):
                    self.comments.append(line)
                else:
                    k, _, v = line.partition(":")
                    v = v[1:] if v.startswith(" ") else v
                    if k == "data":
                        if "raw_data" in ev:  # the contract says one data line per event
                            self.malformed.append("second data line: " + v[:100])
                            ev["raw_data"] += "\n" + v
                        else:
                            ev["raw_data"] = v
                    elif k in ("id", "event", "retry"):
                        ev[k] = v
                    else:
                        self.malformed.append(line)
            if ev:
                self.malformed.append("unterminated event at end of stream: %r" % ev)
        except Exception as e:  # noqa: BLE001 - reported by the test
            self.error = e
        finally:
            self.end_time = time.monotonic()
            self.connected.set()
            self.ended.set()
            try:
                self._conn.close()
            except Exception:
                pass

    def header(self, name, default=None):
        for k, v in self.headers:
            if k.lower() == name.lower():
                return v
        return default

    def wait_events(self, n, timeout=30):
        deadline = time.monotonic() + timeout
        while len(self.events) < n and not self.ended.is_set() and time.monotonic() < deadline:
            time.sleep(0.02)
        return len(self.events) >= n

    def close(self):
        try:
            self._conn.sock and self._conn.sock.shutdown(socket.SHUT_RDWR)
        except Exception:
            pass


class Test:
    def __init__(self):
        self.daemons = []

    def daemon(self, start=True, **kw):
        d = Daemon(**kw)
        self.daemons.append(d)
        if start:
            d.start()
        return d

    def tempdir(self):
        t = tempfile.mkdtemp(prefix="tsr-it-")
        _tempdirs.append(t)
        return t


def check_error(r, status, *needles, what=""):
    """Check an error answer: status and the {"error":{"status","message"}} body.

    Every needle (a str, case-insensitive, or a compiled regex) must occur in the
    message."""
    label = what or "error"
    if not check(r is not None, "%s: answered" % label, "the server closed the connection without an answer"):
        return None
    check(r.status == status, "%s: status %d" % (label, status), "got %d %s" % (r.status, _short(r.text, 500)))
    try:
        body = json.loads(r.body.decode("utf-8"))
    except Exception:
        check(False, "%s: error body is JSON" % label, r.body[:300])
        return None
    ok = (isinstance(body, dict) and set(body) == {"error"} and isinstance(body["error"], dict)
          and body["error"].get("status") == status and isinstance(body["error"].get("message"), str)
          and body["error"]["message"] != "")
    if not check(ok, "%s: body is {\"error\":{\"status\":%d,\"message\":...}}" % (label, status), body):
        return None
    msg = body["error"]["message"]
    for n in needles:
        if isinstance(n, str):
            check(n.lower() in msg.lower(), "%s: message names %r" % (label, n), msg)
        else:
            check(n.search(msg) is not None, "%s: message matches /%s/" % (label, n.pattern), msg)
    return msg


SANITIZER_MARKS = ("WARNING: ThreadSanitizer", "ERROR: AddressSanitizer", "ERROR: LeakSanitizer",
                   "runtime error:")


def sanitizer_reports(t):
    """In sanitizer builds a race, a bad access or a leak in the daemon is a
    failure even when every answer was right: stop the daemons still running
    (their exit-time reports come then) and look for reports in everything
    any of them wrote."""
    for d in t.daemons:
        if d.alive():
            d.stop()
    time.sleep(0.2)  # the stderr readers catch up
    for d in t.daemons:
        hits = [i for i, line in enumerate(d.stderr_lines) if any(m in line for m in SANITIZER_MARKS)]
        if hits:
            raise Failure("sanitizer report in tesserad's stderr:\n" +
                          "\n".join(d.stderr_lines[hits[0]:hits[0] + 40]))


def run(main):
    """Run main(Test()) and exit 0/1/77; kills daemons on the way out."""
    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    name = os.path.basename(sys.argv[0])
    t = Test()
    rc = 0
    try:
        main(t)
        sanitizer_reports(t)
        if _soft_failures:
            print("%d check(s) failed:\n%s" % (len(_soft_failures), "\n".join(_soft_failures)), flush=True)
            rc = 1
        else:
            log("PASS %s: %d checks in %.1fs" % (name, _checks[0], time.monotonic() - _t0))
    except Skip as e:
        log("SKIP %s: %s" % (name, e))
        rc = 77
    except Failure as e:
        if _soft_failures:
            print("%d earlier check(s) failed:\n%s" % (len(_soft_failures), "\n".join(_soft_failures)), flush=True)
        print(str(e), flush=True)
        rc = 1
    except Exception:
        import traceback
        traceback.print_exc()
        if _soft_failures:
            print("%d earlier check(s) failed:\n%s" % (len(_soft_failures), "\n".join(_soft_failures)), flush=True)
        rc = 1
    if rc == 1:
        for d in t.daemons:
            print("---- tesserad stderr (%s) ----\n%s" % (d.state_dir, d.stderr_tail()), flush=True)
        log("FAIL %s after %d checks" % (name, _checks[0]))
    _cleanup()
    sys.exit(rc)
