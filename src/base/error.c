/*
 * error.c - the error message carrier shared by every module.
 *
 * Library code never prints: a failing call formats one line into the
 * caller's tsr_err and returns a negative code, and the caller (the CLI, the
 * daemon, a test) decides where the line goes.
 */
#include <stdarg.h>
#include <stdio.h>

#include "tessera/error.h"

int tsr_err_set(tsr_err *err, int code, const char *fmt, ...)
{
    if (err != NULL) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

const char *tsr_strerror(int code)
{
    switch (code) {
    case TSR_OK: return "success";
    case TSR_ENOMEM: return "out of memory";
    case TSR_EINVAL: return "invalid input";
    case TSR_EIO: return "input/output error";
    case TSR_ECANCELED: return "canceled";
    case TSR_ETOOBIG: return "input too large";
    case TSR_EUNSUPP: return "not supported";
    case TSR_EBUSY: return "in use by another process";
    case TSR_ESTALE: return "the file is no longer at its path";
    default: return "unknown error";
    }
}
