/*
 * route.c - what a request asks for: the route table (each route's
 * methods, query parameters and token rule), a path into its route and
 * segment (one spelling per job id: no sign, no leading zero, no encoded
 * slash), and the query parameters checked against docs/api.md.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "server/server_impl.h"
#include "tessera/job.h"

/* ---- routes ------------------------------------------------------------------ */

/* Per route: the methods it answers, the query parameters it takes (a
 * route that answers GET: its GET and HEAD only), whether it is under the
 * token rule for non-loopback listeners. */
const srv_route srv_routes[] = {
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
    [R_JOB_RECORD] = {M_GET | M_HEAD, 0, true},
    [R_CONVERT] = {M_POST, Q_TO, true},
};

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
bool srv_parse_uint(const char *p, size_t n, int64_t max, int64_t *out)
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
bool srv_safe_segment(const char *p, size_t n)
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




unsigned srv_method_bit(const char *m)
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

void srv_allow_header(unsigned methods, char *out, size_t cap)
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
    q->id = p[0] != '0' && srv_parse_uint(p, n, INT64_MAX, &id) && id > 0 ? id : -1;
}

enum route srv_route_of(const char *url, struct req *q)
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
        if (strcmp(sub, "record") == 0)
            return R_JOB_RECORD;
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
    if (strcmp(url, "/api/v1/convert") == 0)
        return R_CONVERT;
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


enum MHD_Result srv_query_param(void *cls, enum MHD_ValueKind kind, const char *key,
                                   const char *value)
{
    (void)kind;
    srv_query_ctx *qc = cls;
    struct req *q = qc->q;
    static const struct {
        const char *name;
        unsigned bit;
    } params[] = {{"state", Q_STATE}, {"after", Q_AFTER}, {"limit", Q_LIMIT},
                  {"format", Q_FORMAT}, {"all", Q_ALL}, {"to", Q_TO}};
    char k[ECHO_MAX * 2], v[ECHO_MAX * 2];
    srv_printable(k, sizeof k, key, strlen(key));
    const char *val = value ? value : "";
    srv_printable(v, sizeof v, val, strlen(val));
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
        if (srv_parse_uint(val, strlen(val), INT64_MAX, &n))
            q->after = n;
        else
            snprintf(q->qerr, sizeof q->qerr,
                     "query parameter after: expected an integer >= 0, got \"%s\"", v);
        break;
    case Q_LIMIT:
        if (srv_parse_uint(val, strlen(val), SRV_PAGE_MAX, &n) && n >= 1)
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
    case Q_TO: /* the format's name: the daemon knows the formats and checks it */
        if (strlen(val) < sizeof q->to)
            memcpy(q->to, val, strlen(val) + 1);
        else
            snprintf(q->qerr, sizeof q->qerr,
                     "query parameter to: expected json, polycube or xmpuzzle, got \"%s\"", v);
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
void srv_check_export_params(struct req *q)
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
size_t srv_unescape(void *cls, struct MHD_Connection *c, char *str)
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

