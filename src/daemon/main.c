/*
 * main.c - tesserad, the Tessera daemon.
 *
 *   tesserad [--listen HOST:PORT] [--db PATH] [--state-dir DIR] [--threads N]
 *            [--token T] [--www DIR] [--puzzles DIR] [--docs DIR]
 *            [--checkpoint-seconds S] [--max-memory SIZE]
 *            [--mpi [--mpi-timeout S]]
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

#ifdef HAVE_MPI
#define TSR_MPI_BUILT "with"
#else
#define TSR_MPI_BUILT "without"
#endif

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig) { stop_signal = sig; }

static void http_log(void *ctx, const char *line)
{
    fprintf(stderr, "tesserad: http: %s\n", line);
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
    "  --www DIR                dashboard files (default ./www, else " TSR_DATADIR "/www)\n"
    "  --puzzles DIR            puzzle library (default ./puzzles, else " TSR_DATADIR
    "/puzzles)\n"
    "  --docs DIR               documents served at /docs/ (default ./docs, else "
    TSR_DATADIR "/docs)\n"
    "  --checkpoint-seconds S   seconds between checkpoints (default 5)\n"
    "  --max-memory SIZE        refuse a job whose search would need more memory (bytes,\n"
    "                           or with K, M, G, T; none: no cap; default: half of the\n"
    "                           machine's or the cgroup's memory)\n"
    "  --mpi                    run jobs on the ranks of an MPI job (start with mpirun;\n"
    "                           --threads is then per rank; see docs/cluster.md)\n"
    "  --mpi-timeout S          seconds of silence after which a busy rank is given up\n"
    "                           and its work searched again elsewhere (default 30)\n"
    "  --check                  check the store (--db or --state-dir) without changing it,\n"
    "                           print the report and exit: 0 sound, 1 damaged, 2 unreadable\n"
    "  --version, --help\n";

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

/* The daemon.  cl: NULL without --mpi; with it, rank 0's place for the
 * cluster, opened here once the options are read (main closes it). */
static int daemon_main(int argc, char **argv, clu_cluster **cl)
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
        {NULL, 0, NULL, 0}};
    const char *listen = SRV_DEFAULT_LISTEN, *db = NULL, *token = getenv("TESSERAD_TOKEN");
    const char *state_dir = getenv("STATE_DIRECTORY"), *www = NULL, *puzzles = NULL;
    const char *docs = NULL;
    double threads = 0, checkpoint = JM_CHECKPOINT_SECONDS, mpi_timeout = 30, max_memory = 0;
    bool mpi = false, check = false;
    int c;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case 'l': listen = optarg; break;
        case 'd': db = optarg; break;
        case 's': state_dir = optarg; break;
        case 'k': token = optarg; break;
        case 'w': www = optarg; break;
        case 'p': puzzles = optarg; break;
        case 'D': docs = optarg; break;
        case 't':
            if (parse_number("--threads", optarg, 0, 1024, &threads) != 0)
                return 2;
            break;
        case 'c':
            if (parse_number("--checkpoint-seconds", optarg, 0.05, 3600, &checkpoint) != 0)
                return 2;
            break;
        case 'M':
            if (parse_size("--max-memory", optarg, &max_memory) != 0)
                return 2;
            break;
        case 'm': mpi = true; break;
        case 'C': check = true; break;
        case 'o':
            if (parse_number("--mpi-timeout", optarg, 0.5, 86400, &mpi_timeout) != 0)
                return 2;
            break;
        case 'V':
            printf("tesserad %s (engine %d, %s MPI)\n", PACKAGE_VERSION, TESSERA_ENGINE_VERSION,
                   TSR_MPI_BUILT);
            return 0;
        case 'h':
            fputs(usage_text, stdout);
            return 0;
        default:
            fputs(usage_text, stderr);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "tesserad: unexpected argument \"%s\"\n%s", argv[optind], usage_text);
        return 2;
    }
    if (mpi && cl == NULL) {
#ifdef HAVE_MPI
        fprintf(stderr, "tesserad: --mpi: spell the option out\n");
#else
        fprintf(stderr, "tesserad: --mpi: this tesserad was built without MPI\n");
#endif
        return 2;
    }
    if (token != NULL && token[0] == '\0')
        token = NULL;
    if (state_dir == NULL || state_dir[0] == '\0')
        state_dir = "state";
    /* $STATE_DIRECTORY may list several directories: the first is ours */
    char statebuf[4096], dbbuf[4200];
    snprintf(statebuf, sizeof statebuf, "%s", state_dir);
    statebuf[strcspn(statebuf, ":")] = '\0';
    if (db == NULL) {
        if (mkdir(statebuf, 0700) != 0 && errno != EEXIST) {
            fprintf(stderr, "tesserad: cannot create the state directory %s: %s\n", statebuf,
                    strerror(errno));
            return 1;
        }
        snprintf(dbbuf, sizeof dbbuf, "%s/tessera.db", statebuf);
        db = dbbuf;
    }
    if (check)
        return check_main(db);
    if (www == NULL)
        www = default_dir("www", TSR_DATADIR "/www");
    if (puzzles == NULL)
        puzzles = default_dir("puzzles", TSR_DATADIR "/puzzles");
    if (docs == NULL)
        docs = default_dir("docs", TSR_DATADIR "/docs");

    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    tsr_err err = {{0}};
    jm_config jc = {.db_path = db, .threads = (int)threads, .checkpoint_seconds = checkpoint,
                    .puzzles_dir = puzzles, .version = PACKAGE_VERSION,
                    .max_memory = max_memory};
#ifdef HAVE_MPI
    jm_backend backend;
    if (cl != NULL) {
        if (clu_open((int)threads, mpi_timeout, cl, &err) != 0) {
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
    srv_ops ops;
    jm_ops(jm, &ops);
    srv_config sc = {.listen = listen, .token = token, .www_dir = www, .docs_dir = docs,
                     .log = http_log};
    srv_server *srv = NULL;
    if (srv_start(&sc, &ops, &srv, &err) != 0) {
        fprintf(stderr, "tesserad: %s\n", err.msg);
        jm_close(jm);
        return 1;
    }
    char status[256];
    jm_status_line(jm, status, sizeof status);
    fprintf(stderr, "tesserad %s: listening on %s (port %d), database %s; %s\n", PACKAGE_VERSION,
            listen, srv_port(srv), db, status);
#ifdef HAVE_MPI
    if (jc.backend)
        fprintf(stderr, "tesserad: searching on %d MPI ranks (%d search threads), one job at a time\n",
                clu_size(*cl), jc.backend->threads);
#endif
    fflush(stderr);
    sd_notifyf(0, "READY=1\nSTATUS=%s", status);

    for (int ticks = 1; !stop_signal; ticks++) {
        usleep(200 * 1000);
#ifdef HAVE_MPI
        if (cl != NULL)
            clu_tick(*cl); /* idle workers hear from rank 0 */
#endif
        if (ticks % 25 == 0) { /* every 5 s */
            jm_status_line(jm, status, sizeof status);
            sd_notifyf(0, "STATUS=%s", status);
        }
    }
    fprintf(stderr, "tesserad: %s: stopping; running jobs take a final checkpoint\n",
            stop_signal == SIGINT ? "SIGINT" : "SIGTERM");
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
