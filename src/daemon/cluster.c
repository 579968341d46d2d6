/*
 * cluster.c - tesserad --mpi: the job manager's searches on the ranks of an
 * MPI job (src/mpi/cluster.c; docs/cluster.md).
 *
 * This file only adapts: a job's search becomes clu_search with the job's
 * id, stored puzzle text and resolved options, so that the worker ranks
 * build the same solver and the tasks of its frontier mean the same on
 * every rank.  Checkpoints, exactly-once commits and resumption stay the
 * job manager's (run.c), which is why a job checkpointed on a cluster
 * resumes on one machine and the other way round.  The cluster searches one
 * job at a time: the scheduler gets one slot.  Every rank searches, rank 0
 * included, with the same number of threads.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <string.h>

#include "daemon/jobs.h"
#include "mpi/cluster.h"

static int cluster_search(void *ctx, int64_t job, const char *puzzle, const char *options,
                          const tsr_solver *s, const tsr_task *tasks, int ntasks,
                          const tsr_callbacks *cb, const tsr_pool_hooks *hk, tsr_stats *st,
                          tsr_err *err)
{
    clu_job cj = {job, puzzle, strlen(puzzle), options};
    return clu_search(ctx, &cj, s, tasks, ntasks, cb, hk, st, err);
}

static json_t *cluster_describe(void *ctx)
{
    return clu_report_json(ctx);
}

void jm_cluster_backend(void *cluster, jm_backend *out)
{
    clu_cluster *c = cluster;
    int n = clu_size(c), t = clu_threads(c) > 0 ? clu_threads(c) : tsr_cpu_count();
    *out = (jm_backend){.ctx = c, .search = cluster_search, .describe = cluster_describe,
                        .slots = 1, .threads = n * t};
}
