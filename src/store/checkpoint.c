/*
 * checkpoint.c - a checkpoint, the one transaction that makes results
 * exactly once (I1, I2: frontier, found classes in chunks, counts and
 * progress together), and what checkpoints wrote, read back: the frontier,
 * the classes holding a page of solutions, a schema-1 job's text bodies.
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

/* Insert the batch as chunks numbered from *first; *first ends past them. */
static int insert_chunks(sto_db *s, int64_t job, const sto_found *b, int64_t *first,
                         const char *ctx, tsr_err *err)
{
    const unsigned char *data = (const unsigned char *)b->records.data;
    size_t len = b->records.len, pos = 0;
    int64_t classes = 0, sols = 0;
    int r = 0;
    while (r == 0 && pos < len) {
        size_t start = pos;
        int64_t nsol = 0;
        int nclass = 0;
        while (pos < len && nclass < STO_CHUNK_CLASSES) {
            int n, count;
            if (!sto_record_read(data, len, &pos, &n, &count, NULL))
                return tsr_err_set(err, TSR_EINVAL, "store: %s: class %lld of the batch is "
                                   "malformed", ctx, (long long)(classes + nclass));
            nsol += count;
            nclass++;
        }
        sqlite3_stmt *st = NULL;
        if ((r = sto_prep(s, S_CHUNK_INSERT, &st, ctx, err)) != 0)
            break;
        sqlite3_bind_int64(st, 1, job);
        sqlite3_bind_int64(st, 2, *first);
        sqlite3_bind_int64(st, 3, nsol);
        sqlite3_bind_int(st, 4, nclass);
        int rc = sqlite3_bind_blob64(st, 5, data + start, pos - start, SQLITE_STATIC);
        if (rc == SQLITE_OK)
            rc = sqlite3_bind_int64(st, 6, sto_chunk_crc(job, *first, data + start, pos - start));
        r = sto_bound_step(s, st, rc, ctx, "insert chunk", err);
        *first += nsol;
        classes += nclass;
        sols += nsol;
    }
    if (r == 0 && (classes != b->classes || sols != b->stored))
        r = tsr_err_set(err, TSR_EINVAL, "store: %s: the batch holds %lld classes of %lld "
                        "solutions, not %lld of %lld", ctx, (long long)classes, (long long)sols,
                        (long long)b->classes, (long long)b->stored);
    return r;
}

/* ---- checkpoints --------------------------------------------------------------- */

/* The blob of a task: its image ids as little-endian int32, in s->buf. */
static int encode_images(sto_db *s, const sto_task *t, size_t *len, const char *ctx, int i,
                         tsr_err *err)
{
    size_t need = (size_t)t->nimages * 4;
    if (need > 0 && base_grow((void **)&s->buf, &s->cap, need - 1, 1, 4096, 0) != 0)
        return tsr_err_set(err, TSR_ENOMEM, "store: %s: task %d: out of memory", ctx, i);
    for (int k = 0; k < t->nimages; k++) {
        uint32_t v = (uint32_t)t->images[k];
        unsigned char *p = s->buf + (size_t)k * 4;
        p[0] = (unsigned char)v;
        p[1] = (unsigned char)(v >> 8);
        p[2] = (unsigned char)(v >> 16);
        p[3] = (unsigned char)(v >> 24);
    }
    *len = need;
    return 0;
}

static int check_task(const sto_task *t, const char *ctx, int i, tsr_err *err)
{
    if (t->nimages < 0 || (t->nimages > 0 && t->images == NULL))
        return tsr_err_set(err, TSR_EINVAL, "store: %s: task %d: bad image list (%d images)", ctx,
                           i, t->nimages);
    if (t->nimages > STO_MAX_TASK_IMAGES)
        return tsr_err_set(err, TSR_ETOOBIG, "store: %s: task %d has %d images (at most %d)", ctx,
                           i, t->nimages, STO_MAX_TASK_IMAGES);
    if (!isfinite(t->weight) || t->weight < 0 || t->weight > 1)
        return tsr_err_set(err, TSR_EINVAL, "store: %s: task %d: weight %g is not in [0, 1]", ctx,
                           i, t->weight);
    return 0;
}

static int insert_task(sto_db *s, int64_t job, const sto_task *t, int i, const char *ctx,
                       tsr_err *err)
{
    size_t len = 0;
    sqlite3_stmt *st = NULL;
    int r = check_task(t, ctx, i, err);
    if (r == 0)
        r = encode_images(s, t, &len, ctx, i, err);
    if (r == 0)
        r = sto_prep(s, S_FRONTIER_INSERT, &st, ctx, err);
    if (r != 0)
        return r;
    sqlite3_bind_int64(st, 1, job);
    sqlite3_bind_int(st, 2, i);
    /* A NULL pointer would bind SQL NULL: an empty set is a zero-length blob. */
    int rc = len == 0 ? sqlite3_bind_zeroblob(st, 3, 0)
                      : sqlite3_bind_blob64(st, 3, s->buf, len, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_double(st, 4, t->weight);
    return sto_bound_step(s, st, rc, ctx, "insert task", err);
}

static int check_progress(const sto_progress *p, const char *ctx, size_t *slen, tsr_err *err)
{
    *slen = 0;
    if (p == NULL)
        return 0;
    if (!isfinite(p->fraction) || p->fraction < 0 || !isfinite(p->seconds) || p->seconds < 0)
        return tsr_err_set(err, TSR_EINVAL,
                           "store: %s: bad progress (fraction %g, seconds %g): both must be "
                           "finite and not negative",
                           ctx, p->fraction, p->seconds);
    if (p->stats != NULL)
        return sto_check_len(p->stats, STO_MAX_DOC, slen, ctx, "the statistics document", err);
    return 0;
}

#ifdef TSR_DEBUG
/* What the invariant checks read of one job (debug builds, configure
 * --enable-debug), inside the writing transaction. */
typedef struct job_facts {
    int64_t stored, solutions, frontier;
    int64_t held, last; /* solutions the chunks hold; the last one's number */
    int64_t crcs;       /* sum of the check values of the chunks up to `upto` */
    enum sto_state state;
} job_facts;

static int job_facts_read(sto_db *s, int64_t job, int64_t upto, job_facts *f, const char *ctx,
                          tsr_err *err)
{
    static const char sql[] =
        "SELECT j.stored, j.solutions, j.state,"
        " (SELECT COALESCE(SUM(nsol), 0) FROM chunks WHERE job = j.id),"
        " (SELECT COALESCE(MAX(first + nsol - 1), 0) FROM chunks WHERE job = j.id),"
        " (SELECT COUNT(*) FROM frontier WHERE job = j.id),"
        " (SELECT COALESCE(SUM(crc), 0) FROM chunks WHERE job = j.id AND first <= ?2)"
        " FROM jobs j WHERE j.id = ?1";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
        return sto_sql_err(s, sqlite3_errcode(s->db), err, ctx, "invariant check");
    sqlite3_bind_int64(st, 1, job);
    sqlite3_bind_int64(st, 2, upto);
    int r = 0;
    if (sqlite3_step(st) != SQLITE_ROW ||
        sto_state_parse((const char *)sqlite3_column_text(st, 2), &f->state) != 0) {
        r = tsr_err_set(err, TSR_EIO, "store: %s: invariant check: no job %lld", ctx,
                        (long long)job);
    } else {
        f->stored = sqlite3_column_int64(st, 0);
        f->solutions = sqlite3_column_int64(st, 1);
        f->held = sqlite3_column_int64(st, 3);
        f->last = sqlite3_column_int64(st, 4);
        f->frontier = sqlite3_column_int64(st, 5);
        f->crcs = sqlite3_column_int64(st, 6);
    }
    sqlite3_finalize(st);
    return r;
}

/* The invariants after a checkpoint of job `job` that wrote `ntasks` tasks
 * and batch b, read back inside its transaction; `before` was read at its
 * start with every chunk counted in crcs.  A breach is a bug of this file:
 * it fails the commit with the facts.
 *   I1  the chunks number 1..stored without gap or overlap;
 *   I2  the frontier is the ntasks tasks written, and the counts moved by
 *       this batch exactly: one whole checkpoint, nothing of another;
 *   I3  a job in a final state has no frontier;
 *   I4  the chunks that numbered solutions 1..before->stored are still
 *       there, unchanged (their check values cover job, number and data). */
static int checkpoint_sane(sto_db *s, int64_t job, const job_facts *before, int ntasks,
                           const sto_found *b, const char *ctx, tsr_err *err)
{
    job_facts f;
    int r = job_facts_read(s, job, before->stored, &f, ctx, err);
    if (r != 0)
        return r;
    long long id = (long long)job;
    if (f.held != f.stored || f.last != f.stored)
        return tsr_err_set(err, TSR_EIO, "store: %s: I1 broken for job %lld: stored %lld, chunks "
                           "hold %lld up to number %lld", ctx, id, (long long)f.stored,
                           (long long)f.held, (long long)f.last);
    if (f.frontier != ntasks || f.stored != before->stored + b->stored ||
        f.solutions != before->solutions + b->found)
        return tsr_err_set(err, TSR_EIO, "store: %s: I2 broken for job %lld: %lld frontier tasks "
                           "for %d written, stored %lld -> %lld and found %lld -> %lld for a "
                           "batch of %lld of %lld", ctx, id, (long long)f.frontier, ntasks,
                           (long long)before->stored, (long long)f.stored,
                           (long long)before->solutions, (long long)f.solutions,
                           (long long)b->stored, (long long)b->found);
    if (sto_state_final(f.state) && f.frontier > 0)
        return tsr_err_set(err, TSR_EIO, "store: %s: I3 broken for job %lld: %s with %lld "
                           "frontier tasks", ctx, id, tsr_job_states[f.state], (long long)f.frontier);
    if (f.crcs != before->crcs)
        return tsr_err_set(err, TSR_EIO, "store: %s: I4 broken for job %lld: the chunks of "
                           "solutions 1..%lld changed", ctx, id, (long long)before->stored);
    return 0;
}
#endif

/* ---- record tasks ---------------------------------------------------------------- */

/* Record task rows' new figures; each row must exist. */
static int write_tally(sto_db *s, int64_t job, const sto_tally *t, int n, const char *ctx,
                       tsr_err *err)
{
    if (n < 0 || (n > 0 && t == NULL) || n > STO_MAX_TASKS + 1)
        return tsr_err_set(err, TSR_EINVAL, "store: %s: bad record tally (%d rows)", ctx, n);
    sqlite3_stmt *st = NULL;
    int r = 0;
    for (int i = 0; r == 0 && i < n; i++) {
        if ((r = sto_prep(s, S_RECORD_UPDATE, &st, ctx, err)) != 0)
            break;
        sqlite3_bind_int64(st, 1, job);
        sqlite3_bind_int(st, 2, t[i].seq);
        sqlite3_bind_int64(st, 3, (int64_t)t[i].solutions);
        sqlite3_bind_int64(st, 4, (int64_t)t[i].nodes);
        sqlite3_bind_int64(st, 5, (int64_t)t[i].digest);
        r = sto_bound_step(s, st, SQLITE_OK, ctx, "update record task", err);
        if (r == 0 && sqlite3_changes(s->db) != 1)
            r = tsr_err_set(err, TSR_EINVAL, "store: %s: the job has no record task %d", ctx,
                            t[i].seq);
    }
    return r;
}

static int insert_record_task(sto_db *s, int64_t job, const sto_task *t, int seq,
                              const sto_tally *tally, const char *ctx, tsr_err *err)
{
    size_t len = 0;
    sqlite3_stmt *st = NULL;
    int r = check_task(t, ctx, seq, err);
    if (r == 0)
        r = encode_images(s, t, &len, ctx, seq, err);
    if (r == 0)
        r = sto_prep(s, S_RECORD_INSERT, &st, ctx, err);
    if (r != 0)
        return r;
    sqlite3_bind_int64(st, 1, job);
    sqlite3_bind_int(st, 2, seq);
    int rc = len == 0 ? sqlite3_bind_zeroblob(st, 3, 0)
                      : sqlite3_bind_blob64(st, 3, s->buf, len, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_double(st, 4, t->weight);
    sqlite3_bind_int64(st, 5, (int64_t)(tally ? tally->solutions : 0));
    sqlite3_bind_int64(st, 6, (int64_t)(tally ? tally->nodes : 0));
    sqlite3_bind_int64(st, 7, (int64_t)(tally ? tally->digest : 0));
    return sto_bound_step(s, st, rc, ctx, "insert record task", err);
}

int sto_record_begin(sto_db *s, int64_t job, const sto_task *tasks, int ntasks,
                     const sto_tally *above, double above_weight, const sto_progress *prog,
                     tsr_err *err)
{
    char ctx[64];
    snprintf(ctx, sizeof ctx, "split job %lld", (long long)job);
    if (s == NULL || ntasks < 1 || tasks == NULL || above == NULL || prog == NULL ||
        prog->ntally != 0 || !isfinite(above_weight) || above_weight < 0 || above_weight > 1)
        return tsr_err_set(err, TSR_EINVAL, "store: %s: bad split", ctx);
    if (ntasks > STO_MAX_TASKS)
        return tsr_err_set(err, TSR_ETOOBIG, "store: %s: %d tasks (at most %d)", ctx, ntasks,
                           STO_MAX_TASKS);
    size_t slen = 0;
    int r = check_progress(prog, ctx, &slen, err);
    if (r != 0 || (r = sto_tx_begin(s, true, ctx, err)) != 0)
        return r;
    enum sto_state cur;
    int version;
    r = sto_job_state(s, job, &cur, &version, ctx, err);
    if (r == 0 && (sto_state_final(cur) || version != s->engine_version))
        r = tsr_err_set(err, TSR_EINVAL, "store: %s: the job is %s, of engine version %d", ctx,
                        tsr_job_states[cur], version);
    sqlite3_stmt *st = NULL;
    if (r == 0 && (r = sto_prep(s, S_RECORD_ANY, &st, ctx, err)) == 0) {
        sqlite3_bind_int64(st, 1, job);
        if (sqlite3_step(st) != SQLITE_ROW)
            r = sto_sql_err(s, sqlite3_errcode(s->db), err, ctx, "count record tasks");
        else if (sqlite3_column_int64(st, 0) > 0)
            r = tsr_err_set(err, TSR_EINVAL, "store: %s: the job is split already", ctx);
        sto_release(st);
    }
    sto_task top = {0, NULL, above_weight};
    if (r == 0)
        r = insert_record_task(s, job, &top, 0, above, ctx, err);
    for (int i = 0; r == 0 && i < ntasks; i++)
        r = insert_record_task(s, job, &tasks[i], i + 1, NULL, ctx, err);
    if (r == 0 && (r = sto_prep(s, S_FRONTIER_CLEAR, &st, ctx, err)) == 0) {
        sqlite3_bind_int64(st, 1, job);
        r = sto_step_done(s, st, ctx, "drop frontier", err);
    }
    for (int i = 0; r == 0 && i < ntasks; i++)
        r = insert_task(s, job, &tasks[i], i, ctx, err);
    if (r == 0 && (r = sto_prep(s, S_JOB_PROGRESS, &st, ctx, err)) == 0) {
        sqlite3_bind_int64(st, 1, job);
        sqlite3_bind_int64(st, 2, 0);
        sqlite3_bind_int64(st, 9, 0);
        sqlite3_bind_int64(st, 3, (int64_t)prog->nodes);
        sqlite3_bind_double(st, 4, prog->fraction);
        sqlite3_bind_double(st, 5, prog->seconds);
        int rc = sto_bind_text(st, 6, prog->stats, slen);
        sqlite3_bind_int64(st, 8, sto_now());
        r = sto_bound_step(s, st, rc, ctx, "update job", err);
    }
    return sto_tx_end(s, r, ctx, err);
}

void sto_record_free(sto_record_task *rows, int n)
{
    if (rows == NULL)
        return;
    for (int i = 0; i < n; i++)
        free(rows[i].task.images);
    free(rows);
}

int sto_checkpoint(sto_db *s, int64_t job, const sto_task *tasks, int ntasks,
                   const sto_found *batch, const sto_progress *prog,
                   const enum sto_state *new_state, tsr_err *err)
{
    char ctx[64];
    snprintf(ctx, sizeof ctx, "checkpoint job %lld", (long long)job);
    if (s == NULL)
        return tsr_err_set(err, TSR_EINVAL, "store: %s: no database", ctx);
    /* Cheap checks first; each task and solution is checked as it is
     * written, and a failure there rolls the whole transaction back. */
    static const sto_found none = {0};
    if (batch == NULL)
        batch = &none;
    if (ntasks < 0 || (ntasks > 0 && tasks == NULL) || batch->classes < 0 || batch->stored < 0 ||
        batch->found < batch->stored || (batch->records.len > 0 && batch->records.data == NULL))
        return tsr_err_set(err, TSR_EINVAL, "store: %s: bad task array or solution batch", ctx);
    if (ntasks > STO_MAX_TASKS)
        return tsr_err_set(err, TSR_ETOOBIG, "store: %s: %d tasks (at most %d)", ctx, ntasks,
                           STO_MAX_TASKS);
    if (batch->records.len > STO_MAX_FOUND)
        return tsr_err_set(err, TSR_ETOOBIG, "store: %s: a batch of %zu bytes (at most %d)", ctx,
                           batch->records.len, STO_MAX_FOUND);
    if (new_state != NULL && !sto_state_valid(*new_state))
        return tsr_err_set(err, TSR_EINVAL, "store: %s: bad state %d", ctx, (int)*new_state);
    if (new_state != NULL && sto_state_final(*new_state) && ntasks > 0)
        return tsr_err_set(err, TSR_EINVAL, "store: %s: a %s job cannot keep a frontier (%d tasks)",
                           ctx, tsr_job_states[*new_state], ntasks);
    size_t slen = 0;
    int r = check_progress(prog, ctx, &slen, err);
    if (r != 0 || (r = sto_tx_begin(s, true, ctx, err)) != 0)
        return r;

    enum sto_state cur;
    int version;
    r = sto_job_state(s, job, &cur, &version, ctx, err);
    if (r == 0 && sto_state_final(cur))
        r = tsr_err_set(err, TSR_EINVAL, "store: %s: the job is %s; it takes no more checkpoints",
                        ctx, tsr_job_states[cur]);
    if (r == 0 && version != s->engine_version)
        r = tsr_err_set(err, TSR_EINVAL,
                        "store: %s: the job was started by engine version %d, this is version %d",
                        ctx, version, s->engine_version);
#ifdef TSR_DEBUG
    job_facts before = {0};
    if (r == 0)
        r = job_facts_read(s, job, INT64_MAX, &before, ctx, err);
#endif

    sqlite3_stmt *st = NULL;
    if (r == 0 && (r = sto_prep(s, S_FRONTIER_CLEAR, &st, ctx, err)) == 0) {
        sqlite3_bind_int64(st, 1, job);
        r = sto_step_done(s, st, ctx, "drop frontier", err);
    }
    for (int i = 0; r == 0 && i < ntasks; i++)
        r = insert_task(s, job, &tasks[i], i, ctx, err);
    /* I1: chunks numbered from the stored count, which moves with them */
    int64_t first = 1;
    if (r == 0 && batch->records.len > 0 && (r = sto_prep(s, S_JOB_STORED, &st, ctx, err)) == 0) {
        sqlite3_bind_int64(st, 1, job);
        if (sqlite3_step(st) == SQLITE_ROW)
            first = sqlite3_column_int64(st, 0) + 1;
        else
            r = sto_sql_err(s, sqlite3_errcode(s->db), err, ctx, "read stored count");
        sto_release(st);
    }
    if (r == 0 && batch->records.len > 0)
        r = insert_chunks(s, job, batch, &first, ctx, err);
    if (r == 0 && batch->records.len == 0 && (batch->classes != 0 || batch->stored != 0))
        r = tsr_err_set(err, TSR_EINVAL, "store: %s: an empty batch of %lld classes", ctx,
                        (long long)batch->classes);
    if (r == 0 && (r = sto_prep(s, S_JOB_PROGRESS, &st, ctx, err)) == 0) {
        sqlite3_bind_int64(st, 1, job);
        sqlite3_bind_int64(st, 2, batch->found);
        sqlite3_bind_int64(st, 9, batch->stored);
        int rc = SQLITE_OK;
        if (prog != NULL) {
            sqlite3_bind_int64(st, 3, (int64_t)prog->nodes); /* the uint64 bit pattern */
            sqlite3_bind_double(st, 4, prog->fraction);
            sqlite3_bind_double(st, 5, prog->seconds);
            rc = sto_bind_text(st, 6, prog->stats, slen);
        }
        if (new_state != NULL)
            sqlite3_bind_text(st, 7, tsr_job_states[*new_state], -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 8, sto_now());
        r = sto_bound_step(s, st, rc, ctx, "update job", err);
    }
    if (r == 0 && prog != NULL)
        r = write_tally(s, job, prog->tally, prog->ntally, ctx, err);
#ifdef TSR_DEBUG
    if (r == 0)
        r = checkpoint_sane(s, job, &before, ntasks, batch, ctx, err);
#endif
    return sto_tx_end(s, r, ctx, err);
}

/* ---- reading the frontier and the solutions ------------------------------------ */
void sto_tasks_free(sto_task *tasks, int n)
{
    if (tasks == NULL)
        return;
    for (int i = 0; i < n; i++)
        free(tasks[i].images);
    free(tasks);
}

static int decode_task(sqlite3_stmt *st, sto_task *t, const char *ctx, int i, tsr_err *err)
{
    const unsigned char *b = sqlite3_column_blob(st, 0);
    size_t len = (size_t)sqlite3_column_bytes(st, 0);
    t->images = NULL;
    t->weight = sqlite3_column_double(st, 1);
    if (len % 4 != 0 || len / 4 > STO_MAX_TASK_IMAGES)
        return tsr_err_set(err, TSR_EIO, "store: %s: task %d is corrupt (%zu bytes of images)",
                           ctx, i, len);
    t->nimages = (int)(len / 4);
    if (len == 0)
        return 0;
    if (b == NULL)
        return tsr_err_set(err, TSR_ENOMEM, "store: %s: out of memory", ctx);
    t->images = malloc(len / 4 * sizeof *t->images);
    if (t->images == NULL)
        return tsr_err_set(err, TSR_ENOMEM, "store: %s: out of memory", ctx);
    for (int k = 0; k < t->nimages; k++) {
        const unsigned char *p = b + (size_t)k * 4;
        uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                     (uint32_t)p[3] << 24;
        t->images[k] = (int)(int32_t)v;
    }
    return 0;
}

int sto_frontier_load(sto_db *s, int64_t job, sto_task **tasks, int *n, tsr_err *err)
{
    char ctx[64];
    snprintf(ctx, sizeof ctx, "load frontier of job %lld", (long long)job);
    if (s == NULL || tasks == NULL || n == NULL)
        return tsr_err_set(err, TSR_EINVAL, "store: %s: missing database or result", ctx);
    *tasks = NULL;
    *n = 0;
    sqlite3_stmt *st = NULL;
    int r = sto_read_job_rows(s, job, S_FRONTIER_LOAD, &st, ctx, err);
    if (r != 0)
        return r;
    sto_task *v = NULL;
    int count = 0, cap = 0, rc = SQLITE_DONE;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (count >= STO_MAX_TASKS) {
            r = tsr_err_set(err, TSR_EIO, "store: %s: more than %d tasks stored", ctx,
                            STO_MAX_TASKS);
            break;
        }
        if ((r = sto_grow((void **)&v, &cap, count, sizeof *v, ctx, err)) != 0)
            break;
        r = decode_task(st, &v[count], ctx, count, err);
        if (r != 0)
            break;
        count++;
    }
    r = sto_read_end(s, st, rc, r, ctx, err);
    if (r != 0) {
        sto_tasks_free(v, count);
        return r;
    }
    *tasks = v;
    *n = count;
    return 0;
}

int sto_record_load(sto_db *s, int64_t job, sto_record_task **rows, int *n, tsr_err *err)
{
    char ctx[64];
    snprintf(ctx, sizeof ctx, "load record tasks of job %lld", (long long)job);
    if (s == NULL || rows == NULL || n == NULL)
        return tsr_err_set(err, TSR_EINVAL, "store: %s: missing database or result", ctx);
    *rows = NULL;
    *n = 0;
    sqlite3_stmt *st = NULL;
    int r = sto_read_job_rows(s, job, S_RECORD_LOAD, &st, ctx, err);
    if (r != 0)
        return r;
    sto_record_task *v = NULL;
    int count = 0, cap = 0, rc = SQLITE_DONE;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (count > STO_MAX_TASKS) {
            r = tsr_err_set(err, TSR_EIO, "store: %s: more than %d rows", ctx, STO_MAX_TASKS);
            break;
        }
        if ((r = sto_grow((void **)&v, &cap, count, sizeof *v, ctx, err)) != 0)
            break;
        if ((r = decode_task(st, &v[count].task, ctx, count, err)) != 0)
            break;
        v[count].tally = (sto_tally){sqlite3_column_int(st, 2),
                                     (uint64_t)sqlite3_column_int64(st, 3),
                                     (uint64_t)sqlite3_column_int64(st, 4),
                                     (uint64_t)sqlite3_column_int64(st, 5)};
        count++;
        if (v[count - 1].tally.seq != count - 1) {
            r = tsr_err_set(err, TSR_EIO, "store: %s: row %d is numbered %d", ctx, count - 1,
                            v[count - 1].tally.seq);
            break;
        }
    }
    r = sto_read_end(s, st, rc, r, ctx, err);
    if (r != 0) {
        sto_record_free(v, count);
        return r;
    }
    *rows = v;
    *n = count;
    return 0;
}

void sto_solutions_free(char **bodies, int64_t *seqs, int n)
{
    if (bodies != NULL)
        for (int i = 0; i < n; i++)
            free(bodies[i]);
    free(bodies);
    free(seqs);
}

/* A page's cursor and size, as every paged read takes them. */
int sto_check_page(int64_t after, int limit, const char *ctx, tsr_err *err)
{
    if (limit < 1 || limit > STO_MAX_PAGE)
        return tsr_err_set(err, TSR_EINVAL, "store: %s: page size %d is not in 1..%d", ctx, limit,
                           STO_MAX_PAGE);
    if (after < 0)
        return tsr_err_set(err, TSR_EINVAL, "store: %s: bad cursor %lld", ctx, (long long)after);
    return 0;
}

int sto_solutions_page(sto_db *s, int64_t job, int64_t after, int limit, char ***bodies,
                       int64_t **seqs, int *n, tsr_err *err)
{
    char ctx[64];
    snprintf(ctx, sizeof ctx, "page solutions of job %lld", (long long)job);
    if (s == NULL || bodies == NULL || seqs == NULL || n == NULL)
        return tsr_err_set(err, TSR_EINVAL, "store: %s: missing database or result", ctx);
    *bodies = NULL;
    *seqs = NULL;
    *n = 0;
    int pr = sto_check_page(after, limit, ctx, err);
    if (pr != 0)
        return pr;
    sqlite3_stmt *st = NULL;
    int r = sto_read_job_rows(s, job, S_SOLUTIONS_PAGE, &st, ctx, err);
    if (r != 0)
        return r;
    sqlite3_bind_int64(st, 2, after);
    sqlite3_bind_int(st, 3, limit);
    char **b = NULL;
    int64_t *q = NULL;
    int count = 0, capb = 0, capq = 0, rc = SQLITE_DONE;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if ((r = sto_grow((void **)&b, &capb, count, sizeof *b, ctx, err)) != 0 ||
            (r = sto_grow((void **)&q, &capq, count, sizeof *q, ctx, err)) != 0)
            break;
        q[count] = sqlite3_column_int64(st, 0);
        if (sto_dup_column(st, 1, &b[count]) != 0 || b[count] == NULL) {
            r = tsr_err_set(err, TSR_ENOMEM, "store: %s: out of memory", ctx);
            break;
        }
        count++;
    }
    r = sto_read_end(s, st, rc, r, ctx, err);
    if (r != 0) {
        sto_solutions_free(b, q, count);
        return r;
    }
    *bodies = b;
    *seqs = q;
    *n = count;
    return 0;
}

void sto_classes_free(sto_classes *c)
{
    if (c != NULL) {
        free(c->first);
        free(c->count);
        free(c->start);
        free(c->ids);
        *c = (sto_classes){0};
    }
}

/* Make room for one more class of up to `n` ids in c: caps[] are the
 * capacities of first, count, start (one longer: it ends the last class)
 * and ids. */
int sto_classes_grow(sto_classes *c, int caps[4], int n, const char *ctx, tsr_err *err)
{
    int used = c->start[c->n], r;
    if (used > INT_MAX / 4)
        return tsr_err_set(err, TSR_ETOOBIG, "store: %s: too many image ids", ctx);
    if ((r = sto_grow((void **)&c->first, &caps[0], c->n, sizeof *c->first, ctx, err)) != 0 ||
        (r = sto_grow((void **)&c->count, &caps[1], c->n, sizeof *c->count, ctx, err)) != 0 ||
        (r = sto_grow((void **)&c->start, &caps[2], c->n + 1, sizeof *c->start, ctx, err)) != 0)
        return r;
    return n > 0 ? sto_grow((void **)&c->ids, &caps[3], used + n - 1, sizeof *c->ids, ctx, err) : 0;
}

/* Decode one chunk row, checking its check value and its totals, keeping
 * the classes that hold solutions in (after, last]. */
int sto_chunk_decode(sqlite3_stmt *st, int64_t job, int64_t after, int64_t last,
                        sto_classes *c, int caps[4], int *scratch, const char *ctx, tsr_err *err)
{
    int64_t first = sqlite3_column_int64(st, 0), nsol = sqlite3_column_int64(st, 1);
    int nclass = sqlite3_column_int(st, 2);
    const unsigned char *data = sqlite3_column_blob(st, 3);
    size_t len = (size_t)sqlite3_column_bytes(st, 3);
    uint32_t crc = (uint32_t)sqlite3_column_int64(st, 4);
    if (len > 0 && data == NULL)
        return tsr_err_set(err, TSR_ENOMEM, "store: %s: out of memory", ctx);
    if (sto_chunk_crc(job, first, data, len) != crc)
        return tsr_err_set(err, TSR_EIO, "store: %s: the chunk of job %lld from solution %lld "
                           "is damaged (check value mismatch)", ctx, (long long)job,
                           (long long)first);
    size_t pos = 0;
    int64_t at = first, seen = 0;
    int r = 0;
    for (int k = 0; k < nclass && r == 0; k++) {
        int n, count;
        if (!sto_record_read(data, len, &pos, &n, &count, scratch))
            break;
        seen++;
        if (at + count > after + 1 && at <= last) {
            if ((r = sto_classes_grow(c, caps, n, ctx, err)) != 0)
                break;
            c->first[c->n] = at;
            c->count[c->n] = count;
            if (n > 0) /* an empty solution (a loose puzzle's) has no ids, and ids may be NULL */
                memcpy(c->ids + c->start[c->n], scratch, (size_t)n * sizeof *scratch);
            c->start[c->n + 1] = c->start[c->n] + n;
            c->n++;
        }
        at += count;
    }
    if (r == 0 && (seen != nclass || pos != len || at - first != nsol))
        r = tsr_err_set(err, TSR_EIO, "store: %s: the chunk of job %lld from solution %lld is "
                        "malformed", ctx, (long long)job, (long long)first);
    return r;
}

int sto_classes_read(sto_db *s, int64_t job, int64_t after, int limit, sto_classes *out,
                     tsr_err *err)
{
    char ctx[64];
    snprintf(ctx, sizeof ctx, "read solutions of job %lld", (long long)job);
    if (s == NULL || out == NULL)
        return tsr_err_set(err, TSR_EINVAL, "store: %s: missing database or result", ctx);
    *out = (sto_classes){0};
    int pr = sto_check_page(after, limit, ctx, err);
    if (pr != 0)
        return pr;
    int *scratch = malloc(STO_MAX_TASK_IMAGES * sizeof *scratch);
    out->start = calloc(1, sizeof *out->start);
    if (scratch == NULL || out->start == NULL) {
        free(scratch);
        sto_classes_free(out);
        return tsr_err_set(err, TSR_ENOMEM, "store: %s: out of memory", ctx);
    }
    sqlite3_stmt *st = NULL;
    int r = sto_read_job_rows(s, job, S_CHUNKS_READ, &st, ctx, err);
    int caps[4] = {0, 0, 1, 0}; /* start has its first element */
    if (r == 0) {
        sqlite3_bind_int64(st, 2, after + 1);
        sqlite3_bind_int64(st, 3, after + limit);
        int rc;
        while (r == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW)
            r = sto_chunk_decode(st, job, after, after + limit, out, caps, scratch, ctx, err);
        r = sto_read_end(s, st, rc, r, ctx, err);
    }
    free(scratch);
    if (r != 0)
        sto_classes_free(out);
    return r;
}

