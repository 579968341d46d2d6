/*
 * server.c - the HTTP front of tesserad on libmicrohttpd (see server.h and
 * docs/api.md, the contract the routes implement).
 *
 * A request goes through four steps, all in on_request():
 *   1. headers (begin): the Host (421, trust.c), route by path (404,
 *      route.c), the method (405 with Allow), where a write comes from
 *      (403, trust.c), the token (401), Content-Length against the body cap
 *      (413), the body's type (415), and the query parameters (400).  A
 *      refusal of a request that carries a body is sent at once, so the body
 *      is never read; one without a body waits for the request to complete,
 *      so the connection stays alive;
 *   2. body (take_body): chunks are appended to the request's own buffer;
 *      past the cap they are counted and dropped, and the answer is 413;
 *   3. dispatch: one srv_ops call fills an srv_reply;
 *   4. answer: srv_answer (reply.c) turns the reply into a response.  Every
 *      response leaves through srv_queue, which adds the common headers and
 *      counts the status class for /metrics.
 * Static files (files.c) and event streams and the export (stream.c) are
 * the answers that are not an srv_reply: a file descriptor and
 * content-reader callbacks.
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
 *   - every MHD_Response queued goes through srv_queue, so every answer has
 *     the security headers and is counted exactly once;
 *   - a request's state (struct req) is allocated on the first call for the
 *     request and freed only in on_completed(), whatever the outcome;
 *   - text the client sent is echoed in messages only through srv_printable,
 *     so error bodies are always valid UTF-8 JSON of bounded size.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
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

#include "server/server_impl.h"

/* Token comparison whose time depends only on the configured token's
 * length, not on how much of the guess matches. */
static bool token_equal(const char *guess, size_t glen, const char *token, size_t tlen)
{
    volatile unsigned char diff = glen != tlen;
    for (size_t i = 0; i < tlen; i++)
        diff |= (unsigned char)((i < glen ? guess[i] : 0) ^ token[i]);
    return diff == 0;
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
    r->content_type = SRV_METRICS_TYPE;
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
                        (!s->loopback && srv_routes[q->route].api));
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
    q->method = srv_method_bit(method);
    q->route = srv_route_of(url, q);
    const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
    if (!trust_host(s->trust, host)) {
        srv_reply_error(r, 421, "Host \"%s\" is not a name of this server: use its address, "
                        "localhost, or a name given to tesserad with --allow-host",
                        srv_printable(echo, sizeof echo, host, strlen(host)));
        return false;
    }
    if (guard_reserved(srv_conn_guard(c)) && q->route != R_HEALTH) {
        srv_reply_error(r, 503, "the server is at its limit of %d connections; only /healthz is "
                        "answered on this one (try again shortly)", s->max_connections);
        return false;
    }
    if (q->route == R_NONE ||
        (q->route == R_STATIC && !s->www_root &&
         !(s->docs_root && strncmp(url, DOCS_PREFIX, strlen(DOCS_PREFIX)) == 0))) {
        srv_reply_error(r, 404, "no route %s", srv_printable(echo, sizeof echo, url, strlen(url)));
        return false;
    }
    unsigned allowed = srv_routes[q->route].methods;
    if (!(q->method & allowed)) {
        srv_allow_header(allowed, q->allow, sizeof q->allow);
        srv_reply_error(r, 405, "method %s is not allowed on %s (allowed: %s)",
                        srv_printable(echo_m, sizeof echo_m, method, strlen(method)),
                        srv_printable(echo, sizeof echo, url, strlen(url)), q->allow);
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
    if (cl && srv_parse_uint(cl, strlen(cl), INT64_MAX, &len) && (uint64_t)len > s->max_body) {
        srv_reply_error(r, 413, "request body: %lld bytes is over the limit of %zu bytes",
                        (long long)len, s->max_body);
        return false;
    }
    const char *ctype = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                    MHD_HTTP_HEADER_CONTENT_TYPE);
    if (has_body(c) && !trust_json_type(ctype)) {
        srv_reply_error(r, 415, "request body: the Content-Type must be application/json, got "
                        "%s (curl: --json @FILE, or -H 'Content-Type: application/json')",
                        ctype ? srv_printable(echo, sizeof echo, ctype, strlen(ctype)) : "none");
        return false;
    }
    if (q->route != R_STATIC) {
        /* a route that answers GET takes its parameters there; a POST-only
         * one (convert) on its POST */
        bool takes = (q->method & (M_GET | M_HEAD)) || !(srv_routes[q->route].methods & M_GET);
        srv_query_ctx qc = {q, takes ? srv_routes[q->route].query : 0};
        MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, srv_query_param, &qc);
        srv_check_export_params(q);
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
                            srv_printable(echo, sizeof echo, q->seg, strlen(q->seg)));
            return false;
        }
        break;
    case R_BATCH:
        if (q->id < 0) {
            srv_reply_error(r, 404, "no batch %s",
                            srv_printable(echo, sizeof echo, q->seg, strlen(q->seg)));
            return false;
        }
        break;
    case R_PUZZLE:
        if (!srv_safe_segment(q->seg, strlen(q->seg))) {
            srv_reply_error(r, 404, "no puzzle %s",
                            srv_printable(echo, sizeof echo, q->seg, strlen(q->seg)));
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
            q->route == R_VALIDATE || q->route == R_ESTIMATE || q->route == R_CONVERT)
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
        return srv_answer(s, c, &q->early, q->allow[0] ? q->allow : NULL);
    if (q->received > s->max_body)
        return srv_answer_error(s, c, 413, "request body: over the limit of %zu bytes",
                            s->max_body);
    srv_reply r;
    srv_reply_init(&r);
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
            return srv_serve_export(s, c, q);
        s->ops.solutions(ctx, q->id, q->after, q->limit, q->text, &r);
        break;
    case R_EVENTS:
        return srv_serve_events(s, c, q);
    case R_JOB_PUZZLE:
        s->ops.job_puzzle(ctx, q->id, &r);
        break;
    case R_JOB_RECORD:
        s->ops.job_record(ctx, q->id, &r);
        break;
    case R_VALIDATE:
        s->ops.validate(ctx, q->body.data ? q->body.data : "", q->body.len, &r);
        break;
    case R_ESTIMATE:
        s->ops.estimate(ctx, q->body.data ? q->body.data : "", q->body.len, &r);
        break;
    case R_CONVERT:
        s->ops.convert(ctx, q->to, q->body.data ? q->body.data : "", q->body.len, &r);
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
        return srv_serve_static(s, c, url);
    case R_NONE:
        assert(!"begin() answers every request without a route");
        srv_reply_error(&r, 404, "no route");
        break;
    }
    return srv_answer(s, c, &r, NULL);
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
        guard_headers_done(s->guard, srv_conn_guard(c), has_body(c));
        /* A refused request without a body is answered once it is complete,
         * which keeps the connection alive; one with a body is answered now,
         * so the body is never read (MHD then closes the connection). */
        if (!begin(s, c, q, url, method) && has_body(c))
            return srv_answer(s, c, &q->early, q->allow[0] ? q->allow : NULL);
        return MHD_YES;
    }
    if (*upload_size) {
        size_t n = *upload_size;
        *upload_size = 0;
        return take_body(s, q, upload, n);
    }
    /* the request is all in: no deadline while it is answered, however
     * long the operation takes (an estimate may take seconds) */
    guard_request_done(s->guard, srv_conn_guard(c), false);
    return dispatch(s, c, q, url);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)toe;
    srv_server *s = cls;
    guard_answered(s->guard, srv_conn_guard(c)); /* the next request on it, if any */
    struct req *q = *con_cls;
    if (q) {
        srv_reply_release(&q->early);
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
    if (!srv_parse_uint(port, strlen(port), 65535, &p))
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
        MHD_OPTION_UNESCAPE_CALLBACK, srv_unescape, s,
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
