/*
 * verify.c - tessera verify: re-run a record's tasks and compare.
 *
 * A record (docs/records.md; tesserad exports it for a completed job
 * submitted with options.record) holds a puzzle, the options its search
 * ran with, the engine's version and configuration line, and the tree
 * split at a fixed depth into tasks, each with its images, weight,
 * solutions, nodes and digest.  verify builds the same solver, splits the
 * tree again and checks that the split is the record's (the same tasks,
 * the same part above), then searches the tasks asked for, on any number
 * of threads, and compares each one's figures.  So anyone can check any
 * part of a long run, on another machine, any day, without trusting the
 * machine that made it.
 *
 * Exit status: 0 every task checked matches, 1 some differ (or the record
 * does not add up), 2 the record or the arguments are unusable.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>

#include <jansson.h>

#include "base/base.h"
#include "cli/cli.h"
#include "tessera/tessera.h"

#define VERIFY_MAX_BYTES (1L << 30) /* a record of a million tasks is ~100 MB */
#define SMALL_TASK_NODES 1000000    /* a few tens of milliseconds of search */

typedef struct rec_task {
    int n;
    int *images;
    double weight;
    uint64_t solutions, nodes, digest;
} rec_task;

typedef struct record {
    json_t *doc;
    const char *file;
    int depth, ntasks;
    rec_task above;            /* images none; weight: pruned */
    rec_task *tasks;
    uint64_t total_solutions, total_nodes, total_digest;
} record;

static int bad(const record *r, const char *path, const char *what)
{
    fprintf(stderr, "tessera: %s: %s: %s\n", r->file, path, what);
    return EXIT_USAGE;
}

static bool get_u64(json_t *o, const char *key, uint64_t *out)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return false;
    *out = (uint64_t)json_integer_value(v);
    return true;
}

static bool get_hex(json_t *o, const char *key, uint64_t *out)
{
    const char *s = json_string_value(json_object_get(o, key));
    if (s == NULL || strlen(s) != 16 || strspn(s, "0123456789abcdef") != 16)
        return false;
    *out = strtoull(s, NULL, 16);
    return true;
}

/* A task's figures at `path` (row 0 has no images). */
static int read_figures(const record *r, json_t *o, const char *path, rec_task *t)
{
    char p[96];
    if (!get_u64(o, "solutions", &t->solutions)) {
        snprintf(p, sizeof p, "%s.solutions", path);
        return bad(r, p, "expected an integer >= 0");
    }
    if (!get_u64(o, "nodes", &t->nodes)) {
        snprintf(p, sizeof p, "%s.nodes", path);
        return bad(r, p, "expected an integer >= 0");
    }
    if (!get_hex(o, "digest", &t->digest)) {
        snprintf(p, sizeof p, "%s.digest", path);
        return bad(r, p, "expected 16 lowercase hexadecimal digits");
    }
    return 0;
}

static int read_record(record *r, const char *file)
{
    *r = (record){.file = file};
    json_error_t je;
    struct stat sb;
    if (stat(file, &sb) != 0) {
        fprintf(stderr, "tessera: %s: cannot open: %s\n", file, strerror(errno));
        return EXIT_USAGE;
    }
    if (sb.st_size > VERIFY_MAX_BYTES) {
        fprintf(stderr, "tessera: %s: %lld bytes: a record is at most %ld\n", file,
                (long long)sb.st_size, VERIFY_MAX_BYTES);
        return EXIT_USAGE;
    }
    r->doc = json_load_file(file, JSON_REJECT_DUPLICATES, &je);
    if (r->doc == NULL) {
        fprintf(stderr, "tessera: %s: line %d: %s\n", file, je.line, je.text);
        return EXIT_USAGE;
    }
    json_t *d = r->doc;
    if (!json_is_object(d))
        return bad(r, "$", "expected a record object");
    const char *format = json_string_value(json_object_get(d, "format"));
    if (format == NULL || strcmp(format, "tessera-record") != 0)
        return bad(r, "$.format", "expected \"tessera-record\" (is this a record from "
                                  "GET /api/v1/jobs/ID/record?)");
    if (json_integer_value(json_object_get(d, "version")) != 1)
        return bad(r, "$.version", "expected 1, the only record version this program reads");
    json_t *engine = json_object_get(d, "engine");
    json_t *ev = json_object_get(engine, "engine_version");
    if (!json_is_integer(ev))
        return bad(r, "$.engine.engine_version", "expected an integer");
    if (json_integer_value(ev) != TESSERA_ENGINE_VERSION) {
        char m[160];
        snprintf(m, sizeof m, "the record was made by engine version %lld, this is version %d: "
                 "its image ids mean other placements here", (long long)json_integer_value(ev),
                 TESSERA_ENGINE_VERSION);
        return bad(r, "$.engine.engine_version", m);
    }
    if (!json_is_object(json_object_get(d, "puzzle")))
        return bad(r, "$.puzzle", "expected the puzzle object");
    if (!json_is_object(json_object_get(d, "options")))
        return bad(r, "$.options", "expected the options object");
    json_t *split = json_object_get(d, "split");
    json_t *depth = json_object_get(split, "depth");
    if (!json_is_integer(depth) || json_integer_value(depth) < 1 || json_integer_value(depth) > 8)
        return bad(r, "$.split.depth", "expected an integer from 1 to 8");
    r->depth = (int)json_integer_value(depth);
    json_t *pruned = json_object_get(split, "pruned");
    if (!json_is_number(pruned))
        return bad(r, "$.split.pruned", "expected a number");
    r->above.weight = json_number_value(pruned);
    int rc = read_figures(r, split, "$.split", &r->above);
    json_t *totals = json_object_get(d, "totals");
    if (rc == 0 && (!get_u64(totals, "solutions", &r->total_solutions) ||
                    !get_u64(totals, "nodes", &r->total_nodes) ||
                    !get_hex(totals, "digest", &r->total_digest)))
        return bad(r, "$.totals", "expected solutions, nodes and digest");
    json_t *tasks = json_object_get(d, "tasks");
    if (rc == 0 && (!json_is_array(tasks) || json_array_size(tasks) < 1 ||
                    json_array_size(tasks) > 1000000))
        return bad(r, "$.tasks", "expected an array of 1 to 1,000,000 tasks");
    if (rc != 0)
        return rc;
    r->ntasks = (int)json_array_size(tasks);
    r->tasks = calloc((size_t)r->ntasks, sizeof *r->tasks);
    if (r->tasks == NULL)
        return bad(r, "$.tasks", "out of memory");
    for (int i = 0; i < r->ntasks; i++) {
        json_t *o = json_array_get(tasks, (size_t)i);
        char path[64];
        snprintf(path, sizeof path, "$.tasks[%d]", i);
        rec_task *t = &r->tasks[i];
        if (!json_is_object(o))
            return bad(r, path, "expected a task object");
        if (json_integer_value(json_object_get(o, "task")) != i + 1)
            return bad(r, path, "tasks must be numbered from 1 in order (\"task\")");
        json_t *im = json_object_get(o, "images"), *w = json_object_get(o, "weight");
        if (!json_is_array(im) || json_array_size(im) != (size_t)r->depth) {
            char m[80];
            snprintf(m, sizeof m, "expected \"images\", %d image ids", r->depth);
            return bad(r, path, m);
        }
        if (!json_is_number(w) || !(json_number_value(w) >= 0 && json_number_value(w) <= 1))
            return bad(r, path, "expected \"weight\", a number from 0 to 1");
        t->n = r->depth;
        t->weight = json_number_value(w);
        t->images = malloc((size_t)r->depth * sizeof *t->images);
        if (t->images == NULL)
            return bad(r, path, "out of memory");
        for (int k = 0; k < r->depth; k++) {
            json_t *v = json_array_get(im, (size_t)k);
            if (!json_is_integer(v) || json_integer_value(v) < 0 ||
                json_integer_value(v) > INT_MAX)
                return bad(r, path, "expected image ids, integers >= 0");
            t->images[k] = (int)json_integer_value(v);
        }
        if ((rc = read_figures(r, o, path, t)) != 0)
            return rc;
    }
    return 0;
}

static void record_free(record *r)
{
    for (int i = 0; r->tasks && i < r->ntasks; i++)
        free(r->tasks[i].images);
    free(r->tasks);
    json_decref(r->doc);
}

/* The split made here, to compare with the record's. */
typedef struct split_here {
    int n, cap;
    rec_task *t;
    bool failed;
} split_here;

static void on_split(void *ctx, const int *images, int n, double weight)
{
    split_here *s = ctx;
    if (s->failed)
        return;
    if (s->n == s->cap) {
        size_t cap = (size_t)s->cap;
        if (base_grow((void **)&s->t, &cap, (size_t)s->n, sizeof *s->t, 1024, 2000000) != 0) {
            s->failed = true;
            return;
        }
        s->cap = (int)cap;
    }
    rec_task *t = &s->t[s->n];
    *t = (rec_task){.n = n, .weight = weight, .images = malloc((size_t)n * sizeof(int))};
    if (t->images == NULL) {
        s->failed = true;
        return;
    }
    memcpy(t->images, images, (size_t)n * sizeof(int));
    s->n++;
}

/* "all", or a list of task numbers and ranges: "1-100,205". */
static int parse_tasks(const char *spec, int ntasks, unsigned char *want)
{
    if (strcmp(spec, "all") == 0) {
        memset(want, 1, (size_t)ntasks);
        return 0;
    }
    const char *p = spec;
    while (*p) {
        char *end;
        long a = strtol(p, &end, 10), b = a;
        if (end == p)
            return cli_usage_error("--tasks: expected numbers and ranges such as 1-100,205, got "
                                   "'%s'", spec);
        p = end;
        if (*p == '-') {
            b = strtol(p + 1, &end, 10);
            if (end == p + 1)
                return cli_usage_error("--tasks: a range needs its end: '%s'", spec);
            p = end;
        }
        if (a < 1 || b < a || b > ntasks) {
            char m[96];
            snprintf(m, sizeof m, "%ld-%ld is not within the record's tasks 1-%d", a, b, ntasks);
            return cli_usage_error("--tasks: %s", m);
        }
        for (long i = a; i <= b; i++)
            want[i - 1] = 1;
        if (*p == ',')
            p++;
        else if (*p != '\0')
            return cli_usage_error("--tasks: unexpected text in '%s'", spec);
    }
    return 0;
}

static int no_found(void *ctx, const int *images, int n, int count)
{
    (void)ctx, (void)images, (void)n, (void)count;
    return 0;
}

enum { V_TASKS = 1000, V_THREADS, V_SAMPLE, V_SEED, V_QUIET };

static void usage(FILE *f)
{
    fprintf(f, "Usage: tessera verify RECORD [--tasks all|N-M,...] [--sample K [--seed S]]\n"
               "                      [--threads N] [--quiet]\n"
               "Re-run a record's tasks (tesserad: GET /api/v1/jobs/ID/record) and compare\n"
               "each one's solutions, nodes and digest; the split itself is checked first.\n"
               "Exit status 0: all match; 1: some differ; 2: unusable record or arguments.\n");
}

int cli_verify_main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"tasks", required_argument, NULL, V_TASKS},
        {"threads", required_argument, NULL, V_THREADS},
        {"sample", required_argument, NULL, V_SAMPLE},
        {"seed", required_argument, NULL, V_SEED},
        {"quiet", no_argument, NULL, V_QUIET},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *tasks_spec = NULL;
    long long threads = 0, sample = 0, seed = 1;
    bool quiet = false;
    int ch, rc = 0;
    optind = 1;
    while (rc == 0 && (ch = getopt_long(argc, argv, "hq", longopts, NULL)) != -1) {
        switch (ch) {
        case V_TASKS: tasks_spec = optarg; break;
        case V_THREADS:
            if (!cli_parse_long(optarg, 0, 1024, &threads))
                rc = cli_usage_error("--threads: expected 0 to 1024, got '%s'", optarg);
            break;
        case V_SAMPLE:
            if (!cli_parse_long(optarg, 1, 1000000, &sample))
                rc = cli_usage_error("--sample: expected a number of tasks >= 1, got '%s'", optarg);
            break;
        case V_SEED:
            if (!cli_parse_long(optarg, 0, LLONG_MAX, &seed))
                rc = cli_usage_error("--seed: expected a number >= 0, got '%s'", optarg);
            break;
        case 'q':
        case V_QUIET: quiet = true; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return EXIT_USAGE;
        }
    }
    if (rc != 0)
        return rc;
    if (optind != argc - 1)
        return cli_usage_error("verify needs exactly one record file%s", "");
    if (tasks_spec != NULL && sample > 0)
        return cli_usage_error("--tasks and --sample choose the tasks two ways: give one%s", "");
    const char *file = argv[optind];
    record r;
    if ((rc = read_record(&r, file)) != 0) {
        record_free(&r);
        return rc;
    }
    /* the record must add up before anything runs */
    uint64_t sols = r.above.solutions, nodes = r.above.nodes, digest = r.above.digest;
    for (int i = 0; i < r.ntasks; i++) {
        sols += r.tasks[i].solutions;
        nodes += r.tasks[i].nodes;
        digest += r.tasks[i].digest;
    }
    bool sums = sols == r.total_solutions && nodes == r.total_nodes && digest == r.total_digest;
    tsr_puzzle *pz = NULL;
    tsr_options opt;
    tsr_err err = {{0}};
    char *ptext = json_dumps(json_object_get(r.doc, "puzzle"), JSON_COMPACT);
    char *otext = json_dumps(json_object_get(r.doc, "options"), JSON_COMPACT);
    if (ptext == NULL || otext == NULL)
        rc = bad(&r, "$", "out of memory");
    if (rc == 0 && tsr_puzzle_read(ptext, strlen(ptext), "$.puzzle", &pz, NULL, &err) != 0)
        rc = bad(&r, "$.puzzle", err.msg);
    if (rc == 0 && tsr_options_read_json(otext, strlen(otext), "$.options", pz, &opt, &err) != 0)
        rc = bad(&r, "$.options", err.msg);
    free(ptext);
    free(otext);
    tsr_solver *s = NULL;
    if (rc == 0) {
        opt.limit = 0;
        opt.threads = (int)threads;
        if (tsr_solver_new(pz, &opt, &s, &err) != 0)
            rc = bad(&r, "$.puzzle", err.msg);
    }
    const char *config = json_string_value(json_object_get(r.doc, "config"));
    if (rc == 0 && config != NULL && strcmp(config, tsr_solver_config(s)) != 0) {
        fprintf(stderr, "tessera: %s: $.config: the record's search was configured as\n  %s\n"
                        "and here it is\n  %s\n(another build of the engine?)\n",
                file, config, tsr_solver_config(s));
        rc = EXIT_USAGE;
    }
    /* the split: the same tasks, in the same order, the same part above */
    split_here sh = {0};
    tsr_stats above = {0};
    if (rc == 0) {
        tsr_callbacks cb = {.ctx = &sh, .donate = on_split};
        if (tsr_solver_split(s, r.depth, &cb, &above) != 0 || sh.failed)
            rc = bad(&r, "$.split.depth", "the tree cannot be split there here");
    }
    int differ = 0;
    if (rc == 0) {
        if (sh.n != r.ntasks) {
            fprintf(stderr, "tessera: %s: the split here has %d tasks, the record %d\n", file,
                    sh.n, r.ntasks);
            rc = 1;
        }
        for (int i = 0; rc == 0 && i < sh.n; i++)
            if (memcmp(sh.t[i].images, r.tasks[i].images, (size_t)r.depth * sizeof(int)) != 0 ||
                fabs(sh.t[i].weight - r.tasks[i].weight) > 1e-12 * fmax(1, r.tasks[i].weight)) {
                fprintf(stderr, "tessera: %s: task %d is another node here\n", file, i + 1);
                rc = 1;
            }
        if (rc == 0 && (above.nodes != r.above.nodes || above.solutions != r.above.solutions ||
                        above.digest != r.above.digest)) {
            fprintf(stderr, "tessera: %s: above the split: %" PRIu64 " nodes here, %" PRIu64
                            " in the record\n", file, above.nodes, r.above.nodes);
            rc = 1;
        }
    }
    if (rc == 0 && !quiet)
        printf("%s: %d tasks at depth %d, split as recorded (%" PRIu64 " nodes above)%s\n", file,
               r.ntasks, r.depth, above.nodes,
               sums ? "; the record adds up" : "");
    if (rc == 0 && !sums) {
        printf("%s: the record does not add up: its tasks make %" PRIu64 " solutions and %" PRIu64
               " nodes, its totals say %" PRIu64 " and %" PRIu64 "\n", file, sols, nodes,
               r.total_solutions, r.total_nodes);
        differ++;
    }
    unsigned char *want = rc == 0 ? calloc((size_t)r.ntasks, 1) : NULL;
    if (rc == 0 && want == NULL)
        rc = bad(&r, "$.tasks", "out of memory");
    if (rc == 0 && sample > 0) {
        uint64_t x = (uint64_t)seed * 0x9E3779B97F4A7C15ull + 1;
        long long k = sample < r.ntasks ? sample : r.ntasks;
        for (long long got = 0; got < k;) {
            x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
            int i = (int)((x * 2685821657736338717ull) % (uint64_t)r.ntasks);
            if (!want[i])
                want[i] = 1, got++;
        }
    } else if (rc == 0) {
        rc = parse_tasks(tasks_spec ? tasks_spec : "all", r.ntasks, want);
    }
    int checked = 0;
    uint64_t checked_nodes = 0, checked_solutions = 0;
    tsr_runner *rn = NULL;
    double t0 = base_now();
    for (int i = 0; rc == 0 && i < r.ntasks; i++) {
        if (!want[i])
            continue;
        const rec_task *t = &r.tasks[i];
        tsr_callbacks cb = {.found = no_found};
        tsr_stats st;
        double t1 = base_now();
        /* a small task on this thread: starting the pool's threads and
         * their FILA lists would cost more than its search */
        int e = 0;
        if (t->nodes < SMALL_TASK_NODES && rn == NULL)
            e = tsr_runner_new(s, &rn);
        if (e == 0)
            e = t->nodes < SMALL_TASK_NODES ? tsr_runner_run(rn, t->images, t->n, &cb, &st)
                                            : tsr_pool_run(s, (int)threads, t->images, t->n, &cb, &st);
        if (e != 0) {
            fprintf(stderr, "tessera: %s: task %d: %s\n", file, i + 1, tsr_strerror(e));
            rc = 1;
            break;
        }
        bool same = st.solutions == t->solutions && st.nodes == t->nodes && st.digest == t->digest;
        checked++;
        checked_nodes += st.nodes;
        checked_solutions += st.solutions;
        if (!same) {
            differ++;
            printf("task %d DIFFERS: here %" PRIu64 " solutions, %" PRIu64 " nodes, digest %016"
                   PRIx64 "; the record %" PRIu64 ", %" PRIu64 ", %016" PRIx64 "\n", i + 1,
                   st.solutions, st.nodes, st.digest, t->solutions, t->nodes, t->digest);
        } else if (!quiet) {
            printf("task %d: %" PRIu64 " solutions, %" PRIu64 " nodes, digest %016" PRIx64
                   ": as recorded (%.1f s)\n", i + 1, st.solutions, st.nodes, st.digest,
                   base_now() - t1);
        }
        fflush(stdout);
        tsr_stats_free(&st);
    }
    if (rc == 0)
        printf("%s: %d of %d tasks checked (%" PRIu64 " solutions, %" PRIu64 " nodes: %.2f%% of "
               "the record's) in %.1f s: %s\n", file, checked, r.ntasks, checked_solutions,
               checked_nodes,
               r.total_nodes ? 100.0 * (double)checked_nodes / (double)r.total_nodes : 0,
               base_now() - t0, differ ? "SOME DIFFER" : "all as recorded");
    free(want);
    tsr_runner_free(rn);
    for (int i = 0; i < sh.n; i++)
        free(sh.t[i].images);
    free(sh.t);
    tsr_stats_free(&above);
    tsr_solver_free(s);
    tsr_puzzle_free(pz);
    record_free(&r);
    if (rc != 0)
        return rc;
    return differ ? 1 : 0;
}
