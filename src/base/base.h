/*
 * base.h - the helpers every module of Tessera uses, at the bottom of the
 * layering (nothing here includes anything of Tessera but error.h):
 *
 *   - base_now: the one clock for durations and deadlines, in seconds on
 *     CLOCK_MONOTONIC (wall-clock time, which can jump, never measures);
 *   - base_cpu_count: the online CPUs, what "0 threads" means everywhere;
 *   - base_grow: the one way an array grows, in the manner of Lua's
 *     luaM_growvector: make room for element `count`, doubling;
 *   - base_buf: the one growing byte buffer, on base_grow.
 *
 * The return codes and messages (tsr_err, TSR_E*) are public:
 * include/tessera/error.h, implemented in error.c here.
 */
#ifndef TSR_BASE_H
#define TSR_BASE_H

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

#endif
