/*
 * pool.c - work-stealing search on several threads (see tessera/pool.h).
 *
 * Each worker owns a deque of tasks guarded by a mutex: tasks are whole
 * subtrees (microseconds to hours of work), so a lock per deque costs
 * nothing measurable and keeps ThreadSanitizer exact.  The owner pushes and
 * pops at the tail (newest, deepest), thieves take from the head (oldest,
 * shallowest, usually largest).
 *
 * Termination: `pending` counts tasks queued or being searched.  It starts
 * at 1 (the root task), a donation adds one per task, and a finished search
 * removes one; when it reaches 0 nothing is left anywhere and every worker
 * leaves.  A worker with nothing to do waits on the pool's condition
 * variable, which is signalled whenever a task is queued or pending drops
 * to 0.
 *
 * Progress: each worker publishes the fraction and counts of the search it
 * is running (from the run's own progress callback); finished searches are
 * added to the pool's totals.  The calling thread reports their sum.
 *
 * Checkpoints: the calling thread sets `park`.  A running search then gives
 * every untried sibling on its path away (TSR_SPLIT_ALL) and soon ends; a
 * worker that sees `park` takes no task and waits, counted in `parked`.
 * Taking a task and checking `park` both happen under the pool mutex, so once
 * parked == nworkers no worker holds a task: the deques hold exactly the
 * work left, and every solution of the work done has been reported.
 */
#include <assert.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/base.h"
#include "tessera/pool.h"

typedef struct task {
    int n;
    int *images;
    double weight;
} task;

typedef struct deque {
    pthread_mutex_t mu;
    task *items;
    int head, tail, cap; /* items[head .. tail) */
} deque;

typedef struct pool pool;

typedef struct worker {
    pool *pl;
    int id;
    pthread_t thread;
    deque dq;
    /* the search in progress, published for the progress report */
    pthread_mutex_t mu;
    double fraction;
    uint64_t nodes, solutions;
    tsr_worker_stats doing;  /* what progress reports show of this worker */
    uint64_t *attempts, *fits; /* per level, of the search in progress */
    /* solutions passed on without out_mu (only the owner writes): a cache
     * line of its own, since thieves lock the next worker's deque (and
     * sharing a line with it cost 6% on the dominoes' flood) */
    _Alignas(64) atomic_uint_fast64_t reported;
} worker;

struct pool {
    const tsr_solver *s;
    const tsr_callbacks *user;
    const tsr_pool_hooks *hk; /* NULL for tsr_pool_run */
    int nworkers;
    worker *w;
    /* mu guards pending, parked and the taking of tasks; cv is signalled
     * when a task is queued, pending drops to 0, a worker parks or the
     * park ends */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int pending;
    int parked;
    atomic_int park;
    atomic_int idle;         /* workers waiting for work */
    atomic_int stop;
    int err;
    /* totals of finished searches, and the serialized solution output */
    pthread_mutex_t out_mu;
    tsr_stats total;
    uint64_t *snap_attempts, *snap_fits; /* copies for the calling thread's reports */
    tsr_worker_stats *snap_workers;
    uint64_t reported;
    long long limit;
    /* the caller only counts, with no limit: the workers pass nothing on,
     * and each task's solutions join `reported` when it ends */
    bool counted;
};

int tsr_cpu_count(void) { return base_cpu_count(); }

static int deque_push(deque *q, const int *images, int n, double weight)
{
    int *copy = malloc((size_t)(n > 0 ? n : 1) * sizeof *copy);
    if (copy == NULL)
        return TSR_ENOMEM;
    if (n > 0) /* the root task has no images (and may come as NULL) */
        memcpy(copy, images, (size_t)n * sizeof *copy);
    pthread_mutex_lock(&q->mu);
    if (q->tail == q->cap) { /* compact, then grow */
        int live = q->tail - q->head;
        if (q->head > 0)
            memmove(q->items, q->items + q->head, (size_t)live * sizeof *q->items);
        q->head = 0;
        q->tail = live;
        size_t cap = (size_t)q->cap; /* grows only if compacting freed nothing */
        if (base_grow((void **)&q->items, &cap, (size_t)live, sizeof *q->items, 64, INT_MAX) != 0) {
            pthread_mutex_unlock(&q->mu);
            free(copy);
            return TSR_ENOMEM;
        }
        q->cap = (int)cap;
    }
    q->items[q->tail++] = (task){n, copy, weight};
    pthread_mutex_unlock(&q->mu);
    return 0;
}

/* Newest task (owner) or oldest (thief); false when empty. */
static bool deque_take(deque *q, bool newest, task *out)
{
    pthread_mutex_lock(&q->mu);
    bool got = q->head < q->tail;
    if (got)
        *out = newest ? q->items[--q->tail] : q->items[q->head++];
    pthread_mutex_unlock(&q->mu);
    return got;
}

static bool deque_empty(deque *q)
{
    pthread_mutex_lock(&q->mu);
    bool empty = q->head == q->tail;
    pthread_mutex_unlock(&q->mu);
    return empty;
}

/* ---- the callbacks a worker's search runs with ---- */

/* Pass a solution (sol) or a class of `count` solutions (images) on to the
 * caller, one worker at a time, the count cut so that the total never
 * passes the limit (classes with no limit, to a caller that allows it:
 * from each worker at once).  Nonzero: stop the search. */
static int pass_on(worker *w, const tsr_solution *sol, const int *images, int n, int count)
{
    pool *pl = w->pl;
    int stop = 0;
    if (sol == NULL && pl->limit <= 0 && pl->user->found_concurrent) {
        /* nothing to cut, and a caller that takes concurrent calls */
        atomic_store_explicit(&w->reported,
                              atomic_load_explicit(&w->reported, memory_order_relaxed) +
                                  (uint64_t)count,
                              memory_order_relaxed);
        if (pl->user->found != NULL && pl->user->found(pl->user->ctx, images, n, count) != 0) {
            atomic_store(&pl->stop, 1);
            return 1;
        }
        return 0;
    }
    pthread_mutex_lock(&pl->out_mu);
    if (pl->limit > 0 && pl->reported >= (uint64_t)pl->limit) {
        stop = 1;
    } else {
        if (pl->limit > 0 && pl->reported + (uint64_t)count > (uint64_t)pl->limit)
            count = (int)((uint64_t)pl->limit - pl->reported);
        pl->reported += (uint64_t)count;
        if (sol != NULL)
            stop = pl->user && pl->user->solution && pl->user->solution(pl->user->ctx, sol);
        else
            stop = pl->user->found != NULL &&
                   pl->user->found(pl->user->ctx, images, n, count) != 0;
        if (pl->limit > 0 && pl->reported >= (uint64_t)pl->limit)
            stop = 1;
    }
    pthread_mutex_unlock(&pl->out_mu);
    if (stop)
        atomic_store(&pl->stop, 1);
    return stop;
}

static int w_solution(void *ctx, const tsr_solution *sol) { return pass_on(ctx, sol, NULL, 0, 1); }

static int w_found(void *ctx, const int *images, int n, int count)
{
    return pass_on(ctx, NULL, images, n, count);
}

static int w_progress(void *ctx, const tsr_stats *st)
{
    worker *w = ctx;
    int levels = w->pl->total.levels < st->levels ? w->pl->total.levels : st->levels;
    pthread_mutex_lock(&w->mu);
    w->fraction = st->fraction;
    w->nodes = st->nodes;
    w->solutions = st->solutions;
    memcpy(w->attempts, st->attempts, (size_t)levels * sizeof *w->attempts);
    memcpy(w->fits, st->fits, (size_t)levels * sizeof *w->fits);
    pthread_mutex_unlock(&w->mu);
    return atomic_load(&w->pl->stop);
}

static int w_split_wanted(void *ctx)
{
    worker *w = ctx;
    if (atomic_load(&w->pl->park))
        return TSR_SPLIT_ALL;
    return atomic_load(&w->pl->idle) > 0 && deque_empty(&w->dq) ? TSR_SPLIT_ONE : TSR_SPLIT_NONE;
}

/* Queue a task given away by this worker's search.  The broadcast happens
 * under the pool mutex after the push, so a worker that found every deque
 * empty under that mutex is already waiting when it comes.  pending cannot
 * reach 0 in between: the giving search is still pending itself. */
static void w_donate(void *ctx, const int *images, int n, double weight)
{
    worker *w = ctx;
    pool *pl = w->pl;
    int rc = deque_push(&w->dq, images, n, weight);
    pthread_mutex_lock(&pl->mu);
    if (rc == 0)
        pl->pending++;
    else
        pl->err = rc;
    if (!atomic_load(&pl->park) || rc != 0) /* parked workers would only wait again */
        pthread_cond_broadcast(&pl->cv);
    pthread_mutex_unlock(&pl->mu);
    if (rc != 0)
        atomic_store(&pl->stop, 1);
}

/* Add a finished search's statistics to the totals and clear what the
 * worker published of it, in one step under out_mu, so that a snapshot
 * (which reads both under out_mu) never counts the search twice or not at
 * all: progress reports only grow. */
static void merge(worker *w, const tsr_stats *st)
{
    pool *pl = w->pl;
    pthread_mutex_lock(&pl->out_mu);
    for (int p = 0; st != NULL && p < st->levels && p < pl->total.levels; p++) {
        pl->total.attempts[p] += st->attempts[p];
        pl->total.fits[p] += st->fits[p];
    }
    if (st != NULL) {
        if (pl->counted)
            pl->reported += st->solutions;
        pl->total.nodes += st->nodes;
        pl->total.classes += st->classes;
        pl->total.digest += st->digest;
        pl->total.fraction += st->fraction;
    }
    pthread_mutex_lock(&w->mu);
    w->fraction = 0;
    w->nodes = w->solutions = 0;
    memset(w->attempts, 0, (size_t)pl->total.levels * sizeof *w->attempts);
    memset(w->fits, 0, (size_t)pl->total.levels * sizeof *w->fits);
    w->doing.tasks++;
    pthread_mutex_unlock(&w->mu);
    pthread_mutex_unlock(&pl->out_mu);
}

static bool find_task(worker *w, task *t)
{
    pool *pl = w->pl;
    if (deque_take(&w->dq, true, t))
        return true;
    for (int k = 1; k < pl->nworkers; k++)
        if (deque_take(&pl->w[(w->id + k) % pl->nworkers].dq, false, t))
            return true;
    return false;
}

static void set_doing(worker *w, enum tsr_worker_state state, int depth)
{
    pthread_mutex_lock(&w->mu);
    w->doing.state = state;
    w->doing.depth = depth;
    pthread_mutex_unlock(&w->mu);
}

/* Under pl->mu: the next task for w, waiting while the pool is parked or
 * nothing is queued; false when the pool is done or stopped. */
static bool next_task(worker *w, task *t)
{
    pool *pl = w->pl;
    for (;;) {
        if (pl->pending == 0 || atomic_load(&pl->stop))
            return false;
        if (atomic_load(&pl->park)) {
            set_doing(w, TSR_WORKER_PARKED, 0);
            pl->parked++;
            pthread_cond_broadcast(&pl->cv); /* the calling thread counts us */
            while (atomic_load(&pl->park) && !atomic_load(&pl->stop))
                pthread_cond_wait(&pl->cv, &pl->mu);
            pl->parked--;
            continue;
        }
        if (find_task(w, t)) {
            set_doing(w, TSR_WORKER_SEARCHING, t->n);
            return true;
        }
        set_doing(w, TSR_WORKER_IDLE, 0);
        atomic_fetch_add(&pl->idle, 1);
        pthread_cond_wait(&pl->cv, &pl->mu);
        atomic_fetch_sub(&pl->idle, 1);
    }
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    pool *pl = w->pl;
    tsr_callbacks cb = {.ctx = w, .solution = w_solution, .progress = w_progress,
                        .progress_seconds = 0.05, .split_wanted = w_split_wanted,
                        .donate = w_donate};
    if (pl->counted) {
        cb.counts_only = true; /* solutions summed as the tasks end */
    } else if (pl->user && (pl->user->found || pl->user->counts_only)) {
        cb.found = w_found; /* classes, passed on as they come (up to the limit) */
        cb.found_any_order = pl->user->found_any_order || pl->user->counts_only;
    }
    /* one runner for all of this worker's tasks: a task replayed to below
     * the handoff where the last one started reuses its FILA lists */
    tsr_runner *rn = NULL;
    for (;;) {
        task t;
        pthread_mutex_lock(&pl->mu);
        bool got = next_task(w, &t);
        pthread_mutex_unlock(&pl->mu);
        if (!got)
            break;
        tsr_stats st = {0}; /* stays empty when the pool stopped first */
        int rc = 0;
        if (!atomic_load(&pl->stop) && rn == NULL)
            rc = tsr_runner_new(pl->s, &rn);
        if (rc == 0 && !atomic_load(&pl->stop))
            rc = tsr_runner_run(rn, t.images, t.n, &cb, &st);
        bool ran = rc == 0 && st.attempts != NULL;
        /* before this task stops being pending: a checkpoint, which waits
         * for that, then sees every task_done of the work it commits */
        if (ran && pl->hk != NULL && pl->hk->task_done != NULL)
            pl->hk->task_done(pl->hk->ctx, t.images, t.n, &st);
        free(t.images);
        merge(w, ran ? &st : NULL);
        tsr_stats_free(&st); /* a refused task's arrays too */
        pthread_mutex_lock(&pl->mu);
        if (rc != 0 && pl->err == 0)
            pl->err = rc;
        assert(pl->pending > 0); /* this task was pending */
        if (--pl->pending == 0 || rc != 0)
            pthread_cond_broadcast(&pl->cv);
        pthread_mutex_unlock(&pl->mu);
        if (rc != 0)
            atomic_store(&pl->stop, 1);
    }
    tsr_runner_free(rn);
    /* wake the others: they may be waiting for work that will never come */
    pthread_mutex_lock(&pl->mu);
    pthread_cond_broadcast(&pl->cv);
    pthread_mutex_unlock(&pl->mu);
    return NULL;
}

/* The statistics of finished searches plus those in progress. */
static void snapshot(pool *pl, tsr_stats *st)
{
    pthread_mutex_lock(&pl->out_mu);
    *st = pl->total;
    /* workers add to the totals' arrays: report copies */
    memcpy(pl->snap_attempts, pl->total.attempts, (size_t)pl->total.levels * sizeof(uint64_t));
    memcpy(pl->snap_fits, pl->total.fits, (size_t)pl->total.levels * sizeof(uint64_t));
    st->attempts = pl->snap_attempts;
    st->fits = pl->snap_fits;
    st->solutions = pl->reported;
    for (int k = 0; k < pl->nworkers; k++) {
        st->solutions += atomic_load_explicit(&pl->w[k].reported, memory_order_relaxed);
        pthread_mutex_lock(&pl->w[k].mu);
        st->fraction += pl->w[k].fraction;
        st->nodes += pl->w[k].nodes;
        if (pl->counted) /* the searches in progress: as their last progress said */
            st->solutions += pl->w[k].solutions;
        for (int p = 0; p < pl->total.levels; p++) { /* the searches in progress too */
            pl->snap_attempts[p] += pl->w[k].attempts[p];
            pl->snap_fits[p] += pl->w[k].fits[p];
        }
        pl->snap_workers[k] = pl->w[k].doing;
        pl->snap_workers[k].nodes = pl->w[k].nodes;
        pthread_mutex_unlock(&pl->w[k].mu);
    }
    pthread_mutex_unlock(&pl->out_mu);
    st->nworkers = pl->nworkers;
    st->workers = pl->snap_workers;
    if (st->fraction > 1)
        st->fraction = 1;
}

/* Park every worker, show the queued tasks to hk->checkpoint, unpark.
 * Called with pl->mu held; returns with it held.  Returns the hook's
 * answer (nonzero: end the run). */
static int checkpoint(pool *pl, const tsr_pool_hooks *hk, double t0)
{
    atomic_store(&pl->park, 1);
    while (pl->parked < pl->nworkers && pl->pending > 0 && !atomic_load(&pl->stop))
        pthread_cond_wait(&pl->cv, &pl->mu);
    int end = 0;
    if (pl->pending > 0 && !atomic_load(&pl->stop)) {
        pthread_mutex_unlock(&pl->mu);
        int n = 0;
        for (int k = 0; k < pl->nworkers; k++)
            n += pl->w[k].dq.tail - pl->w[k].dq.head;
        /* every worker parked: nothing is being searched, so every pending
         * task is in a deque (the termination count of the header) */
        assert(n == pl->pending);
        tsr_task *tasks = malloc((size_t)(n > 0 ? n : 1) * sizeof *tasks);
        if (tasks == NULL) {
            end = TSR_ENOMEM;
        } else {
            /* every worker is parked: the deques are still */
            n = 0;
            for (int k = 0; k < pl->nworkers; k++)
                for (int i = pl->w[k].dq.head; i < pl->w[k].dq.tail; i++) {
                    task *t = &pl->w[k].dq.items[i];
                    tasks[n++] = (tsr_task){t->n, t->images, t->weight};
                }
            tsr_stats st;
            snapshot(pl, &st);
            st.seconds = base_now() - t0;
            end = hk->checkpoint(hk->ctx, tasks, n, &st);
            free(tasks);
        }
        pthread_mutex_lock(&pl->mu);
        if (end < 0 && pl->err == 0)
            pl->err = end;
        if (end != 0)
            atomic_store(&pl->stop, 1);
    }
    atomic_store(&pl->park, 0);
    pthread_cond_broadcast(&pl->cv);
    return end;
}

/* How long the watching thread sleeps between looks at progress and
 * checkpoints when nothing wakes it: short against the 0.5 s progress and
 * the daemon's second-scale checkpoints, long against a context switch. */
#define WATCH_NS (20 * 1000 * 1000L)

/* The pool's tables and its workers' (not started): 0 or TSR_ENOMEM, when
 * pool_free must still be called. */
static int pool_init(pool *pl, const tsr_solver *s, int threads, int ntasks,
                     const tsr_callbacks *cb)
{
    *pl = (pool){.s = s, .user = cb, .pending = ntasks, .limit = tsr_solver_options(s)->limit};
    pl->counted = cb != NULL && cb->counts_only && pl->limit <= 0;
    pl->nworkers = threads > 0 ? threads : tsr_cpu_count();
    if (pl->nworkers > 1024)
        pl->nworkers = 1024;
    pl->total.levels = tsr_solver_ncopies(s) + 1;
    size_t levels = (size_t)pl->total.levels, nw = (size_t)pl->nworkers;
    pl->total.attempts = calloc(levels, sizeof *pl->total.attempts);
    pl->total.fits = calloc(levels, sizeof *pl->total.fits);
    pl->snap_attempts = calloc(levels, sizeof *pl->snap_attempts);
    pl->snap_fits = calloc(levels, sizeof *pl->snap_fits);
    /* over-aligned (worker.reported): aligned_alloc, cleared by hand */
    pl->w = aligned_alloc(_Alignof(worker), nw * sizeof *pl->w);
    if (pl->w != NULL)
        memset(pl->w, 0, nw * sizeof *pl->w);
    pl->snap_workers = calloc(nw, sizeof *pl->snap_workers);
    pthread_mutex_init(&pl->mu, NULL);
    pthread_mutex_init(&pl->out_mu, NULL);
    base_cond_init(&pl->cv);
    int rc = pl->total.attempts == NULL || pl->total.fits == NULL || pl->w == NULL ||
                     pl->snap_attempts == NULL || pl->snap_fits == NULL ||
                     pl->snap_workers == NULL
                 ? TSR_ENOMEM
                 : 0;
    for (int k = 0; pl->w != NULL && k < pl->nworkers; k++) {
        pl->w[k] = (worker){.pl = pl, .id = k};
        pl->w[k].attempts = calloc(levels, sizeof(uint64_t));
        pl->w[k].fits = calloc(levels, sizeof(uint64_t));
        if (pl->w[k].attempts == NULL || pl->w[k].fits == NULL)
            rc = TSR_ENOMEM;
        pthread_mutex_init(&pl->w[k].dq.mu, NULL);
        pthread_mutex_init(&pl->w[k].mu, NULL);
    }
    return rc;
}

/* Queue the tasks and start the workers: 0 or TSR_ENOMEM (then the pool
 * is stopped); *started counts the threads to join. */
static int pool_start(pool *pl, const tsr_task *tasks, int ntasks, int *started)
{
    int rc = 0;
    /* contiguous shares, in order: each owner works through its share
     * newest first, as the run that queued them would have */
    for (int i = 0; i < ntasks && rc == 0; i++)
        rc = deque_push(&pl->w[(int)((long long)i * pl->nworkers / ntasks)].dq, tasks[i].images,
                        tasks[i].n, tasks[i].weight);
    for (*started = 0; rc == 0 && *started < pl->nworkers; ++*started)
        if (pthread_create(&pl->w[*started].thread, NULL, worker_main, &pl->w[*started]) != 0)
            break;
    if (rc == 0 && *started < pl->nworkers)
        rc = TSR_ENOMEM;
    if (rc != 0) { /* the workers that started wait for work: wake them to stop */
        pthread_mutex_lock(&pl->mu);
        atomic_store(&pl->stop, 1);
        pthread_cond_broadcast(&pl->cv);
        pthread_mutex_unlock(&pl->mu);
    }
    return rc;
}

/* On the calling thread until everything is done or the pool stops:
 * report progress and take checkpoints. */
static void pool_watch(pool *pl, const tsr_callbacks *cb, const tsr_pool_hooks *hk, double t0)
{
    double every = cb && cb->progress_seconds > 0 ? cb->progress_seconds : 1;
    double next = t0 + every;
    double cp_every = hk && hk->checkpoint && hk->checkpoint_seconds > 0 ? hk->checkpoint_seconds : 0;
    double next_cp = t0 + cp_every;
    long wait_ns = cp_every > 0 && cp_every < WATCH_NS * 1e-9 ? (long)(cp_every * 1e9) : WATCH_NS;
    pthread_mutex_lock(&pl->mu);
    while (pl->pending > 0 && !atomic_load(&pl->stop)) {
        base_cond_timedwait(&pl->cv, &pl->mu, base_now() + wait_ns * 1e-9);
        if (cb && cb->progress && base_now() >= next) {
            pthread_mutex_unlock(&pl->mu);
            tsr_stats snap;
            snapshot(pl, &snap);
            snap.seconds = base_now() - t0;
            if (cb->progress(cb->ctx, &snap))
                atomic_store(&pl->stop, 1);
            next = base_now() + every;
            pthread_mutex_lock(&pl->mu);
        }
        if (hk && hk->checkpoint && pl->pending > 0 && !atomic_load(&pl->stop) &&
            ((cp_every > 0 && base_now() >= next_cp) ||
             (hk->checkpoint_wanted && hk->checkpoint_wanted(hk->ctx)))) {
            checkpoint(pl, hk, t0);
            next_cp = base_now() + cp_every;
        }
    }
    pthread_cond_broadcast(&pl->cv);
    pthread_mutex_unlock(&pl->mu);
}

/* Join the `started` workers, drop what was left queued after a stop, and
 * free the pool; *st gets the totals. */
static void pool_end(pool *pl, int started, double t0, tsr_stats *st)
{
    for (int k = 0; k < started; k++)
        pthread_join(pl->w[k].thread, NULL);
    for (int k = 0; pl->w != NULL && k < pl->nworkers; k++) {
        task t;
        while (deque_take(&pl->w[k].dq, true, &t))
            free(t.images);
        free(pl->w[k].dq.items);
        free(pl->w[k].attempts);
        free(pl->w[k].fits);
        pthread_mutex_destroy(&pl->w[k].dq.mu);
        pthread_mutex_destroy(&pl->w[k].mu);
    }
    *st = pl->total;
    st->solutions = pl->reported;
    for (int k = 0; pl->w != NULL && k < pl->nworkers; k++)
        st->solutions += atomic_load_explicit(&pl->w[k].reported, memory_order_relaxed);
    st->seconds = base_now() - t0;
    st->stopped = atomic_load(&pl->stop) != 0;
    st->nworkers = 0;
    st->workers = NULL;
    pthread_mutex_destroy(&pl->mu);
    pthread_mutex_destroy(&pl->out_mu);
    pthread_cond_destroy(&pl->cv);
    free(pl->snap_attempts);
    free(pl->snap_fits);
    free(pl->snap_workers);
    free(pl->w);
}

int tsr_pool_search(const tsr_solver *s, int threads, const tsr_task *tasks, int ntasks,
                    const tsr_callbacks *cb, const tsr_pool_hooks *hk, tsr_stats *st)
{
    memset(st, 0, sizeof *st);
    pool pl;
    int started = 0;
    double t0 = base_now();
    int rc = pool_init(&pl, s, threads, ntasks, cb);
    pl.hk = hk;
    if (rc == 0)
        rc = pool_start(&pl, tasks, ntasks, &started);
    if (rc == 0)
        pool_watch(&pl, cb, hk, t0);
    pool_end(&pl, started, t0, st);
    if (rc != 0) { /* nothing ran: no statistics to keep */
        tsr_stats_free(st);
        memset(st, 0, sizeof *st);
    }
    return rc != 0 ? rc : pl.err;
}

int tsr_pool_run(const tsr_solver *s, int threads, const int *start, int nstart,
                 const tsr_callbacks *cb, tsr_stats *st)
{
    tsr_task root = {nstart, (int *)start, 1.0};
    int rc = tsr_pool_search(s, threads, &root, 1, cb, NULL, st);
    if (rc == 0 && !st->stopped && nstart == 0)
        st->fraction = 1; /* exactly, whatever the rounding */
    return rc;
}
