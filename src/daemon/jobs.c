/*
 * jobs.c - the job manager (see jobs.h).
 *
 * Threads and locks.  HTTP threads, one scheduler thread and one runner
 * thread per running job share the manager.  Three mutexes, taken in this
 * order and never the other way round:
 *   db_mu  the writer connection (creates, checkpoints, state changes);
 *   rd_mu  the reader connection (solution pages, puzzle documents);
 *   mu     the in-memory job table, every field of every jm_job, and the
 *          condition `changed`, broadcast whenever a job changes.
 * No SQLite call is made while holding mu, so status requests never wait
 * for the disk.
 *
 * A job's life in this file: submit creates it in the store (queued, no
 * frontier: an empty frontier on a live job means "from the root").  The
 * scheduler gives it threads and starts a runner.  The runner prepares the
 * solver, pins the automatic choices in the stored options (so that every
 * later run builds the same tree and the stored frontier keeps its
 * meaning), then runs the pool from the stored frontier.  Each checkpoint
 * commits, in one transaction, the pool's frontier, the solutions found
 * since the previous one and the progress: that is the exactly-once rule.
 * A pause, a new thread count, a preemption or shutdown ends the run at a
 * checkpoint; a cancel stops it at once and commits what was found.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon/jobs.h"
#include "store/store.h"
#include "tessera/tessera.h"

#define SOLUTION_BUFFER_MAX 20000 /* solutions held before a checkpoint is forced */
#define ACTION_WAIT_MS 15000      /* how long pause/cancel wait for the runner */

enum want { WANT_NONE, WANT_PAUSE, WANT_CANCEL };

typedef struct jm_manager jm_manager;

typedef struct jm_job {
    jm_manager *m;
    int64_t id;
    enum sto_state state;
    int priority, engine_version;
    char *name;
    int64_t created, updated;
    int dims, cells, pieces;
    long long expected[3];
    char *options;            /* the options document in force */
    char *config;             /* the engine's configuration line, once prepared */
    char *error;
    int64_t solutions;        /* stored */
    uint64_t nodes;           /* searched, stored plus the run in progress */
    double fraction, seconds;
    double rate, frate;       /* nodes/s and fraction/s, smoothed */
    int levels;
    uint64_t *attempts, *fits;
    int64_t change;           /* bumped on every change (event streams) */
    int cap;                  /* the job's own thread cap, 0 = none */
    int assigned;             /* threads the scheduler gives it */
    int threads;              /* threads its pool runs with now */
    enum want want;
    bool has_runner, runner_done;
    pthread_t runner;
} jm_job;

typedef struct library_entry {
    char *file, *path;
    json_t *summary;
} library_entry;

struct jm_manager {
    jm_config cfg;
    int threads;
    double started;
    pthread_mutex_t db_mu, rd_mu, mu;
    pthread_cond_t changed;
    sto_db *db, *rdb;
    jm_job **jobs;            /* sorted by id */
    int njobs, capjobs;
    bool shutdown;
    pthread_t scheduler;
    bool has_scheduler;
    uint64_t checkpoints;
    double checkpoint_seconds_sum;
    library_entry *library;
    int nlibrary;
};

static double now_mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void set_str(char **dst, const char *src)
{
    free(*dst);
    *dst = src ? strdup(src) : NULL;
}

/* ---- the job table (under mu) ---------------------------------------------- */

static jm_job *find_job(jm_manager *m, int64_t id)
{
    int lo = 0, hi = m->njobs - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (m->jobs[mid]->id == id)
            return m->jobs[mid];
        if (m->jobs[mid]->id < id)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return NULL;
}

static int add_job(jm_manager *m, jm_job *j)
{
    if (m->njobs == m->capjobs) {
        int ncap = m->capjobs ? 2 * m->capjobs : 64;
        jm_job **p = realloc(m->jobs, (size_t)ncap * sizeof *p);
        if (p == NULL)
            return TSR_ENOMEM;
        m->jobs = p;
        m->capjobs = ncap;
    }
    int i = m->njobs;
    while (i > 0 && m->jobs[i - 1]->id > j->id) { /* ids only grow: normally no move */
        m->jobs[i] = m->jobs[i - 1];
        i--;
    }
    m->jobs[i] = j;
    m->njobs++;
    return 0;
}

static void free_job(jm_job *j)
{
    if (j == NULL)
        return;
    free(j->name);
    free(j->options);
    free(j->config);
    free(j->error);
    free(j->attempts);
    free(j->fits);
    free(j);
}

static void touch(jm_manager *m, jm_job *j)
{
    j->change++;
    j->updated = (int64_t)time(NULL);
    pthread_cond_broadcast(&m->changed);
}

/* ---- documents -------------------------------------------------------------- */

/* Puzzle facts shown with a job. */
static void describe_puzzle(jm_job *j, const tsr_puzzle *pz)
{
    set_str(&j->name, pz->name);
    j->dims = tsr_puzzle_is_flat(pz) ? 2 : 3;
    j->cells = pz->ncells;
    j->pieces = 0;
    for (int i = 0; i < pz->npieces; i++)
        j->pieces += pz->pieces[i].fixed ? 0 : pz->pieces[i].count;
    memcpy(j->expected, pz->expected, sizeof j->expected);
}

static json_t *expected_json(const long long expected[3])
{
    static const char *const modes[] = {"raw", "rotations", "mirror"};
    json_t *e = json_object();
    for (int i = 0; i < 3; i++)
        if (expected[i] >= 0)
            json_object_set_new(e, modes[i], json_integer(expected[i]));
    return e;
}

static json_t *stats_levels_json(int levels, const uint64_t *attempts, const uint64_t *fits)
{
    json_t *a = json_array();
    for (int p = levels - 1; p >= 0; p--) {
        json_t *l = json_object();
        json_object_set_new(l, "pieces_left", json_integer(p));
        json_object_set_new(l, "attempts", json_integer((json_int_t)attempts[p]));
        json_object_set_new(l, "fits", json_integer((json_int_t)fits[p]));
        json_array_append_new(a, l);
    }
    return a;
}

/* The job object of docs/api.md (under mu). */
static json_t *job_json(const jm_job *j, bool with_stats)
{
    json_t *o = json_object();
    json_object_set_new(o, "id", json_integer(j->id));
    json_object_set_new(o, "name", j->name ? json_string(j->name) : json_null());
    json_object_set_new(o, "state", json_string(sto_state_name(j->state)));
    json_object_set_new(o, "priority", json_integer(j->priority));
    json_object_set_new(o, "created", json_integer(j->created));
    json_object_set_new(o, "updated", json_integer(j->updated));
    json_object_set_new(o, "solutions", json_integer(j->solutions));
    json_t *p = json_object();
    json_object_set_new(p, "fraction", json_real(j->fraction));
    json_object_set_new(p, "nodes", json_integer((json_int_t)j->nodes));
    bool live = j->state == STO_RUNNING;
    json_object_set_new(p, "rate", json_real(live ? j->rate : 0));
    double eta = live && j->frate > 0 ? (1 - j->fraction) / j->frate : -1;
    json_object_set_new(p, "eta_s", eta >= 0 && isfinite(eta) ? json_real(eta) : json_null());
    json_object_set_new(p, "seconds", json_real(j->seconds));
    json_object_set_new(o, "progress", p);
    json_object_set_new(o, "threads", json_integer(live ? j->threads : 0));
    json_t *opt = j->options ? json_loads(j->options, 0, NULL) : NULL;
    json_object_set_new(o, "options", opt ? opt : json_object());
    json_object_set_new(o, "config", j->config ? json_string(j->config) : json_null());
    json_t *pz = json_object();
    json_object_set_new(pz, "name", j->name ? json_string(j->name) : json_null());
    json_object_set_new(pz, "dimensions", json_integer(j->dims));
    json_object_set_new(pz, "cells", json_integer(j->cells));
    json_object_set_new(pz, "pieces", json_integer(j->pieces));
    json_object_set_new(pz, "expected", expected_json(j->expected));
    json_object_set_new(o, "puzzle", pz);
    json_object_set_new(o, "error", j->error ? json_string(j->error) : json_null());
    json_object_set_new(o, "engine_version", json_integer(j->engine_version));
    if (with_stats) {
        json_t *st = json_object();
        json_object_set_new(st, "levels", stats_levels_json(j->levels, j->attempts, j->fits));
        json_object_set_new(o, "stats", st);
    }
    return o;
}

/* Statistics as stored with a checkpoint. */
static char *stats_text(int levels, const uint64_t *attempts, const uint64_t *fits,
                        const char *config)
{
    json_t *o = json_object();
    json_object_set_new(o, "levels", stats_levels_json(levels, attempts, fits));
    if (config)
        json_object_set_new(o, "config", json_string(config));
    char *s = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return s;
}

/* Per-level counts from stored statistics into arrays of `levels`. */
static void stats_parse(const char *text, int levels, uint64_t *attempts, uint64_t *fits)
{
    json_t *o = text ? json_loads(text, 0, NULL) : NULL;
    json_t *a = json_object_get(o, "levels");
    size_t i;
    json_t *l;
    json_array_foreach(a, i, l) {
        json_int_t p = json_integer_value(json_object_get(l, "pieces_left"));
        if (p >= 0 && p < levels) {
            attempts[p] = (uint64_t)json_integer_value(json_object_get(l, "attempts"));
            fits[p] = (uint64_t)json_integer_value(json_object_get(l, "fits"));
        }
    }
    json_decref(o);
}

/* The canonical key of a solution: its placements as "piece:cells" with
 * cells sorted, the placements sorted, joined by '|'. */
static int cell_cmp(const void *a, const void *b)
{
    const tsr_cell *x = a, *y = b;
    if (x->z != y->z)
        return x->z < y->z ? -1 : 1;
    if (x->y != y->y)
        return x->y < y->y ? -1 : 1;
    return (x->x > y->x) - (x->x < y->x);
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *solution_key(const tsr_solution *s)
{
    char **parts = calloc((size_t)s->nplacements + 1, sizeof *parts);
    size_t total = 1;
    int ok = parts != NULL;
    for (int i = 0; ok && i < s->nplacements; i++) {
        const tsr_placement *pl = &s->placements[i];
        tsr_cell *c = malloc((size_t)pl->ncells * sizeof *c + 1);
        size_t size = 16 + (size_t)pl->ncells * 36, len;
        parts[i] = malloc(size);
        if (c == NULL || parts[i] == NULL) {
            free(c);
            ok = 0;
            break;
        }
        memcpy(c, pl->cells, (size_t)pl->ncells * sizeof *c);
        qsort(c, (size_t)pl->ncells, sizeof *c, cell_cmp);
        len = (size_t)snprintf(parts[i], size, "%d:", pl->piece);
        for (int k = 0; k < pl->ncells; k++)
            len += (size_t)snprintf(parts[i] + len, size - len, "%d,%d,%d;", c[k].x, c[k].y,
                                    c[k].z);
        total += len + 1;
        free(c);
    }
    char *key = ok ? malloc(total) : NULL;
    if (key != NULL) {
        qsort(parts, (size_t)s->nplacements, sizeof *parts, str_cmp);
        size_t len = 0;
        for (int i = 0; i < s->nplacements; i++)
            len += (size_t)sprintf(key + len, "%s|", parts[i]);
        key[len] = '\0';
    }
    for (int i = 0; parts && i < s->nplacements; i++)
        free(parts[i]);
    free(parts);
    return key;
}

static char *solution_body(const tsr_puzzle *pz, const tsr_solution *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f == NULL)
        return NULL;
    int rc = tsr_write_solution_json(f, pz, s);
    fclose(f);
    if (rc != 0) {
        free(buf);
        return NULL;
    }
    while (len > 0 && buf[len - 1] == '\n')
        buf[--len] = '\0';
    return buf;
}

/* ---- a run: one job's search, on its runner thread ---------------------------- */

typedef struct run {
    jm_manager *m;
    jm_job *j;
    int64_t id;
    tsr_puzzle *pz;
    tsr_solver *s;
    long long limit;
    /* solutions found since the last checkpoint (sol_mu) */
    pthread_mutex_t sol_mu;
    sto_solution *sols;
    int nsols, capsols;
    long long found;          /* stored when the run began + reported since */
    bool limit_hit;
    /* progress committed before the pool call in progress */
    uint64_t base_nodes;
    double base_fraction, base_seconds;
    int levels;
    uint64_t *base_attempts, *base_fits, *cur_attempts, *cur_fits;
    /* rate measurement */
    double last_t, last_fraction;
    uint64_t last_nodes;
    int end_state;            /* state a checkpoint that ended the run stored, or -1 */
} run;

static void free_sols(sto_solution *sols, int n)
{
    for (int i = 0; i < n; i++) {
        free((char *)sols[i].key);
        free((char *)sols[i].body);
    }
    free(sols);
}

static int on_solution(void *ctx, const tsr_solution *s)
{
    run *r = ctx;
    char *key = solution_key(s), *body = solution_body(r->pz, s);
    pthread_mutex_lock(&r->sol_mu);
    int stop = 0;
    if (r->limit > 0 && r->found >= r->limit) {
        stop = 1; /* a worker that had not yet seen the stop */
    } else if (key == NULL || body == NULL) {
        stop = 1;
    } else {
        if (r->nsols == r->capsols) {
            int ncap = r->capsols ? 2 * r->capsols : 256;
            sto_solution *p = realloc(r->sols, (size_t)ncap * sizeof *p);
            if (p != NULL) {
                r->sols = p;
                r->capsols = ncap;
            }
        }
        if (r->nsols < r->capsols) {
            r->sols[r->nsols++] = (sto_solution){key, body};
            key = body = NULL;
            r->found++;
            if (r->limit > 0 && r->found >= r->limit) {
                r->limit_hit = true;
                stop = 1;
            }
        } else {
            stop = 1; /* out of memory: the run fails below */
        }
    }
    pthread_mutex_unlock(&r->sol_mu);
    free(key);
    free(body);
    return stop;
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
    jm_job *j = r->j;
    double t = now_mono();
    if (r->last_t > 0 && t > r->last_t + 0.2) {
        double dt = t - r->last_t;
        double rate = (double)(nodes - r->last_nodes) / dt;
        double frate = (fraction - r->last_fraction) / dt;
        j->rate = j->rate > 0 ? 0.7 * j->rate + 0.3 * rate : rate;
        j->frate = j->frate > 0 ? 0.7 * j->frate + 0.3 * frate : frate;
    }
    if (r->last_t == 0 || t > r->last_t + 0.2) {
        r->last_t = t;
        r->last_nodes = nodes;
        r->last_fraction = fraction;
    }
    j->nodes = nodes;
    j->fraction = fraction;
    j->seconds = seconds;
    if (j->levels == r->levels) {
        memcpy(j->attempts, r->cur_attempts, (size_t)r->levels * sizeof *j->attempts);
        memcpy(j->fits, r->cur_fits, (size_t)r->levels * sizeof *j->fits);
    }
    touch(r->m, j);
}

static int on_progress(void *ctx, const tsr_stats *st)
{
    run *r = ctx;
    uint64_t nodes;
    double fraction, seconds;
    account(r, st, &nodes, &fraction, &seconds);
    pthread_mutex_lock(&r->m->mu);
    publish(r, nodes, fraction, seconds);
    int stop = r->j->want == WANT_CANCEL;
    pthread_mutex_unlock(&r->m->mu);
    return stop;
}

/* A checkpoint is due early when the run must end (pause, cancel, a new
 * thread count, preemption, shutdown) or many solutions wait. */
static int checkpoint_wanted(void *ctx)
{
    run *r = ctx;
    pthread_mutex_lock(&r->m->mu);
    int want = r->m->shutdown || r->j->want != WANT_NONE || r->j->assigned != r->j->threads;
    pthread_mutex_unlock(&r->m->mu);
    pthread_mutex_lock(&r->sol_mu);
    want = want || r->nsols >= SOLUTION_BUFFER_MAX;
    pthread_mutex_unlock(&r->sol_mu);
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
    char *stats = stats_text(r->levels, r->cur_attempts, r->cur_fits, tsr_solver_config(r->s));
    sto_progress prog = {nodes, fraction, seconds, stats};
    /* the store's task type has the same fields */
    sto_task *t = malloc((size_t)(ntasks > 0 ? ntasks : 1) * sizeof *t);
    pthread_mutex_lock(&r->sol_mu);
    sto_solution *sols = r->sols;
    int nsols = r->nsols;
    r->sols = NULL;
    r->nsols = r->capsols = 0;
    pthread_mutex_unlock(&r->sol_mu);
    int rc = t == NULL || stats == NULL ? tsr_err_set(err, TSR_ENOMEM, "out of memory") : 0;
    for (int i = 0; rc == 0 && i < ntasks; i++)
        t[i] = (sto_task){tasks[i].n, tasks[i].images, tasks[i].weight};
    double t0 = now_mono();
    sto_job summary = {0};
    sto_job *list = NULL;
    int nlist = 0;
    if (rc == 0) {
        pthread_mutex_lock(&m->db_mu);
        rc = sto_checkpoint(m->db, r->id, t, ntasks, sols, nsols, &prog, new_state, err);
        if (rc == 0 && sto_job_list(m->db, NULL, r->id - 1, 1, &list, &nlist, NULL) == 0 &&
            nlist == 1)
            summary = list[0];
        pthread_mutex_unlock(&m->db_mu);
    }
    double dt = now_mono() - t0;
    free(t);
    free(stats);
    if (rc != 0) { /* keep the solutions for the next attempt */
        pthread_mutex_lock(&r->sol_mu);
        sto_solution *merged = realloc(sols, (size_t)(nsols + r->nsols + 1) * sizeof *merged);
        if (merged != NULL) {
            memcpy(merged + nsols, r->sols, (size_t)r->nsols * sizeof *merged);
            free(r->sols);
            r->sols = merged;
            r->nsols += nsols;
            r->capsols = r->nsols + 1;
        } else {
            free_sols(sols, nsols);
        }
        pthread_mutex_unlock(&r->sol_mu);
    } else {
        free_sols(sols, nsols);
    }
    pthread_mutex_lock(&m->mu);
    if (rc == 0) {
        m->checkpoints++;
        m->checkpoint_seconds_sum += dt;
        if (nlist == 1)
            r->j->solutions = summary.solutions;
        if (new_state)
            r->j->state = *new_state;
        set_str(&r->j->error, NULL);
    } else {
        set_str(&r->j->error, err->msg);
    }
    publish(r, nodes, fraction, seconds);
    pthread_mutex_unlock(&m->mu);
    sto_jobs_free(list, nlist);
    return rc;
}

static int on_checkpoint(void *ctx, const tsr_task *tasks, int ntasks, const tsr_stats *st)
{
    run *r = ctx;
    jm_manager *m = r->m;
    pthread_mutex_lock(&m->mu);
    enum want want = r->j->want;
    /* the scheduler gives no threads to a job being paused or cancelled */
    bool end = m->shutdown || want != WANT_NONE || r->j->assigned != r->j->threads;
    enum sto_state next = STO_RUNNING; /* shutdown too: the next start resumes it */
    if (want == WANT_PAUSE)
        next = STO_PAUSED;
    else if (r->j->assigned == 0 && !m->shutdown)
        next = STO_QUEUED; /* preempted by a job of higher priority */
    pthread_mutex_unlock(&m->mu);
    if (want == WANT_CANCEL)
        return 1; /* no frontier needed: run_job commits the cancel */
    tsr_err err = {{0}};
    if (commit(r, tasks, ntasks, st, &next, &err) != 0)
        return 0; /* go on; the next checkpoint tries again */
    if (end)
        r->end_state = next;
    return end;
}

/* Prepare the solver.  The first preparation resolves the automatic choices;
 * they are stored and the search runs on a solver built from them, which
 * every later preparation reproduces. */
static int prepare(run *r, tsr_err *err)
{
    jm_manager *m = r->m;
    sto_job doc = {0};
    pthread_mutex_lock(&m->db_mu);
    int rc = sto_job_get(m->db, r->id, &doc, err);
    pthread_mutex_unlock(&m->db_mu);
    if (rc)
        return rc;
    tsr_options opt;
    rc = tsr_puzzle_read(doc.puzzle, strlen(doc.puzzle), "stored puzzle", &r->pz, NULL, err);
    if (rc == 0)
        rc = tsr_options_read_json(doc.options, strlen(doc.options), "stored options", r->pz,
                                   &opt, err);
    if (rc == 0) {
        r->limit = opt.limit;
        opt.limit = 0; /* the job's limit counts over every run: enforced here */
        rc = tsr_solver_new(r->pz, &opt, &r->s, err);
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
            rc = tsr_solver_new(r->pz, &ro, &r->s, err);
        }
        if (rc == 0) {
            pthread_mutex_lock(&m->db_mu);
            rc = sto_job_set_options(m->db, r->id, resolved, err);
            pthread_mutex_unlock(&m->db_mu);
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
            stats_parse(doc.stats, r->levels, r->base_attempts, r->base_fits);
            memcpy(ja, r->base_attempts, (size_t)r->levels * sizeof *ja);
            memcpy(jf, r->base_fits, (size_t)r->levels * sizeof *jf);
            r->base_nodes = doc.nodes;
            r->base_fraction = doc.fraction;
            r->base_seconds = doc.seconds;
            r->found = doc.solutions;
            pthread_mutex_lock(&m->mu);
            jm_job *j = r->j;
            free(j->attempts);
            free(j->fits);
            j->attempts = ja;
            j->fits = jf;
            j->levels = r->levels;
            set_str(&j->config, tsr_solver_config(r->s));
            if (resolved)
                set_str(&j->options, resolved);
            touch(m, j);
            pthread_mutex_unlock(&m->mu);
        }
    }
    free(resolved);
    sto_job_clear(&doc);
    return rc;
}

/* Mark the job failed (store and memory). */
static void fail_job(jm_manager *m, jm_job *j, const char *why)
{
    pthread_mutex_lock(&m->db_mu);
    sto_job_set_state(m->db, j->id, STO_FAILED, why, NULL);
    pthread_mutex_unlock(&m->db_mu);
    pthread_mutex_lock(&m->mu);
    j->state = STO_FAILED;
    set_str(&j->error, why);
    touch(m, j);
    pthread_mutex_unlock(&m->mu);
}

/* Load the stored frontier (empty: the job starts from the root). */
static int load_frontier(run *r, tsr_task **tasks, int *n, tsr_err *err)
{
    sto_task *st = NULL;
    int ns = 0;
    pthread_mutex_lock(&r->m->db_mu);
    int rc = sto_frontier_load(r->m->db, r->id, &st, &ns, err);
    pthread_mutex_unlock(&r->m->db_mu);
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
    while (rc == 0) {
        tsr_task *tasks = NULL;
        int ntasks = 0;
        if ((rc = load_frontier(r, &tasks, &ntasks, &err)) != 0)
            break;
        pthread_mutex_lock(&m->mu);
        int threads = r->j->assigned;
        r->j->threads = threads;
        bool stop_now = m->shutdown || threads == 0 || r->j->want != WANT_NONE;
        enum want want = r->j->want;
        pthread_mutex_unlock(&m->mu);
        if (stop_now && want != WANT_CANCEL) {
            /* nothing ran: only the state changes */
            enum sto_state next = want == WANT_PAUSE ? STO_PAUSED : STO_QUEUED;
            free_tasks(tasks, ntasks);
            if (m->shutdown && want == WANT_NONE)
                break;
            pthread_mutex_lock(&m->db_mu);
            rc = sto_job_set_state(m->db, r->id, next, NULL, &err);
            pthread_mutex_unlock(&m->db_mu);
            if (rc == 0) {
                pthread_mutex_lock(&m->mu);
                r->j->state = next;
                touch(m, r->j);
                pthread_mutex_unlock(&m->mu);
            }
            break;
        }
        tsr_callbacks cb = {.ctx = r, .solution = on_solution, .progress = on_progress,
                            .progress_seconds = 1.0};
        tsr_pool_hooks hk = {.ctx = r, .checkpoint_seconds = m->cfg.checkpoint_seconds,
                             .checkpoint_wanted = checkpoint_wanted,
                             .checkpoint = on_checkpoint};
        tsr_stats st;
        r->end_state = -1;
        r->last_t = 0;
        if (want == WANT_CANCEL)
            rc = tsr_pool_search(r->s, 1, NULL, 0, &cb, NULL, &st); /* nothing to run */
        else
            rc = tsr_pool_search(r->s, threads, tasks, ntasks, &cb, &hk, &st);
        free_tasks(tasks, ntasks);
        if (rc != 0) {
            tsr_err_set(&err, rc, "the search failed (error %d)", rc);
            tsr_stats_free(&st);
            break;
        }
        pthread_mutex_lock(&m->mu);
        bool cancel = r->j->want == WANT_CANCEL;
        pthread_mutex_unlock(&m->mu);
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
    if (rc != 0)
        fail_job(m, r->j, err.msg);
}

static void *runner_main(void *arg)
{
    jm_job *j = arg;
    jm_manager *m = j->m;
    run r = {.m = m, .j = j, .id = j->id};
    pthread_mutex_init(&r.sol_mu, NULL);
    run_job(&r);
    tsr_solver_free(r.s);
    tsr_puzzle_free(r.pz);
    free_sols(r.sols, r.nsols);
    free(r.base_attempts);
    free(r.base_fits);
    free(r.cur_attempts);
    free(r.cur_fits);
    pthread_mutex_destroy(&r.sol_mu);
    pthread_mutex_lock(&m->mu);
    j->threads = 0;
    j->rate = j->frate = 0;
    j->runner_done = true;
    if (j->want == WANT_PAUSE && j->state == STO_PAUSED)
        j->want = WANT_NONE;
    if (j->want == WANT_CANCEL && sto_state_final(j->state))
        j->want = WANT_NONE;
    touch(m, j);
    pthread_mutex_unlock(&m->mu);
    return NULL;
}

/* ---- the scheduler ------------------------------------------------------------- */

static int by_priority(const void *a, const void *b)
{
    const jm_job *x = *(jm_job *const *)a, *y = *(jm_job *const *)b;
    if (x->priority != y->priority)
        return x->priority > y->priority ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* Share m->threads between the runnable jobs (under mu): priority classes
 * in turn, highest first; within a class one thread each in id order, then
 * the rest one at a time to those under their cap.  What a class cannot
 * use flows to the next. */
static void assign_threads(jm_manager *m)
{
    jm_job **q = malloc((size_t)(m->njobs ? m->njobs : 1) * sizeof *q);
    if (q == NULL)
        return;
    int n = 0;
    for (int i = 0; i < m->njobs; i++) {
        jm_job *j = m->jobs[i];
        j->assigned = 0;
        if ((j->state == STO_QUEUED || j->state == STO_RUNNING) && j->want == WANT_NONE)
            q[n++] = j;
    }
    qsort(q, (size_t)n, sizeof *q, by_priority);
    int left = m->threads;
    for (int a = 0; a < n && left > 0;) {
        int b = a;
        while (b < n && q[b]->priority == q[a]->priority)
            b++;
        for (int i = a; i < b && left > 0; i++, left--)
            q[i]->assigned = 1;
        for (bool more = true; more && left > 0;) {
            more = false;
            for (int i = a; i < b && left > 0; i++) {
                int cap = q[i]->cap > 0 ? q[i]->cap : m->threads;
                if (q[i]->assigned > 0 && q[i]->assigned < cap) {
                    q[i]->assigned++;
                    left--;
                    more = true;
                }
            }
        }
        a = b;
    }
    free(q);
}

static void *scheduler_main(void *arg)
{
    jm_manager *m = arg;
    pthread_mutex_lock(&m->mu);
    while (!m->shutdown) {
        assign_threads(m);
        for (int i = 0; i < m->njobs; i++) {
            jm_job *j = m->jobs[i];
            if (j->has_runner && j->runner_done) {
                pthread_mutex_unlock(&m->mu);
                pthread_join(j->runner, NULL);
                pthread_mutex_lock(&m->mu);
                j->has_runner = j->runner_done = false;
                i = -1; /* the table may have changed meanwhile */
                continue;
            }
            if (!j->has_runner && j->assigned > 0 && j->state == STO_QUEUED) {
                j->has_runner = true;
                j->runner_done = false;
                j->state = STO_RUNNING;
                j->threads = 0;
                if (pthread_create(&j->runner, NULL, runner_main, j) != 0) {
                    j->has_runner = false;
                    j->state = STO_QUEUED;
                }
                touch(m, j);
            }
        }
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 1;
        pthread_cond_timedwait(&m->changed, &m->mu, &until);
    }
    pthread_mutex_unlock(&m->mu);
    return NULL;
}

/* The runner marks the store "running" itself only through checkpoints;
 * the state a user sees flips at once, and a crash before the first
 * checkpoint resumes a job that the store still calls queued: the same. */

/* ---- operations for the server ---------------------------------------------------- */

static void reply_json(srv_reply *rep, int status, json_t *j)
{
    rep->status = status;
    rep->json = j;
}

/* An upper bound on the placements the engine would build. */
static double placement_bound(const tsr_puzzle *pz)
{
    int orient = pz->rotations == TSR_ROT_NONE ? 1 : pz->rotations == TSR_ROT_ONE_SIDED ? 4 : 24;
    if (pz->mirror)
        orient *= 2;
    double total = 0;
    for (int i = 0; i < pz->npieces; i++)
        if (!pz->pieces[i].fixed)
            total += (double)orient * pz->ncells;
    return total;
}

static void op_submit(void *ctx, const char *body, size_t len, srv_reply *rep)
{
    jm_manager *m = ctx;
    if (len == 0) {
        srv_reply_error(rep, 400, "request body: empty; expected a job object "
                                  "{\"puzzle\": {...}, \"options\": {...}}");
        return;
    }
    json_error_t jerr;
    json_t *probe = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
    tsr_puzzle *pz = NULL;
    tsr_options opt;
    tsr_err err = {{0}};
    int rc = tsr_puzzle_read_json(body, len, "request body", &pz, &opt, &err);
    if (rc != 0) {
        /* shape and type errors name a JSON path or a line; what is left
         * is a well-formed puzzle that cannot be solved as given */
        bool structural = probe == NULL || strstr(err.msg, ": $") != NULL ||
                          strstr(err.msg, "$.") != NULL;
        json_decref(probe);
        srv_reply_error(rep, rc == TSR_ETOOBIG ? 422 : structural ? 400 : 422, "%s", err.msg);
        return;
    }
    json_decref(probe);
    double bound = placement_bound(pz);
    if (pz->ncells > JM_MAX_CELLS) {
        srv_reply_error(rep, 422, "request body: the board has %d cells; the daemon's cap is %d",
                        pz->ncells, JM_MAX_CELLS);
    } else if (bound > JM_MAX_PLACEMENTS) {
        srv_reply_error(rep, 422,
                        "request body: up to %.0f placements to build; the daemon's cap is %d",
                        bound, JM_MAX_PLACEMENTS);
    } else if (opt.goal > 0 && opt.goal > pz->npieces * 1000) {
        srv_reply_error(rep, 422, "request body: $.options.goal: larger than the piece count");
    }
    if (rep->status >= 400) {
        tsr_puzzle_free(pz);
        return;
    }
    char *options = tsr_options_write_json(&opt);
    char *doc = malloc(len + 1);
    jm_job *j = calloc(1, sizeof *j);
    int64_t id = 0;
    if (options == NULL || doc == NULL || j == NULL) {
        rc = TSR_ENOMEM;
        tsr_err_set(&err, rc, "out of memory");
    } else {
        memcpy(doc, body, len);
        doc[len] = '\0';
        if (memchr(doc, '\0', len) != NULL)
            rc = tsr_err_set(&err, TSR_EINVAL, "request body: contains a NUL byte");
    }
    if (rc == 0) {
        pthread_mutex_lock(&m->db_mu);
        rc = sto_job_create(m->db, doc, options, opt.priority, &id, &err);
        pthread_mutex_unlock(&m->db_mu);
    }
    free(doc);
    if (rc != 0) {
        free(options);
        free(j);
        tsr_puzzle_free(pz);
        srv_reply_error(rep, rc == TSR_EINVAL ? 400 : 500, "%s", err.msg);
        return;
    }
    j->m = m;
    j->id = id;
    j->state = STO_QUEUED;
    j->priority = opt.priority;
    j->engine_version = TESSERA_ENGINE_VERSION;
    j->created = j->updated = (int64_t)time(NULL);
    j->options = options;
    j->cap = opt.threads;
    describe_puzzle(j, pz);
    tsr_puzzle_free(pz);
    pthread_mutex_lock(&m->mu);
    if (add_job(m, j) != 0) {
        pthread_mutex_unlock(&m->mu);
        free_job(j);
        srv_reply_error(rep, 500, "out of memory");
        return;
    }
    touch(m, j);
    reply_json(rep, 201, job_json(j, false));
    pthread_mutex_unlock(&m->mu);
    snprintf(rep->location, sizeof rep->location, "/api/v1/jobs/%lld", (long long)id);
}

static void op_list(void *ctx, const char *state, int64_t after, int limit, srv_reply *rep)
{
    jm_manager *m = ctx;
    enum sto_state filter;
    if (state != NULL && sto_state_parse(state, &filter) != 0) {
        srv_reply_error(rep, 400, "query parameter state: unknown state \"%s\"", state);
        return;
    }
    json_t *arr = json_array();
    int64_t last = 0;
    int n = 0;
    bool more = false;
    pthread_mutex_lock(&m->mu);
    for (int i = 0; i < m->njobs; i++) {
        jm_job *j = m->jobs[i];
        if (j->id <= after || (state != NULL && j->state != filter))
            continue;
        if (n == limit) {
            more = true;
            break;
        }
        json_array_append_new(arr, job_json(j, false));
        last = j->id;
        n++;
    }
    pthread_mutex_unlock(&m->mu);
    json_t *o = json_object();
    json_object_set_new(o, "jobs", arr);
    json_object_set_new(o, "next", more ? json_integer(last) : json_null());
    reply_json(rep, 200, o);
}

static void op_get(void *ctx, int64_t id, srv_reply *rep)
{
    jm_manager *m = ctx;
    pthread_mutex_lock(&m->mu);
    jm_job *j = find_job(m, id);
    if (j != NULL)
        reply_json(rep, 200, job_json(j, true));
    pthread_mutex_unlock(&m->mu);
    if (j == NULL)
        srv_reply_error(rep, 404, "no job %lld", (long long)id);
}

/* Wait (under mu) until the runner of j has acted on its `want`. */
static void wait_runner(jm_manager *m, jm_job *j, int64_t id)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += ACTION_WAIT_MS / 1000;
    while ((j = find_job(m, id)) != NULL && j->want != WANT_NONE && j->has_runner &&
           !j->runner_done && !m->shutdown)
        if (pthread_cond_timedwait(&m->changed, &m->mu, &until) == ETIMEDOUT)
            break;
}

static void op_action(void *ctx, int64_t id, const char *action, srv_reply *rep)
{
    jm_manager *m = ctx;
    tsr_err err = {{0}};
    pthread_mutex_lock(&m->mu);
    jm_job *j = find_job(m, id);
    if (j == NULL) {
        pthread_mutex_unlock(&m->mu);
        srv_reply_error(rep, 404, "no job %lld", (long long)id);
        return;
    }
    if (m->shutdown) {
        pthread_mutex_unlock(&m->mu);
        srv_reply_error(rep, 503, "tesserad is shutting down");
        return;
    }
    enum sto_state st = j->state;
    bool busy = j->has_runner && !j->runner_done;
    const char *sn = sto_state_name(st);
    int status = 200;
    enum sto_state store_state = st;
    bool store = false;
    if (strcmp(action, "pause") == 0) {
        if (sto_state_final(st)) {
            status = 409;
        } else if (busy) {
            j->want = WANT_PAUSE;
            touch(m, j);
            wait_runner(m, j, id);
        } else if (st == STO_QUEUED) {
            store = true;
            store_state = STO_PAUSED;
        }
    } else if (strcmp(action, "resume") == 0) {
        if (sto_state_final(st)) {
            status = 409;
        } else if (st == STO_PAUSED && !busy) {
            store = true;
            store_state = STO_QUEUED;
        }
    } else if (strcmp(action, "cancel") == 0) {
        if (sto_state_final(st)) {
            status = st == STO_CANCELLED ? 200 : 409;
        } else if (busy) {
            j->want = WANT_CANCEL;
            touch(m, j);
            wait_runner(m, j, id);
        } else {
            store = true;
            store_state = STO_CANCELLED;
        }
    } else if (strcmp(action, "delete") == 0) {
        if (!sto_state_final(st) || busy)
            status = 409;
        else
            store = true;
    } else {
        status = 404;
    }
    pthread_mutex_unlock(&m->mu);
    if (status == 409) {
        srv_reply_error(rep, 409, "job %lld is %s: %s", (long long)id, sn,
                        strcmp(action, "delete") == 0
                            ? "only completed, cancelled or failed jobs can be deleted; cancel "
                              "it first"
                            : "it has finished");
        return;
    }
    if (status == 404) {
        srv_reply_error(rep, 404, "no action \"%s\"", action);
        return;
    }
    int rc = 0;
    if (store) {
        pthread_mutex_lock(&m->db_mu);
        rc = strcmp(action, "delete") == 0 ? sto_job_delete(m->db, id, &err)
                                           : sto_job_set_state(m->db, id, store_state, NULL, &err);
        pthread_mutex_unlock(&m->db_mu);
    }
    pthread_mutex_lock(&m->mu);
    j = find_job(m, id);
    if (rc == 0 && store && j != NULL) {
        if (strcmp(action, "delete") == 0) {
            int i = 0;
            while (m->jobs[i] != j)
                i++;
            memmove(m->jobs + i, m->jobs + i + 1, (size_t)(m->njobs - i - 1) * sizeof *m->jobs);
            m->njobs--;
            pthread_cond_broadcast(&m->changed);
            free_job(j);
            j = NULL;
            rep->status = 204;
        } else if (!(j->has_runner && !j->runner_done)) {
            j->state = store_state;
            touch(m, j);
        }
    }
    if (rc == 0 && j != NULL)
        reply_json(rep, 200, job_json(j, false));
    pthread_mutex_unlock(&m->mu);
    if (rc != 0)
        srv_reply_error(rep, rc == TSR_EINVAL ? 409 : 500, "%s", err.msg);
}

/* The job's puzzle, read from the store (the caller frees it). */
static tsr_puzzle *job_puzzle(jm_manager *m, int64_t id, tsr_err *err)
{
    sto_job doc = {0};
    tsr_puzzle *pz = NULL;
    pthread_mutex_lock(&m->rd_mu);
    int rc = sto_job_get(m->rdb, id, &doc, err);
    pthread_mutex_unlock(&m->rd_mu);
    if (rc == 0)
        tsr_puzzle_read(doc.puzzle, strlen(doc.puzzle), "stored puzzle", &pz, NULL, err);
    sto_job_clear(&doc);
    return pz;
}

/* A stored solution body back into placements of pz. */
static int body_to_solution(const tsr_puzzle *pz, json_t *body, tsr_solution *sol,
                            tsr_placement *pl, tsr_cell *cells, int maxcells)
{
    json_t *pieces = json_object_get(body, "pieces"), *p;
    size_t i;
    int n = 0, used = 0;
    json_array_foreach(pieces, i, p) {
        const char *name = json_string_value(json_object_get(p, "name"));
        int piece = -1;
        for (int k = 0; name && k < pz->npieces && piece < 0; k++)
            if (strcmp(pz->pieces[k].name, name) == 0)
                piece = k;
        json_t *cs = json_object_get(p, "cells"), *c;
        size_t ci;
        if (piece < 0 || n >= pz->npieces * 64)
            return TSR_EINVAL;
        pl[n] = (tsr_placement){piece, 0, cells + used};
        json_array_foreach(cs, ci, c) {
            if (used >= maxcells)
                return TSR_EINVAL;
            cells[used++] = (tsr_cell){(int)json_integer_value(json_array_get(c, 0)),
                                       (int)json_integer_value(json_array_get(c, 1)),
                                       (int)json_integer_value(json_array_get(c, 2))};
            pl[n].ncells++;
        }
        n++;
    }
    *sol = (tsr_solution){n, pl};
    return 0;
}

static void op_solutions(void *ctx, int64_t id, int64_t after, int limit, bool text,
                         srv_reply *rep)
{
    jm_manager *m = ctx;
    tsr_err err = {{0}};
    pthread_mutex_lock(&m->mu);
    bool exists = find_job(m, id) != NULL;
    pthread_mutex_unlock(&m->mu);
    if (!exists) {
        srv_reply_error(rep, 404, "no job %lld", (long long)id);
        return;
    }
    tsr_puzzle *pz = text ? job_puzzle(m, id, &err) : NULL;
    if (text && pz == NULL) {
        srv_reply_error(rep, 500, "%s", err.msg);
        return;
    }
    char **bodies = NULL;
    int64_t *seqs = NULL;
    int n = 0;
    pthread_mutex_lock(&m->rd_mu);
    int rc = sto_solutions_page(m->rdb, id, after, limit, &bodies, &seqs, &n, &err);
    pthread_mutex_unlock(&m->rd_mu);
    if (rc != 0) {
        srv_reply_error(rep, rc == TSR_EINVAL ? 404 : 500, "%s", err.msg);
        return;
    }
    if (!text) {
        json_t *arr = json_array();
        for (int i = 0; i < n; i++) {
            json_t *b = json_loads(bodies[i], 0, NULL);
            if (b == NULL)
                b = json_object();
            json_object_set_new(b, "seq", json_integer(seqs[i]));
            json_array_append_new(arr, b);
        }
        json_t *o = json_object();
        json_object_set_new(o, "solutions", arr);
        json_object_set_new(o, "next", n == limit && n > 0 ? json_integer(seqs[n - 1]) : json_null());
        reply_json(rep, 200, o);
    } else {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        int maxcells = pz->ncells + 1;
        tsr_placement *pl = malloc((size_t)(pz->npieces * 64 + 1) * sizeof *pl);
        tsr_cell *cells = malloc((size_t)maxcells * sizeof *cells);
        for (int i = 0; f && pl && cells && i < n; i++) {
            json_t *b = json_loads(bodies[i], 0, NULL);
            tsr_solution sol;
            fprintf(f, "# solution %lld\n", (long long)seqs[i]);
            if (b && body_to_solution(pz, b, &sol, pl, cells, maxcells) == 0)
                tsr_write_solution_text(f, pz, &sol);
            else
                fprintf(f, "(unreadable)\n");
            fputc('\n', f);
            json_decref(b);
        }
        free(pl);
        free(cells);
        if (f)
            fclose(f);
        rep->status = 200;
        rep->text = buf;
        rep->text_len = len;
        rep->content_type = "text/plain; charset=utf-8";
    }
    sto_solutions_free(bodies, seqs, n);
    tsr_puzzle_free(pz);
}

static void op_puzzles(void *ctx, const char *name, srv_reply *rep)
{
    jm_manager *m = ctx;
    if (name == NULL) {
        json_t *arr = json_array();
        for (int i = 0; i < m->nlibrary; i++)
            json_array_append(arr, m->library[i].summary);
        json_t *o = json_object();
        json_object_set_new(o, "puzzles", arr);
        reply_json(rep, 200, o);
        return;
    }
    for (int i = 0; i < m->nlibrary; i++)
        if (strcmp(m->library[i].file, name) == 0) {
            FILE *f = fopen(m->library[i].path, "rb");
            char *buf = NULL;
            size_t len = 0;
            FILE *out = f ? open_memstream(&buf, &len) : NULL;
            char chunk[8192];
            size_t k;
            while (out && (k = fread(chunk, 1, sizeof chunk, f)) > 0)
                fwrite(chunk, 1, k, out);
            if (out)
                fclose(out);
            if (f)
                fclose(f);
            if (buf == NULL) {
                srv_reply_error(rep, 500, "cannot read %s", name);
                return;
            }
            rep->text = buf;
            rep->text_len = len;
            rep->content_type = strstr(name, ".json") ? "application/json; charset=utf-8"
                                                      : "text/plain; charset=utf-8";
            return;
        }
    srv_reply_error(rep, 404, "no puzzle \"%s\" in the library", name);
}

static void count_states(jm_manager *m, int counts[6])
{
    memset(counts, 0, 6 * sizeof *counts);
    for (int i = 0; i < m->njobs; i++)
        counts[m->jobs[i]->state]++;
}

static void op_health(void *ctx, srv_reply *rep)
{
    jm_manager *m = ctx;
    int counts[6];
    json_t *o = json_object(), *jobs = json_object();
    pthread_mutex_lock(&m->mu);
    count_states(m, counts);
    pthread_mutex_unlock(&m->mu);
    for (int s = 0; s < 6; s++)
        json_object_set_new(jobs, sto_state_name((enum sto_state)s), json_integer(counts[s]));
    json_object_set_new(o, "status", json_string("ok"));
    json_object_set_new(o, "version", json_string(m->cfg.version ? m->cfg.version : "?"));
    json_object_set_new(o, "engine_version", json_integer(TESSERA_ENGINE_VERSION));
    json_object_set_new(o, "jobs", jobs);
    json_object_set_new(o, "threads", json_integer(m->threads));
    json_object_set_new(o, "uptime_s", json_real(now_mono() - m->started));
    reply_json(rep, 200, o);
}

static void op_metrics(void *ctx, srv_reply *rep)
{
    jm_manager *m = ctx;
    int counts[6], busy = 0;
    uint64_t nodes = 0;
    int64_t sols = 0;
    pthread_mutex_lock(&m->mu);
    count_states(m, counts);
    for (int i = 0; i < m->njobs; i++) {
        nodes += m->jobs[i]->nodes;
        sols += m->jobs[i]->solutions;
        busy += m->jobs[i]->state == STO_RUNNING ? m->jobs[i]->threads : 0;
    }
    uint64_t cps = m->checkpoints;
    double cpsum = m->checkpoint_seconds_sum;
    pthread_mutex_unlock(&m->mu);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f == NULL) {
        srv_reply_error(rep, 500, "out of memory");
        return;
    }
    fprintf(f, "# HELP tessera_jobs Jobs by state.\n# TYPE tessera_jobs gauge\n");
    for (int s = 0; s < 6; s++)
        fprintf(f, "tessera_jobs{state=\"%s\"} %d\n", sto_state_name((enum sto_state)s), counts[s]);
    fprintf(f, "# HELP tessera_nodes_total Search nodes of the jobs kept.\n"
               "# TYPE tessera_nodes_total counter\ntessera_nodes_total %llu\n",
            (unsigned long long)nodes);
    fprintf(f, "# HELP tessera_solutions_total Solutions stored for the jobs kept.\n"
               "# TYPE tessera_solutions_total counter\ntessera_solutions_total %lld\n",
            (long long)sols);
    fprintf(f, "# HELP tessera_checkpoints_total Checkpoints committed since start.\n"
               "# TYPE tessera_checkpoints_total counter\ntessera_checkpoints_total %llu\n",
            (unsigned long long)cps);
    fprintf(f, "# HELP tessera_checkpoint_seconds_sum Seconds spent committing checkpoints.\n"
               "# TYPE tessera_checkpoint_seconds_sum counter\n"
               "tessera_checkpoint_seconds_sum %.6f\n", cpsum);
    fprintf(f, "# HELP tessera_threads Worker threads of the daemon.\n"
               "# TYPE tessera_threads gauge\ntessera_threads %d\n", m->threads);
    fprintf(f, "# HELP tessera_threads_busy Worker threads searching now.\n"
               "# TYPE tessera_threads_busy gauge\ntessera_threads_busy %d\n", busy);
    fclose(f);
    rep->text = buf;
    rep->text_len = len;
    rep->content_type = "text/plain; version=0.0.4; charset=utf-8";
}

static int64_t op_wait_change(void *ctx, int64_t id, int64_t seen, int timeout_ms)
{
    jm_manager *m = ctx;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += timeout_ms / 1000;
    until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&m->mu);
    jm_job *j;
    int64_t change = -1;
    while ((j = find_job(m, id)) != NULL && j->change == seen && !m->shutdown)
        if (pthread_cond_timedwait(&m->changed, &m->mu, &until) == ETIMEDOUT)
            break;
    if ((j = find_job(m, id)) != NULL)
        change = j->change;
    pthread_mutex_unlock(&m->mu);
    return change;
}

void jm_ops(jm_manager *m, srv_ops *ops)
{
    *ops = (srv_ops){.ctx = m, .submit = op_submit, .list = op_list, .get = op_get,
                     .action = op_action, .solutions = op_solutions, .puzzles = op_puzzles,
                     .health = op_health, .metrics = op_metrics, .wait_change = op_wait_change};
}

void jm_status_line(jm_manager *m, char *buf, size_t size)
{
    int counts[6];
    pthread_mutex_lock(&m->mu);
    count_states(m, counts);
    pthread_mutex_unlock(&m->mu);
    snprintf(buf, size, "%d running, %d queued, %d paused, %d completed", counts[STO_RUNNING],
             counts[STO_QUEUED], counts[STO_PAUSED], counts[STO_COMPLETED]);
}

/* ---- start and stop ---------------------------------------------------------------- */

static int lib_cmp(const void *a, const void *b)
{
    return strcmp(((const library_entry *)a)->file, ((const library_entry *)b)->file);
}

/* The bundled puzzles: every *.json file of the directory that reads. */
static void load_library(jm_manager *m, const char *dir)
{
    DIR *d = dir ? opendir(dir) : NULL;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (e->d_name[0] == '.' || n < 6 || strcmp(e->d_name + n - 5, ".json") != 0)
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        tsr_puzzle *pz = NULL;
        tsr_err err;
        if (tsr_puzzle_load_file(path, &pz, NULL, &err) != 0)
            continue;
        library_entry *lib = realloc(m->library, (size_t)(m->nlibrary + 1) * sizeof *lib);
        if (lib == NULL) {
            tsr_puzzle_free(pz);
            break;
        }
        m->library = lib;
        jm_job facts = {0};
        describe_puzzle(&facts, pz);
        json_t *s = json_object();
        json_object_set_new(s, "file", json_string(e->d_name));
        json_object_set_new(s, "name", facts.name ? json_string(facts.name) : json_null());
        json_object_set_new(s, "description",
                            pz->description ? json_string(pz->description) : json_null());
        json_object_set_new(s, "dimensions", json_integer(facts.dims));
        json_object_set_new(s, "cells", json_integer(facts.cells));
        json_object_set_new(s, "pieces", json_integer(facts.pieces));
        json_object_set_new(s, "expected", expected_json(facts.expected));
        free(facts.name);
        m->library[m->nlibrary++] = (library_entry){strdup(e->d_name), strdup(path), s};
        tsr_puzzle_free(pz);
    }
    if (d)
        closedir(d);
    if (m->nlibrary > 1)
        qsort(m->library, (size_t)m->nlibrary, sizeof *m->library, lib_cmp);
}

/* Every job of the store into the table; unfinished ones queued again. */
static int load_jobs(jm_manager *m, tsr_err *err)
{
    int64_t after = 0;
    for (;;) {
        sto_job *list = NULL;
        int n = 0;
        int rc = sto_job_list(m->db, NULL, after, 1000, &list, &n, err);
        if (rc)
            return rc;
        for (int i = 0; i < n && rc == 0; i++) {
            sto_job *s = &list[i];
            jm_job *j = calloc(1, sizeof *j);
            sto_job doc = {0};
            if (j == NULL || sto_job_get(m->db, s->id, &doc, err) != 0) {
                free(j);
                rc = TSR_ENOMEM;
                break;
            }
            *j = (jm_job){.m = m, .id = s->id, .state = s->state, .priority = s->priority,
                          .engine_version = s->engine_version, .created = s->created,
                          .updated = s->updated, .solutions = s->solutions, .nodes = s->nodes,
                          .fraction = s->fraction, .seconds = s->seconds};
            j->error = s->error ? strdup(s->error) : NULL;
            j->options = doc.options ? strdup(doc.options) : NULL;
            tsr_puzzle *pz = NULL;
            tsr_options opt;
            tsr_options_init(&opt);
            if (tsr_puzzle_read(doc.puzzle, strlen(doc.puzzle), "stored puzzle", &pz, NULL,
                                err) == 0) {
                describe_puzzle(j, pz);
                tsr_options_read_json(doc.options, strlen(doc.options), "stored options", pz,
                                      &opt, err);
                tsr_puzzle_free(pz);
            }
            j->cap = opt.threads;
            json_t *stats = s->stats ? json_loads(s->stats, 0, NULL) : NULL;
            json_t *cfg = json_object_get(stats, "config");
            if (json_is_string(cfg))
                j->config = strdup(json_string_value(cfg));
            json_t *levels = json_object_get(stats, "levels");
            j->levels = (int)json_array_size(levels);
            j->attempts = calloc((size_t)j->levels + 1, sizeof *j->attempts);
            j->fits = calloc((size_t)j->levels + 1, sizeof *j->fits);
            if (j->attempts && j->fits)
                stats_parse(s->stats, j->levels, j->attempts, j->fits);
            json_decref(stats);
            sto_job_clear(&doc);
            if (j->state == STO_RUNNING)
                j->state = STO_QUEUED; /* resumed by the scheduler */
            if (!sto_state_final(j->state) && j->engine_version != TESSERA_ENGINE_VERSION) {
                char why[256];
                snprintf(why, sizeof why,
                         "created by engine version %d; this tesserad runs engine version %d, "
                         "which numbers the search differently: submit the puzzle again",
                         j->engine_version, TESSERA_ENGINE_VERSION);
                sto_job_set_state(m->db, j->id, STO_FAILED, why, NULL);
                j->state = STO_FAILED;
                set_str(&j->error, why);
            }
            rc = add_job(m, j);
            after = s->id;
        }
        sto_jobs_free(list, n);
        if (rc)
            return rc;
        if (n < 1000)
            return 0;
    }
}

int jm_open(const jm_config *cfg, jm_manager **out, tsr_err *err)
{
    *out = NULL;
    jm_manager *m = calloc(1, sizeof *m);
    if (m == NULL)
        return tsr_err_set(err, TSR_ENOMEM, "out of memory");
    m->cfg = *cfg;
    if (m->cfg.checkpoint_seconds <= 0)
        m->cfg.checkpoint_seconds = JM_CHECKPOINT_SECONDS;
    m->threads = cfg->threads > 0 ? cfg->threads : tsr_cpu_count();
    m->started = now_mono();
    pthread_mutex_init(&m->db_mu, NULL);
    pthread_mutex_init(&m->rd_mu, NULL);
    pthread_mutex_init(&m->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_cond_init(&m->changed, &ca);
    pthread_condattr_destroy(&ca);
    int rc = sto_open(cfg->db_path, TESSERA_ENGINE_VERSION, &m->db, err);
    if (rc == 0)
        rc = sto_open(cfg->db_path, TESSERA_ENGINE_VERSION, &m->rdb, err);
    if (rc == 0)
        rc = load_jobs(m, err);
    if (rc == 0) {
        load_library(m, cfg->puzzles_dir);
        if (pthread_create(&m->scheduler, NULL, scheduler_main, m) != 0)
            rc = tsr_err_set(err, TSR_ENOMEM, "cannot start the scheduler thread");
        else
            m->has_scheduler = true;
    }
    if (rc != 0) {
        jm_close(m);
        return rc;
    }
    *out = m;
    return 0;
}

void jm_shutdown(jm_manager *m)
{
    if (m == NULL)
        return;
    pthread_mutex_lock(&m->mu);
    m->shutdown = true;
    pthread_cond_broadcast(&m->changed);
    pthread_mutex_unlock(&m->mu);
    if (m->has_scheduler) {
        pthread_join(m->scheduler, NULL);
        m->has_scheduler = false;
    }
    /* the runners see `shutdown` at their next checkpoint poll */
    for (int i = 0; i < m->njobs; i++) {
        jm_job *j = m->jobs[i];
        if (j->has_runner) {
            pthread_join(j->runner, NULL);
            j->has_runner = false;
        }
    }
    pthread_mutex_lock(&m->db_mu);
    sto_wal_checkpoint(m->db, true, NULL);
    pthread_mutex_unlock(&m->db_mu);
}

void jm_close(jm_manager *m)
{
    if (m == NULL)
        return;
    jm_shutdown(m);
    for (int i = 0; i < m->njobs; i++)
        free_job(m->jobs[i]);
    free(m->jobs);
    for (int i = 0; i < m->nlibrary; i++) {
        free(m->library[i].file);
        free(m->library[i].path);
        json_decref(m->library[i].summary);
    }
    free(m->library);
    sto_close(m->rdb);
    sto_close(m->db);
    pthread_mutex_destroy(&m->db_mu);
    pthread_mutex_destroy(&m->rd_mu);
    pthread_mutex_destroy(&m->mu);
    pthread_cond_destroy(&m->changed);
    free(m);
}
