/*
 * tessera.c - the command-line tool.
 *
 *   tessera solve [options] FILE     solve a puzzle in-process
 *   tessera estimate [options] FILE  how long solve would take (Knuth's estimate)
 *   tessera submit|status|watch|solutions|pause|resume|cancel|delete ...
 *                                    talk to the daemon (remote.c)
 *   tessera convert [--to=FORMAT] [-o OUT] IN   a puzzle in another format (convert.c)
 *   tessera version | help [options [--markdown]]
 *
 * Solutions go to stdout, progress and errors to stderr; the summary goes
 * to stdout with -q, else to stderr after the solutions (one JSON object
 * with --json).  Exit status: 0 done, 1 the search failed, 2 bad usage or
 * input, 130 interrupted (Ctrl-C: the search stops as the daemon's do,
 * through the pool's checkpoint, and the summary says how far it got).
 * Options given on the command line override those of a JSON job file; the
 * daemon commands take --server and --token before the command name too.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"
#include "cli/cli.h"
#include "geom/geom.h"
#include "tessera/tessera.h"


/* The help, around the job options, which come from their list. */
static const char *usage_head =
    "usage: tessera solve [options] FILE    (FILE: puzzle JSON, polycube text or a BurrTools\n"
    "                                         .xmpuzzle file; - for stdin)\n"
    "       tessera estimate [--probes=N] [--seconds=S] [--seed=N] [--json] [options] FILE\n"
    "       tessera submit [--watch] [--problem=N|NAME] [job options] FILE   (queue it on tesserad)\n"
    "       tessera status [--state=S] [ID]\n"
    "       tessera watch ID\n"
    "       tessera solutions [--after=SEQ] [--limit=N] [--format=json|text] [--all] ID\n"
    "       tessera pause|resume|cancel|delete ID\n"
    "       tessera batch submit [--name=N] [--hole=each-cell|ROWS [--every-position]]\n"
    "                            [job options] FILE...   (a batch of jobs on tesserad)\n"
    "       tessera batch show ID | batch list\n"
    "       tessera record ID > FILE     (a completed record job's record, from tesserad)\n"
    "       tessera rerun [--watch] ID   (a job's puzzle and options again, as a new job)\n"
    "       tessera verify [--tasks=all|N-M,...] [--sample=K [--seed=S]] [--threads=N]\n"
    "                      [--quiet] RECORD   (re-run a record's tasks and compare)\n"
    "       tessera convert [--problem=N|NAME] [--to=json|polycube|xmpuzzle] [-o OUT] IN\n"
    "                      (IN in another format: Puzzle JSON, a polycube definition\n"
    "                      or a BurrTools .xmpuzzle; --to or OUT's extension says which)\n"
    "       tessera version\n"
    "       tessera help [options [--markdown]]   (this, or the job options alone)\n"
    "  (--server and --token go before or after a daemon command's name)\n"
    "\n"
    "reading:\n"
    "      --problem=N|NAME   a BurrTools file's problem: its number from 1 or its name\n"
    "                         (default: the first)\n"
    "output:\n"
    "  -q, --quiet            print no solutions, only the summary\n"
    "      --json             solutions as JSON lines, the summary as one JSON object\n"
    "                         (on stdout with -q, else on stderr after the solutions)\n"
    "      --polycube         solutions (or --goal partial assemblies) as polycube sub-puzzles\n"
    "      --stats            attempts and fits per number of pieces left, on the summary\n"
    "      --trace            print each placement of the DLX levels on stderr\n"
    "      --no-progress      no progress lines on stderr\n"
    "running:\n"
    "      --engine=KIND      pool (work-stealing threads; the default) or plain (the\n"
    "                         single-threaded search without the pool)\n"
    "      --sample=T,R,SEED  Monte Carlo: T random trials, each ending after the\n"
    "                         first subtree with R pieces left is searched\n"
    "      --mpi              one search over the ranks of an MPI job (start it with\n"
    "                         mpirun; --threads is per rank; see docs/cluster.md)\n";

static const char *usage_job =
    "job options (of solve, estimate, submit and batch submit; in a job file, the\n"
    "\"options\" of docs/puzzle-format.md; the command line's go on top of the file's):\n";

static const char *usage_engine = "engine options (default: chosen automatically from the puzzle):\n";

static const char *usage_tail =
    "\n"
    "estimate: nodes and solutions by Knuth's estimator (random descents making the\n"
    "search's own choices), this machine's node rate from a short real run, and the\n"
    "time on 1 thread and on all cores (or --threads), assuming linear scaling.\n"
    "Takes the job options of solve, and:\n"
    "      --probes=N         at most N descents (default 1000000)\n"
    "      --seconds=S        at most S seconds of descents (default 2); the node rate\n"
    "                         takes another 0.5 s\n"
    "      --seed=N           random seed (default 1); a run that --probes ends is\n"
    "                         the same for the same seed\n"
    "      --json             one JSON object (as POST /api/v1/estimate answers)\n"
    "\n"
    "daemon commands (tesserad's REST API; FILE and the job options as for solve):\n"
    "      --server=URL       tesserad's address (default $TESSERA_SERVER, else\n"
    "                         http://127.0.0.1:8080)\n"
    "      --token=T          sent as 'Authorization: Bearer T' (default $TESSERA_TOKEN)\n"
    "      --json             print the server's JSON (one object per line for watch)\n"
    "      --watch            submit: then follow the job like watch\n"
    "      --state=S          status: only jobs queued, running, paused, completed,\n"
    "                         cancelled or failed\n"
    "      --after=SEQ        solutions: start after solution SEQ (default 0)\n"
    "      --limit=N          solutions: per page, 1 to 1000 (default 100)\n"
    "      --format=F         solutions: json (one solution per line) or text\n"
    "      --hole=SHAPE       batch submit: one job per position of a hole in FILE's\n"
    "                         board, one per symmetry class; SHAPE is each-cell or rows\n"
    "                         of '#' and '.' split by '/' (##/## : a 2x2 square)\n"
    "      --every-position   batch submit --hole: every position, not one per class\n"
    "      --name=N           batch submit: the batch's name\n"
    "      --all              solutions: every stored one; as JSON lines, the daemon's\n"
    "                         streamed export (no pages, whatever the count)\n"
    "  submit prints the new job's id; watch follows the job's progress until it ends\n"
    "  (exit 0 completed, 1 cancelled or failed); solutions pages through the found\n"
    "  solutions, --all up to the last; delete takes finished jobs only.\n"
    "  Exit status of daemon commands: 0 done, 1 the daemon failed (5xx) or cannot be\n"
    "  reached, 2 bad usage, bad input or a request the daemon refused (4xx).\n";

/* The job options' two sections of the help. */
static void print_job_options(FILE *f)
{
    fputs(usage_job, f);
    cli_print_options(f, false);
    fputs(usage_engine, f);
    cli_print_options(f, true);
}

static void print_usage(FILE *f)
{
    fputs(usage_head, f);
    print_job_options(f);
    fputs(usage_tail, f);
}

#define EXIT_INTERRUPTED 130 /* 128 + SIGINT, as a shell reports it */

/* Set by the SIGINT handler, read by the search's callbacks.  The handler
 * may run on any thread and the callbacks run on the pool's workers, so a
 * volatile sig_atomic_t (promised only to the interrupted thread) is not
 * enough: a lock-free atomic is async-signal-safe and seen everywhere. */
static atomic_int interrupted_flag;
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "the signal handler needs a lock-free atomic int");

static void on_sigint(int sig)
{
    (void)sig;
    atomic_store_explicit(&interrupted_flag, 1, memory_order_relaxed);
}

static bool interrupted(void)
{
    return atomic_load_explicit(&interrupted_flag, memory_order_relaxed) != 0;
}

typedef struct cli {
    bool quiet, json, polycube, stats, trace, progress, plain, write_failed, mpi;
    long long printed;      /* solutions written, for their "# solution N" lines */
    double progress_at;     /* seconds of the last progress line */
    long long sample_trials;
    int sample_r;
    unsigned long long sample_seed;
    const tsr_puzzle *pz;
    /* a progress line stands on a terminal's last line: written by the
     * progress callback (the calling thread), cleared by the solution
     * callback (a pool worker) */
    atomic_int progress_shown;
    bool tty;
    tsr_eta eta;
} cli;

static int on_solution(void *ctx, const tsr_solution *s)
{
    cli *c = ctx;
    if (c->tty && atomic_exchange(&c->progress_shown, 0))
        fprintf(stderr, "\r\033[K");
    int rc;
    if (c->polycube)
        rc = tsr_write_polycube(stdout, c->pz, s);
    else if (c->json)
        rc = tsr_write_solution_json(stdout, c->pz, s);
    else { /* the daemon's text format: a header, the layers, a blank line */
        printf("# solution %lld\n", ++c->printed);
        if ((rc = tsr_write_solution_text(stdout, c->pz, s)) == 0)
            fputc('\n', stdout);
    }
    if (rc != 0) {
        fprintf(stderr, "tessera: cannot write a solution in this format: %s\n",
                tsr_strerror(rc));
        c->write_failed = true;
        return 1; /* stop the search */
    }
    return 0;
}

/* Called every half second (so that Ctrl-C stops the plain engine and the
 * sampler soon); prints a line every half second on a terminal, every 10 s
 * elsewhere. */
static int on_progress(void *ctx, const tsr_stats *st)
{
    cli *c = ctx;
    if (interrupted())
        return 1;
    if (!c->progress || st->seconds < 2 || (!c->tty && st->seconds - c->progress_at < 9.75))
        return 0;
    c->progress_at = st->seconds;
    double rate = st->seconds > 0 ? st->nodes / st->seconds : 0;
    if (c->sample_trials > 0) { /* a sample covers no known part of the tree */
        fprintf(stderr, "%ssampling: %llu solutions  %.3g solutions/s  %llu nodes  %.0fs%s",
                c->tty ? "\r\033[K" : "", (unsigned long long)st->solutions,
                st->seconds > 0 ? st->solutions / st->seconds : 0.0,
                (unsigned long long)st->nodes, st->seconds, c->tty ? "" : "\n");
        fflush(stderr);
        atomic_store(&c->progress_shown, 1);
        return 0;
    }
    double low = -1, high = -1;
    char etabuf[128], elapsed[32], pct[32];
    tsr_eta_add(&c->eta, st->seconds, st->fraction);
    tsr_eta_range(&c->eta, st->nodes, rate, &low, &high);
    fprintf(stderr, "%s%6s  %llu solutions  %llu nodes  %.3g nodes/s  %s elapsed  eta %s%s",
            c->tty ? "\r\033[K" : "", tsr_fraction_text(st->fraction, pct, sizeof pct),
            (unsigned long long)st->solutions,
            (unsigned long long)st->nodes, rate, tsr_duration_text(st->seconds, elapsed, sizeof elapsed),
            tsr_duration_range(tsr_eta_middle(low, high), low, high, etabuf, sizeof etabuf),
            c->tty ? "" : "\n");
    fflush(stderr);
    atomic_store(&c->progress_shown, 1);
    return 0;
}

static void on_trace(void *ctx, int depth, const tsr_placement *pl)
{
    cli *c = ctx;
    fprintf(stderr, "%*s%s", depth * 2, "", c->pz->pieces[pl->piece].name);
    for (int i = 0; i < pl->ncells; i++)
        fprintf(stderr, " %d,%d,%d", pl->cells[i].x, pl->cells[i].y, pl->cells[i].z);
    fputc('\n', stderr);
}


/* With --json the summary is one JSON object, whether the search finished,
 * met its limit or was interrupted: on stdout with -q (it is all there is),
 * else on stderr after the solutions, so that stdout stays one solution per
 * line.  cluster: the --mpi run's "cluster" object, or NULL. */
static void print_summary(const cli *c, const tsr_solver *s, const tsr_options *opt,
                          const tsr_stats *st, const char *file, json_t *cluster)
{
    FILE *out = c->quiet ? stdout : stderr;
    if (c->json) {
        json_t *o = json_object();
        json_object_set_new(o, "file", json_string(file));
        if (c->pz->name)
            json_object_set_new(o, "puzzle", json_string(c->pz->name));
        json_object_set_new(o, "unique", json_string(tsr_unique_names[opt->unique]));
        json_object_set_new(o, "solutions", json_integer((json_int_t)st->solutions));
        json_object_set_new(o, "classes", json_integer((json_int_t)st->classes));
        json_object_set_new(o, "nodes", json_integer((json_int_t)st->nodes));
        json_object_set_new(o, "seconds", json_real(st->seconds));
        json_object_set_new(o, "complete", json_boolean(!st->stopped && c->sample_trials == 0));
        json_object_set_new(o, "fraction", json_real(st->fraction));
        json_object_set_new(o, "interrupted", json_boolean(interrupted()));
        /* as the daemon's job object says it (docs/api.md) */
        json_object_set_new(o, "limit_reached",
                            json_boolean(st->stopped && !interrupted() && opt->limit > 0 &&
                                         st->solutions >= (uint64_t)opt->limit));
        json_object_set_new(o, "config", s ? json_string(tsr_solver_config(s)) : json_null());
        if (c->stats) {
            json_t *a = json_array(), *f = json_array();
            for (int p = 0; p < st->levels; p++) {
                json_array_append_new(a, json_integer((json_int_t)st->attempts[p]));
                json_array_append_new(f, json_integer((json_int_t)st->fits[p]));
            }
            json_object_set_new(o, "attempts", a);
            json_object_set_new(o, "fits", f);
        }
        if (cluster)
            json_object_set(o, "cluster", cluster);
        json_dumpf(o, out, JSON_COMPACT);
        fputc('\n', out);
        json_decref(o);
        return;
    }
    if (c->stats)
        for (int p = st->levels - 1; p >= 1; p--)
            fprintf(out, "pieces left %3d: attempts %llu fits %llu\n", p,
                    (unsigned long long)st->attempts[p], (unsigned long long)st->fits[p]);
    char how[96] = "", pct[32];
    tsr_fraction_text(st->fraction, pct, sizeof pct);
    if (interrupted() && s == NULL)
        snprintf(how, sizeof how, ", interrupted while preparing the search");
    else if (interrupted())
        snprintf(how, sizeof how, ", interrupted at %s of the search", pct);
    else if (st->stopped && c->sample_trials == 0)
        snprintf(how, sizeof how, ", stopped early at %s of the search", pct);
    else if (st->stopped)
        snprintf(how, sizeof how, ", stopped early");
    fprintf(out, "solutions: %llu (%s%s)\n", (unsigned long long)st->solutions,
            tsr_unique_names[opt->unique], how);
    fprintf(out, "nodes: %llu\nseconds: %.3f\nconfig: %s\n", (unsigned long long)st->nodes,
            st->seconds, s ? tsr_solver_config(s) : "none (the search was not prepared)");
    if (c->sample_trials > 0 && st->seconds > 0)
        fprintf(out, "solutions per second: %.4g\n", st->solutions / st->seconds);
}

/* One of solve's flags: --engine and --sample are solve's own, the rest
 * are job options (options.c). */
static int solve_flag(const flag *f, tsr_options *o, cli *c)
{
    const char *a = f->arg;
    switch (f->code) {
    case O_ENGINE:
        if (strcmp(a, "plain") != 0 && strcmp(a, "pool") != 0)
            return cli_usage_error("--engine: expected pool or plain, got '%s'", a);
        c->plain = strcmp(a, "plain") == 0;
        return 0;
    case O_SAMPLE: {
        long long t, r;
        unsigned long long seed;
        int used = 0;
        if (sscanf(a, "%lld,%lld,%llu%n", &t, &r, &seed, &used) != 3 || a[used] != '\0' ||
            t < 1 || r < 1)
            return cli_usage_error("--sample: expected TRIALS,R,SEED (positive numbers), got '%s'",
                                   a);
        c->sample_trials = t;
        c->sample_r = (int)(r > INT_MAX ? INT_MAX : r);
        c->sample_seed = seed;
        return 0;
    }
    case O_PROBLEM: /* read_job used it */
        return 0;
    default:
        return cli_apply_flag(f, c->pz, o);
    }
}

/* Read FILE (a puzzle, with a JSON job file's options) and apply the
 * command-line flags on top: 0, or the exit status after saying why.  On
 * success *text holds the file's bytes (free it). */
static int read_job(const char *file, const flag *flags, int nflags, cli *c, tsr_puzzle **pz,
                    tsr_options *opt, char **text, size_t *len)
{
    tsr_err err = {{0}};
    *pz = NULL;
    *text = NULL;
    const char *problem = NULL; /* --problem: of a BurrTools file */
    for (int i = 0; i < nflags; i++)
        if (flags[i].code == O_PROBLEM)
            problem = flags[i].arg;
    int rc = tsr_file_read(file, text, len, &err);
    if (rc == 0 && problem != NULL && !tsr_is_xmpuzzle(*text, *len))
        rc = tsr_err_set(&err, TSR_EINVAL, "%s: --problem is for BurrTools files (.xmpuzzle)",
                         tsr_file_name(file));
    else if (rc == 0 && problem != NULL) {
        tsr_options_init(opt);
        rc = tsr_puzzle_read_xmpuzzle(*text, *len, tsr_file_name(file), problem, pz, &err);
    } else if (rc == 0)
        rc = tsr_puzzle_read(*text, *len, tsr_file_name(file), pz, opt, &err);
    if (rc) {
        fprintf(stderr, "tessera: %s\n", err.msg[0] ? err.msg : tsr_strerror(rc));
        free(*text);
        *text = NULL;
        return rc == TSR_ENOMEM ? 1 : EXIT_USAGE;
    }
    c->pz = *pz;
    for (int i = 0; i < nflags && rc == 0; i++)
        rc = solve_flag(&flags[i], opt, c);
    if (rc) {
        tsr_puzzle_free(*pz);
        free(*text);
        *pz = NULL;
        *text = NULL;
    }
    return rc;
}

/* Ctrl-C, as the two places that poll for it ask: preparation (a
 * tsr_stop) as it goes, and the pool (checkpoint_wanted), which stops as
 * the daemon's pause does: the flag asks for a checkpoint (polled every
 * few milliseconds), and the checkpoint ends the run with every worker
 * parked, so the counts are those of the work done. */
static int sigint_seen(void *ctx)
{
    (void)ctx;
    return interrupted();
}

static int sigint_checkpoint(void *ctx, const tsr_task *tasks, int ntasks, const tsr_stats *st)
{
    (void)ctx, (void)tasks, (void)ntasks, (void)st;
    return interrupted();
}

/* The whole search on the pool, as tsr_pool_run, stopping on Ctrl-C. */
static int pool_run(const tsr_solver *s, int threads, const tsr_callbacks *cb, tsr_stats *st)
{
    tsr_task root = {0, NULL, 1.0};
    tsr_pool_hooks hk = {.checkpoint_wanted = sigint_seen, .checkpoint = sigint_checkpoint};
    int rc = tsr_pool_search(s, threads, &root, 1, cb, &hk, st);
    if (rc == 0 && !st->stopped)
        st->fraction = 1; /* exactly, whatever the rounding */
    return rc;
}

/* Where each piece fits, from the prepared solver: a puzzle that can have
 * no solution (a required piece that fits nowhere, cells nothing covers)
 * is refused with the reason, and a piece that may stay out but fits
 * nowhere is warned about.  fits holds a slot per piece (NULL: not
 * wanted).  Returns 0, EXIT_USAGE or 1 (out of memory). */
static int check_fits(const char *file, const tsr_puzzle *pz, const tsr_solver *s, tsr_fit *fits)
{
    tsr_fit *own = fits != NULL ? fits : malloc((size_t)(pz->npieces ? pz->npieces : 1) * sizeof *own);
    if (own == NULL)
        return 1;
    tsr_err err = {{0}};
    int rc = tsr_solver_fits(s, own, &err);
    if (rc != 0)
        fprintf(stderr, "tessera: %s: %s\n", file, err.msg[0] ? err.msg : tsr_strerror(rc));
    for (int p = 0; rc == 0 && p < pz->npieces; p++) {
        char w[TSR_MAX_NAME + 160];
        if (tsr_fit_warning(pz, own, p, w, sizeof w))
            fprintf(stderr, "tessera: %s: warning: %s\n", file, w);
    }
    if (own != fits)
        free(own);
    return rc == 0 ? 0 : rc == TSR_ENOMEM ? 1 : EXIT_USAGE;
}

/* A solve allocates its lists and matrices several times while it
 * prepares (once for each estimate), then once more on the worker that
 * searches.  By default glibc gives that worker an arena of its own and
 * hands large freed blocks back to the kernel, so the worker touches
 * fresh pages where the preparation's freed ones would do; where a page's
 * first touch costs microseconds (3 on the virtual machines we test on),
 * that was a twentieth of a small puzzle's time (the hexiamonds' 6x6:
 * 953 page faults, 589 with one arena).  On one thread only: with
 * several, an arena each keeps one worker's hot data off the cache lines
 * of another's. */
static void reuse_memory(int threads)
{
#ifdef __GLIBC__
    if (threads == 1)
        mallopt(M_ARENA_MAX, 1);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
#else
    (void)threads;
#endif
}

/* tessera solve; m: this is rank 0 of an MPI job (--mpi), else NULL. */
static int cmd_solve(int argc, char **argv, cli_mpi *m)
{
    static const struct option own[] = {
        {"quiet", no_argument, NULL, 'q'},
        {"json", no_argument, NULL, O_JSON},
        {"polycube", no_argument, NULL, O_POLYCUBE},
        {"stats", no_argument, NULL, O_STATS},
        {"trace", no_argument, NULL, O_TRACE},
        {"no-progress", no_argument, NULL, O_NOPROGRESS},
        {"sample", required_argument, NULL, O_SAMPLE},
        {"engine", required_argument, NULL, O_ENGINE},
        {"mpi", no_argument, NULL, O_MPI},
        {"problem", required_argument, NULL, O_PROBLEM},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct option longopts[CLI_LONGOPTS(sizeof own / sizeof *own)];
    cli_longopts(longopts, own, false);
    cli c = {.progress = true, .tty = isatty(STDERR_FILENO)};
    tsr_eta_init(&c.eta);
    flag *flags = calloc((size_t)argc + 1, sizeof *flags);
    int nflags = 0, ch;
    if (flags == NULL)
        return 1;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "qh", longopts, NULL)) != -1) {
        switch (ch) {
        case 'q': c.quiet = true; break;
        case O_JSON: c.json = true; break;
        case O_POLYCUBE: c.polycube = true; break;
        case O_STATS: c.stats = true; break;
        case O_TRACE: c.trace = true; break;
        case O_NOPROGRESS: c.progress = false; break;
        case O_MPI: c.mpi = true; break;
        case 'h':
            print_usage(stdout);
            free(flags);
            return 0;
        case '?':
            free(flags);
            fprintf(stderr, "Try 'tessera help'.\n");
            return EXIT_USAGE;
        default:
            flags[nflags++] = (flag){ch, optarg};
        }
    }
    if (optind != argc - 1) {
        free(flags);
        return cli_usage_error("solve needs exactly one puzzle file%s", "");
    }
    const char *file = argv[optind];
    if (c.mpi && m == NULL) {
        free(flags);
#ifdef TSR_CLI_MPI
        return cli_usage_error("--mpi: spell the option out%s", "");
#else
        return cli_usage_error("--mpi: this tessera was built without MPI%s", "");
#endif
    }
    tsr_puzzle *pz = NULL;
    tsr_options opt;
    tsr_err err = {{0}};
    char *text = NULL; /* the file's bytes, which --mpi's workers read too */
    size_t len = 0;
    int rc = read_job(file, flags, nflags, &c, &pz, &opt, &text, &len);
    free(flags);
    if (rc)
        return rc;
    if (m != NULL && (c.plain || c.trace || c.sample_trials > 0))
        rc = cli_usage_error("--mpi runs the pool engine: not with --engine=plain, --trace "
                             "or --sample%s", "");
    else if (c.polycube && pz->lattice != TSR_LATTICE_CUBIC) /* said before any search */
        rc = cli_usage_error("--polycube: polycube definitions describe the cubic lattice "
                             "only; this puzzle is on the %s lattice",
                             tsr_lattice_names[pz->lattice]);
    if (rc) {
        tsr_puzzle_free(pz);
        free(text);
        return rc;
    }
    if (c.plain || c.trace) /* one thread, the preparation's estimates too */
        opt.threads = 1;
    int threads = opt.threads > 0 ? opt.threads : tsr_cpu_count();
    reuse_memory(threads);
    if (m == NULL) { /* a second Ctrl-C kills as usual; a write to a slow
                      * pipe goes on rather than fail with EINTR.  Set before
                      * preparing: a huge puzzle prepares for seconds */
        struct sigaction sa = {.sa_handler = on_sigint, .sa_flags = SA_RESETHAND | SA_RESTART};
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, NULL);
    }
    tsr_solver *s = NULL;
    tsr_stop stop = {sigint_seen, NULL};
    double t0 = base_now();
    rc = tsr_solver_prepare(pz, &opt, m == NULL ? &stop : NULL, &s, &err);
    if (rc == TSR_ECANCELED && interrupted()) { /* Ctrl-C while preparing */
        tsr_stats none = {.stopped = true, .seconds = base_now() - t0};
        print_summary(&c, NULL, &opt, &none, file, NULL);
        tsr_puzzle_free(pz);
        free(text);
        return EXIT_INTERRUPTED;
    }
    if (rc) {
        fprintf(stderr, "tessera: %s: %s\n", file, err.msg[0] ? err.msg : tsr_strerror(rc));
        tsr_puzzle_free(pz);
        free(text);
        return rc == TSR_ENOMEM ? 1 : EXIT_USAGE;
    }
    if ((rc = check_fits(file, pz, s, NULL)) != 0) {
        tsr_solver_free(s);
        tsr_puzzle_free(pz);
        free(text);
        return rc;
    }
    tsr_callbacks cb = {.ctx = &c, .progress = on_progress, .progress_seconds = 0.5};
    if (c.quiet)
        cb.counts_only = true; /* the counts, no solution */
    else
        cb.solution = on_solution;
    if (c.trace)
        cb.trace = on_trace;
    tsr_stats st;
    json_t *cluster = NULL;
    if (c.sample_trials > 0)
        rc = tsr_solver_sample(s, c.sample_trials, c.sample_r, c.sample_seed, &cb, &st);
    else if (c.plain || c.trace)
        rc = tsr_solver_run(s, NULL, 0, &cb, &st);
#ifdef TSR_CLI_MPI
    else if (m != NULL) /* threads: per rank, 0 for one per core of each node */
        rc = cli_mpi_search(m, text, len, s, opt.threads, &cb, &st,
                            c.json ? &cluster : NULL, c.stats, &err);
#endif
    else
        rc = pool_run(s, threads, &cb, &st);
    if (atomic_load(&c.progress_shown) && c.tty)
        fprintf(stderr, "\r\033[K");
    if (rc == 0 && !c.write_failed)
        print_summary(&c, s, &opt, &st, file, cluster);
    else if (rc != 0 && m != NULL)
        fprintf(stderr, "tessera: %s: search failed: %s\n", file,
                err.msg[0] ? err.msg : tsr_strerror(rc));
    else if (rc != 0)
        fprintf(stderr, "tessera: %s: search failed: %s\n", file,
                rc == TSR_EINVAL ? "the sampling depth is out of range" : tsr_strerror(rc));
    json_decref(cluster);
    free(text);
    fflush(stdout);
    tsr_stats_free(&st);
    tsr_solver_free(s);
    tsr_puzzle_free(pz);
    if (c.write_failed)
        return 1; /* the output is incomplete */
    if (rc == 0 && interrupted())
        return EXIT_INTERRUPTED;
    return rc == 0 ? 0 : rc == TSR_EINVAL ? EXIT_USAGE : 1;
}

/* A count for people: whole numbers up to a million, then 3 digits. */
static void count_text(double v, char *buf, size_t size)
{
    if (v < 0)
        snprintf(buf, size, "unknown");
    else if (v < 1e6)
        snprintf(buf, size, "%.0f", v);
    else
        snprintf(buf, size, "%.3g", v);
}

static void print_estimate(const tsr_estimate *e, const tsr_rate *r, int threads,
                           const tsr_options *opt, const char *config)
{
    char a[32], b[32], c[32];
    count_text(e->nodes, a, sizeof a);
    count_text(e->nodes_low, b, sizeof b);
    count_text(e->nodes_high, c, sizeof c);
    printf("nodes: %s (%s to %s)\n", a, b, c);
    count_text(e->solutions, a, sizeof a);
    count_text(e->solutions_low, b, sizeof b);
    count_text(e->solutions_high, c, sizeof c);
    if (e->solutions_high < 0 && e->hits == 0)
        printf("solutions (%s): at least %s; no descent reached one, so no estimate\n",
               tsr_unique_names[opt->unique], b);
    else if (e->solutions_high < 0) /* too few samples met one to bound it */
        printf("solutions (%s): %s (at least %s; too few descents reached one to bound it)\n",
               tsr_unique_names[opt->unique], a, b);
    else
        printf("solutions (%s): %s (%s to %s)\n", tsr_unique_names[opt->unique], a, b, c);
    printf("node rate: %.3g nodes/s on one thread (measured for %.2fs)\n", r->nodes_per_second,
           r->seconds);
    int counts[2] = {1, threads};
    for (int i = 0; i < (threads > 1 ? 2 : 1); i++) {
        tsr_duration d;
        tsr_forecast(e, r, counts[i], &d);
        printf("time on %d thread%s: %s\n", counts[i], counts[i] > 1 ? "s" : "", d.text);
    }
    if (r->complete)
        printf("exact: the timing run finished the search: %llu nodes, %llu solutions, %.3fs\n",
               (unsigned long long)r->nodes, (unsigned long long)r->solutions, r->seconds);
    else if (threads > 1)
        printf("(%d threads: assuming linear scaling)\n", threads);
    printf("probes: %ld descents in %.2fs\nconfig: %s\n", e->probes, e->seconds, config);
}

/* Each piece's placements on the board, and what the root filters left
 * where that differs: "placements: F 192 (48 searched), I 56, ...". */
static void print_fits(const tsr_puzzle *pz, const tsr_fit *fits)
{
    printf("placements:");
    for (int p = 0, n = 0; p < pz->npieces; p++) {
        if (pz->pieces[p].fixed)
            continue;
        printf("%s %s %ld", n++ ? "," : "", pz->pieces[p].name, fits[p].placements);
        if (fits[p].usable >= 0 && fits[p].usable != fits[p].placements)
            printf(" (%ld searched)", fits[p].usable);
    }
    printf("\n");
}

/* tessera estimate: Knuth's estimate of the search, the node rate, the time. */
static int cmd_estimate(int argc, char **argv)
{
    static const struct option own[] = {
        {"json", no_argument, NULL, O_JSON},
        {"probes", required_argument, NULL, O_PROBES},
        {"seconds", required_argument, NULL, O_SECONDS},
        {"seed", required_argument, NULL, O_SEED},
        {"problem", required_argument, NULL, O_PROBLEM},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct option longopts[CLI_LONGOPTS(sizeof own / sizeof *own)];
    cli_longopts(longopts, own, false);
    cli c = {0};
    bool json = false;
    long long probes = 1000000, seed = 1;
    double seconds = 2;
    flag *flags = calloc((size_t)argc + 1, sizeof *flags);
    int nflags = 0, ch, rc = 0;
    if (flags == NULL)
        return 1;
    optind = 1;
    while (rc == 0 && (ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        char *end;
        switch (ch) {
        case O_JSON: json = true; break;
        case O_PROBES:
            if (!cli_parse_long(optarg, 1, LONG_MAX, &probes))
                rc = cli_usage_error("--probes: expected a number >= 1, got '%s'", optarg);
            break;
        case O_SECONDS:
            seconds = strtod(optarg, &end);
            if (end == optarg || *end != '\0' || !(seconds > 0 && seconds <= 86400))
                rc = cli_usage_error("--seconds: expected seconds above 0, got '%s'", optarg);
            break;
        case O_SEED:
            if (!cli_parse_long(optarg, 0, LLONG_MAX, &seed))
                rc = cli_usage_error("--seed: expected a number >= 0, got '%s'", optarg);
            break;
        case 'h':
            print_usage(stdout);
            free(flags);
            return 0;
        case '?':
            fprintf(stderr, "Try 'tessera help'.\n");
            rc = EXIT_USAGE;
            break;
        default:
            flags[nflags++] = (flag){ch, optarg};
        }
    }
    if (rc == 0 && optind != argc - 1)
        rc = cli_usage_error("estimate needs exactly one puzzle file%s", "");
    tsr_puzzle *pz = NULL;
    tsr_options opt;
    char *text = NULL;
    size_t len = 0;
    const char *file = rc == 0 ? argv[optind] : NULL;
    if (rc == 0)
        rc = read_job(file, flags, nflags, &c, &pz, &opt, &text, &len);
    free(flags);
    free(text);
    if (rc)
        return rc;
    tsr_solver *s = NULL;
    tsr_err err = {{0}};
    rc = tsr_solver_new(pz, &opt, &s, &err);
    if (rc) {
        fprintf(stderr, "tessera: %s: %s\n", file, err.msg[0] ? err.msg : tsr_strerror(rc));
        tsr_puzzle_free(pz);
        return rc == TSR_ENOMEM ? 1 : EXIT_USAGE;
    }
    tsr_fit *fits = malloc((size_t)(pz->npieces ? pz->npieces : 1) * sizeof *fits);
    rc = fits == NULL ? 1 : check_fits(file, pz, s, fits);
    if (rc != 0) {
        free(fits);
        tsr_solver_free(s);
        tsr_puzzle_free(pz);
        return rc;
    }
    tsr_estimate e;
    tsr_rate r;
    int threads = opt.threads > 0 ? opt.threads : tsr_cpu_count();
    rc = tsr_solver_estimate(s, (long)probes, seconds, (uint64_t)seed, &e);
    if (rc == 0)
        rc = tsr_solver_rate(s, 0.5, &r);
    if (rc == 0)
        tsr_estimate_merge(&e, &r);
    if (rc != 0) {
        fprintf(stderr, "tessera: %s: estimate failed: %s\n", file, tsr_strerror(rc));
    } else if (json) {
        char *j = tsr_estimate_json(&e, &r, threads, tsr_solver_config(s));
        char *f = tsr_fits_json(pz, fits);
        json_t *o = j ? json_loads(j, 0, NULL) : NULL, *fo = f ? json_loads(f, 0, NULL) : NULL;
        if (o != NULL && fo != NULL && json_object_update(o, fo) == 0) {
            char *out = json_dumps(o, JSON_COMPACT);
            if (out)
                puts(out);
            else
                rc = TSR_ENOMEM;
            free(out);
        } else {
            rc = TSR_ENOMEM;
        }
        json_decref(o);
        json_decref(fo);
        free(j);
        free(f);
    } else {
        print_estimate(&e, &r, threads, &opt, tsr_solver_config(s));
        print_fits(pz, fits);
    }
    free(fits);
    tsr_solver_free(s);
    tsr_puzzle_free(pz);
    return rc == 0 ? 0 : 1;
}

/* tessera help [options [--markdown]]: the whole help, or the job options
 * alone (--markdown: the table of docs/puzzle-format.md). */
static int cmd_help(int argc, char **argv)
{
    if (argc == 1) {
        print_usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "options") != 0)
        return cli_usage_error("help: expected 'options', got '%s'", argv[1]);
    if (argc == 2)
        print_job_options(stdout);
    else if (argc == 3 && strcmp(argv[2], "--markdown") == 0)
        cli_print_options_markdown(stdout);
    else
        return cli_usage_error("help options: expected --markdown, got '%s'", argv[2]);
    return 0;
}

/* Is argv[i] one of the global options (--server, --token) that may come
 * before the command?  Returns how many arguments it takes up (1 or 2), or
 * 0 when it is not one. */
static int global_option(int argc, char **argv, int i)
{
    static const char *const names[] = {"--server", "--token"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        size_t n = strlen(names[k]);
        if (strncmp(argv[i], names[k], n) == 0 && argv[i][n] == '=')
            return 1;
        if (strcmp(argv[i], names[k]) == 0)
            return i + 1 < argc ? 2 : 1;
    }
    return 0;
}

bool cli_mpi_wanted(int argc, char **argv)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strlen(argv[i]) >= 3 && strncmp(argv[i], "--mpi", strlen(argv[i])) == 0)
            return true;
    return false;
}

#if defined(HAVE_MPI) && !defined(TSR_CLI_MPI)
/* tessera solve --mpi: become tessera-mpi, the same command built with MPI,
 * which sits beside this executable (in the build tree and where both are
 * installed).  The process stays the same, so under mpirun each rank does
 * this before MPI starts.  Returns only on failure. */
static int run_mpi_build(char **argv)
{
    char self[4096], path[4096 + 16];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        fprintf(stderr, "tessera: --mpi: cannot find this executable: %s\n", strerror(errno));
        return 1;
    }
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    snprintf(path, sizeof path, "%.*s/tessera-mpi", slash ? (int)(slash - self) : 1,
             slash ? self : ".");
    argv[0] = path;
    execv(path, argv);
    fprintf(stderr, "tessera: --mpi runs %s, the MPI build of tessera: %s\n", path,
            strerror(errno));
    return 1;
}
#endif

/* The command named by argv[1], or after the global options: those move
 * behind the command name, where the daemon commands read them. */
static int dispatch(int argc, char **argv)
{
    int first = 1, g;
    while (first < argc && (g = global_option(argc, argv, first)) > 0)
        first += g;
    if (first > 1 && first < argc) {
        const char *cmd = argv[first];
        if (!cli_is_remote_command(cmd))
            return cli_usage_error("--server and --token are for the daemon commands, not "
                                   "'%s'", cmd);
        char **moved = malloc((size_t)(argc + 1) * sizeof *moved);
        if (moved == NULL)
            return 1;
        int n = 0;
        moved[n++] = argv[0];
        moved[n++] = argv[first];
        for (int i = 1; i < first; i++)
            moved[n++] = argv[i];
        for (int i = first + 1; i < argc; i++)
            moved[n++] = argv[i];
        moved[n] = NULL;
        int rc = cli_remote_main(argc - 1, moved + 1);
        free(moved);
        return rc;
    }
    if (argc < 2 || first >= argc)
        return cli_usage_error("missing command%s", "");
    const char *cmd = argv[1];
    if (strcmp(cmd, "solve") == 0) {
#if defined(TSR_CLI_MPI)
        if (cli_mpi_wanted(argc - 1, argv + 1))
            return cli_mpi_main(argc - 1, argv + 1, cmd_solve);
#elif defined(HAVE_MPI)
        if (cli_mpi_wanted(argc - 1, argv + 1))
            return run_mpi_build(argv);
#endif
        return cmd_solve(argc - 1, argv + 1, NULL);
    }
    if (strcmp(cmd, "estimate") == 0)
        return cmd_estimate(argc - 1, argv + 1);
    if (strcmp(cmd, "verify") == 0)
        return cli_verify_main(argc - 1, argv + 1);
    if (strcmp(cmd, "convert") == 0)
        return cli_convert_main(argc - 1, argv + 1);
    if (cli_is_remote_command(cmd))
        return cli_remote_main(argc - 1, argv + 1);
    if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
        printf("tessera %s (engine %d, %s MPI)\n", PACKAGE_VERSION, TESSERA_ENGINE_VERSION,
               TSR_MPI_BUILT);
        return 0;
    }
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0)
        return cmd_help(argc - 1, argv + 1);
    return cli_usage_error("unknown command '%s'", cmd);
}

int main(int argc, char **argv)
{
    int rc = dispatch(argc, argv);
    /* output still buffered is written now: a full disk or a closed pipe
     * must not pass for success */
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "tessera: cannot write the output: %s\n", strerror(errno));
        if (rc == 0)
            rc = 1;
    }
    return rc;
}
