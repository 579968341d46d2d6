/*
 * jobs.h - the job manager: the part of tesserad that wires the HTTP server,
 * the SQLite store and the work-stealing pool together.
 *
 * It keeps every job's summary in memory (what status requests read), one
 * runner thread per running job (which prepares the solver, runs the pool
 * from the job's stored frontier and commits checkpoints), and a scheduler
 * thread that shares the daemon's threads between runnable jobs: strictly
 * by priority, equally within a priority, each job capped by its own
 * `threads` option.  jm_ops() exposes it to the server as an srv_ops table.
 */
#ifndef JM_JOBS_H
#define JM_JOBS_H

#include <jansson.h>

#include "server/server.h"
#include "tessera/tessera.h"

#define JM_CHECKPOINT_SECONDS 5.0
/* Daemon-side caps on a submitted puzzle (422 beyond them). */
#define JM_MAX_CELLS 20000
#define JM_MAX_PLACEMENTS 5000000 /* piece placements (tsr_cost.images) */
/* Every job listing carries the name: a few hundred bytes, not megabytes. */
#define JM_MAX_NAME 200            /* bytes of a puzzle's name */
#define JM_MAX_DESCRIPTION 4096    /* bytes of a puzzle's description */

/* Where jobs search: NULL in jm_config for the local pool; tesserad --mpi
 * gives the cluster (cluster.c).  search has tsr_pool_search's contract
 * and is also told the job's id, puzzle text and options (resolved, limit
 * 0), which remote ranks build their solvers from; err says why it
 * failed. */
typedef struct jm_backend {
    void *ctx;
    int (*search)(void *ctx, int64_t job, const char *puzzle, const char *options,
                  const tsr_solver *s, const tsr_task *tasks, int ntasks,
                  const tsr_callbacks *cb, const tsr_pool_hooks *hk, tsr_stats *st,
                  tsr_err *err);
    json_t *(*describe)(void *ctx); /* a "cluster" object for /healthz */
    int slots;   /* jobs that search at once (the scheduler's threads) */
    int threads; /* threads a running job is shown to use */
} jm_backend;

/* tesserad --mpi (cluster.c): the backend that searches on `cluster`, a
 * clu_cluster of src/mpi/cluster.h (kept opaque here, so that only
 * cluster.c needs MPI's headers). */
void jm_cluster_backend(void *cluster, jm_backend *out);

typedef struct jm_config {
    const char *db_path;       /* the SQLite file */
    int threads;               /* worker threads in all; 0 = one per CPU */
    double checkpoint_seconds; /* 0 = JM_CHECKPOINT_SECONDS */
    const char *puzzles_dir;   /* the bundled library, or NULL */
    const char *version;       /* shown by /healthz */
    const jm_backend *backend; /* NULL: the local pool */
    double max_memory;         /* bytes a job's solver may need (tsr_solver_check):
                                  0 = half the machine's memory, < 0 = no cap */
    int action_wait_ms;        /* how long pause/cancel wait for the job's runner
                                  before answering 202: 0 = JM_ACTION_WAIT_MS */
    void (*log)(const char *line); /* a line for the operator (no newline), or NULL */
} jm_config;

/* How often the scheduler makes sure the store's name still leads to the
 * file the daemon holds (docs/store.md, "The claim"). */
#define JM_WATCH_SECONDS 1.0

#define JM_ACTION_WAIT_MS 15000

/* The default of jm_config.max_memory: half the memory this process may
 * use: the machine's, or when lower the least memory limit of its own
 * cgroup and that cgroup's ancestors (systemd's MemoryMax= included). */
double jm_default_max_memory(void);

typedef struct jm_manager jm_manager;

/* Open the store, load every job, queue the unfinished ones again (a job
 * created by another engine version is failed with the reason) and start
 * the scheduler. */
int jm_open(const jm_config *cfg, jm_manager **out, tsr_err *err);

/* What the store's check at start-up left unchecked, its time being up
 * (one line, for the log), or NULL when it checked everything. */
const char *jm_check_note(const jm_manager *m);

/* The operations the HTTP server calls. */
void jm_ops(jm_manager *m, srv_ops *ops);

/* One line for systemd's STATUS=: jobs by state. */
void jm_status_line(jm_manager *m, char *buf, size_t size);

/* Stop: every running job commits a final checkpoint and stays "running"
 * in the store (so the next start resumes it); joins every thread. */
void jm_shutdown(jm_manager *m);

/* Free everything (after jm_shutdown). */
void jm_close(jm_manager *m);

#endif
