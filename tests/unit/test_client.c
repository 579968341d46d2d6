/*
 * test_client.c - the CLI's HTTP client (src/cli/client.c) against a real
 * socket: a server thread in this process on 127.0.0.1 answers each
 * connection with canned bytes, written as the test says (all at once, or
 * a byte at a time), so the readers meet every framing a peer can send.
 *
 * What is checked: URLs parse into host, port, prefix and Host header, and
 * malformed ones are refused naming the problem; bodies framed by
 * Content-Length, by chunks (with extensions and trailers) and by the end
 * of the connection come back whole, split into single bytes too; lying or
 * malformed framing (short bodies, bad chunk sizes, a chunk larger than the
 * cap, no status line) is an error, never a crash or an overrun; bodies
 * over the cap are TSR_ETOOBIG; event streams give each event with its
 * type, id and multi-line data, across CRLF and LF line ends and any
 * split, skip comments, and stop when the callback asks; JSON-lines
 * answers give each line, and a body ending inside a line is TSR_EIO.
 */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cli/client.h"

/* ---- a server that answers canned bytes ----------------------------------- */

typedef struct canned {
    int listener;
    int port;
    const char *reply;   /* what every connection gets */
    size_t len;
    bool trickle;        /* one byte per write */
    char request[4096];  /* the last request's head, as received */
    pthread_t thread;
} canned;

static void *serve(void *arg)
{
    canned *c = arg;
    int fd = accept(c->listener, NULL, NULL);
    if (fd < 0)
        return NULL;
    /* the request's head, up to the blank line (bodies are small here) */
    size_t got = 0;
    while (got + 1 < sizeof c->request) {
        ssize_t k = recv(fd, c->request + got, sizeof c->request - 1 - got, 0);
        if (k <= 0)
            break;
        got += (size_t)k;
        c->request[got] = '\0';
        if (strstr(c->request, "\r\n\r\n") != NULL)
            break;
    }
    for (size_t off = 0; off < c->len;) {
        size_t n = c->trickle ? 1 : c->len - off;
        ssize_t k = send(fd, c->reply + off, n, MSG_NOSIGNAL);
        if (k <= 0)
            break;
        off += (size_t)k;
    }
    close(fd);
    return NULL;
}

/* Answer the next connection with `reply`; h is set up to reach it. */
static void canned_start(canned *c, const char *reply, size_t len, bool trickle, cli_http *h)
{
    memset(c, 0, sizeof *c);
    c->listener = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(c->listener, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    ck_assert_int_eq(bind(c->listener, (struct sockaddr *)&a, sizeof a), 0);
    ck_assert_int_eq(listen(c->listener, 4), 0);
    socklen_t al = sizeof a;
    getsockname(c->listener, (struct sockaddr *)&a, &al);
    c->port = ntohs(a.sin_port);
    c->reply = reply;
    c->len = len;
    c->trickle = trickle;
    pthread_create(&c->thread, NULL, serve, c);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", c->port);
    memset(h, 0, sizeof *h);
    tsr_err err = {{0}};
    ck_assert_int_eq(cli_url_parse(url, &h->url, &err), 0);
    h->read_timeout_ms = 5000;
}

static void canned_stop(canned *c)
{
    pthread_join(c->thread, NULL);
    close(c->listener);
}

/* GET / answered with `reply`, whole or a byte at a time: the call's code,
 * and the response in *r (free it). */
static int get(const char *reply, bool trickle, size_t max_body, cli_response *r, tsr_err *err)
{
    canned c;
    cli_http h;
    canned_start(&c, reply, strlen(reply), trickle, &h);
    h.max_body = max_body;
    int rc = cli_http_request(&h, "GET", "/x", NULL, NULL, 0, r, err);
    canned_stop(&c);
    return rc;
}

/* ---- URLs ------------------------------------------------------------------ */

START_TEST(urls)
{
    cli_url u;
    tsr_err err = {{0}};
    ck_assert_int_eq(cli_url_parse("http://127.0.0.1:8080", &u, &err), 0);
    ck_assert_str_eq(u.host, "127.0.0.1");
    ck_assert_str_eq(u.port, "8080");
    ck_assert_str_eq(u.prefix, "");
    ck_assert_str_eq(u.hostport, "127.0.0.1:8080");
    ck_assert_int_eq(cli_url_parse("HTTP://[::1]:9/tessera/api//", &u, &err), 0);
    ck_assert_str_eq(u.host, "::1");
    ck_assert_str_eq(u.hostport, "[::1]:9");
    ck_assert_str_eq(u.prefix, "/tessera/api");
    ck_assert_str_eq(u.text, "http://[::1]:9/tessera/api");
    ck_assert_int_eq(cli_url_parse("localhost", &u, &err), 0); /* no scheme: http */
    ck_assert_str_eq(u.port, "80");
    ck_assert_str_eq(u.hostport, "localhost");
    static const struct {
        const char *url, *says;
        int rc;
    } bad[] = {
        {"https://x", "https is not supported", TSR_EUNSUPP},
        {"ftp://x", "expected an http:// URL", TSR_EINVAL},
        {"http://", "expected a host name", TSR_EINVAL},
        {"http://:80", "expected a host name", TSR_EINVAL},
        {"http://x:0", "port from 1 to 65535", TSR_EINVAL},
        {"http://x:65536", "port from 1 to 65535", TSR_EINVAL},
        {"http://x:8o", "port from 1 to 65535", TSR_EINVAL},
        {"http://x:", "port from 1 to 65535", TSR_EINVAL},
        {"http://[::1", "unterminated '['", TSR_EINVAL},
        {"http://u:p@x", "user names", TSR_EINVAL},
        {"http://x/?q=1", "no query or fragment", TSR_EINVAL},
        {"http://x#f", "no query or fragment", TSR_EINVAL},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err.msg[0] = '\0';
        ck_assert_int_eq(cli_url_parse(bad[i].url, &u, &err), bad[i].rc);
        ck_assert_msg(strstr(err.msg, bad[i].says) != NULL, "%s: %s", bad[i].url, err.msg);
    }
    char longurl[2000] = "http://x/";
    memset(longurl + 9, 'p', sizeof longurl - 10);
    longurl[sizeof longurl - 1] = '\0';
    ck_assert_int_eq(cli_url_parse(longurl, &u, &err), TSR_EINVAL);
    ck_assert_msg(strstr(err.msg, "too long") != NULL, "%s", err.msg);
}
END_TEST

/* ---- bodies ---------------------------------------------------------------- */

START_TEST(framings)
{
    static const char *const ok[] = {
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"a\":\"bcd\"}",
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        "3\r\n{\"a\r\n8;ext=1\r\n\":\"bcd\"}\r\n0\r\nX-Trailer: y\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{\"a\":\"bcd\"}",
        "HTTP/1.0 200 OK\nContent-Type: application/json\nContent-Length: 11\n\n{\"a\":\"bcd\"}",
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
        for (int trickle = 0; trickle < 2; trickle++) {
            cli_response r;
            tsr_err err = {{0}};
            int rc = get(ok[i], trickle, 0, &r, &err);
            ck_assert_msg(rc == 0, "framing %zu (trickle %d): %d %s", i, trickle, rc, err.msg);
            ck_assert_int_eq(r.status, 200);
            ck_assert_str_eq(r.content_type, "application/json");
            ck_assert_uint_eq(r.len, 11);
            ck_assert_str_eq(r.body, "{\"a\":\"bcd\"}");
            cli_response_free(&r);
        }
    /* 204 and 304 have no body whatever they declare */
    cli_response r;
    tsr_err err = {{0}};
    ck_assert_int_eq(get("HTTP/1.1 204 No Content\r\n\r\n", false, 0, &r, &err), 0);
    ck_assert_int_eq(r.status, 204);
    ck_assert_uint_eq(r.len, 0);
    cli_response_free(&r);
}
END_TEST

START_TEST(lying_peers)
{
    static const char *const bad[] = {
        "HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\nshort",          /* ends early */
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nab\r\n0\r\n\r\n", /* size */
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab",  /* chunk ends early */
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabXY0\r\n\r\n", /* no CRLF */
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n", /* huge */
        "HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n",
        "SSH-2.0-OpenSSH\r\n\r\n",                                       /* not HTTP */
        "HTTP/1.1 2x0 OK\r\n\r\n",
        "",                                                              /* closed at once */
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n",                       /* head never ends */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cli_response r;
        tsr_err err = {{0}};
        int rc = get(bad[i], i % 2 == 0, 0, &r, &err);
        ck_assert_msg(rc != 0, "lying peer %zu accepted (status %d)", i, r.status);
        ck_assert_msg(err.msg[0] != '\0', "lying peer %zu: no message", i);
        cli_response_free(&r);
    }
    /* over the cap: refused, not read into memory */
    char big[600];
    snprintf(big, sizeof big, "HTTP/1.1 200 OK\r\nContent-Length: 400\r\n\r\n%0400d", 0);
    cli_response r;
    tsr_err err = {{0}};
    ck_assert_int_eq(get(big, false, 100, &r, &err), TSR_ETOOBIG);
    cli_response_free(&r);
    snprintf(big, sizeof big, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
             "190\r\n%0400d\r\n0\r\n\r\n", 0);
    ck_assert_int_eq(get(big, false, 100, &r, &err), TSR_ETOOBIG);
    cli_response_free(&r);
}
END_TEST

/* ---- event streams --------------------------------------------------------- */

typedef struct seen {
    char text[2048];
    int n, stop_after;
} seen;

static int on_event(void *ctx, const cli_sse_event *ev)
{
    seen *s = ctx;
    size_t l = strlen(s->text);
    snprintf(s->text + l, sizeof s->text - l, "[%s|%s|%s]", ev->event, ev->id, ev->data);
    return ++s->n == s->stop_after;
}

static int stream(const char *reply, bool trickle, seen *s, cli_response *r, tsr_err *err)
{
    canned c;
    cli_http h;
    canned_start(&c, reply, strlen(reply), trickle, &h);
    int rc = cli_http_stream(&h, "/events", on_event, s, r, err);
    canned_stop(&c);
    ck_assert_msg(strstr(c.request, "Accept: text/event-stream") != NULL, "%s", c.request);
    return rc;
}

START_TEST(event_streams)
{
    const char *body = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"
                       ": keepalive\n\n"
                       "id: 7\nevent: job\ndata: {\"a\":1}\n\n"
                       "data: line one\r\ndata: line two\r\n\r\n"
                       "event: end\ndata:\n\n"
                       "data: never dispatched without its blank line";
    for (int trickle = 0; trickle < 2; trickle++) {
        seen s = {.stop_after = -1};
        cli_response r;
        tsr_err err = {{0}};
        int rc = stream(body, trickle, &s, &r, &err);
        ck_assert_msg(rc == 0, "%d %s", rc, err.msg);
        ck_assert_str_eq(s.text, "[job|7|{\"a\":1}][message|7|line one\nline two][end|7|]");
        cli_response_free(&r);
    }
    /* the callback ends the stream */
    seen s = {.stop_after = 1};
    cli_response r;
    tsr_err err = {{0}};
    ck_assert_int_eq(stream(body, false, &s, &r, &err), TSR_ECANCELED);
    ck_assert_int_eq(s.n, 1);
    cli_response_free(&r);
    /* not a stream: read whole, as a request */
    s = (seen){.stop_after = -1};
    ck_assert_int_eq(stream("HTTP/1.1 404 Not Found\r\nContent-Length: 7\r\n\r\nno job!", false,
                            &s, &r, &err), 0);
    ck_assert_int_eq(r.status, 404);
    ck_assert_str_eq(r.body, "no job!");
    ck_assert_int_eq(s.n, 0);
    cli_response_free(&r);
}
END_TEST

/* ---- JSON lines ------------------------------------------------------------ */

static int on_line(void *ctx, const char *line, size_t len)
{
    seen *s = ctx;
    size_t l = strlen(s->text);
    ck_assert_uint_eq(strlen(line), len);
    snprintf(s->text + l, sizeof s->text - l, "<%s>", line);
    return ++s->n == s->stop_after;
}

START_TEST(json_lines)
{
    const char *chunked = "HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\n"
                          "Transfer-Encoding: chunked\r\n\r\n"
                          "4\r\n{\"a\"\r\n6\r\n:1}\n{}\r\n1\r\n\n\r\n0\r\n\r\n";
    for (int trickle = 0; trickle < 2; trickle++) {
        canned c;
        cli_http h;
        canned_start(&c, chunked, strlen(chunked), trickle, &h);
        seen s = {.stop_after = -1};
        cli_response r;
        tsr_err err = {{0}};
        int rc = cli_http_lines(&h, "/all", on_line, &s, &r, &err);
        canned_stop(&c);
        ck_assert_msg(rc == 0, "%d %s", rc, err.msg);
        ck_assert_str_eq(s.text, "<{\"a\":1}><{}>");
        cli_response_free(&r);
    }
    const char *cut = "HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\n"
                      "Connection: close\r\n\r\n{\"a\":1}\n{\"b\"";
    canned c;
    cli_http h;
    canned_start(&c, cut, strlen(cut), false, &h);
    seen s = {.stop_after = -1};
    cli_response r;
    tsr_err err = {{0}};
    ck_assert_int_eq(cli_http_lines(&h, "/all", on_line, &s, &r, &err), TSR_EIO);
    canned_stop(&c);
    ck_assert_str_eq(s.text, "<{\"a\":1}>");
    cli_response_free(&r);
}
END_TEST

/* The suite (tests/unit/check_main.c runs it). */
Suite *test_suite(void)
{
    Suite *s = suite_create("client");
    TCase *tc = tcase_create("client");
    tcase_add_test(tc, urls);
    tcase_add_test(tc, framings);
    tcase_add_test(tc, lying_peers);
    tcase_add_test(tc, event_streams);
    tcase_add_test(tc, json_lines);
    suite_add_tcase(s, tc);
    return s;
}
