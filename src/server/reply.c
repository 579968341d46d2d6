/*
 * reply.c - what the HTTP server answers with: the bodies it builds, the
 * text a client sent echoed safely, and every response's way out
 * (srv_queue), which adds the headers every answer carries and counts the
 * status class for /metrics.  An operation's srv_reply becomes a response
 * in srv_answer; an error is always {"error": {"status", "message"}}.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/server_impl.h"

/* ---- bodies ---------------------------------------------------------------
 * Every buffer the server builds (JSON encodings, event frames, the metrics
 * text, request bodies) is a base_buf (base/base.h): data is malloc'd, so a
 * filled buffer can be handed to MHD with MHD_RESPMEM_MUST_FREE. */
static int dump_to_buf(const char *p, size_t n, void *b)
{
    return base_buf_add(b, p, n) == TSR_OK ? 0 : -1;
}

/* Compact JSON of `j` appended to b. */
int srv_buf_json(base_buf *b, const json_t *j)
{
    return json_dump_callback(j, dump_to_buf, b, JSON_COMPACT | JSON_ENCODE_ANY) == 0
               ? TSR_OK
               : TSR_ENOMEM;
}

/* Copy client text for a message: at most ECHO_MAX bytes, anything but
 * printable ASCII replaced by '?', so the message is valid UTF-8 and short. */
const char *srv_printable(char *dst, size_t cap, const char *src, size_t n)
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

/* ---- replies ----------------------------------------------------------------- */

void srv_reply_release(srv_reply *r)
{
    json_decref(r->json);
    r->json = NULL;
    free(r->text);
    r->text = NULL;
    r->text_len = 0;
}

void srv_reply_error(srv_reply *r, int status, const char *fmt, ...)
{
    srv_reply_release(r);
    r->status = status;
    r->content_type = NULL;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->message, sizeof r->message, fmt, ap);
    va_end(ap);
}

void srv_reply_init(srv_reply *r)
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
enum MHD_Result srv_queue(srv_server *s, struct MHD_Connection *c, int status,
                             struct MHD_Response *resp, const char *ctype)
{
    assert(status >= 100 && status <= 599);
    if (!resp)
        return MHD_NO;
    if (ctype)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
    for (size_t i = 0; i < sizeof security_headers / sizeof *security_headers; i++)
        MHD_add_response_header(resp, security_headers[i].name, security_headers[i].value);
    guard_conn *gc = srv_conn_guard(c);
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
enum MHD_Result srv_answer(srv_server *s, struct MHD_Connection *c, srv_reply *r,
                              const char *allow)
{
    if (r->status < 100 || r->status > 599)
        srv_reply_error(r, 500, "internal error: the operation answered status %d",
                        r->status);
    base_buf b = {0};
    const char *ctype = NULL;
    int rc = TSR_OK;
    if (r->json) {
        rc = srv_buf_json(&b, r->json);
        ctype = SRV_JSON_TYPE;
    } else if (r->text) {
        b.data = r->text; /* taken over: MHD frees it */
        b.len = r->text_len;
        r->text = NULL;
        ctype = r->content_type ? r->content_type : SRV_TEXT_TYPE;
    } else if (r->status >= 400) {
        if (!r->message[0]) /* an operation that gave no message: the reason phrase */
            snprintf(r->message, sizeof r->message, "%s",
                     MHD_get_reason_phrase_for((unsigned)r->status));
        json_t *e = json_pack("{s:{s:i,s:s}}", "error", "status", r->status, "message",
                              r->message);
        if (!e) { /* the message was not UTF-8: send it sanitized */
            char clean[ECHO_MAX * 2];
            srv_printable(clean, sizeof clean, r->message, strlen(r->message));
            e = json_pack("{s:{s:i,s:s}}", "error", "status", r->status, "message", clean);
        }
        rc = e ? srv_buf_json(&b, e) : TSR_ENOMEM;
        json_decref(e);
        ctype = SRV_JSON_TYPE;
    }
    int status = r->status;
    srv_reply_release(r);
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
    /* a name of plain characters only: nothing a header could be split by */
    if (r->filename[0] && status < 400 && strspn(r->filename, "abcdefghijklmnopqrstuvwxyz"
                                                             "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                             "0123456789._-") ==
                                              strlen(r->filename)) {
        char cd[sizeof r->filename + 32];
        snprintf(cd, sizeof cd, "attachment; filename=\"%s\"", r->filename);
        MHD_add_response_header(resp, "Content-Disposition", cd);
    }
    if (status == 401)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
                                "Bearer realm=\"tesserad\"");
    if (allow)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, allow);
    return srv_queue(s, c, status, resp, ctype);
}

enum MHD_Result srv_answer_error(srv_server *s, struct MHD_Connection *c, int status,
                                    const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

enum MHD_Result srv_answer_error(srv_server *s, struct MHD_Connection *c, int status,
                                    const char *fmt, ...)
{
    srv_reply r;
    srv_reply_init(&r);
    r.status = status;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r.message, sizeof r.message, fmt, ap);
    va_end(ap);
    return srv_answer(s, c, &r, NULL);
}

