/*
 * stream.c - the two answers that are not an srv_reply: a job's event
 * stream (Server-Sent Events, one event per change, keepalives, the end
 * after the final state or when the client goes) and the export of every
 * stored solution as JSON lines, read in bounded steps so that any count
 * streams in constant memory.  Both are content readers on the
 * connection's own thread (server.c says why that is legal).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "server/server_impl.h"
#include "tessera/job.h"

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
    srv_reply_init(r);
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
        rc = r->json ? srv_buf_json(&e->out, r->json) : base_buf_add(&e->out, r->text, r->text_len);
    json_decref(job);
    if (rc == TSR_OK)
        rc = base_buf_add(&e->out, "\n\n", 2);
    srv_reply_release(r);
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
                srv_reply_release(&r);
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
enum MHD_Result srv_serve_events(srv_server *s, struct MHD_Connection *c, struct req *q)
{
    int64_t counter = s->ops.wait_change(s->ops.ctx, q->id, -1, 0);
    if (counter < 0)
        return srv_answer_error(s, c, 404, "no job %lld", (long long)q->id);
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
        return srv_answer(s, c, &r, NULL);
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
    return srv_queue(s, c, 200, resp, SRV_SSE_TYPE);
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
    srv_reply_init(r);
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
    if (!line || srv_buf_json(&e->out, line) != TSR_OK || base_buf_add(&e->out, "\n", 1) != TSR_OK)
        e->out.len = 0;
    json_decref(line);
    srv_reply_release(r);
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
            srv_reply_init(&r);
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
enum MHD_Result srv_serve_export(srv_server *s, struct MHD_Connection *c, struct req *q)
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
        return srv_answer(s, c, &r, NULL);
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
    return srv_queue(s, c, 200, resp, SRV_NDJSON_TYPE);
}

