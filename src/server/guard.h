/*
 * guard.h - what one client may hold of the HTTP server (used by server.c).
 *
 * libmicrohttpd closes a connection that has been silent for its idle
 * timeout, but a client that sends one byte a second is never silent, and
 * every open connection costs a thread.  The guard keeps a record of every
 * open connection and bounds three things:
 *   - time: a request's line and headers must arrive within GUARD_HEADER_S
 *     of the connection's start (or of the previous request's end plus the
 *     idle timeout), its body within GUARD_BODY_S of its headers.  A
 *     thread of the guard shuts down (shutdown(2)) the socket of a
 *     connection past its deadline; the connection's own thread then sees
 *     the end of the stream and libmicrohttpd closes it.  Answers and
 *     event streams have no deadline;
 *   - connections per client address: past GUARD_PER_ADDRESS the new one
 *     is shut down at once;
 *   - the server's connection limit.  A connection is idle while it waits
 *     for a request (a new connection, or one kept alive between
 *     requests); idle ones cost a thread and give nothing.  A newcomer
 *     that finds every slot taken sheds the connection that has been
 *     idle the longest, and takes its slot.  Only when every slot is busy
 *     answering is the newcomer `reserved`: one of GUARD_RESERVE slots
 *     past the limit, answered for /healthz only, with GUARD_RESERVED_S
 *     to send its request.  So neither idle nor slow clients can lock a
 *     monitor out: a full server still tells a load balancer how it is.
 *     libmicrohttpd's own limit is the limit plus the reserve plus
 *     GUARD_SHED_MARGIN for connections shed and not yet closed.
 *
 * Locking: one mutex over the records; guard_close is called before
 * libmicrohttpd closes the socket (its NOTIFY_CLOSED), so the guard never
 * shuts down a descriptor that has been closed and reused.
 */
#ifndef SRV_GUARD_H
#define SRV_GUARD_H

#include <stdbool.h>
#include <sys/socket.h>

#define GUARD_HEADER_S 10.0  /* request line and headers */
#define GUARD_BODY_S 30.0    /* the body, from the end of the headers (4 MiB at 140 KB/s) */
#define GUARD_PER_ADDRESS 256 /* open connections from one client address */
#define GUARD_RESERVE 16     /* connections past the limit, for /healthz only */
#define GUARD_RESERVED_S 2.0 /* a reserved connection's time for its request */
#define GUARD_SHED_MARGIN 64 /* shed connections still closing */

typedef struct guard guard;
typedef struct guard_conn guard_conn;

/* limit: the server's connection limit (reserved ones come on top);
 * idle_s: libmicrohttpd's idle timeout. */
int guard_new(int limit, double idle_s, guard **out);
void guard_free(guard *g); /* after the server stopped: every connection closed */

/* A new connection (NOTIFY_STARTED): its record, or NULL when out of
 * memory (then it is not guarded).  It has the header deadline; one over
 * the per-address limit is shut down at once. */
guard_conn *guard_open(guard *g, int fd, const struct sockaddr *addr, socklen_t len);
void guard_close(guard *g, guard_conn *c); /* NOTIFY_CLOSED; c may be NULL */

/* The request's headers are in: its body (if any) has until GUARD_BODY_S. */
void guard_headers_done(guard *g, guard_conn *c, bool has_body);
/* The request is read: no deadline while it is answered.  `last`: the
 * answer closes the connection, so it never waits for another request
 * (and is never taken for an idle one). */
void guard_request_done(guard *g, guard_conn *c, bool last);
/* The answer is sent (NOTIFY_COMPLETED): the next request on the
 * connection has the idle timeout plus GUARD_HEADER_S to arrive. */
void guard_answered(guard *g, guard_conn *c);

/* Admitted past the connection limit: to be answered for /healthz only. */
bool guard_reserved(const guard_conn *c);

/* Connections shut down by the guard since it started (for /metrics), and
 * how many of them were idle ones shed for a newcomer. */
long guard_cut(guard *g);
long guard_shed(guard *g);

#endif
