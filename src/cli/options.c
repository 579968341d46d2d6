/*
 * options.c - the job options on the command line, shared by `tessera
 * solve` (tessera.c) and the daemon commands (remote.c): one table says,
 * for each option, which field of tsr_options it sets, what it accepts and
 * how a bad value is told.  Both commands collect the flags, read the
 * file's own options, and apply the flags on top with cli_apply_flag, so a
 * job's options mean the same in-process and on the daemon.
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

int cli_usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "tessera: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry 'tessera help'.\n");
    return EXIT_USAGE;
}

bool cli_parse_long(const char *s, long long lo, long long hi, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end != '\0' || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

/* How an option's value is read. */
enum kind {
    K_NUMBER,  /* lo..hi into an int (or, for limit, a long long) */
    K_SET,     /* no value: the field becomes `set` */
    K_UNIQUE,  /* a counting-mode name */
    K_ORDER,   /* a heuristic schedule (the engine checks its grammar) */
    K_VOLUME,  /* once (also no value), off, or a number >= 1 */
    K_PARITY,  /* off, or a number >= 1 (no value: 1) */
    K_PIECE    /* a piece name, or none given: automatic */
};

typedef struct job_option {
    int code;
    const char *name;
    enum kind kind;
    size_t field;      /* offsetof(tsr_options, ...) */
    long long lo, hi;  /* K_NUMBER */
    int set;           /* K_SET */
    const char *want;  /* what a bad value is told it should be */
} job_option;

#define AT(f) offsetof(tsr_options, f)

static const job_option job_options[] = {
    {O_UNIQUE, "unique", K_UNIQUE, AT(unique), 0, 0, 0, "raw, rotations or mirror"},
    {O_LIMIT, "limit", K_NUMBER, AT(limit), 0, LLONG_MAX, 0, "a number >= 0"},
    {O_THREADS, "threads", K_NUMBER, AT(threads), 0, 1024, 0, "a number from 0 to 1024"},
    {O_PRIORITY, "priority", K_NUMBER, AT(priority), -100, 100, 0, "a number from -100 to 100"},
    {O_GOAL, "goal", K_NUMBER, AT(goal), 0, INT_MAX, 0, "a number >= 0"},
    {O_FILA, "fila", K_NUMBER, AT(fila), 0, INT_MAX, 0, "a number >= 0"},
    {O_ORDER, "order", K_ORDER, AT(order), 0, 0, 0, "a schedule such as e=11:f=3"},
    {O_NOF, "nof", K_SET, AT(nof), 0, 0, 1, NULL},
    {O_NONOF, "no-nof", K_SET, AT(nof), 0, 0, 0, NULL},
    {O_FIT, "fit", K_SET, AT(fit), 0, 0, 1, NULL},
    {O_NOFIT, "no-fit", K_SET, AT(fit), 0, 0, 0, NULL},
    {O_VOLUME, "volume", K_VOLUME, AT(volume), 0, 0, 0, "once, off or a number >= 1"},
    {O_VTRIGGER, "vtrigger", K_NUMBER, AT(vtrigger), 0, INT_MAX, 0, "a number >= 0"},
    {O_PARITY, "parity", K_PARITY, AT(parity), 0, 0, 0, "off or a number >= 1"},
    {O_PFILTER, "pfilter", K_NUMBER, AT(pfilter), 0, INT_MAX, 0, "a number >= 0"},
    {O_REDUNDANCY, "redundancy", K_PIECE, AT(redundancy), 0, 0, 0, "a piece name"},
};

/* "--NAME: expected WANT, got '%s'" for cli_usage_error. */
static int bad_value(const job_option *jo, const char *arg)
{
    char fmt[160];
    snprintf(fmt, sizeof fmt, "--%s: expected %s, got '%%s'", jo->name, jo->want);
    return cli_usage_error(fmt, arg ? arg : "");
}

static void set_int(tsr_options *o, const job_option *jo, long long v)
{
    char *p = (char *)o + jo->field;
    if (jo->field == AT(limit))
        *(long long *)p = v;
    else
        *(int *)p = (int)v;
}

int cli_apply_flag(const flag *f, tsr_options *o)
{
    const job_option *jo = NULL;
    for (size_t k = 0; k < sizeof job_options / sizeof *job_options; k++)
        if (job_options[k].code == f->code)
            jo = &job_options[k];
    if (jo == NULL)
        return 0; /* not a job option: the command's own */
    const char *a = f->arg;
    long long v;
    switch (jo->kind) {
    case K_NUMBER:
        if (!cli_parse_long(a, jo->lo, jo->hi, &v))
            return bad_value(jo, a);
        set_int(o, jo, v);
        break;
    case K_SET:
        set_int(o, jo, jo->set);
        break;
    case K_UNIQUE:
        if (tsr_unique_parse(a) < 0)
            return bad_value(jo, a);
        o->unique = (enum tsr_unique)tsr_unique_parse(a);
        break;
    case K_ORDER:
        if (strlen(a) >= sizeof o->order || a[0] == '\0')
            return bad_value(jo, a);
        snprintf(o->order, sizeof o->order, "%s", a);
        break;
    case K_VOLUME:
        if (a == NULL || strcmp(a, "once") == 0)
            o->volume = -2;
        else if (strcmp(a, "off") == 0)
            o->volume = 0;
        else if (cli_parse_long(a, 1, INT_MAX, &v))
            o->volume = (int)v;
        else
            return bad_value(jo, a);
        break;
    case K_PARITY:
        if (a == NULL)
            o->parity = 1;
        else if (strcmp(a, "off") == 0)
            o->parity = 0;
        else if (cli_parse_long(a, 1, INT_MAX, &v))
            o->parity = (int)v;
        else
            return bad_value(jo, a);
        break;
    case K_PIECE:
        if (a == NULL)
            o->redundancy[0] = '\0';
        else if (strlen(a) > TSR_MAX_NAME)
            return cli_usage_error("--redundancy: piece name too long: '%s'", a);
        else
            snprintf(o->redundancy, sizeof o->redundancy, "%s", a);
        break;
    }
    return 0;
}
