/*
 * remote.h - what the daemon commands share (remote.c, batch.c): the
 * connection and the parsed command line, a call whose answer is a JSON
 * object, readers of job objects and the job table's rows.  Internal to
 * the CLI.
 */
#ifndef TESSERA_CLI_REMOTE_H
#define TESSERA_CLI_REMOTE_H

#include <jansson.h>
#include <stdbool.h>

#include "cli/cli.h"
#include "cli/client.h"
#include "tessera/options.h"
#include "tessera/puzzle.h"

#define EXIT_FAILED 1
#define LIST_PAGE 1000 /* jobs or batches per page of a listing */

typedef struct remote {
    cli_http http;
    bool json;
    bool tty; /* stdout is a terminal: watch redraws one line */
} remote;

/* What the command line said, beyond the global options. */
typedef struct args {
    flag *flags; /* submit's job options, in command-line order */
    int nflags;
    bool watch, all;
    const char *state, *format;
    long long after, limit; /* solutions: --after, --limit (0: the server's default) */
    const char *operand;    /* FILE, or the job id as written */
    long long id;
    char **files;           /* batch submit: every FILE */
    int nfiles;
    const char *hole, *name; /* batch submit --hole, --name */
    const char *problem;    /* submit --problem: of a BurrTools file */
    bool every;             /* batch submit --every-position */
} args;

/* A call whose answer is a JSON object: 0 and *out, or the exit status
 * after saying why.  With --json and echo, the answer is also printed as
 * the daemon sent it. */
int rmt_call_json(const remote *r, const char *method, const char *path, const char *body,
                  bool echo, json_t **out);
/* A number or a string member of a job object (0, "" when absent). */
double rmt_num(const json_t *o, const char *key);
const char *rmt_str(const json_t *o, const char *key);
bool rmt_is_final(const char *state);
/* One JSON document on a line of stdout. */
void rmt_print_json_line(const json_t *j);
/* The job table: its header and one job a row. */
void rmt_print_job_header(void);
void rmt_print_job_row(const json_t *job);
/* A submit body: the file's puzzle or polycube text and the options in
 * force (a BurrTools file goes as the puzzle pz read from it, in Puzzle
 * JSON); NULL after saying why. */
char *rmt_submit_body(const char *name, const char *text, size_t len, const tsr_puzzle *pz,
                      const tsr_options *opt);

/* batch.c: tessera batch submit | show | list. */
int rmt_batch_submit(remote *r, const args *a);
int rmt_batch_show(remote *r, const args *a);
int rmt_batch_list(remote *r, const args *a);

#endif
