/*
 * guard.c - deadlines, per-address limits and shedding of idle HTTP
 * connections (the reasons and the rules are in guard.h).
 *
 * Records live in one list under `mu`; a thread wakes every GUARD_TICK_MS
 * and shuts down the sockets whose deadline has passed.  A record shut
 * down stays in the list, marked `shut`, until libmicrohttpd closes its
 * socket; it no longer counts as a live connection.  Connections are at
 * most the server's limit plus the reserve and the margin, a thousand or
 * so, so every operation simply walks the list.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <assert.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/base.h"
#include "server/guard.h"

#define GUARD_TICK_MS 250 /* how late a deadline may be acted on */

struct guard_conn {
    guard_conn *prev, *next;
    int fd;
    struct sockaddr_storage addr;
    double deadline;   /* monotonic seconds; 0: none */
    double idle_since; /* since when it waits for a request; 0: one is in */
    bool reserved;
    bool shut;         /* shut down by the guard, not yet closed */
    bool last;         /* its answer closes it: never idle again */
};

struct guard {
    base_mutex mu;
    pthread_cond_t wake;
    pthread_t reaper;
    bool stop;
    guard_conn *head;
    int open, limit;   /* records, and the server's connection limit */
    int shut;          /* records shut down and not yet closed */
    double idle_s;
    long cut, shed;
};

/* Same client address (the port aside)? */
static bool same_address(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
    if (a->ss_family != b->ss_family)
        return false;
    if (a->ss_family == AF_INET)
        return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
               ((const struct sockaddr_in *)b)->sin_addr.s_addr;
    if (a->ss_family == AF_INET6)
        return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
                      &((const struct sockaddr_in6 *)b)->sin6_addr, sizeof(struct in6_addr)) == 0;
    return false;
}

/* Shut down c's socket (under mu): its thread sees the end of the stream
 * and libmicrohttpd closes it.  Once per connection. */
static void cut(guard *g, guard_conn *c)
{
    BASE_HELD(&g->mu);
    if (c->shut)
        return;
    c->shut = true;
    c->deadline = 0;
    shutdown(c->fd, SHUT_RDWR);
    g->cut++;
    g->shut++;
}

/* The live connection other than `except` that has waited longest for a
 * request (under mu), or NULL when every one is busy. */
static guard_conn *longest_idle(guard *g, const guard_conn *except)
{
    BASE_HELD(&g->mu);
    guard_conn *best = NULL;
    for (guard_conn *c = g->head; c != NULL; c = c->next)
        if (c != except && !c->shut && c->idle_since > 0 &&
            (best == NULL || c->idle_since < best->idle_since))
            best = c;
    return best;
}

static void *reaper_main(void *arg)
{
    guard *g = arg;
    base_lock(&g->mu);
    while (!g->stop) {
        double t = base_now();
        for (guard_conn *c = g->head; c != NULL; c = c->next)
            if (c->deadline > 0 && t > c->deadline)
                cut(g, c);
        base_cond_wait(&g->wake, &g->mu, t + GUARD_TICK_MS / 1000.0);
    }
    base_unlock(&g->mu);
    return NULL;
}

int guard_new(int limit, double idle_s, guard **out)
{
    guard *g = calloc(1, sizeof *g);
    if (g == NULL)
        return -ENOMEM;
    g->limit = limit;
    g->idle_s = idle_s;
    base_mutex_init(&g->mu);
    base_cond_init(&g->wake);
    int rc = pthread_create(&g->reaper, NULL, reaper_main, g);
    if (rc != 0) {
        pthread_cond_destroy(&g->wake);
        base_mutex_destroy(&g->mu);
        free(g);
        return -rc;
    }
    *out = g;
    return 0;
}

void guard_free(guard *g)
{
    if (g == NULL)
        return;
    base_lock(&g->mu);
    g->stop = true;
    pthread_cond_signal(&g->wake);
    base_unlock(&g->mu);
    pthread_join(g->reaper, NULL);
    while (g->head != NULL) { /* none, once the server has stopped */
        guard_conn *c = g->head;
        g->head = c->next;
        free(c);
    }
    pthread_cond_destroy(&g->wake);
    base_mutex_destroy(&g->mu);
    free(g);
}

guard_conn *guard_open(guard *g, int fd, const struct sockaddr *addr, socklen_t len)
{
    guard_conn *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    c->fd = fd;
    if (addr != NULL && len <= sizeof c->addr)
        memcpy(&c->addr, addr, len);
    base_lock(&g->mu);
    int same = 0;
    for (guard_conn *o = g->head; o != NULL; o = o->next)
        same += !o->shut && same_address(&o->addr, &c->addr);
    double now = base_now();
    c->idle_since = now;
    c->deadline = now + GUARD_HEADER_S;
    c->next = g->head;
    if (g->head != NULL)
        g->head->prev = c;
    g->head = c;
    g->open++;
    if (same >= GUARD_PER_ADDRESS) {
        cut(g, c);
    } else if (g->open - g->shut > g->limit) { /* full: an idle one makes room */
        guard_conn *idle = longest_idle(g, c);
        if (idle != NULL) {
            cut(g, idle);
            g->shed++;
        } else if (g->open - g->shut > g->limit + GUARD_RESERVE) {
            cut(g, c);
        } else {
            c->reserved = true;
            c->deadline = now + GUARD_RESERVED_S;
        }
    }
    base_unlock(&g->mu);
    return c;
}

void guard_close(guard *g, guard_conn *c)
{
    if (c == NULL)
        return;
    base_lock(&g->mu);
    if (c->prev != NULL)
        c->prev->next = c->next;
    else
        g->head = c->next;
    if (c->next != NULL)
        c->next->prev = c->prev;
    assert(g->open > 0 && g->shut <= g->open);
    g->open--;
    g->shut -= c->shut;
    assert(g->shut >= 0 && g->shut <= g->open);
    base_unlock(&g->mu);
    free(c);
}

/* c's next deadline in `in_s` seconds (0: none), and whether it now
 * waits for a request.  A connection already shut keeps no deadline. */
static void set_deadline(guard *g, guard_conn *c, double in_s, bool idle)
{
    if (c == NULL)
        return;
    base_lock(&g->mu);
    double now = base_now();
    if (!c->shut)
        c->deadline = in_s > 0 ? now + in_s : 0;
    c->idle_since = idle && !c->last ? now : 0;
    base_unlock(&g->mu);
}

void guard_headers_done(guard *g, guard_conn *c, bool has_body)
{
    set_deadline(g, c, has_body ? GUARD_BODY_S : 0, false);
}

void guard_request_done(guard *g, guard_conn *c, bool last)
{
    if (c != NULL && last) {
        base_lock(&g->mu);
        c->last = true;
        base_unlock(&g->mu);
    }
    set_deadline(g, c, 0, false);
}

void guard_answered(guard *g, guard_conn *c)
{
    set_deadline(g, c, g->idle_s + GUARD_HEADER_S, true);
}

bool guard_reserved(const guard_conn *c)
{
    return c != NULL && c->reserved;
}

long guard_cut(guard *g)
{
    base_lock(&g->mu);
    long n = g->cut;
    base_unlock(&g->mu);
    return n;
}

long guard_shed(guard *g)
{
    base_lock(&g->mu);
    long n = g->shed;
    base_unlock(&g->mu);
    return n;
}
