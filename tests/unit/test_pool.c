/*
 * test_pool.c - the work-stealing pool gives exactly the single-threaded
 * run's solutions and statistics, for any number of threads.
 *
 * Every solution's canonical text is collected and compared as a multiset
 * with the plain run's, and the per-level fits (the search tree) and
 * attempts must sum to the same numbers: tasks replay their path, so the
 * split tree is the same tree.  Also: progress only grows, limits hold over
 * all workers, a callback stops every worker, and many more threads than
 * work is fine.
 */
#include <check.h>
#include <math.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "tessera/tessera.h"
#include "stats_sum.h"

#ifndef TSR_SRCDIR
#define TSR_SRCDIR "."
#endif

static tsr_puzzle *load(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/puzzles/%s", TSR_SRCDIR, name);
    tsr_puzzle *pz = NULL;
    tsr_err err = {{0}};
    ck_assert_msg(tsr_puzzle_load_file(path, &pz, NULL, &err) == 0, "%s", err.msg);
    return pz;
}

/* A check made on a pool's thread.  check's asserts are only safe on the
 * test's own thread (without fork they long-jump out of it), so callbacks
 * keep the first failure here, and the test asserts on it after the run. */
typedef struct later {
    pthread_mutex_t mu;
    char msg[512];
} later;

static void later_check(later *l, bool ok, const char *fmt, ...)
{
    if (ok)
        return;
    pthread_mutex_lock(&l->mu);
    if (l->msg[0] == '\0') {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(l->msg, sizeof l->msg, fmt, ap);
        va_end(ap);
    }
    pthread_mutex_unlock(&l->mu);
}

#define LATER_INIT {PTHREAD_MUTEX_INITIALIZER, {0}}
#define ASSERT_NO_LATER(l) ck_assert_msg((l).msg[0] == '\0', "on a pool thread: %s", (l).msg)

/* Solutions as sorted strings of "piece:x,y,z;..." per placement. */
typedef struct collected {
    pthread_mutex_t mu;
    later fail;
    char **keys;
    long n, cap;
    double last_fraction;
    int progress_calls, stop_after;
} collected;

static int by_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Keep a copy of key (from any worker). */
static void add_key(collected *c, const char *key)
{
    pthread_mutex_lock(&c->mu);
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 1024;
        c->keys = realloc(c->keys, (size_t)c->cap * sizeof *c->keys);
    }
    c->keys[c->n++] = strdup(key);
    pthread_mutex_unlock(&c->mu);
}

static int collect(void *ctx, const tsr_solution *s)
{
    collected *c = ctx;
    char buf[4096];
    size_t len = 0;
    char *parts[256];
    int np = 0;
    for (int i = 0; i < s->nplacements && np < 256; i++) {
        char one[512];
        size_t l = (size_t)snprintf(one, sizeof one, "%d:", s->placements[i].piece);
        for (int k = 0; k < s->placements[i].ncells && l < sizeof one; k++)
            l += (size_t)snprintf(one + l, sizeof one - l, "%d,%d,%d;", s->placements[i].cells[k].x,
                                  s->placements[i].cells[k].y, s->placements[i].cells[k].z);
        parts[np++] = strdup(one);
    }
    qsort(parts, (size_t)np, sizeof *parts, by_str);
    for (int i = 0; i < np; i++) {
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s|", parts[i]);
        free(parts[i]);
    }
    add_key(c, buf);
    return 0;
}

static int watch(void *ctx, const tsr_stats *st)
{
    collected *c = ctx;
    later_check(&c->fail, st->fraction >= c->last_fraction - 1e-9,
                "progress went back: %g after %g", st->fraction, c->last_fraction);
    c->last_fraction = st->fraction;
    return ++c->progress_calls >= c->stop_after && c->stop_after > 0;
}

static void clear(collected *c)
{
    for (long i = 0; i < c->n; i++)
        free(c->keys[i]);
    free(c->keys);
}

/* Same solutions (as multisets) and the same tree for 1..8 threads. */
static void same_as_plain(const char *file, enum tsr_unique mode)
{
    tsr_puzzle *pz = load(file);
    tsr_options opt;
    tsr_options_init(&opt);
    opt.unique = mode;
    tsr_solver *s = NULL;
    tsr_err err = {{0}};
    ck_assert_int_eq(tsr_solver_new(pz, &opt, &s, &err), 0);
    collected plain = {.mu = PTHREAD_MUTEX_INITIALIZER, .fail = LATER_INIT};
    tsr_callbacks cb = {.ctx = &plain, .solution = collect};
    tsr_stats ref;
    ck_assert_int_eq(tsr_solver_run(s, NULL, 0, &cb, &ref), 0);
    qsort(plain.keys, (size_t)plain.n, sizeof *plain.keys, by_str);
    static const int threads[] = {1, 2, 3, 8};
    for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
        collected par = {.mu = PTHREAD_MUTEX_INITIALIZER, .fail = LATER_INIT};
        tsr_callbacks pcb = {.ctx = &par, .solution = collect, .progress = watch,
                             .progress_seconds = 0.01};
        tsr_stats st;
        ck_assert_int_eq(tsr_pool_run(s, threads[t], NULL, 0, &pcb, &st), 0);
        ASSERT_NO_LATER(par.fail);
        ck_assert_msg(par.n == plain.n, "%s, %d threads: %ld solutions, plain run %ld", file,
                      threads[t], par.n, plain.n);
        qsort(par.keys, (size_t)par.n, sizeof *par.keys, by_str);
        for (long i = 0; i < par.n; i++)
            ck_assert_msg(strcmp(par.keys[i], plain.keys[i]) == 0, "%s: solution %ld differs",
                          file, i);
        ck_assert_int_eq(st.solutions, ref.solutions);
        ck_assert_int_eq(st.nodes, ref.nodes);
        for (int p = 0; p < st.levels; p++) {
            ck_assert_msg(st.fits[p] == ref.fits[p], "%s, %d threads: fits[%d] %llu vs %llu",
                          file, threads[t], p, (unsigned long long)st.fits[p],
                          (unsigned long long)ref.fits[p]);
            ck_assert_msg(st.attempts[p] == ref.attempts[p],
                          "%s, %d threads: attempts[%d] %llu vs %llu", file, threads[t], p,
                          (unsigned long long)st.attempts[p],
                          (unsigned long long)ref.attempts[p]);
        }
        ck_assert(!st.stopped);
        ck_assert(st.fraction == 1.0);
        tsr_stats_free(&st);
        clear(&par);
    }
    tsr_stats_free(&ref);
    clear(&plain);
    tsr_solver_free(s);
    tsr_puzzle_free(pz);
}

/* A class as "count:id,id,...", into c (which locks: found may be called
 * from several workers at once). */
static int collect_class(void *ctx, const int *images, int n, int count)
{
    collected *c = ctx;
    char buf[1024];
    size_t len = (size_t)snprintf(buf, sizeof buf, "%d:", count);
    for (int i = 0; i < n && len < sizeof buf; i++)
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%d,", images[i]);
    add_key(c, buf);
    return 0;
}

/* found_concurrent: with no limit the pool calls found from each worker at
 * once; the classes, their counts and the pool's solution total are those
 * of the one-at-a-time calls, on 1..8 threads; with a limit the flag is
 * ignored and the limit still holds exactly. */
START_TEST(found_concurrent_same_classes)
{
    tsr_puzzle *pz = load("pentominoes-6x10.json");
    tsr_options opt;
    tsr_options_init(&opt);
    opt.unique = TSR_UNIQUE_RAW;
    tsr_solver *s = NULL;
    tsr_err err = {{0}};
    ck_assert_int_eq(tsr_solver_new(pz, &opt, &s, &err), 0);
    collected ref = {.mu = PTHREAD_MUTEX_INITIALIZER, .fail = LATER_INIT};
    tsr_callbacks rcb = {.ctx = &ref, .found = collect_class};
    tsr_stats rst;
    ck_assert_int_eq(tsr_pool_run(s, 2, NULL, 0, &rcb, &rst), 0);
    ck_assert_int_eq(rst.solutions, 9356);
    qsort(ref.keys, (size_t)ref.n, sizeof *ref.keys, by_str);
    static const int threads[] = {1, 2, 3, 8};
    for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
        collected par = {.mu = PTHREAD_MUTEX_INITIALIZER, .fail = LATER_INIT};
        tsr_callbacks pcb = {.ctx = &par, .found = collect_class, .found_concurrent = true,
                             .progress = watch, .progress_seconds = 0.01};
        tsr_stats st;
        ck_assert_int_eq(tsr_pool_run(s, threads[t], NULL, 0, &pcb, &st), 0);
        ASSERT_NO_LATER(par.fail);
        ck_assert_int_eq(st.solutions, rst.solutions);
        ck_assert_msg(par.n == ref.n, "%d threads: %ld classes, %ld one at a time", threads[t],
                      par.n, ref.n);
        qsort(par.keys, (size_t)par.n, sizeof *par.keys, by_str);
        for (long i = 0; i < par.n; i++)
            ck_assert_msg(strcmp(par.keys[i], ref.keys[i]) == 0, "%d threads: class %ld differs",
                          threads[t], i);
        tsr_stats_free(&st);
        clear(&par);
    }
    tsr_solver_free(s);
    /* a limit: calls are cut one at a time, whatever the flag says */
    opt.limit = 1001;
    ck_assert_int_eq(tsr_solver_new(pz, &opt, &s, &err), 0);
    collected lim = {.mu = PTHREAD_MUTEX_INITIALIZER, .fail = LATER_INIT};
    tsr_callbacks lcb = {.ctx = &lim, .found = collect_class, .found_concurrent = true};
    tsr_stats lst;
    ck_assert_int_eq(tsr_pool_run(s, 3, NULL, 0, &lcb, &lst), 0);
    long total = 0;
    for (long i = 0; i < lim.n; i++)
        total += atol(lim.keys[i]);
    ck_assert_int_eq(total, 1001);
    ck_assert_int_eq(lst.solutions, 1001);
    tsr_stats_free(&lst);
    clear(&lim);
    tsr_stats_free(&rst);
    clear(&ref);
    tsr_solver_free(s);
    tsr_puzzle_free(pz);
}
END_TEST

/* A caller that only counts (counts_only) gets the tree and the count of
 * one that takes the classes, on any number of workers, with progress
 * that never goes back and never passes the final count; with a limit the
 * pool cuts the count one class at a time, as for found. */
typedef struct counted_watch {
    later fail;
    uint64_t last;
} counted_watch;

static int watch_counts(void *ctx, const tsr_stats *st)
{
    counted_watch *c = ctx;
    later_check(&c->fail, st->solutions >= c->last, "solutions went back: %llu after %llu",
                (unsigned long long)st->solutions, (unsigned long long)c->last);
    c->last = st->solutions;
    return 0;
}

START_TEST(counts_only_same_counts)
{
    static const char *const files[] = {"pentominoes-6x10.json", "dominoes-6x6.json"};
    for (int f = 0; f < 2; f++) {
        tsr_puzzle *pz = load(files[f]);
        tsr_options opt;
        tsr_options_init(&opt);
        opt.unique = TSR_UNIQUE_RAW;
        tsr_solver *s = NULL;
        tsr_err err = {{0}};
        ck_assert_int_eq(tsr_solver_new(pz, &opt, &s, &err), 0);
        collected ref = {.mu = PTHREAD_MUTEX_INITIALIZER, .fail = LATER_INIT};
        tsr_callbacks rcb = {.ctx = &ref, .found = collect_class};
        tsr_stats rst;
        ck_assert_int_eq(tsr_solver_run(s, NULL, 0, &rcb, &rst), 0);
        static const int threads[] = {1, 2, 3, 8};
        for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
            counted_watch w = {.fail = LATER_INIT};
            tsr_callbacks pcb = {.ctx = &w, .counts_only = true, .progress = watch_counts,
                                 .progress_seconds = 0.001};
            tsr_stats st;
            ck_assert_int_eq(tsr_pool_run(s, threads[t], NULL, 0, &pcb, &st), 0);
            ASSERT_NO_LATER(w.fail);
            ck_assert_msg(st.solutions == rst.solutions && st.nodes == rst.nodes &&
                              st.classes == rst.classes && w.last <= st.solutions,
                          "%s, %d threads: %llu solutions, %llu nodes, progress to %llu",
                          files[f], threads[t], (unsigned long long)st.solutions,
                          (unsigned long long)st.nodes, (unsigned long long)w.last);
            ck_assert_uint_eq(st.digest, 0);
            tsr_stats_free(&st);
        }
        tsr_solver_free(s);
        opt.limit = 1001;
        ck_assert_int_eq(tsr_solver_new(pz, &opt, &s, &err), 0);
        tsr_callbacks lcb = {.counts_only = true};
        tsr_stats lst;
        ck_assert_int_eq(tsr_pool_run(s, 3, NULL, 0, &lcb, &lst), 0);
        ck_assert_uint_eq(lst.solutions, 1001);
        ck_assert(lst.stopped);
        tsr_stats_free(&lst);
        tsr_solver_free(s);
        tsr_stats_free(&rst);
        clear(&ref);
        tsr_puzzle_free(pz);
    }
}
END_TEST

START_TEST(pentominoes_6x10) { same_as_plain("pentominoes-6x10.json", TSR_UNIQUE_RAW); }
END_TEST
START_TEST(soma_all_modes)
{
    same_as_plain("soma-cube.json", TSR_UNIQUE_RAW);
    same_as_plain("soma-cube.json", TSR_UNIQUE_MIRROR);
}
END_TEST
START_TEST(onesided_3x30) { same_as_plain("onesided-pentominoes-3x30.json", TSR_UNIQUE_ROTATIONS); }
END_TEST
START_TEST(fixed_and_identical) { same_as_plain("l-trominoes-fixed-4x3.json", TSR_UNIQUE_RAW); }
END_TEST

/* loose puzzles (count ranges, optional cells): DLX alone, with the
 * subset nodes of optional cells replayed by tasks */
START_TEST(loose_puzzles)
{
    same_as_plain("pentominoes-any7-6x6-optional-centre.json", TSR_UNIQUE_RAW);
    same_as_plain("pentominoes-any5-5x5.json", TSR_UNIQUE_ROTATIONS);
}
END_TEST

/* The options in force for a loose puzzle read back to the same
 * configuration (the daemon pins them for a job). */
START_TEST(loose_options_round_trip)
{
    tsr_puzzle *pz = load("pentominoes-any7-6x6-optional-centre.json");
    tsr_solver *s = NULL, *t = NULL;
    tsr_err err = {{0}};
    ck_assert_int_eq(tsr_solver_new(pz, NULL, &s, &err), 0);
    char *json = tsr_options_write_json(tsr_solver_options(s));
    tsr_options back;
    ck_assert_int_eq(tsr_options_read_json(json, strlen(json), "pinned", pz, &back, &err), 0);
    ck_assert_msg(tsr_solver_new(pz, &back, &t, &err) == 0, "%s", err.msg);
    ck_assert_str_eq(tsr_solver_config(s), tsr_solver_config(t));
    free(json);
    tsr_solver_free(s);
    tsr_solver_free(t);
    tsr_puzzle_free(pz);
}
END_TEST

START_TEST(limit_and_stop_hold_across_workers)
{
    tsr_puzzle *pz = load("pentominoes-5x12.json");
    tsr_options opt;
    tsr_options_init(&opt);
    opt.limit = 17;
    tsr_solver *s = NULL;
    tsr_err err = {{0}};
    ck_assert_int_eq(tsr_solver_new(pz, &opt, &s, &err), 0);
    collected c = {.mu = PTHREAD_MUTEX_INITIALIZER, .fail = LATER_INIT};
    tsr_callbacks cb = {.ctx = &c, .solution = collect};
    tsr_stats st;
    ck_assert_int_eq(tsr_pool_run(s, 4, NULL, 0, &cb, &st), 0);
    ck_assert_int_eq(c.n, 17);
    ck_assert_int_eq(st.solutions, 17);
    ck_assert(st.stopped);
    tsr_stats_free(&st);
    clear(&c);
    tsr_solver_free(s);

    tsr_options_init(&opt);
    opt.fila = 0; /* DLX only: slow enough to be stopped */
    ck_assert_int_eq(tsr_solver_new(pz, &opt, &s, &err), 0);
    collected c2 = {.mu = PTHREAD_MUTEX_INITIALIZER, .fail = LATER_INIT, .stop_after = 3};
    tsr_callbacks cb2 = {.ctx = &c2, .solution = collect, .progress = watch,
                         .progress_seconds = 0.01};
    ck_assert_int_eq(tsr_pool_run(s, 3, NULL, 0, &cb2, &st), 0);
    ASSERT_NO_LATER(c2.fail);
    ck_assert(st.stopped);
    ck_assert(c2.n < 1010);
    tsr_stats_free(&st);
    clear(&c2);
    tsr_solver_free(s);
    tsr_puzzle_free(pz);
}
END_TEST

/* ---- checkpoints: stop at a checkpoint, resume from its tasks ---- */

/* What task_done reported over all rounds: it must add up to the run. */
typedef struct tally {
    pthread_mutex_t mu;
    uint64_t nodes, solutions, digest;
    long calls;
} tally;

typedef struct chain {
    later fail;          /* checks made on the pool's thread */
    double expect;       /* weight of the tasks this round started from */
    int checkpoints, end_at;
    tsr_task *saved;     /* deep copy of the tasks shown at the ending checkpoint */
    int nsaved;
    collected *sols;
    long sols_at_end;    /* solutions collected when the round ended */
    long base;           /* ... and when it began */
    tally *tally;
} chain;

static int on_checkpoint(void *ctx, const tsr_task *tasks, int n, const tsr_stats *st)
{
    chain *c = ctx;
    double left = 0;
    for (int i = 0; i < n; i++) {
        later_check(&c->fail, tasks[i].weight >= 0 && tasks[i].weight <= 1,
                    "task %d's weight %g is outside [0, 1]", i, tasks[i].weight);
        left += tasks[i].weight;
    }
    /* work done plus work left is the work this round started with */
    later_check(&c->fail, fabs(st->fraction + left - c->expect) < 1e-9,
                "done %.12f + left %.12f != %.12f", st->fraction, left, c->expect);
    later_check(&c->fail, (long)st->solutions == c->sols->n - c->base,
                "%llu solutions reported at the checkpoint, %ld collected",
                (unsigned long long)st->solutions, c->sols->n - c->base); /* all reported */
    if (++c->checkpoints < c->end_at)
        return 0;
    c->saved = calloc((size_t)(n > 0 ? n : 1), sizeof *c->saved);
    for (int i = 0; i < n; i++) {
        c->saved[i] = tasks[i];
        c->saved[i].images = malloc((size_t)(tasks[i].n + 1) * sizeof(int));
        memcpy(c->saved[i].images, tasks[i].images, (size_t)tasks[i].n * sizeof(int));
    }
    c->nsaved = n;
    c->sols_at_end = c->sols->n;
    return 1;
}

static void on_task_done(void *ctx, const int *images, int n, const tsr_stats *st)
{
    (void)images;
    (void)n;
    tally *t = ((chain *)ctx)->tally;
    pthread_mutex_lock(&t->mu);
    t->nodes += st->nodes;
    t->solutions += st->solutions;
    t->digest += st->digest;
    t->calls++;
    pthread_mutex_unlock(&t->mu);
}

static void free_tasks(tsr_task *t, int n)
{
    for (int i = 0; i < n; i++)
        free(t[i].images);
    free(t);
}

/* Run the search in rounds that each end at a checkpoint and resume from
 * its tasks on another number of threads: the rounds together give exactly
 * the plain run's solutions (none lost, none twice) and tree. */
static void resume_chain(const char *file, enum tsr_unique mode, int fila, int goal)
{
    tsr_puzzle *pz = load(file);
    tsr_options opt;
    tsr_options_init(&opt);
    opt.unique = mode;
    opt.fila = fila;
    opt.goal = goal;
    tsr_solver *s = NULL;
    tsr_err err = {{0}};
    ck_assert_int_eq(tsr_solver_new(pz, &opt, &s, &err), 0);
    collected plain = {.mu = PTHREAD_MUTEX_INITIALIZER, .fail = LATER_INIT};
    tsr_callbacks cb = {.ctx = &plain, .solution = collect};
    tsr_stats ref;
    ck_assert_int_eq(tsr_solver_run(s, NULL, 0, &cb, &ref), 0);
    qsort(plain.keys, (size_t)plain.n, sizeof *plain.keys, by_str);

    collected all = {.mu = PTHREAD_MUTEX_INITIALIZER, .fail = LATER_INIT};
    stats_sum sum;
    stats_sum_init(&sum, ref.levels);
    tsr_task *frontier = calloc(1, sizeof *frontier);
    frontier[0] = (tsr_task){0, malloc(sizeof(int)), 1.0};
    int nfrontier = 1, rounds = 0;
    double done = 0;
    tally tl = {.mu = PTHREAD_MUTEX_INITIALIZER};
    for (bool finished = false; !finished; rounds++) {
        ck_assert_msg(rounds < 10000, "%s: no end in sight", file);
        chain c = {.fail = LATER_INIT, .end_at = 1 + rounds % 3, .sols = &all, .base = all.n};
        for (int i = 0; i < nfrontier; i++)
            c.expect += frontier[i].weight;
        tsr_callbacks pcb = {.ctx = &all, .solution = collect};
        tsr_pool_hooks hk = {.ctx = &c, .checkpoint_seconds = 0.001,
                             .checkpoint = on_checkpoint, .task_done = on_task_done};
        c.tally = &tl;
        tsr_stats st;
        ck_assert_int_eq(tsr_pool_search(s, 1 + rounds % 3, frontier, nfrontier, &pcb, &hk, &st),
                         0);
        ASSERT_NO_LATER(c.fail);
        stats_sum_add(&sum, &st);
        done += st.fraction;
        free_tasks(frontier, nfrontier);
        if (c.saved != NULL) {
            ck_assert(st.stopped);
            ck_assert_int_eq(all.n, c.sols_at_end); /* nothing after the checkpoint */
            frontier = c.saved;
            nfrontier = c.nsaved;
        } else {
            ck_assert(!st.stopped);
            finished = true;
        }
        tsr_stats_free(&st);
    }
    ck_assert_msg(rounds >= 3, "%s: only %d rounds", file, rounds);
    ck_assert_msg(tl.nodes == ref.nodes && tl.digest == ref.digest && tl.calls >= rounds,
                  "%s: task_done saw %llu nodes (plain %llu) in %ld calls", file,
                  (unsigned long long)tl.nodes, (unsigned long long)ref.nodes, tl.calls);
    ck_assert_msg(fabs(done - 1) < 1e-9, "%s: fractions sum to %.12f", file, done);
    ck_assert_msg(all.n == plain.n, "%s: %ld solutions over %d rounds, plain run %ld", file, all.n,
                  rounds, plain.n);
    qsort(all.keys, (size_t)all.n, sizeof *all.keys, by_str);
    for (long i = 0; i < all.n; i++)
        ck_assert_msg(strcmp(all.keys[i], plain.keys[i]) == 0, "%s: solution %ld differs", file, i);
    stats_sum_check(&sum, &ref, file);
    stats_sum_free(&sum);
    tsr_stats_free(&ref);
    clear(&plain);
    clear(&all);
    tsr_solver_free(s);
    tsr_puzzle_free(pz);
}

START_TEST(checkpoints_fila) { resume_chain("pentominoes-6x10.json", TSR_UNIQUE_RAW, -1, 0); }
END_TEST
START_TEST(checkpoints_dlx) { resume_chain("pentominoes-6x10.json", TSR_UNIQUE_ROTATIONS, 0, 0); }
END_TEST
START_TEST(checkpoints_loose)
{
    resume_chain("pentominoes-any7-6x6-optional-centre.json", TSR_UNIQUE_ROTATIONS, 0, 0);
}
END_TEST
/* the Tetris Cube's partial assemblies with 7 pieces left: FILA with E in 3D */
START_TEST(checkpoints_3d) { resume_chain("tetris-cube.json", TSR_UNIQUE_ROTATIONS, -1, 7); }
END_TEST

/* tsr_solver_split: the tasks at a fixed depth, each searched alone on
 * one thread and on the pool, add up to the whole run: nodes (with those
 * above the split), solutions, per-level fits and the digest. */
typedef struct split_list {
    int n, cap;
    tsr_task *t;
    int depth_seen;
} split_list;

static void on_split(void *ctx, const int *images, int n, double weight)
{
    split_list *l = ctx;
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->t = realloc(l->t, (size_t)l->cap * sizeof *l->t);
    }
    l->t[l->n].images = malloc((size_t)n * sizeof(int));
    memcpy(l->t[l->n].images, images, (size_t)n * sizeof(int));
    l->t[l->n].n = n;
    l->t[l->n++].weight = weight;
    if (n != l->depth_seen)
        l->depth_seen = -1;
}

static void split_adds_up(const char *file, enum tsr_unique mode, int fila, int depth)
{
    tsr_puzzle *pz = load(file);
    tsr_options opt;
    tsr_options_init(&opt);
    opt.unique = mode;
    opt.fila = fila;
    tsr_solver *s = NULL;
    tsr_err err = {{0}};
    ck_assert_int_eq(tsr_solver_new(pz, &opt, &s, &err), 0);
    tsr_stats ref, above;
    ck_assert_int_eq(tsr_solver_run(s, NULL, 0, NULL, &ref), 0);
    split_list l = {.depth_seen = depth};
    tsr_callbacks scb = {.ctx = &l, .donate = on_split};
    ck_assert_int_eq(tsr_solver_split(s, depth, &scb, &above), 0);
    ck_assert_msg(l.n > 1 && l.depth_seen == depth, "%s: %d tasks at depth %d", file, l.n, depth);
    uint64_t nodes = above.nodes, sols = above.solutions, digest = above.digest;
    double weight = above.fraction;
    uint64_t *fits = calloc((size_t)ref.levels, sizeof *fits);
    for (int p = 0; p < ref.levels; p++)
        fits[p] = above.fits[p];
    tsr_runner *rn;
    ck_assert_int_eq(tsr_runner_new(s, &rn), 0);
    int every = l.n / 12 + 1; /* a dozen tasks on the pool too */
    for (int i = 0; i < l.n; i++) {
        tsr_stats st;
        ck_assert_int_eq(tsr_runner_run(rn, l.t[i].images, l.t[i].n, NULL, &st), 0);
        if (i % every == 0) {
            tsr_stats ps;
            ck_assert_int_eq(tsr_pool_run(s, 1 + i % 3, l.t[i].images, l.t[i].n, NULL, &ps), 0);
            ck_assert_msg(ps.nodes == st.nodes && ps.solutions == st.solutions &&
                          ps.digest == st.digest, "%s: task %d on the pool differs", file, i);
            tsr_stats_free(&ps);
        }
        nodes += st.nodes;
        sols += st.solutions;
        digest += st.digest;
        weight += l.t[i].weight;
        for (int p = 0; p < ref.levels; p++)
            fits[p] += st.fits[p];
        tsr_stats_free(&st);
        free(l.t[i].images);
    }
    tsr_runner_free(rn);
    ck_assert_msg(nodes == ref.nodes, "%s: depth %d: %llu nodes, run %llu",
                  file, depth, (unsigned long long)nodes, (unsigned long long)ref.nodes);
    ck_assert_msg(sols == ref.solutions, "%s: %llu solutions, run %llu",
                  file, (unsigned long long)sols, (unsigned long long)ref.solutions);
    ck_assert_msg(digest == ref.digest, "%s: digests differ", file);
    ck_assert_msg(fabs(weight - 1) < 1e-9, "%s: weights sum to %.12f", file, weight);
    for (int p = 0; p < ref.levels; p++)
        ck_assert_msg(fits[p] == ref.fits[p], "%s: fits[%d] %llu vs %llu", file, p,
                      (unsigned long long)fits[p], (unsigned long long)ref.fits[p]);
    ck_assert(ref.solutions > 0 && ref.digest != 0);
    free(fits);
    free(l.t);
    tsr_stats_free(&ref);
    tsr_stats_free(&above);
    tsr_solver_free(s);
    tsr_puzzle_free(pz);
}

START_TEST(split_tasks)
{
    split_adds_up("pentominoes-6x10.json", TSR_UNIQUE_RAW, -1, 1);
    split_adds_up("pentominoes-6x10.json", TSR_UNIQUE_ROTATIONS, -1, 2);
    split_adds_up("pentominoes-6x10.json", TSR_UNIQUE_ROTATIONS, 0, 3);
    split_adds_up("onesided-pentominoes-3x30.json", TSR_UNIQUE_ROTATIONS, -1, 2);
    split_adds_up("soma-cube.json", TSR_UNIQUE_RAW, 0, 2);
    /* with FILA from 11 pieces left (automatic), depths 2 and 3 are FILA's cuts */
    split_adds_up("onesided-pentominoes-3x30.json", TSR_UNIQUE_ROTATIONS, -1, 3);
    split_adds_up("tetris-cube.json", TSR_UNIQUE_ROTATIONS, -1, 2);
}
END_TEST

/* Depths the split refuses: none, a leaf's, and a loose puzzle (its
 * subset nodes are not tasks). */
START_TEST(split_refuses)
{
    tsr_puzzle *pz = load("pentominoes-6x10.json");
    tsr_options opt;
    tsr_options_init(&opt);
    opt.fila = 6;
    tsr_solver *s = NULL;
    tsr_err err = {{0}};
    ck_assert_int_eq(tsr_solver_new(pz, &opt, &s, &err), 0);
    split_list l = {0};
    tsr_callbacks scb = {.ctx = &l, .donate = on_split};
    tsr_stats st;
    ck_assert_int_eq(tsr_solver_split(s, 0, &scb, &st), TSR_EINVAL);
    ck_assert_int_eq(tsr_solver_split(s, 12, &scb, &st), TSR_EINVAL);
    ck_assert_int_eq(tsr_solver_split(s, 6, &scb, &st), 0);
    tsr_stats_free(&st);
    for (int i = 0; i < l.n; i++)
        free(l.t[i].images);
    free(l.t);
    tsr_solver_free(s);
    tsr_puzzle_free(pz);
    pz = load("pentominoes-any7-6x6-optional-centre.json");
    opt.fila = 0;
    ck_assert_int_eq(tsr_solver_new(pz, &opt, &s, &err), 0);
    ck_assert_int_eq(tsr_solver_split(s, 1, &scb, &st), TSR_EINVAL);
    tsr_solver_free(s);
    tsr_puzzle_free(pz);
}
END_TEST

/* The suite (tests/unit/check_main.c runs it). */
Suite *test_suite(void)
{
    Suite *s = suite_create("pool");
    TCase *tc = tcase_create("pool");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, pentominoes_6x10);
    tcase_add_test(tc, found_concurrent_same_classes);
    tcase_add_test(tc, counts_only_same_counts);
    tcase_add_test(tc, soma_all_modes);
    tcase_add_test(tc, onesided_3x30);
    tcase_add_test(tc, fixed_and_identical);
    tcase_add_test(tc, loose_puzzles);
    tcase_add_test(tc, loose_options_round_trip);
    tcase_add_test(tc, limit_and_stop_hold_across_workers);
    tcase_add_test(tc, checkpoints_fila);
    tcase_add_test(tc, checkpoints_dlx);
    tcase_add_test(tc, checkpoints_loose);
    tcase_add_test(tc, checkpoints_3d);
    tcase_add_test(tc, split_tasks);
    tcase_add_test(tc, split_refuses);
    suite_add_tcase(s, tc);
    return s;
}
