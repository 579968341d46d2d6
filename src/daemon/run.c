/*
 * run.c - one job's search, on its runner thread.
 *
 * The runner prepares the solver (pinning the engine's automatic choices in
 * the stored options the first time, so that every later run builds the
 * same tree and stored tasks keep their meaning), then runs the pool from
 * the job's stored frontier (none: the root).  Solutions come as classes
 * (tsr_callbacks.found) and wait, a few bytes each, as the run's pending
 * found classes (sto_found); each checkpoint commits the pool's frontier,
 * those classes and the progress in one
 * transaction, which is what makes results exactly-once across crashes.  A
 * checkpoint is asked for as soon as they are big or a second old, so
 * memory stays bounded and the stored count close behind the search.  A pause, a new thread count, preemption or shutdown ends the
 * pool at a checkpoint; a cancel stops it at once and commits what was
 * found; the end of the search commits the last solutions with the final
 * state.
 */
#define _GNU_SOURCE /* SCHED_BATCH */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon/manager.h"

/* ---- a run: one job's search, on its runner thread ---------------------------- */

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
} run;

/* A class found by a pool worker (one at a time): into the pending ones, its
 * count cut at the job's limit and, for storage, at options.store. */
static int on_found(void *ctx, const int *images, int n, int count)
{
    run *r = ctx;
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
 * thread count, preemption, shutdown), when the pending classes are big (memory) or
 * when solutions have waited a second (clients see only what is stored). */
static int checkpoint_wanted(void *ctx)
{
    run *r = ctx;
    base_lock(&r->m->mu);
    int want = r->m->shutdown || r->j->want != WANT_NONE ||
               jm_target_threads(r->m, r->j) != r->j->threads;
    base_unlock(&r->m->mu);
    base_lock(&r->sol_mu);
    want = want || r->pending.records.len >= SOLUTION_BUFFER_BYTES ||
           (r->pending.found > 0 && base_now() - r->pending_since >= SOLUTION_DELAY_S);
    base_unlock(&r->sol_mu);
    return want;
}

/* Commit frontier + new solutions + progress (+ new state) in one
 * transaction; on success the solutions buffer is emptied and the job's
 * stored count refreshed.  Called with no lock held. */
static int commit(run *r, const tsr_task *tasks, int ntasks, const tsr_stats *st,
                  const enum sto_state *new_state, tsr_err *err)
{
    jm_manager *m = r->m;
    uint64_t nodes;
    double fraction, seconds;
    account(r, st, &nodes, &fraction, &seconds);
    if (new_state && *new_state == STO_COMPLETED && !r->limit_hit)
        fraction = 1;
    char *stats = jm_stats_text(r->levels, r->cur_attempts, r->cur_fits, tsr_solver_config(r->s));
    sto_progress prog = {nodes, fraction, seconds, stats, NULL, 0};
    sto_tally *tally = NULL;
    if (r->rec != NULL) {
        int trc = jm_record_take(r->rec, &tally, &prog.ntally);
        prog.tally = tally;
        if (trc == TSR_EINVAL)
            r->rec_lost = true; /* run_job fails the job */
        else if (trc != 0)
            stats = (free(stats), NULL); /* out of memory, reported below */
    }
    /* the store's task type has the same fields */
    sto_task *t = malloc((size_t)(ntasks > 0 ? ntasks : 1) * sizeof *t);
    base_lock(&r->sol_mu);
    sto_found found = r->pending;
    r->pending = (sto_found){0};
    base_unlock(&r->sol_mu);
    int rc = t == NULL || stats == NULL ? tsr_err_set(err, TSR_ENOMEM, "out of memory") : 0;
    for (int i = 0; rc == 0 && i < ntasks; i++)
        t[i] = (sto_task){tasks[i].n, tasks[i].images, tasks[i].weight};
    double t0 = base_now();
    sto_job summary = {0};
    sto_job *list = NULL;
    int nlist = 0;
    if (rc == 0) {
        base_lock(&m->db_mu);
        rc = sto_checkpoint(m->db, r->id, t, ntasks, &found, &prog, new_state, err);
        if (rc == 0 && sto_job_list(m->db, NULL, r->id - 1, 1, &list, &nlist, NULL) == 0 &&
            nlist == 1)
            summary = list[0];
        base_unlock(&m->db_mu);
    }
    double dt = base_now() - t0;
    if (rc == 0 && r->rec != NULL)
        jm_record_committed(r->rec, tally, prog.ntally);
    free(tally);
    free(t);
    free(stats);
    /* On failure the store holds the last checkpoint as it was (one
     * transaction), and the found classes go: the run ends (on_checkpoint) and
     * the next one starts from that checkpoint, which finds these
     * solutions again. */
    sto_found_free(&found);
    if (rc != 0 && rc != TSR_EINVAL) {
        r->store_failed = true;
        snprintf(r->store_msg, sizeof r->store_msg, "%s", err->msg);
    }
    base_lock(&m->mu);
    if (rc == 0) {
        m->checkpoints++;
        m->checkpoint_seconds_sum += dt;
        jm_store_ok(m, r->j);
        r->committed_nodes = nodes;
        r->committed_fraction = fraction;
        r->committed_seconds = seconds;
        if (nlist == 1) {
            r->j->solutions = summary.solutions;
            r->j->stored = summary.stored;
        }
        if (new_state)
            r->j->state = *new_state;
        publish(r, nodes, fraction, seconds);
    }
    base_unlock(&m->mu);
    sto_jobs_free(list, nlist);
    return rc;
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
    if (want == WANT_CANCEL)
        return 1; /* no frontier needed: run_job commits the cancel */
    tsr_err err = {{0}};
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
        tsr_callbacks cb = {.ctx = r, .found = on_found, .progress = on_progress,
                            .progress_seconds = 0.5};
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
            if (r->end_state == STO_RUNNING && !m->shutdown)
                continue; /* a new thread count */
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
    run r = {.m = m, .j = j, .id = j->id};
    tsr_eta_init(&r.eta);
    /* Searches are batch work: SCHED_BATCH (inherited by the pool's
     * workers) lets an HTTP thread that wakes up run at once instead of
     * waiting for a solver thread's time slice, so status answers stay
     * fast while every core solves; with nothing else to run the search
     * gets every cycle, as before. */
    struct sched_param sp = {.sched_priority = 0};
    pthread_setschedparam(pthread_self(), SCHED_BATCH, &sp);
    base_mutex_init(&r.sol_mu);
    run_job(&r);
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
    base_mutex_destroy(&r.sol_mu);
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
