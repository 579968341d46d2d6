/*
 * records.c - jobs and batches of jobs in the store: created queued,
 * read one by one or a page at a time, their state and options changed
 * under the life cycle's rules (I3), deleted with everything they own.
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

/* ---- jobs -------------------------------------------------------------------- */
void sto_job_clear(sto_job *j)
{
    if (j == NULL)
        return;
    free(j->puzzle);
    free(j->options);
    free(j->error);
    free(j->stats);
    memset(j, 0, sizeof *j);
}

void sto_jobs_free(sto_job *jobs, int n)
{
    if (jobs == NULL)
        return;
    for (int i = 0; i < n; i++)
        sto_job_clear(&jobs[i]);
    free(jobs);
}

#ifdef TSR_DEBUG
/* I4 for a job just inserted (debug builds, configure --enable-debug): its
 * id is within the AUTOINCREMENT mark of the jobs table, below which ids
 * are never handed out again. */
static int job_id_sane(sto_db *s, int64_t id, const char *ctx, tsr_err *err)
{
    static const char sql[] = "SELECT seq FROM sqlite_sequence WHERE name = 'jobs'";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
        return sto_sql_err(s, sqlite3_errcode(s->db), err, ctx, "invariant check");
    int r = 0;
    if (sqlite3_step(st) != SQLITE_ROW || sqlite3_column_int64(st, 0) < id)
        r = tsr_err_set(err, TSR_EIO, "store: %s: I4 broken: job %lld is past the jobs table's "
                        "AUTOINCREMENT mark", ctx, (long long)id);
    sqlite3_finalize(st);
    return r;
}
#endif

/* Insert one queued job (in batch `batch` unless it is 0); not a
 * transaction of its own beyond the statement's. */
static int insert_job(sto_db *s, const char *puzzle, const char *options, int priority,
                      int64_t batch, int64_t now, int64_t *id, const char *ctx, tsr_err *err)
{
    if (options == NULL)
        options = "{}";
    size_t plen = 0, olen = 0;
    int r = sto_check_len(puzzle, STO_MAX_DOC, &plen, ctx, "the puzzle document", err);
    if (r == 0)
        r = sto_check_len(options, STO_MAX_DOC, &olen, ctx, "the options document", err);
    sqlite3_stmt *st = NULL;
    if (r == 0)
        r = sto_prep(s, batch ? S_JOB_INSERT_IN_BATCH : S_JOB_INSERT, &st, ctx, err);
    if (r != 0)
        return r;
    int rc = sqlite3_bind_int(st, 1, priority);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int(st, 2, s->engine_version);
    if (rc == SQLITE_OK)
        rc = sto_bind_text(st, 3, puzzle, plen);
    if (rc == SQLITE_OK)
        rc = sto_bind_text(st, 4, options, olen);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(st, 5, now);
    if (rc == SQLITE_OK && batch)
        rc = sqlite3_bind_int64(st, 6, batch);
    r = sto_bound_step(s, st, rc, ctx, "insert job", err);
    if (r == 0)
        *id = sqlite3_last_insert_rowid(s->db);
#ifdef TSR_DEBUG
    if (r == 0)
        r = job_id_sane(s, *id, ctx, err);
#endif
    return r;
}

int sto_job_create(sto_db *s, const char *puzzle, const char *options, int priority, int64_t *id,
                   int64_t *created, tsr_err *err)
{
    const char *ctx = "create job";
    if (s == NULL || puzzle == NULL || id == NULL)
        return tsr_err_set(err, TSR_EINVAL, "store: %s: missing database, puzzle or id pointer",
                           ctx);
    /* One statement: its own transaction, which takes the write lock
     * directly (waiting under the busy timeout). */
    int64_t now = sto_now();
    int r = insert_job(s, puzzle, options, priority, 0, now, id, ctx, err);
    if (r == 0 && created != NULL)
        *created = now;
    return r;
}

/* One row by id: `what` names it ("job", "batch") in messages, `read`
 * fills *out (zeroed first) from the row. */
static int get_by_id(sto_db *s, enum stmt_id which, const char *what, int64_t id, void *out,
                     size_t size, int (*read)(sqlite3_stmt *, void *, const char *, tsr_err *),
                     tsr_err *err)
{
    char ctx[64];
    snprintf(ctx, sizeof ctx, "get %s %lld", what, (long long)id);
    if (out == NULL || s == NULL)
        return tsr_err_set(err, TSR_EINVAL, "store: %s: missing database or result", ctx);
    memset(out, 0, size);
    sqlite3_stmt *st = NULL;
    int r = sto_prep(s, which, &st, ctx, err);
    if (r != 0)
        return r;
    sqlite3_bind_int64(st, 1, id);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        r = read(st, out, ctx, err);
    else if (rc == SQLITE_DONE)
        r = tsr_err_set(err, TSR_EINVAL, "store: no %s %lld", what, (long long)id);
    else
        r = sto_sql_err(s, rc, err, ctx, "select");
    sto_release(st);
    return r;
}

static int read_job_any(sqlite3_stmt *st, void *out, const char *ctx, tsr_err *err)
{
    return sto_read_job_row(st, out, ctx, err);
}

int sto_job_get(sto_db *s, int64_t id, sto_job *out, tsr_err *err)
{
    return get_by_id(s, S_JOB_GET, "job", id, out, sizeof *out, read_job_any, err);
}

int sto_job_list(sto_db *s, const enum sto_state *filter, int64_t after_id, int limit,
                 sto_job **out, int *n, tsr_err *err)
{
    const char *ctx = "list jobs";
    if (s == NULL || out == NULL || n == NULL)
        return tsr_err_set(err, TSR_EINVAL, "store: %s: missing database or result", ctx);
    *out = NULL;
    *n = 0;
    if (limit < 1 || limit > STO_MAX_PAGE)
        return tsr_err_set(err, TSR_EINVAL, "store: %s: page size %d is not in 1..%d", ctx, limit,
                           STO_MAX_PAGE);
    if (filter != NULL && !sto_state_valid(*filter))
        return tsr_err_set(err, TSR_EINVAL, "store: %s: bad state filter %d", ctx, (int)*filter);
    sqlite3_stmt *st = NULL;
    int r = sto_prep(s, filter != NULL ? S_JOB_LIST_STATE : S_JOB_LIST, &st, ctx, err);
    if (r != 0)
        return r;
    sqlite3_bind_int64(st, 1, after_id);
    sqlite3_bind_int(st, 2, limit);
    if (filter != NULL)
        sqlite3_bind_text(st, 3, tsr_job_states[*filter], -1, SQLITE_STATIC);

    sto_job *jobs = NULL;
    int count = 0, cap = 0, rc = SQLITE_DONE;
    while (r == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        if ((r = sto_grow((void **)&jobs, &cap, count, sizeof *jobs, ctx, err)) != 0)
            break;
        r = sto_read_job_row(st, &jobs[count], ctx, err);
        if (r == 0)
            count++;
    }
    if (r == 0 && rc != SQLITE_DONE)
        r = sto_sql_err(s, rc, err, ctx, "select");
    sto_release(st);
    if (r != 0) {
        sto_jobs_free(jobs, count);
        return r;
    }
    *out = jobs;
    *n = count;
    return 0;
}

int sto_job_set_state(sto_db *s, int64_t id, enum sto_state state, const char *error, tsr_err *err)
{
    char ctx[64];
    snprintf(ctx, sizeof ctx, "set state of job %lld", (long long)id);
    if (s == NULL)
        return tsr_err_set(err, TSR_EINVAL, "store: %s: no database", ctx);
    if (!sto_state_valid(state))
        return tsr_err_set(err, TSR_EINVAL, "store: %s: bad state %d", ctx, (int)state);
    size_t elen = 0;
    int r = error != NULL ? sto_check_len(error, STO_MAX_DOC, &elen, ctx, "the error text", err) : 0;
    if (r != 0 || (r = sto_tx_begin(s, true, ctx, err)) != 0)
        return r;

    enum sto_state cur;
    r = sto_job_state(s, id, &cur, NULL, ctx, err);
    if (r == 0 && sto_state_final(cur)) {
        /* I3: final states are final; repeating one is a harmless no-op. */
        if (cur != state)
            r = tsr_err_set(err, TSR_EINVAL, "store: %s: the job is %s, which is final", ctx,
                            tsr_job_states[cur]);
        return sto_tx_end(s, r, ctx, err);
    }
    sqlite3_stmt *st = NULL;
    if (r == 0)
        r = sto_prep(s, S_JOB_SET_STATE, &st, ctx, err);
    if (r == 0) {
        sqlite3_bind_int64(st, 1, id);
        sqlite3_bind_text(st, 2, tsr_job_states[state], -1, SQLITE_STATIC);
        int rc = sto_bind_text(st, 3, error, elen);
        sqlite3_bind_int64(st, 4, sto_now());
        r = sto_bound_step(s, st, rc, ctx, "update job", err);
    }
    if (r == 0 && sto_state_final(state) && (r = sto_prep(s, S_FRONTIER_CLEAR, &st, ctx, err)) == 0) {
        sqlite3_bind_int64(st, 1, id);
        r = sto_step_done(s, st, ctx, "drop frontier", err);
    }
    return sto_tx_end(s, r, ctx, err);
}

int sto_job_set_options(sto_db *s, int64_t id, const char *options, tsr_err *err)
{
    char ctx[64];
    snprintf(ctx, sizeof ctx, "set options of job %lld", (long long)id);
    if (s == NULL || options == NULL)
        return tsr_err_set(err, TSR_EINVAL, "store: %s: no database or options", ctx);
    size_t olen = 0;
    int r = sto_check_len(options, STO_MAX_DOC, &olen, ctx, "the options document", err);
    if (r != 0 || (r = sto_tx_begin(s, true, ctx, err)) != 0)
        return r;
    enum sto_state cur;
    r = sto_job_state(s, id, &cur, NULL, ctx, err);
    if (r == 0 && sto_state_final(cur))
        r = tsr_err_set(err, TSR_EINVAL, "store: %s: the job is %s, which is final", ctx,
                        tsr_job_states[cur]);
    sqlite3_stmt *st = NULL;
    if (r == 0 && (r = sto_prep(s, S_JOB_SET_OPTIONS, &st, ctx, err)) == 0) {
        sqlite3_bind_int64(st, 1, id);
        int rc = sto_bind_text(st, 2, options, olen);
        sqlite3_bind_int64(st, 3, sto_now());
        r = sto_bound_step(s, st, rc, ctx, "update job", err);
    }
    return sto_tx_end(s, r, ctx, err);
}

int sto_job_delete(sto_db *s, int64_t id, tsr_err *err)
{
    char ctx[64];
    snprintf(ctx, sizeof ctx, "delete job %lld", (long long)id);
    if (s == NULL)
        return tsr_err_set(err, TSR_EINVAL, "store: %s: no database", ctx);
    int r = sto_tx_begin(s, true, ctx, err);
    if (r != 0)
        return r;
    enum sto_state cur;
    r = sto_job_state(s, id, &cur, NULL, ctx, err);
    if (r == 0 && !sto_state_final(cur))
        r = tsr_err_set(err, TSR_EINVAL,
                        "store: %s: the job is %s; only completed, cancelled or failed jobs can "
                        "be deleted",
                        ctx, tsr_job_states[cur]);
    /* Explicit deletes (the foreign keys' cascade is the backstop), children
     * first. */
    static const enum stmt_id steps[] = {S_SOLUTIONS_CLEAR, S_CHUNKS_CLEAR, S_FRONTIER_CLEAR,
                                         S_JOB_DELETE};
    for (size_t i = 0; r == 0 && i < sizeof steps / sizeof steps[0]; i++) {
        sqlite3_stmt *st = NULL;
        if ((r = sto_prep(s, steps[i], &st, ctx, err)) == 0) {
            sqlite3_bind_int64(st, 1, id);
            r = sto_step_done(s, st, ctx, "delete", err);
        }
    }
    return sto_tx_end(s, r, ctx, err);
}

int sto_jobs_unfinished(sto_db *s, int64_t **ids, int *n, tsr_err *err)
{
    const char *ctx = "list unfinished jobs";
    if (s == NULL || ids == NULL || n == NULL)
        return tsr_err_set(err, TSR_EINVAL, "store: %s: missing database or result", ctx);
    *ids = NULL;
    *n = 0;
    sqlite3_stmt *st = NULL;
    int r = sto_prep(s, S_JOBS_UNFINISHED, &st, ctx, err);
    if (r != 0)
        return r;
    int64_t *v = NULL;
    int count = 0, cap = 0, rc = SQLITE_DONE;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if ((r = sto_grow((void **)&v, &cap, count, sizeof *v, ctx, err)) != 0)
            break;
        v[count++] = sqlite3_column_int64(st, 0);
    }
    if (r == 0 && rc != SQLITE_DONE)
        r = sto_sql_err(s, rc, err, ctx, "select");
    sto_release(st);
    if (r != 0) {
        free(v);
        return r;
    }
    *ids = v;
    *n = count;
    return 0;
}

/* ---- batches of jobs ----------------------------------------------------------------
 * A batch (the API's /api/v1/batches; not an sto_found, which is a
 * checkpoint's solutions) is a row of its own and the jobs whose batch
 * column names it, created together in one transaction. */

void sto_batch_clear(sto_batch *g)
{
    if (g == NULL)
        return;
    free(g->name);
    free(g->spec);
    memset(g, 0, sizeof *g);
}

void sto_batches_free(sto_batch *g, int n)
{
    if (g == NULL)
        return;
    for (int i = 0; i < n; i++)
        sto_batch_clear(&g[i]);
    free(g);
}

int sto_batch_create(sto_db *s, const char *name, const char *spec, int n,
                     const char *const *puzzles, const char *const *options,
                     const int *priorities, int64_t *group, int64_t *ids, int64_t *created,
                     tsr_err *err)
{
    const char *ctx = "create batch";
    if (s == NULL || spec == NULL || puzzles == NULL || group == NULL || ids == NULL)
        return tsr_err_set(err, TSR_EINVAL, "store: %s: missing database, spec or result", ctx);
    if (n < 1 || n > STO_MAX_BATCH_JOBS)
        return tsr_err_set(err, TSR_ETOOBIG, "store: %s: %d jobs is not in 1..%d", ctx, n,
                           STO_MAX_BATCH_JOBS);
    size_t slen = 0, nlen = 0;
    int r = sto_check_len(spec, STO_MAX_DOC, &slen, ctx, "the batch's spec", err);
    if (r == 0 && name != NULL)
        r = sto_check_len(name, STO_MAX_DOC, &nlen, ctx, "the batch's name", err);
    if (r == 0)
        r = sto_tx_begin(s, true, ctx, err);
    if (r != 0)
        return r;
    sqlite3_stmt *st = NULL;
    int64_t now = sto_now();
    r = sto_prep(s, S_BATCH_INSERT, &st, ctx, err);
    if (r == 0) {
        int rc = name ? sto_bind_text(st, 1, name, nlen) : sqlite3_bind_null(st, 1);
        if (rc == SQLITE_OK)
            rc = sto_bind_text(st, 2, spec, slen);
        if (rc == SQLITE_OK)
            rc = sqlite3_bind_int64(st, 3, now);
        r = sto_bound_step(s, st, rc, ctx, "insert batch", err);
    }
    int64_t g = r == 0 ? sqlite3_last_insert_rowid(s->db) : 0;
    for (int i = 0; r == 0 && i < n; i++)
        r = insert_job(s, puzzles[i], options ? options[i] : NULL, priorities ? priorities[i] : 0,
                       g, now, &ids[i], ctx, err);
    r = sto_tx_end(s, r, ctx, err);
    if (r == 0)
        *group = g;
    if (r == 0 && created != NULL)
        *created = now;
    return r;
}

static int read_group_row(sqlite3_stmt *st, sto_batch *g, const char *ctx, tsr_err *err)
{
    memset(g, 0, sizeof *g);
    g->id = sqlite3_column_int64(st, 0);
    g->created = sqlite3_column_int64(st, 3);
    if (sto_dup_column(st, 1, &g->name) != 0 || sto_dup_column(st, 2, &g->spec) != 0) {
        sto_batch_clear(g);
        return tsr_err_set(err, TSR_ENOMEM, "store: %s: out of memory", ctx);
    }
    return 0;
}

static int read_group_any(sqlite3_stmt *st, void *out, const char *ctx, tsr_err *err)
{
    return read_group_row(st, out, ctx, err);
}

int sto_batch_get(sto_db *s, int64_t id, sto_batch *out, tsr_err *err)
{
    return get_by_id(s, S_BATCH_GET, "batch", id, out, sizeof *out, read_group_any, err);
}

int sto_batch_list(sto_db *s, int64_t after_id, int limit, sto_batch **out, int *n,
                   tsr_err *err)
{
    const char *ctx = "list batches";
    if (s == NULL || out == NULL || n == NULL)
        return tsr_err_set(err, TSR_EINVAL, "store: %s: missing database or result", ctx);
    *out = NULL;
    *n = 0;
    if (limit < 1 || limit > STO_MAX_PAGE)
        return tsr_err_set(err, TSR_EINVAL, "store: %s: page size %d is not in 1..%d", ctx, limit,
                           STO_MAX_PAGE);
    sqlite3_stmt *st = NULL;
    int r = sto_prep(s, S_BATCH_LIST, &st, ctx, err);
    if (r != 0)
        return r;
    sqlite3_bind_int64(st, 1, after_id);
    sqlite3_bind_int(st, 2, limit);
    sto_batch *v = NULL;
    int count = 0, cap = 0, rc = SQLITE_DONE;
    while (r == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        if ((r = sto_grow((void **)&v, &cap, count, sizeof *v, ctx, err)) != 0)
            break;
        if ((r = read_group_row(st, &v[count], ctx, err)) == 0)
            count++;
    }
    if (r == 0 && rc != SQLITE_DONE)
        r = sto_sql_err(s, rc, err, ctx, "select");
    sto_release(st);
    if (r != 0) {
        sto_batches_free(v, count);
        return r;
    }
    *out = v;
    *n = count;
    return 0;
}

