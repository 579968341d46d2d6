/*
 * store_impl.h - what the store's files share (internal to src/store/;
 * store.h is the module's face).  The files, each one concern:
 *
 *   store.c       the schema and its upgrades, the statements, a
 *                 connection's plumbing (errors, statements, transactions),
 *                 opening, closing, backup and detaching;
 *   records.c     jobs and batches of jobs: create, read, list, change;
 *   chunk.c       the codec of solution classes and chunks: varints,
 *                 records, check values (no SQLite in it);
 *   checkpoint.c  checkpoints and what they wrote read back: the frontier,
 *                 the classes, the schema-1 solutions (the owner of I1, I2);
 *   claim.c       one process's claim on the file, and the watch on its name;
 *   check.c       the offline check of every invariant (sto_check);
 *   repair.c      the offline repair of damaged chunks (sto_repair).
 * The invariants I1..I7 are written at the top of store.c.
 */
#ifndef STO_STORE_IMPL_H
#define STO_STORE_IMPL_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <sqlite3.h>

#include "base/base.h"
#include "store/store.h"

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
    S_RECORD_INSERT,
    S_RECORD_UPDATE,
    S_RECORD_LOAD,
    S_RECORD_ANY,
    S_COUNT
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

/* ---- check.c and repair.c ---- */
/* The start of the note sto_repair writes into a job it cut (mend_job):
 * such a job stores fewer solutions than its options keep, and says so. */
#define REPAIR_NOTE "tesserad --repair removed stored solutions "

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

/* ---- store.c ---- */
/* Unix seconds: the created and updated times of rows. */
int64_t sto_now(void);

bool sto_state_valid(enum sto_state st);

/* "store: <ctx>: <what>: <sqlite message>".  Call before anything else
 * touches the connection, which would replace SQLite's message. */
int sto_sql_err(sto_db *s, int rc, tsr_err *err, const char *ctx, const char *what);

/* Make room in a growing result array *v (elements of `size` bytes) for
 * element `count`; *cap is its capacity. */
int sto_grow(void **v, int *cap, int count, size_t size, const char *ctx, tsr_err *err);

int sto_prep(sto_db *s, enum stmt_id id, sqlite3_stmt **out, const char *ctx, tsr_err *err);

/* Reset a statement after use: ends its read and drops its bindings (which
 * may point into the caller's memory: everything is bound SQLITE_STATIC). */
void sto_release(sqlite3_stmt *st);

/* Step a statement that returns no rows, then release it. */
int sto_step_done(sto_db *s, sqlite3_stmt *st, const char *ctx, const char *what, tsr_err *err);

/* Step a statement whose parameters were bound with result bind_rc (the
 * first failure among the binds, or SQLITE_OK). */
int sto_bound_step(sto_db *s, sqlite3_stmt *st, int bind_rc, const char *ctx,
                      const char *what, tsr_err *err);

int sto_run_simple(sto_db *s, enum stmt_id id, const char *ctx, const char *what, tsr_err *err);

/* Transactions.  Writes use BEGIN IMMEDIATE: the write lock is taken (or
 * waited for, under the busy timeout) before anything is read, so a write
 * transaction never fails half way with SQLITE_BUSY on lock upgrade.  Reads
 * use a deferred BEGIN, which in WAL mode never waits for the writer. */
int sto_tx_begin(sto_db *s, bool write, const char *ctx, tsr_err *err);

/* Roll back whatever transaction is open (SQLite may already have rolled
 * back on its own after some errors).  The caller's message is kept. */
void sto_tx_rollback(sto_db *s);

int sto_tx_commit(sto_db *s, const char *ctx, tsr_err *err);

/* End a transaction: commit when r == 0, else roll back; returns the final
 * code. */
int sto_tx_end(sto_db *s, int r, const char *ctx, tsr_err *err);

/* The end of a read of rows in a read transaction: the last step's code
 * (rc, SQLITE_DONE when every row was read), the statement released and
 * the transaction ended; returns r or the first error. */
int sto_read_end(sto_db *s, sqlite3_stmt *st, int rc, int r, const char *ctx, tsr_err *err);

/* Length of a document of at most `max` bytes into *len; refused when
 * longer (strnlen never reads past max + 1 bytes). */
int sto_check_len(const char *doc, size_t max, size_t *len, const char *ctx, const char *what,
                     tsr_err *err);

int sto_bind_text(sqlite3_stmt *st, int i, const char *text, size_t len);

/* A copy of a text column, or NULL for SQL NULL; ENOMEM on failure. */
int sto_dup_column(sqlite3_stmt *st, int col, char **out);

int sto_parse_state_column(sqlite3_stmt *st, int col, enum sto_state *out, const char *ctx,
                              int64_t id, tsr_err *err);

/* One row of S_JOB_GET / S_JOB_LIST* into *j (zeroed first). */
int sto_read_job_row(sqlite3_stmt *st, sto_job *j, const char *ctx, tsr_err *err);

/* The state and engine version of job `id`; "no job N" when absent.  Used
 * inside a transaction, so what it reads holds until the transaction ends. */
int sto_job_state(sto_db *s, int64_t id, enum sto_state *state, int *engine_version,
                     const char *ctx, tsr_err *err);

/* Begin a read transaction, check that the job exists and prepare statement
 * `which` with the job id bound to its first parameter: the existence check
 * and the rows read are one snapshot.  On failure the transaction is over;
 * on success the caller steps the statement and ends it with tx_end. */
int sto_read_job_rows(sto_db *s, int64_t job, enum stmt_id which, sqlite3_stmt **st,
                         const char *ctx, tsr_err *err);

/* ---- opening ----------------------------------------------------------------- */
int sto_pragma_int(sto_db *s, const char *sql, int *v, const char *ctx, tsr_err *err);

int sto_exec_sql(sto_db *s, const char *sql, const char *ctx, const char *what, tsr_err *err);

/* Read the file's identity and schema version into *version, refusing
 * files that are not ours or are newer than this build.  Read-only, so a
 * refused file is left exactly as it was (its journal mode included). */
int sto_identify(sto_db *s, int *version, const char *ctx, tsr_err *err);

/* Refuse, before SQLite sees it, a file that exists but is empty: SQLite
 * would take it for a new database, and the jobs it should hold would be
 * silently gone. */
int sto_not_empty(const char *path, const char *ctx, tsr_err *err);

/* ... nor a store that cannot be written: the file itself (SQLite would
 * open it read-only and every write would fail later), or its directory
 * (its owner record and write-ahead log live beside the database).  Said
 * before anything else touches the directory, so that a read-only one is
 * named as such, not as a file that cannot be opened. */
int sto_usable_file(const char *path, const char *ctx, tsr_err *err);

/* The answer of every call on a connection that sto_detach closed. */
int sto_detached(const char *ctx, tsr_err *err);

/* ---- records.c ---- */
/* ---- chunk.c ---- */
/* ---- classes: records, batches, chunks ------------------------------------------
 * A class record is unsigned LEB128 varints: n, count, the first image id,
 * then each next id minus the one before (ids are strictly increasing, so
 * the steps are >= 1 and mostly one byte).  A batch is records back to
 * back; a chunk is up to STO_CHUNK_CLASSES records of one batch. */
void sto_put_varint(unsigned char *p, size_t *pos, uint64_t v);

/* A varint of at most 35 bits at p[*pos..len); false when cut short or too
 * long (every value stored fits in an int). */
bool sto_get_varint(const unsigned char *p, size_t len, size_t *pos, uint64_t *v);

/* Read the record at data[*pos..len): its size and count, and its ids into
 * ids (when not NULL, room for STO_MAX_TASK_IMAGES).  False when it is not
 * a well-formed record. */
bool sto_record_read(const unsigned char *data, size_t len, size_t *pos, int *n, int *count,
                        int *ids);

/* A chunk's check value: covers which job and where, not only the bytes,
 * so a chunk copied into another place does not pass either. */
uint32_t sto_chunk_crc(int64_t job, int64_t first, const unsigned char *data, size_t len);

/* ---- checkpoint.c ---- */
/* Make room for one more class of up to `n` ids in c: caps[] are the
 * capacities of first, count, start (one longer: it ends the last class)
 * and ids. */
int sto_classes_grow(sto_classes *c, int caps[4], int n, const char *ctx, tsr_err *err);

/* A page's cursor and size, as every paged read takes them. */
int sto_check_page(int64_t after, int limit, const char *ctx, tsr_err *err);

/* Decode one chunk row, checking its check value and its totals, keeping
 * the classes that hold solutions in (after, last]. */
int sto_chunk_decode(sqlite3_stmt *st, int64_t job, int64_t after, int64_t last,
                        sto_classes *c, int caps[4], int *scratch, const char *ctx, tsr_err *err);

/* ---- check.c ---- */
void sto_finding(checker *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

bool sto_is_damage(int rc);

/* The one header field SQLite reads without complaint yet obeys: a file
 * format write version (byte 18) above 2 makes it open the file read-only,
 * so the daemon would start and fail its first write.  (A read version
 * above 2, a bad page size, magic string or payload fractions make SQLite
 * refuse the file, which the first read reports.) */
void sto_check_header(checker *c, const char *path);

/* SQLite's structure check: its lines are findings. */
int sto_check_structure(checker *c, bool full);

/* The file's tables against its schema version: a version that lies (a
 * damaged header) would make tesserad upgrade, or read, the wrong tables. */
int sto_check_schema(checker *c, int version);

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
int sto_open_offline(const char *path, bool write, sto_db **out, int *version,
                        bool *immutable, int *read_rc, const char *ctx, tsr_err *err);

/* ---- repair.c ---- */
#endif
