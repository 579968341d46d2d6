/*
 * store.c - the daemon's SQLite job store (see store.h, docs/store.md).
 *
 * One sto_db is one SQLite connection plus a cache of its prepared
 * statements and a scratch buffer for encoding task blobs; nothing else is
 * kept between calls, so the database file is the only state and every
 * invariant below is an invariant of the file.
 *
 * Invariants of the file (each kept by the code that writes it):
 *   I1  jobs.stored equals the solutions the job's chunks stand for, and
 *       the chunks number them 1..stored without gap or overlap: chunks are
 *       only inserted by sto_checkpoint, which numbers them from the stored
 *       count it reads and adds their solutions to it in the same
 *       transaction, and only deleted with the whole job, or by sto_repair
 *       (offline), which cuts a damaged job's chunks back to their sound
 *       start and lowers stored to match in one transaction.
 *       jobs.solutions (found, stored or not) moves in the same transaction.
 *   I2  the frontier and the solutions of a job are those of one complete
 *       checkpoint: sto_checkpoint replaces the frontier and inserts the
 *       solutions in one BEGIN IMMEDIATE transaction and rolls it back on
 *       any failure.
 *   I3  a job in a final state (completed, cancelled, failed) has no
 *       frontier and never changes again: entering a final state deletes
 *       the frontier in the same transaction; set_state and checkpoint read
 *       the current state inside their write transaction and refuse to move
 *       out of it.  (sto_repair, offline, may still cut a final
 *       job's damaged chunks and say so in its error text.)
 *   I4  job ids are never reused (AUTOINCREMENT), and a solution's number
 *       within its job never changes, so a client's cursor never aliases.
 *   I5  every chunk carries a CRC-32 of its job, first number and data,
 *       checked on every read: a damaged chunk is an error, never served.
 *   I6  jobs.stored is what options.store keeps of jobs.solutions: all of
 *       them ("all", the default), none ("none") or the first N (the
 *       daemon keeps a class straddling N in part).  The store does not
 *       decide it, the daemon does (daemon/run.c); sto_repair cuts a
 *       damaged job below it, capping an unfinished job's options.store
 *       and saying so in a final one's error (REPAIR_NOTE).
 *   I7  no job's chunks hold one class twice: the engine reports each
 *       class once, and a checkpoint's batch holds only the work since the
 *       last one.  Nothing in the store enforces it (a class has no cheap
 *       key); two daemons running one job on one file break it, with
 *       every number and count in order.
 * sto_check verifies I1..I7 and the frontier's weights (I2 implies that
 * an unfinished job's tasks and its fraction done make the whole tree).
 *
 * Reads that need more than one statement (does the job exist, then its
 * rows) run in one read transaction, so they see one snapshot: in WAL mode
 * that is the state after some complete commit.
 *
 * SQL never contains values: every value is bound with sqlite3_bind_*.
 * Statements are prepared on first use and kept until sto_close; after each
 * use a statement is reset and its bindings cleared, so no statement keeps
 * a read open or points into a caller's buffer between calls.
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

_Static_assert(INT_MAX == INT32_MAX, "image ids are stored as 32-bit integers");

/* ---- schema ---------------------------------------------------------------
 * migrations[v] takes a database of schema version v to v + 1; version 0 is
 * an empty file.  A future schema change appends a step and bumps
 * STO_SCHEMA_VERSION; old files are upgraded in one transaction at open. */
static const char *const migrations[STO_SCHEMA_VERSION] = {
    /* 0 -> 1 */
    "CREATE TABLE jobs ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " state TEXT NOT NULL CHECK (state IN"
    "  ('queued','running','paused','completed','cancelled','failed')),"
    " priority INTEGER NOT NULL,"
    " engine_version INTEGER NOT NULL,"
    " puzzle TEXT NOT NULL,"
    " options TEXT NOT NULL,"
    " error TEXT,"
    " created INTEGER NOT NULL,"
    " updated INTEGER NOT NULL,"
    " solutions INTEGER NOT NULL DEFAULT 0 CHECK (solutions >= 0),"
    " nodes INTEGER NOT NULL DEFAULT 0,"
    " fraction REAL NOT NULL DEFAULT 0,"
    " seconds REAL NOT NULL DEFAULT 0,"
    " stats TEXT"
    ") STRICT;"
    "CREATE INDEX jobs_state ON jobs (state, id);"
    "CREATE TABLE frontier ("
    " job INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,"
    " seq INTEGER NOT NULL,"
    " images BLOB NOT NULL," /* little-endian int32 image ids */
    " weight REAL NOT NULL,"
    " PRIMARY KEY (job, seq)"
    ") STRICT;"
    "CREATE TABLE solutions ("
    " seq INTEGER PRIMARY KEY AUTOINCREMENT,"
    " job INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,"
    " key TEXT NOT NULL,"
    " body TEXT NOT NULL,"
    " UNIQUE (job, key)"
    ") STRICT;"
    "CREATE INDEX solutions_page ON solutions (job, seq);",
    /* 1 -> 2: solutions as compact chunks of classes.  Text bodies stay,
     * read-only, in solutions_v1 for the jobs that have them ("legacy");
     * an unfinished job with some cannot go on in the new encoding without
     * mixing the two, so it fails and must be resubmitted. */
    "ALTER TABLE solutions RENAME TO solutions_v1;"
    "ALTER TABLE jobs ADD COLUMN stored INTEGER NOT NULL DEFAULT 0 CHECK (stored >= 0);"
    "ALTER TABLE jobs ADD COLUMN legacy INTEGER NOT NULL DEFAULT 0;"
    "UPDATE jobs SET legacy = 1, stored = solutions WHERE solutions > 0;"
    "UPDATE jobs SET state = 'failed', updated = CAST(strftime('%s', 'now') AS INTEGER),"
    " error = 'its solutions were stored by an older tesserad (store schema 1), which this "
    "version cannot extend; resubmit the job'"
    " WHERE legacy = 1 AND state IN ('queued', 'running', 'paused');"
    "DELETE FROM frontier WHERE job IN (SELECT id FROM jobs WHERE state = 'failed');"
    "CREATE TABLE chunks ("
    " job INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,"
    " first INTEGER NOT NULL," /* the number of its first solution, from 1 */
    " nsol INTEGER NOT NULL CHECK (nsol > 0),"
    " nclass INTEGER NOT NULL CHECK (nclass > 0),"
    " data BLOB NOT NULL," /* class records, see sto_found_add */
    " crc INTEGER NOT NULL"
    ") STRICT;"
    "CREATE UNIQUE INDEX chunks_first ON chunks (job, first);",
    /* 2 -> 3: batches of jobs (the API's /api/v1/batches).  Existing jobs
     * belong to none: the new column is NULL for them. */
    "CREATE TABLE batches ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " name TEXT,"
    " spec TEXT NOT NULL," /* JSON: how the batch was asked for, without the puzzles */
    " created INTEGER NOT NULL"
    ") STRICT;"
    "ALTER TABLE jobs ADD COLUMN batch INTEGER REFERENCES batches (id);"
    "CREATE INDEX jobs_batch ON jobs (batch, id);",
    /* 3 -> 4: record jobs keep figures per subtree of a fixed split
     * (sto_record_begin).  Jobs stored before have none. */
    "CREATE TABLE record_tasks ("
    " job INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,"
    " seq INTEGER NOT NULL CHECK (seq >= 0)," /* 0: above the split */
    " images BLOB NOT NULL,"                  /* as in frontier, in search order */
    " weight REAL NOT NULL,"
    " solutions INTEGER NOT NULL DEFAULT 0,"
    " nodes INTEGER NOT NULL DEFAULT 0,"      /* uint64 bit patterns */
    " digest INTEGER NOT NULL DEFAULT 0,"
    " PRIMARY KEY (job, seq)"
    ") STRICT;",
};

/* ---- prepared statements --------------------------------------------------- */

/* The column order of job rows, shared by S_JOB_GET and the listings
 * (which leave out the documents) and read by read_job_row. */
#define JOB_COLUMNS_TAIL \
    "error, created, updated, solutions, nodes, fraction, seconds, stats, stored, legacy, batch FROM jobs "

static const char *const stmt_sql[S_COUNT] = {
    [S_BEGIN] = "BEGIN",
    [S_BEGIN_IMMEDIATE] = "BEGIN IMMEDIATE",
    [S_COMMIT] = "COMMIT",
    [S_ROLLBACK] = "ROLLBACK",
    [S_JOB_INSERT] = "INSERT INTO jobs (state, priority, engine_version, puzzle, options,"
                     " created, updated) VALUES ('queued', ?1, ?2, ?3, ?4, ?5, ?5)",
    [S_JOB_GET] = "SELECT id, state, priority, engine_version, puzzle, options, " JOB_COLUMNS_TAIL
                  "WHERE id = ?1",
    [S_JOB_LIST] = "SELECT id, state, priority, engine_version, NULL, NULL, " JOB_COLUMNS_TAIL
                   "WHERE id > ?1 ORDER BY id LIMIT ?2",
    [S_JOB_LIST_STATE] = "SELECT id, state, priority, engine_version, NULL, NULL, " JOB_COLUMNS_TAIL
                         "WHERE state = ?3 AND id > ?1 ORDER BY id LIMIT ?2",
    [S_JOB_STATE] = "SELECT state, engine_version FROM jobs WHERE id = ?1",
    [S_JOB_SET_STATE] = "UPDATE jobs SET state = ?2, error = ?3, updated = ?4 WHERE id = ?1",
    /* NULL parameters keep the stored value (no progress, no stats, no new state). */
    [S_JOB_PROGRESS] = "UPDATE jobs SET solutions = solutions + ?2, stored = stored + ?9,"
                       " nodes = coalesce(?3, nodes), fraction = coalesce(?4, fraction),"
                       " seconds = coalesce(?5, seconds), stats = coalesce(?6, stats),"
                       " state = coalesce(?7, state), updated = ?8 WHERE id = ?1",
    [S_JOB_DELETE] = "DELETE FROM jobs WHERE id = ?1",
    [S_JOB_SET_OPTIONS] = "UPDATE jobs SET options = ?2, updated = ?3 WHERE id = ?1",
    [S_JOBS_UNFINISHED] = "SELECT id FROM jobs WHERE state IN ('queued', 'running', 'paused')"
                          " ORDER BY priority DESC, id",
    [S_FRONTIER_CLEAR] = "DELETE FROM frontier WHERE job = ?1",
    [S_FRONTIER_INSERT] = "INSERT INTO frontier (job, seq, images, weight) VALUES (?1, ?2, ?3, ?4)",
    [S_FRONTIER_LOAD] = "SELECT images, weight FROM frontier WHERE job = ?1 ORDER BY seq",
    [S_SOLUTIONS_CLEAR] = "DELETE FROM solutions_v1 WHERE job = ?1",
    [S_SOLUTIONS_PAGE] = "SELECT seq, body FROM solutions_v1 WHERE job = ?1 AND seq > ?2"
                         " ORDER BY seq LIMIT ?3",
    [S_JOB_STORED] = "SELECT stored FROM jobs WHERE id = ?1",
    [S_CHUNK_INSERT] = "INSERT INTO chunks (job, first, nsol, nclass, data, crc)"
                       " VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    [S_CHUNKS_CLEAR] = "DELETE FROM chunks WHERE job = ?1",
    /* the chunk holding solution ?2 and those after it, up to solution ?3 */
    [S_CHUNKS_READ] = "SELECT first, nsol, nclass, data, crc FROM chunks WHERE job = ?1"
                      " AND first >= coalesce((SELECT max(first) FROM chunks"
                      " WHERE job = ?1 AND first <= ?2), 1) AND first <= ?3 ORDER BY first",
    [S_BATCH_INSERT] = "INSERT INTO batches (name, spec, created) VALUES (?1, ?2, ?3)",
    [S_JOB_INSERT_IN_BATCH] = "INSERT INTO jobs (state, priority, engine_version, puzzle, options,"
                              " created, updated, batch) VALUES ('queued', ?1, ?2, ?3, ?4, ?5, ?5,"
                              " ?6)",
    [S_BATCH_GET] = "SELECT id, name, spec, created FROM batches WHERE id = ?1",
    [S_BATCH_LIST] = "SELECT id, name, spec, created FROM batches WHERE id > ?1 ORDER BY id"
                     " LIMIT ?2",
    [S_RECORD_INSERT] = "INSERT INTO record_tasks (job, seq, images, weight, solutions, nodes,"
                        " digest) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    [S_RECORD_UPDATE] = "UPDATE record_tasks SET solutions = ?3, nodes = ?4, digest = ?5"
                        " WHERE job = ?1 AND seq = ?2",
    [S_RECORD_LOAD] = "SELECT images, weight, seq, solutions, nodes, digest FROM record_tasks"
                      " WHERE job = ?1 ORDER BY seq",
    [S_RECORD_ANY] = "SELECT count(*) FROM record_tasks WHERE job = ?1",
};

/* ---- states ------------------------------------------------------------------ */
/* the names are tessera/job.h's, in the order of enum sto_state */
#define state_names tsr_job_states
#define NSTATES TSR_JOB_NSTATES
_Static_assert(STO_QUEUED == 0 && STO_FAILED == TSR_JOB_NSTATES - 1, "job.h's order");

bool sto_state_valid(enum sto_state st)
{
    return (int)st >= 0 && (int)st < NSTATES;
}

const char *sto_state_name(enum sto_state st)
{
    return sto_state_valid(st) ? state_names[st] : "unknown";
}

int sto_state_parse(const char *name, enum sto_state *st)
{
    if (name == NULL)
        return TSR_EINVAL;
    for (int i = 0; i < NSTATES; i++)
        if (strcmp(name, state_names[i]) == 0) {
            if (st != NULL)
                *st = (enum sto_state)i;
            return 0;
        }
    return TSR_EINVAL;
}

bool sto_state_final(enum sto_state st)
{
    return sto_state_valid(st) && tsr_job_state_final(state_names[st]);
}

/* ---- errors and statement plumbing ------------------------------------------ */
static int code_of(int rc)
{
    switch (rc & 0xff) {
    case SQLITE_NOMEM: return TSR_ENOMEM;
    case SQLITE_TOOBIG: return TSR_ETOOBIG;
    default: return TSR_EIO;
    }
}

/* "store: <ctx>: <what>: <sqlite message>".  Call before anything else
 * touches the connection, which would replace SQLite's message. */
int sto_sql_err(sto_db *s, int rc, tsr_err *err, const char *ctx, const char *what)
{
    const char *msg = s->db != NULL ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc);
    return tsr_err_set(err, code_of(rc), "store: %s: %s: %s", ctx, what, msg);
}

/* Make room in a growing result array *v (elements of `size` bytes) for
 * element `count`; *cap is its capacity. */
int sto_grow(void **v, int *cap, int count, size_t size, const char *ctx, tsr_err *err)
{
    size_t c = (size_t)*cap;
    int r = base_grow(v, &c, (size_t)count, size, 16, INT_MAX);
    *cap = (int)c;
    if (r == TSR_ETOOBIG)
        return tsr_err_set(err, TSR_ETOOBIG, "store: %s: too many rows", ctx);
    if (r != 0)
        return tsr_err_set(err, TSR_ENOMEM, "store: %s: out of memory", ctx);
    return 0;
}

/* The answer of every call on a connection that sto_detach closed. */
int sto_detached(const char *ctx, tsr_err *err)
{
    return tsr_err_set(err, TSR_ESTALE, "store: %s: the store's file is no longer at its path, "
                       "and this connection to it is closed", ctx);
}

int sto_prep(sto_db *s, enum stmt_id id, sqlite3_stmt **out, const char *ctx, tsr_err *err)
{
    if (s->db == NULL)
        return sto_detached(ctx, err);
    if (s->stmt[id] == NULL) {
        int rc = sqlite3_prepare_v3(s->db, stmt_sql[id], -1, SQLITE_PREPARE_PERSISTENT,
                                    &s->stmt[id], NULL);
        if (rc != SQLITE_OK) {
            s->stmt[id] = NULL;
            return sto_sql_err(s, rc, err, ctx, "prepare statement");
        }
    }
    /* a write outside a transaction (tx_begin checks those) */
    if (s->claim != NULL && sqlite3_get_autocommit(s->db) && !sqlite3_stmt_readonly(s->stmt[id])) {
        int r = sto_claim_check(s->claim, err);
        if (r != 0)
            return r;
    }
    *out = s->stmt[id];
    return 0;
}

/* Reset a statement after use: ends its read and drops its bindings (which
 * may point into the caller's memory: everything is bound SQLITE_STATIC). */
void sto_release(sqlite3_stmt *st)
{
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
}

/* Step a statement that returns no rows, then release it. */
int sto_step_done(sto_db *s, sqlite3_stmt *st, const char *ctx, const char *what, tsr_err *err)
{
    int rc = sqlite3_step(st);
    int r = 0;
    if (rc != SQLITE_DONE)
        r = sto_sql_err(s, rc == SQLITE_ROW ? SQLITE_ERROR : rc, err, ctx, what);
    sto_release(st);
    return r;
}

/* Step a statement whose parameters were bound with result bind_rc (the
 * first failure among the binds, or SQLITE_OK). */
int sto_bound_step(sto_db *s, sqlite3_stmt *st, int bind_rc, const char *ctx,
                      const char *what, tsr_err *err)
{
    if (bind_rc != SQLITE_OK) {
        int r = sto_sql_err(s, bind_rc, err, ctx, "bind");
        sto_release(st);
        return r;
    }
    return sto_step_done(s, st, ctx, what, err);
}

int sto_run_simple(sto_db *s, enum stmt_id id, const char *ctx, const char *what, tsr_err *err)
{
    sqlite3_stmt *st = NULL;
    int r = sto_prep(s, id, &st, ctx, err);
    return r != 0 ? r : sto_step_done(s, st, ctx, what, err);
}

/* Transactions.  Writes use BEGIN IMMEDIATE: the write lock is taken (or
 * waited for, under the busy timeout) before anything is read, so a write
 * transaction never fails half way with SQLITE_BUSY on lock upgrade.  Reads
 * use a deferred BEGIN, which in WAL mode never waits for the writer. */
int sto_tx_begin(sto_db *s, bool write, const char *ctx, tsr_err *err)
{
    /* a claimed connection writes only while its name leads to the file it
     * holds: a file deleted or replaced under the daemon gets nothing more
     * (prep checks the writes made outside a transaction) */
    int r = write && s->claim != NULL && s->db != NULL ? sto_claim_check(s->claim, err) : 0;
    return r != 0 ? r : sto_run_simple(s, write ? S_BEGIN_IMMEDIATE : S_BEGIN, ctx,
                                   "begin transaction", err);
}

/* Roll back whatever transaction is open (SQLite may already have rolled
 * back on its own after some errors).  The caller's message is kept. */
void sto_tx_rollback(sto_db *s)
{
    if (sqlite3_get_autocommit(s->db))
        return;
    sqlite3_stmt *st = NULL;
    if (sto_prep(s, S_ROLLBACK, &st, "rollback", NULL) == 0)
        sto_step_done(s, st, "rollback", "rollback", NULL);
    if (!sqlite3_get_autocommit(s->db)) /* a cached ROLLBACK failed: try the plain way */
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

int sto_tx_commit(sto_db *s, const char *ctx, tsr_err *err)
{
    int r = sto_run_simple(s, S_COMMIT, ctx, "commit", err);
    if (r != 0)
        sto_tx_rollback(s);
    return r;
}

/* End a transaction: commit when r == 0, else roll back; returns the final
 * code. */
int sto_tx_end(sto_db *s, int r, const char *ctx, tsr_err *err)
{
    if (r == 0)
        return sto_tx_commit(s, ctx, err);
    sto_tx_rollback(s);
    return r;
}

/* The end of a read of rows in a read transaction: the last step's code
 * (rc, SQLITE_DONE when every row was read), the statement released and
 * the transaction ended; returns r or the first error. */
int sto_read_end(sto_db *s, sqlite3_stmt *st, int rc, int r, const char *ctx, tsr_err *err)
{
    if (r == 0 && rc != SQLITE_DONE)
        r = sto_sql_err(s, rc, err, ctx, "select");
    sto_release(st);
    return sto_tx_end(s, r, ctx, err);
}

/* Length of a document of at most `max` bytes into *len; refused when
 * longer (strnlen never reads past max + 1 bytes). */
int sto_check_len(const char *doc, size_t max, size_t *len, const char *ctx, const char *what,
                     tsr_err *err)
{
    size_t n = strnlen(doc, max + 1);
    if (n > max)
        return tsr_err_set(err, TSR_ETOOBIG, "store: %s: %s is larger than %zu bytes", ctx, what,
                           max);
    *len = n;
    return 0;
}

int sto_bind_text(sqlite3_stmt *st, int i, const char *text, size_t len)
{
    if (text == NULL)
        return sqlite3_bind_null(st, i);
    return sqlite3_bind_text64(st, i, text, (sqlite3_uint64)len, SQLITE_STATIC, SQLITE_UTF8);
}

/* A copy of a text column, or NULL for SQL NULL; ENOMEM on failure. */
int sto_dup_column(sqlite3_stmt *st, int col, char **out)
{
    *out = NULL;
    if (sqlite3_column_type(st, col) == SQLITE_NULL)
        return 0;
    const unsigned char *t = sqlite3_column_text(st, col);
    if (t == NULL)
        return TSR_ENOMEM; /* not NULL in SQL, so the conversion failed */
    size_t n = (size_t)sqlite3_column_bytes(st, col);
    char *c = malloc(n + 1);
    if (c == NULL)
        return TSR_ENOMEM;
    memcpy(c, t, n);
    c[n] = '\0';
    *out = c;
    return 0;
}

int sto_parse_state_column(sqlite3_stmt *st, int col, enum sto_state *out, const char *ctx,
                              int64_t id, tsr_err *err)
{
    const char *name = (const char *)sqlite3_column_text(st, col);
    if (sto_state_parse(name, out) != 0)
        return tsr_err_set(err, TSR_EIO, "store: %s: job %lld has unknown state '%s'", ctx,
                           (long long)id, name != NULL ? name : "(null)");
    return 0;
}

/* One row of S_JOB_GET / S_JOB_LIST* into *j (zeroed first). */
int sto_read_job_row(sqlite3_stmt *st, sto_job *j, const char *ctx, tsr_err *err)
{
    memset(j, 0, sizeof *j);
    j->id = sqlite3_column_int64(st, 0);
    int r = sto_parse_state_column(st, 1, &j->state, ctx, j->id, err);
    if (r != 0)
        return r;
    j->priority = sqlite3_column_int(st, 2);
    j->engine_version = sqlite3_column_int(st, 3);
    if (sto_dup_column(st, 4, &j->puzzle) != 0 || sto_dup_column(st, 5, &j->options) != 0 ||
        sto_dup_column(st, 6, &j->error) != 0 || sto_dup_column(st, 13, &j->stats) != 0) {
        sto_job_clear(j);
        return tsr_err_set(err, TSR_ENOMEM, "store: %s: out of memory", ctx);
    }
    j->created = sqlite3_column_int64(st, 7);
    j->updated = sqlite3_column_int64(st, 8);
    j->solutions = sqlite3_column_int64(st, 9);
    j->nodes = (uint64_t)sqlite3_column_int64(st, 10); /* stored as its int64 bit pattern */
    j->fraction = sqlite3_column_double(st, 11);
    j->seconds = sqlite3_column_double(st, 12);
    j->stored = sqlite3_column_int64(st, 14);
    j->legacy = sqlite3_column_int(st, 15) != 0;
    j->batch = sqlite3_column_int64(st, 16); /* NULL reads as 0: no batch */
    return 0;
}

/* The state and engine version of job `id`; "no job N" when absent.  Used
 * inside a transaction, so what it reads holds until the transaction ends. */
int sto_job_state(sto_db *s, int64_t id, enum sto_state *state, int *engine_version,
                     const char *ctx, tsr_err *err)
{
    sqlite3_stmt *st = NULL;
    int r = sto_prep(s, S_JOB_STATE, &st, ctx, err);
    if (r != 0)
        return r;
    sqlite3_bind_int64(st, 1, id);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        r = sto_parse_state_column(st, 0, state, ctx, id, err);
        if (engine_version != NULL)
            *engine_version = sqlite3_column_int(st, 1);
    } else if (rc == SQLITE_DONE) {
        r = tsr_err_set(err, TSR_EINVAL, "store: %s: no job %lld", ctx, (long long)id);
    } else {
        r = sto_sql_err(s, rc, err, ctx, "read job state");
    }
    sto_release(st);
    return r;
}

/* Begin a read transaction, check that the job exists and prepare statement
 * `which` with the job id bound to its first parameter: the existence check
 * and the rows read are one snapshot.  On failure the transaction is over;
 * on success the caller steps the statement and ends it with tx_end. */
int sto_read_job_rows(sto_db *s, int64_t job, enum stmt_id which, sqlite3_stmt **st,
                         const char *ctx, tsr_err *err)
{
    int r = sto_tx_begin(s, false, ctx, err);
    if (r != 0)
        return r;
    enum sto_state cur;
    r = sto_job_state(s, job, &cur, NULL, ctx, err);
    if (r == 0)
        r = sto_prep(s, which, st, ctx, err);
    if (r != 0)
        return sto_tx_end(s, r, ctx, err);
    sqlite3_bind_int64(*st, 1, job);
    return 0;
}

/* Unix seconds: the created and updated times of rows. */
int64_t sto_now(void)
{
    return (int64_t)time(NULL);
}

/* ---- opening ----------------------------------------------------------------- */
int sto_pragma_int(sto_db *s, const char *sql, int *v, const char *ctx, tsr_err *err)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK)
        return sto_sql_err(s, rc, err, ctx, sql);
    rc = sqlite3_step(st);
    int r = 0;
    if (rc == SQLITE_ROW)
        *v = sqlite3_column_int(st, 0);
    else
        r = sto_sql_err(s, rc == SQLITE_DONE ? SQLITE_ERROR : rc, err, ctx, sql);
    sqlite3_finalize(st);
    return r;
}

int sto_exec_sql(sto_db *s, const char *sql, const char *ctx, const char *what, tsr_err *err)
{
    int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
    return rc == SQLITE_OK ? 0 : sto_sql_err(s, rc, err, ctx, what);
}

/* Refuse files that are not ours or are newer than this build. */
static int check_identity(int version, int app_id, const char *ctx, tsr_err *err)
{
    if (version > 0 && app_id != STO_APPLICATION_ID)
        return tsr_err_set(err, TSR_EINVAL,
                           "store: %s: not a Tessera store (application id %#x, schema version %d)",
                           ctx, (unsigned)app_id, version);
    if (version == 0 && app_id != 0 && app_id != STO_APPLICATION_ID)
        return tsr_err_set(err, TSR_EINVAL,
                           "store: %s: not a Tessera store (application id %#x)", ctx,
                           (unsigned)app_id);
    if (version > STO_SCHEMA_VERSION)
        return tsr_err_set(err, TSR_EUNSUPP,
                           "store: %s: schema version %d is newer than this build understands "
                           "(%d); use a newer tesserad",
                           ctx, version, STO_SCHEMA_VERSION);
    if (version < 0)
        return tsr_err_set(err, TSR_EINVAL, "store: %s: bad schema version %d", ctx, version);
    return 0;
}

/* Read the file's identity and schema version into *version, refusing
 * files that are not ours or are newer than this build.  Read-only, so a
 * refused file is left exactly as it was (its journal mode included). */
int sto_identify(sto_db *s, int *version, const char *ctx, tsr_err *err)
{
    int app_id = 0, tables = 0;
    int r = sto_pragma_int(s, "PRAGMA user_version", version, ctx, err);
    if (r == 0)
        r = sto_pragma_int(s, "PRAGMA application_id", &app_id, ctx, err);
    if (r == 0)
        r = check_identity(*version, app_id, ctx, err);
    if (r == 0 && *version == 0)
        r = sto_pragma_int(s, "SELECT count(*) FROM sqlite_master", &tables, ctx, err);
    if (r == 0 && *version == 0 && tables > 0)
        r = tsr_err_set(err, TSR_EINVAL,
                        "store: %s: not a Tessera store (it holds %d schema objects but no "
                        "schema version)",
                        ctx, tables);
    return r;
}

/* Bring the schema from `version` to STO_SCHEMA_VERSION in one write
 * transaction that identifies the file again first, so two connections
 * opening a new file at once create the schema once. */
static int schema_upgrade(sto_db *s, const char *ctx, tsr_err *err)
{
    int version;
    int r = sto_tx_begin(s, true, ctx, err);
    if (r != 0)
        return r;
    r = sto_identify(s, &version, ctx, err);
    for (int v = version; r == 0 && v < STO_SCHEMA_VERSION; v++) {
        char what[48], sql[96];
        snprintf(what, sizeof what, "upgrade schema %d to %d", v, v + 1);
        r = sto_exec_sql(s, migrations[v], ctx, what, err);
        /* Integers formatted from constants, not values from outside. */
        snprintf(sql, sizeof sql, "PRAGMA user_version = %d; PRAGMA application_id = %d", v + 1,
                 STO_APPLICATION_ID);
        if (r == 0)
            r = sto_exec_sql(s, sql, ctx, what, err);
    }
    return sto_tx_end(s, r, ctx, err);
}

/* Refuse, before SQLite sees it, a file that exists but is empty: SQLite
 * would take it for a new database, and the jobs it should hold would be
 * silently gone. */
int sto_not_empty(const char *path, const char *ctx, tsr_err *err)
{
    struct stat sb;
    if (stat(path, &sb) == 0) {
        if (S_ISREG(sb.st_mode) && sb.st_size == 0)
            return tsr_err_set(err, TSR_EIO, "store: %s: the file is empty (0 bytes), so it is "
                               "not a Tessera store; a new store starts where there is no file: "
                               "move it away (docs/store.md, recovery)", ctx);
    } else if (errno != ENOENT) {
        return tsr_err_set(err, TSR_EIO, "store: %s: %s", ctx, strerror(errno));
    }
    return 0;
}

/* ... nor a store that cannot be written: the file itself (SQLite would
 * open it read-only and every write would fail later), or its directory
 * (its owner record and write-ahead log live beside the database).  Said
 * before anything else touches the directory, so that a read-only one is
 * named as such, not as a file that cannot be opened. */
int sto_usable_file(const char *path, const char *ctx, tsr_err *err)
{
    int r = sto_not_empty(path, ctx, err);
    if (r != 0)
        return r;
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash == NULL)
        snprintf(dir, sizeof dir, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    if (access(dir, W_OK) != 0) {
        if (errno == ENOENT)
            return tsr_err_set(err, TSR_EIO, "store: %s: there is no directory %s", ctx, dir);
        return tsr_err_set(err, TSR_EIO, "store: %s: the directory %s is not writable (%s): the "
                           "store keeps its owner record and write-ahead log beside the database",
                           ctx, dir, strerror(errno));
    }
    if (access(path, W_OK) != 0 && errno != ENOENT)
        return tsr_err_set(err, TSR_EIO, "store: %s: the file is read-only (%s): the store must "
                           "be able to write it", ctx, strerror(errno));
    return 0;
}

int sto_open(const char *path, int engine_version, sto_db **out, tsr_err *err)
{
    if (out == NULL)
        return tsr_err_set(err, TSR_EINVAL, "store: open: no result pointer");
    *out = NULL;
    if (path == NULL || path[0] == '\0')
        return tsr_err_set(err, TSR_EINVAL, "store: open: no path");
    if (strcmp(path, ":memory:") == 0)
        return tsr_err_set(err, TSR_EINVAL, "store: open: the store needs a file (WAL mode), "
                                            "not :memory:");
    if (!sqlite3_threadsafe())
        return tsr_err_set(err, TSR_EUNSUPP, "store: open %s: SQLite was built without threads",
                           path);
    char ctx[320];
    snprintf(ctx, sizeof ctx, "open %s", path);
    int r = sto_usable_file(path, ctx, err);
    if (r != 0)
        return r;

    sto_db *s = calloc(1, sizeof *s);
    if (s == NULL)
        return tsr_err_set(err, TSR_ENOMEM, "store: %s: out of memory", ctx);
    s->engine_version = engine_version;
    int version = 0;
    sqlite3_stmt *st = NULL;
    /* NOMUTEX: the connection is used by one thread at a time (store.h). */
    int rc = sqlite3_open_v2(path, &s->db,
                             SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX |
                                 SQLITE_OPEN_EXRESCODE,
                             NULL);
    if (rc != SQLITE_OK) {
        r = sto_sql_err(s, rc, err, ctx, "open");
        goto fail;
    }
    if (sqlite3_db_readonly(s->db, "main") == 1) {
        r = tsr_err_set(err, TSR_EIO, "store: %s: the file is read-only (its permissions or its "
                        "file system): the store must be able to write it", ctx);
        goto fail;
    }
    sqlite3_extended_result_codes(s->db, 1);
    sqlite3_busy_timeout(s->db, STO_BUSY_TIMEOUT_MS);
    if ((r = sto_exec_sql(s, "PRAGMA foreign_keys = ON", ctx, "enable foreign keys", err)) != 0)
        goto fail;
    /* Identify the file before changing anything in it (the first read
     * also names a file that is not a database). */
    if ((r = sto_identify(s, &version, ctx, err)) != 0)
        goto fail;

    /* WAL must hold before the schema transaction. */
    rc = sqlite3_prepare_v2(s->db, "PRAGMA journal_mode = WAL", -1, &st, NULL);
    if (rc != SQLITE_OK) {
        r = sto_sql_err(s, rc, err, ctx, "set WAL journal mode");
        goto fail;
    }
    rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        r = sto_sql_err(s, rc == SQLITE_DONE ? SQLITE_ERROR : rc, err, ctx, "set WAL journal mode");
    } else {
        const char *mode = (const char *)sqlite3_column_text(st, 0);
        if (mode == NULL || strcmp(mode, "wal") != 0)
            r = tsr_err_set(err, TSR_EUNSUPP, "store: %s: cannot use WAL journal mode (got %s)",
                            ctx, mode != NULL ? mode : "nothing");
    }
    sqlite3_finalize(st);
    if (r != 0)
        goto fail;
    if ((r = sto_exec_sql(s, "PRAGMA synchronous = FULL", ctx, "set synchronous", err)) != 0)
        goto fail;
    if (version != STO_SCHEMA_VERSION && (r = schema_upgrade(s, ctx, err)) != 0)
        goto fail;
    *out = s;
    return 0;
fail:
    sto_close(s);
    return r;
}

int sto_open_claimed(const sto_claim *c, int engine_version, sto_db **out, tsr_err *err)
{
    int r = sto_open(c->path, engine_version, out, err);
    if (r == 0) {
        (*out)->claim = c;
        /* the path might have been swapped between the claim and the open */
        if ((r = sto_claim_check(c, err)) != 0) {
            sto_close(*out);
            *out = NULL;
        }
    }
    return r;
}

/* Close the SQLite connection and drop its statements.  A connection whose
 * claim no longer holds leaves the write-ahead log and its index where they
 * are: SQLite would otherwise delete them by name, and the names may now
 * belong to another file. */
static void disconnect(sto_db *s)
{
    for (int i = 0; i < S_COUNT; i++) {
        sqlite3_finalize(s->stmt[i]);
        s->stmt[i] = NULL;
    }
    if (s->db != NULL && s->claim != NULL && sto_claim_check(s->claim, NULL) != 0) {
        int keep = 1;
        sqlite3_file_control(s->db, "main", SQLITE_FCNTL_PERSIST_WAL, &keep);
    }
    sqlite3_close(s->db); /* every statement is finalized, so this closes */
    s->db = NULL;
}

void sto_close(sto_db *s)
{
    if (s == NULL)
        return;
    disconnect(s);
    free(s->buf);
    free(s);
}

int sto_backup(sto_db *s, const char *to, tsr_err *err)
{
    if (s->db == NULL)
        return sto_detached("backup", err);
    /* the log's frames into the file first: the copy is then one read of
     * it, and no frame of it is left for the name's next owner */
    int rc = sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
    if (rc != SQLITE_OK)
        return sto_sql_err(s, rc, err, "backup", "checkpoint the write-ahead log");
    if (access(to, F_OK) == 0)
        return tsr_err_set(err, TSR_EIO, "store: backup to %s: the file exists", to);
    sqlite3 *dst = NULL;
    rc = sqlite3_open_v2(to, &dst, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
                         SQLITE_OPEN_NOMUTEX, NULL);
    sqlite3_backup *b = rc == SQLITE_OK ? sqlite3_backup_init(dst, "main", s->db, "main") : NULL;
    if (b != NULL) {
        rc = sqlite3_backup_step(b, -1);
        rc = sqlite3_backup_finish(b) == SQLITE_OK && rc == SQLITE_DONE ? SQLITE_OK
                                                                        : sqlite3_errcode(dst);
    } else if (rc == SQLITE_OK) {
        rc = sqlite3_errcode(dst);
    }
    int r = rc == SQLITE_OK ? 0
                            : tsr_err_set(err, TSR_EIO, "store: backup to %s: %s", to,
                                          dst != NULL ? sqlite3_errmsg(dst) : sqlite3_errstr(rc));
    sqlite3_close(dst);
    if (r != 0)
        unlink(to);
    return r;
}

int sto_detach(sto_db *s, const char *copy, tsr_err *err)
{
    disconnect(s);
    if (copy == NULL)
        return 0;
    /* immutable: no lock, no log, no index beside the copy; nothing writes it.
     * In a URI's path '%', '?' and '#' are written %XX. */
    char path[3 * PATH_MAX];
    size_t o = 0;
    for (const char *p = copy; *p != '\0' && o + 4 < sizeof path; p++)
        o += (size_t)snprintf(path + o, sizeof path - o, strchr("%?#", *p) ? "%%%02X" : "%c",
                              (unsigned char)*p);
    char *uri = sqlite3_mprintf("file:%s?immutable=1", path);
    int rc = uri == NULL ? SQLITE_NOMEM
                         : sqlite3_open_v2(uri, &s->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI |
                                           SQLITE_OPEN_NOMUTEX, NULL);
    sqlite3_free(uri);
    if (rc != SQLITE_OK) {
        int r = tsr_err_set(err, TSR_EIO, "store: open the copy %s: %s", copy,
                            s->db != NULL ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc));
        sqlite3_close(s->db);
        s->db = NULL;
        return r;
    }
    s->claim = NULL; /* a copy of its own, never written */
    return 0;
}

int sto_wal_checkpoint(sto_db *s, bool truncate, tsr_err *err)
{
    if (s == NULL)
        return tsr_err_set(err, TSR_EINVAL, "store: wal checkpoint: no database");
    if (s->db == NULL)
        return sto_detached("wal checkpoint", err);
    int rc = sqlite3_wal_checkpoint_v2(
        s->db, NULL, truncate ? SQLITE_CHECKPOINT_TRUNCATE : SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
    return rc == SQLITE_OK ? 0 : sto_sql_err(s, rc, err, "wal checkpoint", "checkpoint");
}

