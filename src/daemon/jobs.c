/*
 * jobs.c - the job manager (see jobs.h): start-up, the scheduler, the
 * watch over the store's file, and shutdown.  table.c keeps the job table,
 * run.c runs a job, api.c answers HTTP (manager.h lists every room).
 *
 * Threads and locks.  HTTP threads, one scheduler thread and one runner
 * thread (and one committer thread, run.c) per running job share the
 * manager.  Its mutexes are taken in this order and never the other way
 * round (a thread may skip any of them):
 *   db_mu   the writer connection (creates, checkpoints, state changes);
 *   rd_mu   the reader connection (solution pages, puzzle documents);
 *   mu      the in-memory job table, every field of every jm_job, and the
 *           condition `changed`, broadcast whenever a job changes.
 * A run's own mutexes (run.c) are each taken with none of those held, and
 * hold none of them inside:
 *   cm_mu   the commit in flight and the first failed commit;
 *   sol_mu  the solutions found since the last checkpoint when one batch
 *           holds them (and the list of per-thread batches), taken by pool
 *           workers under the pool's out_mu and by the runner.
 * dec_mu, the decoder cache (api.c), is taken alone: with no other lock
 * held, and none taken under it.
 * No SQLite call is made while holding mu, so status requests never wait
 * for the disk.  A function documented "(under mu)" checks it in a debug
 * build (BASE_HELD, base.h), and every timed wait is on the one monotonic
 * clock (base_cond_wait).
 *
 * A job's life: submit (api.c) creates it in the store (queued, no
 * frontier: an empty frontier on a live job means "from the root").  The
 * scheduler (here) gives it threads and starts a runner (run.c), which prepares the
 * solver, pins the automatic choices in the stored options (so that every
 * later run builds the same tree and the stored frontier keeps its
 * meaning), then runs the pool from the stored frontier.  Each checkpoint
 * commits, in one transaction, the pool's frontier, the solutions found
 * since the previous one and the progress: that is the exactly-once rule
 * (taken with the workers parked, written by the committer while they
 * search on).
 * A pause, a new thread count, a preemption or shutdown ends the run at a
 * checkpoint; a cancel stops it at once and commits what was found.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "daemon/manager.h"
#include "geom/geom.h"

int jm_action_wait_ms = JM_ACTION_WAIT_MS;

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
    BASE_HELD(&m->mu);
    jm_job **q = malloc((size_t)(m->njobs ? m->njobs : 1) * sizeof *q);
    if (q == NULL)
        return;
    int n = 0;
    double now = base_now();
    for (int i = 0; i < m->njobs; i++) {
        jm_job *j = m->jobs[i];
        j->assigned = 0;
        if ((j->state == STO_QUEUED || j->state == STO_RUNNING) && j->want == WANT_NONE &&
            (j->retry_mono == 0 || j->retry_mono <= now))
            q[n++] = j;
    }
    qsort(q, (size_t)n, sizeof *q, by_priority);
    int left = m->lost != NULL ? 0 : m->threads; /* a lost store takes no more work */
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

static void log_line(jm_manager *m, const char *line)
{
    if (m->cfg.log != NULL)
        m->cfg.log(line);
}

/* Is the store's name still the file this daemon holds?  Once it is not
 * (deleted, or another file moved onto the name), nothing more may go
 * into the file by that name, and above all the write-ahead log beside it
 * must not be left for SQLite to replay onto another file.  So, once: the
 * log's frames go into the file held and the log is emptied, a copy of
 * the whole store is saved beside the name (STORE.rescued-TIME: nothing
 * committed is lost), both connections let go of the file (the reader
 * then reads the copy), and the daemon says so: /healthz 503, every write
 * 503, no job scheduled, one line in the log.  Takes db_mu, rd_mu and mu
 * in that order; called with none held. */
static void watch_store(jm_manager *m)
{
    tsr_err why = {{0}}, cerr = {{0}};
    if (sto_claim_check(m->claim, &why) == 0)
        return;
    char copy[4200];
    char stamp[32];
    time_t now = time(NULL);
    struct tm tm;
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", gmtime_r(&now, &tm));
    snprintf(copy, sizeof copy, "%s.rescued-%s", sto_claim_path(m->claim), stamp);
    base_lock(&m->db_mu);
    base_lock(&m->rd_mu);
    int rc = sto_backup(m->db, copy, &cerr);
    sto_detach(m->db, NULL, NULL);
    if (sto_detach(m->rdb, rc == 0 ? copy : NULL, rc == 0 ? &cerr : NULL) != 0)
        rc = TSR_EIO;
    base_unlock(&m->rd_mu);
    base_unlock(&m->db_mu);
    char line[2 * TSR_ERR_MAX + 4400];
    if (rc == 0)
        snprintf(line, sizeof line, "%s; the jobs as last committed were saved to %s (stop "
                 "tesserad, put that file in place, and start it again to go on)", why.msg,
                 copy);
    else
        snprintf(line, sizeof line, "%s; no copy could be saved (%s): the jobs stay readable "
                 "here until tesserad stops", why.msg, cerr.msg);
    base_lock(&m->mu);
    jm_set_str(&m->lost, line);
    for (int i = 0; i < m->njobs; i++) {
        jm_job *j = m->jobs[i];
        if (!sto_state_final(j->state)) { /* no retry is coming: say why */
            jm_set_str(&j->error, line);
            j->retry_at = 0;
        }
        jm_touch(m, j);
    }
    pthread_cond_broadcast(&m->changed);
    base_unlock(&m->mu);
    log_line(m, line);
}

static void *scheduler_main(void *arg)
{
    jm_manager *m = arg;
    base_lock(&m->mu);
    while (!m->shutdown) {
        if (m->lost == NULL && base_now() - m->watched >= JM_WATCH_SECONDS) {
            base_unlock(&m->mu);
            watch_store(m);
            base_lock(&m->mu);
            m->watched = base_now();
        }
        assign_threads(m);
        for (int i = 0; i < m->njobs; i++) {
            jm_job *j = m->jobs[i];
            if (j->has_runner && j->runner_done) {
                /* take the finished runner's handle first: once mu is let
                 * go a delete may free the job (forget_job), so nothing of
                 * j is touched after */
                pthread_t t = j->runner;
                j->has_runner = j->runner_done = false;
                base_unlock(&m->mu);
                pthread_join(t, NULL);
                base_lock(&m->mu);
                i = -1; /* the table may have changed meanwhile */
                continue;
            }
            if (!j->has_runner && j->assigned > 0 && j->state == STO_QUEUED) {
                j->has_runner = true;
                j->runner_done = false;
                j->state = STO_RUNNING;
                j->threads = 0;
                if (pthread_create(&j->runner, NULL, jm_runner_main, j) != 0) {
                    j->has_runner = false;
                    j->state = STO_QUEUED;
                }
                jm_touch(m, j);
            }
        }
        base_cond_wait(&m->changed, &m->mu, base_now() + JM_WATCH_SECONDS);
    }
    base_unlock(&m->mu);
    return NULL;
}

/* ---- start and stop ---------------------------------------------------------------- */

/* The byte count in a cgroup limit file, or 0 for none ("max", a missing
 * or unreadable file). */
static double read_limit(const char *file)
{
    FILE *f = fopen(file, "r");
    char line[64];
    double limit = 0;
    if (f != NULL && fgets(line, sizeof line, f) != NULL) {
        char *end;
        limit = strtod(line, &end);
        if (end == line || !(limit > 0))
            limit = 0;
    }
    if (f != NULL)
        fclose(f);
    return limit;
}

/* The smallest limit in ROOT/CG/FILE over the cgroup CG and each of its
 * ancestors up to ROOT itself (0: none).  A service's limit is on its own
 * cgroup (systemd's MemoryMax=), a slice's on an ancestor. */
static double cgroup_limit(const char *root, const char *cg, const char *file)
{
    char dir[PATH_MAX], name[2 * PATH_MAX];
    snprintf(dir, sizeof dir, "%s", cg[0] == '/' ? cg : "/");
    double least = 0;
    for (;;) {
        snprintf(name, sizeof name, "%s%s/%s", root, strcmp(dir, "/") == 0 ? "" : dir, file);
        double v = read_limit(name);
        if (v > 0 && (least == 0 || v < least))
            least = v;
        char *slash = strrchr(dir, '/');
        if (slash == dir && dir[1] == '\0')
            break;
        if (slash == dir)
            dir[1] = '\0';
        else
            *slash = '\0';
    }
    return least;
}

/* This process's cgroup memory limit (bytes; 0: none found), from the
 * cgroups /proc/self/cgroup names: the v2 line ("0::/path", memory.max
 * under /sys/fs/cgroup, or /sys/fs/cgroup/unified on a hybrid system) and
 * the v1 memory controller's (memory.limit_in_bytes under
 * /sys/fs/cgroup/memory; "unlimited" there is a huge number, which the
 * machine's memory then undercuts). */
static double cgroup_memory_limit(void)
{
    FILE *f = fopen("/proc/self/cgroup", "r");
    if (f == NULL)
        return 0;
    double least = 0;
    char line[PATH_MAX + 128];
    while (fgets(line, sizeof line, f) != NULL) {
        line[strcspn(line, "\n")] = '\0';
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (c2 == NULL)
            continue;
        *c1 = *c2 = '\0';
        const char *controllers = c1 + 1, *cg = c2 + 1;
        double v = 0, w = 0;
        if (strcmp(line, "0") == 0 && controllers[0] == '\0') {
            v = cgroup_limit("/sys/fs/cgroup", cg, "memory.max");
            w = cgroup_limit("/sys/fs/cgroup/unified", cg, "memory.max");
        } else {
            /* v1: "memory" is one of the comma-separated controllers */
            char list[256];
            snprintf(list, sizeof list, ",%s,", controllers);
            if (strstr(list, ",memory,") != NULL)
                v = cgroup_limit("/sys/fs/cgroup/memory", cg, "memory.limit_in_bytes");
        }
        if (w > 0 && (v == 0 || w < v))
            v = w;
        if (v > 0 && (least == 0 || v < least))
            least = v;
    }
    fclose(f);
    return least;
}

double jm_default_max_memory(void)
{
    double total = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    double limit = cgroup_memory_limit();
    if (limit > 0 && (total <= 0 || limit < total))
        total = limit;
    return total > 0 ? total / 2 : 0;
}

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
        if (base_grow((void **)&m->library, &m->caplibrary, (size_t)m->nlibrary,
                      sizeof *m->library, 16, 0) != 0) {
            tsr_puzzle_free(pz);
            break;
        }
        jm_job facts = {0};
        jm_describe(&facts, pz);
        json_t *s = json_object();
        json_object_set_new(s, "file", json_string(e->d_name));
        json_object_set_new(s, "name", facts.name ? json_string(facts.name) : json_null());
        json_object_set_new(s, "description",
                            pz->description ? json_string(pz->description) : json_null());
        json_object_set_new(s, "lattice", json_string(tsr_lattice_names[pz->lattice]));
        json_object_set_new(s, "dimensions", json_integer(facts.dims));
        json_object_set_new(s, "cells", json_integer(facts.cells));
        json_object_set_new(s, "pieces", json_integer(facts.pieces));
        json_object_set_new(s, "expected", jm_expected_json(facts.expected));
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
            *j = (jm_job){.m = m, .id = s->id, .batch = s->batch, .state = s->state, .priority = s->priority,
                          .engine_version = s->engine_version, .created = s->created,
                          .updated = s->updated, .solutions = s->solutions,
                          .stored = s->stored, .legacy = s->legacy, .nodes = s->nodes,
                          .fraction = s->fraction, .seconds = s->seconds};
            j->error = s->error ? strdup(s->error) : NULL;
            jm_set_options(j, doc.options);
            tsr_puzzle *pz = NULL;
            tsr_options opt;
            tsr_options_init(&opt);
            if (tsr_puzzle_read(doc.puzzle, strlen(doc.puzzle), "stored puzzle", &pz, NULL,
                                err) == 0) {
                jm_describe(j, pz);
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
                jm_stats_parse(s->stats, j->levels, j->attempts, j->fits);
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
                jm_set_str(&j->error, why);
            }
            /* no other thread runs yet; the table's rule holds all the same */
            base_lock(&m->mu);
            rc = jm_add_job(m, j);
            base_unlock(&m->mu);
            after = s->id;
        }
        sto_jobs_free(list, n);
        if (rc)
            return rc;
        if (n < 1000)
            return 0;
    }
}

/* The check of an existing store at start-up, bounded to a few seconds
 * (tesserad --check runs the whole of it): a damaged store is refused,
 * never resumed. */
#define START_CHECK_SECONDS 3.0

static int check_store(jm_manager *m, const char *path, tsr_err *err)
{
    if (access(path, F_OK) != 0)
        return 0; /* a new store */
    char *report = NULL;
    int rc = sto_check(path, false, START_CHECK_SECONDS, &report, err);
    if (rc == 0 && report != NULL && strstr(report, "\nnot finished in time") != NULL) {
        char note[PATH_MAX + 256]; /* said, so that a store the 3 s did not cover is known */
        snprintf(note, sizeof note, "the store's check at start-up took its %g s before the "
                 "end: the rest is unchecked, not damaged ('tesserad --check --db %s' checks it "
                 "all, beside the daemon)", START_CHECK_SECONDS, path);
        m->check_note = strdup(note);
    }
    if (rc == TSR_EIO && report != NULL) {
        /* the first finding (the report's second line) fits the message;
         * the whole report may not */
        const char *first = strchr(report, '\n');
        first = first != NULL ? first + 1 : report;
        int n = (int)strcspn(first, "\n");
        rc = tsr_err_set(err, TSR_EIO, "the store %s is damaged; nothing was changed.  Found: "
                         "%.*s%s.  Run 'tesserad --check --db %s' for the whole report, "
                         "'tesserad --repair --db %s' to mend damaged solution chunks, and see "
                         "docs/store.md (recovery)", path, n < 200 ? n : 200, first,
                         n < 200 ? "" : "...", path, path);
    }
    free(report);
    return rc;
}

const char *jm_check_note(const jm_manager *m)
{
    return m->check_note;
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
    m->threads = cfg->backend ? cfg->backend->slots
                 : cfg->threads > 0 ? cfg->threads : tsr_cpu_count();
    m->started = base_now();
    jm_action_wait_ms = cfg->action_wait_ms > 0 ? cfg->action_wait_ms : JM_ACTION_WAIT_MS;
    m->max_memory = cfg->max_memory < 0    ? 0
                    : cfg->max_memory > 0 ? cfg->max_memory
                                          : jm_default_max_memory();
    base_mutex_init(&m->db_mu);
    base_mutex_init(&m->rd_mu);
    base_mutex_init(&m->dec_mu);
    base_mutex_init(&m->mu);
    base_cond_init(&m->changed);
    int rc = sto_claim_take(cfg->db_path, &m->claim, err);
    if (rc == 0 && sto_claim_note(m->claim)[0] != '\0')
        log_line(m, sto_claim_note(m->claim));
    if (rc == 0)
        rc = check_store(m, cfg->db_path, err);
    if (rc == 0)
        rc = sto_open_claimed(m->claim, TESSERA_ENGINE_VERSION, &m->db, err);
    if (rc == 0)
        rc = sto_open_claimed(m->claim, TESSERA_ENGINE_VERSION, &m->rdb, err);
    if (rc == 0)
        sto_claim_note_wal(m->claim);
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
    base_lock(&m->mu);
    m->shutdown = true;
    pthread_cond_broadcast(&m->changed);
    base_unlock(&m->mu);
    if (m->has_scheduler) {
        pthread_join(m->scheduler, NULL);
        m->has_scheduler = false;
    }
    /* the runners see `shutdown` at their next checkpoint poll.  Only
     * this thread sets has_runner now (the scheduler is joined, the server
     * stopped), so it reads it without the lock; but the runners still
     * running read every job's under mu (jm_target_threads), so it is
     * cleared under mu */
    for (int i = 0; i < m->njobs; i++) {
        jm_job *j = m->jobs[i];
        if (j->has_runner) {
            pthread_join(j->runner, NULL);
            base_lock(&m->mu);
            j->has_runner = false;
            base_unlock(&m->mu);
        }
    }
    base_lock(&m->db_mu);
    sto_wal_checkpoint(m->db, true, NULL);
    base_unlock(&m->db_mu);
}

void jm_close(jm_manager *m)
{
    if (m == NULL)
        return;
    jm_shutdown(m);
    for (int i = 0; i < m->njobs; i++)
        jm_free_job(m->jobs[i]);
    free(m->jobs);
    free(m->store_error);
    free(m->lost);
    free(m->check_note);
    for (int i = 0; i < m->nlibrary; i++) {
        free(m->library[i].file);
        free(m->library[i].path);
        json_decref(m->library[i].summary);
    }
    free(m->library);
    sto_close(m->rdb);
    sto_close(m->db);
    sto_claim_release(m->claim);
    base_mutex_destroy(&m->db_mu);
    base_mutex_destroy(&m->rd_mu);
    jm_decoders_free(m);
    base_mutex_destroy(&m->dec_mu);
    base_mutex_destroy(&m->mu);
    pthread_cond_destroy(&m->changed);
    free(m);
}

void jm_status_line(jm_manager *m, char *buf, size_t size)
{
    int counts[6];
    base_lock(&m->mu);
    jm_count_states(m, counts);
    base_unlock(&m->mu);
    snprintf(buf, size, "%d running, %d queued, %d paused, %d completed", counts[STO_RUNNING],
             counts[STO_QUEUED], counts[STO_PAUSED], counts[STO_COMPLETED]);
}
