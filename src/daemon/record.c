/*
 * record.c - a record job (options.record): its tree split at a fixed
 * depth, the figures of each subtree, and the record it exports.
 *
 * Before its first run a record job's tree is cut at `record` pieces
 * placed (tsr_solver_split): the nodes there are its record tasks, and
 * they become its whole frontier, so every task the pool ever runs lies
 * below exactly one of them, whose images are its first `record` images
 * (tasks name their images in the order the search places them).  The
 * pool reports each search of a task with its statistics
 * (tsr_pool_hooks.task_done); they are added to that record task's
 * pending figures, which each checkpoint commits with its frontier and
 * solutions in one transaction (sto_progress.tally).  A checkpoint sees
 * every task_done of the work it commits, so the stored figures always
 * describe exactly the work the stored frontier excludes: a crash loses
 * the pending figures together with the work they came from.
 *
 * A finished record job exports the puzzle, the pinned options, the
 * engine's version and configuration, row 0 (what lies above the split)
 * and every task's images, weight, solutions, nodes and digest
 * (docs/records.md); `tessera verify` re-runs any of them anywhere.
 */
#define _GNU_SOURCE /* qsort_r */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/manager.h"
#include "tessera/job.h"

struct jm_record {
    int depth, n;              /* rows: 0 above the split, 1 .. n-1 the tasks */
    int *keys;                 /* (n-1) keys of `depth` sorted images, in key order */
    int *seq;                  /* the row of each key */
    sto_tally *done;           /* committed figures, per row */
    base_mutex mu;             /* guards the three below */
    sto_tally *pending;        /* since the last checkpoint, per row */
    unsigned char *moved;      /* rows with pending figures */
    bool lost;                 /* a task under no record task: the job must fail */
};

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Keys of *depth images (qsort_r's argument) */
static int cmp_key(const void *a, const void *b, void *depth)
{
    const int *x = a, *y = b;
    for (int i = 0; i < *(const int *)depth; i++)
        if (x[i] != y[i])
            return (x[i] > y[i]) - (x[i] < y[i]);
    return 0;
}

/* The row of the record task above a task of n images, or -1. */
static int row_of(const jm_record *rc, const int *images, int n)
{
    if (n < rc->depth)
        return -1;
    int key[JM_MAX_RECORD_DEPTH];
    memcpy(key, images, (size_t)rc->depth * sizeof *key);
    qsort(key, (size_t)rc->depth, sizeof *key, cmp_int);
    int lo = 0, hi = rc->n - 2;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        const int *k = rc->keys + (size_t)mid * (size_t)rc->depth;
        int c = 0;
        for (int i = 0; i < rc->depth && c == 0; i++)
            c = (key[i] > k[i]) - (key[i] < k[i]);
        if (c == 0)
            return rc->seq[mid];
        if (c < 0)
            hi = mid - 1;
        else
            lo = mid + 1;
    }
    return -1;
}

void jm_record_free(jm_record *rc)
{
    if (rc == NULL)
        return;
    free(rc->keys);
    free(rc->seq);
    free(rc->done);
    free(rc->pending);
    free(rc->moved);
    base_mutex_destroy(&rc->mu);
    free(rc);
}

/* The record from its stored rows. */
static int record_from_rows(int depth, const sto_record_task *rows, int n, jm_record **out,
                            tsr_err *err)
{
    jm_record *rc = calloc(1, sizeof *rc);
    if (rc == NULL)
        return tsr_err_set(err, TSR_ENOMEM, "out of memory");
    base_mutex_init(&rc->mu);
    rc->depth = depth;
    rc->n = n;
    size_t nt = (size_t)(n - 1), d = (size_t)depth;
    /* key and row side by side, sorted together */
    int *pairs = malloc((nt ? nt : 1) * (d + 1) * sizeof *pairs);
    rc->keys = malloc((nt ? nt : 1) * d * sizeof *rc->keys);
    rc->seq = malloc((nt ? nt : 1) * sizeof *rc->seq);
    rc->done = calloc((size_t)n, sizeof *rc->done);
    rc->pending = calloc((size_t)n, sizeof *rc->pending);
    rc->moved = calloc((size_t)n, 1);
    if (!pairs || !rc->keys || !rc->seq || !rc->done || !rc->pending || !rc->moved) {
        free(pairs);
        jm_record_free(rc);
        return tsr_err_set(err, TSR_ENOMEM, "out of memory");
    }
    for (int i = 0; i < n; i++)
        rc->done[i] = rows[i].tally;
    for (size_t i = 0; i < nt; i++) {
        const sto_task *t = &rows[i + 1].task;
        if (t->nimages != depth) {
            free(pairs);
            jm_record_free(rc);
            return tsr_err_set(err, TSR_EIO, "record task %zu has %d images, not %d", i + 1,
                               t->nimages, depth);
        }
        int *p = pairs + i * (d + 1);
        memcpy(p, t->images, d * sizeof *p);
        qsort(p, d, sizeof *p, cmp_int);
        p[d] = (int)i + 1;
    }
    qsort_r(pairs, nt, (d + 1) * sizeof *pairs, cmp_key, &depth);
    for (size_t i = 0; i < nt; i++) {
        memcpy(rc->keys + i * d, pairs + i * (d + 1), d * sizeof *rc->keys);
        rc->seq[i] = pairs[i * (d + 1) + d];
        if (i > 0 && cmp_key(rc->keys + (i - 1) * d, rc->keys + i * d, &depth) == 0) {
            free(pairs);
            jm_record_free(rc);
            return tsr_err_set(err, TSR_EIO, "record tasks %d and %d are the same node",
                               rc->seq[i - 1], rc->seq[i]);
        }
    }
    free(pairs);
    *out = rc;
    return 0;
}

int jm_record_load(jm_manager *m, int64_t id, int depth, jm_record **out, tsr_err *err)
{
    *out = NULL;
    if (depth < 1 || depth > JM_MAX_RECORD_DEPTH)
        return tsr_err_set(err, TSR_EINVAL, "options.record: %d is not a depth from 1 to %d",
                           depth, JM_MAX_RECORD_DEPTH);
    sto_record_task *rows = NULL;
    int n = 0;
    base_lock(&m->db_mu);
    int rc = sto_record_load(m->db, id, &rows, &n, err);
    base_unlock(&m->db_mu);
    if (rc == 0 && n == 1)
        rc = tsr_err_set(err, TSR_EIO, "the job's record has no task");
    if (rc == 0 && n > 0)
        rc = record_from_rows(depth, rows, n, out, err);
    sto_record_free(rows, n);
    return rc;
}

int jm_split_make(const tsr_solver *s, int depth, jm_split *sp, tsr_stats *above, tsr_err *err)
{
    *sp = (jm_split){0};
    tsr_callbacks cb = {.ctx = sp, .donate = jm_split_add};
    int rc = tsr_solver_split(s, depth, &cb, above);
    if (rc == TSR_EINVAL)
        rc = tsr_err_set(err, rc, "options.record: the tree cannot be split at %d pieces "
                                  "placed (a puzzle with count ranges or optional cells, or "
                                  "a depth that reaches a leaf)", depth);
    else if (rc == 0 && sp->failed)
        rc = tsr_err_set(err, TSR_ENOMEM, "out of memory splitting the tree");
    else if (rc == 0 && sp->n > STO_MAX_TASKS)
        rc = tsr_err_set(err, TSR_ETOOBIG,
                         "options.record: %d pieces placed make %d tasks (at most %d): "
                         "split higher", depth, sp->n, STO_MAX_TASKS);
    else if (rc != 0)
        rc = tsr_err_set(err, rc, "splitting the tree: %s", tsr_strerror(rc));
    if (rc != 0) {
        jm_split_free(sp);
        tsr_stats_free(above);
    }
    return rc;
}

int jm_split_store(jm_manager *m, int64_t id, const jm_split *sp, const tsr_stats *above,
                   const sto_progress *prog, tsr_err *err)
{
    sto_tally top = {0, above->solutions, above->nodes, above->digest};
    base_lock(&m->db_mu);
    int rc = sto_record_begin(m->db, id, sp->tasks, sp->n, &top, above->fraction, prog, err);
    base_unlock(&m->db_mu);
    return rc;
}

void jm_split_add(void *ctx, const int *images, int n, double weight)
{
    jm_split *sp = ctx;
    if (sp->failed)
        return;
    if (sp->n == sp->cap) {
        size_t cap = (size_t)sp->cap;
        if (base_grow((void **)&sp->tasks, &cap, (size_t)sp->n, sizeof *sp->tasks, 1024,
                      STO_MAX_TASKS + 1) != 0) {
            sp->failed = true;
            return;
        }
        sp->cap = (int)cap;
    }
    int *copy = malloc((size_t)n * sizeof *copy);
    if (copy == NULL) {
        sp->failed = true;
        return;
    }
    memcpy(copy, images, (size_t)n * sizeof *copy);
    sp->tasks[sp->n++] = (sto_task){n, copy, weight};
}

void jm_split_free(jm_split *sp)
{
    for (int i = 0; i < sp->n; i++)
        free(sp->tasks[i].images);
    free(sp->tasks);
    *sp = (jm_split){0};
}

void jm_record_task_done(jm_record *rc, const int *images, int n, const tsr_stats *st)
{
    int row = row_of(rc, images, n);
    base_lock(&rc->mu);
    if (row < 0) {
        rc->lost = true;
    } else {
        rc->pending[row].solutions += st->solutions;
        rc->pending[row].nodes += st->nodes;
        rc->pending[row].digest += st->digest;
        rc->moved[row] = 1;
    }
    base_unlock(&rc->mu);
}

int jm_record_take(jm_record *rc, sto_tally **out, int *nout)
{
    *out = NULL;
    *nout = 0;
    base_lock(&rc->mu);
    int k = 0;
    for (int i = 0; i < rc->n; i++)
        k += rc->moved[i];
    sto_tally *t = malloc((size_t)(k ? k : 1) * sizeof *t);
    if (t == NULL) {
        base_unlock(&rc->mu);
        return TSR_ENOMEM;
    }
    k = 0;
    for (int i = 0; i < rc->n; i++) {
        if (!rc->moved[i])
            continue;
        t[k++] = (sto_tally){i, rc->done[i].solutions + rc->pending[i].solutions,
                             rc->done[i].nodes + rc->pending[i].nodes,
                             rc->done[i].digest + rc->pending[i].digest};
        rc->pending[i] = (sto_tally){0};
        rc->moved[i] = 0;
    }
    bool lost = rc->lost;
    base_unlock(&rc->mu);
    *out = t;
    *nout = k;
    return lost ? TSR_EINVAL : 0;
}

void jm_record_committed(jm_record *rc, const sto_tally *t, int n)
{
    base_lock(&rc->mu);
    for (int i = 0; i < n; i++)
        rc->done[t[i].seq] = t[i];
    base_unlock(&rc->mu);
}

/* ---- the exported record ------------------------------------------------------- */

static json_t *hex64(uint64_t v)
{
    char b[20];
    snprintf(b, sizeof b, "%016" PRIx64, v);
    return json_string(b);
}

static json_t *image_list(const sto_task *t)
{
    json_t *a = json_array();
    for (int i = 0; a && i < t->nimages; i++)
        json_array_append_new(a, json_integer(t->images[i]));
    return a;
}

int jm_record_export(jm_manager *m, int64_t id, char **out, tsr_err *err)
{
    *out = NULL;
    sto_job doc = {0};
    sto_record_task *rows = NULL;
    int n = 0;
    base_lock(&m->db_mu);
    int rc = sto_job_get(m->db, id, &doc, err);
    if (rc == 0)
        rc = sto_record_load(m->db, id, &rows, &n, err);
    base_unlock(&m->db_mu);
    if (rc != 0)
        return rc;
    json_t *puzzle = NULL, *options = NULL, *stats = NULL;
    if (n == 0)
        rc = tsr_err_set(err, TSR_EINVAL,
                         "job %lld has no record: submit it with options.record, the depth "
                         "to split its tree at", (long long)id);
    else if (doc.state != STO_COMPLETED)
        rc = tsr_err_set(err, TSR_EINVAL, "job %lld is %s: a record is exported once completed",
                         (long long)id, tsr_job_states[doc.state]);
    if (rc == 0) {
        puzzle = json_loads(doc.puzzle, 0, NULL);
        options = json_loads(doc.options, 0, NULL);
        stats = doc.stats ? json_loads(doc.stats, 0, NULL) : NULL;
        if (puzzle == NULL || options == NULL)
            rc = tsr_err_set(err, TSR_EIO, "job %lld: its stored documents do not parse",
                             (long long)id);
    }
    uint64_t sols = 0, nodes = 0, digest = 0;
    json_t *tasks = rc == 0 ? json_array() : NULL;
    for (int i = 0; rc == 0 && i < n; i++) {
        const sto_tally *t = &rows[i].tally;
        sols += t->solutions;
        nodes += t->nodes;
        digest += t->digest;
        if (i == 0)
            continue;
        json_t *o = json_pack("{s:i, s:o, s:f, s:I, s:I, s:o}", "task", i, "images",
                              image_list(&rows[i].task), "weight", rows[i].task.weight,
                              "solutions", (json_int_t)t->solutions, "nodes",
                              (json_int_t)t->nodes, "digest", hex64(t->digest));
        if (o == NULL || json_array_append_new(tasks, o) != 0)
            rc = tsr_err_set(err, TSR_ENOMEM, "out of memory");
    }
    /* the tallies must add up to the job's own figures */
    if (rc == 0 && (sols != (uint64_t)doc.solutions || nodes != doc.nodes))
        rc = tsr_err_set(err, TSR_EIO,
                         "job %lld: its record tasks add up to %" PRIu64 " solutions and %" PRIu64
                         " nodes, the job has %lld and %" PRIu64,
                         (long long)id, sols, nodes, (long long)doc.solutions, doc.nodes);
    json_t *config = stats ? json_object_get(stats, "config") : NULL;
    json_t *opt_record = json_object_get(options, "record");
    json_t *rec = NULL;
    if (rc == 0) {
        const sto_tally *top = &rows[0].tally;
        rec = json_pack(
            "{s:s, s:i, s:I, s:{s:s, s:i}, s:O, s:O, s:O, s:{s:O, s:i, s:f, s:I, s:I, s:o}, "
            "s:{s:I, s:I, s:o, s:f}, s:o}",
            "format", "tessera-record", "version", 1, "job", (json_int_t)id, "engine",
            "program", PACKAGE_STRING, "engine_version", doc.engine_version, "puzzle", puzzle,
            "options", options, "config", config ? config : json_null(), "split", "depth",
            opt_record ? opt_record : json_null(), "tasks", n - 1, "pruned",
            rows[0].task.weight, "solutions", (json_int_t)top->solutions, "nodes",
            (json_int_t)top->nodes, "digest", hex64(top->digest), "totals", "solutions",
            (json_int_t)sols, "nodes", (json_int_t)nodes, "digest", hex64(digest), "seconds",
            doc.seconds, "tasks", tasks);
        tasks = NULL;
        if (rec == NULL)
            rc = tsr_err_set(err, TSR_ENOMEM, "out of memory");
    }
    if (rc == 0 && (*out = json_dumps(rec, JSON_COMPACT)) == NULL)
        rc = tsr_err_set(err, TSR_ENOMEM, "out of memory");
    json_decref(rec);
    json_decref(tasks);
    json_decref(puzzle);
    json_decref(options);
    json_decref(stats);
    sto_record_free(rows, n);
    sto_job_clear(&doc);
    return rc;
}
