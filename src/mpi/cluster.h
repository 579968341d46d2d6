/*
 * cluster.h - searches spread over the ranks of an MPI job
 * (`tessera solve --mpi`, `tesserad --mpi`; docs/cluster.md).
 *
 * Rank 0 coordinates.  It holds a cluster (clu_open) for as long as the
 * program runs and searches through it one job at a time (clu_search, the
 * same contract as tsr_pool_search): it keeps the queue of tasks (subtrees
 * named by their placed images, tessera/pool.h), hands batches of them to
 * the workers, takes work back from a busy one for an idle one, and parks
 * the whole cluster for checkpoints.  Every other rank serves (clu_serve):
 * it builds the job's solver from the puzzle text and options rank 0
 * sends, and searches its batches with tsr_pool_search on its own threads.
 * Rank 0 searches too, through the same worker loop on a thread of its own
 * that exchanges the same messages through in-process mailboxes.  Counts
 * and statistics are those of the one-process run.
 *
 * A worker rank that stops answering for timeout_s is given up: its batch
 * goes back to the queue whole and the solutions it sent for that batch are
 * dropped (rank 0 reports a batch's solutions only when the batch is done),
 * so the search still ends with exact counts.  Rank 0's own worker is never
 * given up, so the search always ends.
 *
 * MPI is used from one thread at a time (MPI_THREAD_SERIALIZED): on a
 * worker, the thread that called clu_serve; on rank 0, whichever thread
 * holds the cluster (clu_search or clu_tick).  This header does not include
 * mpi.h, so its callers need no MPI flags.
 */
#ifndef TESSERA_MPI_CLUSTER_H
#define TESSERA_MPI_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "tessera/pool.h"

/* One rank's part, as rank 0 sees it.  Messages and bytes are point-to-point
 * MPI traffic (sent and received by that rank; workers talk only to rank
 * 0).  Every rank searches (rank 0 through a worker thread of its own):
 * busy_s is the time it held a batch and idle_s the rest of the time since
 * the cluster opened; batches and tasks are what it was handed, given_back
 * the batches it ended early to return work.  cpu_s is the process's CPU
 * time (all threads), as last reported. */
typedef struct clu_rank_stats {
    uint64_t msgs_sent, bytes_sent, msgs_recv, bytes_recv;
    uint64_t batches, tasks, given_back;
    double busy_s, idle_s, cpu_s;
    int pid;
    char host[64];
    bool busy, lost; /* holds a batch now; given up after a silence */
} clu_rank_stats;

typedef struct clu_cluster clu_cluster;

/* What workers need to build a job's solver: the puzzle text (any format
 * tsr_puzzle_read takes) and the resolved options as JSON (limit 0).  key
 * names the job; a worker keeps the solver of the last key it was sent. */
typedef struct clu_job {
    int64_t key;
    const char *puzzle;
    size_t puzzle_len;
    const char *options;
} clu_job;

/* MPI_Init_thread (serialized) and this process's place in MPI_COMM_WORLD.
 * Returns 0 or TSR_EUNSUPP when MPI cannot give the threading needed. */
int clu_init(int *argc, char ***argv, int *rank, int *size, tsr_err *err);
/* MPI_Finalize, for a rank that leaves before serving or opening. */
void clu_finalize(void);

/* A worker rank's whole life: serve rank 0 until it says EXIT (0), or until
 * rank 0 has been silent for the timeout it set (TSR_EIO, said in err);
 * then MPI is finalized (unless a rank was lost: see clu_close). */
int clu_serve(tsr_err *err);

/* Rank 0: the cluster of every rank of MPI_COMM_WORLD.  threads: pool
 * threads per rank (0: one per core of each node); timeout_s: silence after
 * which a busy worker is given up (0: 30 s). */
int clu_open(int threads, double timeout_s, clu_cluster **out, tsr_err *err);

/* Search the tasks of a job on the cluster, as tsr_pool_search: solutions to
 * cb->solution and progress to cb->progress on the calling thread; hk, when
 * set, gets checkpoints at which every batch is back, so the tasks it is
 * shown are exactly the work left and every solution of the work done has
 * been reported.  The solver must be built from job's texts.  The
 * solver's limit counts solutions of this call.  Returns 0 or a negative
 * TSR_E* code (err says which rank failed and why). */
int clu_search(clu_cluster *c, const clu_job *job, const tsr_solver *s, const tsr_task *tasks,
               int ntasks, const tsr_callbacks *cb, const tsr_pool_hooks *hk, tsr_stats *st,
               tsr_err *err);

/* Between searches: keep idle workers sure rank 0 lives and drain stray
 * messages.  Returns at once when a search holds the cluster. */
void clu_tick(clu_cluster *c);

/* Ranks in the cluster; threads per rank as configured; requests rank 0
 * made for work back, for an idle rank. */
int clu_size(const clu_cluster *c);
int clu_threads(const clu_cluster *c);
uint64_t clu_steals(clu_cluster *c);
/* A snapshot of every rank's stats into out[0..size-1] (any thread). */
void clu_ranks(clu_cluster *c, clu_rank_stats *out);
/* The same, with the cluster's size, threads and steals, as the "cluster"
 * object of docs/cluster.md (any thread). */
json_t *clu_report_json(clu_cluster *c);

/* Tell every worker to leave, finalize MPI and free the cluster.  After a
 * rank was lost, MPI_Finalize could wait for it for ever, so then every
 * rank leaves without it. */
void clu_close(clu_cluster *c);

#endif
