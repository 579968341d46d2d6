/*
 * jobs.c - the job manager (see jobs.h): the job table, the scheduler,
 * start-up and shutdown.  run.c runs a job; api.c answers HTTP.
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
 * A job's life: submit (api.c) creates it in the store (queued, no
 * frontier: an empty frontier on a live job means "from the root").  The
 * scheduler (here) gives it threads and starts a runner (run.c), which prepares the
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
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "daemon/manager.h"

int jm_action_wait_ms = JM_ACTION_WAIT_MS;

void jm_store_failed(jm_manager *m, jm_job *j, const char *why)
{
    j->store_failures++;
    int shift = j->store_failures - 1 < 6 ? j->store_failures - 1 : 6;
    double wait = (double)(1 << shift) < RETRY_MAX_S ? (double)(1 << shift) : RETRY_MAX_S;
    j->retry_mono = base_now() + wait;
    j->retry_at = (int64_t)time(NULL) + (int64_t)wait;
    j->state = STO_QUEUED;
    j->want = WANT_NONE;
    char msg[TSR_ERR_MAX + 160];
    snprintf(msg, sizeof msg,
             "%s; the job keeps its last checkpoint and tries again in %.0f s "
             "(attempt %d)", why, wait, j->store_failures);
    jm_set_str(&j->error, msg);
    m->store_failures++;
    jm_set_str(&m->store_error, why);
    jm_touch(m, j);
}

void jm_store_ok(jm_manager *m, jm_job *j)
{
    /* only the store's own complaint goes: a note tesserad --repair left
     * on an unfinished job stays in view while it runs */
    if (j->store_failures > 0)
        jm_set_str(&j->error, NULL);
    j->store_failures = 0;
    j->retry_mono = 0;
    j->retry_at = 0;
    jm_set_str(&m->store_error, NULL);
}

char *jm_kept_error(const jm_job *j)
{
    return j->error != NULL && j->store_failures == 0 ? strdup(j->error) : NULL;
}

void jm_set_str(char **dst, const char *src)
{
    free(*dst);
    *dst = src ? strdup(src) : NULL;
}

/* ---- the job table (under mu) ---------------------------------------------- */

jm_job *jm_find(jm_manager *m, int64_t id)
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

int jm_add_job(jm_manager *m, jm_job *j)
{
    int rc = base_grow((void **)&m->jobs, &m->capjobs, (size_t)m->njobs, sizeof *m->jobs, 64, 0);
    if (rc)
        return rc;
    int i = m->njobs;
    while (i > 0 && m->jobs[i - 1]->id > j->id) { /* ids only grow: normally no move */
        m->jobs[i] = m->jobs[i - 1];
        i--;
    }
    m->jobs[i] = j;
    m->njobs++;
    return 0;
}

void jm_free_job(jm_job *j)
{
    if (j == NULL)
        return;
    free(j->name);
    free(j->options);
    json_decref(j->options_json);
    free(j->cached);
    free(j->config);
    free(j->error);
    free(j->attempts);
    free(j->fits);
    free(j->workers);
    free(j);
}

/* The options document in force, as text and parsed. */
void jm_set_options(jm_job *j, const char *text)
{
    jm_set_str(&j->options, text);
    json_decref(j->options_json);
    j->options_json = text ? json_loads(text, 0, NULL) : NULL;
}

void jm_touch(jm_manager *m, jm_job *j)
{
    j->change++;
    j->updated = (int64_t)time(NULL);
    pthread_cond_broadcast(&m->changed);
}

/* ---- documents -------------------------------------------------------------- */

/* Puzzle facts shown with a job. */
void jm_describe(jm_job *j, const tsr_puzzle *pz)
{
    jm_set_str(&j->name, pz->name);
    j->dims = tsr_puzzle_is_flat(pz) ? 2 : 3;
    j->cells = pz->ncells;
    j->pieces = 0;
    for (int i = 0; i < pz->npieces; i++)
        j->pieces += pz->pieces[i].fixed ? 0 : pz->pieces[i].count;
    memcpy(j->expected, pz->expected, sizeof j->expected);
}

json_t *jm_expected_json(const long long expected[3])
{
    json_t *e = json_object();
    for (int i = 0; i < 3; i++)
        if (expected[i] >= 0)
            json_object_set_new(e, tsr_unique_names[i], json_integer(expected[i]));
    return e;
}

json_t *jm_levels_json(int levels, const uint64_t *attempts, const uint64_t *fits)
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

/* The time left as docs/api.md gives it: seconds, null past a century
 * (never 1e17 s), and the range in words. */
static json_t *seconds_json(double s)
{
    return s < TSR_CENTURY_S ? json_real(s) : json_null();
}

json_t *jm_eta_json(double low, double high)
{
    char text[128];
    double mid = tsr_eta_middle(low, high);
    return json_pack("{s:o,s:o,s:o,s:s}", "low_s", seconds_json(low), "high_s",
                     seconds_json(high), "estimate_s", seconds_json(mid), "text",
                     tsr_duration_range(mid, low, high, text, sizeof text));
}

/* ---- the life cycle: what an action does, as a table (docs/api.md) ------------ */

/*                          no runner   a live runner */
static const jm_action actions[] = {
    {"pause", STO_PAUSED, WANT_PAUSE,
     {[STO_QUEUED] = {JM_STORE, JM_ASK},
      [STO_RUNNING] = {JM_NOOP, JM_ASK},
      [STO_PAUSED] = {JM_NOOP, JM_ASK},
      [STO_COMPLETED] = {JM_REFUSE, JM_REFUSE},
      [STO_CANCELLED] = {JM_REFUSE, JM_REFUSE},
      [STO_FAILED] = {JM_REFUSE, JM_REFUSE}},
     "it has finished"},
    {"resume", STO_QUEUED, WANT_NONE,
     {[STO_QUEUED] = {JM_NOOP, JM_NOOP},
      [STO_RUNNING] = {JM_NOOP, JM_NOOP},
      [STO_PAUSED] = {JM_STORE, JM_NOOP},
      [STO_COMPLETED] = {JM_REFUSE, JM_REFUSE},
      [STO_CANCELLED] = {JM_REFUSE, JM_REFUSE},
      [STO_FAILED] = {JM_REFUSE, JM_REFUSE}},
     "it has finished"},
    /* cancelling a cancelled job is answered like the first cancel */
    {"cancel", STO_CANCELLED, WANT_CANCEL,
     {[STO_QUEUED] = {JM_STORE, JM_ASK},
      [STO_RUNNING] = {JM_STORE, JM_ASK},
      [STO_PAUSED] = {JM_STORE, JM_ASK},
      [STO_COMPLETED] = {JM_REFUSE, JM_REFUSE},
      [STO_CANCELLED] = {JM_NOOP, JM_NOOP},
      [STO_FAILED] = {JM_REFUSE, JM_REFUSE}},
     "it has finished"},
    {"delete", STO_CANCELLED, WANT_NONE,
     {[STO_QUEUED] = {JM_REFUSE, JM_REFUSE},
      [STO_RUNNING] = {JM_REFUSE, JM_REFUSE},
      [STO_PAUSED] = {JM_REFUSE, JM_REFUSE},
      [STO_COMPLETED] = {JM_DELETE, JM_REFUSE},
      [STO_CANCELLED] = {JM_DELETE, JM_REFUSE},
      [STO_FAILED] = {JM_DELETE, JM_REFUSE}},
     "only completed, cancelled or failed jobs can be deleted; cancel it first"},
};

const jm_action *jm_action_find(const char *name)
{
    for (size_t k = 0; k < sizeof actions / sizeof *actions; k++)
        if (strcmp(name, actions[k].name) == 0)
            return &actions[k];
    return NULL;
}

enum jm_step jm_action_step(const jm_action *a, const jm_job *j)
{
    /* a finished job's runner is only leaving (op_action waits for it) */
    bool busy = j->has_runner && !j->runner_done && !sto_state_final(j->state);
    return busy ? a->in[j->state].busy : a->in[j->state].idle;
}

/* The actions that would change job j now (the dashboard's buttons). */
static json_t *actions_json(const jm_job *j)
{
    json_t *names = json_array();
    for (size_t k = 0; k < sizeof actions / sizeof *actions; k++) {
        enum jm_step step = jm_action_step(&actions[k], j);
        if (step != JM_REFUSE && step != JM_NOOP)
            json_array_append_new(names, json_string(actions[k].name));
    }
    return names;
}

/* The job object of docs/api.md (under mu). */
json_t *jm_job_json(const jm_job *j, bool with_stats)
{
    json_t *o = json_object();
    json_object_set_new(o, "id", json_integer(j->id));
    json_object_set_new(o, "name", j->name ? json_string(j->name) : json_null());
    json_object_set_new(o, "batch", j->batch ? json_integer(j->batch) : json_null());
    json_object_set_new(o, "state", json_string(sto_state_name(j->state)));
    json_object_set_new(o, "final", json_boolean(sto_state_final(j->state)));
    json_object_set_new(o, "actions", actions_json(j));
    json_object_set_new(o, "priority", json_integer(j->priority));
    json_object_set_new(o, "created", json_integer(j->created));
    json_object_set_new(o, "updated", json_integer(j->updated));
    json_object_set_new(o, "solutions", json_integer(j->solutions));
    json_object_set_new(o, "stored", json_integer(j->stored));
    json_t *p = json_object();
    json_object_set_new(p, "fraction", json_real(j->fraction));
    json_object_set_new(p, "nodes", json_integer((json_int_t)j->nodes));
    bool live = j->state == STO_RUNNING;
    json_object_set_new(p, "rate", json_real(live ? j->rate : 0));
    json_t *eta = live && j->has_eta ? jm_eta_json(j->eta_low, j->eta_high) : NULL;
    json_t *mid = eta ? json_object_get(eta, "estimate_s") : NULL;
    json_object_set_new(p, "eta_s", mid ? json_incref(mid) : json_null());
    json_object_set_new(p, "eta", eta ? eta : json_null());
    json_object_set_new(p, "seconds", json_real(j->seconds));
    json_object_set_new(o, "progress", p);
    const jm_backend *be = j->m ? j->m->cfg.backend : NULL;
    json_object_set_new(o, "threads", json_integer(!live ? 0 : be ? be->threads : j->threads));
    json_t *opt = j->options_json ? json_deep_copy(j->options_json) : NULL;
    json_object_set_new(o, "options", opt ? opt : json_object());
    json_object_set_new(o, "config", j->config ? json_string(j->config) : json_null());
    json_t *pz = json_object();
    json_object_set_new(pz, "name", j->name ? json_string(j->name) : json_null());
    json_object_set_new(pz, "dimensions", json_integer(j->dims));
    json_object_set_new(pz, "cells", json_integer(j->cells));
    json_object_set_new(pz, "pieces", json_integer(j->pieces));
    json_object_set_new(pz, "expected", jm_expected_json(j->expected));
    json_object_set_new(o, "puzzle", pz);
    json_object_set_new(o, "error", j->error ? json_string(j->error) : json_null());
    if (j->retry_at != 0 && j->state == STO_QUEUED)
        json_object_set_new(o, "retry_at", json_integer(j->retry_at));
    /* run.c cuts the count at the limit, so reaching it is what stopped the
     * search (fraction then says how far it got) */
    json_int_t limit = json_integer_value(json_object_get(j->options_json, "limit"));
    json_object_set_new(o, "limit_reached", json_boolean(j->state == STO_COMPLETED && limit > 0 &&
                                                         j->solutions >= limit));
    json_object_set_new(o, "engine_version", json_integer(j->engine_version));
    if (with_stats) {
        static const char *const doing[] = {"idle", "searching", "parked"};
        json_t *st = json_object(), *w = json_array();
        /* shown from the most pieces left down to 1: nothing is placed with
         * none left, so that level is always empty (the CLI's --stats skips
         * it too); checkpoints keep every level, which start-up counts */
        json_object_set_new(st, "levels", jm_levels_json(j->levels, j->attempts, j->fits));
        json_t *lv = json_object_get(st, "levels");
        size_t nl = json_array_size(lv);
        if (nl > 0 && json_integer_value(json_object_get(json_array_get(lv, nl - 1),
                                                         "pieces_left")) == 0)
            json_array_remove(lv, nl - 1);
        for (int k = 0; live && k < j->nworkers; k++)
            json_array_append_new(
                w, json_pack("{s:i,s:s,s:i,s:I,s:I}", "id", k, "state",
                             doing[j->workers[k].state], "depth", j->workers[k].depth, "nodes",
                             (json_int_t)j->workers[k].nodes, "tasks",
                             (json_int_t)j->workers[k].tasks));
        json_object_set_new(st, "workers", w);
        json_object_set_new(o, "stats", st);
    }
    return o;
}

/* Statistics as stored with a checkpoint. */
char *jm_stats_text(int levels, const uint64_t *attempts, const uint64_t *fits,
                        const char *config)
{
    json_t *o = json_object();
    json_object_set_new(o, "levels", jm_levels_json(levels, attempts, fits));
    if (config)
        json_object_set_new(o, "config", json_string(config));
    char *s = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return s;
}

/* Per-level counts from stored statistics into arrays of `levels`. */
void jm_stats_parse(const char *text, int levels, uint64_t *attempts, uint64_t *fits)
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
    double now = base_now();
    for (int i = 0; i < m->njobs; i++) {
        jm_job *j = m->jobs[i];
        j->assigned = 0;
        if ((j->state == STO_QUEUED || j->state == STO_RUNNING) && j->want == WANT_NONE &&
            (j->retry_mono == 0 || j->retry_mono <= now))
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

int jm_target_threads(jm_manager *m, const jm_job *j)
{
    int free = m->threads;
    for (int i = 0; i < m->njobs; i++) {
        const jm_job *k = m->jobs[i];
        if (k != j && k->has_runner && !k->runner_done)
            free -= k->threads;
    }
    int t = j->assigned < free ? j->assigned : free;
    return t > 0 ? t : 0;
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
                if (pthread_create(&j->runner, NULL, jm_runner_main, j) != 0) {
                    j->has_runner = false;
                    j->state = STO_QUEUED;
                }
                jm_touch(m, j);
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
            rc = jm_add_job(m, j);
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
    pthread_mutex_init(&m->db_mu, NULL);
    pthread_mutex_init(&m->rd_mu, NULL);
    pthread_mutex_init(&m->dec_mu, NULL);
    pthread_mutex_init(&m->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_cond_init(&m->changed, &ca);
    pthread_condattr_destroy(&ca);
    int rc = sto_claim_take(cfg->db_path, &m->claim, err);
    if (rc == 0)
        rc = check_store(m, cfg->db_path, err);
    if (rc == 0)
        rc = sto_open(cfg->db_path, TESSERA_ENGINE_VERSION, &m->db, err);
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
        jm_free_job(m->jobs[i]);
    free(m->jobs);
    free(m->store_error);
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
    pthread_mutex_destroy(&m->db_mu);
    pthread_mutex_destroy(&m->rd_mu);
    jm_decoders_free(m);
    pthread_mutex_destroy(&m->dec_mu);
    pthread_mutex_destroy(&m->mu);
    pthread_cond_destroy(&m->changed);
    free(m);
}
