/*
 * tessera/error.h - return codes and the error message carrier.
 *
 * Every fallible library call returns 0 on success or one of the negative
 * TSR_E* codes below (libuv style).  Calls that can fail on bad input also
 * take a `tsr_err *` into which they write one human-readable line naming
 * the problem: the file and line, or the JSON path, and what is wrong.
 * Libraries never print; the caller decides what to show.
 */
#ifndef TESSERA_ERROR_H
#define TESSERA_ERROR_H

#include <stddef.h>

enum {
    TSR_OK = 0,
    TSR_ENOMEM = -1,    /* allocation failed */
    TSR_EINVAL = -2,    /* malformed or inconsistent input */
    TSR_EIO = -3,       /* reading or writing a file failed */
    TSR_ECANCELED = -4, /* a callback asked the search to stop */
    TSR_ETOOBIG = -5,   /* input exceeds a size limit */
    TSR_EUNSUPP = -6,   /* a valid request this build cannot honour */
    TSR_EBUSY = -7,     /* held by another process (a store's claim) */
    TSR_ESTALE = -8     /* a store's name no longer leads to the file held */
};

#define TSR_ERR_MAX 512

typedef struct tsr_err {
    char msg[TSR_ERR_MAX];
} tsr_err;

/* Format a message into `err` (if not NULL) and return `code`, so that a
 * failing path can read `return tsr_err_set(err, TSR_EINVAL, "...", ...);` */
int tsr_err_set(tsr_err *err, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* A short constant description of a return code. */
const char *tsr_strerror(int code);

#endif
