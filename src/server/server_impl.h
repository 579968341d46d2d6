/*
 * server_impl.h - what the HTTP server's files share (internal to
 * src/server/; server.h is the module's face).
 *
 *   server.c  start and stop, libmicrohttpd's callbacks, a request's steps
 *             (headers, body, dispatch), the token, /metrics;
 *   route.c   the route table, paths and query parameters;
 *   reply.c   answers: bodies, echoed client text, the common headers;
 *   stream.c  event streams and the export;
 *   files.c   static files and documents;
 *   trust.c   the Host, Origin and Content-Type rules (trust.h);
 *   guard.c   deadlines, per-address limits, idle shedding (guard.h).
 * Every name here has the module's prefix srv_ (the guard's and trust's
 * their own).
 */
#ifndef SRV_SERVER_IMPL_H
#define SRV_SERVER_IMPL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <microhttpd.h>

#include "base/base.h"
#include "server/guard.h"
#include "server/server.h"
#include "server/trust.h"

#define SRV_STACK (1024 * 1024)          /* per-connection thread stack */
#define SRV_CONN_MEMORY (64 * 1024)      /* per-connection header/buffer pool */
#define SSE_WAIT_MS 500                  /* longest wait between stop checks */
#define SSE_KEEPALIVE_S 15               /* ": keepalive" after this much quiet */
#define SSE_STOP_MS 1200                 /* srv_stop's wait for streams to end */
#define ECHO_MAX 64                      /* client text echoed in a message */
#define EXPORT_STEP 512                  /* solutions per export_next call */
#define EXPORT_BLOCK (256 * 1024)        /* bytes MHD asks the export for at a time */

#define SRV_JSON_TYPE "application/json; charset=utf-8"
#define SRV_TEXT_TYPE "text/plain; charset=utf-8"
#define SRV_METRICS_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define SRV_SSE_TYPE "text/event-stream"
#define SRV_NDJSON_TYPE "application/x-ndjson"

/* The documents under /docs/ (the dashboard links the puzzle format):
 * Markdown only, as plain text so that any browser shows it. */
#define DOCS_PREFIX "/docs/"

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
static inline guard_conn *srv_conn_guard(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci != NULL ? ci->socket_context : NULL;
}

/* ---- route.c ---- */
enum { M_GET = 1, M_HEAD = 2, M_POST = 4, M_DELETE = 8 };
enum { Q_STATE = 1, Q_AFTER = 2, Q_LIMIT = 4, Q_FORMAT = 8, Q_ALL = 16, Q_TO = 32 };

enum route {
    R_NONE, R_JOBS, R_JOB, R_JOB_ACTION, R_SOLUTIONS, R_EVENTS, R_JOB_PUZZLE,
    R_PUZZLES, R_PUZZLE, R_VALIDATE, R_ESTIMATE, R_HEALTH, R_METRICS, R_STATIC,
    R_BATCHES, R_BATCH, R_OPTIONS, R_JOB_RECORD, R_CONVERT
};

/* Per route: the methods it answers, the query parameters it takes (a
 * route that answers GET: its GET and HEAD only), whether it is under the
 * token rule for non-loopback listeners. */
typedef struct srv_route {
    unsigned methods;
    unsigned query;
    bool api;
} srv_route;
extern const srv_route srv_routes[];

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
    char to[16];              /* to=FORMAT (R_CONVERT), "" when not given */
    char qerr[512];           /* first bad query parameter, "" when none */
    srv_reply early;          /* a refusal decided from the headers (status 0: none) */
    char allow[64];           /* its Allow header (405), "" when none */
    /* body */
    base_buf body;
    size_t received;          /* body bytes so far; over max_body means 413 */
};

typedef struct srv_query_ctx {
    struct req *q;
    unsigned allowed;
} srv_query_ctx;

/* A decimal integer in [0, max] with nothing else around it. */
bool srv_parse_uint(const char *p, size_t n, int64_t max, int64_t *out);
/* One path segment of a file or puzzle name (see route.c). */
bool srv_safe_segment(const char *p, size_t n);
unsigned srv_method_bit(const char *m);
void srv_allow_header(unsigned methods, char *out, size_t cap);
enum route srv_route_of(const char *url, struct req *q);
enum MHD_Result srv_query_param(void *cls, enum MHD_ValueKind kind, const char *key,
                                const char *value);
void srv_check_export_params(struct req *q);
size_t srv_unescape(void *cls, struct MHD_Connection *c, char *str);

/* ---- reply.c ---- */
int srv_buf_json(base_buf *b, const json_t *j);
const char *srv_printable(char *dst, size_t cap, const char *src, size_t n);
void srv_reply_release(srv_reply *r);
void srv_reply_init(srv_reply *r);
enum MHD_Result srv_queue(srv_server *s, struct MHD_Connection *c, int status,
                          struct MHD_Response *resp, const char *ctype);
enum MHD_Result srv_answer(srv_server *s, struct MHD_Connection *c, srv_reply *r,
                           const char *allow);
enum MHD_Result srv_answer_error(srv_server *s, struct MHD_Connection *c, int status,
                                 const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* ---- files.c, stream.c ---- */
enum MHD_Result srv_serve_static(srv_server *s, struct MHD_Connection *c, const char *url);
enum MHD_Result srv_serve_events(srv_server *s, struct MHD_Connection *c, struct req *q);
enum MHD_Result srv_serve_export(srv_server *s, struct MHD_Connection *c, struct req *q);

#endif
