/*
 * repair.c - the offline repair of damaged solution chunks (sto_repair,
 * tesserad --repair): each job keeps its sound prefix, and says so.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "base/base.h"
#include "store/store_impl.h"
#include "tessera/job.h"

/* ---- repairing a store ------------------------------------------------------------ */

/* Where a job's sound solutions end: the chunks are walked in order, and
 * the first one that is damaged, leaves a gap, overlaps the one before or
 * runs past the job's stored count ends the run.  *cut is that chunk's
 * first number (INT64_MAX when every chunk is sound), *kept the last
 * solution of the run, and `why` says what ended it. */
static int sound_prefix(sto_db *s, int64_t job, int64_t stored, int *scratch, int64_t *cut,
                        int64_t *kept, char *why, size_t whylen, const char *ctx, tsr_err *err)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(s->db, "SELECT first, nsol, nclass, data, crc FROM chunks "
                                "WHERE job = ?1 ORDER BY first", -1, &st, NULL);
    if (rc != SQLITE_OK)
        return sto_sql_err(s, rc, err, ctx, "read chunks");
    sqlite3_bind_int64(st, 1, job);
    int64_t next = 1;
    int r = 0;
    *cut = INT64_MAX;
    why[0] = '\0';
    while (r == 0 && *cut == INT64_MAX && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t first = sqlite3_column_int64(st, 0), nsol = sqlite3_column_int64(st, 1);
        sto_classes none = {0};
        int caps[4] = {0, 0, 1, 0}; /* start has its first element */
        tsr_err e = {{0}};
        /* a cursor past every solution keeps none: only the checks run */
        int d = sto_chunk_decode(st, job, INT64_MAX - 1, 0, &none, caps, scratch, ctx, &e);
        sto_classes_free(&none);
        if (d != 0 && d != TSR_EIO)
            r = tsr_err_set(err, d, "%s", e.msg);
        else if (d == TSR_EIO)
            snprintf(why, whylen, "the chunk from solution %lld is damaged", (long long)first);
        else if (first > next)
            snprintf(why, whylen, "solutions %lld to %lld are missing", (long long)next,
                     (long long)first - 1);
        else if (first < next)
            snprintf(why, whylen, "the chunk from solution %lld overlaps the one before",
                     (long long)first);
        else if (first + nsol - 1 > stored)
            snprintf(why, whylen, "the chunk from solution %lld runs past the stored count %lld",
                     (long long)first, (long long)stored);
        else
            next = first + nsol;
        if (r == 0 && why[0] != '\0')
            *cut = first;
    }
    if (r == 0 && *cut == INT64_MAX && rc != SQLITE_DONE)
        r = sto_sql_err(s, rc, err, ctx, "read chunks");
    sqlite3_finalize(st);
    *kept = next - 1;
    if (r == 0 && why[0] == '\0' && *kept < stored)
        snprintf(why, whylen, "solutions %lld to %lld are missing", (long long)next,
                 (long long)stored);
    return r;
}

/* Mend one job whose sound run ends at `kept` (chunks from `cut` on go):
 * its chunks, its stored count, its error text and, unfinished, its
 * options.store.  *removed counts the chunks deleted. */
static int mend_job(sto_db *s, int64_t job, int64_t stored, int64_t cut, int64_t kept,
                    const char *why, sto_cap_fn cap, long *removed, const char *ctx, tsr_err *err)
{
    sto_job j = {0};
    int r = sto_job_get(s, job, &j, err);
    if (r != 0)
        return r;
    char *options = NULL, *note = NULL;
    tsr_err e = {{0}};
    bool unfinished = !sto_state_final(j.state);
    if (unfinished && kept < stored) {
        if (cap == NULL)
            r = tsr_err_set(err, TSR_EINVAL, "store: %s: no way to cap job %lld's options",
                            ctx, (long long)job);
        else if ((r = cap(j.options, kept, &options, &e)) != 0)
            r = tsr_err_set(err, r, "store: %s: job %lld: %s", ctx, (long long)job, e.msg);
    }
    if (r == 0 && kept < stored) {
        /* what the user reads in the job's `error`: which solutions went,
         * that the others and the counts are as they were, what to do */
        char kept_text[96];
        if (kept > 0)
            snprintf(kept_text, sizeof kept_text, "solutions 1 to %lld are as they were",
                     (long long)kept);
        else
            snprintf(kept_text, sizeof kept_text, "no stored solution is left");
        char cap_text[160] = "";
        if (unfinished)
            snprintf(cap_text, sizeof cap_text, "; it stores no further solutions (options.store "
                     "is now %lld), so no solution number is reused", (long long)kept);
        size_t len = 0;
        FILE *f = open_memstream(&note, &len);
        if (f == NULL)
            r = tsr_err_set(err, TSR_ENOMEM, "store: %s: out of memory", ctx);
        else {
            fprintf(f, REPAIR_NOTE "%lld to %lld (%s); %s, and "
                    "the job's count of %lld found still stands; submit it again to store the "
                    "rest%s", (long long)kept + 1, (long long)stored, why, kept_text,
                    (long long)j.solutions, cap_text);
            if (j.error != NULL)
                fprintf(f, "; earlier error: %.2000s", j.error);
            fclose(f);
        }
    }
    sqlite3_stmt *st = NULL;
    int rc = SQLITE_OK;
    if (r == 0 && cut != INT64_MAX) {
        rc = sqlite3_prepare_v2(s->db, "DELETE FROM chunks WHERE job = ?1 AND first >= ?2", -1,
                                &st, NULL);
        if (rc == SQLITE_OK) {
            sqlite3_bind_int64(st, 1, job);
            sqlite3_bind_int64(st, 2, cut);
            rc = sqlite3_step(st);
            if (rc == SQLITE_DONE)
                *removed += sqlite3_changes(s->db);
        }
        sqlite3_finalize(st);
        if (rc != SQLITE_DONE)
            r = sto_sql_err(s, rc, err, ctx, "delete chunks");
    }
    if (r == 0) {
        /* NULL keeps the column: a job that lost nothing keeps its text */
        rc = sqlite3_prepare_v2(s->db, "UPDATE jobs SET stored = ?2, error = coalesce(?3, error), "
                                "options = coalesce(?4, options), updated = ?5 WHERE id = ?1",
                                -1, &st, NULL);
        if (rc == SQLITE_OK) {
            sqlite3_bind_int64(st, 1, job);
            sqlite3_bind_int64(st, 2, kept);
            sqlite3_bind_text(st, 3, note, -1, SQLITE_STATIC);
            sqlite3_bind_text(st, 4, options, -1, SQLITE_STATIC);
            sqlite3_bind_int64(st, 5, sto_now());
            rc = sqlite3_step(st);
        }
        sqlite3_finalize(st);
        if (rc != SQLITE_DONE)
            r = sto_sql_err(s, rc, err, ctx, "update the job");
    }
    free(note);
    free(options);
    sto_job_clear(&j);
    return r;
}

/* The repair itself, inside the caller's write transaction: every job of
 * the current encoding, then the chunks no job owns.  One report line per
 * job mended. */
static int mend_jobs(sto_db *s, sto_cap_fn cap, FILE *f, const char *ctx, tsr_err *err)
{
    /* the job list first: the jobs table changes as they are mended */
    struct { int64_t id, stored; } *list = NULL;
    int n = 0, capn = 0, r = 0;
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(s->db, "SELECT id, stored FROM jobs WHERE legacy = 0 ORDER BY id",
                                -1, &st, NULL);
    if (rc != SQLITE_OK)
        return sto_sql_err(s, rc, err, ctx, "read jobs");
    while (r == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        if ((r = sto_grow((void **)&list, &capn, n, sizeof *list, ctx, err)) == 0) {
            list[n].id = sqlite3_column_int64(st, 0);
            list[n++].stored = sqlite3_column_int64(st, 1);
        }
    }
    if (r == 0 && rc != SQLITE_DONE)
        r = sto_sql_err(s, rc, err, ctx, "read jobs");
    sqlite3_finalize(st);
    int *scratch = r == 0 ? malloc(STO_MAX_TASK_IMAGES * sizeof *scratch) : NULL;
    if (r == 0 && scratch == NULL)
        r = tsr_err_set(err, TSR_ENOMEM, "store: %s: out of memory", ctx);
    long jobs = 0, removed = 0;
    for (int i = 0; r == 0 && i < n; i++) {
        int64_t cut = INT64_MAX, kept = 0;
        char why[160];
        int64_t id = list[i].id, stored = list[i].stored;
        r = sound_prefix(s, id, stored, scratch, &cut, &kept, why, sizeof why, ctx, err);
        if (r != 0 || (cut == INT64_MAX && kept == stored))
            continue;
        long before = removed;
        r = mend_job(s, id, stored, cut, kept, why, cap, &removed, ctx, err);
        if (r == 0) {
            fprintf(f, "job %lld: %s: removed %ld chunk%s; it keeps solutions 1 to %lld of the "
                    "%lld it stored\n", (long long)id, why, removed - before,
                    removed - before == 1 ? "" : "s", (long long)kept, (long long)stored);
            jobs++;
        }
    }
    free(scratch);
    free(list);
    if (r == 0)
        r = sto_exec_sql(s, "DELETE FROM chunks WHERE job NOT IN (SELECT id FROM jobs)", ctx,
                     "delete chunks of no job", err);
    if (r == 0 && sqlite3_changes(s->db) > 0)
        fprintf(f, "chunks of jobs that no longer exist: removed %d\n", sqlite3_changes(s->db));
    if (r == 0)
        fprintf(f, "repaired: %ld job%s, %ld chunk%s removed\n", jobs, jobs == 1 ? "" : "s",
                removed, removed == 1 ? "" : "s");
    return r;
}

int sto_repair(const char *path, sto_cap_fn cap, char **report, tsr_err *err)
{
    *report = NULL;
    char ctx[320];
    snprintf(ctx, sizeof ctx, "repair %s", path);
    sto_db *s;
    int version, read_rc;
    tsr_err oe = {{0}};
    int r = sto_open_offline(path, true, &s, &version, NULL, &read_rc, ctx, &oe);
    if (s == NULL) {
        *err = oe;
        return r;
    }
    /* a header SQLite cannot read is damage to the structure: refused
     * below, like any other */
    bool unreadable_header = r != 0 && sto_is_damage(read_rc);
    if (unreadable_header)
        r = 0;
    else if (r != 0)
        *err = oe;
    else if (version == 0)
        r = tsr_err_set(err, TSR_EINVAL, "store: %s: the file holds no store yet: nothing to "
                        "repair", ctx);
    char *text = NULL;
    size_t len = 0;
    FILE *f = r == 0 ? open_memstream(&text, &len) : NULL;
    if (r == 0 && f == NULL)
        r = tsr_err_set(err, TSR_ENOMEM, "store: %s: out of memory", ctx);
    checker c = {.s = s, .f = f, .notes = f, .ctx = ctx, .err = err};
    if (r == 0) {
        fprintf(f, "%s: schema %d\n", path, version);
        if (unreadable_header) {
            sto_finding(&c, "structure: %s", sqlite3_errstr(read_rc));
        } else {
            sto_check_header(&c, path);
            r = sto_check_structure(&c, true);
            /* a schema version its tables belie is a damaged header, not
             * an older store for tesserad to upgrade */
            if (r == 0)
                r = sto_check_schema(&c, version);
        }
    }
    bool refused = r == 0 && c.problems > 0;
    if (r == 0 && !refused && version != STO_SCHEMA_VERSION)
        r = tsr_err_set(err, TSR_EINVAL, "store: %s: schema %d: start tesserad on it once to "
                        "upgrade it to schema %d (the upgrade changes no solution), then repair",
                        ctx, version, STO_SCHEMA_VERSION);
    if (refused)
        fprintf(f, "the file's structure is damaged, beyond what --repair mends (solution "
                   "chunks): nothing was changed.  Salvage its rows into a new file first "
                   "(sqlite3 .recover or .dump, docs/store.md, recovery), then repair that "
                   "file\ndamaged\n");
    /* synchronous=FULL: the repair is durable once it says so */
    if (r == 0 && !refused)
        r = sto_exec_sql(s, "PRAGMA synchronous = FULL", ctx, "set synchronous", err);
    if (r == 0 && !refused && (r = sto_tx_begin(s, true, ctx, err)) == 0)
        r = sto_tx_end(s, mend_jobs(s, cap, f, ctx, err), ctx, err);
    if (f != NULL)
        fclose(f);
    sto_close(s);
    if (r != 0) { /* rolled back: lines saying what was mended would mislead */
        free(text);
        return r;
    }
    if (refused) {
        *report = text;
        return TSR_EIO;
    }
    /* the result, checked afresh as tesserad --check would; the repair is
     * committed by now, so a check that cannot run is said in the report
     * (not sound, as far as we know), not as an error that would read as
     * "nothing changed" */
    char *after = NULL;
    tsr_err ce = {{0}};
    r = sto_check(path, true, 0, &after, &ce);
    if (r != 0 && after == NULL && ce.msg[0] != '\0') {
        size_t alen = 0;
        FILE *a = open_memstream(&after, &alen);
        if (a != NULL) {
            fprintf(a, "the check could not run: %s\n", ce.msg);
            fclose(a);
        }
        r = TSR_EIO;
    }
    if (after != NULL) {
        size_t blen = 0;
        char *both = NULL;
        FILE *b = open_memstream(&both, &blen);
        if (b != NULL) {
            fprintf(b, "%safter the repair:\n%s", text, after);
            fclose(b);
            free(text);
            text = both;
        }
        free(after);
    }
    *report = text;
    return r;
}

