/*
 * decode.c - a job's stored solution classes back into solutions, for the
 * pages and the export (api.c): a decoder is the job's puzzle and a solver
 * prepared from it (the same images the search numbered, the same
 * symmetry), kept in a small cache of the last jobs read.
 *
 * Building a decoder takes a preparation (milliseconds to seconds), so it
 * is cached: DECODERS_MAX of them under dec_mu, the least recently used
 * one evicted when no reader holds it.  A reader holds its decoder from
 * jm_decoder_get to jm_decoder_put, with no lock held meanwhile; when
 * readers hold every slot it gets a decoder of its own.  dec_mu is taken
 * alone (the lock order in jobs.c).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "daemon/manager.h"

static void decoder_free(jm_decoder *d)
{
    if (d != NULL) {
        tsr_solver_free(d->s);
        tsr_puzzle_free(d->pz);
        free(d);
    }
}

void jm_decoders_free(jm_manager *m)
{
    for (int i = 0; i < DECODERS_MAX; i++) {
        decoder_free(m->decoders[i]);
        m->decoders[i] = NULL;
    }
}

/* Build job id's decoder from its stored puzzle and options: the same
 * images and symmetry group as its search (the limit does not matter:
 * counts come from the store). */
static jm_decoder *decoder_build(jm_manager *m, int64_t id, tsr_err *err)
{
    sto_job doc = {0};
    jm_decoder *d = calloc(1, sizeof *d);
    base_lock(&m->rd_mu);
    int rc = d == NULL ? tsr_err_set(err, TSR_ENOMEM, "out of memory")
                       : sto_job_get(m->rdb, id, &doc, err);
    base_unlock(&m->rd_mu);
    tsr_options opt;
    if (rc == 0)
        rc = tsr_puzzle_read(doc.puzzle, strlen(doc.puzzle), "stored puzzle", &d->pz, NULL, err);
    if (rc == 0)
        rc = tsr_options_read_json(doc.options, strlen(doc.options), "stored options", d->pz,
                                   &opt, err);
    if (rc == 0) {
        opt.limit = 0;
        rc = tsr_solver_new(d->pz, &opt, &d->s, err);
    }
    sto_job_clear(&doc);
    if (rc != 0) {
        decoder_free(d);
        return NULL;
    }
    d->id = id;
    return d;
}

/* Under dec_mu: the cached decoder of job id, or NULL. */
static jm_decoder *decoder_find(jm_manager *m, int64_t id)
{
    BASE_HELD(&m->dec_mu);
    for (int i = 0; i < DECODERS_MAX; i++)
        if (m->decoders[i] != NULL && m->decoders[i]->id == id)
            return m->decoders[i];
    return NULL;
}

/* Under dec_mu: the slot for a new decoder: an empty one, else the least
 * recently used one that no reader holds; -1 when readers hold them all. */
static int decoder_slot(jm_manager *m)
{
    BASE_HELD(&m->dec_mu);
    int best = -1;
    for (int i = 0; i < DECODERS_MAX; i++) {
        jm_decoder *o = m->decoders[i];
        if (o == NULL)
            return i;
        if (o->refs == 0 && (best < 0 || o->used < m->decoders[best]->used))
            best = i;
    }
    return best;
}

/* The decoder of job id, held until jm_decoder_put: from the cache, else built
 * (without the lock: building takes a while) and cached.  When readers hold
 * every slot, the reader gets a decoder of its own (refs -1), freed by
 * jm_decoder_put. */
jm_decoder *jm_decoder_get(jm_manager *m, int64_t id, tsr_err *err)
{
    base_lock(&m->dec_mu);
    jm_decoder *d = decoder_find(m, id);
    if (d == NULL) {
        base_unlock(&m->dec_mu);
        jm_decoder *built = decoder_build(m, id, err);
        if (built == NULL)
            return NULL;
        base_lock(&m->dec_mu);
        d = decoder_find(m, id); /* another reader may have built it meanwhile */
        if (d != NULL) {
            decoder_free(built);
        } else {
            int slot = decoder_slot(m);
            d = built;
            if (slot >= 0) {
                decoder_free(m->decoders[slot]);
                m->decoders[slot] = d;
            } else {
                d->refs = -1;
            }
        }
    }
    if (d->refs >= 0)
        d->refs++;
    d->used = ++m->dec_clock;
    base_unlock(&m->dec_mu);
    return d;
}

void jm_decoder_put(jm_manager *m, jm_decoder *d)
{
    base_lock(&m->dec_mu);
    bool own = d->refs < 0;
    if (!own)
        d->refs--;
    base_unlock(&m->dec_mu);
    if (own)
        decoder_free(d);
}

/* Solutions after+1 .. after+limit of job id, in order, to fn; *n gets how
 * many there were. */
int jm_each_solution(jm_manager *m, jm_decoder *d, int64_t id, int64_t after, int limit,
                         solution_fn fn, void *ctx, int *n, tsr_err *err)
{
    sto_classes c;
    *n = 0;
    base_lock(&m->rd_mu);
    int rc = sto_classes_read(m->rdb, id, after, limit, &c, err);
    base_unlock(&m->rd_mu);
    if (rc != 0)
        return rc;
    int ncopies = tsr_solver_ncopies(d->s), nplace;
    long ncells;
    tsr_solver_solution_room(d->s, &nplace, &ncells);
    int *members = malloc((size_t)tsr_solver_max_members(d->s) * (size_t)(ncopies + 1) *
                          sizeof *members);
    tsr_placement *pl = malloc((size_t)nplace * sizeof *pl);
    tsr_cell *cells = malloc((size_t)ncells * sizeof *cells);
    if (members == NULL || pl == NULL || cells == NULL)
        rc = tsr_err_set(err, TSR_ENOMEM, "out of memory");
    for (int i = 0; rc == 0 && i < c.n; i++) {
        const int *ids = c.ids + c.start[i];
        int k = c.start[i + 1] - c.start[i];
        int nm = tsr_solver_members(d->s, ids, k, members);
        if (nm < c.count[i]) {
            rc = tsr_err_set(err, TSR_EIO, "job %lld: stored solution %lld is not one of this "
                             "puzzle's", (long long)id, (long long)c.first[i]);
            break;
        }
        for (int j = 0; rc == 0 && j < c.count[i]; j++) {
            int64_t seq = c.first[i] + j;
            if (seq <= after || seq > after + limit)
                continue;
            tsr_solution sol;
            rc = tsr_solver_solution(d->s, members + (size_t)j * k, k, pl, cells, &sol);
            if (rc == 0)
                rc = fn(ctx, d->pz, seq, &sol);
            if (rc == 0)
                ++*n;
            else
                tsr_err_set(err, rc, "job %lld: solution %lld: %s", (long long)id,
                            (long long)seq, tsr_strerror(rc));
        }
    }
    free(members);
    free(pl);
    free(cells);
    sto_classes_free(&c);
    return rc;
}
