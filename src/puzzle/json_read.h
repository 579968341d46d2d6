/*
 * json_read.h - what the two halves of the Puzzle JSON reader share:
 * json_read.c (the document, the puzzle, jobs and options) and
 * json_shape.c (the shape grammar of the board and the pieces).
 *
 * The reader's state is the JSON path of the value being read, so that
 * every complaint names it ("$.pieces[3].cells[2]: expected ...").  push
 * returns a mark that pop restores; on failure the path is simply left
 * where the error happened.  These helpers are defined in json_read.c.
 */
#ifndef TSR_JSON_READ_H
#define TSR_JSON_READ_H

#include <stddef.h>

#include <jansson.h>

#include "tessera/puzzle.h"

#if defined(__GNUC__)
#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))
#else
#define PRINTF_LIKE(f, a)
#endif

typedef struct jr_path {
    char buf[256];
    size_t len;
} jr_path;

typedef struct jr_reader {
    const char *source; /* may be NULL */
    tsr_err *err;
    jr_path path;
    enum tsr_lattice lattice; /* the puzzle's, read before its shapes */
} jr_reader;

size_t jr_push_key(jr_path *p, const char *key);
size_t jr_push_index(jr_path *p, size_t i);
void jr_pop(jr_path *p, size_t mark);

/* "SOURCE: $.path: message", returning `code`. */
PRINTF_LIKE(3, 4)
int jr_fail(jr_reader *r, int code, const char *fmt, ...);
/* "expected EXPECTED, got <a description of j>" at the current path. */
int jr_fail_type(jr_reader *r, const json_t *j, const char *expected);
/* A short description of a value for "got ..." in messages. */
const char *jr_describe(const json_t *j, char *buf, size_t n);
/* "\"a\", \"b\", \"c\"" of a NULL-terminated list, for messages. */
const char *jr_join_keys(const char *const *keys, char *buf, size_t n);
/* An integer in [min, max] at the current path, or a type error. */
int jr_want_int(jr_reader *r, const json_t *j, long long min, long long max, long long *out);

#endif
