/*
 * run.c - one job's search, on its runner thread.
 *
 * The runner prepares the solver (pinning the engine's automatic choices in
 * the stored options the first time, so that every later run builds the
 * same tree and stored tasks keep their meaning), then runs the pool from
 * the job's stored frontier (none: the root).  Solutions come as classes
 * (tsr_callbacks.found) and wait, a few bytes each, as the run's pending
 * found classes (sto_found; one per worker thread when every solution is
 * kept); each checkpoint commits the pool's frontier, those classes and
 * the progress in one transaction, which is what makes results
 * exactly-once across crashes.  A checkpoint is taken while the workers
 * are parked and, when the run goes on, written by the run's committer
 * thread while they search on.  It is asked for as soon as the classes
 * are big or a second old, so memory stays bounded and the stored count
 * close behind the search.  A pause, a new thread count, preemption or
 * shutdown ends the pool at a checkpoint; a cancel stops it at once and
 * commits what was found; the end of the search commits the last
 * solutions with the final state.
 */
#define _GNU_SOURCE /* SCHED_BATCH */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <assert.h>
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon/manager.h"

/* ---- a run: one job's search, on its runner thread ---------------------------- */

/* What one commit writes: the frontier, the classes found before it, the
 * progress and (has_state) the job's next state.  A checkpoint the run goes
 * on from is written behind the search, by the run's committer thread:
 * then the order owns copies of the tasks' images, since the pool's own go
 * on being searched. */
typedef struct commit_order {
    sto_task *tasks;
    int ntasks;
    bool own_images;
    sto_found found;
    uint64_t nodes;
    double fraction, seconds;
    char *stats;
    sto_tally *tally;
    int ntally;
    bool has_state;
    enum sto_state state;
} commit_order;

/* The classes one thread found since the last checkpoint, when the job
 * keeps every solution it finds (no limit, no options.store): the common
 * flood, where each worker reports a million classes a second and one
 * shared lock made the two workers of a 2-core machine wait on each other
 * (the futex calls were 10% of the daemon's time).  The owner thread adds
 * to `found` without a lock; anyone else reads it only while the pool's
 * workers are parked or gone (a checkpoint), when the pool's own mutex
 * orders those accesses.  bytes and since are what checkpoint_wanted may
 * read at any time. */
typedef struct found_local {
    struct found_local *next; /* the run's list (sol_mu) */
    sto_found found;
    atomic_size_t bytes;      /* found.records.len */
    _Atomic double since;     /* when found got its first class; 0: empty */
} found_local;

typedef struct run {
    jm_manager *m;
    jm_job *j;
    int64_t id;
    tsr_puzzle *pz;
    char *puzzle_text;        /* as stored: what a backend's remote ranks read */
    tsr_solver *s;
    long long limit;
    /* solutions found since the last checkpoint (sol_mu) */
    base_mutex sol_mu;
    sto_found pending;        /* found since the last checkpoint (sol_mu) */
    double pending_since;     /* when it got its first solution */
    found_local *locals;      /* and by each thread on its own (sol_mu) */
    uint64_t serial;          /* this pool call, among all (found_local's owner) */
    bool per_thread;          /* no limit, every solution kept: locals are used */
    long long found;          /* stored when the run began + reported since */
    long long keep;           /* solutions still to store: -1 all (options.store) */
    bool limit_hit;
    bool pending_failed;      /* a class could not be kept: the job fails */
    /* progress committed before the pool call in progress */
    uint64_t base_nodes;
    double base_fraction, base_seconds;
    int levels;
    uint64_t *base_attempts, *base_fits, *cur_attempts, *cur_fits;
    /* rate measurement and the time left (eta under m->mu) */
    double last_t;
    uint64_t last_nodes;
    tsr_eta eta;
    /* the tree-size estimate behind the ETA, on a thread of its own */
    pthread_t estimator;
    bool has_estimator, estimator_stop; /* estimator_stop under m->mu */
    int end_state;            /* state a checkpoint that ended the run stored, or -1 */
    /* the progress of the last commit: what a run the store refused falls back to */
    uint64_t committed_nodes;
    double committed_fraction, committed_seconds;
    bool store_failed;        /* a commit failed: the run ends, the job waits (stall_job) */
    char store_msg[TSR_ERR_MAX];
    jm_record *rec;           /* a record job's tasks (record.c), or NULL */
    bool rec_lost;            /* a task lay under no record task: the job fails */
    /* the committer: a checkpoint written behind the search (cm_mu) */
    base_mutex cm_mu;
    pthread_cond_t cm_cv;
    pthread_t cm_thread;
    bool cm_started, cm_busy, cm_quit;
    commit_order cm_order;    /* the one in flight (cm_busy) */
    int cm_rc;                /* the first failed commit (cm_mu), and why */
    char cm_msg[TSR_ERR_MAX];
} run;

/* A number no other pool call of this process has: the owner of the
 * found_locals a thread caches. */
static uint64_t next_serial(void)
{
    static atomic_uint_fast64_t serials;
    return atomic_fetch_add(&serials, 1) + 1;
}

/* Free the run's found_locals (taken by a checkpoint, or the run is
 * over), once no worker is left: the threads of the next pool call
 * register new ones under a new serial, so that none reuses a pointer it
 * cached. */
static void locals_free(run *r)
{
    for (found_local *l = r->locals, *next; l != NULL; l = next) {
        next = l->next;
        sto_found_free(&l->found);
        free(l);
    }
    r->locals = NULL;
    r->serial = next_serial();
}

/* This thread's found_local for run r, registered on first use; NULL when
 * out of memory.  A thread may serve several runs in turn: the serial,
 * unique to a run, tells whether the pointer it kept is this run's. */
static found_local *local_found(run *r)
{
    static _Thread_local struct {
        uint64_t serial;
        found_local *l;
    } mine;
    if (mine.serial == r->serial && mine.l != NULL)
        return mine.l;
    found_local *l = calloc(1, sizeof *l);
    if (l == NULL)
        return NULL;
    base_lock(&r->sol_mu);
    l->next = r->locals;
    r->locals = l;
    base_unlock(&r->sol_mu);
    mine.serial = r->serial;
    mine.l = l;
    return l;
}

/* A class found by a pool worker: into the pending ones, its count cut at
 * the job's limit and, for storage, at options.store (one worker at a
 * time).  When neither applies (per_thread, fixed for the run), into the
 * worker's own, from each worker at once (found_concurrent). */
static int on_found(void *ctx, const int *images, int n, int count)
{
    run *r = ctx;
    found_local *l = r->per_thread ? local_found(r) : NULL;
    if (l != NULL) {
        bool first = l->found.found == 0;
        if (sto_found_add(&l->found, images, n, count, count) != 0) {
            base_lock(&r->sol_mu);
            r->pending_failed = true; /* out of memory: the run fails */
            base_unlock(&r->sol_mu);
            return 1;
        }
        atomic_store_explicit(&l->bytes, l->found.records.len, memory_order_relaxed);
        if (first)
            atomic_store_explicit(&l->since, base_now(), memory_order_relaxed);
        return 0;
    }
    base_lock(&r->sol_mu);
    int stop = 0;
    if (r->limit > 0 && r->found + count > r->limit)
        count = (int)(r->limit - r->found);
    if (count <= 0) {
        stop = 1; /* a worker that had not yet seen the stop */
    } else {
        int keep = r->keep < 0 || r->keep > count ? count : (int)r->keep;
        if (r->pending.found == 0)
            r->pending_since = base_now();
        if (sto_found_add(&r->pending, images, n, count, keep) != 0) {
            stop = 1; /* out of memory: the run fails below */
            r->pending_failed = true;
        } else {
            r->found += count;
            if (r->keep > 0)
                r->keep -= keep;
            if (r->limit > 0 && r->found >= r->limit) {
                r->limit_hit = true;
                stop = 1;
            }
        }
    }
    base_unlock(&r->sol_mu);
    return stop;
}

/* A pool worker searched (part of) a task: a record job's figures. */
static void on_task_done(void *ctx, const int *images, int n, const tsr_stats *st)
{
    run *r = ctx;
    jm_record_task_done(r->rec, images, n, st);
}

/* A record job (options.record): its split, made and stored before the
 * first run, then its record tasks' figures; the progress stored by the
 * split (what lies above it) becomes the base of this run's. */
static int record_open(run *r, tsr_err *err)
{
    const tsr_options *opt = tsr_solver_options(r->s);
    if (r->m->cfg.backend != NULL)
        return tsr_err_set(err, TSR_EINVAL, "options.record: a record job runs on this "
                                            "daemon's own threads, not on a cluster");
    if (r->limit > 0)
        return tsr_err_set(err, TSR_EINVAL, "options.record: a record counts every solution, "
                                            "so options.limit must be 0");
    int rc = jm_record_load(r->m, r->id, opt->record, &r->rec, err);
    if (rc != 0 || r->rec != NULL)
        return rc;
    /* the first run: split the tree, before any search */
    if (r->base_nodes != 0)
        return tsr_err_set(err, TSR_EINVAL, "options.record: the job has searched already, "
                                            "without a split");
    jm_split sp;
    tsr_stats above;
    if ((rc = jm_split_make(r->s, opt->record, &sp, &above, err)) != 0)
        return rc;
    for (int p = 0; p < r->levels && p < above.levels; p++) {
        r->base_attempts[p] += above.attempts[p];
        r->base_fits[p] += above.fits[p];
    }
    char *stats = jm_stats_text(r->levels, r->base_attempts, r->base_fits, tsr_solver_config(r->s));
    sto_progress prog = {above.nodes, above.fraction, r->base_seconds, stats, NULL, 0};
    rc = stats == NULL ? tsr_err_set(err, TSR_ENOMEM, "out of memory")
                       : jm_split_store(r->m, r->id, &sp, &above, &prog, err);
    if (rc == 0) {
        r->base_nodes = r->committed_nodes = above.nodes;
        r->base_fraction = r->committed_fraction = above.fraction;
        rc = jm_record_load(r->m, r->id, opt->record, &r->rec, err);
        if (rc == 0 && r->rec == NULL)
            rc = tsr_err_set(err, TSR_EIO, "the split was stored but cannot be read back");
    }
    free(stats);
    jm_split_free(&sp);
    tsr_stats_free(&above);
    return rc;
}

/* Progress of the pool call in progress, on top of what was committed. */
static void account(run *r, const tsr_stats *st, uint64_t *nodes, double *fraction,
                    double *seconds)
{
    *nodes = r->base_nodes + st->nodes;
    *fraction = r->base_fraction + st->fraction;
    if (*fraction > 1)
        *fraction = 1;
    *seconds = r->base_seconds + st->seconds;
    for (int p = 0; p < r->levels; p++) {
        r->cur_attempts[p] = r->base_attempts[p] + (p < st->levels ? st->attempts[p] : 0);
        r->cur_fits[p] = r->base_fits[p] + (p < st->levels ? st->fits[p] : 0);
    }
}

/* Publish progress in the job table (under mu). */
static void publish(run *r, uint64_t nodes, double fraction, double seconds)
{
    BASE_HELD(&r->m->mu);
    jm_job *j = r->j;
    double t = base_now();
    if (r->last_t > 0 && t > r->last_t + 0.2) {
        double rate = (double)(nodes - r->last_nodes) / (t - r->last_t);
        j->rate = j->rate > 0 ? 0.7 * j->rate + 0.3 * rate : rate;
    }
    if (r->last_t == 0 || t > r->last_t + 0.2) {
        r->last_t = t;
        r->last_nodes = nodes;
    }
    /* the estimate never goes down (a sum of other rounding may, by an ulp) */
    if (fraction < j->fraction && j->state == STO_RUNNING)
        fraction = j->fraction;
    tsr_eta_add(&r->eta, seconds, fraction);
    j->has_eta = tsr_eta_range(&r->eta, nodes, j->rate, &j->eta_low, &j->eta_high);
    j->nodes = nodes;
    j->fraction = fraction;
    j->seconds = seconds;
    if (j->levels == r->levels) {
        memcpy(j->attempts, r->cur_attempts, (size_t)r->levels * sizeof *j->attempts);
        memcpy(j->fits, r->cur_fits, (size_t)r->levels * sizeof *j->fits);
    }
    jm_touch(r->m, j);
}

static int on_progress(void *ctx, const tsr_stats *st)
{
    run *r = ctx;
    uint64_t nodes;
    double fraction, seconds;
    account(r, st, &nodes, &fraction, &seconds);
    base_lock(&r->m->mu);
    jm_job *j = r->j;
    if (st->nworkers != j->nworkers) { /* a resize to the pool's size, once a run: no growth */
        tsr_worker_stats *w = realloc(j->workers, (size_t)(st->nworkers + 1) * sizeof *w);
        if (w != NULL) {
            j->workers = w;
            j->nworkers = st->nworkers;
        }
    }
    if (st->nworkers == j->nworkers && j->workers != NULL)
        memcpy(j->workers, st->workers, (size_t)st->nworkers * sizeof *j->workers);
    publish(r, nodes, fraction, seconds);
    int stop = r->j->want == WANT_CANCEL;
    base_unlock(&r->m->mu);
    return stop;
}

/* A checkpoint is due early when the run must end (pause, cancel, a new
 * thread count, preemption, shutdown, a commit written behind that
 * failed), when the pending classes are big (memory) or when solutions
 * have waited a second (clients see only what is stored).  For the last
 * two, while the last checkpoint is still being written, the next one
 * waits for it rather than park the workers to wait, unless the batch
 * has grown four times as big. */
static int checkpoint_wanted(void *ctx)
{
    run *r = ctx;
    base_lock(&r->m->mu);
    int want = r->m->shutdown || r->j->want != WANT_NONE ||
               jm_target_threads(r->m, r->j) != r->j->threads;
    base_unlock(&r->m->mu);
    base_lock(&r->cm_mu);
    bool writing = r->cm_busy;
    want = want || r->cm_rc != 0;
    base_unlock(&r->cm_mu);
    base_lock(&r->sol_mu);
    size_t len = r->pending.records.len;
    double since = r->pending.found > 0 ? r->pending_since : 0;
    for (found_local *l = r->locals; l != NULL; l = l->next) {
        len += atomic_load_explicit(&l->bytes, memory_order_relaxed);
        double t = atomic_load_explicit(&l->since, memory_order_relaxed);
        if (t > 0 && (since == 0 || t < since))
            since = t;
    }
    want = want || len >= (writing ? 4 : 1) * (size_t)SOLUTION_BUFFER_BYTES ||
           (!writing && since > 0 && base_now() - since >= SOLUTION_DELAY_S);
    base_unlock(&r->sol_mu);
    return want;
}

/* ---- checkpoints: taken while the pool is parked, written in order --------------- */

static void order_free(commit_order *o)
{
    for (int i = 0; o->own_images && o->tasks != NULL && i < o->ntasks; i++)
        free(o->tasks[i].images);
    free(o->tasks);
    sto_found_free(&o->found);
    free(o->stats);
    free(o->tally);
    *o = (commit_order){0};
}

/* Move src's classes to the end of dst, leaving src empty. */
static int found_move(sto_found *dst, sto_found *src)
{
    if (src->found == 0)
        return 0;
    if (dst->found == 0) {
        sto_found_free(dst);
        *dst = *src;
        *src = (sto_found){0};
        return 0;
    }
    if (sto_found_append(dst, src) != 0)
        return TSR_ENOMEM;
    src->records.len = 0;
    src->classes = src->stored = src->found = 0;
    return 0;
}

/* Take a checkpoint's content: the progress, the solutions pending (which
 * start again empty) and the frontier (copied when copy_images).  Called
 * on the pool's calling thread, with the workers parked or done.  On
 * failure the order holds what it took, to be freed. */
static int capture(run *r, const tsr_task *tasks, int ntasks, const tsr_stats *st,
                   const enum sto_state *new_state, bool copy_images, commit_order *o,
                   tsr_err *err)
{
    *o = (commit_order){.own_images = copy_images};
    account(r, st, &o->nodes, &o->fraction, &o->seconds);
    if (new_state && *new_state == STO_COMPLETED && !r->limit_hit)
        o->fraction = 1;
    if (new_state) {
        o->has_state = true;
        o->state = *new_state;
    }
    o->stats = jm_stats_text(r->levels, r->cur_attempts, r->cur_fits, tsr_solver_config(r->s));
    bool nomem = o->stats == NULL;
    if (r->rec != NULL) {
        int trc = jm_record_take(r->rec, &o->tally, &o->ntally);
        if (trc == TSR_EINVAL)
            r->rec_lost = true; /* run_job fails the job */
        else if (trc != 0)
            nomem = true;
    }
    /* the store's task type has the same fields */
    o->tasks = calloc((size_t)(ntasks > 0 ? ntasks : 1), sizeof *o->tasks);
    base_lock(&r->sol_mu);
    o->found = r->pending;
    r->pending = (sto_found){0};
    /* the workers are parked or gone: their classes are still */
    for (found_local *l = r->locals; l != NULL; l = l->next) {
        nomem = found_move(&o->found, &l->found) != 0 || nomem;
        atomic_store_explicit(&l->bytes, 0, memory_order_relaxed);
        atomic_store_explicit(&l->since, 0, memory_order_relaxed);
    }
    base_unlock(&r->sol_mu);
    if (o->tasks == NULL)
        return tsr_err_set(err, TSR_ENOMEM, "out of memory");
    o->ntasks = ntasks;
    for (int i = 0; i < ntasks; i++) {
        int *images = tasks[i].images;
        if (copy_images && tasks[i].n > 0) {
            if ((images = malloc((size_t)tasks[i].n * sizeof *images)) == NULL) {
                o->ntasks = i;
                return tsr_err_set(err, TSR_ENOMEM, "out of memory");
            }
            memcpy(images, tasks[i].images, (size_t)tasks[i].n * sizeof *images);
        }
        o->tasks[i] = (sto_task){tasks[i].n, copy_images && tasks[i].n == 0 ? NULL : images,
                                 tasks[i].weight};
    }
    return nomem ? tsr_err_set(err, TSR_ENOMEM, "out of memory") : 0;
}

/* A commit failed (rc, err): the run ends.  The store's refusals (a full
 * disk, a read-only file, I/O) leave the job waiting (store_failed,
 * stall_job); anything else fails it.  run_job learns of either from
 * committer_drain, whichever thread wrote. */
static void commit_failed(run *r, int rc, const tsr_err *err)
{
    if (rc != TSR_EINVAL) {
        r->store_failed = true;
        snprintf(r->store_msg, sizeof r->store_msg, "%s", err->msg);
    }
    base_lock(&r->cm_mu);
    if (r->cm_rc == 0) {
        r->cm_rc = rc;
        snprintf(r->cm_msg, sizeof r->cm_msg, "%s", err->msg);
    }
    base_unlock(&r->cm_mu);
}

/* Write a captured order in one transaction; on success the job's stored
 * count is refreshed.  Behind the search (on the committer thread) the
 * live progress is the runner's to publish, so only what the store now
 * holds is set.  Called with no lock held.  On failure the store holds
 * the last checkpoint as it was, and the order's classes go: the run
 * ends, and the next one starts from that checkpoint, which finds these
 * solutions again. */
static int write_order(run *r, const commit_order *o, bool behind, tsr_err *err)
{
    jm_manager *m = r->m;
    sto_progress prog = {o->nodes, o->fraction, o->seconds, o->stats, o->tally, o->ntally};
    double t0 = base_now();
    sto_job summary = {0};
    sto_job *list = NULL;
    int nlist = 0;
    base_lock(&m->db_mu);
    int rc = sto_checkpoint(m->db, r->id, o->tasks, o->ntasks, &o->found, &prog,
                            o->has_state ? &o->state : NULL, err);
    if (rc == 0 && sto_job_list(m->db, NULL, r->id - 1, 1, &list, &nlist, NULL) == 0 &&
        nlist == 1)
        summary = list[0];
    base_unlock(&m->db_mu);
    double dt = base_now() - t0;
    if (rc == 0 && r->rec != NULL)
        jm_record_committed(r->rec, o->tally, o->ntally);
    if (rc != 0)
        commit_failed(r, rc, err);
    base_lock(&m->mu);
    if (rc == 0) {
        m->checkpoints++;
        m->checkpoint_seconds_sum += dt;
        jm_store_ok(m, r->j);
        r->committed_nodes = o->nodes;
        r->committed_fraction = o->fraction;
        r->committed_seconds = o->seconds;
        if (nlist == 1) {
            r->j->solutions = summary.solutions;
            r->j->stored = summary.stored;
        }
        if (behind) {
            jm_touch(m, r->j);
        } else {
            if (o->has_state)
                r->j->state = o->state;
            publish(r, o->nodes, o->fraction, o->seconds);
        }
    }
    base_unlock(&m->mu);
    sto_jobs_free(list, nlist);
    return rc;
}

/* Commit frontier + new solutions + progress (+ new state) now, on the
 * calling thread. */
static int commit(run *r, const tsr_task *tasks, int ntasks, const tsr_stats *st,
                  const enum sto_state *new_state, tsr_err *err)
{
    commit_order o;
    int rc = capture(r, tasks, ntasks, st, new_state, false, &o, err);
    if (rc == 0)
        rc = write_order(r, &o, false, err);
    else
        commit_failed(r, rc, err);
    order_free(&o);
    return rc;
}

/* The committer: writes the checkpoints a run goes on from, one at a time
 * and in order, while the workers search on; the next checkpoint waits
 * for it (committer_drain), so at most one batch of classes is in
 * flight.  The search no longer stands still for SQLite: a commit of the
 * 8 MB batch a flood fills takes about 0.1 s, and the 30 million
 * solutions of the 8x5 polyhexes make 31 of them. */
static void *committer_main(void *arg)
{
    run *r = arg;
    base_lock(&r->cm_mu);
    for (;;) {
        while (!r->cm_busy && !r->cm_quit)
            base_cond_wait(&r->cm_cv, &r->cm_mu, INFINITY);
        if (!r->cm_busy)
            break;
        commit_order o = r->cm_order;
        base_unlock(&r->cm_mu);
        tsr_err err = {{0}};
        write_order(r, &o, true, &err); /* a failure is in cm_rc */
        order_free(&o);
        base_lock(&r->cm_mu);
        r->cm_order = (commit_order){0};
        r->cm_busy = false;
        pthread_cond_broadcast(&r->cm_cv);
    }
    base_unlock(&r->cm_mu);
    return NULL;
}

/* Wait for the commit in flight, if any; returns the run's first failed
 * commit (its message in *err), or 0. */
static int committer_drain(run *r, tsr_err *err)
{
    base_lock(&r->cm_mu);
    while (r->cm_busy)
        base_cond_wait(&r->cm_cv, &r->cm_mu, INFINITY);
    int rc = r->cm_rc;
    if (rc != 0 && err != NULL)
        tsr_err_set(err, rc, "%s", r->cm_msg);
    base_unlock(&r->cm_mu);
    return rc;
}

/* Hand a captured order to the committer (started on first use); false
 * when no thread could be started: the caller writes it itself. */
static bool committer_take(run *r, commit_order *o)
{
    base_lock(&r->cm_mu);
    assert(!r->cm_busy);
    if (!r->cm_started)
        r->cm_started = pthread_create(&r->cm_thread, NULL, committer_main, r) == 0;
    if (r->cm_started) {
        r->cm_order = *o;
        *o = (commit_order){0};
        r->cm_busy = true;
        pthread_cond_broadcast(&r->cm_cv);
    }
    base_unlock(&r->cm_mu);
    return r->cm_started;
}

static void committer_stop(run *r)
{
    base_lock(&r->cm_mu);
    r->cm_quit = true;
    pthread_cond_broadcast(&r->cm_cv);
    bool started = r->cm_started;
    base_unlock(&r->cm_mu);
    if (started)
        pthread_join(r->cm_thread, NULL);
    order_free(&r->cm_order);
}

static int on_checkpoint(void *ctx, const tsr_task *tasks, int ntasks, const tsr_stats *st)
{
    run *r = ctx;
    jm_manager *m = r->m;
    base_lock(&m->mu);
    enum want want = r->j->want;
    /* the scheduler gives no threads to a job being paused or cancelled */
    bool end = m->shutdown || want != WANT_NONE || jm_target_threads(m, r->j) != r->j->threads;
    enum sto_state next = STO_RUNNING; /* shutdown too: the next start resumes it */
    if (want == WANT_PAUSE)
        next = STO_PAUSED;
    else if (r->j->assigned == 0 && !m->shutdown)
        next = STO_QUEUED; /* preempted by a job of higher priority */
    base_unlock(&m->mu);
    /* checkpoints are written in order: this one after the last */
    if (committer_drain(r, NULL) != 0)
        return 1; /* the store refused it: end the run (run_job says why) */
    if (want == WANT_CANCEL)
        return 1; /* no frontier needed: run_job commits the cancel */
    tsr_err err = {{0}};
    if (!end && r->rec == NULL) {
        /* the run goes on: the search need not wait for the write */
        commit_order o;
        int rc = capture(r, tasks, ntasks, st, &next, true, &o, &err);
        if (rc == 0 && committer_take(r, &o))
            return 0;
        if (rc == 0)
            rc = write_order(r, &o, false, &err);
        else
            commit_failed(r, rc, &err);
        order_free(&o);
        return rc != 0;
    }
    if (commit(r, tasks, ntasks, st, &next, &err) != 0)
        return 1; /* end the run: the job waits for the store (stall_job) */
    if (end)
        r->end_state = next;
    return end;
}

/* The tree-size estimate behind the ETA (tessera/eta.h): Knuth's
 * estimator over the job's search, once it has run for ESTIMATE_AFTER_S
 * (short jobs never pay for it), bounded to ESTIMATE_SECONDS of one core.
 * It runs beside the search on a thread of its own, so that pause, cancel
 * and checkpoints never wait for it. */
#define ESTIMATE_AFTER_S 5.0
#define ESTIMATE_SECONDS 2.0
#define ESTIMATE_SPREAD 3.0

/* The job's run has ended: the estimate is not waited for.  (A plain read
 * of a flag the runner sets under mu: at worst one more descent.) */
static int estimator_stopped(void *arg)
{
    run *r = arg;
    return __atomic_load_n(&r->estimator_stop, __ATOMIC_RELAXED);
}

static void *estimator_main(void *arg)
{
    run *r = arg;
    jm_manager *m = r->m;
    double until = base_now() + ESTIMATE_AFTER_S;
    base_lock(&m->mu);
    while (!r->estimator_stop && base_cond_wait(&m->changed, &m->mu, until) == 0)
        ;
    bool go = !r->estimator_stop;
    base_unlock(&m->mu);
    tsr_estimate e;
    /* a range wider than ESTIMATE_SPREAD says nothing the fraction does not
     * (a heavy tail met by too few descents): it is left out */
    if (go && tsr_solver_estimate_until(r->s, 1000000, ESTIMATE_SECONDS, (uint64_t)r->id,
                                        estimator_stopped, r, &e) == 0 &&
        e.nodes_low > 0 && e.nodes_high <= ESTIMATE_SPREAD * e.nodes_low) {
        base_lock(&m->mu);
        tsr_eta_set_tree(&r->eta, e.nodes_low, e.nodes_high);
        base_unlock(&m->mu);
    }
    return NULL;
}

static void estimator_start(run *r)
{
    r->has_estimator = pthread_create(&r->estimator, NULL, estimator_main, r) == 0;
}

static void estimator_join(run *r)
{
    if (!r->has_estimator)
        return;
    base_lock(&r->m->mu);
    __atomic_store_n(&r->estimator_stop, true, __ATOMIC_RELAXED);
    pthread_cond_broadcast(&r->m->changed);
    base_unlock(&r->m->mu);
    pthread_join(r->estimator, NULL);
    r->has_estimator = false;
}

/* Preparation gives up as soon as the job is to pause or end, or the
 * daemon to stop (tessera/engine.h, tsr_stop): on a huge puzzle it takes
 * seconds. */
static int prep_stop(void *ctx)
{
    run *r = ctx;
    base_lock(&r->m->mu);
    int stop = r->m->shutdown || r->j->want != WANT_NONE;
    base_unlock(&r->m->mu);
    return stop;
}

/* Prepare the solver.  The first preparation resolves the automatic choices;
 * they are stored and the search runs on a solver built from them, which
 * every later preparation reproduces. */
static int prepare(run *r, tsr_err *err)
{
    jm_manager *m = r->m;
    sto_job doc = {0};
    base_lock(&m->db_mu);
    int rc = sto_job_get(m->db, r->id, &doc, err);
    base_unlock(&m->db_mu);
    if (rc)
        return rc;
    tsr_options opt;
    rc = tsr_puzzle_read(doc.puzzle, strlen(doc.puzzle), "stored puzzle", &r->pz, NULL, err);
    if (rc == 0 && (r->puzzle_text = strdup(doc.puzzle)) == NULL)
        rc = tsr_err_set(err, TSR_ENOMEM, "out of memory");
    if (rc == 0)
        rc = tsr_options_read_json(doc.options, strlen(doc.options), "stored options", r->pz,
                                   &opt, err);
    if (rc == 0) {
        r->limit = opt.limit;
        opt.limit = 0; /* the job's limit counts over every run: enforced here */
        r->keep = opt.store < 0 ? -1 : opt.store > doc.stored ? opt.store - doc.stored : 0;
        r->per_thread = r->limit == 0 && r->keep < 0;
        rc = tsr_solver_prepare(r->pz, &opt, &(tsr_stop){prep_stop, r}, &r->s, err);
    }
    char *resolved = NULL;
    if (rc == 0) {
        tsr_options ro = *tsr_solver_options(r->s);
        ro.limit = r->limit;
        resolved = tsr_options_write_json(&ro);
        if (resolved == NULL)
            rc = tsr_err_set(err, TSR_ENOMEM, "out of memory");
    }
    if (rc == 0 && strcmp(resolved, doc.options) != 0) {
        tsr_options ro;
        tsr_solver_free(r->s);
        r->s = NULL;
        rc = tsr_options_read_json(resolved, strlen(resolved), "resolved options", r->pz, &ro,
                                   err);
        if (rc == 0) {
            ro.limit = 0;
            rc = tsr_solver_prepare(r->pz, &ro, &(tsr_stop){prep_stop, r}, &r->s, err);
        }
        if (rc == 0) {
            base_lock(&m->db_mu);
            rc = sto_job_set_options(m->db, r->id, resolved, err);
            base_unlock(&m->db_mu);
        }
    }
    if (rc == 0) {
        r->levels = tsr_solver_ncopies(r->s) + 1;
        r->base_attempts = calloc((size_t)r->levels, sizeof(uint64_t));
        r->base_fits = calloc((size_t)r->levels, sizeof(uint64_t));
        r->cur_attempts = calloc((size_t)r->levels, sizeof(uint64_t));
        r->cur_fits = calloc((size_t)r->levels, sizeof(uint64_t));
        uint64_t *ja = calloc((size_t)r->levels, sizeof(uint64_t));
        uint64_t *jf = calloc((size_t)r->levels, sizeof(uint64_t));
        if (!r->base_attempts || !r->base_fits || !r->cur_attempts || !r->cur_fits || !ja ||
            !jf) {
            free(ja);
            free(jf);
            rc = tsr_err_set(err, TSR_ENOMEM, "out of memory");
        } else {
            jm_stats_parse(doc.stats, r->levels, r->base_attempts, r->base_fits);
            memcpy(ja, r->base_attempts, (size_t)r->levels * sizeof *ja);
            memcpy(jf, r->base_fits, (size_t)r->levels * sizeof *jf);
            r->base_nodes = doc.nodes;
            r->base_fraction = doc.fraction;
            r->base_seconds = doc.seconds;
            r->committed_nodes = doc.nodes;
            r->committed_fraction = doc.fraction;
            r->committed_seconds = doc.seconds;
            r->found = doc.solutions;
            base_lock(&m->mu);
            jm_job *j = r->j;
            free(j->attempts);
            free(j->fits);
            j->attempts = ja;
            j->fits = jf;
            j->levels = r->levels;
            jm_set_str(&j->config, tsr_solver_config(r->s));
            if (resolved)
                jm_set_options(j, resolved);
            jm_touch(m, j);
            base_unlock(&m->mu);
        }
    }
    free(resolved);
    sto_job_clear(&doc);
    return rc;
}

/* Mark the job failed (store and memory). */
static void fail_job(jm_manager *m, jm_job *j, const char *why)
{
    base_lock(&m->db_mu);
    sto_job_set_state(m->db, j->id, STO_FAILED, why, NULL);
    base_unlock(&m->db_mu);
    base_lock(&m->mu);
    j->state = STO_FAILED;
    jm_set_str(&j->error, why);
    jm_touch(m, j);
    base_unlock(&m->mu);
}

/* The store refused a commit (a full disk, a read-only file, an I/O
 * error): the store keeps the job's last checkpoint as it was, so the job
 * is not failed; it waits, queued, with the reason in its error, and the
 * scheduler tries it again after a back-off (jm_store_failed).  What the
 * run did since that checkpoint is lost and will be searched again, so
 * the progress shown falls back to the checkpoint's. */
static void stall_job(run *r)
{
    jm_manager *m = r->m;
    base_lock(&m->mu);
    jm_job *j = r->j;
    j->nodes = r->committed_nodes;
    j->fraction = r->committed_fraction;
    j->seconds = r->committed_seconds;
    jm_store_failed(m, j, r->store_msg);
    base_unlock(&m->mu);
}

/* Load the stored frontier (empty: the job starts from the root). */
static int load_frontier(run *r, tsr_task **tasks, int *n, tsr_err *err)
{
    sto_task *st = NULL;
    int ns = 0;
    base_lock(&r->m->db_mu);
    int rc = sto_frontier_load(r->m->db, r->id, &st, &ns, err);
    base_unlock(&r->m->db_mu);
    if (rc)
        return rc;
    *tasks = calloc((size_t)(ns > 0 ? ns : 1), sizeof **tasks);
    if (*tasks == NULL) {
        sto_tasks_free(st, ns);
        return tsr_err_set(err, TSR_ENOMEM, "out of memory");
    }
    if (ns == 0) {
        (*tasks)[0] = (tsr_task){0, NULL, 1.0};
        *n = 1;
    } else {
        for (int i = 0; i < ns; i++) { /* the images move over */
            (*tasks)[i] = (tsr_task){st[i].nimages, st[i].images, st[i].weight};
            st[i].images = NULL;
        }
        *n = ns;
    }
    sto_tasks_free(st, ns);
    return 0;
}

/* The run ends before any search (want: why): only the state changes,
 * to paused, cancelled or queued (threads taken away); on shutdown the
 * store keeps "running", so the next start resumes it.  Returns 0, or the
 * store's error (a refused write leaves the job waiting, stall_job). */
static int end_unstarted(run *r, enum want want, bool shutdown, tsr_err *err)
{
    jm_manager *m = r->m;
    if (shutdown && want == WANT_NONE)
        return 0;
    enum sto_state next = want == WANT_PAUSE    ? STO_PAUSED
                          : want == WANT_CANCEL ? STO_CANCELLED
                                                : STO_QUEUED;
    base_lock(&m->mu);
    char *kept_error = jm_kept_error(r->j);
    base_unlock(&m->mu);
    base_lock(&m->db_mu);
    int rc = sto_job_set_state(m->db, r->id, next, kept_error, err);
    base_unlock(&m->db_mu);
    free(kept_error);
    if (rc != 0 && rc != TSR_EINVAL) {
        r->store_failed = true;
        snprintf(r->store_msg, sizeof r->store_msg, "%s", err->msg);
    }
    if (rc == 0) {
        base_lock(&m->mu);
        r->j->state = next;
        jm_touch(m, r->j);
        base_unlock(&m->mu);
    }
    return rc;
}

static void free_tasks(tsr_task *t, int n)
{
    for (int i = 0; t && i < n; i++)
        free(t[i].images);
    free(t);
}

/* Run the job until it ends, is paused, preempted or stopped by shutdown;
 * a change of thread count restarts the pool from the new checkpoint. */
static void run_job(run *r)
{
    jm_manager *m = r->m;
    tsr_err err = {{0}};
    int rc = prepare(r, &err);
    bool ended = false; /* before any search */
    if (rc == TSR_ECANCELED) { /* a pause, cancel or shutdown stopped it */
        ended = true;
        base_lock(&m->mu);
        enum want want = r->j->want;
        bool shutdown = m->shutdown;
        base_unlock(&m->mu);
        rc = end_unstarted(r, want, shutdown, &err);
    } else if (rc == 0 && tsr_solver_options(r->s)->record > 0 &&
               (rc = record_open(r, &err)) != 0) {
        ended = true; /* fail_job below */
    } else if (rc == 0) {
        estimator_start(r);
    }
    while (rc == 0 && !ended) {
        tsr_task *tasks = NULL;
        int ntasks = 0;
        if ((rc = load_frontier(r, &tasks, &ntasks, &err)) != 0)
            break;
        base_lock(&m->mu);
        /* threads a job gives up are free only once its pool has parked:
         * wait for them rather than oversubscribe the cores */
        int threads;
        while ((threads = jm_target_threads(m, r->j)) == 0 && r->j->assigned > 0 &&
               !m->shutdown && r->j->want == WANT_NONE) {
            base_cond_wait(&m->changed, &m->mu, base_now() + 1.0);
        }
        r->j->threads = threads;
        jm_touch(m, r->j);
        bool shutdown = m->shutdown;
        bool stop_now = shutdown || threads == 0 || r->j->want != WANT_NONE;
        enum want want = r->j->want;
        base_unlock(&m->mu);
        if (stop_now && want != WANT_CANCEL) {
            free_tasks(tasks, ntasks);
            rc = end_unstarted(r, want, shutdown, &err);
            break;
        }
        /* progress twice a second, so that any two polls a second apart
         * see it move */
        tsr_callbacks cb = {.ctx = r, .found = on_found, .found_concurrent = r->per_thread,
                            .progress = on_progress, .progress_seconds = 0.5};
        tsr_pool_hooks hk = {.ctx = r, .checkpoint_seconds = m->cfg.checkpoint_seconds,
                             .checkpoint_wanted = checkpoint_wanted,
                             .checkpoint = on_checkpoint,
                             .task_done = r->rec != NULL ? on_task_done : NULL};
        tsr_stats st;
        r->end_state = -1;
        r->last_t = 0;
        const jm_backend *be = m->cfg.backend;
        if (want == WANT_CANCEL) {
            st = (tsr_stats){0}; /* cancelled before it ran: nothing searched */
        } else if (be != NULL) {
            /* the solver's options are the resolved ones, limit 0 */
            char *options = tsr_options_write_json(tsr_solver_options(r->s));
            rc = options == NULL ? tsr_err_set(&err, TSR_ENOMEM, "out of memory")
                                 : be->search(be->ctx, r->id, r->puzzle_text, options, r->s,
                                              tasks, ntasks, &cb, &hk, &st, &err);
            free(options);
        } else {
            rc = tsr_pool_search(r->s, threads, tasks, ntasks, &cb, &hk, &st);
        }
        free_tasks(tasks, ntasks);
        /* the checkpoint written behind the search ends first; a failed
         * commit ends the run: the store's refusal stalls the job (below),
         * anything else fails it */
        int crc = committer_drain(r, rc == 0 ? &err : NULL);
        if (crc != 0 && rc == 0 && !r->store_failed)
            rc = crc;
        if (rc == 0 && r->store_failed) {
            tsr_stats_free(&st);
            break; /* the checkpoint that ended the run was not written */
        }
        if (rc == 0 && r->pending_failed)
            rc = tsr_err_set(&err, TSR_ENOMEM, "out of memory holding solutions");
        if (rc == 0 && r->rec_lost)
            rc = tsr_err_set(&err, TSR_EIO, "a task lay under no record task");
        if (rc != 0) {
            char why[TSR_ERR_MAX];
            snprintf(why, sizeof why, "%s", err.msg[0] ? err.msg : tsr_strerror(rc));
            tsr_err_set(&err, rc, "the search failed: %s", why);
            tsr_stats_free(&st);
            break;
        }
        base_lock(&m->mu);
        bool cancel = r->j->want == WANT_CANCEL;
        base_unlock(&m->mu);
        enum sto_state final = STO_COMPLETED;
        if (cancel) {
            final = STO_CANCELLED;
        } else if (st.stopped && !r->limit_hit) {
            /* ended at a checkpoint: the state it stored says what next */
            uint64_t nodes;
            double fraction, seconds;
            account(r, &st, &nodes, &fraction, &seconds);
            r->base_nodes = nodes;
            r->base_fraction = fraction;
            r->base_seconds = seconds;
            memcpy(r->base_attempts, r->cur_attempts, (size_t)r->levels * sizeof(uint64_t));
            memcpy(r->base_fits, r->cur_fits, (size_t)r->levels * sizeof(uint64_t));
            tsr_stats_free(&st);
            if (r->end_state == STO_RUNNING && !m->shutdown) {
                locals_free(r); /* the checkpoint took their classes */
                continue; /* a new thread count */
            }
            break;
        }
        /* completed, limit reached or cancelled: one last commit */
        rc = commit(r, NULL, 0, &st, &final, &err);
        tsr_stats_free(&st);
        break;
    }
    if (r->store_failed)
        stall_job(r);
    else if (rc != 0) /* out of memory may come without a message */
        fail_job(m, r->j, err.msg[0] ? err.msg : tsr_strerror(rc));
}

void *jm_runner_main(void *arg)
{
    jm_job *j = arg;
    jm_manager *m = j->m;
    run r = {.m = m, .j = j, .id = j->id, .serial = next_serial()};
    tsr_eta_init(&r.eta);
    /* Searches are batch work: SCHED_BATCH (inherited by the pool's
     * workers) lets an HTTP thread that wakes up run at once instead of
     * waiting for a solver thread's time slice, so status answers stay
     * fast while every core solves; with nothing else to run the search
     * gets every cycle, as before. */
    struct sched_param sp = {.sched_priority = 0};
    pthread_setschedparam(pthread_self(), SCHED_BATCH, &sp);
    base_mutex_init(&r.sol_mu);
    base_mutex_init(&r.cm_mu);
    base_cond_init(&r.cm_cv);
    run_job(&r);
    committer_stop(&r);
    estimator_join(&r);
    tsr_solver_free(r.s);
    tsr_puzzle_free(r.pz);
    free(r.puzzle_text);
    sto_found_free(&r.pending);
    jm_record_free(r.rec);
    free(r.base_attempts);
    free(r.base_fits);
    free(r.cur_attempts);
    free(r.cur_fits);
    locals_free(&r);
    base_mutex_destroy(&r.sol_mu);
    base_mutex_destroy(&r.cm_mu);
    pthread_cond_destroy(&r.cm_cv);
    base_lock(&m->mu);
    j->threads = 0;
    j->nworkers = 0;
    j->rate = 0;
    j->has_eta = false;
    j->runner_done = true;
    if (j->want == WANT_PAUSE && j->state == STO_PAUSED)
        j->want = WANT_NONE;
    if (j->want == WANT_CANCEL && sto_state_final(j->state))
        j->want = WANT_NONE;
    jm_touch(m, j);
    base_unlock(&m->mu);
    return NULL;
}
