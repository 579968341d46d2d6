/*
 * server.c - the HTTP front of tesserad on libmicrohttpd (see server.h and
 * docs/api.md, the contract the routes implement).
 *
 * A request goes through four steps, all in on_request():
 *   1. headers: the Host (421, trust.h), route by path (404), check the
 *      method (405 with Allow), where a write comes from (403, trust.h),
 *      the token (401), Content-Length against the body cap (413), the
 *      body's type (415), and the query parameters (400).  A refusal of a request that carries a body
 *      is sent at once, so the body is never read; one without a body waits
 *      for the request to complete, so the connection stays alive;
 *   2. body: chunks are appended to the request's own buffer; past the cap
 *      they are counted and dropped, and the answer is 413;
 *   3. dispatch: one srv_ops call fills an srv_reply;
 *   4. answer: answer() turns the reply into a response.  Every response
 *      leaves through queue(), which adds the common headers and counts the
 *      status class for /metrics.
 * Static files and event streams are the two answers that are not an
 * srv_reply: a file descriptor and a content-reader callback.
 *
 * Threads.  The server runs libmicrohttpd with one thread per connection
 * (MHD_USE_THREAD_PER_CONNECTION with an internal polling thread that only
 * accepts; poll(), not select(), so descriptors past FD_SETSIZE work).
 * The reasons:
 *   - an event stream waits in ops->wait_change for up to a second at a
 *     time; with a thread per connection that wait blocks only its own
 *     client, and blocking inside a content-reader callback is legal, so
 *     streams need no suspend/resume bookkeeping;
 *   - a status poll never queues behind another client's request: with 200
 *     keep-alive pollers and every core busy solving, each request waits
 *     only for the kernel to schedule its thread, not for a pool slot that
 *     a slow SQLite read or an open stream holds;
 *   - the cost, a thread per open connection, is bounded by the connection
 *     limit, and the stacks are made small (SRV_STACK) since handlers do
 *     little more than encode JSON.
 *
 * Stopping.  srv_stop raises `stopping`: from then on new requests get 503
 * and every stream ends at its next look at the flag, which comes at least
 * every SSE_WAIT_MS, so clients see a properly terminated stream.  srv_stop
 * waits for the open streams to be gone (at most SSE_STOP_MS: a client that
 * does not read may never let its stream finish), then MHD_stop_daemon
 * shuts every remaining socket down and joins every connection's thread.
 *
 * Invariants:
 *   - every MHD_Response queued goes through queue(), so every answer has
 *     the security headers and is counted exactly once;
 *   - a request's state (struct req) is allocated on the first call for the
 *     request and freed only in on_completed(), whatever the outcome;
 *   - text the client sent is echoed in messages only through printable(),
 *     so error bodies are always valid UTF-8 JSON of bounded size.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "base/base.h"
#include "server/guard.h"
#include "server/server.h"
#include "server/trust.h"
#include "tessera/job.h"

#define SRV_STACK (1024 * 1024)          /* per-connection thread stack */
#define SRV_CONN_MEMORY (64 * 1024)      /* per-connection header/buffer pool */
#define SSE_WAIT_MS 500                  /* longest wait between stop checks */
#define SSE_KEEPALIVE_S 15               /* ": keepalive" after this much quiet */
#define SSE_STOP_MS 1200                 /* srv_stop's wait for streams to end */
#define ECHO_MAX 64                      /* client text echoed in a message */
#define EXPORT_STEP 512                  /* solutions per export_next call */
#define EXPORT_BLOCK (256 * 1024)        /* bytes MHD asks the export for at a time */

static const char JSON_TYPE[] = "application/json; charset=utf-8";
static const char TEXT_TYPE[] = "text/plain; charset=utf-8";
static const char METRICS_TYPE[] = "text/plain; version=0.0.4; charset=utf-8";
static const char SSE_TYPE[] = "text/event-stream";
static const char NDJSON_TYPE[] = "application/x-ndjson";

struct srv_server {
    struct MHD_Daemon *mhd;
    srv_ops ops;
    char *token;                  /* NULL when none is configured */
    size_t token_len;
    bool loopback;                /* listening on a loopback address only */
    char *www_root;               /* realpath of cfg->www_dir, or NULL */
    char *docs_root;              /* realpath of cfg->docs_dir, or NULL */
    size_t max_body;
    int port;
    void (*log)(void *, const char *);
    void *log_ctx;
    atomic_bool stopping;
    atomic_uint_fast64_t requests[5]; /* answers by status class 1xx..5xx */
    atomic_long connections;
    atomic_long streams;          /* event streams not yet freed */
    guard *guard;                 /* deadlines and per-address limits (guard.h) */
    trust *trust;                 /* the Host, Origin and Content-Type rules (trust.h) */
    int max_connections;
};

/* The guard's record of connection c (its socket context), or NULL. */
static guard_conn *conn_guard(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci != NULL ? ci->socket_context : NULL;
}

/* ---- bodies ---------------------------------------------------------------
 * Every buffer the server builds (JSON encodings, event frames, the metrics
 * text, request bodies) is a base_buf (base/base.h): data is malloc'd, so a
 * filled buffer can be handed to MHD with MHD_RESPMEM_MUST_FREE. */
static int dump_to_buf(const char *p, size_t n, void *b)
{
    return base_buf_add(b, p, n) == TSR_OK ? 0 : -1;
}

/* Compact JSON of `j` appended to b. */
static int buf_json(base_buf *b, const json_t *j)
{
    return json_dump_callback(j, dump_to_buf, b, JSON_COMPACT | JSON_ENCODE_ANY) == 0
               ? TSR_OK
               : TSR_ENOMEM;
}

/* ---- small helpers --------------------------------------------------------- */

/* Copy client text for a message: at most ECHO_MAX bytes, anything but
 * printable ASCII replaced by '?', so the message is valid UTF-8 and short. */
static const char *printable(char *dst, size_t cap, const char *src, size_t n)
{
    size_t o = 0;
    for (size_t i = 0; i < n && o + 4 < cap; i++) {
        if (i == ECHO_MAX) {
            memcpy(dst + o, "...", 3);
            o += 3;
            break;
        }
        unsigned char ch = (unsigned char)src[i];
        dst[o++] = ch >= 0x20 && ch < 0x7f ? (char)ch : '?';
    }
    dst[o] = 0;
    return dst;
}

static int hexval(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

/* A decimal integer in [0, max] with nothing else around it. */
static bool parse_uint(const char *p, size_t n, int64_t max, int64_t *out)
{
    if (n == 0 || n > 19)
        return false;
    int64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9')
            return false;
        int d = p[i] - '0';
        if (v > (max - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

/* One path segment of a file or puzzle name: not empty, not hidden (so
 * never "." or ".."), only letters, digits and -_.~+@.  Everything else,
 * control bytes and a decoded NUL (see unescape) included, is refused. */
static bool safe_segment(const char *p, size_t n)
{
    if (n == 0 || p[0] == '.')
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)p[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
              (ch >= '0' && ch <= '9') || strchr("-_.~+@", ch)))
            return false;
    }
    return true;
}

/* Token comparison whose time depends only on the configured token's
 * length, not on how much of the guess matches. */
static bool token_equal(const char *guess, size_t glen, const char *token, size_t tlen)
{
    volatile unsigned char diff = glen != tlen;
    for (size_t i = 0; i < tlen; i++)
        diff |= (unsigned char)((i < glen ? guess[i] : 0) ^ token[i]);
    return diff == 0;
}


/* ---- replies ----------------------------------------------------------------- */

static void reply_release(srv_reply *r)
{
    json_decref(r->json);
    r->json = NULL;
    free(r->text);
    r->text = NULL;
    r->text_len = 0;
}

void srv_reply_error(srv_reply *r, int status, const char *fmt, ...)
{
    reply_release(r);
    r->status = status;
    r->content_type = NULL;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->message, sizeof r->message, fmt, ap);
    va_end(ap);
}

static void reply_init(srv_reply *r)
{
    memset(r, 0, sizeof *r);
    r->status = 200;
}

/* What every answer says about how a browser may use it: scripts, styles
 * and connections from this server only, never inside another site's
 * frame (so no button of the dashboard can be clicked through a disguise),
 * no Referer sent on, and nothing of it readable by another origin's
 * page that embeds it. */
static const struct {
    const char *name, *value;
} security_headers[] = {
    {"Content-Security-Policy",
     "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
     "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
     "frame-ancestors 'none'"},
    {"X-Frame-Options", "DENY"},
    {"X-Content-Type-Options", "nosniff"},
    {"Referrer-Policy", "no-referrer"},
    {"Cross-Origin-Resource-Policy", "same-origin"},
    {"Cross-Origin-Opener-Policy", "same-origin"},
};

/* Every response leaves here: common headers, the status class counter. */
static enum MHD_Result queue(srv_server *s, struct MHD_Connection *c, int status,
                             struct MHD_Response *resp, const char *ctype)
{
    assert(status >= 100 && status <= 599);
    if (!resp)
        return MHD_NO;
    if (ctype)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
    for (size_t i = 0; i < sizeof security_headers / sizeof *security_headers; i++)
        MHD_add_response_header(resp, security_headers[i].name, security_headers[i].value);
    guard_conn *gc = conn_guard(c);
    bool last = atomic_load(&s->stopping) || guard_reserved(gc);
    if (last)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
    guard_request_done(s->guard, gc, last); /* answering: no deadline */
    enum MHD_Result ok = MHD_queue_response(c, (unsigned)status, resp);
    MHD_destroy_response(resp);
    if (ok == MHD_YES && status >= 100 && status < 600)
        atomic_fetch_add(&s->requests[status / 100 - 1], 1);
    return ok;
}

/* Turn r into a response (releasing its body) and queue it.  `allow`, when
 * not NULL, is the Allow header of a 405. */
static enum MHD_Result answer(srv_server *s, struct MHD_Connection *c, srv_reply *r,
                              const char *allow)
{
    if (r->status < 100 || r->status > 599)
        srv_reply_error(r, 500, "internal error: the operation answered status %d",
                        r->status);
    base_buf b = {0};
    const char *ctype = NULL;
    int rc = TSR_OK;
    if (r->json) {
        rc = buf_json(&b, r->json);
        ctype = JSON_TYPE;
    } else if (r->text) {
        b.data = r->text; /* taken over: MHD frees it */
        b.len = r->text_len;
        r->text = NULL;
        ctype = r->content_type ? r->content_type : TEXT_TYPE;
    } else if (r->status >= 400) {
        if (!r->message[0]) /* an operation that gave no message: the reason phrase */
            snprintf(r->message, sizeof r->message, "%s",
                     MHD_get_reason_phrase_for((unsigned)r->status));
        json_t *e = json_pack("{s:{s:i,s:s}}", "error", "status", r->status, "message",
                              r->message);
        if (!e) { /* the message was not UTF-8: send it sanitized */
            char clean[ECHO_MAX * 2];
            printable(clean, sizeof clean, r->message, strlen(r->message));
            e = json_pack("{s:{s:i,s:s}}", "error", "status", r->status, "message", clean);
        }
        rc = e ? buf_json(&b, e) : TSR_ENOMEM;
        json_decref(e);
        ctype = JSON_TYPE;
    }
    int status = r->status;
    reply_release(r);
    if (rc != TSR_OK) {
        free(b.data);
        return MHD_NO; /* out of memory: drop the connection */
    }
    struct MHD_Response *resp =
        b.data ? MHD_create_response_from_buffer(b.len, b.data, MHD_RESPMEM_MUST_FREE)
               : MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    if (!resp) {
        free(b.data);
        return MHD_NO;
    }
    if (r->location[0])
        MHD_add_response_header(resp, MHD_HTTP_HEADER_LOCATION, r->location);
    if (status == 401)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
                                "Bearer realm=\"tesserad\"");
    if (allow)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, allow);
    return queue(s, c, status, resp, ctype);
}

static enum MHD_Result answer_error(srv_server *s, struct MHD_Connection *c, int status,
                                    const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static enum MHD_Result answer_error(srv_server *s, struct MHD_Connection *c, int status,
                                    const char *fmt, ...)
{
    srv_reply r;
    reply_init(&r);
    r.status = status;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r.message, sizeof r.message, fmt, ap);
    va_end(ap);
    return answer(s, c, &r, NULL);
}

/* ---- routes ------------------------------------------------------------------ */

enum { M_GET = 1, M_HEAD = 2, M_POST = 4, M_DELETE = 8 };
enum { Q_STATE = 1, Q_AFTER = 2, Q_LIMIT = 4, Q_FORMAT = 8, Q_ALL = 16 };

enum route {
    R_NONE, R_JOBS, R_JOB, R_JOB_ACTION, R_SOLUTIONS, R_EVENTS, R_JOB_PUZZLE,
    R_PUZZLES, R_PUZZLE, R_VALIDATE, R_ESTIMATE, R_HEALTH, R_METRICS, R_STATIC,
    R_BATCHES, R_BATCH, R_OPTIONS
};

/* Per route: the methods it answers, the query parameters its GET takes,
 * whether it is under the token rule for non-loopback listeners. */
static const struct {
    unsigned methods;
    unsigned query;
    bool api;
} routes[] = {
    [R_NONE] = {0, 0, false},
    [R_JOBS] = {M_GET | M_HEAD | M_POST, Q_STATE | Q_AFTER | Q_LIMIT, true},
    [R_JOB] = {M_GET | M_HEAD | M_DELETE, 0, true},
    [R_JOB_ACTION] = {M_POST, 0, true},
    [R_SOLUTIONS] = {M_GET | M_HEAD, Q_AFTER | Q_LIMIT | Q_FORMAT | Q_ALL, true},
    [R_EVENTS] = {M_GET | M_HEAD, 0, true},
    [R_JOB_PUZZLE] = {M_GET | M_HEAD, 0, true},
    [R_VALIDATE] = {M_POST, 0, true},
    [R_ESTIMATE] = {M_POST, 0, true},
    [R_PUZZLES] = {M_GET | M_HEAD, 0, true},
    [R_PUZZLE] = {M_GET | M_HEAD, 0, true},
    [R_HEALTH] = {M_GET | M_HEAD, 0, false},
    [R_METRICS] = {M_GET | M_HEAD, 0, true},
    [R_STATIC] = {M_GET | M_HEAD, 0, false},
    [R_BATCHES] = {M_GET | M_HEAD | M_POST, Q_AFTER | Q_LIMIT, true},
    [R_BATCH] = {M_GET | M_HEAD, 0, true},
    [R_OPTIONS] = {M_GET | M_HEAD, 0, true},
};

/* A request's state, from its first callback to on_completed(). */
struct req {
    enum route route;
    unsigned method;          /* one M_* bit, 0 for any other method */
    char seg[256];            /* the job id, puzzle name as given (NUL-terminated) */
    int64_t id;               /* parsed job id, -1 when seg is not one */
    const char *action;       /* R_JOB_ACTION: "pause", "resume" or "cancel" */
    /* query parameters (defaults per docs/api.md) */
    unsigned seen;
    const char *state;        /* a tsr_job_states[] entry or NULL */
    int64_t after;
    int limit;
    bool text;
    bool jsonl;               /* format=jsonl: the export (with all=1) */
    bool all;                 /* all=1 */
    char qerr[512];           /* first bad query parameter, "" when none */
    srv_reply early;          /* a refusal decided from the headers (status 0: none) */
    char allow[64];           /* its Allow header (405), "" when none */
    /* body */
    base_buf body;
    size_t received;          /* body bytes so far; over max_body means 413 */
};

static unsigned method_bit(const char *m)
{
    if (strcmp(m, MHD_HTTP_METHOD_GET) == 0)
        return M_GET;
    if (strcmp(m, MHD_HTTP_METHOD_HEAD) == 0)
        return M_HEAD;
    if (strcmp(m, MHD_HTTP_METHOD_POST) == 0)
        return M_POST;
    if (strcmp(m, MHD_HTTP_METHOD_DELETE) == 0)
        return M_DELETE;
    return 0;
}

static void allow_header(unsigned methods, char *out, size_t cap)
{
    static const char *const names[] = {"GET", "HEAD", "POST", "DELETE"};
    out[0] = 0;
    for (unsigned i = 0; i < 4; i++)
        if (methods & (1u << i)) {
            if (out[0])
                strncat(out, ", ", cap - strlen(out) - 1);
            strncat(out, names[i], cap - strlen(out) - 1);
        }
}

/* The rest of `url` after `prefix`, or NULL when it does not start so. */
static const char *after_prefix(const char *url, const char *prefix)
{
    size_t n = strlen(prefix);
    return strncmp(url, prefix, n) == 0 ? url + n : NULL;
}

/* Keep one path segment in q->seg; an over-long one is kept as an empty,
 * never-valid name (its id or name lookup then answers 404). */
static void keep_segment(struct req *q, const char *p, size_t n)
{
    if (n >= sizeof q->seg)
        n = 0;
    memcpy(q->seg, p, n);
    q->seg[n] = 0;
    int64_t id;
    /* one spelling per job: "01" and "+1" are not job 1 */
    q->id = p[0] != '0' && parse_uint(p, n, INT64_MAX, &id) && id > 0 ? id : -1;
}

static enum route route_of(const char *url, struct req *q)
{
    const char *p;
    if (strcmp(url, "/healthz") == 0)
        return R_HEALTH;
    if (strcmp(url, "/metrics") == 0)
        return R_METRICS;
    if ((p = after_prefix(url, "/api/v1/jobs"))) {
        if (*p == 0)
            return R_JOBS;
        if (*p != '/')
            return R_NONE;
        p++;
        const char *slash = strchr(p, '/');
        keep_segment(q, p, slash ? (size_t)(slash - p) : strlen(p));
        if (!slash)
            return R_JOB;
        const char *sub = slash + 1;
        if (strcmp(sub, "solutions") == 0)
            return R_SOLUTIONS;
        if (strcmp(sub, "events") == 0)
            return R_EVENTS;
        if (strcmp(sub, "puzzle") == 0)
            return R_JOB_PUZZLE;
        static const char *const actions[] = {"pause", "resume", "cancel"};
        for (size_t i = 0; i < sizeof actions / sizeof *actions; i++)
            if (strcmp(sub, actions[i]) == 0) {
                q->action = actions[i];
                return R_JOB_ACTION;
            }
        return R_NONE;
    }
    if ((p = after_prefix(url, "/api/v1/batches"))) {
        if (*p == 0)
            return R_BATCHES;
        if (*p != '/' || strchr(p + 1, '/'))
            return R_NONE;
        keep_segment(q, p + 1, strlen(p + 1));
        return R_BATCH;
    }
    if (strcmp(url, "/api/v1/validate") == 0)
        return R_VALIDATE;
    if (strcmp(url, "/api/v1/estimate") == 0)
        return R_ESTIMATE;
    if (strcmp(url, "/api/v1/options") == 0)
        return R_OPTIONS;
    if ((p = after_prefix(url, "/api/v1/puzzles"))) {
        if (*p == 0)
            return R_PUZZLES;
        if (*p != '/' || strchr(p + 1, '/'))
            return R_NONE;
        keep_segment(q, p + 1, strlen(p + 1));
        return R_PUZZLE;
    }
    if (strcmp(url, "/api") == 0 || after_prefix(url, "/api/"))
        return R_NONE;
    return R_STATIC;
}

/* ---- query parameters ---------------------------------------------------------- */

struct query_ctx {
    struct req *q;
    unsigned allowed;
};

static enum MHD_Result query_param(void *cls, enum MHD_ValueKind kind, const char *key,
                                   const char *value)
{
    (void)kind;
    struct query_ctx *qc = cls;
    struct req *q = qc->q;
    static const struct {
        const char *name;
        unsigned bit;
    } params[] = {{"state", Q_STATE}, {"after", Q_AFTER}, {"limit", Q_LIMIT},
                  {"format", Q_FORMAT}, {"all", Q_ALL}};
    char k[ECHO_MAX * 2], v[ECHO_MAX * 2];
    printable(k, sizeof k, key, strlen(key));
    const char *val = value ? value : "";
    printable(v, sizeof v, val, strlen(val));
    unsigned bit = 0;
    for (size_t i = 0; i < sizeof params / sizeof *params; i++)
        if (strcmp(key, params[i].name) == 0)
            bit = params[i].bit;
    if (!(bit & qc->allowed)) {
        snprintf(q->qerr, sizeof q->qerr, "unknown query parameter \"%s\"", k);
        return MHD_NO;
    }
    if (q->seen & bit) {
        snprintf(q->qerr, sizeof q->qerr, "query parameter %s: given more than once", k);
        return MHD_NO;
    }
    q->seen |= bit;
    int64_t n;
    switch (bit) {
    case Q_STATE:
        if (tsr_job_state_parse(val) >= 0)
            q->state = tsr_job_states[tsr_job_state_parse(val)];
        if (!q->state)
            snprintf(q->qerr, sizeof q->qerr,
                     "query parameter state: expected %s, got \"%s\"", tsr_job_states_text, v);
        break;
    case Q_AFTER:
        if (parse_uint(val, strlen(val), INT64_MAX, &n))
            q->after = n;
        else
            snprintf(q->qerr, sizeof q->qerr,
                     "query parameter after: expected an integer >= 0, got \"%s\"", v);
        break;
    case Q_LIMIT:
        if (parse_uint(val, strlen(val), SRV_PAGE_MAX, &n) && n >= 1)
            q->limit = (int)n;
        else
            snprintf(q->qerr, sizeof q->qerr,
                     "query parameter limit: expected an integer from 1 to %d, got \"%s\"",
                     SRV_PAGE_MAX, v);
        break;
    case Q_FORMAT:
        if (strcmp(val, "json") == 0 || strcmp(val, "text") == 0 || strcmp(val, "jsonl") == 0) {
            q->text = strcmp(val, "text") == 0;
            q->jsonl = strcmp(val, "jsonl") == 0;
        } else {
            snprintf(q->qerr, sizeof q->qerr,
                     "query parameter format: expected json, text or jsonl, got \"%s\"", v);
        }
        break;
    case Q_ALL:
        if (strcmp(val, "1") == 0)
            q->all = true;
        else
            snprintf(q->qerr, sizeof q->qerr, "query parameter all: expected 1, got \"%s\"", v);
        break;
    }
    return q->qerr[0] ? MHD_NO : MHD_YES;
}

/* The solutions route's parameters that are only bad together: the export
 * (all=1) is JSON lines and has no pages, and JSON lines are only the export. */
static void check_export_params(struct req *q)
{
    if (q->qerr[0] || q->route != R_SOLUTIONS)
        return;
    if (q->all && !q->jsonl)
        snprintf(q->qerr, sizeof q->qerr,
                 "query parameter all: all=1 exports every solution and needs format=jsonl");
    else if (q->jsonl && !q->all)
        snprintf(q->qerr, sizeof q->qerr,
                 "query parameter format: jsonl is the export of every solution and needs all=1");
    else if (q->all && (q->seen & Q_LIMIT))
        snprintf(q->qerr, sizeof q->qerr,
                 "query parameter limit: not with all=1 (the export is not paged)");
}

/* Percent-decoding for the path and the query.  Like libmicrohttpd's own,
 * except that a decoded NUL or slash becomes DEL (0x7f): a NUL would cut
 * the string short ("/index.html%00.png" would name index.html) and a
 * slash would route "/api/v1/jobs/1%2fsolutions" as the solutions of job
 * 1, while DEL is simply a byte that no path segment and no parameter
 * value accepts, so each resource has one spelling. */
static size_t unescape(void *cls, struct MHD_Connection *c, char *str)
{
    (void)cls;
    (void)c;
    char *w = str;
    for (const char *r = str; *r; r++) {
        int hi, lo;
        if (r[0] == '%' && (hi = hexval(r[1])) >= 0 && (lo = hexval(r[2])) >= 0) {
            int ch = hi * 16 + lo;
            *w++ = (char)(ch && ch != '/' ? ch : 0x7f);
            r += 2;
        } else {
            *w++ = *r;
        }
    }
    *w = 0;
    return (size_t)(w - str);
}

/* ---- static files ---------------------------------------------------------------- */

static const struct {
    const char *ext;
    const char *type;
} mime_types[] = {
    {".html", "text/html; charset=utf-8"},
    {".css", "text/css; charset=utf-8"},
    {".js", "text/javascript; charset=utf-8"},
    {".mjs", "text/javascript; charset=utf-8"},
    {".svg", "image/svg+xml"},
    {".png", "image/png"},
    {".json", JSON_TYPE},
    {".ico", "image/x-icon"},
    {".map", JSON_TYPE},
    {".wasm", "application/wasm"},
    {".txt", TEXT_TYPE},
};

/* The documents under /docs/ (the dashboard links the puzzle format):
 * Markdown only, as plain text so that any browser shows it. */
#define DOCS_PREFIX "/docs/"

/* Answer GET `url` from www_root, or a document under /docs/ from
 * docs_root.  The path must be made of safe segments (so no "..", no
 * hidden files, no odd bytes) and name a file of a known type; a directory
 * path ("/", "/js/") means its index.html.  Symbolic links are followed
 * only while they stay inside the root: the resolved path must lie under
 * the resolved root. */
static enum MHD_Result serve_static(srv_server *s, struct MHD_Connection *c,
                                    const char *url)
{
    char echo[ECHO_MAX * 2], rel[PATH_MAX], full[PATH_MAX];
    printable(echo, sizeof echo, url, strlen(url));
    const char *root = s->www_root;
    bool doc = s->docs_root && strncmp(url, DOCS_PREFIX, strlen(DOCS_PREFIX)) == 0;
    if (doc) {
        root = s->docs_root;
        url += strlen(DOCS_PREFIX) - 1; /* keeps its slash */
    }
    if (!root)
        return answer_error(s, c, 404, "no file %s", echo);
    size_t n = strlen(url);
    if (url[0] != '/' || n + sizeof "index.html" > sizeof rel)
        return answer_error(s, c, 404, "no file %s", echo);
    memcpy(rel, url + 1, n); /* with the NUL */
    if (n == 1 || url[n - 1] == '/')
        strcat(rel, "index.html");
    const char *last = rel;
    for (const char *p = rel;; p++)
        if (*p == '/' || *p == 0) {
            if (!safe_segment(last, (size_t)(p - last)))
                return answer_error(s, c, 404, "no file %s", echo);
            if (*p == 0)
                break;
            last = p + 1;
        }
    const char *dot = strrchr(last, '.'), *type = NULL;
    for (size_t i = 0; !doc && dot && i < sizeof mime_types / sizeof *mime_types; i++)
        if (strcmp(dot, mime_types[i].ext) == 0)
            type = mime_types[i].type;
    if (doc && dot && strcmp(dot, ".md") == 0)
        type = TEXT_TYPE;
    if (!type || snprintf(full, sizeof full, "%s/%s", root, rel) >= (int)sizeof full)
        return answer_error(s, c, 404, "no file %s", echo);

    char *real = realpath(full, NULL);
    size_t rl = strlen(root);
    bool inside = real && strncmp(real, root, rl) == 0 &&
                  (real[rl] == '/' || root[rl - 1] == '/');
    int fd = inside ? open(real, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) : -1;
    free(real);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
        close(fd);
        fd = -1;
    }
    if (fd < 0)
        return answer_error(s, c, 404, "no file %s", echo);
    struct MHD_Response *resp = MHD_create_response_from_fd64((uint64_t)st.st_size, fd);
    if (!resp) {
        close(fd);
        return MHD_NO;
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    return queue(s, c, 200, resp, type);
}

/* ---- event streams -----------------------------------------------------------------
 * A stream is one struct sse, owned by its MHD response (freed by sse_free).
 * `out[off..len)` is the part of the current frame not yet handed to MHD;
 * a new frame is only built once the previous one is fully out, so frames
 * never interleave whatever `max` MHD offers. */
struct sse {
    srv_server *s;
    int64_t id;
    int64_t seen;     /* change counter of the last event built */
    base_buf out;
    size_t off;
    bool last;        /* out holds the final-state event: end after it */
    double quiet_since;
    int fd;           /* the client's socket, -1 when unknown */
};

/* Has the client closed its end?  A stream with no event to send would
 * otherwise hold its connection (and its slot) until the next keepalive:
 * a peek at the socket between waits sees the end of the stream. */
static bool sse_client_gone(const struct sse *e)
{
    char b;
    return e->fd >= 0 && recv(e->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

/* Build the event for change `counter` into e->out; on failure leave the
 * answer (the job is gone, out of memory) in r and return -1. */
static int sse_load(struct sse *e, int64_t counter, srv_reply *r)
{
    reply_init(r);
    e->s->ops.get(e->s->ops.ctx, e->id, r);
    /* the job comes as JSON, or as compact JSON text (one line) */
    json_t *job = r->json ? json_incref(r->json)
                          : r->text ? json_loadb(r->text, r->text_len, 0, NULL) : NULL;
    if (r->status != 200 || !job || (!r->json && memchr(r->text, '\n', r->text_len))) {
        json_decref(job);
        if (r->status == 200)
            srv_reply_error(r, 500, "internal error: job %lld has no JSON", (long long)e->id);
        return -1;
    }
    e->last = tsr_job_state_final(json_string_value(json_object_get(job, "state")));
    e->out.len = 0;
    e->off = 0;
    int rc = base_buf_printf(&e->out, "id: %lld\nevent: job\ndata: ", (long long)counter);
    if (rc == TSR_OK)
        rc = r->json ? buf_json(&e->out, r->json) : base_buf_add(&e->out, r->text, r->text_len);
    json_decref(job);
    if (rc == TSR_OK)
        rc = base_buf_add(&e->out, "\n\n", 2);
    reply_release(r);
    if (rc != TSR_OK) {
        srv_reply_error(r, 500, "out of memory");
        return -1;
    }
    e->seen = counter;
    return 0;
}

/* MHD's content reader.  It blocks (legal with a thread per connection)
 * until it has bytes to give: the rest of a frame, a new event, or a
 * keepalive comment after SSE_KEEPALIVE_S of quiet.  It ends the stream
 * after the final-state event, when the job disappears, or on stop. */
static ssize_t sse_read(void *cls, uint64_t pos, char *dst, size_t max)
{
    (void)pos;
    struct sse *e = cls;
    srv_server *s = e->s;
    for (;;) {
        if (e->off < e->out.len) {
            size_t n = e->out.len - e->off < max ? e->out.len - e->off : max;
            memcpy(dst, e->out.data + e->off, n);
            e->off += n;
            e->quiet_since = base_now();
            return (ssize_t)n;
        }
        if (e->last || atomic_load(&s->stopping))
            return MHD_CONTENT_READER_END_OF_STREAM;
        if (sse_client_gone(e))
            return MHD_CONTENT_READER_END_WITH_ERROR;
        double quiet = base_now() - e->quiet_since;
        if (quiet >= SSE_KEEPALIVE_S) {
            e->out.len = 0;
            e->off = 0;
            if (base_buf_add(&e->out, ": keepalive\n\n", 13) != TSR_OK)
                return MHD_CONTENT_READER_END_WITH_ERROR;
            continue;
        }
        double left_ms = (SSE_KEEPALIVE_S - quiet) * 1000.0 + 1.0;
        int wait = left_ms < SSE_WAIT_MS ? (int)left_ms : SSE_WAIT_MS;
        int64_t counter = s->ops.wait_change(s->ops.ctx, e->id, e->seen, wait);
        if (counter < 0)
            return MHD_CONTENT_READER_END_OF_STREAM; /* the job was deleted */
        if (counter != e->seen) {
            srv_reply r;
            if (sse_load(e, counter, &r) != 0) {
                reply_release(&r);
                return MHD_CONTENT_READER_END_OF_STREAM;
            }
        }
    }
}

static void sse_free(void *cls)
{
    struct sse *e = cls;
    atomic_fetch_sub(&e->s->streams, 1);
    free(e->out.data);
    free(e);
}

/* The first event is built here, before answering, so that an unknown job
 * is a plain 404 and a stream always starts with the job as it is now. */
static enum MHD_Result serve_events(srv_server *s, struct MHD_Connection *c, struct req *q)
{
    int64_t counter = s->ops.wait_change(s->ops.ctx, q->id, -1, 0);
    if (counter < 0)
        return answer_error(s, c, 404, "no job %lld", (long long)q->id);
    struct sse *e = calloc(1, sizeof *e);
    if (!e)
        return MHD_NO;
    e->s = s;
    atomic_fetch_add(&s->streams, 1);
    e->id = q->id;
    e->quiet_since = base_now();
    const union MHD_ConnectionInfo *fd = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    e->fd = fd != NULL ? fd->connect_fd : -1;
    srv_reply r;
    if (sse_load(e, counter, &r) != 0) {
        sse_free(e);
        return answer(s, c, &r, NULL);
    }
    struct MHD_Response *resp;
    if (q->method == M_HEAD) {
        sse_free(e);
        resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    } else {
        resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024, sse_read, e,
                                                 sse_free);
        if (!resp)
            sse_free(e);
    }
    if (!resp)
        return MHD_NO;
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    return queue(s, c, 200, resp, SSE_TYPE);
}

/* ---- the export --------------------------------------------------------------------
 * GET .../solutions?format=jsonl&all=1: every stored solution as JSON lines,
 * in bounded steps.  `out[off..len)` is the part of the current step not
 * yet handed to MHD; the next step is asked for only when it is all out, so
 * the export holds one step (EXPORT_STEP solutions) at a time whatever its
 * size.  Solutions after+1 .. upto are exported: upto is the stored count
 * when the export started.  An error after the 200 went out (the job was
 * deleted, a chunk is damaged, the server stops) becomes a last line
 * {"error": {"status": S, "message": M}}, the error body of every route,
 * so a client can tell an export cut short from a complete one. */
struct export {
    srv_server *s;
    int64_t id, after, upto;
    base_buf out;
    size_t off;
    bool done;        /* out holds the last bytes: end after them */
};

/* One step into e->out (replacing what was there); false when the step
 * failed, with the answer in r. */
static bool export_step(struct export *e, srv_reply *r)
{
    reply_init(r);
    int64_t last = e->after;
    e->s->ops.export_next(e->s->ops.ctx, e->id, e->after, &e->upto, EXPORT_STEP, &last, r);
    if (r->status != 200)
        return false;
    free(e->out.data);
    e->out = (base_buf){r->text, r->text_len, r->text_len};
    e->off = 0;
    r->text = NULL;
    r->text_len = 0;
    if (last <= e->after || e->out.len == 0)
        e->done = true; /* nothing more: complete */
    e->after = last;
    return true;
}

/* The error line that ends an export cut short. */
static void export_fail(struct export *e, srv_reply *r)
{
    json_t *line = json_pack("{s:{s:i,s:s}}", "error", "status", r->status, "message",
                             r->message);
    e->out.len = 0;
    e->off = 0;
    if (!line || buf_json(&e->out, line) != TSR_OK || base_buf_add(&e->out, "\n", 1) != TSR_OK)
        e->out.len = 0;
    json_decref(line);
    reply_release(r);
    e->done = true;
}

static ssize_t export_read(void *cls, uint64_t pos, char *dst, size_t max)
{
    (void)pos;
    struct export *e = cls;
    for (;;) {
        if (e->off < e->out.len) {
            size_t n = e->out.len - e->off < max ? e->out.len - e->off : max;
            memcpy(dst, e->out.data + e->off, n);
            e->off += n;
            return (ssize_t)n;
        }
        if (e->done || e->after >= e->upto)
            return MHD_CONTENT_READER_END_OF_STREAM;
        srv_reply r;
        if (atomic_load(&e->s->stopping)) {
            reply_init(&r);
            srv_reply_error(&r, 503, "the server is shutting down; export again from after=%lld",
                            (long long)e->after);
            export_fail(e, &r);
        } else if (!export_step(e, &r)) {
            export_fail(e, &r);
        }
    }
}

static void export_free(void *cls)
{
    struct export *e = cls;
    atomic_fetch_sub(&e->s->streams, 1);
    free(e->out.data);
    free(e);
}

/* The first step runs before answering, so that an unknown job is a plain
 * 404 and the export's end (upto) is fixed before its first byte. */
static enum MHD_Result serve_export(srv_server *s, struct MHD_Connection *c, struct req *q)
{
    struct export *e = calloc(1, sizeof *e);
    if (!e)
        return MHD_NO;
    e->s = s;
    atomic_fetch_add(&s->streams, 1);
    e->id = q->id;
    e->after = q->after;
    e->upto = -1;
    srv_reply r;
    if (!export_step(e, &r)) {
        export_free(e);
        return answer(s, c, &r, NULL);
    }
    struct MHD_Response *resp;
    if (q->method == M_HEAD) {
        export_free(e);
        resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    } else {
        resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, EXPORT_BLOCK, export_read, e,
                                                 export_free);
        if (!resp)
            export_free(e);
    }
    if (!resp)
        return MHD_NO;
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    return queue(s, c, 200, resp, NDJSON_TYPE);
}

/* ---- metrics ------------------------------------------------------------------------ */

/* The daemon's lines, then the server's own. */
static void metrics(srv_server *s, srv_reply *r)
{
    s->ops.metrics(s->ops.ctx, r);
    if (r->status != 200 || r->json)
        return;
    base_buf b = {r->text, r->text_len, r->text_len};
    r->text = NULL;
    r->text_len = 0;
    int rc = TSR_OK;
    if (b.len && b.data[b.len - 1] != '\n')
        rc = base_buf_add(&b, "\n", 1);
    if (rc == TSR_OK)
        rc = base_buf_printf(&b,
                        "# HELP tessera_http_requests_total HTTP requests answered, by status class.\n"
                        "# TYPE tessera_http_requests_total counter\n");
    for (int i = 0; i < 5 && rc == TSR_OK; i++)
        rc = base_buf_printf(&b, "tessera_http_requests_total{code=\"%dxx\"} %llu\n", i + 1,
                        (unsigned long long)atomic_load(&s->requests[i]));
    if (rc == TSR_OK)
        rc = base_buf_printf(&b,
                        "# HELP tessera_http_connections Open HTTP connections.\n"
                        "# TYPE tessera_http_connections gauge\n"
                        "tessera_http_connections %ld\n"
                        "# HELP tessera_http_connections_cut_total Connections shut down for "
                        "a slow request, too many from one address, or idle on a full "
                        "server.\n"
                        "# TYPE tessera_http_connections_cut_total counter\n"
                        "tessera_http_connections_cut_total %ld\n"
                        "# HELP tessera_http_connections_shed_total Idle connections shut "
                        "down to make room for a new one on a full server.\n"
                        "# TYPE tessera_http_connections_shed_total counter\n"
                        "tessera_http_connections_shed_total %ld\n",
                        atomic_load(&s->connections), guard_cut(s->guard),
                        guard_shed(s->guard));
    if (rc != TSR_OK) {
        free(b.data);
        srv_reply_error(r, 500, "out of memory");
        return;
    }
    r->text = b.data;
    r->text_len = b.len;
    r->content_type = METRICS_TYPE;
}

/* ---- requests ------------------------------------------------------------------------- */

/* Does the request carry `Authorization: Bearer <token>`? */
struct framing {
    int content_length, transfer_encoding;
};

static enum MHD_Result count_framing(void *cls, enum MHD_ValueKind kind, const char *key,
                                     const char *value)
{
    struct framing *fr = cls;
    if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0)
        fr->content_length++;
    else if (strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING) == 0)
        fr->transfer_encoding++;
    return MHD_YES;
}

static bool authorized(const srv_server *s, struct MHD_Connection *c)
{
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                MHD_HTTP_HEADER_AUTHORIZATION);
    if (!h)
        return false;
    while (*h == ' ')
        h++;
    if (strncasecmp(h, "Bearer ", 7) != 0)
        return false;
    h += 7;
    while (*h == ' ')
        h++;
    size_t n = strlen(h);
    while (n && h[n - 1] == ' ')
        n--;
    return token_equal(h, n, s->token, s->token_len);
}

static bool needs_token(const srv_server *s, const struct req *q)
{
    return s->token && ((q->method & (M_POST | M_DELETE)) ||
                        (!s->loopback && routes[q->route].api));
}

static bool has_body(struct MHD_Connection *c);

/* Step 1: everything that can be decided from the request line and the
 * headers.  Returns false with the refusal in q->early. */
static bool begin(srv_server *s, struct MHD_Connection *c, struct req *q, const char *url,
                  const char *method)
{
    char echo[ECHO_MAX * 2], echo_m[ECHO_MAX * 2];
    srv_reply *r = &q->early;
    if (atomic_load(&s->stopping)) {
        srv_reply_error(r, 503, "the server is shutting down");
        return false;
    }
    q->method = method_bit(method);
    q->route = route_of(url, q);
    const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
    if (!trust_host(s->trust, host)) {
        srv_reply_error(r, 421, "Host \"%s\" is not a name of this server: use its address, "
                        "localhost, or a name given to tesserad with --allow-host",
                        printable(echo, sizeof echo, host, strlen(host)));
        return false;
    }
    if (guard_reserved(conn_guard(c)) && q->route != R_HEALTH) {
        srv_reply_error(r, 503, "the server is at its limit of %d connections; only /healthz is "
                        "answered on this one (try again shortly)", s->max_connections);
        return false;
    }
    if (q->route == R_NONE ||
        (q->route == R_STATIC && !s->www_root &&
         !(s->docs_root && strncmp(url, DOCS_PREFIX, strlen(DOCS_PREFIX)) == 0))) {
        srv_reply_error(r, 404, "no route %s", printable(echo, sizeof echo, url, strlen(url)));
        return false;
    }
    unsigned allowed = routes[q->route].methods;
    if (!(q->method & allowed)) {
        allow_header(allowed, q->allow, sizeof q->allow);
        srv_reply_error(r, 405, "method %s is not allowed on %s (allowed: %s)",
                        printable(echo_m, sizeof echo_m, method, strlen(method)),
                        printable(echo, sizeof echo, url, strlen(url)), q->allow);
        return false;
    }
    char why[256];
    if (!(q->method & (M_GET | M_HEAD)) &&
        trust_write(s->trust, host,
                    MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin"),
                    MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Sec-Fetch-Site"), why,
                    sizeof why) != NULL) {
        srv_reply_error(r, 403, "%s", why);
        return false;
    }
    if (needs_token(s, q) && !authorized(s, c)) {
        srv_reply_error(r, 401, "missing or wrong API token (send Authorization: Bearer <token>)");
        return false;
    }
    /* a request framed two ways is how requests are smuggled past proxies
     * (RFC 9112 6.3): refuse it rather than pick one framing */
    struct framing fr = {0};
    MHD_get_connection_values(c, MHD_HEADER_KIND, count_framing, &fr);
    if (fr.content_length > 1 || (fr.content_length && fr.transfer_encoding)) {
        srv_reply_error(r, 400, "request framing: %s",
                        fr.content_length > 1 ? "more than one Content-Length header"
                                              : "both Content-Length and Transfer-Encoding");
        return false;
    }
    const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                 MHD_HTTP_HEADER_CONTENT_LENGTH);
    int64_t len;
    if (cl && parse_uint(cl, strlen(cl), INT64_MAX, &len) && (uint64_t)len > s->max_body) {
        srv_reply_error(r, 413, "request body: %lld bytes is over the limit of %zu bytes",
                        (long long)len, s->max_body);
        return false;
    }
    const char *ctype = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                    MHD_HTTP_HEADER_CONTENT_TYPE);
    if (has_body(c) && !trust_json_type(ctype)) {
        srv_reply_error(r, 415, "request body: the Content-Type must be application/json, got "
                        "%s (curl: --json @FILE, or -H 'Content-Type: application/json')",
                        ctype ? printable(echo, sizeof echo, ctype, strlen(ctype)) : "none");
        return false;
    }
    if (q->route != R_STATIC) {
        struct query_ctx qc = {q, (q->method & (M_GET | M_HEAD)) ? routes[q->route].query : 0};
        MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, query_param, &qc);
        check_export_params(q);
        if (q->qerr[0]) {
            srv_reply_error(r, 400, "%s", q->qerr);
            return false;
        }
    }
    switch (q->route) {
    case R_JOB:
    case R_JOB_ACTION:
    case R_SOLUTIONS:
    case R_EVENTS:
        if (q->id < 0) {
            srv_reply_error(r, 404, "no job %s",
                            printable(echo, sizeof echo, q->seg, strlen(q->seg)));
            return false;
        }
        break;
    case R_BATCH:
        if (q->id < 0) {
            srv_reply_error(r, 404, "no batch %s",
                            printable(echo, sizeof echo, q->seg, strlen(q->seg)));
            return false;
        }
        break;
    case R_PUZZLE:
        if (!safe_segment(q->seg, strlen(q->seg))) {
            srv_reply_error(r, 404, "no puzzle %s",
                            printable(echo, sizeof echo, q->seg, strlen(q->seg)));
            return false;
        }
        break;
    default:
        break;
    }
    return true;
}

/* Does the request announce a body? */
static bool has_body(struct MHD_Connection *c)
{
    const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                 MHD_HTTP_HEADER_CONTENT_LENGTH);
    return (cl && strcmp(cl, "0") != 0) ||
           MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                       MHD_HTTP_HEADER_TRANSFER_ENCODING) != NULL;
}

/* Step 2: a chunk of the body.  Only a submission keeps its body; every
 * body counts against the cap.  Past the cap the bytes are dropped and the
 * answer will be 413 (MHD cannot answer in the middle of an upload); a
 * client that goes on to send twice the cap is disconnected. */
static enum MHD_Result take_body(srv_server *s, struct req *q, const char *data, size_t n)
{
    q->received += n;
    if (q->received <= s->max_body) {
        if (((q->route == R_JOBS || q->route == R_BATCHES) && q->method == M_POST) ||
            q->route == R_VALIDATE || q->route == R_ESTIMATE)
            return base_buf_add(&q->body, data, n) == TSR_OK ? MHD_YES : MHD_NO;
        return MHD_YES;
    }
    free(q->body.data);
    q->body = (base_buf){0};
    return q->received - s->max_body > s->max_body ? MHD_NO : MHD_YES;
}

/* Step 3: the request is complete; answer it. */
static enum MHD_Result dispatch(srv_server *s, struct MHD_Connection *c, struct req *q,
                                const char *url)
{
    if (q->early.status)
        return answer(s, c, &q->early, q->allow[0] ? q->allow : NULL);
    if (q->received > s->max_body)
        return answer_error(s, c, 413, "request body: over the limit of %zu bytes",
                            s->max_body);
    srv_reply r;
    reply_init(&r);
    void *ctx = s->ops.ctx;
    switch (q->route) {
    case R_JOBS:
        if (q->method == M_POST)
            s->ops.submit(ctx, q->body.data ? q->body.data : "", q->body.len, &r);
        else
            s->ops.list(ctx, q->state, q->after, q->limit, &r);
        break;
    case R_JOB:
        if (q->method == M_DELETE)
            s->ops.action(ctx, q->id, "delete", &r);
        else
            s->ops.get(ctx, q->id, &r);
        break;
    case R_JOB_ACTION:
        s->ops.action(ctx, q->id, q->action, &r);
        break;
    case R_SOLUTIONS:
        if (q->all)
            return serve_export(s, c, q);
        s->ops.solutions(ctx, q->id, q->after, q->limit, q->text, &r);
        break;
    case R_EVENTS:
        return serve_events(s, c, q);
    case R_JOB_PUZZLE:
        s->ops.job_puzzle(ctx, q->id, &r);
        break;
    case R_VALIDATE:
        s->ops.validate(ctx, q->body.data ? q->body.data : "", q->body.len, &r);
        break;
    case R_ESTIMATE:
        s->ops.estimate(ctx, q->body.data ? q->body.data : "", q->body.len, &r);
        break;
    case R_BATCHES:
        if (q->method == M_POST)
            s->ops.batch_submit(ctx, q->body.data ? q->body.data : "", q->body.len, &r);
        else
            s->ops.batches(ctx, 0, q->after, q->limit, &r);
        break;
    case R_BATCH:
        s->ops.batches(ctx, q->id, 0, 0, &r);
        break;
    case R_PUZZLES:
        s->ops.puzzles(ctx, NULL, &r);
        break;
    case R_OPTIONS:
        s->ops.options(ctx, &r);
        break;
    case R_PUZZLE:
        s->ops.puzzles(ctx, q->seg, &r);
        break;
    case R_HEALTH:
        s->ops.health(ctx, &r);
        break;
    case R_METRICS:
        metrics(s, &r);
        break;
    case R_STATIC:
        return serve_static(s, c, url);
    case R_NONE:
        assert(!"begin() answers every request without a route");
        srv_reply_error(&r, 404, "no route");
        break;
    }
    return answer(s, c, &r, NULL);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version,
                                  const char *upload, size_t *upload_size, void **con_cls)
{
    (void)version;
    srv_server *s = cls;
    struct req *q = *con_cls;
    if (!q) {
        q = calloc(1, sizeof *q);
        if (!q)
            return MHD_NO;
        q->id = -1;
        q->limit = SRV_PAGE_DEFAULT;
        *con_cls = q;
        guard_headers_done(s->guard, conn_guard(c), has_body(c));
        /* A refused request without a body is answered once it is complete,
         * which keeps the connection alive; one with a body is answered now,
         * so the body is never read (MHD then closes the connection). */
        if (!begin(s, c, q, url, method) && has_body(c))
            return answer(s, c, &q->early, q->allow[0] ? q->allow : NULL);
        return MHD_YES;
    }
    if (*upload_size) {
        size_t n = *upload_size;
        *upload_size = 0;
        return take_body(s, q, upload, n);
    }
    return dispatch(s, c, q, url);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)toe;
    srv_server *s = cls;
    guard_answered(s->guard, conn_guard(c)); /* the next request on it, if any */
    struct req *q = *con_cls;
    if (q) {
        reply_release(&q->early);
        free(q->body.data);
        free(q);
        *con_cls = NULL;
    }
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_ctx,
                          enum MHD_ConnectionNotificationCode code)
{
    srv_server *s = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        atomic_fetch_add(&s->connections, 1);
        const union MHD_ConnectionInfo *fd = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        const union MHD_ConnectionInfo *ad = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        const struct sockaddr *sa = ad != NULL ? ad->client_addr : NULL;
        socklen_t len = sa == NULL ? 0
                        : sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                                    : sizeof(struct sockaddr_in);
        if (fd != NULL)
            *socket_ctx = guard_open(s->guard, fd->connect_fd, sa, len);
    } else if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        atomic_fetch_sub(&s->connections, 1);
        guard_close(s->guard, *socket_ctx);
        *socket_ctx = NULL;
    }
}

static void on_log(void *cls, const char *fmt, va_list ap)
{
    srv_server *s = cls;
    char line[512];
    vsnprintf(line, sizeof line, fmt, ap);
    size_t n = strlen(line);
    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        line[--n] = 0;
    if (s->log)
        s->log(s->log_ctx, line);
}

/* ---- start and stop ---------------------------------------------------------------------- */

struct listen_addr {
    struct sockaddr_storage ss;
    socklen_t len;
    bool loopback;
};

/* "HOST:PORT" with HOST an IPv4 address or localhost, or "[V6]:PORT". */
static int parse_listen(const char *spec, struct listen_addr *a, tsr_err *err)
{
    char host[INET6_ADDRSTRLEN + 1];
    const char *port;
    size_t hl;
    memset(a, 0, sizeof *a);
    if (spec[0] == '[') {
        const char *close = strchr(spec, ']');
        if (!close || close[1] != ':')
            goto bad;
        hl = (size_t)(close - spec - 1);
        port = close + 2;
        if (hl == 0 || hl >= sizeof host)
            goto bad;
        memcpy(host, spec + 1, hl);
        host[hl] = 0;
        struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&a->ss;
        v6->sin6_family = AF_INET6;
        if (inet_pton(AF_INET6, host, &v6->sin6_addr) != 1)
            goto bad;
        a->len = sizeof *v6;
        a->loopback = IN6_IS_ADDR_LOOPBACK(&v6->sin6_addr) ||
                      (IN6_IS_ADDR_V4MAPPED(&v6->sin6_addr) && v6->sin6_addr.s6_addr[12] == 127);
    } else {
        const char *colon = strrchr(spec, ':');
        if (!colon)
            goto bad;
        hl = (size_t)(colon - spec);
        port = colon + 1;
        if (hl == 0 || hl >= sizeof host)
            goto bad;
        memcpy(host, spec, hl);
        host[hl] = 0;
        if (strcmp(host, "localhost") == 0)
            strcpy(host, "127.0.0.1");
        struct sockaddr_in *v4 = (struct sockaddr_in *)&a->ss;
        v4->sin_family = AF_INET;
        if (inet_pton(AF_INET, host, &v4->sin_addr) != 1)
            goto bad;
        a->len = sizeof *v4;
        a->loopback = (ntohl(v4->sin_addr.s_addr) >> 24) == 127;
    }
    int64_t p;
    if (!parse_uint(port, strlen(port), 65535, &p))
        return tsr_err_set(err, TSR_EINVAL, "listen address \"%s\": port must be 0 to 65535",
                           spec);
    if (a->ss.ss_family == AF_INET6)
        ((struct sockaddr_in6 *)&a->ss)->sin6_port = htons((uint16_t)p);
    else
        ((struct sockaddr_in *)&a->ss)->sin_port = htons((uint16_t)p);
    return TSR_OK;
bad:
    return tsr_err_set(err, TSR_EINVAL,
                       "listen address \"%s\": expected HOST:PORT with an IPv4 address "
                       "(or localhost) as HOST, or [IPV6]:PORT", spec);
}

/* A bound, listening, non-blocking socket for `a`; the port chosen goes to
 * *port (it differs from a's when that is 0). */
static int open_listener(const struct listen_addr *a, const char *spec, int *fd_out,
                         int *port, tsr_err *err)
{
    int fd = socket(a->ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return tsr_err_set(err, TSR_EIO, "listen on %s: socket: %s", spec, strerror(errno));
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, (const struct sockaddr *)&a->ss, a->len) != 0) {
        int e = errno;
        close(fd);
        return tsr_err_set(err, TSR_EINVAL, "cannot listen on %s: %s", spec, strerror(e));
    }
    struct sockaddr_storage got;
    socklen_t gl = sizeof got;
    if (listen(fd, SOMAXCONN) != 0 || getsockname(fd, (struct sockaddr *)&got, &gl) != 0) {
        int e = errno;
        close(fd);
        return tsr_err_set(err, TSR_EIO, "listen on %s: %s", spec, strerror(e));
    }
    *port = ntohs(got.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&got)->sin6_port
                                            : ((struct sockaddr_in *)&got)->sin_port);
    *fd_out = fd;
    return TSR_OK;
}

static void server_free(srv_server *s)
{
    if (s->token)
        memset(s->token, 0, s->token_len);
    free(s->token);
    free(s->www_root);
    guard_free(s->guard);
    trust_free(s->trust);
    free(s->docs_root);
    free(s);
}

int srv_start(const srv_config *cfg, const srv_ops *ops, srv_server **out, tsr_err *err)
{
    *out = NULL;
    const char *spec = cfg->listen ? cfg->listen : SRV_DEFAULT_LISTEN;
    struct listen_addr a;
    int rc = parse_listen(spec, &a, err);
    if (rc != TSR_OK)
        return rc;
    bool has_token = cfg->token && cfg->token[0];
    if (!a.loopback && !has_token)
        return tsr_err_set(err, TSR_EINVAL,
                           "refusing to listen on %s without an API token: it is not a "
                           "loopback address (set a token, or listen on 127.0.0.1)", spec);

    srv_server *s = calloc(1, sizeof *s);
    if (!s)
        return tsr_err_set(err, TSR_ENOMEM, "out of memory");
    rc = trust_new((const struct sockaddr *)&a.ss, cfg->allow_hosts, cfg->nallow_hosts,
                   cfg->allow_origins, cfg->nallow_origins, &s->trust, err);
    if (rc != TSR_OK) {
        free(s);
        return rc;
    }
    s->ops = *ops;
    s->loopback = a.loopback;
    s->max_body = cfg->max_body ? cfg->max_body : SRV_MAX_BODY;
    s->log = cfg->log;
    s->log_ctx = cfg->log_ctx;
    atomic_init(&s->stopping, false);
    atomic_init(&s->connections, 0);
    atomic_init(&s->streams, 0);
    for (int i = 0; i < 5; i++)
        atomic_init(&s->requests[i], 0);
    if (has_token) {
        s->token = strdup(cfg->token);
        if (!s->token) {
            server_free(s);
            return tsr_err_set(err, TSR_ENOMEM, "out of memory");
        }
        s->token_len = strlen(s->token);
    }
    if (cfg->www_dir) {
        struct stat st;
        s->www_root = realpath(cfg->www_dir, NULL);
        if (!s->www_root || stat(s->www_root, &st) != 0 || !S_ISDIR(st.st_mode)) {
            int e = s->www_root ? ENOTDIR : errno;
            server_free(s);
            return tsr_err_set(err, TSR_EIO, "static files directory %s: %s", cfg->www_dir,
                               strerror(e));
        }
    }

    if (cfg->docs_dir) {
        struct stat st;
        s->docs_root = realpath(cfg->docs_dir, NULL);
        if (!s->docs_root || stat(s->docs_root, &st) != 0 || !S_ISDIR(st.st_mode)) {
            int e = s->docs_root ? ENOTDIR : errno;
            server_free(s);
            return tsr_err_set(err, TSR_EIO, "documents directory %s: %s", cfg->docs_dir,
                               strerror(e));
        }
    }

    int fd = -1;
    rc = open_listener(&a, spec, &fd, &s->port, err);
    if (rc != TSR_OK) {
        server_free(s);
        return rc;
    }
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
                     MHD_USE_AUTO | (s->log ? MHD_USE_ERROR_LOG : 0);
    unsigned max_conn = cfg->max_connections > 0 ? (unsigned)cfg->max_connections
                                                  : SRV_MAX_CONNECTIONS;
    unsigned timeout = cfg->timeout_s > 0 ? (unsigned)cfg->timeout_s : SRV_CONNECTION_TIMEOUT_S;
    s->max_connections = (int)max_conn;
    if (guard_new((int)max_conn, timeout, &s->guard) != 0) {
        close(fd);
        server_free(s);
        return tsr_err_set(err, TSR_ENOMEM, "cannot start the connection guard");
    }
    s->mhd = MHD_start_daemon(
        flags, 0, NULL, NULL, on_request, s,
        MHD_OPTION_EXTERNAL_LOGGER, on_log, s, /* first, so it sees every message */
        MHD_OPTION_LISTEN_SOCKET, fd,
        /* the reserve answers /healthz; the margin holds shed connections
         * until they are closed (guard.h) */
        MHD_OPTION_CONNECTION_LIMIT, max_conn + GUARD_RESERVE + GUARD_SHED_MARGIN,
        MHD_OPTION_CONNECTION_TIMEOUT, timeout,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)SRV_CONN_MEMORY,
        MHD_OPTION_THREAD_STACK_SIZE, (size_t)SRV_STACK,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
        MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
        MHD_OPTION_UNESCAPE_CALLBACK, unescape, s,
        MHD_OPTION_END);
    if (!s->mhd) {
        close(fd);
        server_free(s);
        return tsr_err_set(err, TSR_EIO, "cannot start the HTTP server on %s", spec);
    }
    *out = s;
    return TSR_OK;
}

int srv_port(const srv_server *s)
{
    return s->port;
}

void srv_stop(srv_server *s)
{
    if (!s)
        return;
    atomic_store(&s->stopping, true);
    for (int waited = 0; atomic_load(&s->streams) > 0 && waited < SSE_STOP_MS; waited += 10)
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    MHD_stop_daemon(s->mhd); /* joins every connection thread */
    server_free(s);
}
