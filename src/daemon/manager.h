/*
 * manager.h - what the job manager's files share (internal to tesserad).
 *
 * The daemon's files form a line, each using only those after it:
 *   main.c    the program: options, signals, systemd, --check, --repair;
 *   api.c     the operations the HTTP server calls (srv_ops);
 *   batch.c   batches of jobs;
 *   door.c    what a submission must pass before it becomes a job;
 *   jobs.c    start-up, the scheduler, the store's watch, shutdown;
 *   run.c     one job's search on its runner thread, its checkpoints;
 *   record.c  a record job's split, its tasks' figures, the exported record;
 *   decode.c  stored solution classes back into solutions;
 *   table.c   the job table and a job's record, the life cycle's rules.
 * The locking rules (jobs.c explains them) hold across all of them: db_mu,
 * then rd_mu, then mu, then a run's sol_mu, never the other way round;
 * dec_mu alone; no SQLite call while holding mu.
 */
#ifndef JM_MANAGER_H
#define JM_MANAGER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "base/base.h"
#include "daemon/jobs.h"
#include "store/store.h"
#include "tessera/tessera.h"

#define SOLUTION_BUFFER_BYTES (8 << 20) /* a batch this big asks for a checkpoint */
#define SOLUTION_DELAY_S 1.0            /* and so does a solution waiting this long */
/* What one page of jobs or solutions may cost: past this many bytes of
 * JSON a page ends early, with `next`, whatever its limit (always at least
 * one item), so that concurrent readers cannot grow the daemon by
 * gigabytes. */
#define JM_PAGE_BYTES (4 << 20)
/* How long pause/cancel wait for the runner before answering 202 Accepted
 * (milliseconds; api.c counts whole seconds): jm_config.action_wait_ms,
 * set once by jm_open before any request. */
extern int jm_action_wait_ms;
#define ACTION_WAIT_MS jm_action_wait_ms
/* A job whose checkpoint the store refused waits 1, 2, 4 ... seconds
 * before it runs again, at most this long: a full disk is usually freed
 * by a person, so a minute's delay is short against their reaction, and
 * a retry costs one preparation and at most a checkpoint period of search. */
#define RETRY_MAX_S 60.0

enum want { WANT_NONE, WANT_PAUSE, WANT_CANCEL };

typedef struct jm_manager jm_manager;

typedef struct jm_job {
    jm_manager *m;
    int64_t id;
    int64_t batch;            /* the batch it was submitted in (batch.c), 0: none */
    enum sto_state state;
    int priority, engine_version;
    char *name;
    int64_t created, updated;
    int dims, cells, pieces;
    long long expected[3];
    char *options;            /* the options document in force */
    json_t *options_json;     /* the same, parsed once (copied into answers) */
    char *config;             /* the engine's configuration line, once prepared */
    char *error;
    int64_t solutions;        /* found, committed */
    int64_t stored;           /* of which stored (options.store) */
    bool legacy;              /* solutions stored as text by schema 1 */
    uint64_t nodes;           /* searched, stored plus the run in progress */
    double fraction, seconds;
    double rate;              /* nodes/s, smoothed */
    bool has_eta;             /* seconds left (tessera/eta.h), while running */
    double eta_low, eta_high;
    int levels;
    uint64_t *attempts, *fits;
    int nworkers;             /* the pool's workers, while running */
    tsr_worker_stats *workers;
    int64_t change;           /* bumped on every change (event streams) */
    char *cached;             /* the job object with stats as JSON text ... */
    size_t cached_len;
    int64_t cached_change;    /* ... as of this change (-1: none) */
    int cap;                  /* the job's own thread cap, 0 = none */
    int assigned;             /* threads the scheduler gives it */
    int threads;              /* threads its pool runs with now */
    enum want want;
    int store_failures;       /* commits refused in a row (jm_store_failed) */
    double retry_mono;        /* base_now() before which it does not run again; 0: none */
    int64_t retry_at;         /* the same, in seconds since the epoch (the API's clock) */
    bool has_runner, runner_done;
    pthread_t runner;
} jm_job;

/* A job's solution decoder: a solver built from its stored puzzle and
 * options, which turns stored classes back into solutions (api.c). */
typedef struct jm_decoder {
    int64_t id;
    tsr_puzzle *pz;
    tsr_solver *s;
    int refs;                 /* readers using it (dec_mu) */
    uint64_t used;            /* for eviction: the least recently used goes */
} jm_decoder;
#define DECODERS_MAX 8

typedef struct library_entry {
    char *file, *path;
    json_t *summary;
} library_entry;

struct jm_manager {
    jm_config cfg;
    int threads;
    double max_memory;        /* resolved cfg.max_memory: bytes, 0 = no cap */
    double started;
    base_mutex db_mu, rd_mu, mu;
    pthread_cond_t changed;
    sto_claim *claim;         /* the store file is this process's (store.h) */
    sto_db *db, *rdb;
    jm_job **jobs;            /* sorted by id */
    int njobs;
    size_t capjobs;
    bool shutdown;
    pthread_t scheduler;
    bool has_scheduler;
    uint64_t checkpoints;
    double checkpoint_seconds_sum;
    uint64_t store_failures;  /* commits the store refused since start */
    char *store_error;        /* why the last one failed, until a commit succeeds */
    char *lost;               /* why the store's file is no longer the daemon's, and where
                                 its copy went; NULL while it is (jobs.c, watch_store) */
    double watched;           /* when the scheduler last looked (its own) */
    char *check_note;         /* jm_check_note */
    base_mutex dec_mu;        /* the decoder cache; taken with no other lock held */
    jm_decoder *decoders[DECODERS_MAX];
    uint64_t dec_clock;
    library_entry *library;
    int nlibrary;
    size_t caplibrary;
};

/* jobs.c: the life cycle.  What an action does to a job: refuse it (409),
 * nothing (200, the job as it is: an action is idempotent where the job is
 * already there), ask the job's runner and wait for it (a live search acts
 * within milliseconds), or write the new state (or the deletion) to the
 * store. */
enum jm_step { JM_REFUSE, JM_NOOP, JM_ASK, JM_STORE, JM_DELETE };

typedef struct jm_action {
    const char *name;
    enum sto_state to; /* the state JM_STORE writes */
    enum want want;    /* what JM_ASK asks, and what a JM_STORE holds off meanwhile */
    /* by the job's state: with no live runner (idle) and with one (busy) */
    struct {
        enum jm_step idle, busy;
    } in[6];
    const char *refusal; /* why JM_REFUSE */
} jm_action;

const jm_action *jm_action_find(const char *name); /* NULL: no such action */
enum jm_step jm_action_step(const jm_action *a, const jm_job *j); /* under mu */

/* table.c: the job table and a job's record */
void jm_set_str(char **dst, const char *src);
/* A job function's "(under mu)": the job table's lock, when the job is in a
 * table (a job made only to describe a puzzle has none). */
#define JM_JOB_HELD(j) BASE_HELD((j)->m != NULL ? &(j)->m->mu : NULL)
jm_job *jm_find(jm_manager *m, int64_t id);       /* under mu */
/* A write refused because the store's file is gone from its path: true,
 * with 503 and the reason in rep; false while the store is the daemon's.
 * Takes mu. */
bool jm_refuse_lost(jm_manager *m, srv_reply *rep);
int jm_add_job(jm_manager *m, jm_job *j);          /* under mu */
void jm_free_job(jm_job *j);
void jm_set_options(jm_job *j, const char *text);
void jm_touch(jm_manager *m, jm_job *j);           /* under mu: a change for event streams */
/* under mu: the store refused to commit job j's checkpoint or state (why):
 * j waits, queued, and runs again after a back-off; jm_store_ok after a
 * commit that succeeded ends the wait */
void jm_store_failed(jm_manager *m, jm_job *j, const char *why);
void jm_store_ok(jm_manager *m, jm_job *j);
/* under mu: the error text job j keeps when its state moves (a copy, or
 * NULL): a note such as tesserad --repair's stays, the store's retry
 * message goes */
char *jm_kept_error(const jm_job *j);
void jm_count_states(jm_manager *m, int counts[6]); /* under mu */
/* under mu: the threads job j may run with now: what the scheduler gives
 * it, but no more than the other runners leave free */
int jm_target_threads(jm_manager *m, const jm_job *j);
void jm_describe(jm_job *j, const tsr_puzzle *pz);
json_t *jm_expected_json(const long long expected[3]);
json_t *jm_levels_json(int levels, const uint64_t *attempts, const uint64_t *fits);
json_t *jm_eta_json(double low, double high);
json_t *jm_job_json(const jm_job *j, bool with_stats); /* under mu */
/* ---- record.c: record jobs (options.record) ---- */
#define JM_MAX_RECORD_DEPTH 8 /* the option's maximum (tessera/options.h) */
typedef struct jm_record jm_record;

/* The tasks of a split as tsr_solver_split donates them (jm_split_add). */
typedef struct jm_split {
    sto_task *tasks;
    int n, cap;
    bool failed; /* out of memory */
} jm_split;
void jm_split_add(void *ctx, const int *images, int n, double weight);
void jm_split_free(jm_split *sp);

/* The tree split at `depth` (tsr_solver_split), the part above it in
 * *above; on error both are freed. */
int jm_split_make(const tsr_solver *s, int depth, jm_split *sp, tsr_stats *above, tsr_err *err);
/* Store the split as the job's record tasks and frontier, with `prog`, its
 * progress once the part above is counted (sto_record_begin). */
int jm_split_store(jm_manager *m, int64_t id, const jm_split *sp, const tsr_stats *above,
                   const sto_progress *prog, tsr_err *err);
/* The job's stored record tasks, or *out NULL when it has none yet. */
int jm_record_load(jm_manager *m, int64_t id, int depth, jm_record **out, tsr_err *err);
void jm_record_free(jm_record *rc);
/* A pool worker searched (part of) a task: its figures go to the record
 * task above it (any thread). */
void jm_record_task_done(jm_record *rc, const int *images, int n, const tsr_stats *st);
/* The rows whose figures moved since the last take, as totals, for a
 * checkpoint (malloc'd); TSR_EINVAL when a task lay under no record task
 * (the job must fail), TSR_ENOMEM.  The pending figures are cleared: a
 * checkpoint that fails loses them with the work they came from. */
int jm_record_take(jm_record *rc, sto_tally **out, int *n);
/* Those totals were committed. */
void jm_record_committed(jm_record *rc, const sto_tally *t, int n);
/* A completed record job's record as JSON (docs/records.md), malloc'd.
 * TSR_EINVAL: no record, or not completed; TSR_EIO: figures that do not
 * add up. */
int jm_record_export(jm_manager *m, int64_t id, char **out, tsr_err *err);

char *jm_stats_text(int levels, const uint64_t *attempts, const uint64_t *fits,
                    const char *config);
void jm_stats_parse(const char *text, int levels, uint64_t *attempts, uint64_t *fits);
/* A new queued job's fields, as created in the store (id, batch or 0, and
 * the creation time the store wrote). */
void jm_job_init(jm_job *j, jm_manager *m, int64_t id, int64_t batch, int64_t created,
                 const tsr_options *opt, const char *options, const tsr_puzzle *pz);

/* decode.c: a job's decoder (its puzzle and solver), from the cache or
 * built, held until jm_decoder_put; NULL with err when the job's puzzle
 * cannot be read.  jm_each_solution calls fn for each of solutions
 * after+1 .. after+limit stored by job id (*n: how many), in order. */
typedef int (*solution_fn)(void *ctx, const tsr_puzzle *pz, int64_t seq, const tsr_solution *sol);
jm_decoder *jm_decoder_get(jm_manager *m, int64_t id, tsr_err *err);
void jm_decoder_put(jm_manager *m, jm_decoder *d);
int jm_each_solution(jm_manager *m, jm_decoder *d, int64_t id, int64_t after, int limit,
                     solution_fn fn, void *ctx, int *n, tsr_err *err);
void jm_decoders_free(jm_manager *m);

/* door.c: a submit body read (400, 422), not yet checked against the caps. */
bool jm_read_puzzle(const char *body, size_t len, tsr_puzzle **pz, tsr_options *opt,
                    srv_reply *rep);
/* A submit body read and checked as POST /api/v1/jobs does: true with the
 * puzzle and options, or false with the error (400, 413, 422) in rep. */
bool jm_read_submission(jm_manager *m, const char *body, size_t len, tsr_puzzle **pz,
                        tsr_options *opt, srv_reply *rep);
/* A tsr_stop for work done at the door on a server thread: it stops at
 * `until` (base_now() seconds) or when the daemon shuts down. */
typedef struct jm_deadline {
    jm_manager *m;
    double until;
} jm_deadline;
int jm_deadline_passed(void *ctx);
/* Where each piece fits (tsr_puzzle_fits, bounded in time and size): false
 * with 422 in rep for a puzzle that can have no solution (a required piece
 * that fits nowhere, cells nothing covers), else true with *fits (may be
 * NULL) the {"pieces", "warnings"} object, or JSON null when the puzzle
 * was too big to check at the door. */
bool jm_check_fits(jm_manager *m, const tsr_puzzle *pz, const tsr_options *opt, json_t **fits,
                   srv_reply *rep);
json_t *jm_puzzle_json(const tsr_puzzle *pz); /* normalised Puzzle JSON, or NULL */
/* batch.c: POST /api/v1/batches, GET /api/v1/batches[/{id}] */
void jm_batch_submit(void *ctx, const char *body, size_t len, srv_reply *rep);
void jm_batches(void *ctx, int64_t id, int64_t after, int limit, srv_reply *rep);

/* run.c: a job's runner thread (arg: the jm_job) */
void *jm_runner_main(void *arg);

#endif
