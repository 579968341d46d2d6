/*
 * tasks.c - how the pool cuts a search into tasks, and what runs alone.
 *
 * Usage: tasks PUZZLE THREADS [RUNS]
 *
 * Prints the preparation's wall and CPU seconds (on one thread and on
 * THREADS: the constrained piece's estimates run on several), then per run
 * of the search on THREADS workers: the number of tasks and of splits, how
 * the tasks' nodes and CPU seconds are spread (quantiles, the node-weighted
 * median, a histogram by decades of nodes), the CPU the first worker spent
 * alone before the first split and how many tasks that split gave, where
 * the extra CPU goes (slower nodes, each task's fixed cost, each worker's
 * start), the workers' idle shares (before their first task, between
 * tasks, after their last), how many tasks the real pool finished
 * (tsr_pool_run, sampled from its progress reports: a lower bound), and
 * the real pool once more with a checkpoint every 0.25 s: how long parking
 * takes, the frontier's size and the CPU each checkpoint costs.
 *
 * The library's pool does not report single tasks, so the runs measured
 * here are on a copy of its policy made of the public API (tessera/engine.h:
 * a tsr_runner per worker, split_wanted and donate): a mutex-guarded deque
 * per worker, owners take the newest task, thieves the oldest, and a running
 * search gives away the siblings of its shallowest level whenever a worker
 * is idle and its own deque is empty (src/pool/pool.c, w_split_wanted).
 * Statistics of all tasks add up to those of the single-threaded run, which
 * the program checks.  Per-task CPU comes from the thread's CPU clock, so it
 * holds on a machine with fewer cores than threads.  Built by
 * `make bench-scaling` (not installed).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tessera/tessera.h"

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}
static double now(void) { return clock_s(CLOCK_MONOTONIC); }
static double thread_cpu(void) { return clock_s(CLOCK_THREAD_CPUTIME_ID); }
static double process_cpu(void) { return clock_s(CLOCK_PROCESS_CPUTIME_ID); }

/* ---- one finished task ---- */

typedef struct record {
    uint64_t nodes;
    double cpu;        /* thread CPU seconds */
    int donations;
} record;

typedef struct task {
    int n;
    int *images;
} task;

typedef struct deque {
    pthread_mutex_t mu;
    task *items;
    int head, tail, cap;
} deque;

typedef struct mpool mpool;

typedef struct worker {
    mpool *pl;
    int id;
    pthread_t thread;
    deque dq;
    int donations;       /* of the task in progress */
    int burst;           /* the split its last donation belonged to (1: the first) */
    double last_donate;  /* thread CPU at its last donation */
    double task_cpu0;    /* thread CPU at the start of the task in progress */
    record *recs;
    int nrecs, caprecs;
    /* wall seconds without a task before the first and between tasks, and
     * when the last ended (the rest of the run is its tail) */
    double idle_ramp, idle_mid, last_end;
    double runner_cpu;   /* tsr_runner_new */
    bool started;
} worker;

struct mpool {
    const tsr_solver *s;
    int nworkers;
    worker *w;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int pending;
    atomic_int idle;
    int splits;           /* split events, under mu (donate calls come in bursts) */
    atomic_ullong solutions;
    double t0;
    /* the first split: the donor's CPU in its task until then, and how many
     * tasks it gave (under mu) */
    double first_split_cpu;
    int first_split_tasks;
    atomic_int oom;       /* any worker ran out of memory */
};

static bool push(deque *q, const int *images, int n)
{
    int *copy = malloc((size_t)(n > 0 ? n : 1) * sizeof *copy);
    if (copy == NULL)
        return false;
    if (n > 0)
        memcpy(copy, images, (size_t)n * sizeof *copy);
    pthread_mutex_lock(&q->mu);
    if (q->tail == q->cap) {
        int live = q->tail - q->head;
        memmove(q->items, q->items + q->head, (size_t)live * sizeof *q->items);
        q->head = 0;
        q->tail = live;
        if (live == q->cap) {
            int cap = q->cap ? 2 * q->cap : 64;
            task *p = realloc(q->items, (size_t)cap * sizeof *p);
            if (p == NULL) {
                pthread_mutex_unlock(&q->mu);
                free(copy);
                return false;
            }
            q->items = p;
            q->cap = cap;
        }
    }
    q->items[q->tail++] = (task){n, copy};
    pthread_mutex_unlock(&q->mu);
    return true;
}

static bool take(deque *q, bool newest, task *out)
{
    pthread_mutex_lock(&q->mu);
    bool got = q->head < q->tail;
    if (got)
        *out = newest ? q->items[--q->tail] : q->items[q->head++];
    pthread_mutex_unlock(&q->mu);
    return got;
}

static bool empty(deque *q)
{
    pthread_mutex_lock(&q->mu);
    bool e = q->head == q->tail;
    pthread_mutex_unlock(&q->mu);
    return e;
}

/* ---- the callbacks, as the pool's ---- */

static int w_found(void *ctx, const int *images, int n, int count)
{
    worker *w = ctx;
    (void)images, (void)n;
    atomic_fetch_add(&w->pl->solutions, (unsigned long long)count);
    return 0;
}

/* The pool's workers report progress every 50 ms; kept so that ticks cost
 * what they cost there. */
static int w_progress(void *ctx, const tsr_stats *st)
{
    (void)ctx, (void)st;
    return 0;
}

static int w_split_wanted(void *ctx)
{
    worker *w = ctx;
    return atomic_load(&w->pl->idle) > 0 && empty(&w->dq) ? TSR_SPLIT_ONE : TSR_SPLIT_NONE;
}

/* A split gives its siblings in one burst of donate calls, microseconds of
 * the donor's CPU apart; ticks are about a millisecond of search apart. */
#define BURST_S 1e-4

static void w_donate(void *ctx, const int *images, int n, double weight)
{
    worker *w = ctx;
    mpool *pl = w->pl;
    (void)weight;
    bool ok = push(&w->dq, images, n);
    double t = thread_cpu();
    w->donations++;
    pthread_mutex_lock(&pl->mu);
    if (t - w->last_donate > BURST_S)
        w->burst = ++pl->splits;
    w->last_donate = t;
    if (w->burst == 1) { /* the first split of the run */
        if (pl->first_split_tasks++ == 0)
            pl->first_split_cpu = t - w->task_cpu0;
    }
    if (ok)
        pl->pending++;
    else
        pl->oom = 1;
    pthread_cond_broadcast(&pl->cv);
    pthread_mutex_unlock(&pl->mu);
}

static bool find(worker *w, task *t)
{
    mpool *pl = w->pl;
    if (take(&w->dq, true, t))
        return true;
    for (int k = 1; k < pl->nworkers; k++)
        if (take(&pl->w[(w->id + k) % pl->nworkers].dq, false, t))
            return true;
    return false;
}

static void keep(worker *w, const record *r)
{
    if (w->nrecs == w->caprecs) {
        int cap = w->caprecs ? 2 * w->caprecs : 256;
        record *p = realloc(w->recs, (size_t)cap * sizeof *p);
        if (p == NULL) {
            w->pl->oom = 1;
            return;
        }
        w->recs = p;
        w->caprecs = cap;
    }
    w->recs[w->nrecs++] = *r;
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    mpool *pl = w->pl;
    tsr_callbacks cb = {.ctx = w, .found = w_found, .progress = w_progress,
                        .progress_seconds = 0.05, .split_wanted = w_split_wanted,
                        .donate = w_donate};
    tsr_runner *rn = NULL;
    double c0 = thread_cpu();
    if (tsr_runner_new(pl->s, &rn) != 0)
        pl->oom = 1;
    w->runner_cpu = thread_cpu() - c0;
    for (;;) {
        task t;
        bool got = false;
        double wait0 = now();
        pthread_mutex_lock(&pl->mu);
        while (pl->pending > 0 && !(got = find(w, &t))) {
            atomic_fetch_add(&pl->idle, 1);
            pthread_cond_wait(&pl->cv, &pl->mu);
            atomic_fetch_sub(&pl->idle, 1);
        }
        pthread_mutex_unlock(&pl->mu);
        double waited = now() - wait0;
        if (!got) {
            w->last_end = wait0;
            break;
        }
        if (w->started)
            w->idle_mid += waited;
        else
            w->idle_ramp = now() - pl->t0, w->started = true;
        record r = {0};
        w->donations = 0;
        w->task_cpu0 = thread_cpu();
        tsr_stats st = {0};
        if (rn == NULL || tsr_runner_run(rn, t.images, t.n, &cb, &st) != 0)
            pl->oom = 1;
        r.cpu = thread_cpu() - w->task_cpu0;
        r.nodes = st.nodes;
        r.donations = w->donations;
        tsr_stats_free(&st);
        free(t.images);
        keep(w, &r);
        pthread_mutex_lock(&pl->mu);
        if (--pl->pending == 0)
            pthread_cond_broadcast(&pl->cv);
        pthread_mutex_unlock(&pl->mu);
    }
    if (!w->started) /* never had a task: idle all along */
        w->last_end = pl->t0;
    tsr_runner_free(rn);
    pthread_mutex_lock(&pl->mu);
    pthread_cond_broadcast(&pl->cv);
    pthread_mutex_unlock(&pl->mu);
    return NULL;
}

/* ---- the real pool's task count, from its progress reports ---- */

static int count_tasks(void *ctx, const tsr_stats *st)
{
    uint64_t *max = ctx, n = 0;
    for (int w = 0; w < st->nworkers; w++)
        n += st->workers[w].tasks;
    if (n > *max)
        *max = n;
    return 0;
}

/* ---- checkpoints on the real pool: how long parking takes ---- */

#define CKPT_EVERY_S 0.25
#define MAX_CKPT 4096

typedef struct ckpts {
    double next, asked;
    int n;
    double latency[MAX_CKPT]; /* from the request to the hook, wall */
    int frontier[MAX_CKPT];
} ckpts;

static int ck_wanted(void *ctx)
{
    ckpts *c = ctx;
    double t = now();
    if (c->asked > 0 || t < c->next)
        return 0;
    c->asked = t;
    return 1;
}

static int ck_hook(void *ctx, const tsr_task *tasks, int ntasks, const tsr_stats *st)
{
    ckpts *c = ctx;
    (void)tasks, (void)st;
    double t = now();
    if (c->n < MAX_CKPT && c->asked > 0) {
        c->latency[c->n] = t - c->asked;
        c->frontier[c->n++] = ntasks;
    }
    c->asked = 0;
    c->next = t + CKPT_EVERY_S;
    return 0;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static double latest_end(const mpool *pl)
{
    double t = 0;
    for (int k = 0; k < pl->nworkers; k++)
        if (pl->w[k].last_end > t)
            t = pl->w[k].last_end;
    return t;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double q_dbl(const double *v, int n, double q) { return v[(int)(q * (n - 1) + 0.5)]; }
static uint64_t q_u64(const uint64_t *v, int n, double q) { return v[(int)(q * (n - 1) + 0.5)]; }

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: tasks PUZZLE THREADS [RUNS]\n");
        return 2;
    }
    int threads = atoi(argv[2]), runs = argc > 3 ? atoi(argv[3]) : 1;
    if (threads < 1 || threads > 1024 || runs < 1)
        return 2;
    tsr_puzzle *pz = NULL;
    tsr_options opt;
    tsr_err err = {{0}};
    tsr_options_init(&opt);
    double l0 = now(), lc0 = process_cpu();
    if (tsr_puzzle_load_file(argv[1], &pz, &opt, &err) != 0) {
        fprintf(stderr, "tasks: %s\n", err.msg);
        return 2;
    }
    double load_wall = now() - l0, load_cpu = process_cpu() - lc0;
    const char *name = pz->name ? pz->name : argv[1];
    /* the preparation, on one thread and on `threads` (the constrained
     * piece's estimates share out): the serial part of every run */
    tsr_solver *s = NULL;
    printf("%s: load %.4f s wall %.4f s CPU\n", name, load_wall, load_cpu);
    for (int pass = 0; pass < 2; pass++) {
        tsr_options o = opt;
        o.threads = pass == 0 ? 1 : threads;
        tsr_solver_free(s);
        s = NULL;
        double p0 = now(), c0 = process_cpu(), m0 = thread_cpu();
        if (tsr_solver_new(pz, &o, &s, &err) != 0) {
            fprintf(stderr, "tasks: %s\n", err.msg);
            return 2;
        }
        /* the calling thread's CPU: on enough threads each helper takes one
         * of the constrained piece's candidates, so this is about the
         * preparation's critical path on a machine with that many cores */
        printf("%s: preparation on %d thread%s: %.4f s wall %.4f s CPU, %.4f s on the "
               "calling thread\n", name, o.threads, o.threads > 1 ? "s" : "", now() - p0,
               process_cpu() - c0, thread_cpu() - m0);
    }
    /* the reference: one plain run */
    tsr_callbacks cb1 = {0};
    tsr_stats ref;
    double r0 = thread_cpu();
    if (tsr_solver_run(s, NULL, 0, &cb1, &ref) != 0)
        return 1;
    double ref_cpu = thread_cpu() - r0;
    printf("%s: one thread: %llu nodes, %.3f s CPU (plain run)\n", name,
           (unsigned long long)ref.nodes, ref_cpu);

    printf("%7s %4s %8s %7s %10s %7s %9s %9s %9s %9s %9s %9s %8s %8s %8s %7s\n", "threads", "run",
           "wall s", "tasks", "real pool", "splits", "1st split", "1st tasks", "nodes p50",
           "p90", "p99", "max", "wmedian", "cpu p50", "cpu max", "<1ms");
    for (int run = 0; run < runs; run++) {
        mpool pl = {.s = s, .nworkers = threads, .pending = 1};
        pthread_mutex_init(&pl.mu, NULL);
        pthread_cond_init(&pl.cv, NULL);
        pl.w = calloc((size_t)threads, sizeof *pl.w);
        if (pl.w == NULL)
            return 1;
        for (int k = 0; k < threads; k++) {
            pl.w[k] = (worker){.pl = &pl, .id = k};
            pthread_mutex_init(&pl.w[k].dq.mu, NULL);
        }
        push(&pl.w[0].dq, NULL, 0);
        pl.t0 = now();
        for (int k = 0; k < threads; k++)
            pthread_create(&pl.w[k].thread, NULL, worker_main, &pl.w[k]);
        for (int k = 0; k < threads; k++)
            pthread_join(pl.w[k].thread, NULL);
        double t1 = now(), wall = t1 - pl.t0;
        double ramp = 0, mid = 0, tail = 0;
        for (int k = 0; k < threads; k++) {
            ramp += pl.w[k].idle_ramp;
            mid += pl.w[k].idle_mid;
            tail += t1 - pl.w[k].last_end; /* from its last task's end to the pool's */
        }
        if (pl.oom) {
            fprintf(stderr, "tasks: out of memory\n");
            return 1;
        }
        int n = 0, donors = 0;
        for (int k = 0; k < threads; k++)
            n += pl.w[k].nrecs;
        uint64_t *nodes = malloc((size_t)n * sizeof *nodes), total = 0;
        double *cpu = malloc((size_t)n * sizeof *cpu);
        if (nodes == NULL || cpu == NULL)
            return 1;
        int i = 0, tiny = 0, nsmall = 0;
        double sum_cpu = 0, *small = malloc((size_t)n * sizeof *small);
        if (small == NULL)
            return 1;
        uint64_t hist[12] = {0}, hnodes[12] = {0};
        for (int k = 0; k < threads; k++)
            for (int j = 0; j < pl.w[k].nrecs; j++, i++) {
                record *r = &pl.w[k].recs[j];
                nodes[i] = r->nodes;
                cpu[i] = r->cpu;
                total += r->nodes;
                donors += r->donations > 0;
                tiny += r->cpu < 1e-3;
                sum_cpu += r->cpu;
                if (r->nodes < 100) /* next to nothing searched: the task's fixed cost */
                    small[nsmall++] = r->cpu;
                int d = r->nodes > 0 ? (int)log10((double)r->nodes) : 0;
                d = d > 11 ? 11 : d;
                hist[d]++;
                hnodes[d] += r->nodes;
            }
        if (total != ref.nodes) {
            fprintf(stderr, "tasks: %llu nodes on the pool, %llu on one thread\n",
                    (unsigned long long)total, (unsigned long long)ref.nodes);
            return 1;
        }
        qsort(nodes, (size_t)n, sizeof *nodes, cmp_u64);
        qsort(cpu, (size_t)n, sizeof *cpu, cmp_dbl);
        /* the node-weighted median: half the nodes are in tasks this big
         * or bigger */
        uint64_t acc = 0, wmed = 0;
        for (int j = n - 1; j >= 0 && acc * 2 < total; j--)
            acc += nodes[j], wmed = nodes[j];
        /* the real pool, same thread count, for its task count */
        uint64_t real = 0;
        tsr_callbacks cb = {.ctx = &real, .progress = count_tasks, .progress_seconds = 0.001};
        tsr_stats st;
        double pc0 = process_cpu();
        if (tsr_pool_run(s, threads, NULL, 0, &cb, &st) != 0 || st.nodes != ref.nodes)
            return 1;
        double real_cpu = process_cpu() - pc0;
        tsr_stats_free(&st);
        /* and once more with a checkpoint every CKPT_EVERY_S: the park's
         * latency, and the CPU the re-started tasks cost */
        static ckpts ck;
        memset(&ck, 0, sizeof ck);
        ck.next = now() + CKPT_EVERY_S;
        tsr_task root = {0, NULL, 1.0};
        tsr_pool_hooks hk = {.ctx = &ck, .checkpoint_wanted = ck_wanted, .checkpoint = ck_hook};
        tsr_callbacks none = {0};
        pc0 = process_cpu();
        if (tsr_pool_search(s, threads, &root, 1, &none, &hk, &st) != 0 || st.nodes != ref.nodes)
            return 1;
        double ck_cpu = process_cpu() - pc0;
        tsr_stats_free(&st);
        char realtxt[24] = "-"; /* none when the pool ended before its first report */
        if (real > 0)
            snprintf(realtxt, sizeof realtxt, "%llu", (unsigned long long)real);
        printf("%7d %4d %8.3f %7d %10s %7d %7.2fms %9d %9llu %9llu %9llu %9llu %8llu %6.2fms "
               "%6.0fms %6.1f%%\n",
               threads, run + 1, wall, n, realtxt, pl.splits,
               pl.first_split_cpu * 1e3, pl.first_split_tasks,
               (unsigned long long)q_u64(nodes, n, 0.5), (unsigned long long)q_u64(nodes, n, 0.9),
               (unsigned long long)q_u64(nodes, n, 0.99), (unsigned long long)nodes[n - 1],
               (unsigned long long)wmed, q_dbl(cpu, n, 0.5) * 1e3, cpu[n - 1] * 1e3,
               100.0 * tiny / n);
        printf("        %d tasks gave work away; tasks by nodes (decade: count, share of nodes):", donors);
        for (int d = 0; d < 12; d++)
            if (hist[d] > 0)
                printf(" 1e%d:%llu,%.1f%%", d, (unsigned long long)hist[d],
                       100.0 * (double)hnodes[d] / (double)total);
        printf("\n");
        /* where the extra CPU goes: slower nodes (caches shared with more
         * threads, here oversubscribed) or each task's start (replaying its
         * path, FILA's lists when the handoff state changed, the runner) */
        qsort(small, (size_t)nsmall, sizeof *small, cmp_dbl);
        double fixed = nsmall > 0 ? small[nsmall / 2] : 0;
        printf("        tasks' CPU %.3f s (one thread %.3f s): %.1f ns a node against %.1f; "
               "fixed cost a task %.3f ms (median of %d tasks of <100 nodes), x %d tasks = "
               "%.3f s\n",
               sum_cpu, ref_cpu, 1e9 * (sum_cpu - fixed * n) / (double)total,
               1e9 * ref_cpu / (double)total, 1e3 * fixed, nsmall, n, fixed * n);
        free(small);
        /* each worker's own start: its runner, and its first task's CPU
         * beyond what its nodes cost on one thread (its matrix and FILA
         * lists built the first time) */
        double runner = 0, first = 0;
        int nfirst = 0;
        for (int k = 0; k < threads; k++) {
            runner += pl.w[k].runner_cpu;
            if (pl.w[k].nrecs > 0) {
                first += pl.w[k].recs[0].cpu - ref_cpu * (double)pl.w[k].recs[0].nodes /
                                                    (double)total;
                nfirst++;
            }
        }
        printf("        a worker's start: runner %.3f ms, its first task %.3f ms more than "
               "its nodes on one thread (mean of %d)\n",
               1e3 * runner / threads, nfirst > 0 ? 1e3 * first / nfirst : 0, nfirst);
        printf("        idle, share of %d x %.3f s: ramp %.2f%%, between tasks %.2f%%, "
               "tail %.2f%% (the last worker's last task ended %.1f ms before the pool)\n",
               threads, wall, 100 * ramp / (threads * wall), 100 * mid / (threads * wall),
               100 * tail / (threads * wall), 1e3 * (t1 - latest_end(&pl)));
        if (ck.n > 0) {
            qsort(ck.latency, (size_t)ck.n, sizeof *ck.latency, cmp_dbl);
            qsort(ck.frontier, ck.n, sizeof *ck.frontier, cmp_int);
            printf("        real pool: %.3f s CPU; with a checkpoint every %.2f s: %d "
                   "checkpoints, park %.1f ms median (%.1f max), frontier %d tasks median, "
                   "%.3f s CPU (%+.2f ms per checkpoint)\n",
                   real_cpu, CKPT_EVERY_S, ck.n, 1e3 * ck.latency[ck.n / 2],
                   1e3 * ck.latency[ck.n - 1], ck.frontier[ck.n / 2], ck_cpu,
                   1e3 * (ck_cpu - real_cpu) / ck.n);
        }
        if (atomic_load(&pl.solutions) != ref.solutions)
            fprintf(stderr, "tasks: %llu solutions on the pool, %llu on one thread\n",
                    (unsigned long long)atomic_load(&pl.solutions),
                    (unsigned long long)ref.solutions);
        free(nodes);
        free(cpu);
        for (int k = 0; k < threads; k++) {
            free(pl.w[k].recs);
            free(pl.w[k].dq.items);
            pthread_mutex_destroy(&pl.w[k].dq.mu);
        }
        free(pl.w);
        pthread_mutex_destroy(&pl.mu);
        pthread_cond_destroy(&pl.cv);
    }
    tsr_stats_free(&ref);
    tsr_solver_free(s);
    tsr_puzzle_free(pz);
    return 0;
}
