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
#include "store/store.h"
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
    " data BLOB NOT NULL," /* class records, see sto_batch_add */
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
};

/* ---- prepared statements --------------------------------------------------- */
enum stmt_id {
    S_BEGIN,
    S_BEGIN_IMMEDIATE,
    S_COMMIT,
    S_ROLLBACK,
    S_JOB_INSERT,
    S_JOB_GET,
    S_JOB_LIST,
    S_JOB_LIST_STATE,
    S_JOB_STATE,
    S_JOB_SET_STATE,
    S_JOB_PROGRESS,
    S_JOB_DELETE,
    S_JOB_SET_OPTIONS,
    S_JOBS_UNFINISHED,
    S_FRONTIER_CLEAR,
    S_FRONTIER_INSERT,
    S_FRONTIER_LOAD,
    S_SOLUTIONS_CLEAR,
    S_SOLUTIONS_PAGE,
    S_JOB_STORED,
    S_CHUNK_INSERT,
    S_CHUNKS_CLEAR,
    S_CHUNKS_READ,
    S_BATCH_INSERT,
    S_JOB_INSERT_IN_BATCH,
    S_BATCH_GET,
    S_BATCH_LIST,
    S_COUNT
};

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
};

/* A claim on a store file (the claim's section below says how it works). */
struct sto_claim {
    int fd;            /* the store file, flock'ed */
    dev_t dev;         /* its identity */
    ino_t ino;
    char path[PATH_MAX];
    char owner[PATH_MAX + 8];
    char note[3 * PATH_MAX + 200]; /* what taking it did beside the file, or "" */
};

struct sto_db {
    sqlite3 *db;                 /* NULL once detached (sto_detach) */
    const sto_claim *claim;      /* the claim it writes under (sto_open_claimed), or NULL */
    int engine_version;
    sqlite3_stmt *stmt[S_COUNT]; /* NULL until first used */
    unsigned char *buf;          /* scratch for task blobs, `cap` bytes */
    size_t cap;
};

/* ---- states ------------------------------------------------------------------ */
/* the names are tessera/job.h's, in the order of enum sto_state */
#define state_names tsr_job_states
#define NSTATES TSR_JOB_NSTATES
_Static_assert(STO_QUEUED == 0 && STO_FAILED == TSR_JOB_NSTATES - 1, "job.h's order");

static bool state_valid(enum sto_state st)
{
    return (int)st >= 0 && (int)st < NSTATES;
}

const char *sto_state_name(enum sto_state st)
{
    return state_valid(st) ? state_names[st] : "unknown";
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
    return state_valid(st) && tsr_job_state_final(state_names[st]);
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
static int sql_err(sto_db *s, int rc, tsr_err *err, const char *ctx, const char *what)
{
    const char *msg = s->db != NULL ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc);
    return tsr_err_set(err, code_of(rc), "store: %s: %s: %s", ctx, what, msg);
}

/* Make room in a growing result array *v (elements of `size` bytes) for
 * element `count`; *cap is its capacity. */
static int grow(void **v, int *cap, int count, size_t size, const char *ctx, tsr_err *err)
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
static int detached(const char *ctx, tsr_err *err)
{
    return tsr_err_set(err, TSR_ESTALE, "store: %s: the store's file is no longer at its path, "
                       "and this connection to it is closed", ctx);
}

static int prep(sto_db *s, enum stmt_id id, sqlite3_stmt **out, const char *ctx, tsr_err *err)
{
    if (s->db == NULL)
        return detached(ctx, err);
    if (s->stmt[id] == NULL) {
        int rc = sqlite3_prepare_v3(s->db, stmt_sql[id], -1, SQLITE_PREPARE_PERSISTENT,
                                    &s->stmt[id], NULL);
        if (rc != SQLITE_OK) {
            s->stmt[id] = NULL;
            return sql_err(s, rc, err, ctx, "prepare statement");
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
static void release(sqlite3_stmt *st)
{
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
}

/* Step a statement that returns no rows, then release it. */
static int step_done(sto_db *s, sqlite3_stmt *st, const char *ctx, const char *what, tsr_err *err)
{
    int rc = sqlite3_step(st);
    int r = 0;
    if (rc != SQLITE_DONE)
        r = sql_err(s, rc == SQLITE_ROW ? SQLITE_ERROR : rc, err, ctx, what);
    release(st);
    return r;
}

/* Step a statement whose parameters were bound with result bind_rc (the
 * first failure among the binds, or SQLITE_OK). */
static int bound_step(sto_db *s, sqlite3_stmt *st, int bind_rc, const char *ctx,
                      const char *what, tsr_err *err)
{
    if (bind_rc != SQLITE_OK) {
        int r = sql_err(s, bind_rc, err, ctx, "bind");
        release(st);
        return r;
    }
    return step_done(s, st, ctx, what, err);
}

static int run_simple(sto_db *s, enum stmt_id id, const char *ctx, const char *what, tsr_err *err)
{
    sqlite3_stmt *st = NULL;
    int r = prep(s, id, &st, ctx, err);
    return r != 0 ? r : step_done(s, st, ctx, what, err);
}

/* Transactions.  Writes use BEGIN IMMEDIATE: the write lock is taken (or
 * waited for, under the busy timeout) before anything is read, so a write
 * transaction never fails half way with SQLITE_BUSY on lock upgrade.  Reads
 * use a deferred BEGIN, which in WAL mode never waits for the writer. */
static int tx_begin(sto_db *s, bool write, const char *ctx, tsr_err *err)
{
    /* a claimed connection writes only while its name leads to the file it
     * holds: a file deleted or replaced under the daemon gets nothing more
     * (prep checks the writes made outside a transaction) */
    int r = write && s->claim != NULL && s->db != NULL ? sto_claim_check(s->claim, err) : 0;
    return r != 0 ? r : run_simple(s, write ? S_BEGIN_IMMEDIATE : S_BEGIN, ctx,
                                   "begin transaction", err);
}

/* Roll back whatever transaction is open (SQLite may already have rolled
 * back on its own after some errors).  The caller's message is kept. */
static void tx_rollback(sto_db *s)
{
    if (sqlite3_get_autocommit(s->db))
        return;
    sqlite3_stmt *st = NULL;
    if (prep(s, S_ROLLBACK, &st, "rollback", NULL) == 0)
        step_done(s, st, "rollback", "rollback", NULL);
    if (!sqlite3_get_autocommit(s->db)) /* a cached ROLLBACK failed: try the plain way */
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

static int tx_commit(sto_db *s, const char *ctx, tsr_err *err)
{
    int r = run_simple(s, S_COMMIT, ctx, "commit", err);
    if (r != 0)
        tx_rollback(s);
    return r;
}

/* End a transaction: commit when r == 0, else roll back; returns the final
 * code. */
static int tx_end(sto_db *s, int r, const char *ctx, tsr_err *err)
{
    if (r == 0)
        return tx_commit(s, ctx, err);
    tx_rollback(s);
    return r;
}

/* The end of a read of rows in a read transaction: the last step's code
 * (rc, SQLITE_DONE when every row was read), the statement released and
 * the transaction ended; returns r or the first error. */
static int read_end(sto_db *s, sqlite3_stmt *st, int rc, int r, const char *ctx, tsr_err *err)
{
    if (r == 0 && rc != SQLITE_DONE)
        r = sql_err(s, rc, err, ctx, "select");
    release(st);
    return tx_end(s, r, ctx, err);
}

/* Length of a document of at most `max` bytes into *len; refused when
 * longer (strnlen never reads past max + 1 bytes). */
static int check_len(const char *doc, size_t max, size_t *len, const char *ctx, const char *what,
                     tsr_err *err)
{
    size_t n = strnlen(doc, max + 1);
    if (n > max)
        return tsr_err_set(err, TSR_ETOOBIG, "store: %s: %s is larger than %zu bytes", ctx, what,
                           max);
    *len = n;
    return 0;
}

static int bind_text(sqlite3_stmt *st, int i, const char *text, size_t len)
{
    if (text == NULL)
        return sqlite3_bind_null(st, i);
    return sqlite3_bind_text64(st, i, text, (sqlite3_uint64)len, SQLITE_STATIC, SQLITE_UTF8);
}

/* A copy of a text column, or NULL for SQL NULL; ENOMEM on failure. */
static int dup_column(sqlite3_stmt *st, int col, char **out)
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

static int parse_state_column(sqlite3_stmt *st, int col, enum sto_state *out, const char *ctx,
                              int64_t id, tsr_err *err)
{
    const char *name = (const char *)sqlite3_column_text(st, col);
    if (sto_state_parse(name, out) != 0)
        return tsr_err_set(err, TSR_EIO, "store: %s: job %lld has unknown state '%s'", ctx,
                           (long long)id, name != NULL ? name : "(null)");
    return 0;
}

/* One row of S_JOB_GET / S_JOB_LIST* into *j (zeroed first). */
static int read_job_row(sqlite3_stmt *st, sto_job *j, const char *ctx, tsr_err *err)
{
    memset(j, 0, sizeof *j);
    j->id = sqlite3_column_int64(st, 0);
    int r = parse_state_column(st, 1, &j->state, ctx, j->id, err);
    if (r != 0)
        return r;
    j->priority = sqlite3_column_int(st, 2);
    j->engine_version = sqlite3_column_int(st, 3);
    if (dup_column(st, 4, &j->puzzle) != 0 || dup_column(st, 5, &j->options) != 0 ||
        dup_column(st, 6, &j->error) != 0 || dup_column(st, 13, &j->stats) != 0) {
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
static int job_state(sto_db *s, int64_t id, enum sto_state *state, int *engine_version,
                     const char *ctx, tsr_err *err)
{
    sqlite3_stmt *st = NULL;
    int r = prep(s, S_JOB_STATE, &st, ctx, err);
    if (r != 0)
        return r;
    sqlite3_bind_int64(st, 1, id);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        r = parse_state_column(st, 0, state, ctx, id, err);
        if (engine_version != NULL)
            *engine_version = sqlite3_column_int(st, 1);
    } else if (rc == SQLITE_DONE) {
        r = tsr_err_set(err, TSR_EINVAL, "store: %s: no job %lld", ctx, (long long)id);
    } else {
        r = sql_err(s, rc, err, ctx, "read job state");
    }
    release(st);
    return r;
}

/* Begin a read transaction, check that the job exists and prepare statement
 * `which` with the job id bound to its first parameter: the existence check
 * and the rows read are one snapshot.  On failure the transaction is over;
 * on success the caller steps the statement and ends it with tx_end. */
static int read_job_rows(sto_db *s, int64_t job, enum stmt_id which, sqlite3_stmt **st,
                         const char *ctx, tsr_err *err)
{
    int r = tx_begin(s, false, ctx, err);
    if (r != 0)
        return r;
    enum sto_state cur;
    r = job_state(s, job, &cur, NULL, ctx, err);
    if (r == 0)
        r = prep(s, which, st, ctx, err);
    if (r != 0)
        return tx_end(s, r, ctx, err);
    sqlite3_bind_int64(*st, 1, job);
    return 0;
}

static int64_t now(void)
{
    return (int64_t)time(NULL);
}

/* ---- opening ----------------------------------------------------------------- */
static int pragma_int(sto_db *s, const char *sql, int *v, const char *ctx, tsr_err *err)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK)
        return sql_err(s, rc, err, ctx, sql);
    rc = sqlite3_step(st);
    int r = 0;
    if (rc == SQLITE_ROW)
        *v = sqlite3_column_int(st, 0);
    else
        r = sql_err(s, rc == SQLITE_DONE ? SQLITE_ERROR : rc, err, ctx, sql);
    sqlite3_finalize(st);
    return r;
}

static int exec_sql(sto_db *s, const char *sql, const char *ctx, const char *what, tsr_err *err)
{
    int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
    return rc == SQLITE_OK ? 0 : sql_err(s, rc, err, ctx, what);
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
static int identify(sto_db *s, int *version, const char *ctx, tsr_err *err)
{
    int app_id = 0, tables = 0;
    int r = pragma_int(s, "PRAGMA user_version", version, ctx, err);
    if (r == 0)
        r = pragma_int(s, "PRAGMA application_id", &app_id, ctx, err);
    if (r == 0)
        r = check_identity(*version, app_id, ctx, err);
    if (r == 0 && *version == 0)
        r = pragma_int(s, "SELECT count(*) FROM sqlite_master", &tables, ctx, err);
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
    int r = tx_begin(s, true, ctx, err);
    if (r != 0)
        return r;
    r = identify(s, &version, ctx, err);
    for (int v = version; r == 0 && v < STO_SCHEMA_VERSION; v++) {
        char what[48], sql[96];
        snprintf(what, sizeof what, "upgrade schema %d to %d", v, v + 1);
        r = exec_sql(s, migrations[v], ctx, what, err);
        /* Integers formatted from constants, not values from outside. */
        snprintf(sql, sizeof sql, "PRAGMA user_version = %d; PRAGMA application_id = %d", v + 1,
                 STO_APPLICATION_ID);
        if (r == 0)
            r = exec_sql(s, sql, ctx, what, err);
    }
    return tx_end(s, r, ctx, err);
}

/* Refuse, before SQLite sees it, a file that exists but is empty: SQLite
 * would take it for a new database, and the jobs it should hold would be
 * silently gone. */
static int not_empty(const char *path, const char *ctx, tsr_err *err)
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
static int usable_file(const char *path, const char *ctx, tsr_err *err)
{
    int r = not_empty(path, ctx, err);
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
    int r = usable_file(path, ctx, err);
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
        r = sql_err(s, rc, err, ctx, "open");
        goto fail;
    }
    if (sqlite3_db_readonly(s->db, "main") == 1) {
        r = tsr_err_set(err, TSR_EIO, "store: %s: the file is read-only (its permissions or its "
                        "file system): the store must be able to write it", ctx);
        goto fail;
    }
    sqlite3_extended_result_codes(s->db, 1);
    sqlite3_busy_timeout(s->db, STO_BUSY_TIMEOUT_MS);
    if ((r = exec_sql(s, "PRAGMA foreign_keys = ON", ctx, "enable foreign keys", err)) != 0)
        goto fail;
    /* Identify the file before changing anything in it (the first read
     * also names a file that is not a database). */
    if ((r = identify(s, &version, ctx, err)) != 0)
        goto fail;

    /* WAL must hold before the schema transaction. */
    rc = sqlite3_prepare_v2(s->db, "PRAGMA journal_mode = WAL", -1, &st, NULL);
    if (rc != SQLITE_OK) {
        r = sql_err(s, rc, err, ctx, "set WAL journal mode");
        goto fail;
    }
    rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        r = sql_err(s, rc == SQLITE_DONE ? SQLITE_ERROR : rc, err, ctx, "set WAL journal mode");
    } else {
        const char *mode = (const char *)sqlite3_column_text(st, 0);
        if (mode == NULL || strcmp(mode, "wal") != 0)
            r = tsr_err_set(err, TSR_EUNSUPP, "store: %s: cannot use WAL journal mode (got %s)",
                            ctx, mode != NULL ? mode : "nothing");
    }
    sqlite3_finalize(st);
    if (r != 0)
        goto fail;
    if ((r = exec_sql(s, "PRAGMA synchronous = FULL", ctx, "set synchronous", err)) != 0)
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
        return detached("backup", err);
    /* the log's frames into the file first: the copy is then one read of
     * it, and no frame of it is left for the name's next owner */
    int rc = sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
    if (rc != SQLITE_OK)
        return sql_err(s, rc, err, "backup", "checkpoint the write-ahead log");
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
        return detached("wal checkpoint", err);
    int rc = sqlite3_wal_checkpoint_v2(
        s->db, NULL, truncate ? SQLITE_CHECKPOINT_TRUNCATE : SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
    return rc == SQLITE_OK ? 0 : sql_err(s, rc, err, "wal checkpoint", "checkpoint");
}

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
        return sql_err(s, sqlite3_errcode(s->db), err, ctx, "invariant check");
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
                      int64_t batch, int64_t *id, const char *ctx, tsr_err *err)
{
    if (options == NULL)
        options = "{}";
    size_t plen = 0, olen = 0;
    int r = check_len(puzzle, STO_MAX_DOC, &plen, ctx, "the puzzle document", err);
    if (r == 0)
        r = check_len(options, STO_MAX_DOC, &olen, ctx, "the options document", err);
    sqlite3_stmt *st = NULL;
    if (r == 0)
        r = prep(s, batch ? S_JOB_INSERT_IN_BATCH : S_JOB_INSERT, &st, ctx, err);
    if (r != 0)
        return r;
    int rc = sqlite3_bind_int(st, 1, priority);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int(st, 2, s->engine_version);
    if (rc == SQLITE_OK)
        rc = bind_text(st, 3, puzzle, plen);
    if (rc == SQLITE_OK)
        rc = bind_text(st, 4, options, olen);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(st, 5, now());
    if (rc == SQLITE_OK && batch)
        rc = sqlite3_bind_int64(st, 6, batch);
    r = bound_step(s, st, rc, ctx, "insert job", err);
    if (r == 0)
        *id = sqlite3_last_insert_rowid(s->db);
#ifdef TSR_DEBUG
    if (r == 0)
        r = job_id_sane(s, *id, ctx, err);
#endif
    return r;
}

int sto_job_create(sto_db *s, const char *puzzle, const char *options, int priority, int64_t *id,
                   tsr_err *err)
{
    const char *ctx = "create job";
    if (s == NULL || puzzle == NULL || id == NULL)
        return tsr_err_set(err, TSR_EINVAL, "store: %s: missing database, puzzle or id pointer",
                           ctx);
    /* One statement: its own transaction, which takes the write lock
     * directly (waiting under the busy timeout). */
    return insert_job(s, puzzle, options, priority, 0, id, ctx, err);
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
    int r = prep(s, which, &st, ctx, err);
    if (r != 0)
        return r;
    sqlite3_bind_int64(st, 1, id);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        r = read(st, out, ctx, err);
    else if (rc == SQLITE_DONE)
        r = tsr_err_set(err, TSR_EINVAL, "store: no %s %lld", what, (long long)id);
    else
        r = sql_err(s, rc, err, ctx, "select");
    release(st);
    return r;
}

static int read_job_any(sqlite3_stmt *st, void *out, const char *ctx, tsr_err *err)
{
    return read_job_row(st, out, ctx, err);
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
    if (filter != NULL && !state_valid(*filter))
        return tsr_err_set(err, TSR_EINVAL, "store: %s: bad state filter %d", ctx, (int)*filter);
    sqlite3_stmt *st = NULL;
    int r = prep(s, filter != NULL ? S_JOB_LIST_STATE : S_JOB_LIST, &st, ctx, err);
    if (r != 0)
        return r;
    sqlite3_bind_int64(st, 1, after_id);
    sqlite3_bind_int(st, 2, limit);
    if (filter != NULL)
        sqlite3_bind_text(st, 3, state_names[*filter], -1, SQLITE_STATIC);

    sto_job *jobs = NULL;
    int count = 0, cap = 0, rc = SQLITE_DONE;
    while (r == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        if ((r = grow((void **)&jobs, &cap, count, sizeof *jobs, ctx, err)) != 0)
            break;
        r = read_job_row(st, &jobs[count], ctx, err);
        if (r == 0)
            count++;
    }
    if (r == 0 && rc != SQLITE_DONE)
        r = sql_err(s, rc, err, ctx, "select");
    release(st);
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
    if (!state_valid(state))
        return tsr_err_set(err, TSR_EINVAL, "store: %s: bad state %d", ctx, (int)state);
    size_t elen = 0;
    int r = error != NULL ? check_len(error, STO_MAX_DOC, &elen, ctx, "the error text", err) : 0;
    if (r != 0 || (r = tx_begin(s, true, ctx, err)) != 0)
        return r;

    enum sto_state cur;
    r = job_state(s, id, &cur, NULL, ctx, err);
    if (r == 0 && sto_state_final(cur)) {
        /* I3: final states are final; repeating one is a harmless no-op. */
        if (cur != state)
            r = tsr_err_set(err, TSR_EINVAL, "store: %s: the job is %s, which is final", ctx,
                            state_names[cur]);
        return tx_end(s, r, ctx, err);
    }
    sqlite3_stmt *st = NULL;
    if (r == 0)
        r = prep(s, S_JOB_SET_STATE, &st, ctx, err);
    if (r == 0) {
        sqlite3_bind_int64(st, 1, id);
        sqlite3_bind_text(st, 2, state_names[state], -1, SQLITE_STATIC);
        int rc = bind_text(st, 3, error, elen);
        sqlite3_bind_int64(st, 4, now());
        r = bound_step(s, st, rc, ctx, "update job", err);
    }
    if (r == 0 && sto_state_final(state) && (r = prep(s, S_FRONTIER_CLEAR, &st, ctx, err)) == 0) {
        sqlite3_bind_int64(st, 1, id);
        r = step_done(s, st, ctx, "drop frontier", err);
    }
    return tx_end(s, r, ctx, err);
}

int sto_job_set_options(sto_db *s, int64_t id, const char *options, tsr_err *err)
{
    char ctx[64];
    snprintf(ctx, sizeof ctx, "set options of job %lld", (long long)id);
    if (s == NULL || options == NULL)
        return tsr_err_set(err, TSR_EINVAL, "store: %s: no database or options", ctx);
    size_t olen = 0;
    int r = check_len(options, STO_MAX_DOC, &olen, ctx, "the options document", err);
    if (r != 0 || (r = tx_begin(s, true, ctx, err)) != 0)
        return r;
    enum sto_state cur;
    r = job_state(s, id, &cur, NULL, ctx, err);
    if (r == 0 && sto_state_final(cur))
        r = tsr_err_set(err, TSR_EINVAL, "store: %s: the job is %s, which is final", ctx,
                        state_names[cur]);
    sqlite3_stmt *st = NULL;
    if (r == 0 && (r = prep(s, S_JOB_SET_OPTIONS, &st, ctx, err)) == 0) {
        sqlite3_bind_int64(st, 1, id);
        int rc = bind_text(st, 2, options, olen);
        sqlite3_bind_int64(st, 3, now());
        r = bound_step(s, st, rc, ctx, "update job", err);
    }
    return tx_end(s, r, ctx, err);
}

int sto_job_delete(sto_db *s, int64_t id, tsr_err *err)
{
    char ctx[64];
    snprintf(ctx, sizeof ctx, "delete job %lld", (long long)id);
    if (s == NULL)
        return tsr_err_set(err, TSR_EINVAL, "store: %s: no database", ctx);
    int r = tx_begin(s, true, ctx, err);
    if (r != 0)
        return r;
    enum sto_state cur;
    r = job_state(s, id, &cur, NULL, ctx, err);
    if (r == 0 && !sto_state_final(cur))
        r = tsr_err_set(err, TSR_EINVAL,
                        "store: %s: the job is %s; only completed, cancelled or failed jobs can "
                        "be deleted",
                        ctx, state_names[cur]);
    /* Explicit deletes (the foreign keys' cascade is the backstop), children
     * first. */
    static const enum stmt_id steps[] = {S_SOLUTIONS_CLEAR, S_CHUNKS_CLEAR, S_FRONTIER_CLEAR,
                                         S_JOB_DELETE};
    for (size_t i = 0; r == 0 && i < sizeof steps / sizeof steps[0]; i++) {
        sqlite3_stmt *st = NULL;
        if ((r = prep(s, steps[i], &st, ctx, err)) == 0) {
            sqlite3_bind_int64(st, 1, id);
            r = step_done(s, st, ctx, "delete", err);
        }
    }
    return tx_end(s, r, ctx, err);
}

int sto_jobs_unfinished(sto_db *s, int64_t **ids, int *n, tsr_err *err)
{
    const char *ctx = "list unfinished jobs";
    if (s == NULL || ids == NULL || n == NULL)
        return tsr_err_set(err, TSR_EINVAL, "store: %s: missing database or result", ctx);
    *ids = NULL;
    *n = 0;
    sqlite3_stmt *st = NULL;
    int r = prep(s, S_JOBS_UNFINISHED, &st, ctx, err);
    if (r != 0)
        return r;
    int64_t *v = NULL;
    int count = 0, cap = 0, rc = SQLITE_DONE;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if ((r = grow((void **)&v, &cap, count, sizeof *v, ctx, err)) != 0)
            break;
        v[count++] = sqlite3_column_int64(st, 0);
    }
    if (r == 0 && rc != SQLITE_DONE)
        r = sql_err(s, rc, err, ctx, "select");
    release(st);
    if (r != 0) {
        free(v);
        return r;
    }
    *ids = v;
    *n = count;
    return 0;
}

/* ---- batches of jobs ----------------------------------------------------------------
 * A batch (the API's /api/v1/batches; not an sto_batch, which is a
 * checkpoint's solutions) is a row of its own and the jobs whose batch
 * column names it, created together in one transaction. */

void sto_group_clear(sto_group *g)
{
    if (g == NULL)
        return;
    free(g->name);
    free(g->spec);
    memset(g, 0, sizeof *g);
}

void sto_groups_free(sto_group *g, int n)
{
    if (g == NULL)
        return;
    for (int i = 0; i < n; i++)
        sto_group_clear(&g[i]);
    free(g);
}

int sto_group_create(sto_db *s, const char *name, const char *spec, int n,
                     const char *const *puzzles, const char *const *options,
                     const int *priorities, int64_t *group, int64_t *ids, tsr_err *err)
{
    const char *ctx = "create batch";
    if (s == NULL || spec == NULL || puzzles == NULL || group == NULL || ids == NULL)
        return tsr_err_set(err, TSR_EINVAL, "store: %s: missing database, spec or result", ctx);
    if (n < 1 || n > STO_MAX_GROUP)
        return tsr_err_set(err, TSR_ETOOBIG, "store: %s: %d jobs is not in 1..%d", ctx, n,
                           STO_MAX_GROUP);
    size_t slen = 0, nlen = 0;
    int r = check_len(spec, STO_MAX_DOC, &slen, ctx, "the batch's spec", err);
    if (r == 0 && name != NULL)
        r = check_len(name, STO_MAX_DOC, &nlen, ctx, "the batch's name", err);
    if (r == 0)
        r = tx_begin(s, true, ctx, err);
    if (r != 0)
        return r;
    sqlite3_stmt *st = NULL;
    r = prep(s, S_BATCH_INSERT, &st, ctx, err);
    if (r == 0) {
        int rc = name ? bind_text(st, 1, name, nlen) : sqlite3_bind_null(st, 1);
        if (rc == SQLITE_OK)
            rc = bind_text(st, 2, spec, slen);
        if (rc == SQLITE_OK)
            rc = sqlite3_bind_int64(st, 3, now());
        r = bound_step(s, st, rc, ctx, "insert batch", err);
    }
    int64_t g = r == 0 ? sqlite3_last_insert_rowid(s->db) : 0;
    for (int i = 0; r == 0 && i < n; i++)
        r = insert_job(s, puzzles[i], options ? options[i] : NULL, priorities ? priorities[i] : 0,
                       g, &ids[i], ctx, err);
    r = tx_end(s, r, ctx, err);
    if (r == 0)
        *group = g;
    return r;
}

static int read_group_row(sqlite3_stmt *st, sto_group *g, const char *ctx, tsr_err *err)
{
    memset(g, 0, sizeof *g);
    g->id = sqlite3_column_int64(st, 0);
    g->created = sqlite3_column_int64(st, 3);
    if (dup_column(st, 1, &g->name) != 0 || dup_column(st, 2, &g->spec) != 0) {
        sto_group_clear(g);
        return tsr_err_set(err, TSR_ENOMEM, "store: %s: out of memory", ctx);
    }
    return 0;
}

static int read_group_any(sqlite3_stmt *st, void *out, const char *ctx, tsr_err *err)
{
    return read_group_row(st, out, ctx, err);
}

int sto_group_get(sto_db *s, int64_t id, sto_group *out, tsr_err *err)
{
    return get_by_id(s, S_BATCH_GET, "batch", id, out, sizeof *out, read_group_any, err);
}

int sto_group_list(sto_db *s, int64_t after_id, int limit, sto_group **out, int *n,
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
    int r = prep(s, S_BATCH_LIST, &st, ctx, err);
    if (r != 0)
        return r;
    sqlite3_bind_int64(st, 1, after_id);
    sqlite3_bind_int(st, 2, limit);
    sto_group *v = NULL;
    int count = 0, cap = 0, rc = SQLITE_DONE;
    while (r == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        if ((r = grow((void **)&v, &cap, count, sizeof *v, ctx, err)) != 0)
            break;
        if ((r = read_group_row(st, &v[count], ctx, err)) == 0)
            count++;
    }
    if (r == 0 && rc != SQLITE_DONE)
        r = sql_err(s, rc, err, ctx, "select");
    release(st);
    if (r != 0) {
        sto_groups_free(v, count);
        return r;
    }
    *out = v;
    *n = count;
    return 0;
}

/* ---- classes: records, batches, chunks ------------------------------------------
 * A class record is unsigned LEB128 varints: n, count, the first image id,
 * then each next id minus the one before (ids are strictly increasing, so
 * the steps are >= 1 and mostly one byte).  A batch is records back to
 * back; a chunk is up to STO_CHUNK_CLASSES records of one batch. */

static void put_varint(unsigned char *p, size_t *pos, uint64_t v)
{
    while (v >= 0x80) {
        p[(*pos)++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    p[(*pos)++] = (unsigned char)v;
}

/* A varint of at most 35 bits at p[*pos..len); false when cut short or too
 * long (every value stored fits in an int). */
static bool get_varint(const unsigned char *p, size_t len, size_t *pos, uint64_t *v)
{
    *v = 0;
    for (int shift = 0; shift < 35; shift += 7) {
        if (*pos >= len)
            return false;
        unsigned char b = p[(*pos)++];
        *v |= (uint64_t)(b & 0x7f) << shift;
        if ((b & 0x80) == 0)
            return true;
    }
    return false;
}

int sto_batch_add(sto_batch *b, const int *images, int n, int count, int keep)
{
    if (n < 0 || n > STO_MAX_TASK_IMAGES || count < 1 || keep < 0 || keep > count ||
        (n > 0 && images == NULL))
        return TSR_EINVAL;
    for (int i = 0; i < n; i++)
        if (images[i] < 0 || (i > 0 && images[i] <= images[i - 1]))
            return TSR_EINVAL;
    b->found += count;
    if (keep == 0)
        return 0;
    /* room for the longest record (10 bytes a varint), written in place */
    base_buf *r = &b->records;
    size_t longest = 10 * ((size_t)n + 2);
    if (base_grow((void **)&r->data, &r->cap, r->len + longest - 1, 1, 4096, 0) != 0) {
        b->found -= count;
        return TSR_ENOMEM;
    }
    unsigned char *p = (unsigned char *)r->data;
    put_varint(p, &r->len, (uint64_t)n);
    put_varint(p, &r->len, (uint64_t)keep);
    for (int i = 0; i < n; i++)
        put_varint(p, &r->len, (uint64_t)(images[i] - (i > 0 ? images[i - 1] : 0)));
    b->classes++;
    b->stored += keep;
    return 0;
}

int sto_batch_append(sto_batch *b, const sto_batch *more)
{
    if (base_buf_add(&b->records, more->records.data, more->records.len) != 0)
        return TSR_ENOMEM;
    b->classes += more->classes;
    b->stored += more->stored;
    b->found += more->found;
    return 0;
}

void sto_batch_free(sto_batch *b)
{
    if (b != NULL) {
        base_buf_free(&b->records);
        *b = (sto_batch){0};
    }
}

/* Read the record at data[*pos..len): its size and count, and its ids into
 * ids (when not NULL, room for STO_MAX_TASK_IMAGES).  False when it is not
 * a well-formed record. */
static bool read_record(const unsigned char *data, size_t len, size_t *pos, int *n, int *count,
                        int *ids)
{
    uint64_t vn, vc, v, id = 0;
    if (!get_varint(data, len, pos, &vn) || !get_varint(data, len, pos, &vc) ||
        vn > STO_MAX_TASK_IMAGES || vc < 1 || vc > INT_MAX)
        return false;
    for (uint64_t i = 0; i < vn; i++) {
        if (!get_varint(data, len, pos, &v) || (i > 0 && v == 0) || (id += v) > INT_MAX)
            return false;
        if (ids != NULL)
            ids[i] = (int)id;
    }
    *n = (int)vn;
    *count = (int)vc;
    return true;
}

/* CRC-32 (IEEE 802.3, the zlib one), continuing from crc. */
static uint32_t crc32_update(uint32_t crc, const unsigned char *p, size_t len)
{
    static uint32_t table[256];
    static bool ready; /* a benign race: every thread computes the same table */
    if (!ready) {
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++)
                c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
            table[i] = c;
        }
        ready = true;
    }
    crc = ~crc;
    for (size_t i = 0; i < len; i++)
        crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
    return ~crc;
}

/* A chunk's check value: covers which job and where, not only the bytes,
 * so a chunk copied into another place does not pass either. */
static uint32_t chunk_crc(int64_t job, int64_t first, const unsigned char *data, size_t len)
{
    unsigned char head[16];
    for (int i = 0; i < 8; i++) {
        head[i] = (unsigned char)((uint64_t)job >> (8 * i));
        head[8 + i] = (unsigned char)((uint64_t)first >> (8 * i));
    }
    return crc32_update(crc32_update(0, head, sizeof head), data, len);
}

/* Insert the batch as chunks numbered from *first; *first ends past them. */
static int insert_chunks(sto_db *s, int64_t job, const sto_batch *b, int64_t *first,
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
            if (!read_record(data, len, &pos, &n, &count, NULL))
                return tsr_err_set(err, TSR_EINVAL, "store: %s: class %lld of the batch is "
                                   "malformed", ctx, (long long)(classes + nclass));
            nsol += count;
            nclass++;
        }
        sqlite3_stmt *st = NULL;
        if ((r = prep(s, S_CHUNK_INSERT, &st, ctx, err)) != 0)
            break;
        sqlite3_bind_int64(st, 1, job);
        sqlite3_bind_int64(st, 2, *first);
        sqlite3_bind_int64(st, 3, nsol);
        sqlite3_bind_int(st, 4, nclass);
        int rc = sqlite3_bind_blob64(st, 5, data + start, pos - start, SQLITE_STATIC);
        if (rc == SQLITE_OK)
            rc = sqlite3_bind_int64(st, 6, chunk_crc(job, *first, data + start, pos - start));
        r = bound_step(s, st, rc, ctx, "insert chunk", err);
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
        r = prep(s, S_FRONTIER_INSERT, &st, ctx, err);
    if (r != 0)
        return r;
    sqlite3_bind_int64(st, 1, job);
    sqlite3_bind_int(st, 2, i);
    /* A NULL pointer would bind SQL NULL: an empty set is a zero-length blob. */
    int rc = len == 0 ? sqlite3_bind_zeroblob(st, 3, 0)
                      : sqlite3_bind_blob64(st, 3, s->buf, len, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_double(st, 4, t->weight);
    return bound_step(s, st, rc, ctx, "insert task", err);
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
        return check_len(p->stats, STO_MAX_DOC, slen, ctx, "the statistics document", err);
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
        return sql_err(s, sqlite3_errcode(s->db), err, ctx, "invariant check");
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
                           const sto_batch *b, const char *ctx, tsr_err *err)
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
                           "frontier tasks", ctx, id, state_names[f.state], (long long)f.frontier);
    if (f.crcs != before->crcs)
        return tsr_err_set(err, TSR_EIO, "store: %s: I4 broken for job %lld: the chunks of "
                           "solutions 1..%lld changed", ctx, id, (long long)before->stored);
    return 0;
}
#endif

int sto_checkpoint(sto_db *s, int64_t job, const sto_task *tasks, int ntasks,
                   const sto_batch *batch, const sto_progress *prog,
                   const enum sto_state *new_state, tsr_err *err)
{
    char ctx[64];
    snprintf(ctx, sizeof ctx, "checkpoint job %lld", (long long)job);
    if (s == NULL)
        return tsr_err_set(err, TSR_EINVAL, "store: %s: no database", ctx);
    /* Cheap checks first; each task and solution is checked as it is
     * written, and a failure there rolls the whole transaction back. */
    static const sto_batch none = {0};
    if (batch == NULL)
        batch = &none;
    if (ntasks < 0 || (ntasks > 0 && tasks == NULL) || batch->classes < 0 || batch->stored < 0 ||
        batch->found < batch->stored || (batch->records.len > 0 && batch->records.data == NULL))
        return tsr_err_set(err, TSR_EINVAL, "store: %s: bad task array or solution batch", ctx);
    if (ntasks > STO_MAX_TASKS)
        return tsr_err_set(err, TSR_ETOOBIG, "store: %s: %d tasks (at most %d)", ctx, ntasks,
                           STO_MAX_TASKS);
    if (batch->records.len > STO_MAX_BATCH)
        return tsr_err_set(err, TSR_ETOOBIG, "store: %s: a batch of %zu bytes (at most %d)", ctx,
                           batch->records.len, STO_MAX_BATCH);
    if (new_state != NULL && !state_valid(*new_state))
        return tsr_err_set(err, TSR_EINVAL, "store: %s: bad state %d", ctx, (int)*new_state);
    if (new_state != NULL && sto_state_final(*new_state) && ntasks > 0)
        return tsr_err_set(err, TSR_EINVAL, "store: %s: a %s job cannot keep a frontier (%d tasks)",
                           ctx, state_names[*new_state], ntasks);
    size_t slen = 0;
    int r = check_progress(prog, ctx, &slen, err);
    if (r != 0 || (r = tx_begin(s, true, ctx, err)) != 0)
        return r;

    enum sto_state cur;
    int version;
    r = job_state(s, job, &cur, &version, ctx, err);
    if (r == 0 && sto_state_final(cur))
        r = tsr_err_set(err, TSR_EINVAL, "store: %s: the job is %s; it takes no more checkpoints",
                        ctx, state_names[cur]);
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
    if (r == 0 && (r = prep(s, S_FRONTIER_CLEAR, &st, ctx, err)) == 0) {
        sqlite3_bind_int64(st, 1, job);
        r = step_done(s, st, ctx, "drop frontier", err);
    }
    for (int i = 0; r == 0 && i < ntasks; i++)
        r = insert_task(s, job, &tasks[i], i, ctx, err);
    /* I1: chunks numbered from the stored count, which moves with them */
    int64_t first = 1;
    if (r == 0 && batch->records.len > 0 && (r = prep(s, S_JOB_STORED, &st, ctx, err)) == 0) {
        sqlite3_bind_int64(st, 1, job);
        if (sqlite3_step(st) == SQLITE_ROW)
            first = sqlite3_column_int64(st, 0) + 1;
        else
            r = sql_err(s, sqlite3_errcode(s->db), err, ctx, "read stored count");
        release(st);
    }
    if (r == 0 && batch->records.len > 0)
        r = insert_chunks(s, job, batch, &first, ctx, err);
    if (r == 0 && batch->records.len == 0 && (batch->classes != 0 || batch->stored != 0))
        r = tsr_err_set(err, TSR_EINVAL, "store: %s: an empty batch of %lld classes", ctx,
                        (long long)batch->classes);
    if (r == 0 && (r = prep(s, S_JOB_PROGRESS, &st, ctx, err)) == 0) {
        sqlite3_bind_int64(st, 1, job);
        sqlite3_bind_int64(st, 2, batch->found);
        sqlite3_bind_int64(st, 9, batch->stored);
        int rc = SQLITE_OK;
        if (prog != NULL) {
            sqlite3_bind_int64(st, 3, (int64_t)prog->nodes); /* the uint64 bit pattern */
            sqlite3_bind_double(st, 4, prog->fraction);
            sqlite3_bind_double(st, 5, prog->seconds);
            rc = bind_text(st, 6, prog->stats, slen);
        }
        if (new_state != NULL)
            sqlite3_bind_text(st, 7, state_names[*new_state], -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 8, now());
        r = bound_step(s, st, rc, ctx, "update job", err);
    }
#ifdef TSR_DEBUG
    if (r == 0)
        r = checkpoint_sane(s, job, &before, ntasks, batch, ctx, err);
#endif
    return tx_end(s, r, ctx, err);
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
    int r = read_job_rows(s, job, S_FRONTIER_LOAD, &st, ctx, err);
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
        if ((r = grow((void **)&v, &cap, count, sizeof *v, ctx, err)) != 0)
            break;
        r = decode_task(st, &v[count], ctx, count, err);
        if (r != 0)
            break;
        count++;
    }
    r = read_end(s, st, rc, r, ctx, err);
    if (r != 0) {
        sto_tasks_free(v, count);
        return r;
    }
    *tasks = v;
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
static int check_page(int64_t after, int limit, const char *ctx, tsr_err *err)
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
    int pr = check_page(after, limit, ctx, err);
    if (pr != 0)
        return pr;
    sqlite3_stmt *st = NULL;
    int r = read_job_rows(s, job, S_SOLUTIONS_PAGE, &st, ctx, err);
    if (r != 0)
        return r;
    sqlite3_bind_int64(st, 2, after);
    sqlite3_bind_int(st, 3, limit);
    char **b = NULL;
    int64_t *q = NULL;
    int count = 0, capb = 0, capq = 0, rc = SQLITE_DONE;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if ((r = grow((void **)&b, &capb, count, sizeof *b, ctx, err)) != 0 ||
            (r = grow((void **)&q, &capq, count, sizeof *q, ctx, err)) != 0)
            break;
        q[count] = sqlite3_column_int64(st, 0);
        if (dup_column(st, 1, &b[count]) != 0 || b[count] == NULL) {
            r = tsr_err_set(err, TSR_ENOMEM, "store: %s: out of memory", ctx);
            break;
        }
        count++;
    }
    r = read_end(s, st, rc, r, ctx, err);
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
static int classes_grow(sto_classes *c, int caps[4], int n, const char *ctx, tsr_err *err)
{
    int used = c->start[c->n], r;
    if (used > INT_MAX / 4)
        return tsr_err_set(err, TSR_ETOOBIG, "store: %s: too many image ids", ctx);
    if ((r = grow((void **)&c->first, &caps[0], c->n, sizeof *c->first, ctx, err)) != 0 ||
        (r = grow((void **)&c->count, &caps[1], c->n, sizeof *c->count, ctx, err)) != 0 ||
        (r = grow((void **)&c->start, &caps[2], c->n + 1, sizeof *c->start, ctx, err)) != 0)
        return r;
    return n > 0 ? grow((void **)&c->ids, &caps[3], used + n - 1, sizeof *c->ids, ctx, err) : 0;
}

/* Decode one chunk row, checking its check value and its totals, keeping
 * the classes that hold solutions in (after, last]. */
static int decode_chunk(sqlite3_stmt *st, int64_t job, int64_t after, int64_t last,
                        sto_classes *c, int caps[4], int *scratch, const char *ctx, tsr_err *err)
{
    int64_t first = sqlite3_column_int64(st, 0), nsol = sqlite3_column_int64(st, 1);
    int nclass = sqlite3_column_int(st, 2);
    const unsigned char *data = sqlite3_column_blob(st, 3);
    size_t len = (size_t)sqlite3_column_bytes(st, 3);
    uint32_t crc = (uint32_t)sqlite3_column_int64(st, 4);
    if (len > 0 && data == NULL)
        return tsr_err_set(err, TSR_ENOMEM, "store: %s: out of memory", ctx);
    if (chunk_crc(job, first, data, len) != crc)
        return tsr_err_set(err, TSR_EIO, "store: %s: the chunk of job %lld from solution %lld "
                           "is damaged (check value mismatch)", ctx, (long long)job,
                           (long long)first);
    size_t pos = 0;
    int64_t at = first, seen = 0;
    int r = 0;
    for (int k = 0; k < nclass && r == 0; k++) {
        int n, count;
        if (!read_record(data, len, &pos, &n, &count, scratch))
            break;
        seen++;
        if (at + count > after + 1 && at <= last) {
            if ((r = classes_grow(c, caps, n, ctx, err)) != 0)
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
    int pr = check_page(after, limit, ctx, err);
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
    int r = read_job_rows(s, job, S_CHUNKS_READ, &st, ctx, err);
    int caps[4] = {0, 0, 1, 0}; /* start has its first element */
    if (r == 0) {
        sqlite3_bind_int64(st, 2, after + 1);
        sqlite3_bind_int64(st, 3, after + limit);
        int rc;
        while (r == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW)
            r = decode_chunk(st, job, after, after + limit, out, caps, scratch, ctx, err);
        r = read_end(s, st, rc, r, ctx, err);
    }
    free(scratch);
    if (r != 0)
        sto_classes_free(out);
    return r;
}

/* ---- the claim on a store file -------------------------------------------------
 * The claim is an exclusive flock(2) on the store file itself, through a
 * descriptor the claim keeps open.  A lock belongs to the file, not to the
 * name it was opened by: a symbolic link, a hard link or a bind mount of a
 * claimed file meets the same lock.  flock locks are independent of the
 * POSIX record locks SQLite takes on the same file, so SQLite's own
 * locking and every reader beside the daemon are left alone.
 *
 * Beside the file, PATH.owner says who holds it (the pid) and which file
 * and write-ahead log it held (device and inode numbers); it is written
 * once the daemon's connections are open (sto_claim_note_wal) and removed
 * when the claim is released cleanly.  A PATH.owner left by a holder that
 * died names the log that holder wrote, and lets the next claim tell a log
 * of this file from one that outlived a file moved away under it. */

/* The pid holding a flock on file (dev, ino), from /proc/locks; 0 when
 * it cannot be told. */
static long flock_holder(dev_t dev, ino_t ino)
{
    FILE *f = fopen("/proc/locks", "r");
    char line[256], kind[16], mode[16];
    long pid = 0, found = 0;
    unsigned maj, mnr;
    unsigned long long node;
    while (f != NULL && found == 0 && fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "%*d: %15s %*s %15s %ld %x:%x:%llu", kind, mode, &pid, &maj, &mnr,
                   &node) == 6 &&
            strcmp(kind, "FLOCK") == 0 && strcmp(mode, "WRITE") == 0 && maj == major(dev) &&
            mnr == minor(dev) && node == (unsigned long long)ino)
            found = pid;
    if (f != NULL)
        fclose(f);
    return found;
}

/* PATH.owner's record of the file and log a holder held: 0 when it names
 * both, TSR_EINVAL when there is none or it does not parse. */
static int owner_read(const char *owner, unsigned long long file[2], unsigned long long wal[2])
{
    FILE *f = fopen(owner, "r");
    char line[128];
    int have = 0;
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        have |= sscanf(line, "store %llu:%llu", &file[0], &file[1]) == 2;
        have |= (sscanf(line, "wal %llu:%llu", &wal[0], &wal[1]) == 2) << 1;
    }
    if (f != NULL)
        fclose(f);
    return have == 3 ? 0 : TSR_EINVAL;
}

/* Write PATH.owner anew: pid, the claimed file and, when wal is not NULL,
 * its log.  Best effort: it informs, it does not lock. */
static void owner_write(const sto_claim *c, const struct stat *wal)
{
    char tmp[PATH_MAX + 16];
    snprintf(tmp, sizeof tmp, "%s.tmp", c->owner);
    FILE *f = fopen(tmp, "w");
    if (f == NULL)
        return;
    fprintf(f, "pid %ld\nstore %llu:%llu\n", (long)getpid(), (unsigned long long)c->dev,
            (unsigned long long)c->ino);
    if (wal != NULL)
        fprintf(f, "wal %llu:%llu\n", (unsigned long long)wal->st_dev,
                (unsigned long long)wal->st_ino);
    if (fclose(f) != 0 || rename(tmp, c->owner) != 0)
        unlink(tmp);
}

/* A log beside the file that another file wrote: the last holder's
 * PATH.owner names this log but another store file, so the file was
 * replaced while the log stayed (mv onto the name, then a crash).  SQLite
 * would replay that log onto this file and corrupt it; it is moved aside
 * (and its index removed, which SQLite rebuilds), and c->note says so. */
static void set_aside_foreign_wal(sto_claim *c)
{
    unsigned long long file[2], wal[2];
    char log[PATH_MAX + 8];
    struct stat sb;
    snprintf(log, sizeof log, "%s-wal", c->path);
    if (owner_read(c->owner, file, wal) != 0 || stat(log, &sb) != 0 || sb.st_size == 0)
        return;
    bool same_log = (unsigned long long)sb.st_dev == wal[0] &&
                    (unsigned long long)sb.st_ino == wal[1];
    bool same_file = (unsigned long long)c->dev == file[0] &&
                     (unsigned long long)c->ino == file[1];
    if (!same_log || same_file)
        return; /* this file's own log, or a log that came with it */
    char aside[PATH_MAX + 48], shm[PATH_MAX + 8];
    snprintf(aside, sizeof aside, "%s.foreign-%lld", log, (long long)time(NULL));
    snprintf(shm, sizeof shm, "%s-shm", c->path);
    if (rename(log, aside) == 0) {
        unlink(shm);
        snprintf(c->note, sizeof c->note, "%s belonged to the file that had the name %s before "
                 "(it was replaced while a tesserad held it): not replayed onto this file, "
                 "moved to %s", log, c->path, aside);
    } else {
        snprintf(c->note, sizeof c->note, "%s belonged to another file and could not be moved "
                 "aside (%s)", log, strerror(errno));
    }
}

int sto_claim_take(const char *path, sto_claim **out, tsr_err *err)
{
    *out = NULL;
    char ctx[PATH_MAX + 16];
    snprintf(ctx, sizeof ctx, "open %s", path);
    int r = usable_file(path, ctx, err);
    if (r != 0)
        return r;
    sto_claim *c = calloc(1, sizeof *c);
    if (c == NULL)
        return tsr_err_set(err, TSR_ENOMEM, "store: claim %s: out of memory", path);
    if (snprintf(c->path, sizeof c->path, "%s", path) >= (int)sizeof c->path ||
        snprintf(c->owner, sizeof c->owner, "%s.owner", path) >= (int)sizeof c->owner) {
        free(c);
        return tsr_err_set(err, TSR_ETOOBIG, "store: claim %s: path too long", path);
    }
    c->fd = open(path, O_RDWR | O_CLOEXEC);
    if (c->fd < 0 && errno == ENOENT) {
        /* a new store: SQLite creates it (two daemons doing so at once
         * meet in SQLite's own locks), then it is claimed like any other */
        sto_db *s = NULL;
        r = sto_open(path, 0, &s, err);
        sto_close(s);
        if (r != 0) {
            free(c);
            return r;
        }
        c->fd = open(path, O_RDWR | O_CLOEXEC);
    }
    struct stat fs, ps;
    if (c->fd < 0 || fstat(c->fd, &fs) != 0) {
        r = tsr_err_set(err, TSR_EIO, "store: claim %s: %s", path, strerror(errno));
        goto fail;
    }
    if (!S_ISREG(fs.st_mode)) {
        r = tsr_err_set(err, TSR_EIO, "store: claim %s: not a regular file", path);
        goto fail;
    }
    if (flock(c->fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        if (e != EWOULDBLOCK) {
            r = tsr_err_set(err, TSR_EIO, "store: claim %s: cannot lock it: %s", path,
                            strerror(e));
            goto fail;
        }
        long pid = flock_holder(fs.st_dev, fs.st_ino);
        char who[32] = "unknown";
        if (pid > 0)
            snprintf(who, sizeof who, "%ld", pid);
        r = tsr_err_set(err, TSR_EBUSY, "store: %s is in use by another tesserad (pid %s), "
                        "perhaps under another name (a link to the same file): stop it "
                        "first, or give this one another --db", path, who);
        goto fail;
    }
    /* the name must still lead to the file locked */
    if (stat(path, &ps) != 0 || ps.st_dev != fs.st_dev || ps.st_ino != fs.st_ino) {
        r = tsr_err_set(err, TSR_EBUSY, "store: claim %s: the file was replaced while it was "
                        "being claimed; try again", path);
        goto fail;
    }
    c->dev = fs.st_dev;
    c->ino = fs.st_ino;
    set_aside_foreign_wal(c);
    owner_write(c, NULL);
    *out = c;
    return 0;
fail:
    if (c->fd >= 0)
        close(c->fd);
    free(c);
    return r;
}

int sto_claim_check(const sto_claim *c, tsr_err *err)
{
    struct stat fs, ps;
    const char *what = NULL;
    if (fstat(c->fd, &fs) == 0 && fs.st_nlink == 0)
        what = "deleted";
    else if (stat(c->path, &ps) != 0)
        what = errno == ENOENT ? "deleted or moved away" : "out of reach";
    else if (ps.st_dev != c->dev || ps.st_ino != c->ino)
        what = "replaced by another file";
    if (what == NULL)
        return 0;
    return tsr_err_set(err, TSR_ESTALE, "store: %s is no longer the file this tesserad holds: "
                       "it was %s; nothing more is written to it", c->path, what);
}

const char *sto_claim_path(const sto_claim *c)
{
    return c->path;
}

const char *sto_claim_note(const sto_claim *c)
{
    return c->note;
}

void sto_claim_note_wal(const sto_claim *c)
{
    char log[PATH_MAX + 8];
    struct stat sb;
    snprintf(log, sizeof log, "%s-wal", c->path);
    if (sto_claim_check(c, NULL) == 0 && stat(log, &sb) == 0)
        owner_write(c, &sb);
}

void sto_claim_release(sto_claim *c)
{
    if (c == NULL)
        return;
    /* the record goes with a clean end; a name that leads elsewhere now
     * is left to its new file */
    if (sto_claim_check(c, NULL) == 0)
        unlink(c->owner);
    close(c->fd); /* drops the lock */
    free(c);
}

/* ---- checking a store ------------------------------------------------------------
 * sto_check reads the whole file in one read transaction (one snapshot: a
 * live daemon's commits never make two tables disagree) and reports every
 * breach of the invariants at the top of this file it can see:
 *   structure   SQLite's own check (quick_check, or integrity_check when
 *               full) and the tables the file's schema version must have;
 *   chunks      each chunk's check value and encoding (I5), and a job's
 *               chunks numbering 1..stored without gap or overlap (I1);
 *   jobs        stored = the solutions of its chunks (I1) <= found, and
 *               = what options.store keeps of the found ones (I6); its
 *               documents valid JSON;
 *   frontier    none for a final job (I3); for an unfinished one tasks
 *               0..n-1, well formed, weighing with the fraction done the
 *               whole tree (I2), or no task and nothing done yet;
 *   references  every chunk and task in a job, every job in a batch that
 *               exists (PRAGMA foreign_key_check);
 *   classes     no job holding the same class twice (I7).
 * A malformed page met anywhere (SQLITE_CORRUPT, SQLITE_NOTADB) is a
 * finding, not a failure to read: the file is damaged, and no row is read
 * after it.  Only what stops the check itself (memory, I/O, a file that
 * cannot be opened) is an error. */

/* |sum of an unfinished job's task weights + its fraction done - 1| may be
 * this much: weights are split and summed in doubles, tasks by the million
 * (and the fraction done over every task finished), so the sum is off by
 * ~1e-10 at most; a task lost or searched twice is off by its weight,
 * which is larger unless it is a millionth of the tree. */
#define CHECK_WEIGHT_TOLERANCE 1e-6
/* Memory for one job's class hashes (8 bytes a class); a job with more
 * classes is hashed in several passes, each keeping one share of them. */
#define CHECK_HASH_MEMORY ((size_t)128 << 20)
/* Equal hashes compared id by id, per job: the examples the report gives. */
#define CHECK_COMPARE_PAIRS 64

/* The start of the note sto_repair writes into a job it cut (mend_job):
 * such a job stores fewer solutions than its options keep, and says so. */
#define REPAIR_NOTE "tesserad --repair removed stored solutions "

static int past_deadline(void *arg)
{
    double deadline = *(const double *)arg;
    return deadline > 0 && base_now() > deadline;
}

/* One run of the check: the report, what it found, and whether it may go
 * on reading. */
typedef struct checker {
    sto_db *s;
    FILE *f;          /* the findings, one line each */
    FILE *notes;      /* what was checked, how far (after the findings) */
    long problems;    /* findings */
    bool broken;      /* SQLite met a malformed page: no row is read after it */
    bool late;        /* past the deadline: the rest is unchecked, not damaged */
    bool json;        /* this SQLite has its JSON functions */
    bool tables;      /* the schema has the tables of its version */
    double deadline;  /* base_now() seconds, 0: none */
    int *scratch;     /* STO_MAX_TASK_IMAGES ids, for decoding */
    int *scratch2;    /* another, to compare two classes */
    const char *ctx;
    tsr_err *err;
} checker;

static void finding(checker *c, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void finding(checker *c, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    /* one line of text, whatever bytes of the damaged file it quotes: a
     * control byte or a byte outside well-formed UTF-8 becomes '?' */
    for (unsigned char *p = (unsigned char *)line; *p != '\0';) {
        int n = *p < 0x80 ? 1 : (*p & 0xe0) == 0xc0 ? 2 : (*p & 0xf0) == 0xe0 ? 3
                : (*p & 0xf8) == 0xf0 ? 4 : 0;
        for (int k = 1; k < n; k++)
            if ((p[k] & 0xc0) != 0x80)
                n = 0;
        if (n == 0 || (n == 1 && (*p < 0x20 || *p == 0x7f))) {
            *p++ = '?';
            continue;
        }
        p += n;
    }
    fprintf(c->f, "%s\n", line);
    c->problems++;
}

static bool is_damage(int rc)
{
    return (rc & 0xff) == SQLITE_CORRUPT || (rc & 0xff) == SQLITE_NOTADB;
}

/* A statement of the check that did not end in SQLITE_DONE (rc from its
 * prepare or its last step; call before finalizing it): out of time, a
 * finding (damage), or an error. */
static int check_failed(checker *c, int rc, const char *what)
{
    if ((rc & 0xff) == SQLITE_INTERRUPT) { /* the deadline's progress handler */
        c->late = true;
        return 0;
    }
    if (is_damage(rc)) {
        finding(c, "structure: %s (met while %s; the check could not go on)",
                sqlite3_errmsg(c->s->db), what);
        c->broken = true;
        return 0;
    }
    return sql_err(c->s, rc, c->err, c->ctx, what);
}

/* Whether the check may read on. */
static bool check_going(const checker *c)
{
    return !c->broken && !c->late;
}

/* Prepare one of the check's statements: 0 with *st, or 0 with *st NULL
 * (a finding, or out of time), or an error. */
static int check_prepare(checker *c, const char *sql, sqlite3_stmt **st, const char *what)
{
    *st = NULL;
    if (!check_going(c))
        return 0;
    int rc = sqlite3_prepare_v2(c->s->db, sql, -1, st, NULL);
    if (rc == SQLITE_OK)
        return 0;
    *st = NULL;
    return check_failed(c, rc, what);
}

/* The end of a statement's rows: rc is its last step's code. */
static int check_finish(checker *c, sqlite3_stmt *st, int rc, int r, const char *what)
{
    if (r == 0 && rc != SQLITE_DONE && rc != SQLITE_ROW)
        r = check_failed(c, rc, what);
    sqlite3_finalize(st);
    return r;
}

/* Step on, unless the deadline passed between rows. */
static int check_step(checker *c, sqlite3_stmt *st)
{
    if (past_deadline(&c->deadline)) {
        c->late = true;
        return SQLITE_DONE;
    }
    return sqlite3_step(st);
}

/* The one header field SQLite reads without complaint yet obeys: a file
 * format write version (byte 18) above 2 makes it open the file read-only,
 * so the daemon would start and fail its first write.  (A read version
 * above 2, a bad page size, magic string or payload fractions make SQLite
 * refuse the file, which the first read reports.) */
static void check_header(checker *c, const char *path)
{
    unsigned char h[100];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? pread(fd, h, sizeof h, 0) : -1;
    if (fd >= 0)
        close(fd);
    if (n == (ssize_t)sizeof h && h[18] > 2)
        finding(c, "structure: the file's header gives file format write version %d (byte "
                   "18; SQLite writes 1 and 2), so SQLite opens it read-only", h[18]);
}

/* SQLite's structure check: its lines are findings. */
static int check_structure(checker *c, bool full)
{
    const char *what = "checking the structure";
    sqlite3_stmt *st;
    int r = check_prepare(c, full ? "PRAGMA integrity_check(100)" : "PRAGMA quick_check(100)",
                          &st, what);
    if (r != 0 || st == NULL)
        return r;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        /* a row may hold several lines, headed "*** in database main ***":
         * each other line is a finding */
        const char *text = (const char *)sqlite3_column_text(st, 0);
        for (const char *line = text; line != NULL && *line != '\0';) {
            int n = (int)strcspn(line, "\n");
            if (strncmp(line, "ok", (size_t)n) != 0 && strncmp(line, "*** ", 4) != 0)
                finding(c, "structure: %.*s", n, line);
            line += n + (line[n] == '\n');
        }
    }
    return check_finish(c, st, rc, 0, what);
}

/* The tables each schema version has (besides sqlite_sequence), and every
 * table any version has had. */
static const char *const version_tables[STO_SCHEMA_VERSION + 1] = {
    "", "jobs frontier solutions", "jobs frontier solutions_v1 chunks",
    "jobs frontier solutions_v1 chunks batches"};
static const char *const all_tables[] = {"jobs", "frontier", "solutions", "solutions_v1",
                                         "chunks", "batches"};

static bool word_in(const char *word, const char *list)
{
    size_t n = strlen(word);
    for (const char *p = list; (p = strstr(p, word)) != NULL; p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return true;
    return false;
}

/* The file's tables against its schema version: a version that lies (a
 * damaged header) would make tesserad upgrade, or read, the wrong tables. */
static int check_schema(checker *c, int version)
{
    const char *what = "reading the schema";
    char have[256] = "";
    sqlite3_stmt *st;
    int r = check_prepare(c, "SELECT name FROM sqlite_master WHERE type = 'table'", &st, what);
    if (r != 0 || st == NULL)
        return r;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        for (size_t i = 0; name != NULL && i < sizeof all_tables / sizeof *all_tables; i++)
            if (strcmp(name, all_tables[i]) == 0 && strlen(have) + strlen(name) + 2 < sizeof have)
                strcat(strcat(have, " "), name);
    }
    if ((r = check_finish(c, st, rc, 0, what)) != 0 || !check_going(c))
        return r;
    c->tables = true;
    for (size_t i = 0; i < sizeof all_tables / sizeof *all_tables; i++) {
        bool want = word_in(all_tables[i], version_tables[version]);
        if (want != word_in(all_tables[i], have)) {
            finding(c, "schema: the file says schema %d, which %s a table %s", version,
                    want ? "has" : "does not have", all_tables[i]);
            if (want)
                c->tables = false; /* the rows of the missing one cannot be read */
        }
    }
    return 0;
}

/* Every chunk: its check value and encoding, and each job's numbering
 * 1, 2, ... without gap or overlap (I1, I5). */
static int check_chunks(checker *c)
{
    const char *what = "reading chunks";
    sqlite3_stmt *st;
    int r = check_prepare(c, "SELECT first, nsol, nclass, data, crc, job FROM chunks "
                             "ORDER BY job, first", &st, what);
    if (r != 0 || st == NULL)
        return r;
    int64_t job = -1, next = 1;
    long chunks = 0;
    int rc;
    while (r == 0 && (rc = check_step(c, st)) == SQLITE_ROW) {
        int64_t j = sqlite3_column_int64(st, 5), first = sqlite3_column_int64(st, 0);
        if (j != job) {
            job = j;
            next = 1;
        }
        if (first > next)
            finding(c, "job %lld: solutions %lld to %lld are missing", (long long)job,
                    (long long)next, (long long)first - 1);
        else if (first < next)
            finding(c, "job %lld: the chunk from solution %lld overlaps the one before, which "
                       "ends at solution %lld", (long long)job, (long long)first,
                    (long long)next - 1);
        next = first + sqlite3_column_int64(st, 1);
        sto_classes none = {0};
        int caps[4] = {0, 0, 1, 0}; /* start has its first element */
        tsr_err e = {{0}};
        /* a cursor past every solution keeps none: only the checks run */
        int d = decode_chunk(st, job, INT64_MAX - 1, 0, &none, caps, c->scratch, c->ctx, &e);
        sto_classes_free(&none);
        if (d == TSR_EIO)
            finding(c, "job %lld: the chunk from solution %lld is damaged", (long long)job,
                    (long long)first);
        else if (d != 0)
            r = tsr_err_set(c->err, d, "%s", e.msg);
        chunks++;
    }
    r = check_finish(c, st, rc, r, what);
    if (r == 0 && !c->broken)
        fprintf(c->notes, "chunks: %ld checked\n", chunks);
    return r;
}

/* A job's tasks, as check_frontier sums them. */
typedef struct task_sum {
    int64_t job, tasks, next; /* next: the number the next task should have */
    double weight, carry; /* compensated sum (Neumaier): weight + carry */
} task_sum;

/* Every task: numbered 0..n-1 in its job, its images whole int32s, its
 * weight in [0, 1]; each job's weights summed into *sums (by job). */
static int check_frontier(checker *c, task_sum **sums, int *nsums)
{
    const char *what = "reading the frontier";
    *sums = NULL;
    *nsums = 0;
    sqlite3_stmt *st;
    int r = check_prepare(c, "SELECT job, seq, length(images), weight FROM frontier "
                             "ORDER BY job, seq", &st, what);
    if (r != 0 || st == NULL)
        return r;
    int cap = 0, rc;
    long tasks = 0;
    task_sum *t = NULL;
    while (r == 0 && (rc = check_step(c, st)) == SQLITE_ROW) {
        int64_t job = sqlite3_column_int64(st, 0), seq = sqlite3_column_int64(st, 1);
        int64_t bytes = sqlite3_column_int64(st, 2);
        double w = sqlite3_column_double(st, 3);
        if (*nsums == 0 || (*sums)[*nsums - 1].job != job) {
            if ((r = grow((void **)sums, &cap, *nsums, sizeof **sums, c->ctx, c->err)) != 0)
                break;
            (*sums)[(*nsums)++] = (task_sum){job, 0, 0, 0, 0};
        }
        t = &(*sums)[*nsums - 1];
        if (seq != t->next) /* tasks are numbered 0..n-1 (a gap: one lost) */
            finding(c, "job %lld: frontier task %lld where task %lld should be", (long long)job,
                    (long long)seq, (long long)t->next);
        t->next = seq + 1;
        if (bytes % 4 != 0 || bytes / 4 > STO_MAX_TASK_IMAGES)
            finding(c, "job %lld: frontier task %lld is malformed (%lld bytes of images)",
                    (long long)job, (long long)seq, (long long)bytes);
        if (!isfinite(w) || w < 0 || w > 1) {
            finding(c, "job %lld: frontier task %lld weighs %g, not a fraction in [0, 1]",
                    (long long)job, (long long)seq, w);
            w = 0;
        }
        double sum = t->weight + w; /* Neumaier's compensated sum */
        t->carry += fabs(t->weight) >= fabs(w) ? (t->weight - sum) + w : (w - sum) + t->weight;
        t->weight = sum;
        t->tasks++;
        tasks++;
    }
    r = check_finish(c, st, rc, r, what);
    if (r == 0 && !c->broken)
        fprintf(c->notes, "frontier: %ld tasks checked\n", tasks);
    return r;
}

/* One job's counts, documents and frontier (I1, I2, I3, I6); its tasks
 * summed in *t (NULL: it has none).  The row is check_jobs's. */
static void check_job(checker *c, sqlite3_stmt *st, const task_sum *t)
{
    long long id = sqlite3_column_int64(st, 0);
    const char *state_text = (const char *)sqlite3_column_text(st, 1);
    int64_t found = sqlite3_column_int64(st, 2), stored = sqlite3_column_int64(st, 3);
    double fraction = sqlite3_column_double(st, 4);
    bool legacy = sqlite3_column_int(st, 5) != 0;
    const char *error = (const char *)sqlite3_column_text(st, 6);
    int64_t in_chunks = sqlite3_column_int64(st, 7);
    bool options_ok = sqlite3_column_int(st, 8) != 0;
    enum sto_state state;
    if (sto_state_parse(state_text, &state) != 0) {
        finding(c, "job %lld: its state \"%.40s\" is not a job's", id,
                state_text != NULL ? state_text : "(null)");
        return;
    }
    if (!options_ok)
        finding(c, "job %lld: its options document is not a JSON object", id);
    if (sqlite3_column_int(st, 9) == 0)
        finding(c, "job %lld: its statistics document is not JSON", id);
    if (!legacy && (stored != in_chunks || stored > found))
        finding(c, "job %lld: %lld solutions stored by its count, %lld in its chunks, %lld found",
                id, (long long)stored, (long long)in_chunks, (long long)found);
    /* I6: what options.store keeps: "all" (or nothing said), "none", or
     * the first N; a final job --repair cut keeps less, and says so */
    int type = sqlite3_column_type(st, 10);
    const char *keep_text = (const char *)sqlite3_column_text(st, 10);
    int64_t keep = -1, n = sqlite3_column_int64(st, 10);
    if (type == SQLITE_NULL || (type == SQLITE_TEXT && strcmp(keep_text, "all") == 0))
        keep = found;
    else if (type == SQLITE_TEXT && strcmp(keep_text, "none") == 0)
        keep = 0;
    else if (type == SQLITE_INTEGER && n >= 0)
        keep = n < found ? n : found;
    else
        finding(c, "job %lld: options.store is %.40s, not \"all\", \"none\" or a count", id,
                keep_text != NULL ? keep_text : "(null)");
    bool cut = sto_state_final(state) && error != NULL &&
               strncmp(error, REPAIR_NOTE, strlen(REPAIR_NOTE)) == 0;
    if (c->json && options_ok && !legacy && keep >= 0 && stored != keep && !cut)
        finding(c, "job %lld: %lld of its %lld solutions stored, where its options.store keeps "
                   "%lld", id, (long long)stored, (long long)found, (long long)keep);
    /* I2, I3: the frontier and the part of the tree done make the whole */
    double weight = t != NULL ? t->weight + t->carry : 0;
    if (!isfinite(fraction) || fraction < 0 || fraction > 1)
        finding(c, "job %lld: its fraction done, %g, is not in [0, 1]", id, fraction);
    else if (sto_state_final(state) && t != NULL)
        finding(c, "job %lld: %s, yet it has a frontier of %lld task%s", id, state_text,
                (long long)t->tasks, t->tasks == 1 ? "" : "s");
    else if (!sto_state_final(state) && t == NULL && (fraction != 0 || found != 0))
        finding(c, "job %lld: %s with no frontier, yet %.9g of its tree is done and %lld "
                   "solutions found: resumed, it would search the whole tree again and count "
                   "them twice", id, state_text, fraction, (long long)found);
    else if (!sto_state_final(state) && t != NULL &&
             !(fabs(weight + fraction - 1) <= CHECK_WEIGHT_TOLERANCE))
        finding(c, "job %lld: its frontier weighs %.9g and %.9g of its tree is done: %.9g in "
                   "all, not 1 (resumed, it would search part of the tree twice or never)", id,
                weight, fraction, weight + fraction);
}

/* Every job against its chunks and its frontier. */
static int check_jobs(checker *c)
{
    task_sum *sums = NULL;
    int nsums = 0;
    int r = check_frontier(c, &sums, &nsums);
    /* the documents' and options.store's columns, when SQLite has JSON */
    /* the puzzle may be polycube text, not JSON: it is not checked */
    static const char with_json[] = /* CASE, not AND: json_type raises on bad JSON */
        "CASE WHEN json_valid(options) THEN json_type(options) = 'object' ELSE 0 END,"
        " stats IS NULL OR json_valid(stats),"
        " CASE WHEN json_valid(options) THEN CASE WHEN json_type(options) = 'object'"
        " THEN json_extract(options, '$.store') END END";
    static const char without[] = "1, 1, NULL";
    char sql[600];
    snprintf(sql, sizeof sql, "SELECT id, state, solutions, stored, fraction, legacy, error,"
             " (SELECT coalesce(sum(nsol), 0) FROM chunks WHERE job = jobs.id), %s"
             " FROM jobs ORDER BY id", c->json ? with_json : without);
    const char *what = "reading jobs";
    sqlite3_stmt *st = NULL;
    if (r == 0)
        r = check_prepare(c, sql, &st, what);
    if (r != 0 || st == NULL) {
        free(sums);
        return r;
    }
    int rc, k = 0;
    long jobs = 0;
    while ((rc = check_step(c, st)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0);
        while (k < nsums && sums[k].job < id)
            k++; /* tasks of no job: the references' check says so */
        check_job(c, st, k < nsums && sums[k].job == id ? &sums[k] : NULL);
        jobs++;
    }
    r = check_finish(c, st, rc, 0, what);
    free(sums);
    if (r == 0 && !c->broken)
        fprintf(c->notes, "jobs: %ld checked\n", jobs);
    return r;
}

/* Rows that name a job (or a batch) that does not exist. */
static int check_references(checker *c)
{
    const char *what = "checking references";
    sqlite3_stmt *st;
    int r = check_prepare(c, "SELECT \"table\", parent, count(*) FROM pragma_foreign_key_check"
                             " GROUP BY 1, 2", &st, what);
    if (r != 0 || st == NULL)
        return r;
    int rc;
    while ((rc = check_step(c, st)) == SQLITE_ROW)
        finding(c, "%s: %lld rows belong to no row of %s", sqlite3_column_text(st, 0),
                (long long)sqlite3_column_int64(st, 2), sqlite3_column_text(st, 1));
    return check_finish(c, st, rc, 0, what);
}

/* ---- a class stored twice (I7) ----
 * Each class of a job is hashed (64 bits of its sorted ids), the hashes
 * sorted, and equal neighbours are classes stored twice, unless the ids
 * differ (a collision: about one chance in 10^7 for the flood's 1.6 million
 * classes); the first CHECK_COMPARE_PAIRS are compared id by id, and those
 * make the examples the report gives.  8 bytes a class: a job with more
 * classes than CHECK_HASH_MEMORY holds is hashed in several passes over
 * its chunks, each keeping the hashes of one share (hash % passes). */

/* splitmix64's finalizer: every bit of x moves about half of the result. */
static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9u;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebu;
    return x ^ (x >> 31);
}

/* The record at data[*pos..len) without decoding its ids: its size and
 * count, and where the bytes of its ids start (*ids_at; they end at *pos
 * after).  Those bytes (each id minus the one before, LEB128, as
 * put_varint writes them) are a canonical form of the ids: two classes
 * with the same ids have the same bytes.  False when it is cut short. */
static bool skip_record(const unsigned char *data, size_t len, size_t *pos, int *n, int *count,
                        size_t *ids_at)
{
    uint64_t vn, vc;
    if (!get_varint(data, len, pos, &vn) || !get_varint(data, len, pos, &vc) ||
        vn > STO_MAX_TASK_IMAGES || vc < 1 || vc > INT_MAX)
        return false;
    *ids_at = *pos;
    for (uint64_t i = 0; i < vn; i++, (*pos)++) /* a varint ends at a byte below 0x80 */
        while (*pos < len && data[*pos] >= 0x80)
            (*pos)++;
    if (*pos > len)
        return false;
    *n = (int)vn;
    *count = (int)vc;
    return true;
}

/* A class's hash: its size and the bytes of its ids, 8 at a time. */
static uint64_t class_hash(int n, const unsigned char *p, size_t len)
{
    uint64_t h = mix64((uint64_t)n + 0x9e3779b97f4a7c15u);
    for (; len >= 8; p += 8, len -= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = mix64(h ^ w);
    }
    uint64_t w = len; /* the tail, and its length */
    memcpy(&w, p, len);
    return mix64(h ^ w ^ ((uint64_t)len << 56));
}

static int hash_order(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Sort hashes in place, by their bytes from the top (`shift` 56, 48, ...):
 * a 256-way partition (American flag sort) on each, down to parts small
 * enough for insertion sort.  No memory but the stack. */
static void sort_hashes(uint64_t *v, size_t n, int shift)
{
    if (n < 32 || shift < 0) {
        for (size_t i = 1; i < n; i++) {
            uint64_t x = v[i];
            size_t j = i;
            for (; j > 0 && v[j - 1] > x; j--)
                v[j] = v[j - 1];
            v[j] = x;
        }
        return;
    }
    size_t start[257] = {0}, next[256];
    for (size_t i = 0; i < n; i++)
        start[((v[i] >> shift) & 0xff) + 1]++;
    for (int b = 0; b < 256; b++) {
        start[b + 1] += start[b];
        next[b] = start[b];
    }
    for (int b = 0; b < 256; b++)
        while (next[b] < start[b + 1]) {
            uint64_t x = v[next[b]];
            for (int d = (int)((x >> shift) & 0xff); d != b; d = (int)((x >> shift) & 0xff)) {
                uint64_t y = v[next[d]];
                v[next[d]++] = x;
                x = y;
            }
            v[next[b]++] = x;
        }
    for (int b = 0; b < 256; b++)
        sort_hashes(v + start[b], start[b + 1] - start[b], shift - 8);
}

/* The ids of job `job`'s class whose first solution is number `at`, into
 * ids (*n of them); *n = -1 when no sound chunk holds such a class. */
static int class_ids(checker *c, int64_t job, int64_t at, int *ids, int *n)
{
    const char *what = "reading a class";
    *n = -1;
    sqlite3_stmt *st;
    int r = check_prepare(c, "SELECT first, nsol, nclass, data, crc FROM chunks WHERE job = ?1"
                             " AND first <= ?2 ORDER BY first DESC LIMIT 1", &st, what);
    if (r != 0 || st == NULL)
        return r;
    sqlite3_bind_int64(st, 1, job);
    sqlite3_bind_int64(st, 2, at);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        int64_t pos_at = sqlite3_column_int64(st, 0);
        int nclass = sqlite3_column_int(st, 2);
        const unsigned char *data = sqlite3_column_blob(st, 3);
        size_t len = (size_t)sqlite3_column_bytes(st, 3), pos = 0;
        if (chunk_crc(job, pos_at, data, len) == (uint32_t)sqlite3_column_int64(st, 4)) {
            for (int k = 0; k < nclass && pos_at <= at; k++) {
                int m, count;
                if (!read_record(data, len, &pos, &m, &count, ids))
                    break;
                if (pos_at == at)
                    *n = m;
                pos_at += count;
            }
        }
        rc = SQLITE_DONE;
    }
    return check_finish(c, st, rc, 0, what);
}

/* A class seen twice by its hash: the numbers of its first two copies. */
typedef struct class_pair {
    uint64_t hash;
    int64_t a, b; /* 0: not seen yet */
} class_pair;

/* One pass over a job's chunks.  With `pairs` NULL, the hashes of the
 * share `pass` of `passes` go into *hashes (*nhashes, room for *cap);
 * else each class whose hash is one of pairs[0..npairs) (sorted) gives
 * that pair its first two solution numbers.  Damaged chunks are read as
 * they are: a pair from one is compared id by id from sound chunks only. */
static int hash_pass(checker *c, int64_t job, uint64_t pass, uint64_t passes, uint64_t **hashes,
                     size_t *nhashes, size_t *cap, class_pair *pairs, int npairs)
{
    const char *what = "hashing classes";
    sqlite3_stmt *st;
    int r = check_prepare(c, "SELECT first, nclass, data FROM chunks WHERE job = ?1", &st, what);
    if (r != 0 || st == NULL)
        return r;
    sqlite3_bind_int64(st, 1, job);
    int rc;
    while (r == 0 && (rc = check_step(c, st)) == SQLITE_ROW) {
        int64_t at = sqlite3_column_int64(st, 0);
        int nclass = sqlite3_column_int(st, 1);
        const unsigned char *data = sqlite3_column_blob(st, 2);
        size_t len = (size_t)sqlite3_column_bytes(st, 2), pos = 0;
        for (int k = 0; r == 0 && k < nclass; k++) {
            int n, count;
            size_t ids_at;
            if (!skip_record(data, len, &pos, &n, &count, &ids_at))
                break; /* malformed: check_chunks said so */
            uint64_t h = class_hash(n, data + ids_at, pos - ids_at);
            if (pairs != NULL) {
                class_pair key = {h, 0, 0}, *p = bsearch(&key, pairs, (size_t)npairs,
                                                          sizeof *pairs, hash_order);
                if (p != NULL && p->a == 0)
                    p->a = at;
                else if (p != NULL && p->b == 0)
                    p->b = at;
            } else if (h % passes == pass) {
                if (*nhashes == *cap) {
                    size_t more = *cap / 2 + 1024;
                    uint64_t *v = realloc(*hashes, (*cap + more) * sizeof *v);
                    if (v == NULL) {
                        r = tsr_err_set(c->err, TSR_ENOMEM, "store: %s: out of memory", c->ctx);
                        break;
                    }
                    *hashes = v;
                    *cap += more;
                }
                (*hashes)[(*nhashes)++] = h;
            }
            at += count;
        }
    }
    return check_finish(c, st, rc, r, what);
}

/* A job's classes, hashed and sorted: a class stored twice is a finding.
 * *passes_used: how many passes its hashes took; *hashes (room for *cap)
 * is reused from job to job. */
static int check_job_classes(checker *c, int64_t job, int64_t nclass, uint64_t **hashes,
                             size_t *cap, int *passes_used)
{
    uint64_t per_pass = CHECK_HASH_MEMORY / sizeof **hashes;
    uint64_t passes = nclass > 0 ? ((uint64_t)nclass + per_pass - 1) / per_pass : 1;
    *passes_used = (int)passes;
    /* room for one share and a little: a share is a binomial draw */
    size_t want = (size_t)((uint64_t)nclass / passes + (uint64_t)nclass / passes / 32 + 1024);
    if (*cap < want) {
        free(*hashes);
        *cap = 0;
        if ((*hashes = malloc(want * sizeof **hashes)) == NULL)
            return tsr_err_set(c->err, TSR_ENOMEM, "store: %s: out of memory", c->ctx);
        *cap = want;
    }
    class_pair pairs[CHECK_COMPARE_PAIRS];
    int npairs = 0, r = 0;
    int64_t twice = 0;
    for (uint64_t p = 0; r == 0 && p < passes && check_going(c); p++) {
        size_t n = 0;
        if ((r = hash_pass(c, job, p, passes, hashes, &n, cap, NULL, 0)) != 0 || !check_going(c))
            break;
        sort_hashes(*hashes, n, 56);
        for (size_t i = 1; i < n; i++)
            if ((*hashes)[i] == (*hashes)[i - 1]) {
                twice++;
                if (npairs < CHECK_COMPARE_PAIRS &&
                    (npairs == 0 || (*hashes)[i] != pairs[npairs - 1].hash))
                    pairs[npairs++] = (class_pair){(*hashes)[i], 0, 0};
            }
    }
    if (r != 0 || twice == 0 || !check_going(c))
        return r;
    /* the pairs' solution numbers, then their ids compared */
    qsort(pairs, (size_t)npairs, sizeof *pairs, hash_order);
    if ((r = hash_pass(c, job, 0, 1, NULL, NULL, NULL, pairs, npairs)) != 0 || !check_going(c))
        return r;
    int same = 0;
    int64_t ex_a = 0, ex_b = 0;
    for (int i = 0; r == 0 && i < npairs && check_going(c); i++) {
        int na, nb;
        if ((r = class_ids(c, job, pairs[i].a, c->scratch, &na)) != 0 ||
            (r = class_ids(c, job, pairs[i].b, c->scratch2, &nb)) != 0)
            break;
        if (na >= 0 && na == nb &&
            (na == 0 || memcmp(c->scratch, c->scratch2, (size_t)na * sizeof(int)) == 0) &&
            same++ == 0) {
            ex_a = pairs[i].a < pairs[i].b ? pairs[i].a : pairs[i].b;
            ex_b = pairs[i].a < pairs[i].b ? pairs[i].b : pairs[i].a;
        }
    }
    if (r != 0 || !check_going(c))
        return r;
    if (same > 0)
        finding(c, "job %lld: %lld classes are stored more than once (by their 64-bit hashes; "
                   "%d of %d compared id by id are the same), e.g. solutions %lld and %lld: its "
                   "solutions are counted twice, as when two daemons run it on one file",
                (long long)job, (long long)twice, same, npairs, (long long)ex_a,
                (long long)ex_b);
    else
        fprintf(c->notes, "job %lld: %lld classes share a 64-bit hash with another, and the %d "
                      "compared id by id differ: no class stored twice\n", (long long)job,
                (long long)twice, npairs);
    return 0;
}

static int check_classes(checker *c)
{
    const char *what = "counting classes";
    sqlite3_stmt *st;
    int r = check_prepare(c, "SELECT job, sum(nclass) FROM chunks WHERE job IN"
                             " (SELECT id FROM jobs WHERE legacy = 0) GROUP BY job", &st, what);
    if (r != 0 || st == NULL)
        return r;
    /* the jobs first: hashing reads chunks with statements of its own */
    struct { int64_t job, nclass; } *list = NULL;
    int n = 0, cap = 0, rc;
    while (r == 0 && (rc = check_step(c, st)) == SQLITE_ROW)
        if ((r = grow((void **)&list, &cap, n, sizeof *list, c->ctx, c->err)) == 0) {
            list[n].job = sqlite3_column_int64(st, 0);
            list[n++].nclass = sqlite3_column_int64(st, 1);
        }
    r = check_finish(c, st, rc, r, what);
    uint64_t *hashes = NULL;
    size_t hcap = 0;
    int most = 1;
    int64_t classes = 0;
    for (int i = 0; r == 0 && i < n && check_going(c); i++) {
        int passes;
        r = check_job_classes(c, list[i].job, list[i].nclass, &hashes, &hcap, &passes);
        most = passes > most ? passes : most;
        classes += list[i].nclass;
    }
    if (r == 0 && check_going(c))
        fprintf(c->notes, "classes: %lld in %d jobs hashed (%d pass%s at most, %.1f MB)\n",
                (long long)classes, n, most, most == 1 ? "" : "es",
                (double)hcap * sizeof *hashes / 1e6);
    free(hashes);
    free(list);
    return r;
}

/* ---- opening a store offline ---- */

/* "file:" and the path, every byte outside a safe set %-escaped (a path
 * with '?', '#' or '%' in it names the same file), then `query`. */
static int file_uri(const char *path, const char *query, char *out, size_t cap)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = 0;
    for (const char *p = "file:"; *p; p++)
        out[n++] = *p;
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        if (n + 4 >= cap)
            return -1;
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            strchr("/._-~", *p) != NULL) {
            out[n++] = (char)*p;
        } else {
            out[n++] = '%';
            out[n++] = hex[*p >> 4];
            out[n++] = hex[*p & 15];
        }
    }
    return snprintf(out + n, cap - n, "%s", query) < (int)(cap - n) ? 0 : -1;
}

/* The first read of an opened file (its schema version): SQLite's code. */
static int first_read(sto_db *s)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &st, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW)
        rc = SQLITE_OK;
    sqlite3_finalize(st);
    return rc;
}

/* Open an existing store for --check (read-only) or --repair (no CREATE:
 * a missing or empty file is an error, not a new store), identify it and
 * read its schema version.  *out is set even on failure, for sto_close;
 * *read_rc is SQLite's code for the first read (SQLITE_OK when it worked),
 * so that a caller can tell a damaged file from one it cannot open.
 *
 * A read-only open of a file in WAL mode needs the -shm index beside it,
 * and creates one when it is missing; on a read-only file system or in a
 * read-only directory that fails ("unable to open").  Then, with no
 * write-ahead log holding commits (none, or an empty one) and no -shm, the
 * file alone is the whole store: it is opened immutable (SQLite's
 * immutable=1: no index, no locks) and *immutable says so.  With commits in
 * a log that cannot be indexed here, the store cannot be read consistently,
 * and the error says what to do. */
static int open_offline(const char *path, bool write, sto_db **out, int *version,
                        bool *immutable, int *read_rc, const char *ctx, tsr_err *err)
{
    *out = NULL;
    *version = 0;
    *read_rc = SQLITE_OK;
    if (immutable != NULL)
        *immutable = false;
    if (access(path, F_OK) != 0)
        return tsr_err_set(err, TSR_EIO, "store: %s: %s", ctx, strerror(errno));
    int r = not_empty(path, ctx, err);
    if (r != 0)
        return r;
    sto_db *s = *out = calloc(1, sizeof *s);
    if (s == NULL)
        return tsr_err_set(err, TSR_ENOMEM, "store: %s: out of memory", ctx);
    char uri[PATH_MAX * 3 + 64];
    if (!write && file_uri(path, "?mode=ro", uri, sizeof uri) != 0)
        return tsr_err_set(err, TSR_ETOOBIG, "store: %s: path too long", ctx);
    int flags = (write ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY | SQLITE_OPEN_URI) |
                SQLITE_OPEN_NOMUTEX;
    int rc = sqlite3_open_v2(write ? path : uri, &s->db, flags, NULL);
    if (rc != SQLITE_OK)
        return sql_err(s, rc, err, ctx, "open");
    sqlite3_extended_result_codes(s->db, 1);
    if (write && sqlite3_db_readonly(s->db, "main") == 1)
        return tsr_err_set(err, TSR_EIO, "store: %s: the file is read-only", ctx);
    if (write)
        sqlite3_busy_timeout(s->db, STO_BUSY_TIMEOUT_MS);
    rc = first_read(s);
    if (rc != SQLITE_OK && !write && (rc & 0xff) == SQLITE_CANTOPEN) {
        /* read-only, and SQLite could not open or create the -shm index */
        char side[PATH_MAX + 8];
        struct stat wal, shm;
        snprintf(side, sizeof side, "%s-wal", path);
        bool has_wal = stat(side, &wal) == 0 && wal.st_size > 0;
        snprintf(side, sizeof side, "%s-shm", path);
        bool has_shm = stat(side, &shm) == 0;
        if (has_wal)
            return tsr_err_set(err, TSR_EIO, "store: %s: its write-ahead log %s-wal holds "
                               "commits (%lld bytes) that SQLite reads only through an index "
                               "in %s-shm, which it cannot %s here (a read-only file system "
                               "or directory): copy the files to writable storage and check "
                               "the copy", ctx, path, (long long)wal.st_size, path,
                               has_shm ? "open" : "create");
        if (!has_shm) {
            sqlite3_close(s->db);
            s->db = NULL;
            if (file_uri(path, "?mode=ro&immutable=1", uri, sizeof uri) != 0)
                return tsr_err_set(err, TSR_ETOOBIG, "store: %s: path too long", ctx);
            if ((rc = sqlite3_open_v2(uri, &s->db, flags, NULL)) != SQLITE_OK)
                return sql_err(s, rc, err, ctx, "open");
            sqlite3_extended_result_codes(s->db, 1);
            *immutable = true;
            rc = first_read(s);
        }
    }
    *read_rc = rc;
    if (rc != SQLITE_OK)
        return sql_err(s, rc, err, ctx, "read the file's header");
    return identify(s, version, ctx, err);
}

int sto_check(const char *path, bool full, double max_seconds, char **report, tsr_err *err)
{
    *report = NULL;
    char ctx[320];
    snprintf(ctx, sizeof ctx, "check %s", path);
    tsr_err local = {{0}};
    if (err == NULL)
        err = &local;
    checker c = {.ctx = ctx, .err = err,
                 .deadline = max_seconds > 0 ? base_now() + max_seconds : 0};
    int version = 0;
    bool immutable = false;
    char *found = NULL, *notes = NULL, *text = NULL;
    size_t flen = 0, nlen = 0;
    tsr_err oe = {{0}};
    int read_rc;
    int r = open_offline(path, false, &c.s, &version, &immutable, &read_rc, ctx, &oe);
    if (c.s == NULL) {
        *err = oe;
        return r;
    }
    c.f = open_memstream(&found, &flen);
    c.notes = open_memstream(&notes, &nlen);
    c.scratch = malloc(STO_MAX_TASK_IMAGES * sizeof *c.scratch);
    c.scratch2 = malloc(STO_MAX_TASK_IMAGES * sizeof *c.scratch2);
    if (c.f == NULL || c.notes == NULL || c.scratch == NULL || c.scratch2 == NULL) {
        r = tsr_err_set(err, TSR_ENOMEM, "store: %s: out of memory", ctx);
        goto out;
    }
    if (r != 0 && is_damage(read_rc)) {
        /* the first read already met damage: a header or schema SQLite
         * cannot read is a finding, the file is not unreadable */
        finding(&c, "structure: %s", sqlite3_errstr(read_rc));
        c.broken = true;
        r = 0;
    } else if (r != 0) {
        *err = oe;
        goto out;
    }
    if (c.deadline > 0)
        sqlite3_progress_handler(c.s->db, 10000, past_deadline, &c.deadline);
    /* one read transaction: every statement below sees the same commit */
    if (!c.broken && (r = tx_begin(c.s, false, ctx, err)) != 0)
        goto out;
    if (r == 0 && !c.broken)
        check_header(&c, path);
    if (r == 0)
        r = check_structure(&c, full);
    if (r == 0 && check_going(&c)) { /* without JSON functions, documents go unchecked */
        sqlite3_stmt *probe = NULL;
        c.json = sqlite3_prepare_v2(c.s->db, "SELECT json_valid('{}')", -1, &probe, NULL) ==
                 SQLITE_OK;
        sqlite3_finalize(probe);
    }
    if (r == 0 && version > 0)
        r = check_schema(&c, version);
    if (r == 0 && version == STO_SCHEMA_VERSION && c.tables) {
        if (!c.json)
            fprintf(c.notes, "documents: not checked (this SQLite has no JSON functions)\n");
        if (r == 0)
            r = check_chunks(&c);
        if (r == 0)
            r = check_jobs(&c);
        if (r == 0)
            r = check_references(&c);
        if (r == 0)
            r = check_classes(&c);
    } else if (r == 0 && check_going(&c) && version > 0 && c.tables) {
        fprintf(c.notes, "solutions: schema %d is upgraded when tesserad opens the store\n", version);
    }
    tx_rollback(c.s); /* it only read */
    if (r == 0 && c.broken)
        fprintf(c.notes, "the rest: not checked (the file's structure is broken)\n");
    if (r == 0 && c.late)
        fprintf(c.notes, "not finished in time: the rest is unchecked, not damaged\n");
out:
    if (c.s != NULL && c.s->db != NULL)
        sqlite3_progress_handler(c.s->db, 0, NULL, NULL);
    if (c.f != NULL)
        fclose(c.f);
    if (c.notes != NULL)
        fclose(c.notes);
    free(c.scratch);
    free(c.scratch2);
    sto_close(c.s);
    /* the report: the file, the findings first (a caller may show only
     * the start), what was checked, the verdict */
    size_t len = 0;
    FILE *f = r == 0 ? open_memstream(&text, &len) : NULL;
    if (r == 0 && f == NULL)
        r = tsr_err_set(err, TSR_ENOMEM, "store: %s: out of memory", ctx);
    if (f != NULL) {
        fprintf(f, "%s: schema %d%s\n%s%s%s\n", path, version,
                immutable ? " (read as immutable: SQLite cannot create its index on this file "
                            "system, and no write-ahead log holds commits)" : "",
                found != NULL ? found : "", notes != NULL ? notes : "",
                c.problems ? "damaged" : "ok");
        fclose(f);
    }
    free(found);
    free(notes);
    if (r != 0) {
        free(text);
        return r;
    }
    err->msg[0] = '\0';
    *report = text;
    return c.problems ? TSR_EIO : 0;
}

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
        return sql_err(s, rc, err, ctx, "read chunks");
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
        int d = decode_chunk(st, job, INT64_MAX - 1, 0, &none, caps, scratch, ctx, &e);
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
        r = sql_err(s, rc, err, ctx, "read chunks");
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
            r = sql_err(s, rc, err, ctx, "delete chunks");
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
            sqlite3_bind_int64(st, 5, now());
            rc = sqlite3_step(st);
        }
        sqlite3_finalize(st);
        if (rc != SQLITE_DONE)
            r = sql_err(s, rc, err, ctx, "update the job");
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
        return sql_err(s, rc, err, ctx, "read jobs");
    while (r == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        if ((r = grow((void **)&list, &capn, n, sizeof *list, ctx, err)) == 0) {
            list[n].id = sqlite3_column_int64(st, 0);
            list[n++].stored = sqlite3_column_int64(st, 1);
        }
    }
    if (r == 0 && rc != SQLITE_DONE)
        r = sql_err(s, rc, err, ctx, "read jobs");
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
        r = exec_sql(s, "DELETE FROM chunks WHERE job NOT IN (SELECT id FROM jobs)", ctx,
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
    int r = open_offline(path, true, &s, &version, NULL, &read_rc, ctx, &oe);
    if (s == NULL) {
        *err = oe;
        return r;
    }
    /* a header SQLite cannot read is damage to the structure: refused
     * below, like any other */
    bool unreadable_header = r != 0 && is_damage(read_rc);
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
            finding(&c, "structure: %s", sqlite3_errstr(read_rc));
        } else {
            check_header(&c, path);
            r = check_structure(&c, true);
            /* a schema version its tables belie is a damaged header, not
             * an older store for tesserad to upgrade */
            if (r == 0)
                r = check_schema(&c, version);
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
        r = exec_sql(s, "PRAGMA synchronous = FULL", ctx, "set synchronous", err);
    if (r == 0 && !refused && (r = tx_begin(s, true, ctx, err)) == 0)
        r = tx_end(s, mend_jobs(s, cap, f, ctx, err), ctx, err);
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
