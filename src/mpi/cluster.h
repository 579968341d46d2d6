/*
 * cluster.h - one search spread over the ranks of an MPI job
 * (`tessera solve --mpi`; docs/cluster.md).
 *
 * Rank 0 coordinates: it holds the queue of tasks (subtrees named by their
 * placed images, tessera/pool.h), hands batches of them to the worker ranks
 * 1..N-1, and takes work back from a busy rank for an idle one through the
 * pool's park-and-report checkpoint, which yields exactly the work that rank
 * has left.  Each worker searches its batch with tsr_pool_search on its own
 * threads and streams its solutions to rank 0.  With one rank, rank 0
 * searches alone.  Counts and statistics are those of the one-process run.
 *
 * Every MPI call is made by the thread that initialised MPI
 * (MPI_THREAD_FUNNELED); the pool's worker threads only fill buffers.  This
 * header does not include mpi.h, so its callers need no MPI flags.
 */
#ifndef TESSERA_MPI_CLUSTER_H
#define TESSERA_MPI_CLUSTER_H

#include <stdint.h>

#include "tessera/pool.h"

/* One rank's part of the run.  Messages and bytes are those of the
 * search's point-to-point traffic (the setup's broadcasts and the final
 * gathering of these counts are not included). */
typedef struct clu_rank_stats {
    uint64_t msgs_sent, bytes_sent, msgs_recv, bytes_recv;
    uint64_t batches;     /* batches searched (rank 0: handed out) */
    uint64_t tasks;       /* tasks received in them (rank 0: handed out) */
    uint64_t given_back;  /* batches ended early to give work back
                             (rank 0: such requests it sent) */
    double busy_s;        /* searching (rank 0: the whole coordination) */
    double idle_s;        /* waiting for work (rank 0: 0) */
    double cpu_s;         /* CPU time of the process (all its threads) */
} clu_rank_stats;

typedef struct clu_stats {
    int nranks;
    clu_rank_stats *ranks; /* [nranks], rank 0 only; free with clu_stats_free */
} clu_stats;

/* MPI_Init_thread (funneled) and this process's place in MPI_COMM_WORLD.
 * Returns 0 or TSR_EUNSUPP when MPI cannot give the threading needed. */
int clu_init(int *argc, char ***argv, int *rank, int *size, tsr_err *err);
void clu_finalize(void);
/* Abort the whole job (a rank cannot go on while the others wait on it). */
void clu_abort(int code);

/* Rank 0 sends len bytes at *buf to every rank; the others receive into a
 * malloc'd *buf and *len.  Collective.  Returns 0 or TSR_ENOMEM. */
int clu_bcast_bytes(char **buf, size_t *len);
/* The minimum of rc over all ranks (a failed setup anywhere fails all). */
int clu_agree(int rc);

/* The search, called on every rank with solvers built from the same puzzle
 * text and resolved options (limit 0 on the workers: rank 0 counts
 * solutions against its own solver's limit).  threads: workers per rank.
 * On rank 0 solutions go to cb->solution (in no particular order), progress
 * to cb->progress, and *st and *cs receive the totals; on the other ranks
 * cb is not used and *st, *cs are left empty.  Collective.  Returns 0 or a
 * negative TSR_E* code (the same on every rank when a worker fails). */
int clu_solve(const tsr_solver *s, int threads, const tsr_callbacks *cb, tsr_stats *st,
              clu_stats *cs, tsr_err *err);

void clu_stats_free(clu_stats *cs);

#endif
