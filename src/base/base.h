/*
 * base.h - the helpers every module of Tessera uses, at the bottom of the
 * layering (nothing here includes anything of Tessera but error.h):
 *
 *   - base_now: the one clock for durations and deadlines, in seconds on
 *     CLOCK_MONOTONIC (wall-clock time, which can jump, never measures);
 *   - base_cpu_count: the online CPUs, what "0 threads" means everywhere;
 *   - base_grow: the one way an array grows, in the manner of Lua's
 *     luaM_growvector: make room for element `count`, doubling;
 *   - base_buf: the one growing byte buffer, on base_grow;
 *   - base_mutex and base_cond_*: the lock whose holder a debug build
 *     knows (BASE_HELD), and waits with deadlines on the one clock
 *     (lock.c).
 *
 * The return codes and messages (tsr_err, TSR_E*) are public:
 * include/tessera/error.h, implemented in error.c here.
 */
#ifndef TSR_BASE_H
#define TSR_BASE_H

#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "tessera/error.h"

/* A growing byte buffer: what the HTTP server and client, the store's
 * batches and the MPI messages build.  data is malloc'd (NULL until the
 * first byte), so a filled buffer can be handed on and freed by free(). */
typedef struct base_buf {
    char *data;
    size_t len, cap;
} base_buf;

/* Append n bytes: 0 or TSR_ENOMEM (the buffer then unchanged). */
int base_buf_add(base_buf *b, const void *p, size_t n);
/* Append printf-style text (no NUL): 0, TSR_ENOMEM or TSR_EINVAL. */
int base_buf_printf(base_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void base_buf_free(base_buf *b);

/* Seconds on the monotonic clock, from an arbitrary origin. */
double base_now(void);

/* The number of online CPUs, at least 1. */
int base_cpu_count(void);

/* Make room in the array *v (elements of `size` bytes, capacity *cap) for
 * element number `count` (so for count + 1 elements): 0, or TSR_ENOMEM
 * with *v and *cap unchanged, or TSR_ETOOBIG past `max` elements (0: no
 * limit beyond what size_t holds).  The capacity doubles, from `first`. */
int base_grow(void **v, size_t *cap, size_t count, size_t size, size_t first, size_t max);

/* A mutex that knows its holder.  base_lock and base_unlock are
 * pthread_mutex_lock and _unlock that also record the holding thread (one
 * relaxed store each); base_holds says whether the calling thread holds
 * it, and BASE_HELD(m) asserts so in a debug build (--enable-debug): the
 * check of every function documented "(under mu)". */
typedef struct base_mutex {
    pthread_mutex_t mu;
    atomic_ulong owner; /* pthread_self() of the holder, 0: none */
} base_mutex;
void base_mutex_init(base_mutex *m);
void base_mutex_destroy(base_mutex *m);
void base_lock(base_mutex *m);
void base_unlock(base_mutex *m);
bool base_holds(base_mutex *m); /* NULL: true (no lock to hold) */
#ifdef TSR_DEBUG
#define BASE_HELD(m) assert(base_holds(m))
#else
#define BASE_HELD(m) ((void)0)
#endif

/* A condition variable that waits on CLOCK_MONOTONIC: every timed wait
 * takes a deadline in base_now() seconds (an infinite or NaN one: no
 * deadline).  Returns what pthread_cond_timedwait returns (ETIMEDOUT once
 * the deadline passed). */
void base_cond_init(pthread_cond_t *cv);
int base_cond_wait(pthread_cond_t *cv, base_mutex *m, double deadline);
/* The same on a plain pthread mutex (the pool's, which need no holder). */
int base_cond_timedwait(pthread_cond_t *cv, pthread_mutex_t *mu, double deadline);

#endif
