/*
 * cli.h - what tessera.c (the in-process solver) and remote.c (the daemon
 * client commands) share: exit codes, the usage-error printer, and the job
 * options on the command line (options.c), made from their list
 * (tessera/options.h) so that they are spelt, coded and checked alike for
 * `tessera solve` and `tessera submit`.
 */
#ifndef TESSERA_CLI_CLI_H
#define TESSERA_CLI_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "tessera/tessera.h"

#define EXIT_USAGE 2

/* Codes of the long options that have no short form.  The job options'
 * codes come from their list (tessera/options.h): CLI_JOB_CODE. */
enum {
    O_JSON = 256, O_POLYCUBE, O_STATS, O_TRACE, O_NOPROGRESS, O_SAMPLE, O_ENGINE, O_MPI,
    /* the daemon client's own */
    O_SERVER, O_TOKEN, O_WATCH, O_STATE, O_AFTER, O_FORMAT, O_ALL,
    /* batch submit's own */
    O_HOLE, O_NAME, O_EVERY,
    /* estimate's own */
    O_PROBES, O_SECONDS, O_SEED,
    /* reading a BurrTools file: which problem (solve, estimate, submit) */
    O_PROBLEM,
    O_JOB = 1024 /* the first job option's code */
};

/* A job option's code, --name (its --no-name is one more). */
#define CLI_JOB_CODE(name) (O_JOB + 2 * TSR_OPTION_##name)

/* How many struct option entries a command's table needs: its own
 * (NULL-terminated: n_own counts the terminator) and every job option. */
#define CLI_LONGOPTS(n_own) ((n_own) + 2 * TSR_NOPTIONS)

/* out: the command's own entries, then the job options (daemon: also the
 * daemon's own, priority and store), then the terminator.  out has room
 * for CLI_LONGOPTS entries. */
void cli_longopts(struct option *out, const struct option *own, bool daemon);

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

/* options.c: checks one job option (a redundancy piece against pz unless
 * it is NULL) and stores it in o: 0, or EXIT_USAGE after saying why.  A
 * flag that is no job option (a command's own) is left to its command: 0,
 * o unchanged. */
int cli_apply_flag(const flag *f, const tsr_puzzle *pz, tsr_options *o);

/* options.c: the job options for `tessera help`: those that say what the
 * job asks, or (engine) those that tune the search. */
void cli_print_options(FILE *f, bool engine);

/* options.c: the table of docs/puzzle-format.md, in Markdown. */
void cli_print_options_markdown(FILE *f);

/* The daemon client commands (remote.c): argv[0] is the command name. */
int cli_remote_main(int argc, char **argv);

/* tessera verify RECORD ... (verify.c): re-run a record's tasks. */
int cli_verify_main(int argc, char **argv);

/* tessera convert IN ... (convert.c): a puzzle file in another format. */
int cli_convert_main(int argc, char **argv);

/* True when cmd is one of the commands cli_remote_main runs. */
bool cli_is_remote_command(const char *cmd);

/* tessera solve --mpi (mpi.c, in tessera-mpi only: tessera runs
 * tessera-mpi for --mpi, so that it links no MPI itself). */
typedef struct cli_mpi cli_mpi;
/* Does this solve command line ask for --mpi (any abbreviation getopt
 * takes)?  Looked at before MPI starts (tessera.c). */
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
