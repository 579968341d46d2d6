/*
 * main.c - tesserad, the Tessera daemon.
 *
 *   tesserad [--listen HOST:PORT] [--db PATH] [--state-dir DIR] [--threads N]
 *            [--token T] [--allow-host NAME] [--allow-origin ORIGIN]
 *            [--www DIR] [--puzzles DIR] [--docs DIR]
 *            [--checkpoint-seconds S] [--max-memory SIZE]
 *            [--mpi [--mpi-timeout S]]
 *   tesserad --check | --repair [--db PATH | --state-dir DIR]
 *
 * $TESSERAD_ACTION_WAIT_MS, a knob for tests (docs/api.md): how long a
 * pause or cancel waits for the job's runner before answering 202
 * Accepted, in milliseconds from 1000 (whole seconds count); default 15000.
 * A test needs a 202 without waiting 15 s per request.
 *
 * Under mpirun with --mpi, rank 0 is the daemon and searches through the
 * cluster of every rank (daemon/cluster.c); the other ranks only serve it
 * and take no options of their own.
 * main() owns every long-lived object: the job manager (store, scheduler,
 * runners) and the HTTP server.  Signal handlers only set a flag; the main
 * loop notices it, stops the server, lets every running job commit a final
 * checkpoint and exits.  With systemd (Type=notify) it reports READY=1 once
 * the database is open, unfinished jobs are queued again and the listener
 * is up, then STATUS= lines, and STOPPING=1 while it shuts down.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <math.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#else
#define sd_notify(unset, text) ((void)(unset), (void)(text), 0)
#define sd_notifyf(unset, ...) ((void)(unset), 0)
#endif

#include <jansson.h>

#include "daemon/jobs.h"
#include "server/server.h"
#include "store/store.h"
#include "tessera/tessera.h"
#ifdef HAVE_MPI
#include "mpi/cluster.h"
#else
typedef struct clu_cluster clu_cluster;
#endif

#ifndef TSR_DATADIR
#define TSR_DATADIR "/usr/local/share/tessera"
#endif


/* The signal that asks the daemon to stop, 0 until one comes.  The kernel
 * may run the handler on any thread (a worker's as well as main's), so a
 * volatile sig_atomic_t, which C promises only to the interrupted thread,
 * is not enough: a lock-free atomic is both async-signal-safe and seen by
 * the main loop (ThreadSanitizer caught the race in test_auth.py). */
static atomic_int stop_signal;
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "the signal handler needs a lock-free atomic int");

static void on_signal(int sig) { atomic_store(&stop_signal, sig); }

static void http_log(void *ctx, const char *line)
{
    fprintf(stderr, "tesserad: http: %s\n", line);
}

static void jobs_log(const char *line)
{
    fprintf(stderr, "tesserad: %s\n", line);
}

static const char *usage_text =
    "usage: tesserad [options]\n"
    "  --listen HOST:PORT       address to serve (default " SRV_DEFAULT_LISTEN "; another\n"
    "                           address than loopback needs --token)\n"
    "  --state-dir DIR          where the database lives (default $STATE_DIRECTORY, else ./state)\n"
    "  --db PATH                the SQLite file (default STATE_DIR/tessera.db)\n"
    "  --threads N              worker threads shared by all jobs (default: one per CPU)\n"
    "  --token T                API token (default $TESSERAD_TOKEN): required for POST and\n"
    "                           DELETE, and for every call when not on loopback\n"
    "  --allow-host NAME        a host name requests may be addressed to, besides the\n"
    "                           listen address, loopback and localhost (repeat, or\n"
    "                           NAME,NAME; docs/api.md, security model)\n"
    "  --allow-origin ORIGIN    a web origin (https://host[:port]) whose pages may submit,\n"
    "                           pause, cancel and delete, besides the dashboard's own\n"
    "                           (repeat, or ORIGIN,ORIGIN)\n"
    "  --www DIR                dashboard files (default ./www, else " TSR_DATADIR "/www)\n"
    "  --puzzles DIR            puzzle library (default ./puzzles, else " TSR_DATADIR
    "/puzzles)\n"
    "  --docs DIR               documents served at /docs/ (default ./docs, else "
    TSR_DATADIR "/docs)\n"
    "  --checkpoint-seconds S   seconds between checkpoints (default 5)\n"
    "  --max-memory SIZE        refuse a job whose search would need more memory (bytes,\n"
    "                           or with K, M, G, T; none: no cap; default: half of the\n"
    "                           machine's memory or of its own cgroup's limit, the\n"
    "                           lower; /healthz shows it as max_memory)\n"
    "  --mpi                    run jobs on the ranks of an MPI job (start with mpirun;\n"
    "                           --threads is then per rank; see docs/cluster.md)\n"
    "  --mpi-timeout S          seconds of silence after which a busy rank is given up\n"
    "                           and its work searched again elsewhere (default 30)\n"
    "  --check                  check the store (--db or --state-dir) without changing it\n"
    "                           (read-only media too): SQLite's structure, every chunk, each\n"
    "                           job's counts, frontier and classes (docs/store.md); print\n"
    "                           the report and exit: 0 sound, 1 damaged, 2 unreadable\n"
    "  --repair                 mend damaged solution chunks of the store (offline: not\n"
    "                           beside a running tesserad): each job keeps its solutions\n"
    "                           before the damage and says what it lost; exit 0 when the\n"
    "                           store is then sound, 1 when not, 2 when it cannot be done\n"
    "                           (docs/store.md, recovery)\n"
    "  --version, --help\n"
    "Exit status: 0 after SIGTERM or SIGINT; 1 when it cannot start (a store it refuses:\n"
    "damaged, in use, read-only, not a Tessera store; an address in use); 2 for a bad\n"
    "command line.\n";

static bool is_dir(const char *path)
{
    struct stat st;
    return path != NULL && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The first of `local` and DATADIR/`name` that is a directory, or NULL. */
static const char *default_dir(const char *local, const char *installed)
{
    return is_dir(local) ? local : is_dir(installed) ? installed : NULL;
}

static int parse_number(const char *opt, const char *text, double min, double max, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || *end != '\0' || !(v >= min && v <= max)) {
        fprintf(stderr, "tesserad: %s: expected a number from %g to %g, got \"%s\"\n", opt, min,
                max, text);
        return -1;
    }
    *out = v;
    return 0;
}

/* --max-memory: "none", or bytes with an optional K, M, G or T (powers of
 * 1024); -1 for none. */
static int parse_size(const char *opt, const char *text, double *out)
{
    if (strcmp(text, "none") == 0) {
        *out = -1;
        return 0;
    }
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    const char *units = "KMGT";
    const char *u = *end ? strchr(units, *end) : NULL;
    if (u != NULL && *u != '\0') {
        for (const char *k = units; k <= u; k++)
            v *= 1024;
        end++;
        if (*end == 'B' || *end == 'b')
            end++;
    }
    if (errno || end == text || *end != '\0' || !(v >= 1024 * 1024) || !isfinite(v)) {
        fprintf(stderr, "tesserad: %s: expected a size of at least 1M (bytes, or with K, M, G "
                "or T), or none; got \"%s\"\n", opt, text);
        return -1;
    }
    *out = v;
    return 0;
}

/* tesserad --check: the whole check of the store, without changing it (it
 * may run beside a live daemon: it only reads). */
static int check_main(const char *db)
{
    tsr_err err = {{0}};
    char *report = NULL;
    int rc = sto_check(db, true, 0, &report, &err);
    if (report != NULL)
        fputs(report, stdout);
    free(report);
    if (err.msg[0] != '\0') /* unreadable, not merely damaged */
        fprintf(stderr, "tesserad: %s\n", err.msg);
    return rc == 0 ? 0 : err.msg[0] == '\0' ? 1 : 2;
}

/* How --repair caps a damaged unfinished job (sto_cap_fn): its options with
 * "store" set to the solutions it keeps, so a resumed search stores no
 * more and never gives a removed solution's number to another. */
static int cap_store(const char *options, int64_t stored, char **out, tsr_err *err)
{
    json_error_t je;
    json_t *o = json_loads(options, 0, &je);
    if (!json_is_object(o)) {
        json_decref(o);
        return tsr_err_set(err, TSR_EINVAL, "its options are not a JSON object (%s)", je.text);
    }
    int rc = json_object_set_new(o, "store", json_integer(stored));
    *out = rc == 0 ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(o);
    return *out != NULL ? 0 : tsr_err_set(err, TSR_ENOMEM, "out of memory");
}

/* tesserad --repair: holds the store's claim as the daemon does, so it
 * never runs beside one, and mends what the check finds in solution
 * chunks (sto_repair). */
static int repair_main(const char *db)
{
    tsr_err err = {{0}};
    /* a missing file is said before the claim would leave a .lock beside it */
    if (access(db, F_OK) != 0) {
        fprintf(stderr, "tesserad: repair %s: %s\n", db, strerror(errno));
        return 2;
    }
    sto_claim *claim = NULL;
    if (sto_claim_take(db, &claim, &err) != 0) {
        fprintf(stderr, "tesserad: %s\n", err.msg);
        return 2;
    }
    char *report = NULL;
    int rc = sto_repair(db, cap_store, &report, &err);
    sto_claim_release(claim);
    if (report != NULL)
        fputs(report, stdout);
    free(report);
    if (err.msg[0] != '\0')
        fprintf(stderr, "tesserad: %s; nothing was changed\n", err.msg);
    return rc == 0 ? 0 : err.msg[0] == '\0' ? 1 : 2;
}

/* The main loop's period: how soon SIGTERM is seen, and how often idle MPI
 * workers hear from rank 0 (their silence timeout is --mpi-timeout). */
#define MAIN_TICK_MS 200
/* systemd's STATUS= line is refreshed this often: a person reads it */
#define STATUS_EVERY_S 5

/* The options, as given and then resolved (resolve_paths). */
#define MAX_ALLOWED 64 /* --allow-host and --allow-origin entries, each */

typedef struct settings {
    const char *listen, *db, *token, *state_dir, *www, *puzzles, *docs;
    const char *hosts[MAX_ALLOWED], *origins[MAX_ALLOWED];
    int nhosts, norigins;
    double threads, checkpoint, mpi_timeout, max_memory, action_wait_ms;
    bool mpi, check, repair;
    char statebuf[4096], dbbuf[4200];
} settings;

/* --allow-host and --allow-origin: a comma-separated list (split in
 * place) appended to names[0..*n); the server checks each entry's form. */
static int add_names(const char *opt, char *list, const char **names, int *n)
{
    for (char *save = NULL, *p = strtok_r(list, ",", &save); p != NULL;
         p = strtok_r(NULL, ",", &save)) {
        if (*n == MAX_ALLOWED) {
            fprintf(stderr, "tesserad: %s: at most %d entries\n", opt, MAX_ALLOWED);
            return -1;
        }
        names[(*n)++] = p;
    }
    return 0;
}

/* Read the command line into *st: true to go on, else false with the exit
 * status in *status (--help, --version and errors end here). */
static bool parse_options(int argc, char **argv, bool have_cluster, settings *st, int *status)
{
    static const struct option longopts[] = {
        {"listen", required_argument, NULL, 'l'},  {"db", required_argument, NULL, 'd'},
        {"state-dir", required_argument, NULL, 's'}, {"threads", required_argument, NULL, 't'},
        {"token", required_argument, NULL, 'k'},   {"www", required_argument, NULL, 'w'},
        {"puzzles", required_argument, NULL, 'p'}, {"docs", required_argument, NULL, 'D'},
        {"checkpoint-seconds", required_argument, NULL, 'c'},
        {"mpi", no_argument, NULL, 'm'},           {"mpi-timeout", required_argument, NULL, 'o'},
        {"version", no_argument, NULL, 'V'},       {"help", no_argument, NULL, 'h'},
        {"check", no_argument, NULL, 'C'},         {"max-memory", required_argument, NULL, 'M'},
        {"repair", no_argument, NULL, 'R'},
        {"allow-host", required_argument, NULL, 'H'},
        {"allow-origin", required_argument, NULL, 'O'},
        {NULL, 0, NULL, 0}};
    *st = (settings){.listen = SRV_DEFAULT_LISTEN, .token = getenv("TESSERAD_TOKEN"),
                     .state_dir = getenv("STATE_DIRECTORY"),
                     .checkpoint = JM_CHECKPOINT_SECONDS, .mpi_timeout = 30};
    int c;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case 'l': st->listen = optarg; break;
        case 'd': st->db = optarg; break;
        case 's': st->state_dir = optarg; break;
        case 'k': st->token = optarg; break;
        case 'w': st->www = optarg; break;
        case 'p': st->puzzles = optarg; break;
        case 'D': st->docs = optarg; break;
        case 't':
            if (parse_number("--threads", optarg, 0, 1024, &st->threads) != 0)
                return *status = 2, false;
            break;
        case 'c':
            if (parse_number("--checkpoint-seconds", optarg, 0.05, 3600, &st->checkpoint) != 0)
                return *status = 2, false;
            break;
        case 'M':
            if (parse_size("--max-memory", optarg, &st->max_memory) != 0)
                return *status = 2, false;
            break;
        case 'H':
            if (add_names("--allow-host", optarg, st->hosts, &st->nhosts) != 0)
                return *status = 2, false;
            break;
        case 'O':
            if (add_names("--allow-origin", optarg, st->origins, &st->norigins) != 0)
                return *status = 2, false;
            break;
        case 'm': st->mpi = true; break;
        case 'C': st->check = true; break;
        case 'R': st->repair = true; break;
        case 'o':
            if (parse_number("--mpi-timeout", optarg, 0.5, 86400, &st->mpi_timeout) != 0)
                return *status = 2, false;
            break;
        case 'V':
            printf("tesserad %s (engine %d, %s MPI)\n", PACKAGE_VERSION, TESSERA_ENGINE_VERSION,
                   TSR_MPI_BUILT);
            return *status = 0, false;
        case 'h':
            fputs(usage_text, stdout);
            return *status = 0, false;
        default:
            fputs(usage_text, stderr);
            return *status = 2, false;
        }
    }
    const char *wait = getenv("TESSERAD_ACTION_WAIT_MS");
    if (wait != NULL && wait[0] != '\0' &&
        parse_number("TESSERAD_ACTION_WAIT_MS", wait, 1000, 3600000, &st->action_wait_ms) != 0)
        return *status = 2, false;
    if (optind < argc) {
        fprintf(stderr, "tesserad: unexpected argument \"%s\"\n%s", argv[optind], usage_text);
        return *status = 2, false;
    }
    if (st->check && st->repair) {
        fprintf(stderr, "tesserad: --check and --repair: give one (--repair checks the result "
                "itself)\n");
        return *status = 2, false;
    }
    if (st->mpi && !have_cluster) {
#ifdef HAVE_MPI
        fprintf(stderr, "tesserad: --mpi: spell the option out\n");
#else
        fprintf(stderr, "tesserad: --mpi: this tesserad was built without MPI\n");
#endif
        return *status = 2, false;
    }
    return true;
}

/* The state directory, the database and the directories served: 0, or
 * the exit status after saying why. */
static int resolve_paths(settings *st)
{
    if (st->token != NULL && st->token[0] == '\0')
        st->token = NULL;
    if (st->state_dir == NULL || st->state_dir[0] == '\0')
        st->state_dir = "state";
    /* $STATE_DIRECTORY may list several directories: the first is ours */
    snprintf(st->statebuf, sizeof st->statebuf, "%s", st->state_dir);
    st->statebuf[strcspn(st->statebuf, ":")] = '\0';
    if (st->db == NULL) {
        if (mkdir(st->statebuf, 0700) != 0 && errno != EEXIST) {
            fprintf(stderr, "tesserad: cannot create the state directory %s: %s\n", st->statebuf,
                    strerror(errno));
            return 1;
        }
        snprintf(st->dbbuf, sizeof st->dbbuf, "%s/tessera.db", st->statebuf);
        st->db = st->dbbuf;
    }
    if (st->www == NULL)
        st->www = default_dir("www", TSR_DATADIR "/www");
    if (st->puzzles == NULL)
        st->puzzles = default_dir("puzzles", TSR_DATADIR "/puzzles");
    if (st->docs == NULL)
        st->docs = default_dir("docs", TSR_DATADIR "/docs");
    return 0;
}

/* Until SIGTERM or SIGINT: tick the cluster, refresh systemd's status. */
static void serve(jm_manager *jm, clu_cluster **cl)
{
    char status[256];
    for (int ticks = 1; !atomic_load(&stop_signal); ticks++) {
        usleep(MAIN_TICK_MS * 1000);
#ifdef HAVE_MPI
        if (cl != NULL)
            clu_tick(*cl); /* idle workers hear from rank 0 */
#else
        (void)cl;
#endif
        if (ticks % (STATUS_EVERY_S * 1000 / MAIN_TICK_MS) == 0) {
            jm_status_line(jm, status, sizeof status);
            sd_notifyf(0, "STATUS=%s", status);
        }
    }
}

/* The daemon.  cl: NULL without --mpi; with it, rank 0's place for the
 * cluster, opened here once the options are read (main closes it). */
static int daemon_main(int argc, char **argv, clu_cluster **cl)
{
    settings st;
    int rc = 0;
    if (!parse_options(argc, argv, cl != NULL, &st, &rc))
        return rc;
    if ((rc = resolve_paths(&st)) != 0)
        return rc;
    if (st.check)
        return check_main(st.db);
    if (st.repair)
        return repair_main(st.db);

    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    tsr_err err = {{0}};
    jm_config jc = {.db_path = st.db, .threads = (int)st.threads,
                    .checkpoint_seconds = st.checkpoint, .puzzles_dir = st.puzzles,
                    .version = PACKAGE_VERSION, .max_memory = st.max_memory,
                    .action_wait_ms = (int)st.action_wait_ms, .log = jobs_log};
#ifdef HAVE_MPI
    jm_backend backend;
    if (cl != NULL) {
        if (clu_open((int)st.threads, st.mpi_timeout, cl, &err) != 0) {
            fprintf(stderr, "tesserad: %s\n", err.msg);
            return 1;
        }
        jm_cluster_backend(*cl, &backend);
        jc.backend = &backend;
    }
#endif
    jm_manager *jm = NULL;
    if (jm_open(&jc, &jm, &err) != 0) {
        fprintf(stderr, "tesserad: %s\n", err.msg);
        return 1;
    }
    if (jm_check_note(jm) != NULL)
        fprintf(stderr, "tesserad: %s\n", jm_check_note(jm));
    srv_ops ops;
    jm_ops(jm, &ops);
    srv_config sc = {.listen = st.listen, .token = st.token, .www_dir = st.www,
                     .docs_dir = st.docs, .log = http_log,
                     .allow_hosts = st.hosts, .nallow_hosts = st.nhosts,
                     .allow_origins = st.origins, .nallow_origins = st.norigins};
    srv_server *srv = NULL;
    if (srv_start(&sc, &ops, &srv, &err) != 0) {
        fprintf(stderr, "tesserad: %s\n", err.msg);
        jm_close(jm);
        return 1;
    }
    char status[256];
    jm_status_line(jm, status, sizeof status);
    fprintf(stderr, "tesserad %s: listening on %s (port %d), database %s; %s\n", PACKAGE_VERSION,
            st.listen, srv_port(srv), st.db, status);
#ifdef HAVE_MPI
    if (jc.backend)
        fprintf(stderr, "tesserad: searching on %d MPI ranks (%d search threads), one job at a time\n",
                clu_size(*cl), jc.backend->threads);
#endif
    fflush(stderr);
    sd_notifyf(0, "READY=1\nSTATUS=%s", status);

    serve(jm, cl);

    fprintf(stderr, "tesserad: %s: stopping; running jobs take a final checkpoint\n",
            atomic_load(&stop_signal) == SIGINT ? "SIGINT" : "SIGTERM");
    sd_notify(0, "STOPPING=1");
    srv_stop(srv);
    jm_shutdown(jm);
    jm_close(jm);
    fprintf(stderr, "tesserad: stopped\n");
    return 0;
}

int main(int argc, char **argv)
{
#ifdef HAVE_MPI
    /* looked for before getopt, so that only rank 0 reads the options */
    bool mpi = false;
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        mpi |= strcmp(argv[i], "--mpi") == 0;
    if (mpi) {
        int rank = 0, size = 1;
        tsr_err err = {{0}};
        if (clu_init(&argc, &argv, &rank, &size, &err) != 0) {
            fprintf(stderr, "tesserad: %s\n", err.msg);
            clu_finalize();
            return 1;
        }
        if (rank != 0) { /* a worker: serve rank 0 until it says EXIT */
            /* mpirun passes a SIGTERM to every rank; rank 0's final
             * checkpoint needs the workers, so they leave when it says so
             * (or when it has been silent for the timeout) */
            signal(SIGTERM, SIG_IGN);
            signal(SIGINT, SIG_IGN);
            int rc = clu_serve(&err);
            if (rc != 0)
                fprintf(stderr, "tesserad: rank %d: %s\n", rank, err.msg);
            return rc == 0 ? 0 : 1;
        }
        clu_cluster *cl = NULL;
        int status = daemon_main(argc, argv, &cl);
        if (cl == NULL && clu_open(0, 0, &cl, &err) != 0) { /* to let the workers go */
            clu_finalize();
            return status ? status : 1;
        }
        clu_close(cl);
        return status;
    }
#endif
    return daemon_main(argc, argv, NULL);
}
