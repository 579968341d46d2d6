/*
 * server.h - the HTTP front of tesserad (libmicrohttpd).
 *
 * The server owns sockets, routing, request bodies and their caps,
 * authentication, response encoding, Server-Sent Events plumbing, static
 * files from www/ and its own request counters.  It knows nothing of jobs,
 * the pool or SQLite: every operation on jobs goes through srv_ops, a table
 * of calls the daemon supplies.  An operation fills an srv_reply (status and
 * a JSON or text body); the server only turns it into HTTP.
 *
 * Threads.  The server calls srv_ops from its own threads, several at once;
 * the daemon's implementations must be thread-safe.  docs/api.md is the
 * contract the routes implement.
 */
#ifndef SRV_SERVER_H
#define SRV_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "tessera/error.h"

/* Defaults and caps (docs/api.md lists them for users). */
#define SRV_DEFAULT_LISTEN "127.0.0.1:8080"
#define SRV_MAX_BODY (4 * 1024 * 1024)   /* request body bytes: larger is 413 */
#define SRV_MAX_CONNECTIONS 1024
#define SRV_CONNECTION_TIMEOUT_S 60
#define SRV_PAGE_DEFAULT 100             /* solutions/jobs per page when not given */
#define SRV_PAGE_MAX 1000

/* What an operation answers.  Exactly one of json, text or (for errors)
 * message is used:
 *   - json: a JSON body (the server takes the reference and frees it);
 *   - text/text_len with content_type: a text body (malloc'd; the server
 *     frees it);
 *   - status >= 400 with json and text NULL: the server sends
 *     {"error": {"status": S, "message": "<message>"}}.
 * location, when not empty, becomes the Location header (201 answers). */
typedef struct srv_reply {
    int status;
    json_t *json;
    char *text;
    size_t text_len;
    const char *content_type; /* a static string, e.g. "text/plain; charset=utf-8" */
    char location[128];
    char filename[128];       /* not empty: Content-Disposition: attachment; filename="..."
                                 (letters, digits and . _ - only) */
    char message[1024];
} srv_reply;

/* Fill r with an error: status and a printf-formatted message.  A body
 * already in r (json or text) is released first. */
void srv_reply_error(srv_reply *r, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The daemon's operations.  Each is called with a zeroed reply whose status
 * is 200 and must leave a complete answer in it. */
typedef struct srv_ops {
    void *ctx;
    /* POST /api/v1/jobs: the raw body (not NUL-terminated). */
    void (*submit)(void *ctx, const char *body, size_t len, srv_reply *r);
    /* GET /api/v1/jobs: state NULL for all; after = last id of the previous
     * page (0 = from the start); limit 1..SRV_PAGE_MAX. */
    void (*list)(void *ctx, const char *state, int64_t after, int limit, srv_reply *r);
    /* GET /api/v1/jobs/{id}: JSON, or compact one-line JSON text with
     * content_type "application/json" (what event streams send as data). */
    void (*get)(void *ctx, int64_t id, srv_reply *r);
    /* POST /api/v1/jobs/{id}/{pause|resume|cancel} and DELETE /api/v1/jobs/{id}
     * (action "delete"). */
    void (*action)(void *ctx, int64_t id, const char *action, srv_reply *r);
    /* GET /api/v1/jobs/{id}/solutions: after = last seq seen (0 = from the
     * start), limit 1..SRV_PAGE_MAX, text = format=text. */
    void (*solutions)(void *ctx, int64_t id, int64_t after, int limit, bool text,
                      srv_reply *r);
    /* GET /api/v1/jobs/{id}/solutions?format=jsonl&all=1, the export, one
     * bounded step at a time: job id's solutions after+1 .. *upto, at most
     * `max` of them, as JSON lines in r->text (each line the paged format's
     * solution object with its "seq").  *last gets the seq of the last line
     * written, `after` when none (then the export is complete).  A call with
     * *upto < 0 first sets *upto to the number of solutions stored now, so
     * that the export is what was stored when it started.  Errors in r: 404
     * when there is no job id (deleted meanwhile), 500 for a damaged chunk. */
    void (*export_next)(void *ctx, int64_t id, int64_t after, int64_t *upto, int max,
                        int64_t *last, srv_reply *r);
    /* POST /api/v1/validate: a submit body checked as submit would, nothing
     * stored; the puzzle as read (normalised) or the error submit would give. */
    void (*validate)(void *ctx, const char *body, size_t len, srv_reply *r);
    /* POST /api/v1/estimate: a submit body checked as submit would, then
     * Knuth's estimate of its search and its time (a few seconds of one
     * core at most); nothing is stored. */
    void (*estimate)(void *ctx, const char *body, size_t len, srv_reply *r);
    /* POST /api/v1/convert?to=FORMAT: a submit body's puzzle written as a
     * file in FORMAT ("" when the query did not give one), answered as
     * text with its content_type and filename; nothing is stored. */
    void (*convert)(void *ctx, const char *to, const char *body, size_t len, srv_reply *r);
    /* GET /api/v1/jobs/{id}/puzzle: the job's puzzle, normalised. */
    void (*job_puzzle)(void *ctx, int64_t id, srv_reply *r);
    /* GET /api/v1/jobs/{id}/record: a completed record job's record
     * (docs/records.md), as JSON text. */
    void (*job_record)(void *ctx, int64_t id, srv_reply *r);
    /* POST /api/v1/batches: a batch of jobs (a list of job bodies, or one
     * puzzle and its variants), all created or none. */
    void (*batch_submit)(void *ctx, const char *body, size_t len, srv_reply *r);
    /* GET /api/v1/batches (id 0: the list, paged by after and limit as the
     * job list) and GET /api/v1/batches/{id} (one batch with its jobs). */
    void (*batches)(void *ctx, int64_t id, int64_t after, int limit, srv_reply *r);
    /* GET /api/v1/puzzles (name NULL) and GET /api/v1/puzzles/{name}. */
    void (*puzzles)(void *ctx, const char *name, srv_reply *r);
    /* GET /api/v1/options: the job options' list (tessera/options.h). */
    void (*options)(void *ctx, srv_reply *r);
    /* GET /healthz */
    void (*health)(void *ctx, srv_reply *r);
    /* GET /metrics: the daemon's Prometheus lines in r->text; the server
     * appends its own (requests by status class, connections). */
    void (*metrics)(void *ctx, srv_reply *r);
    /* Event streams: job `id`'s change counter.  Returns at once when it
     * differs from `seen`, else waits up to timeout_ms for a change.
     * Returns the counter, or -1 when there is no job `id`. */
    int64_t (*wait_change)(void *ctx, int64_t id, int64_t seen, int timeout_ms);
} srv_ops;

typedef struct srv_config {
    const char *listen;     /* "HOST:PORT" (IPv4) or "[V6]:PORT"; NULL = SRV_DEFAULT_LISTEN;
                               port 0 picks a free port (see srv_port) */
    const char *token;      /* API token or NULL */
    const char *www_dir;    /* static files served at /, or NULL for none */
    const char *docs_dir;   /* Markdown documents served at /docs/NAME.md, or NULL */
    size_t max_body;        /* 0 = SRV_MAX_BODY */
    int max_connections;    /* 0 = SRV_MAX_CONNECTIONS */
    int timeout_s;          /* idle connection timeout, 0 = SRV_CONNECTION_TIMEOUT_S */
    /* Host names besides the listen address, loopback and localhost that
     * requests may be sent to, and origins besides the server's own whose
     * pages may send it requests that change something (trust.h). */
    const char *const *allow_hosts;
    int nallow_hosts;
    const char *const *allow_origins;
    int nallow_origins;
    /* Optional: libmicrohttpd's own diagnostics (one line each, no newline),
     * e.g. a thread that could not be created.  NULL = silent. */
    void (*log)(void *log_ctx, const char *line);
    void *log_ctx;
} srv_config;

typedef struct srv_server srv_server;

/* Bind and start serving.  Refused (TSR_EINVAL, message naming the cause):
 * an address that does not parse, a non-loopback address without a token,
 * an allowed host or origin that does not parse, a port in use.  The ops table is copied; ops->ctx must outlive the
 * server. */
int srv_start(const srv_config *cfg, const srv_ops *ops, srv_server **out, tsr_err *err);

/* The port actually bound (useful with port 0). */
int srv_port(const srv_server *s);

/* Stop accepting, end event streams, wait for requests in progress, free. */
void srv_stop(srv_server *s);

#endif
