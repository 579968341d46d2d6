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
 * `threads` workers (0: one per online CPU).  cb->solution is called from
 * the workers one at a time; cb->progress from the calling thread, with the
 * statistics of all workers together.  The solver's limit counts solutions
 * over all workers.  Returns 0 or a negative TSR_E* code. */
int tsr_pool_run(const tsr_solver *s, int threads, const int *start, int nstart,
                 const tsr_callbacks *cb, tsr_stats *st);

/* Number of online CPUs (at least 1). */
int tsr_cpu_count(void);

#endif
