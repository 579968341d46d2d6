/*
 * table.c - the job table and a job's record, at the bottom of the
 * daemon's rooms: what every other file of the daemon reads and changes
 * under the table's lock (mu), and nothing else.
 *
 * The rooms above it, each using only those below: main.c (the program),
 * api.c (the HTTP operations), batch.c (batches of jobs), door.c (what a
 * submission must pass), jobs.c (start-up, the scheduler, shutdown), run.c
 * (one job's search), decode.c (stored classes back into solutions) and
 * this file.  manager.h declares what they share.
 *
 * Here: a job's record (made from a submission, described from its
 * puzzle, its options, its JSON for the API), the table itself (find, add,
 * a change for the event streams), the life cycle's rules (what each
 * action does in each state, as a table), the store's refusals as the
 * table shows them, and the threads a running job may use now.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/base.h"
#include "daemon/manager.h"

void jm_store_failed(jm_manager *m, jm_job *j, const char *why)
{
    BASE_HELD(&m->mu);
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
    m->watched = 0; /* the scheduler looks at the claim at once: a lost file? */
    jm_touch(m, j);
}

void jm_store_ok(jm_manager *m, jm_job *j)
{
    BASE_HELD(&m->mu);
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
    JM_JOB_HELD(j);
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
    BASE_HELD(&m->mu);
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
    BASE_HELD(&m->mu);
    int rc = base_grow((void **)&m->jobs, &m->capjobs, (size_t)m->njobs, sizeof *m->jobs, 64, 0);
    if (rc)
        return rc;
    int i = m->njobs;
    while (i > 0 && m->jobs[i - 1]->id > j->id) { /* ids only grow: normally no move */
        m->jobs[i] = m->jobs[i - 1];
        i--;
    }
    assert(i == 0 || m->jobs[i - 1]->id < j->id); /* one entry per id */
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
    BASE_HELD(&m->mu);
    j->change++;
    j->updated = (int64_t)time(NULL);
    pthread_cond_broadcast(&m->changed);
}

/* ---- documents -------------------------------------------------------------- */

/* Puzzle facts shown with a job. */
void jm_describe(jm_job *j, const tsr_puzzle *pz)
{
    jm_set_str(&j->name, pz->name);
    /* a store written before names were capped may hold a longer one: every
     * listing shows this copy, cut on a character boundary */
    if (j->name != NULL && strlen(j->name) > JM_MAX_NAME) {
        size_t cut = JM_MAX_NAME - 3;
        while (cut > 0 && ((unsigned char)j->name[cut] & 0xc0) == 0x80)
            cut--;
        memcpy(j->name + cut, "\xe2\x80\xa6", 4); /* U+2026, and the NUL */
    }
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
    char text[128], estimate[32];
    double mid = tsr_eta_middle(low, high);
    return json_pack("{s:o,s:o,s:o,s:s,s:s}", "low_s", seconds_json(low), "high_s",
                     seconds_json(high), "estimate_s", seconds_json(mid), "estimate",
                     tsr_duration_text(mid, estimate, sizeof estimate), "text",
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
    JM_JOB_HELD(j);
    /* a finished job's runner is only leaving (op_action waits for it) */
    bool busy = j->has_runner && !j->runner_done && !sto_state_final(j->state);
    return busy ? a->in[j->state].busy : a->in[j->state].idle;
}

/* The actions that would change job j now (the dashboard's buttons). */
static json_t *actions_json(const jm_job *j)
{
    json_t *names = json_array();
    for (size_t k = 0; (j->m == NULL || j->m->lost == NULL) && k < sizeof actions / sizeof *actions;
         k++) {
        enum jm_step step = jm_action_step(&actions[k], j);
        if (step != JM_REFUSE && step != JM_NOOP)
            json_array_append_new(names, json_string(actions[k].name));
    }
    return names;
}

/* The job object of docs/api.md (under mu). */
json_t *jm_job_json(const jm_job *j, bool with_stats)
{
    JM_JOB_HELD(j);
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
    char elapsed[32]; /* the one duration format (tessera/eta.h): clients show it as is */
    json_object_set_new(p, "elapsed", json_string(tsr_duration_text(j->seconds, elapsed,
                                                                    sizeof elapsed)));
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

void jm_job_init(jm_job *j, jm_manager *m, int64_t id, int64_t batch, int64_t created,
                 const tsr_options *opt, const char *options, const tsr_puzzle *pz)
{
    j->m = m;
    j->id = id;
    j->batch = batch;
    j->state = STO_QUEUED;
    j->priority = opt->priority;
    j->engine_version = TESSERA_ENGINE_VERSION;
    j->created = j->updated = created; /* the store's, which a restart reads back */
    jm_set_options(j, options);
    j->cap = opt->threads;
    jm_describe(j, pz);
}

void jm_count_states(jm_manager *m, int counts[6])
{
    BASE_HELD(&m->mu);
    memset(counts, 0, 6 * sizeof *counts);
    for (int i = 0; i < m->njobs; i++)
        counts[m->jobs[i]->state]++;
}

int jm_target_threads(jm_manager *m, const jm_job *j)
{
    BASE_HELD(&m->mu);
    int free = m->threads;
    for (int i = 0; i < m->njobs; i++) {
        const jm_job *k = m->jobs[i];
        if (k != j && k->has_runner && !k->runner_done)
            free -= k->threads;
    }
    int t = j->assigned < free ? j->assigned : free;
    return t > 0 ? t : 0;
}

bool jm_refuse_lost(jm_manager *m, srv_reply *rep)
{
    base_lock(&m->mu);
    if (m->lost != NULL)
        srv_reply_error(rep, 503, "%s", m->lost);
    bool lost = m->lost != NULL;
    base_unlock(&m->mu);
    return lost;
}
