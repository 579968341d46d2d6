/*
 * store.h - the daemon's job store: jobs, their search frontier and their
 * unique solutions in one SQLite file.
 *
 * The store knows nothing of HTTP or of the search engine's internals; it
 * keeps what the daemon hands it.  A job is a puzzle document and an options
 * document (JSON text, stored verbatim), a state, a priority and the progress
 * recorded at its last checkpoint.  A search task is a subtree of the job's
 * search named by an order-independent set of image ids plus a weight, the
 * fraction of the whole tree it stands for; the job's frontier is the set of
 * tasks still to search.  Solutions are stored as classes (a symmetry
 * class's representative, sorted image ids, and how many solutions it stands
 * for), packed into chunks that number the job's solutions 1, 2, ...; the
 * daemon expands them into solutions when they are read.
 *
 * Exactly-once results rest on one rule: the frontier and the solutions found
 * since the previous checkpoint are committed together by sto_checkpoint, in
 * one transaction.  After a crash the daemon resumes from the last committed
 * frontier, so every solution is either stored and outside the frontier, or
 * not stored and inside it, provided that what a checkpoint commits as
 * found (sto_found) holds only the solutions of work outside the frontier it
 * is committed with (the pool's parked
 * checkpoints give exactly that).  docs/store.md explains the schema and
 * the argument in full.
 *
 * Connections.  An sto_db is one SQLite connection and must be used by one
 * thread at a time (different sto_db objects may be used by different threads
 * at once).  The daemon keeps one writer connection in a thread of its own and
 * opens separate reader connections; in WAL mode readers never wait for the
 * writer and always see whole checkpoints.  A write that finds the database
 * locked by another connection waits up to STO_BUSY_TIMEOUT_MS.
 *
 * Every fallible call returns 0 or a negative TSR_E* code and writes one line
 * into `err` (which may be NULL), starting "store: " and naming the operation;
 * for SQLite failures the line ends with SQLite's own message.  Out-parameters
 * are only valid after a 0 return; on failure arrays come back NULL and
 * counts 0.
 */
#ifndef TSR_STORE_H
#define TSR_STORE_H

#include <stdbool.h>
#include <stdint.h>

#include "base/base.h"
#include "tessera/error.h"

/* The schema this build writes (PRAGMA user_version) and the SQLite
 * application id that marks a Tessera store ("TSSR"). */
#define STO_SCHEMA_VERSION 4
#define STO_APPLICATION_ID 0x54535352

/* Caps: larger inputs are refused with TSR_ETOOBIG (or TSR_EINVAL for a bad
 * page size) and a message naming the cap. */
#define STO_MAX_DOC (16 * 1024 * 1024) /* puzzle, options, stats, error: bytes */
#define STO_MAX_TASKS 1000000          /* tasks in one checkpoint's frontier */
#define STO_MAX_TASK_IMAGES 100000     /* images in one task */
#define STO_MAX_FOUND (256 * 1024 * 1024) /* bytes of class records in one checkpoint */
#define STO_CHUNK_CLASSES 1024         /* classes in one stored chunk */
#define STO_MAX_PAGE 100000            /* rows in one page of sto_job_list / sto_solutions_page */

#define STO_MAX_BATCH_JOBS 1000              /* jobs in one batch (sto_batch_create) */
#define STO_BUSY_TIMEOUT_MS 10000

typedef struct sto_db sto_db;

/* A job's life: queued -> running <-> paused -> completed | cancelled |
 * failed.  The last three are final: a job in a final state never changes
 * state again, takes no checkpoint and has no frontier. */
enum sto_state {
    STO_QUEUED,
    STO_RUNNING,
    STO_PAUSED,
    STO_COMPLETED,
    STO_CANCELLED,
    STO_FAILED
};

/* "queued", "running", "paused", "completed", "cancelled", "failed" (the
 * names stored in the database and shown to users); "unknown" for a value
 * outside the enum. */
const char *sto_state_name(enum sto_state st);

/* The state named `name` (exactly as sto_state_name spells it) into *st;
 * TSR_EINVAL for anything else (including NULL). */
int sto_state_parse(const char *name, enum sto_state *st);

/* True for completed, cancelled and failed. */
bool sto_state_final(enum sto_state st);

typedef struct sto_job {
    int64_t id;              /* never reused, even after deletion */
    enum sto_state state;
    int priority;            /* larger runs first */
    int engine_version;      /* the engine that created the job (sto_open) */
    char *puzzle;            /* the puzzle document as JSON text */
    char *options;           /* the job options as JSON text */
    char *error;             /* why the job failed, or NULL */
    int64_t created, updated; /* unix seconds */
    int64_t solutions;       /* solutions found (and committed), stored or not */
    int64_t stored;          /* solutions stored: numbers 1..stored can be read */
    bool legacy;             /* stored by schema 1 as text: read with sto_solutions_page */
    uint64_t nodes;          /* progress at the last checkpoint: */
    double fraction, seconds; /*   nodes searched, fraction done, seconds */
    char *stats;             /* free-form JSON text of statistics, or NULL */
    int64_t batch;           /* the batch of jobs it was submitted in (sto_batch), 0: none */
} sto_job;

/* Free the strings of `j` and zero it; a zeroed sto_job is safe to clear. */
void sto_job_clear(sto_job *j);

/* Clear and free an array from sto_job_list (NULL is fine). */
void sto_jobs_free(sto_job *jobs, int n);

/* Open (creating if missing) the store at `path`: a file, never ":memory:",
 * because the store needs WAL mode.  A new file gets the schema; a file of
 * this schema version is used as is; a file of a newer schema version, a
 * SQLite file of another application and a file that is not a database are
 * refused with a message naming the file, and left untouched.  The connection uses WAL,
 * synchronous=FULL (a committed checkpoint survives power loss), foreign
 * keys and a busy timeout.  `engine_version` is the search engine's version
 * in this build: it is stamped on the jobs this connection creates, and
 * sto_checkpoint refuses a job of another version, whose frontier names
 * images as another engine numbered them.  Reader connections may pass any
 * value. */
int sto_open(const char *path, int engine_version, sto_db **out, tsr_err *err);

/* Close the connection and free it (NULL is fine). */
void sto_close(sto_db *db);

/* The claim of one process on a store file: an advisory lock (flock) on
 * the file itself, so that no second name for it (a symbolic or hard link)
 * lets a second daemon open it.  A missing file is first created as a new
 * store.  The kernel drops the lock when the process ends, kill -9
 * included, so a claim never outlives its holder.  SQLite's own locking is
 * left alone, so reader connections, sqlite3 and backups keep working
 * beside it.  TSR_EBUSY, naming the holder's pid, when another process
 * holds it; TSR_EIO, before anything else, for a store that cannot be
 * written (a read-only file or directory) or an existing empty file.
 * PATH.owner beside the file says who holds it; a write-ahead log that an
 * earlier holder wrote for a file since replaced under that name is moved
 * aside, never replayed onto this file (sto_claim_note says so). */
typedef struct sto_claim sto_claim;
int sto_claim_take(const char *path, sto_claim **out, tsr_err *err);
void sto_claim_release(sto_claim *c); /* NULL is fine */

/* 0 while the claim's path still leads to the file claimed; TSR_ESTALE,
 * saying whether it was deleted or replaced, once it does not. */
int sto_claim_check(const sto_claim *c, tsr_err *err);
const char *sto_claim_path(const sto_claim *c);
/* What taking the claim did beside the file (a foreign log set aside), or
 * "" (for the daemon's log). */
const char *sto_claim_note(const sto_claim *c);
/* Record the write-ahead log the claimed connections use in PATH.owner,
 * once they are open: what lets the next claim tell it from a stranger. */
void sto_claim_note_wal(const sto_claim *c);

/* sto_open on the claim's file, tied to the claim: every write
 * transaction first checks it (sto_claim_check) and is refused with
 * TSR_ESTALE once the name leads elsewhere, and the connection closes
 * without removing the write-ahead log or its index (SQLite would remove
 * them by name, and the name may be another file's now). */
int sto_open_claimed(const sto_claim *c, int engine_version, sto_db **out, tsr_err *err);

/* Copy the whole store to a new file `to` (refused when it exists), after
 * moving the write-ahead log's frames into the database file and emptying
 * the log.  Called with no other transaction open on the file. */
int sto_backup(sto_db *db, const char *to, tsr_err *err);

/* Close the connection's SQLite handle (as sto_close would) and keep the
 * sto_db: with `copy` NULL every later call on it fails with TSR_ESTALE;
 * otherwise it reads the file `copy` (a backup), read-only, from then on.
 * For a daemon whose store file was deleted or replaced under it. */
int sto_detach(sto_db *db, const char *copy, tsr_err *err);

/* Check the store at `path` without changing it (opened read-only, no
 * upgrade, one read transaction): SQLite's structure check (PRAGMA
 * quick_check; integrity_check when `full`) and the tables of its schema
 * version; every solution chunk's check value and encoding, each job's
 * chunks numbering 1..stored without gap or overlap; each job's stored
 * count against its chunks, its found count and its options.store; its
 * frontier (none when final; otherwise tasks whose weights and the
 * fraction done make 1, or none and nothing done); rows of no job; and
 * no class stored twice in a job (64-bit hashes in at most ~128 MiB, more
 * passes for larger jobs).  `max_seconds` > 0 bounds the check (what it
 * could not reach in time is said, not counted as damage).  *report gets
 * the findings, one per line, then "ok" or "damaged" (free it).  Returns
 * 0 when the store is sound, TSR_EIO when it is damaged (the report says
 * where: job, solution number; a page SQLite finds malformed is damage
 * too), or another code, with `err` set and no report, when it cannot be
 * read.  On a read-only file system SQLite cannot make the -shm index a
 * WAL database is read through: with no -wal holding commits and no
 * -shm, the file alone is read (immutable, as the report's first line
 * says); commits in a -wal without its -shm cannot be read there. */
int sto_check(const char *path, bool full, double max_seconds, char **report, tsr_err *err);

/* Mend the damage sto_check finds in solution chunks, offline: the caller
 * holds the store's claim (sto_claim_take), so no daemon writes beside it.
 * A store whose SQLite structure is damaged (integrity_check) is refused
 * unchanged: its rows must be salvaged first (docs/store.md, recovery).
 * Otherwise, in one transaction, each job keeps its longest sound run of
 * stored solutions 1..k (the chunks before the first damaged, missing or
 * misplaced one), loses the chunks from there on, and gets stored = k and
 * an `error` text saying which solutions were removed; its found count,
 * progress and frontier stay.  An unfinished job's options.store is capped
 * at k through `cap` (the store does not read the options document), so a
 * resumed search stores nothing more and no solution number is reused.
 * Chunks of jobs that no longer exist are deleted.  *report says what was
 * found and done, then the whole check of the result (free it).  Returns 0
 * when the store is then sound, TSR_EIO when it is not (or was refused),
 * another code when it cannot be read or written (nothing changed). */
typedef int (*sto_cap_fn)(const char *options, int64_t stored, char **out, tsr_err *err);
int sto_repair(const char *path, sto_cap_fn cap, char **report, tsr_err *err);

/* Create a queued job with no frontier, no solutions and zero progress;
 * `options` NULL stores "{}".  The new id goes to *id and the creation time
 * stored to *created (may be NULL), so that a caller shows the time the
 * store keeps. */
int sto_job_create(sto_db *db, const char *puzzle, const char *options, int priority,
                   int64_t *id, int64_t *created, tsr_err *err);

/* The job `id` into *out (free with sto_job_clear); TSR_EINVAL and
 * "no job N" when there is none. */
int sto_job_get(sto_db *db, int64_t id, sto_job *out, tsr_err *err);

/* Up to `limit` (1..STO_MAX_PAGE) jobs with id > after_id, in id order, only
 * those in state *filter unless filter is NULL.  The summaries leave puzzle
 * and options NULL (documents may be 16 MiB each: fetch one with
 * sto_job_get); every other field is filled.  Free with sto_jobs_free.  The
 * next page starts after the last id returned; fewer than `limit` rows means
 * the listing is complete. */
int sto_job_list(sto_db *db, const enum sto_state *filter, int64_t after_id, int limit,
                 sto_job **out, int *n, tsr_err *err);

/* Move job `id` to state `st` and store `error` (NULL clears it; the text is
 * meant for failed jobs).  A job in a final state keeps it: asking for the
 * same final state again does nothing and returns 0, asking for another
 * state is TSR_EINVAL.  Entering a final state drops the job's frontier. */
int sto_job_set_state(sto_db *db, int64_t id, enum sto_state st, const char *error,
                      tsr_err *err);

/* Replace the options document of job `id`, which must not be in a final
 * state (the daemon pins the automatic choices it resolved, so that a
 * resumed search is the same search). */
int sto_job_set_options(sto_db *db, int64_t id, const char *options, tsr_err *err);

/* Delete job `id` with its frontier and solutions.  Only jobs in a final
 * state can be deleted (TSR_EINVAL otherwise: cancel the job first). */
int sto_job_delete(sto_db *db, int64_t id, tsr_err *err);

/* The ids of the queued, running and paused jobs, highest priority first,
 * then oldest first: what the daemon resumes at start-up.  Free *ids with
 * free(). */
int sto_jobs_unfinished(sto_db *db, int64_t **ids, int *n, tsr_err *err);

/* A batch of jobs submitted together (the API's /api/v1/batches, the
 * table `batches`): a name, a spec (JSON text: how it was asked for,
 * stored verbatim) and its jobs, whose sto_job.batch is the batch's id.
 * (The solutions a checkpoint commits are sto_found: one word per thing.) */
typedef struct sto_batch {
    int64_t id;              /* never reused */
    char *name;              /* or NULL */
    char *spec;
    int64_t created;         /* unix seconds */
} sto_batch;
void sto_batch_clear(sto_batch *g);
void sto_batches_free(sto_batch *g, int n);
/* Create a batch and its n (1..STO_MAX_BATCH_JOBS) queued jobs in one
 * transaction: all or none.  Job i gets puzzles[i], options[i] (options
 * NULL or options[i] NULL: "{}") and priorities[i] (NULL: 0); its id goes
 * to ids[i], the batch's to *batch; the one creation time of the batch and
 * its jobs to *created (may be NULL). */
int sto_batch_create(sto_db *db, const char *name, const char *spec, int n,
                     const char *const *puzzles, const char *const *options,
                     const int *priorities, int64_t *batch, int64_t *ids, int64_t *created,
                     tsr_err *err);
/* Batch `id` into *out (free with sto_batch_clear); TSR_EINVAL and "no
 * batch N" when there is none. */
int sto_batch_get(sto_db *db, int64_t id, sto_batch *out, tsr_err *err);
/* Up to `limit` (1..STO_MAX_PAGE) batches with id > after_id, in id order. */
int sto_batch_list(sto_db *db, int64_t after_id, int limit, sto_batch **out, int *n,
                   tsr_err *err);
/* A search task: `nimages` image ids (an order-independent set, stored and
 * returned in the order given) and the fraction of the job's whole search
 * tree it stands for, a finite number in [0, 1].  The root task has no
 * images and weight 1. */
typedef struct sto_task {
    int nimages;
    int *images;
    double weight;
} sto_task;

/* The solutions a checkpoint commits, found since the one before: class
 * records back to back in `records`, `classes` records standing for
 * `stored` solutions, and `found` solutions found in all (the job's options
 * may keep only some).  A zeroed sto_found is empty; free with
 * sto_found_free. */
typedef struct sto_found {
    base_buf records;
    int64_t classes, stored, found;
} sto_found;

/* Add a class: n strictly increasing image ids (n 0..STO_MAX_TASK_IMAGES)
 * standing for `count` >= 1 solutions, of which the first `keep` (0..count)
 * are stored: found grows by count, stored by keep, and keep 0 adds no
 * record.  About one byte per id.  TSR_EINVAL for bad ids or counts,
 * TSR_ENOMEM (b unchanged). */
int sto_found_add(sto_found *b, const int *images, int n, int count, int keep);

/* Append `more` to b (what a failed checkpoint could not commit, back in
 * front of what came since); TSR_ENOMEM leaves b unchanged. */
int sto_found_append(sto_found *b, const sto_found *more);

void sto_found_free(sto_found *b);

/* Progress at a checkpoint: nodes searched, fraction of the tree done and
 * seconds of search, all cumulative and finite, fraction and seconds >= 0;
 * `stats` is JSON text of statistics, NULL to keep what is stored. */
typedef struct sto_progress {
    uint64_t nodes;
    double fraction, seconds;
    const char *stats;
    const struct sto_tally *tally; /* a record job's tasks whose figures moved */
    int ntally;
} sto_progress;

/* A record job (options.record) splits its tree at a fixed depth once,
 * before it first runs (tsr_solver_split), and keeps per subtree of that
 * split, a record task, the solutions, nodes and digest of the work done
 * in it; row 0 holds what lies above the split.  So a finished job can
 * export a record that anyone re-runs task by task (tessera verify).
 * A tally is one row's figures, as totals, not increments: a checkpoint
 * writes them with its frontier in one transaction (sto_progress.tally),
 * so they always describe exactly the work the stored frontier excludes. */
typedef struct sto_tally {
    int seq;                /* 0 above the split; 1..n the tasks */
    uint64_t solutions, nodes, digest;
} sto_tally;

/* A record task as stored: its images (in the order the search places
 * them), the weight of its subtree and its tally. */
typedef struct sto_record_task {
    sto_task task;
    sto_tally tally;
} sto_record_task;

/* One transaction: job `job`'s split (tasks[0..ntasks) become record tasks
 * 1..ntasks and its whole frontier, `above` row 0 with weight
 * `above_weight`, the part of the tree pruned above the split) and
 * `prog`, its progress.  Refused (TSR_EINVAL) for a job in a final state,
 * of another engine version, or that has a split already. */
int sto_record_begin(sto_db *db, int64_t job, const sto_task *tasks, int ntasks,
                     const sto_tally *above, double above_weight, const sto_progress *prog,
                     tsr_err *err);

/* The job's record tasks in seq order, row 0 first; *n 0 when the job
 * has none.  Free with sto_record_free. */
int sto_record_load(sto_db *db, int64_t job, sto_record_task **rows, int *n, tsr_err *err);
void sto_record_free(sto_record_task *rows, int n);

/* One transaction (BEGIN IMMEDIATE) that
 *   - replaces job `job`'s whole frontier with tasks[0..ntasks) (ntasks 0
 *     leaves it empty),
 *   - stores the found classes (NULL: none) in chunks of up to
 *     STO_CHUNK_CLASSES, numbering their solutions on from the job's stored
 *     count, each chunk with a CRC-32,
 *   - adds found->found to the job's solution count and found->stored to
 *     its stored count,
 *   - records `prog` as the job's progress (NULL keeps the stored progress),
 *   - and moves the job to *new_state unless new_state is NULL.
 * Either all of it is stored or none of it.  Refused: a job in a final state
 * (the daemon checkpoints only live jobs; a late checkpoint after a cancel is
 * TSR_EINVAL and changes nothing), a job created by another engine version,
 * a final new_state with a non-empty frontier, and inputs over the caps. */
int sto_checkpoint(sto_db *db, int64_t job, const sto_task *tasks, int ntasks,
                   const sto_found *found, const sto_progress *prog,
                   const enum sto_state *new_state, tsr_err *err);

/* The job's frontier, as the last checkpoint stored it (same order, images
 * and weights bit for bit), into *tasks and *n; free with sto_tasks_free.
 * "no job N" when the job does not exist. */
int sto_frontier_load(sto_db *db, int64_t job, sto_task **tasks, int *n, tsr_err *err);

/* Free tasks returned by sto_frontier_load (NULL is fine). */
void sto_tasks_free(sto_task *tasks, int n);

/* Classes read back: class i stands for `count[i]` solutions numbered
 * first[i], first[i] + 1, ...; its ids are ids[start[i] .. start[i + 1]). */
typedef struct sto_classes {
    int n;
    int64_t *first;
    int *count;
    int *start;
    int *ids;
} sto_classes;

/* The classes holding the job's solutions numbered after+1 .. after+limit
 * (limit 1..STO_MAX_PAGE), in order: the first may begin before after+1,
 * the last end past after+limit, and there are fewer (or none) at the end
 * of what is stored.  One read transaction; it decodes the chunks it needs
 * (an index lookup, not a scan) and checks their CRC-32: a damaged chunk is
 * TSR_EIO naming the job and the chunk's first solution.  "no job N" when
 * the job does not exist.  Free with sto_classes_free. */
int sto_classes_read(sto_db *db, int64_t job, int64_t after, int limit, sto_classes *out,
                     tsr_err *err);

void sto_classes_free(sto_classes *c);

/* Schema 1 jobs (legacy): their text bodies in storage order with sequence
 * number > `after` (0 = from the start), at most `limit` (1..STO_MAX_PAGE):
 * bodies into *bodies and sequence numbers into *seqs (increasing, as
 * schema 1 numbered them).  Free with sto_solutions_free.  "no job N" when
 * the job does not exist. */
int sto_solutions_page(sto_db *db, int64_t job, int64_t after, int limit, char ***bodies,
                       int64_t **seqs, int *n, tsr_err *err);

/* Free what sto_solutions_page returned (NULLs are fine). */
void sto_solutions_free(char **bodies, int64_t *seqs, int n);

/* Copy the WAL into the database file (SQLite also does this on its own
 * every ~1000 pages).  With `truncate` also wait (up to the busy timeout)
 * for readers and empty the WAL file; without it, copy what readers allow
 * and return at once.  For the writer connection, when the daemon is idle. */
int sto_wal_checkpoint(sto_db *db, bool truncate, tsr_err *err);

#endif
