/*
 * mpi.c - `tessera solve --mpi`: the command line's side of a search over
 * the ranks of an MPI job (src/mpi/cluster.c does the search;
 * docs/cluster.md).
 *
 * Only rank 0 runs the command: it parses the command line, reads the
 * puzzle, prints and exits with the status.  Every other rank only serves
 * the cluster (clu_serve) and is told what to build and search by rank 0,
 * so usage errors are said once and the puzzle file need exist on rank 0's
 * node only.  Whatever way rank 0's command ends, cli_mpi_main closes the
 * cluster, which lets the workers leave.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "mpi/cluster.h"

struct cli_mpi {
    clu_cluster *c; /* opened at the first search */
};

int cli_mpi_main(int argc, char **argv, int (*solve)(int, char **, cli_mpi *))
{
    int rank = 0, size = 1, status;
    tsr_err err = {{0}};
    int rc = clu_init(&argc, &argv, &rank, &size, &err);
    if (rc != 0) {
        if (rank == 0)
            fprintf(stderr, "tessera: %s\n", err.msg);
        clu_finalize();
        return 1;
    }
    if (rank != 0) {
        rc = clu_serve(&err);
        if (rc != 0)
            fprintf(stderr, "tessera: rank %d: %s\n", rank, err.msg);
        return rc == 0 ? 0 : 1;
    }
    cli_mpi m = {0};
    status = solve(argc, argv, &m);
    if (m.c == NULL && clu_open(0, 0, &m.c, &err) != 0) {
        fprintf(stderr, "tessera: %s\n", err.msg);
        clu_finalize(); /* the workers are left to mpirun */
        return 1;
    }
    clu_close(m.c); /* the workers leave; MPI is finalized */
    return status;
}

static void print_cluster_table(clu_cluster *c)
{
    int n = clu_size(c);
    clu_rank_stats *r = calloc((size_t)n, sizeof *r);
    if (r == NULL)
        return;
    clu_ranks(c, r);
    fprintf(stderr, "rank role         batches    tasks given-back msgs-sent bytes-sent "
                    "msgs-recv bytes-recv   busy-s   idle-s    cpu-s\n");
    for (int k = 0; k < n; k++)
        fprintf(stderr, "%4d %-11s %8llu %8llu %10llu %9llu %10llu %9llu %10llu %8.3f %8.3f %8.3f\n",
                k, n == 1 ? "solo" : k == 0 ? "coordinator" : r[k].lost ? "lost" : "worker",
                (unsigned long long)r[k].batches, (unsigned long long)r[k].tasks,
                (unsigned long long)r[k].given_back, (unsigned long long)r[k].msgs_sent,
                (unsigned long long)r[k].bytes_sent, (unsigned long long)r[k].msgs_recv,
                (unsigned long long)r[k].bytes_recv, r[k].busy_s, r[k].idle_s, r[k].cpu_s);
    free(r);
}

int cli_mpi_search(cli_mpi *m, const char *text, size_t len, const tsr_solver *s, int threads,
                   const tsr_callbacks *cb, tsr_stats *st, json_t **cluster, bool table,
                   tsr_err *err)
{
    memset(st, 0, sizeof *st);
    int rc = m->c ? 0 : clu_open(threads, 0, &m->c, err);
    if (rc != 0)
        return rc;
    /* the workers get the resolved options without the limit: rank 0 counts */
    tsr_options ro = *tsr_solver_options(s);
    ro.limit = 0;
    char *options = tsr_options_write_json(&ro);
    if (options == NULL)
        return tsr_err_set(err, TSR_ENOMEM, "out of memory");
    clu_job job = {1, text, len, options};
    tsr_task root = {0, NULL, 1.0};
    rc = clu_search(m->c, &job, s, &root, 1, cb, NULL, st, err);
    free(options);
    if (cluster)
        *cluster = clu_report_json(m->c);
    if (table)
        print_cluster_table(m->c);
    return rc;
}
