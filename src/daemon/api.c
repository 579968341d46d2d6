/*
 * api.c - the operations the HTTP server calls (srv_ops), on the server's
 * threads.  Status comes from the in-memory table under mu; solutions and
 * stored documents from the reader connection; creates, state changes and
 * deletes go through the writer connection.  A pause or cancel of a
 * running job is a request to its runner, which the call waits for.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <assert.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon/manager.h"

/* ---- operations for the server ---------------------------------------------------- */

static void reply_json(srv_reply *rep, int status, json_t *j)
{
    rep->status = status;
    rep->json = j;
}

static void op_validate(void *ctx, const char *body, size_t len, srv_reply *rep)
{
    tsr_puzzle *pz = NULL;
    tsr_options opt;
    json_t *fits = NULL;
    if (!jm_read_submission(ctx, body, len, &pz, &opt, rep))
        return;
    if (!jm_check_fits(ctx, pz, &opt, &fits, rep)) {
        tsr_puzzle_free(pz);
        return;
    }
    jm_job facts = {0};
    jm_describe(&facts, pz);
    json_t *summary = json_object(), *o = json_object();
    json_object_set_new(summary, "name", facts.name ? json_string(facts.name) : json_null());
    json_object_set_new(summary, "dimensions", json_integer(facts.dims));
    json_object_set_new(summary, "cells", json_integer(facts.cells));
    json_object_set_new(summary, "pieces", json_integer(facts.pieces));
    json_object_set_new(summary, "expected", jm_expected_json(facts.expected));
    json_object_set_new(summary, "fits", fits);
    free(facts.name);
    char *options = tsr_options_write_json(&opt);
    json_t *pj = jm_puzzle_json(pz), *oj = options ? json_loads(options, 0, NULL) : NULL;
    free(options);
    tsr_puzzle_free(pz);
    if (pj == NULL || oj == NULL) {
        json_decref(pj);
        json_decref(oj);
        json_decref(summary);
        json_decref(o);
        srv_reply_error(rep, 500, "out of memory");
        return;
    }
    json_object_set_new(o, "puzzle", pj);
    json_object_set_new(o, "options", oj);
    json_object_set_new(o, "summary", summary);
    reply_json(rep, 200, o);
}

/* A file name for pz in a format: its name's letters and digits, other
 * runs as one '-', at most 64 of them; "puzzle" when nothing is left. */
static void file_name(const tsr_puzzle *pz, enum tsr_format format, char *out, size_t cap)
{
    size_t n = 0;
    for (const char *p = pz->name ? pz->name : ""; *p && n < 64; p++) {
        char c = *p;
        bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        if (keep)
            out[n++] = c;
        else if (n > 0 && out[n - 1] != '-')
            out[n++] = '-';
    }
    while (n > 0 && out[n - 1] == '-')
        n--;
    out[n] = '\0';
    snprintf(out + n, cap - n, "%s%s", n ? "" : "puzzle", tsr_format_extension(format));
}

/* POST /api/v1/convert?to=FORMAT: the body read as a submit body (400 for
 * its shape, 422 for a puzzle the reader refuses), then written whole in
 * FORMAT by the library's one writer (tsr_puzzle_write, as `tessera
 * convert`); what the format cannot express is 422, named.  Nothing is
 * solved or stored: the door's costly checks do not apply. */
static void op_convert(void *ctx, const char *to, const char *body, size_t len, srv_reply *rep)
{
    (void)ctx;
    int format = tsr_format_parse(to);
    if (format < 0) {
        srv_reply_error(rep, 400, "query parameter to: %s json, polycube or xmpuzzle%s%.20s%s",
                        to[0] ? "expected" : "required:", to[0] ? ", got \"" : "", to,
                        to[0] ? "\"" : "");
        return;
    }
    tsr_puzzle *pz = NULL;
    tsr_options opt;
    if (!jm_read_puzzle(body, len, &pz, &opt, rep))
        return;
    char *out = NULL;
    size_t n = 0;
    tsr_err err = {{0}};
    int rc = tsr_puzzle_write(pz, (enum tsr_format)format, &out, &n, &err);
    if (rc != 0) {
        srv_reply_error(rep, rc == TSR_ENOMEM ? 500 : 422, "request body: cannot be written as %s: %s",
                        tsr_format_names[format], err.msg);
    } else {
        rep->status = 200;
        rep->text = out;
        rep->text_len = n;
        rep->content_type = tsr_format_media_type((enum tsr_format)format);
        file_name(pz, (enum tsr_format)format, rep->filename, sizeof rep->filename);
    }
    tsr_puzzle_free(pz);
}

/* POST /api/v1/estimate.  Its cost is bounded: the descents stop after
 * EST_SECONDS, the timing run after EST_RATE_SECONDS, on the calling
 * server thread; preparing the solver comes on top, given up after
 * EST_PREP_SECONDS.  At most EST_CONCURRENT run at once, so estimates cannot take the
 * cores from the jobs; the rest are told to retry (503). */
#define EST_SECONDS 2.0
#define EST_RATE_SECONDS 0.5
#define EST_PROBES 1000000L
#define EST_CONCURRENT 2
#define EST_PREP_SECONDS 10.0 /* a preparation longer than this is a job's work */

static void op_estimate(void *ctx, const char *body, size_t len, srv_reply *rep)
{
    static atomic_int running;
    jm_manager *m = ctx;
    tsr_puzzle *pz = NULL;
    tsr_options opt;
    if (!jm_read_submission(ctx, body, len, &pz, &opt, rep))
        return;
    if (atomic_fetch_add(&running, 1) >= EST_CONCURRENT) {
        atomic_fetch_sub(&running, 1);
        tsr_puzzle_free(pz);
        srv_reply_error(rep, 503, "%d estimates are running already; try again in a few seconds",
                        EST_CONCURRENT);
        return;
    }
    tsr_solver *s = NULL;
    tsr_err err = {{0}};
    jm_deadline es = {m, base_now() + EST_PREP_SECONDS}; /* or at shutdown */
    int rc = tsr_solver_prepare(pz, &opt, &(tsr_stop){jm_deadline_passed, &es}, &s, &err);
    if (rc == TSR_ECANCELED) {
        srv_reply_error(rep, 422, "request body: preparing this puzzle takes more than %.0f s "
                        "(its pieces have very many placements): submit it as a job, which "
                        "can be paused or cancelled while it prepares", EST_PREP_SECONDS);
    } else if (rc != 0) {
        srv_reply_error(rep, rc == TSR_ENOMEM ? 500 : 422, "request body: %s",
                        err.msg[0] ? err.msg : tsr_strerror(rc));
    } else {
        tsr_estimate e;
        tsr_rate r;
        tsr_fit *fits = malloc((size_t)(pz->npieces ? pz->npieces : 1) * sizeof *fits);
        rc = fits == NULL ? TSR_ENOMEM : tsr_solver_fits(s, fits, &err);
        if (rc == TSR_EINVAL) {
            srv_reply_error(rep, 422, "request body: $.puzzle: %s", err.msg);
            free(fits);
            tsr_solver_free(s);
            tsr_puzzle_free(pz);
            atomic_fetch_sub(&running, 1);
            return;
        }
        if (rc == 0)
            rc = tsr_solver_estimate(s, EST_PROBES, EST_SECONDS, 1, &e);
        if (rc == 0)
            rc = tsr_solver_rate(s, EST_RATE_SECONDS, &r);
        char *text = NULL;
        if (rc == 0) {
            tsr_estimate_merge(&e, &r);
            text = tsr_estimate_json(&e, &r, m->threads > 0 ? m->threads : 1,
                                     tsr_solver_config(s));
        }
        json_t *j = text ? json_loads(text, 0, NULL) : NULL;
        free(text);
        char *ftext = j != NULL ? tsr_fits_json(pz, fits) : NULL;
        json_t *fj = ftext ? json_loads(ftext, 0, NULL) : NULL;
        free(ftext);
        if (j != NULL && (fj == NULL || json_object_update(j, fj) != 0)) {
            json_decref(j);
            j = NULL;
        }
        json_decref(fj);
        if (j != NULL)
            reply_json(rep, 200, j);
        else
            srv_reply_error(rep, 500, "estimate failed: %s",
                            tsr_strerror(rc ? rc : TSR_ENOMEM));
        free(fits);
    }
    tsr_solver_free(s);
    tsr_puzzle_free(pz);
    atomic_fetch_sub(&running, 1);
}

/* The status of an action the store refused: 409 for a conflict (the
 * job changed meanwhile), 503 when the store cannot be written (a full
 * disk, a read-only file, a file gone from its name), 500 else. */
static int action_status(int rc)
{
    return rc == TSR_EINVAL ? 409 : rc == TSR_EIO || rc == TSR_ESTALE ? 503 : 500;
}

static void op_submit(void *ctx, const char *body, size_t len, srv_reply *rep)
{
    jm_manager *m = ctx;
    tsr_puzzle *pz = NULL;
    tsr_options opt;
    tsr_err err = {{0}};
    int rc = 0;
    if (jm_refuse_lost(m, rep) || !jm_read_submission(ctx, body, len, &pz, &opt, rep))
        return;
    if (!jm_check_fits(m, pz, &opt, NULL, rep)) {
        tsr_puzzle_free(pz);
        return;
    }
    char *options = tsr_options_write_json(&opt);
    char *doc = malloc(len + 1);
    jm_job *j = calloc(1, sizeof *j);
    int64_t id = 0, created = 0;
    if (options == NULL || doc == NULL || j == NULL) {
        rc = TSR_ENOMEM;
        tsr_err_set(&err, rc, "out of memory");
    } else {
        memcpy(doc, body, len); /* no NUL inside: the JSON reader refused those */
        doc[len] = '\0';
    }
    if (rc == 0) {
        base_lock(&m->db_mu);
        rc = sto_job_create(m->db, doc, options, opt.priority, &id, &created, &err);
        base_unlock(&m->db_mu);
    }
    free(doc);
    if (rc != 0) {
        free(options);
        free(j);
        tsr_puzzle_free(pz);
        srv_reply_error(rep, rc == TSR_EINVAL ? 400 : action_status(rc), "%s", err.msg);
        return;
    }
    jm_job_init(j, m, id, 0, created, &opt, options, pz);
    free(options);
    tsr_puzzle_free(pz);
    base_lock(&m->mu);
    if (jm_add_job(m, j) != 0) {
        base_unlock(&m->mu);
        jm_free_job(j);
        srv_reply_error(rep, 500, "out of memory");
        return;
    }
    jm_touch(m, j);
    reply_json(rep, 201, jm_job_json(j, false));
    base_unlock(&m->mu);
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
    size_t bytes = 0;
    bool cut = false; /* the page ends at its byte budget, with jobs after it */
    base_lock(&m->mu);
    for (int i = 0; i < m->njobs && n < limit; i++) {
        jm_job *j = m->jobs[i];
        if (j->id <= after || (state != NULL && j->state != filter))
            continue;
        if (bytes >= JM_PAGE_BYTES) {
            cut = true;
            break;
        }
        json_t *o = jm_job_json(j, false);
        bytes += json_dumpb(o, NULL, 0, JSON_COMPACT);
        json_array_append_new(arr, o);
        last = j->id;
        n++;
    }
    base_unlock(&m->mu);
    json_t *o = json_object();
    json_object_set_new(o, "jobs", arr);
    /* as for solutions: a full page (or one cut at its budget) may have a
     * next one; a short page is the end */
    json_object_set_new(o, "next", n == limit || cut ? json_integer(last) : json_null());
    reply_json(rep, 200, o);
}

/* Status is what pollers ask for most: the answer is encoded once per
 * change of the job and copied out after that. */
static void op_get(void *ctx, int64_t id, srv_reply *rep)
{
    jm_manager *m = ctx;
    base_lock(&m->mu);
    jm_job *j = jm_find(m, id);
    if (j != NULL && (j->cached == NULL || j->cached_change != j->change)) {
        json_t *o = jm_job_json(j, true);
        free(j->cached);
        j->cached = o ? json_dumps(o, JSON_COMPACT) : NULL;
        j->cached_len = j->cached ? strlen(j->cached) : 0;
        j->cached_change = j->change;
        json_decref(o);
    }
    if (j != NULL && j->cached != NULL && (rep->text = malloc(j->cached_len + 1)) != NULL) {
        memcpy(rep->text, j->cached, j->cached_len + 1);
        rep->text_len = j->cached_len;
        rep->content_type = "application/json; charset=utf-8";
    }
    base_unlock(&m->mu);
    if (j == NULL)
        srv_reply_error(rep, 404, "no job %lld", (long long)id);
    else if (rep->text == NULL)
        srv_reply_error(rep, 500, "out of memory");
}

/* Wait (under mu), at most ACTION_WAIT_MS, while job `id` has a runner
 * still at work on what `busy` says: acting on its `want` (acting) or
 * leaving a finished job (leaving).  Returns the job, NULL once it is
 * gone. */
static jm_job *wait_runner(jm_manager *m, int64_t id, bool (*busy)(const jm_job *))
{
    BASE_HELD(&m->mu);
    double until = base_now() + ACTION_WAIT_MS / 1000; /* whole seconds: jm_config */
    jm_job *j;
    while ((j = jm_find(m, id)) != NULL && busy(j) && j->has_runner && !j->runner_done &&
           !m->shutdown)
        if (base_cond_wait(&m->changed, &m->mu, until) == ETIMEDOUT)
            break;
    return j;
}

static bool acting(const jm_job *j) { return j->want != WANT_NONE; }
static bool leaving(const jm_job *j) { return sto_state_final(j->state); }

/* Drop job j from the table (under mu; it is freed). */
static void forget_job(jm_manager *m, jm_job *j)
{
    BASE_HELD(&m->mu);
    int i = 0;
    while (m->jobs[i] != j)
        i++;
    memmove(m->jobs + i, m->jobs + i + 1, (size_t)(m->njobs - i - 1) * sizeof *m->jobs);
    m->njobs--;
    pthread_cond_broadcast(&m->changed);
    /* a runner that finished but was not joined yet (op_action refuses a
     * live one): joined here, as the scheduler will not see the job again;
     * it needs mu no more, so holding it cannot block the join */
    assert(!j->has_runner || j->runner_done);
    if (j->has_runner)
        pthread_join(j->runner, NULL);
    jm_free_job(j);
}

static void op_action(void *ctx, int64_t id, const char *action, srv_reply *rep)
{
    jm_manager *m = ctx;
    const jm_action *rule = jm_action_find(action);
    tsr_err err = {{0}};
    if (jm_refuse_lost(m, rep))
        return;
    base_lock(&m->mu);
    jm_job *j = jm_find(m, id);
    bool shutdown = m->shutdown;
    if (j == NULL || shutdown || rule == NULL) {
        base_unlock(&m->mu);
        if (j == NULL)
            srv_reply_error(rep, 404, "no job %lld", (long long)id);
        else if (shutdown)
            srv_reply_error(rep, 503, "tesserad is shutting down");
        else
            srv_reply_error(rep, 404, "no action \"%s\"", action);
        return;
    }
    /* a finished job's runner is leaving: wait for it, so that a delete
     * never frees a job its runner still holds */
    j = wait_runner(m, id, leaving);
    if (j == NULL) {
        base_unlock(&m->mu);
        srv_reply_error(rep, 404, "no job %lld", (long long)id);
        return;
    }
    enum jm_step step = jm_action_step(rule, j);
    if (step == JM_DELETE && j->has_runner && !j->runner_done) {
        base_unlock(&m->mu); /* still leaving after ACTION_WAIT_MS */
        srv_reply_error(rep, 503, "job %lld is finishing; try again", (long long)id);
        return;
    }
    if (step == JM_REFUSE) {
        const char *sn = sto_state_name(j->state);
        base_unlock(&m->mu);
        srv_reply_error(rep, 409, "job %lld is %s: %s", (long long)id, sn, rule->refusal);
        return;
    }
    if (step == JM_ASK || step == JM_STORE) {
        j->want = rule->want; /* the scheduler starts no job with a want */
        jm_touch(m, j);
    }
    if (step == JM_ASK)
        wait_runner(m, id, acting);
    char *kept_error = step == JM_STORE ? jm_kept_error(j) : NULL;
    base_unlock(&m->mu);

    int rc = 0;
    if (step == JM_STORE || step == JM_DELETE) {
        base_lock(&m->db_mu);
        rc = step == JM_DELETE ? sto_job_delete(m->db, id, &err)
                            : sto_job_set_state(m->db, id, rule->to, kept_error, &err);
        base_unlock(&m->db_mu);
    }
    free(kept_error);
    base_lock(&m->mu);
    j = jm_find(m, id);
    bool live = j != NULL && j->has_runner && !j->runner_done;
    if (j != NULL && step == JM_DELETE && rc == 0) {
        forget_job(m, j);
        j = NULL;
        rep->status = 204;
    } else if (j != NULL && step == JM_STORE && !live) {
        if (rc == 0) {
            j->state = rule->to;
            if (j->retry_mono != 0)
                jm_store_ok(m, j); /* the store took it: no wait, no stale error */
            jm_touch(m, j);
        }
        j->want = WANT_NONE; /* done, or nothing changed: schedulable again */
    }
    /* the runner ended without storing the pause or cancel: the store
     * refused it, and the job waits for the store (jm_store_failed) */
    if (rc == 0 && step == JM_ASK && j != NULL && j->retry_mono != 0 && j->state == STO_QUEUED)
        rc = tsr_err_set(&err, TSR_EIO, "job %lld could not %s: %s", (long long)id, action,
                         j->error ? j->error : "the store could not be written");
    /* a pause or cancel whose runner has not acted within ACTION_WAIT_MS:
     * accepted, not done.  Only this request's own asking counts: a resume
     * or delete that meets another request's pending pause is answered
     * with the job as it is, 200 */
    if (rc == 0 && j != NULL)
        reply_json(rep, step == JM_ASK && j->want != WANT_NONE && live ? 202 : 200,
                   jm_job_json(j, false));
    base_unlock(&m->mu);
    if (rc != 0)
        srv_reply_error(rep, action_status(rc), "%s", err.msg);
}

/* The job's puzzle, read from the store (the caller frees it). */
static tsr_puzzle *job_puzzle(jm_manager *m, int64_t id, tsr_err *err)
{
    sto_job doc = {0};
    tsr_puzzle *pz = NULL;
    base_lock(&m->rd_mu);
    int rc = sto_job_get(m->rdb, id, &doc, err);
    base_unlock(&m->rd_mu);
    if (rc == 0)
        tsr_puzzle_read(doc.puzzle, strlen(doc.puzzle), "stored puzzle", &pz, NULL, err);
    sto_job_clear(&doc);
    return pz;
}

static void op_job_puzzle(void *ctx, int64_t id, srv_reply *rep)
{
    jm_manager *m = ctx;
    tsr_err err = {{0}};
    base_lock(&m->mu);
    bool exists = jm_find(m, id) != NULL;
    base_unlock(&m->mu);
    tsr_puzzle *pz = exists ? job_puzzle(m, id, &err) : NULL;
    json_t *j = pz ? jm_puzzle_json(pz) : NULL;
    tsr_puzzle_free(pz);
    if (!exists)
        srv_reply_error(rep, 404, "no job %lld", (long long)id);
    else if (j == NULL)
        srv_reply_error(rep, 500, "job %lld: %s", (long long)id, err.msg[0] ? err.msg : "out of memory");
    else
        reply_json(rep, 200, j);
}

/* A completed record job's record: built by record.c from the store. */
static void op_job_record(void *ctx, int64_t id, srv_reply *rep)
{
    jm_manager *m = ctx;
    tsr_err err = {{0}};
    base_lock(&m->mu);
    bool exists = jm_find(m, id) != NULL;
    base_unlock(&m->mu);
    char *text = NULL;
    int rc = exists ? jm_record_export(m, id, &text, &err) : 0;
    if (!exists)
        srv_reply_error(rep, 404, "no job %lld", (long long)id);
    else if (rc == TSR_EINVAL)
        srv_reply_error(rep, 409, "%s", err.msg);
    else if (rc != 0)
        srv_reply_error(rep, 500, "job %lld: %s", (long long)id, err.msg[0] ? err.msg : tsr_strerror(rc));
    else {
        rep->status = 200;
        rep->text = text;
        rep->text_len = strlen(text);
        rep->content_type = "application/json";
    }
}

/* ---- solutions: stored classes expanded at read time ------------------------------- */

/* One solution as a JSON line with its "seq", or as text, to a stream. */
static int write_json_line(void *ctx, const tsr_puzzle *pz, int64_t seq, const tsr_solution *sol)
{
    FILE *f = ctx;
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (mem == NULL)
        return TSR_ENOMEM;
    int rc = tsr_write_solution_json(mem, pz, sol);
    fclose(mem);
    while (len > 0 && buf[len - 1] == '\n')
        len--;
    if (rc == 0 && (len < 2 || buf[len - 1] != '}'))
        rc = TSR_EIO;
    if (rc == 0) /* the object reopened for its number */
        fprintf(f, "%.*s%s\"seq\":%lld}\n", (int)len - 1, buf, len > 2 ? "," : "",
                (long long)seq);
    free(buf);
    return rc;
}

static int write_text(void *ctx, const tsr_puzzle *pz, int64_t seq, const tsr_solution *sol)
{
    FILE *f = ctx;
    fprintf(f, "# solution %lld\n", (long long)seq);
    int rc = tsr_write_solution_text(f, pz, sol);
    fputc('\n', f);
    return rc;
}

/* A stored schema-1 body back into placements of pz. */
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
        pl[n] = (tsr_placement){piece, 0, cells + used, NULL}; /* schema 1: no colours */
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

/* A page of a schema-1 job's stored text bodies, as before schema 2: JSON
 * lines (as write_json_line writes them) or text. */
static int legacy_page(jm_manager *m, int64_t id, int64_t after, int limit, bool text, FILE *f,
                       int64_t *last, int *n, tsr_err *err)
{
    char **bodies = NULL;
    int64_t *seqs = NULL;
    base_lock(&m->rd_mu);
    int rc = sto_solutions_page(m->rdb, id, after, limit, &bodies, &seqs, n, err);
    base_unlock(&m->rd_mu);
    tsr_puzzle *pz = rc == 0 && text ? job_puzzle(m, id, err) : NULL;
    if (rc == 0 && text && pz == NULL)
        rc = TSR_EIO;
    int maxcells = pz ? pz->ncells + 1 : 0;
    tsr_placement *pl = pz ? malloc((size_t)(pz->npieces * 64 + 1) * sizeof *pl) : NULL;
    tsr_cell *cells = pz ? malloc((size_t)maxcells * sizeof *cells) : NULL;
    for (int i = 0; rc == 0 && i < *n; i++) {
        json_t *b = json_loads(bodies[i], 0, NULL);
        tsr_solution sol;
        if (!text) {
            json_t *o = b ? b : json_object();
            json_object_set_new(o, "seq", json_integer(seqs[i]));
            char *line = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
            fprintf(f, "%s\n", line ? line : "{}");
            free(line);
            json_decref(o);
            continue;
        }
        fprintf(f, "# solution %lld\n", (long long)seqs[i]);
        if (b && pl && cells && body_to_solution(pz, b, &sol, pl, cells, maxcells) == 0)
            tsr_write_solution_text(f, pz, &sol);
        else
            fprintf(f, "(unreadable)\n");
        fputc('\n', f);
        json_decref(b);
    }
    *last = rc == 0 && *n > 0 ? seqs[*n - 1] : after;
    free(pl);
    free(cells);
    tsr_puzzle_free(pz);
    sto_solutions_free(bodies, seqs, *n);
    return rc;
}

/* Solutions after+1 .. after+limit of job id as JSON lines or text to f,
 * whichever way the job stored them; *last gets the last seq written (after
 * when none) and *n how many.  The one path of the solution pages and the
 * export. */
static int write_part(jm_manager *m, int64_t id, bool legacy, int64_t after, int limit,
                      bool text, FILE *f, int64_t *last, int *n, tsr_err *err)
{
    *n = 0;
    *last = after;
    if (legacy)
        return legacy_page(m, id, after, limit, text, f, last, n, err);
    jm_decoder *d = jm_decoder_get(m, id, err);
    if (d == NULL) { /* a job deleted meanwhile is "no job", not a failure */
        base_lock(&m->mu);
        bool gone = jm_find(m, id) == NULL;
        base_unlock(&m->mu);
        return gone ? TSR_EINVAL : TSR_EIO;
    }
    int rc = jm_each_solution(m, d, id, after, limit, text ? write_text : write_json_line, f, n,
                           err);
    jm_decoder_put(m, d);
    *last = after + *n;
    return rc;
}

/* Up to `limit` solutions after `after` into f, as write_part writes
 * them, but no more than JM_PAGE_BYTES' worth: the first one's size tells
 * how many fit (a job's solutions are all about the same size), at least
 * one.  *page gets the page's size so found, limit or less: a page with
 * *page solutions is full and may have a next one. */
static int write_page(jm_manager *m, int64_t id, bool legacy, int64_t after, int limit,
                      bool text, FILE *f, int64_t *last, int *n, int *page, tsr_err *err)
{
    *page = limit;
    long start = ftell(f);
    int rc = write_part(m, id, legacy, after, 1, text, f, last, n, err);
    if (rc != 0 || *n == 0 || limit == 1)
        return rc;
    long per = ftell(f) - start;
    if (per > 0 && per > JM_PAGE_BYTES / limit)
        *page = (int)(JM_PAGE_BYTES / per > 1 ? JM_PAGE_BYTES / per : 1);
    int more = 0;
    if (*page > 1)
        rc = write_part(m, id, legacy, *last, *page - 1, text, f, last, &more, err);
    *n += more;
    return rc;
}

/* Job id as the solution routes need it: false (and 404 in rep) when there
 * is none; else whether it is legacy and how many solutions it stored. */
static bool solutions_job(jm_manager *m, int64_t id, bool *legacy, int64_t *stored,
                          srv_reply *rep)
{
    base_lock(&m->mu);
    jm_job *j = jm_find(m, id);
    if (j != NULL) {
        *legacy = j->legacy;
        *stored = j->stored;
    }
    base_unlock(&m->mu);
    if (j == NULL)
        srv_reply_error(rep, 404, "no job %lld", (long long)id);
    return j != NULL;
}

static void op_solutions(void *ctx, int64_t id, int64_t after, int limit, bool text,
                         srv_reply *rep)
{
    jm_manager *m = ctx;
    tsr_err err = {{0}};
    bool legacy;
    int64_t stored;
    if (!solutions_job(m, id, &legacy, &stored, rep))
        return;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    int n = 0, fits = limit, rc = f == NULL ? tsr_err_set(&err, TSR_ENOMEM, "out of memory") : 0;
    int64_t last = after;
    if (rc == 0)
        rc = write_page(m, id, legacy, after, limit, text, f, &last, &n, &fits, &err);
    if (f != NULL)
        fclose(f);
    if (rc != 0) {
        free(buf);
        srv_reply_error(rep, rc == TSR_EINVAL ? 404 : 500, "%s", err.msg);
        return;
    }
    if (text) {
        rep->status = 200;
        rep->text = buf;
        rep->text_len = len;
        rep->content_type = "text/plain; charset=utf-8";
        return;
    }
    /* the JSON lines are the documented objects already: joined into the
     * page as they are, not parsed and printed again */
    char *page = NULL;
    size_t plen = 0;
    FILE *g = open_memstream(&page, &plen);
    if (g != NULL) {
        fputs("{\"solutions\":[", g);
        for (char *p = buf, *nl; p != NULL && (nl = strchr(p, '\n')) != NULL; p = nl + 1) {
            if (p != buf)
                fputc(',', g);
            fwrite(p, 1, (size_t)(nl - p), g);
        }
        if (n == fits && n > 0)
            fprintf(g, "],\"next\":%lld}", (long long)last);
        else
            fputs("],\"next\":null}", g);
        fclose(g);
    }
    free(buf);
    if (g == NULL) {
        srv_reply_error(rep, 500, "out of memory");
        return;
    }
    rep->status = 200;
    rep->text = page;
    rep->text_len = plen;
    rep->content_type = "application/json; charset=utf-8";
}

/* One step of the export (srv_ops.export_next): the page path above with a
 * bound fixed when the export started.  Legacy jobs number their solutions
 * with gaps, so their bound is open: their export ends at an empty step. */
static void op_export_next(void *ctx, int64_t id, int64_t after, int64_t *upto, int max,
                           int64_t *last, srv_reply *rep)
{
    jm_manager *m = ctx;
    tsr_err err = {{0}};
    bool legacy;
    int64_t stored;
    *last = after;
    if (!solutions_job(m, id, &legacy, &stored, rep))
        return;
    if (*upto < 0)
        *upto = legacy ? INT64_MAX : stored;
    int64_t left = *upto - after;
    int limit = left < max ? (int)left : max;
    if (limit > STO_MAX_PAGE)
        limit = STO_MAX_PAGE;
    char *buf = NULL;
    size_t len = 0;
    int n = 0, page, rc = 0;
    if (limit > 0) {
        FILE *f = open_memstream(&buf, &len);
        rc = f == NULL ? tsr_err_set(&err, TSR_ENOMEM, "out of memory")
                       : write_page(m, id, legacy, after, limit, false, f, last, &n, &page, &err);
        if (f != NULL)
            fclose(f);
    }
    if (rc != 0) {
        free(buf);
        srv_reply_error(rep, rc == TSR_EINVAL ? 404 : 500, "%s", err.msg);
        return;
    }
    if (buf == NULL && (buf = calloc(1, 1)) == NULL) {
        srv_reply_error(rep, 500, "out of memory");
        return;
    }
    rep->text = buf;
    rep->text_len = len;
    rep->content_type = "application/x-ndjson";
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

/* The job options' list, as the dashboard builds its fields from it. */
static void op_options(void *ctx, srv_reply *rep)
{
    (void)ctx;
    char *text = tsr_options_describe_json();
    json_t *j = text ? json_loads(text, 0, NULL) : NULL;
    free(text);
    if (j == NULL)
        srv_reply_error(rep, 500, "out of memory");
    else
        reply_json(rep, 200, j);
}

static void op_health(void *ctx, srv_reply *rep)
{
    jm_manager *m = ctx;
    int counts[6];
    json_t *o = json_object(), *jobs = json_object();
    base_lock(&m->mu);
    jm_count_states(m, counts);
    /* "degraded": the store refused the last commit; "lost": the store's
     * name no longer leads to the daemon's file (docs/store.md) */
    const char *why = m->lost ? m->lost : m->store_error;
    json_t *store = json_pack("{s:b, s:b, s:I, s:o}", "writable", why == NULL, "lost",
                              m->lost != NULL, "failures", (json_int_t)m->store_failures,
                              "error", why ? json_string(why) : json_null());
    bool lost = m->lost != NULL;
    base_unlock(&m->mu);
    for (int s = 0; s < 6; s++)
        json_object_set_new(jobs, sto_state_name((enum sto_state)s), json_integer(counts[s]));
    json_object_set_new(o, "status", json_string(lost ? "lost"
                                                 : json_is_true(json_object_get(store, "writable"))
                                                     ? "ok" : "degraded"));
    json_object_set_new(o, "store", store);
    json_object_set_new(o, "version", json_string(m->cfg.version ? m->cfg.version : "?"));
    json_object_set_new(o, "engine_version", json_integer(TESSERA_ENGINE_VERSION));
    json_object_set_new(o, "jobs", jobs);
    const jm_backend *be = m->cfg.backend;
    json_object_set_new(o, "threads", json_integer(be ? be->threads : m->threads));
    json_object_set_new(o, "max_memory", m->max_memory > 0 ? json_real(m->max_memory) : json_null());
    json_object_set_new(o, "uptime_s", json_real(base_now() - m->started));
    if (be && be->describe)
        json_object_set_new(o, "cluster", be->describe(be->ctx));
    reply_json(rep, lost ? 503 : 200, o);
}

static void op_metrics(void *ctx, srv_reply *rep)
{
    jm_manager *m = ctx;
    int counts[6], busy = 0;
    uint64_t nodes = 0;
    int64_t sols = 0;
    base_lock(&m->mu);
    jm_count_states(m, counts);
    for (int i = 0; i < m->njobs; i++) {
        nodes += m->jobs[i]->nodes;
        sols += m->jobs[i]->solutions;
        busy += m->jobs[i]->state == STO_RUNNING ? m->jobs[i]->threads : 0;
    }
    uint64_t cps = m->checkpoints, failures = m->store_failures;
    bool writable = m->store_error == NULL && m->lost == NULL;
    double cpsum = m->checkpoint_seconds_sum;
    base_unlock(&m->mu);
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
    fprintf(f, "# HELP tessera_store_failures_total Checkpoints and state changes the store "
               "refused since start.\n# TYPE tessera_store_failures_total counter\n"
               "tessera_store_failures_total %llu\n", (unsigned long long)failures);
    fprintf(f, "# HELP tessera_store_writable 1 unless the store refused the last commit.\n"
               "# TYPE tessera_store_writable gauge\ntessera_store_writable %d\n", writable);
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
    double until = base_now() + timeout_ms / 1000.0;
    base_lock(&m->mu);
    jm_job *j;
    int64_t change = -1;
    while ((j = jm_find(m, id)) != NULL && j->change == seen && !m->shutdown)
        if (base_cond_wait(&m->changed, &m->mu, until) == ETIMEDOUT)
            break;
    if ((j = jm_find(m, id)) != NULL)
        change = j->change;
    base_unlock(&m->mu);
    return change;
}

void jm_ops(jm_manager *m, srv_ops *ops)
{
    *ops = (srv_ops){.ctx = m, .submit = op_submit, .list = op_list, .get = op_get,
                     .action = op_action, .solutions = op_solutions,
                     .export_next = op_export_next, .puzzles = op_puzzles,
                     .options = op_options,
                     .validate = op_validate, .estimate = op_estimate, .convert = op_convert,
                     .job_puzzle = op_job_puzzle, .job_record = op_job_record, .batch_submit = jm_batch_submit,
                     .batches = jm_batches,
                     .health = op_health, .metrics = op_metrics, .wait_change = op_wait_change};
}

