/*
 * tessera/pool.h - the search on several threads.
 *
 * A pool of worker threads, each with a deque of tasks (subtrees named by
 * their placed images).  A worker searches its newest task depth-first;
 * an idle worker steals the oldest task of another.  When workers are idle
 * and nothing is left to steal, busy workers give away the untried siblings
 * of their shallowest level (tsr_callbacks.split_wanted / donate), so one
 * huge subtree never leaves cores idle.  Solutions, counts and statistics
 * are those of the single-threaded run, whatever the number of threads.
 */
#ifndef TESSERA_POOL_H
#define TESSERA_POOL_H

#include "engine.h"

/* Search the whole puzzle (or the subtree below `start`, nstart images) with
 * `threads` workers (0: one per online CPU).  cb->solution (or cb->found) is called from
 * the workers one at a time; cb->progress from the calling thread, with the
 * statistics of all workers together.  The solver's limit counts solutions
 * over all workers.  Returns 0 or a negative TSR_E* code. */
int tsr_pool_run(const tsr_solver *s, int threads, const int *start, int nstart,
                 const tsr_callbacks *cb, tsr_stats *st);

/* A task: a subtree named by the images placed above it (an
 * order-independent set) and its weight, the fraction of the whole tree it
 * stands for.  The root task has no images and weight 1. */
typedef struct tsr_task {
    int n;
    int *images;
    double weight;
} tsr_task;

/* Checkpoints.  Every checkpoint_seconds, or as soon as checkpoint_wanted
 * (polled by the calling thread every few milliseconds) says so, the pool
 * parks its workers: each running search gives away everything it has not
 * started (TSR_SPLIT_ALL), finishes the small subtree it is in and stops.
 * With every worker parked, the queued tasks are exactly the work left and
 * every solution of the work done has been reported; checkpoint gets both
 * views at once.  It returns 0 to go on, nonzero to end the run there (the
 * tasks it was shown are then the remainder). */
typedef struct tsr_pool_hooks {
    void *ctx;
    double checkpoint_seconds; /* 0: only when checkpoint_wanted asks */
    int (*checkpoint_wanted)(void *ctx);
    int (*checkpoint)(void *ctx, const tsr_task *tasks, int ntasks, const tsr_stats *st);
    /* Optional: called on a worker's thread after each search of a task
     * (the whole task, or the part done before a park or a stop), with
     * that search's statistics; the calls' figures add up to the pool's.
     * Every call for the work a checkpoint commits comes before the
     * checkpoint.  Calls from several workers may overlap. */
    void (*task_done)(void *ctx, const int *images, int n, const tsr_stats *st);
} tsr_pool_hooks;

/* Search the given tasks (a frontier from an earlier checkpoint, or one
 * root task) with `threads` workers, as tsr_pool_run, with checkpoints when
 * hk is not NULL.  st->fraction is the summed weight of the work done in
 * this call; st->stopped is set when a callback, the limit or a checkpoint
 * ended the run early. */
int tsr_pool_search(const tsr_solver *s, int threads, const tsr_task *tasks, int ntasks,
                    const tsr_callbacks *cb, const tsr_pool_hooks *hk, tsr_stats *st);

/* Number of online CPUs (at least 1). */
int tsr_cpu_count(void);

#endif
