/*
 * client.c - the HTTP/1.1 client behind tessera's daemon commands.
 *
 * Each request opens a connection (getaddrinfo, then a non-blocking
 * connect bounded by the connect timeout, trying every address), sends the
 * request with `Connection: close`, and reads the answer through a small
 * buffered reader.  The body is decoded (Content-Length, chunked, or up to
 * the end of the connection) into a sink: either a growing buffer capped at
 * max_body, or the Server-Sent Events parser, which cuts the stream into
 * lines and lines into events.  Silence longer than the read timeout
 * (SO_RCVTIMEO) ends any read, so a stuck daemon cannot hang the tool.
 *
 * Writes use MSG_NOSIGNAL: a daemon that answers early and closes (413 for
 * an oversized body) must give us its answer, not a SIGPIPE.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "base/base.h"
#include "cli/client.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define DEFAULT_CONNECT_MS 10000
#define DEFAULT_READ_MS 30000
#define DEFAULT_MAX_BODY ((size_t)64 << 20)
#define MAX_LINE 8192   /* a status, header or chunk-size line */
#define MAX_HEADERS 100
#define MAX_JSON_LINE ((size_t)16 << 20) /* one line of a JSON-lines answer */

/* ---- URLs ------------------------------------------------------------------ */

int cli_url_parse(const char *url, cli_url *out, tsr_err *err)
{
    memset(out, 0, sizeof *out);
    const char *p = url, *scheme_end = strstr(url, "://");
    if (scheme_end != NULL) {
        if ((size_t)(scheme_end - url) == 4 && strncasecmp(url, "http", 4) == 0)
            p = scheme_end + 3;
        else if ((size_t)(scheme_end - url) == 5 && strncasecmp(url, "https", 5) == 0)
            return tsr_err_set(err, TSR_EUNSUPP,
                               "%.200s: https is not supported; use an http:// URL", url);
        else
            return tsr_err_set(err, TSR_EINVAL, "%.200s: expected an http:// URL", url);
    }
    size_t alen = strcspn(p, "/?#");
    const char *host = p, *after, *rest = p + alen;
    size_t hlen;
    if (memchr(p, '@', alen))
        return tsr_err_set(err, TSR_EINVAL, "%.200s: user names in the URL are not supported; "
                           "use --token", url);
    if (*p == '[') { /* [v6] */
        const char *close = memchr(p, ']', alen);
        if (close == NULL)
            return tsr_err_set(err, TSR_EINVAL, "%.200s: unterminated '[' in the host", url);
        host = p + 1;
        hlen = (size_t)(close - host);
        after = close + 1;
    } else {
        const char *colon = memchr(p, ':', alen);
        hlen = colon ? (size_t)(colon - p) : alen;
        after = p + hlen;
    }
    if (hlen == 0 || hlen >= sizeof out->host)
        return tsr_err_set(err, TSR_EINVAL, "%.200s: expected a host name", url);
    memcpy(out->host, host, hlen);
    bool explicit_port = after < rest;
    if (explicit_port) {
        size_t plen = (size_t)(rest - after) - 1;
        long port = 0;
        if (*after != ':' || plen == 0 || plen > 5 || strspn(after + 1, "0123456789") < plen ||
            (port = strtol(after + 1, NULL, 10)) < 1 || port > 65535)
            return tsr_err_set(err, TSR_EINVAL, "%.200s: expected a port from 1 to 65535", url);
        snprintf(out->port, sizeof out->port, "%ld", port);
    } else {
        strcpy(out->port, "80");
    }
    if (strpbrk(rest, "?#") != NULL) /* also after a path: it would precede every route */
        return tsr_err_set(err, TSR_EINVAL, "%.200s: a server URL takes no query or fragment", url);
    size_t plen = strlen(rest);
    while (plen > 0 && rest[plen - 1] == '/')
        plen--;
    if (plen >= sizeof out->prefix)
        return tsr_err_set(err, TSR_EINVAL, "%.200s: path prefix too long", url);
    memcpy(out->prefix, rest, plen);
    bool v6 = strchr(out->host, ':') != NULL;
    snprintf(out->hostport, sizeof out->hostport, "%s%s%s%s%s", v6 ? "[" : "", out->host,
             v6 ? "]" : "", explicit_port ? ":" : "", explicit_port ? out->port : "");
    snprintf(out->text, sizeof out->text, "http://%s%s", out->hostport, out->prefix);
    return 0;
}

/* ---- connecting ------------------------------------------------------------ */

static void errno_text(char *buf, size_t size, int e)
{
    if (strerror_r(e, buf, size) != 0) /* the XSI strerror_r */
        snprintf(buf, size, "error %d", e);
}

/* A non-blocking connect bounded by the timeout; 0 or an errno value. */
static int connect_one(int fd, const struct addrinfo *ai, int timeout_ms)
{
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
        return errno;
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
        if (errno != EINPROGRESS)
            return errno;
        struct pollfd pfd = {.fd = fd, .events = POLLOUT};
        int n;
        while ((n = poll(&pfd, 1, timeout_ms)) < 0 && errno == EINTR)
            ;
        if (n < 0)
            return errno;
        if (n == 0)
            return ETIMEDOUT;
        int soerr = 0;
        socklen_t sl = sizeof soerr;
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0)
            return errno;
        if (soerr)
            return soerr;
    }
    return fcntl(fd, F_SETFL, flags) < 0 ? errno : 0;
}

static int open_connection(const cli_http *h, int *fd_out, int *sys_errno, tsr_err *err)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res;
    int g = getaddrinfo(h->url.host, h->url.port, &hints, &res);
    if (g != 0) {
        *sys_errno = EHOSTUNREACH;
        return tsr_err_set(err, TSR_EIO, "cannot reach tesserad at %s: %s", h->url.text,
                           g == EAI_SYSTEM ? strerror(errno) : gai_strerror(g));
    }
    int ctimeout = h->connect_timeout_ms > 0 ? h->connect_timeout_ms : DEFAULT_CONNECT_MS;
    int rtimeout = h->read_timeout_ms > 0 ? h->read_timeout_ms : DEFAULT_READ_MS;
    int last = ECONNREFUSED;
    for (const struct addrinfo *ai = res; ai != NULL; ai = ai->ai_next) {
        int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) {
            last = errno;
            continue;
        }
        if ((last = connect_one(fd, ai, ctimeout)) != 0) {
            close(fd);
            continue;
        }
        struct timeval tv = {.tv_sec = rtimeout / 1000, .tv_usec = (rtimeout % 1000) * 1000};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        freeaddrinfo(res);
        *fd_out = fd;
        return 0;
    }
    freeaddrinfo(res);
    char reason[128];
    errno_text(reason, sizeof reason, last);
    *sys_errno = last;
    return tsr_err_set(err, TSR_EIO, "cannot reach tesserad at %s: %s", h->url.text, reason);
}

/* 0, or the errno of the failed write. */
static int send_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK ? ETIMEDOUT : errno;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* ---- reading ----------------------------------------------------------------- */

typedef struct conn {
    int fd;
    int timeout_ms;
    const char *url;
    tsr_err *err;
    size_t pos, len;
    char buf[16384];
} conn;

/* Refill an empty buffer: 0, 1 at the end of the connection, or an error. */
static int conn_fill(conn *c)
{
    for (;;) {
        ssize_t n = recv(c->fd, c->buf, sizeof c->buf, 0);
        if (n > 0) {
            c->pos = 0;
            c->len = (size_t)n;
            return 0;
        }
        if (n == 0)
            return 1;
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return tsr_err_set(c->err, TSR_EIO, "%s: no answer for %d s", c->url,
                               c->timeout_ms / 1000);
        char reason[128];
        errno_text(reason, sizeof reason, errno);
        return tsr_err_set(c->err, TSR_EIO, "%s: reading the answer: %s", c->url, reason);
    }
}

/* Some buffered bytes, or an error: the connection must not end here. */
static int need_bytes(conn *c, const char *where)
{
    int rc = c->pos < c->len ? 0 : conn_fill(c);
    if (rc > 0)
        return tsr_err_set(c->err, TSR_EIO, "%s: the connection closed %s", c->url, where);
    return rc;
}

/* One line without its CR LF, NUL-terminated, into line[MAX_LINE]. */
static int read_line(conn *c, char *line, const char *where)
{
    size_t n = 0;
    for (;;) {
        int rc = need_bytes(c, where);
        if (rc)
            return rc;
        char ch = c->buf[c->pos++];
        if (ch == '\n')
            break;
        if (n + 1 >= MAX_LINE)
            return tsr_err_set(c->err, TSR_EIO, "%s: a line longer than %d bytes %s", c->url,
                               MAX_LINE, where);
        line[n++] = ch;
    }
    if (n > 0 && line[n - 1] == '\r')
        n--;
    line[n] = '\0';
    return 0;
}

/* Where the body's bytes go. */
typedef int (*sink_fn)(void *ctx, const char *data, size_t n);

/* Pass exactly n bytes to the sink. */
static int read_exact(conn *c, unsigned long long n, sink_fn sink, void *ctx, const char *where)
{
    while (n > 0) {
        int rc = need_bytes(c, where);
        if (rc)
            return rc;
        size_t take = c->len - c->pos;
        if (take > n)
            take = (size_t)n;
        rc = sink(ctx, c->buf + c->pos, take);
        if (rc)
            return rc;
        c->pos += take;
        n -= take;
    }
    return 0;
}

static int read_chunked(conn *c, sink_fn sink, void *ctx)
{
    char line[MAX_LINE];
    for (;;) {
        int rc = read_line(c, line, "in a chunk header");
        if (rc)
            return rc;
        char *end;
        errno = 0;
        unsigned long long size = strtoull(line, &end, 16);
        if (end == line || errno || (*end != '\0' && *end != ';' && *end != ' '))
            return tsr_err_set(c->err, TSR_EIO, "%s: bad chunk size line '%.40s'", c->url,
                               line);
        if (size == 0)
            break;
        if ((rc = read_exact(c, size, sink, ctx, "in the middle of a chunk")) != 0 ||
            (rc = read_line(c, line, "after a chunk")) != 0)
            return rc;
        if (line[0] != '\0')
            return tsr_err_set(c->err, TSR_EIO, "%s: chunk longer than its size", c->url);
    }
    do { /* trailers, up to the blank line */
        int rc = read_line(c, line, "in the trailers");
        if (rc)
            return rc;
    } while (line[0] != '\0');
    return 0;
}

static int read_to_end(conn *c, sink_fn sink, void *ctx)
{
    for (;;) {
        if (c->pos == c->len) {
            int rc = conn_fill(c);
            if (rc)
                return rc > 0 ? 0 : rc;
        }
        int rc = sink(ctx, c->buf + c->pos, c->len - c->pos);
        if (rc)
            return rc;
        c->pos = c->len;
    }
}

/* ---- sinks ---------------------------------------------------------------------- */

/* What a sink gathers: its bytes, kept NUL-terminated, and at most `max`
 * of them (the error names the url). */
typedef struct growbuf {
    base_buf bytes;
    size_t max;
    tsr_err *err;
    const char *url;
} growbuf;

static int grow(growbuf *b, size_t extra)
{
    if (extra > b->max || b->bytes.len > b->max - extra)
        return tsr_err_set(b->err, TSR_ETOOBIG, "%s: the answer is larger than %zu MiB", b->url,
                           b->max >> 20);
    base_buf *bb = &b->bytes; /* room for the bytes and a NUL */
    if (base_grow((void **)&bb->data, &bb->cap, bb->len + extra, 1, 4096, 0) != 0)
        return tsr_err_set(b->err, TSR_ENOMEM, "out of memory");
    return 0;
}

static int buffer_sink(void *ctx, const char *data, size_t n)
{
    growbuf *b = ctx;
    int rc = grow(b, n);
    if (rc)
        return rc;
    memcpy(b->bytes.data + b->bytes.len, data, n);
    b->bytes.len += n;
    b->bytes.data[b->bytes.len] = '\0';
    return 0;
}

/* The event-stream parser (the WHATWG "interpret the stream" rules): lines
 * end with CR, LF or CR LF; a blank line dispatches the event gathered so
 * far; "data" lines accumulate, joined by LF. */
typedef struct sse {
    growbuf line, data;
    bool last_cr;
    char event[64];
    char id[256];
    cli_sse_fn fn;
    void *ctx;
} sse;

static int sse_dispatch(sse *s)
{
    int rc = 0;
    if (s->data.bytes.len > 0) {
        s->data.bytes.data[--s->data.bytes.len] = '\0'; /* the LF after the last data line */
        cli_sse_event ev = {s->event[0] ? s->event : "message", s->data.bytes.data, s->id};
        if (s->fn(s->ctx, &ev) != 0)
            rc = tsr_err_set(s->data.err, TSR_ECANCELED, "stopped reading the event stream");
    }
    s->data.bytes.len = 0;
    s->event[0] = '\0';
    return rc;
}

static int sse_line(sse *s)
{
    const char *l = s->line.bytes.data ? s->line.bytes.data : "";
    size_t n = s->line.bytes.len;
    s->line.bytes.len = 0;
    if (n == 0)
        return sse_dispatch(s);
    if (l[0] == ':')
        return 0; /* a comment: a keepalive */
    const char *colon = memchr(l, ':', n);
    size_t flen = colon ? (size_t)(colon - l) : n;
    const char *v = colon ? colon + 1 : l + n;
    if (colon && v < l + n && *v == ' ')
        v++;
    size_t vlen = (size_t)(l + n - v);
    if (flen == 4 && memcmp(l, "data", 4) == 0) {
        int rc = grow(&s->data, vlen + 1);
        if (rc)
            return rc;
        memcpy(s->data.bytes.data + s->data.bytes.len, v, vlen);
        s->data.bytes.len += vlen;
        s->data.bytes.data[s->data.bytes.len++] = '\n';
    } else if (flen == 5 && memcmp(l, "event", 5) == 0) {
        snprintf(s->event, sizeof s->event, "%.*s", (int)vlen, v);
    } else if (flen == 2 && memcmp(l, "id", 2) == 0 && memchr(v, '\0', vlen) == NULL) {
        snprintf(s->id, sizeof s->id, "%.*s", (int)vlen, v);
    } /* "retry" and unknown fields are ignored, as the standard says */
    return 0;
}

static int sse_sink(void *ctx, const char *data, size_t n)
{
    sse *s = ctx;
    for (size_t i = 0; i < n; i++) {
        char ch = data[i];
        bool lf_after_cr = ch == '\n' && s->last_cr;
        s->last_cr = ch == '\r';
        if (lf_after_cr)
            continue;
        int rc;
        if (ch == '\r' || ch == '\n')
            rc = sse_line(s);
        else
            rc = buffer_sink(&s->line, &ch, 1);
        if (rc)
            return rc;
    }
    return 0;
}

/* JSON lines (the export): each complete line, without its LF, to fn. */
typedef struct lines {
    growbuf line;
    cli_line_fn fn;
    void *ctx;
} lines;

static int lines_sink(void *ctx, const char *data, size_t n)
{
    lines *ls = ctx;
    while (n > 0) {
        const char *nl = memchr(data, '\n', n);
        size_t k = nl ? (size_t)(nl - data) : n;
        int rc = buffer_sink(&ls->line, data, k);
        if (rc)
            return rc;
        if (nl) {
            rc = buffer_sink(&ls->line, "", 0); /* NUL-terminated for fn */
            if (rc == 0 && ls->fn(ls->ctx, ls->line.bytes.data, ls->line.bytes.len) != 0)
                rc = tsr_err_set(ls->line.err, TSR_ECANCELED, "stopped reading the lines");
            ls->line.bytes.len = 0;
            if (rc)
                return rc;
            k++;
        }
        data += k;
        n -= k;
    }
    return 0;
}

/* ---- the exchange -------------------------------------------------------------- */

typedef struct head {
    bool chunked, has_length;
    unsigned long long length;
} head;

static int read_head(conn *c, cli_response *resp, head *hd)
{
    char line[MAX_LINE];
    do { /* skip interim 1xx answers */
        int rc = read_line(c, line, "before the answer");
        if (rc)
            return rc;
        int major, minor, status, used = 0;
        if (sscanf(line, "HTTP/%d.%d %3d%n", &major, &minor, &status, &used) != 3 ||
            major != 1 || status < 100 || status > 999)
            return tsr_err_set(c->err, TSR_EIO, "%s: not an HTTP answer: '%.60s'", c->url,
                               line);
        resp->status = status;
        *hd = (head){0};
        for (int nheaders = 0;; nheaders++) {
            if ((rc = read_line(c, line, "in the headers")) != 0)
                return rc;
            if (line[0] == '\0')
                break;
            if (nheaders == MAX_HEADERS)
                return tsr_err_set(c->err, TSR_EIO, "%s: more than %d headers", c->url,
                                   MAX_HEADERS);
            char *colon = strchr(line, ':');
            if (colon == NULL)
                return tsr_err_set(c->err, TSR_EIO, "%s: bad header line '%.60s'", c->url,
                                   line);
            *colon = '\0';
            char *v = colon + 1 + strspn(colon + 1, " \t");
            size_t vlen = strlen(v);
            while (vlen > 0 && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t'))
                v[--vlen] = '\0';
            if (strcasecmp(line, "Content-Length") == 0) {
                char *end;
                errno = 0;
                hd->length = strtoull(v, &end, 10);
                if (end == v || *end != '\0' || errno || v[0] == '-')
                    return tsr_err_set(c->err, TSR_EIO, "%s: bad Content-Length '%.40s'",
                                       c->url, v);
                hd->has_length = true;
            } else if (strcasecmp(line, "Transfer-Encoding") == 0) {
                for (char *q = v; *q; q++)
                    *q = (char)tolower((unsigned char)*q);
                hd->chunked = strstr(v, "chunked") != NULL;
            } else if (strcasecmp(line, "Content-Type") == 0) {
                snprintf(resp->content_type, sizeof resp->content_type, "%s", v);
            } else if (strcasecmp(line, "Location") == 0) {
                snprintf(resp->location, sizeof resp->location, "%s", v);
            }
        }
    } while (resp->status < 200);
    return 0;
}

static int read_body(conn *c, const head *hd, sink_fn sink, void *ctx)
{
    if (hd->chunked)
        return read_chunked(c, sink, ctx);
    if (hd->has_length)
        return read_exact(c, hd->length, sink, ctx, "in the middle of the body");
    return read_to_end(c, sink, ctx);
}

static bool is_event_stream(const cli_response *r)
{
    return r->status == 200 && strncasecmp(r->content_type, "text/event-stream", 17) == 0;
}

/* Send the request and read the answer; with es != NULL an event-stream
 * answer goes to the SSE parser instead of resp->body, with ls != NULL a
 * 200 answer goes to the line splitter. */
static int exchange(const cli_http *h, const char *method, const char *path,
                    const char *content_type, const char *body, size_t len, sse *es,
                    lines *ls, cli_response *resp, tsr_err *err)
{
    memset(resp, 0, sizeof *resp);
    int fd = -1;
    int rc = open_connection(h, &fd, &resp->sys_errno, err);
    if (rc)
        return rc;

    size_t hsize = strlen(path) + strlen(h->url.prefix) + (h->token ? strlen(h->token) : 0) +
                   1024;
    char *req = malloc(hsize);
    if (req == NULL) {
        close(fd);
        return tsr_err_set(err, TSR_ENOMEM, "out of memory");
    }
    int hlen = snprintf(req, hsize,
                        "%s %s%s HTTP/1.1\r\nHost: %s\r\nUser-Agent: tessera/" PACKAGE_VERSION
                        "\r\nAccept: %s\r\nConnection: close\r\n",
                        method, h->url.prefix, path, h->url.hostport,
                        es ? "text/event-stream"
                        : ls ? "application/x-ndjson, application/json"
                             : "application/json, text/plain");
    if (h->token)
        hlen += snprintf(req + hlen, hsize - (size_t)hlen, "Authorization: Bearer %s\r\n",
                         h->token);
    if (body != NULL && content_type != NULL)
        hlen += snprintf(req + hlen, hsize - (size_t)hlen, "Content-Type: %s\r\n",
                         content_type);
    if (body != NULL || strcmp(method, "POST") == 0 || strcmp(method, "PUT") == 0)
        hlen += snprintf(req + hlen, hsize - (size_t)hlen, "Content-Length: %zu\r\n",
                         body ? len : 0);
    hlen += snprintf(req + hlen, hsize - (size_t)hlen, "\r\n");
    int send_errno = send_all(fd, req, (size_t)hlen);
    free(req);
    if (send_errno == 0 && body != NULL)
        send_errno = send_all(fd, body, len);

    /* Even when the write failed, the daemon may have answered (and closed)
     * first: its answer says more than EPIPE does. */
    conn c = {.fd = fd, .url = h->url.text, .err = err,
              .timeout_ms = h->read_timeout_ms > 0 ? h->read_timeout_ms : DEFAULT_READ_MS};
    head hd;
    rc = read_head(&c, resp, &hd);
    if (rc && send_errno) {
        char reason[128];
        errno_text(reason, sizeof reason, send_errno);
        rc = tsr_err_set(err, TSR_EIO, "%s: sending the request: %s", h->url.text, reason);
    }
    bool bodyless = strcmp(method, "HEAD") == 0 || resp->status == 204 || resp->status == 304;
    size_t max = h->max_body ? h->max_body : DEFAULT_MAX_BODY;
    growbuf b = {.max = max, .err = err, .url = h->url.text};
    if (rc == 0 && !bodyless) {
        if (es != NULL && is_event_stream(resp)) {
            es->line = es->data = b;
            rc = read_body(&c, &hd, sse_sink, es);
            base_buf_free(&es->line.bytes);
            base_buf_free(&es->data.bytes);
        } else if (ls != NULL && resp->status == 200) {
            ls->line = b;
            ls->line.max = MAX_JSON_LINE;
            rc = read_body(&c, &hd, lines_sink, ls);
            if (rc == 0 && ls->line.bytes.len > 0) /* a last line without its LF */
                rc = tsr_err_set(err, TSR_EIO, "%s: the answer ends in the middle of a line",
                                 h->url.text);
            base_buf_free(&ls->line.bytes);
        } else if (hd.has_length && hd.length > max) {
            rc = tsr_err_set(err, TSR_ETOOBIG, "%s: the answer is larger than %zu MiB",
                             h->url.text, max >> 20);
        } else {
            rc = read_body(&c, &hd, buffer_sink, &b);
        }
    }
    close(fd);
    if (rc == 0 && b.bytes.data == NULL)
        rc = buffer_sink(&b, "", 0); /* always a NUL-terminated body */
    if (rc && rc != TSR_ECANCELED) {
        free(b.bytes.data);
        return rc;
    }
    resp->body = b.bytes.data;
    resp->len = b.bytes.len;
    return rc;
}

int cli_http_request(const cli_http *h, const char *method, const char *path,
                     const char *content_type, const char *body, size_t len,
                     cli_response *resp, tsr_err *err)
{
    return exchange(h, method, path, content_type, body, len, NULL, NULL, resp, err);
}

int cli_http_stream(const cli_http *h, const char *path, cli_sse_fn fn, void *ctx,
                    cli_response *resp, tsr_err *err)
{
    sse es = {.fn = fn, .ctx = ctx};
    return exchange(h, "GET", path, NULL, NULL, 0, &es, NULL, resp, err);
}

int cli_http_lines(const cli_http *h, const char *path, cli_line_fn fn, void *ctx,
                   cli_response *resp, tsr_err *err)
{
    lines ls = {.fn = fn, .ctx = ctx};
    return exchange(h, "GET", path, NULL, NULL, 0, NULL, &ls, resp, err);
}

void cli_response_free(cli_response *r)
{
    free(r->body);
    r->body = NULL;
    r->len = 0;
}
