/*
 * cli.h - what tessera.c (the in-process solver) and remote.c (the daemon
 * client commands) share: exit codes, the usage-error printer, and the job
 * options, whose command-line spelling, codes and checks must be the same
 * for `tessera solve` and `tessera submit`.
 */
#ifndef TESSERA_CLI_CLI_H
#define TESSERA_CLI_CLI_H

#include <getopt.h>
#include <stdbool.h>

#include <jansson.h>

#include "tessera/tessera.h"

#define EXIT_USAGE 2

/* Codes of the long options that have no short form. */
enum {
    O_JSON = 256, O_POLYCUBE, O_STATS, O_TRACE, O_NOPROGRESS, O_UNIQUE, O_LIMIT, O_GOAL,
    O_SAMPLE, O_FILA, O_ORDER, O_NOF, O_NONOF, O_VOLUME, O_VTRIGGER, O_PARITY, O_PFILTER,
    O_FIT, O_NOFIT, O_REDUNDANCY, O_THREADS, O_ENGINE, O_PRIORITY, O_MPI,
    /* the daemon client's own */
    O_SERVER, O_TOKEN, O_WATCH, O_STATE, O_AFTER, O_FORMAT, O_ALL,
    /* batch submit's own */
    O_HOLE, O_NAME, O_EVERY,
    /* estimate's own */
    O_PROBES, O_SECONDS, O_SEED
};

/* The struct option entries of the job options both solve and submit take. */
#define CLI_JOB_OPTIONS                                          \
    {"unique", required_argument, NULL, O_UNIQUE},               \
    {"limit", required_argument, NULL, O_LIMIT},                 \
    {"goal", required_argument, NULL, O_GOAL},                   \
    {"threads", required_argument, NULL, O_THREADS},             \
    {"fila", required_argument, NULL, O_FILA},                   \
    {"order", required_argument, NULL, O_ORDER},                 \
    {"nof", no_argument, NULL, O_NOF},                           \
    {"no-nof", no_argument, NULL, O_NONOF},                      \
    {"volume", optional_argument, NULL, O_VOLUME},               \
    {"vtrigger", required_argument, NULL, O_VTRIGGER},           \
    {"parity", optional_argument, NULL, O_PARITY},               \
    {"pfilter", required_argument, NULL, O_PFILTER},             \
    {"fit", no_argument, NULL, O_FIT},                           \
    {"no-fit", no_argument, NULL, O_NOFIT},                      \
    {"redundancy", optional_argument, NULL, O_REDUNDANCY}

/* Command-line options apply on top of the file's job options, so they are
 * collected first and applied after the file is read. */
typedef struct flag {
    int code;
    const char *arg;
} flag;

/* options.c: prints "tessera: <fmt with arg>" and the help hint; returns
 * EXIT_USAGE. */
int cli_usage_error(const char *fmt, const char *arg);

bool cli_parse_long(const char *s, long long lo, long long hi, long long *out);

/* options.c: checks one job option and stores it in o: 0, or EXIT_USAGE
 * after saying why.  A flag that is no job option (a command's own) is
 * left to its command: 0, o unchanged. */
int cli_apply_flag(const flag *f, tsr_options *o);

/* The daemon client commands (remote.c): argv[0] is the command name. */
int cli_remote_main(int argc, char **argv);

/* True when cmd is one of the commands cli_remote_main runs. */
bool cli_is_remote_command(const char *cmd);

/* tessera solve --mpi (mpi.c, built with MPI only). */
typedef struct cli_mpi cli_mpi;
/* Does this solve command line ask for --mpi (any abbreviation getopt
 * takes)?  Looked at before MPI starts. */
bool cli_mpi_wanted(int argc, char **argv);
/* Start MPI: the worker ranks serve; rank 0 runs solve(argc, argv, m),
 * then lets the workers go.  Returns the exit status. */
int cli_mpi_main(int argc, char **argv, int (*solve)(int, char **, cli_mpi *));
/* Search on the cluster (threads per rank, 0: one per core of each node);
 * *cluster, when asked, receives the per-rank report as JSON, and table
 * prints it on stderr. */
int cli_mpi_search(cli_mpi *m, const char *text, size_t len, const tsr_solver *s, int threads,
                   const tsr_callbacks *cb, tsr_stats *st, json_t **cluster, bool table,
                   tsr_err *err);

#endif
