/*
 * door.c - what a submission must pass before it becomes a job, shared by
 * a single submit, /validate and /estimate (api.c) and every member of a
 * batch (batch.c): the body read as a puzzle and options (400 for its
 * shape, 422 for a puzzle that cannot be solved as given), the texts every
 * listing repeats bounded (name, description), and every check preparation
 * would make, with the daemon's own caps (cells, placements, memory);
 * then, for a single submit, /validate and /estimate, where each piece
 * fits (jm_check_fits: 422 for a required piece that fits nowhere).
 * Nothing here touches the store or the job table.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "daemon/manager.h"

/* "3.2 GB": bytes for a message. */
static const char *bytes_text(double b, char *buf, size_t size)
{
    static const char *const unit[] = {"bytes", "KB", "MB", "GB", "TB"};
    int u = 0;
    while (b >= 1024 && u < 4) {
        b /= 1024;
        u++;
    }
    snprintf(buf, size, u == 0 ? "%.0f %s" : "%.1f %s", b, unit[u]);
    return buf;
}

/* Every check preparation would make, at the door: what the engine would
 * refuse (tsr_solver_check) and what the daemon's caps refuse, among them
 * the memory the job's solver would need on the threads it may get. */
static void check_caps(jm_manager *m, const tsr_puzzle *pz, const tsr_options *opt,
                       srv_reply *rep)
{
    int threads = opt->threads > 0 && opt->threads < m->threads ? opt->threads : m->threads;
    tsr_cost cost;
    tsr_err err = {{0}};
    char need[32], cap[32];
    if (tsr_solver_check(pz, opt, threads, &cost, &err) != 0)
        srv_reply_error(rep, 422, "request body: %s", err.msg);
    else if (pz->ncells > JM_MAX_CELLS)
        srv_reply_error(rep, 422, "request body: the board has %d cells; the daemon's cap is %d",
                        pz->ncells, JM_MAX_CELLS);
    else if (cost.images > JM_MAX_PLACEMENTS)
        srv_reply_error(rep, 422,
                        "request body: up to %.0f piece placements to build; the daemon's cap is %d",
                        cost.images, JM_MAX_PLACEMENTS);
    else if (m->max_memory > 0 && cost.bytes > m->max_memory)
        srv_reply_error(rep, 422,
                        "request body: the search would need about %s of memory on %d thread%s "
                        "(up to %.0f piece placements of %.0f cells in all); the daemon's cap is "
                        "%s (tesserad --max-memory)",
                        bytes_text(cost.bytes, need, sizeof need), threads,
                        threads == 1 ? "" : "s", cost.images, cost.image_cells,
                        bytes_text(m->max_memory, cap, sizeof cap));
}

/* Read a submit body: the puzzle and options into *pz and *opt, or an
 * error in rep and false.  Shape and type errors (they name a JSON path or
 * a line) are 400; a well-formed puzzle the reader refuses is 422. */
bool jm_read_puzzle(const char *body, size_t len, tsr_puzzle **pz, tsr_options *opt,
                    srv_reply *rep)
{
    if (len == 0) {
        srv_reply_error(rep, 400, "request body: empty; expected a job object "
                                  "{\"puzzle\": {...}, \"options\": {...}}");
        return false;
    }
    json_error_t jerr;
    json_t *probe = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
    tsr_err err = {{0}};
    int rc = tsr_puzzle_read_json(body, len, "request body", pz, opt, &err);
    if (rc != 0) {
        bool structural = probe == NULL || strstr(err.msg, ": $") != NULL ||
                          strstr(err.msg, "$.") != NULL;
        json_decref(probe);
        srv_reply_error(rep, rc == TSR_ETOOBIG ? 422 : structural ? 400 : 422, "%s", err.msg);
        return false;
    }
    /* the door's caps on the texts every listing repeats (stored jobs of
     * any length still read: jm_describe cuts their names) */
    const char *where = json_object_get(probe, "polycube") ? "$.polycube: the puzzle's"
                        : json_object_get(probe, "puzzle") ? "$.puzzle." : "$.";
    json_decref(probe);
    static const struct { const char *key; size_t max; } caps[] = {
        {"name", JM_MAX_NAME}, {"description", JM_MAX_DESCRIPTION}};
    for (int i = 0; i < 2; i++) {
        const char *text = i == 0 ? (*pz)->name : (*pz)->description;
        size_t n = text != NULL ? strlen(text) : 0;
        if (n > caps[i].max) {
            srv_reply_error(rep, 422, "request body: %s%s: %zu bytes, over the limit of %zu",
                            where, caps[i].key, n, caps[i].max);
            tsr_puzzle_free(*pz);
            *pz = NULL;
            return false;
        }
    }
    return true;
}

/* Read and check a submit body as submit and validate both do: what
 * jm_read_puzzle reads, then every check preparation would make (422). */
bool jm_read_submission(jm_manager *m, const char *body, size_t len, tsr_puzzle **pz,
                        tsr_options *opt, srv_reply *rep)
{
    if (!jm_read_puzzle(body, len, pz, opt, rep))
        return false;
    check_caps(m, *pz, opt, rep);
    if (rep->status >= 400) {
        tsr_puzzle_free(*pz);
        *pz = NULL;
        return false;
    }
    return true;
}

/* The puzzle as Puzzle JSON (normalised: cell lists), or NULL. */
json_t *jm_puzzle_json(const tsr_puzzle *pz)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f == NULL)
        return NULL;
    int rc = tsr_write_puzzle_json(f, pz);
    fclose(f);
    json_t *j = rc == 0 ? json_loadb(buf, len, 0, NULL) : NULL;
    free(buf);
    return j;
}

/* Where each piece fits, at the door: the placements are compiled (not
 * the solver), and given up after FITS_SECONDS or FITS_IMAGES placements,
 * when the puzzle is a job's work anyway (the check is then skipped: such
 * a job searches and finds what it finds). */
#define FITS_SECONDS 2.0
#define FITS_IMAGES 4000000L
#define FITS_IMAGE_CELLS 2e7 /* about a second to compile: more is not tried */

int jm_deadline_passed(void *ctx)
{
    jm_deadline *d = ctx;
    base_lock(&d->m->mu);
    bool shutdown = d->m->shutdown;
    base_unlock(&d->m->mu);
    return shutdown || base_now() > d->until;
}

bool jm_check_fits(jm_manager *m, const tsr_puzzle *pz, const tsr_options *opt, json_t **fits,
                   srv_reply *rep)
{
    if (fits != NULL)
        *fits = json_null();
    tsr_cost cost;
    tsr_err cerr = {{0}};
    if (tsr_solver_check(pz, opt, 1, &cost, &cerr) != 0 || cost.images > FITS_IMAGES ||
        cost.image_cells > FITS_IMAGE_CELLS)
        return true; /* a job's work: not checked at the door */
    tsr_fit *f = malloc((size_t)(pz->npieces ? pz->npieces : 1) * sizeof *f);
    if (f == NULL) {
        srv_reply_error(rep, 500, "out of memory");
        return false;
    }
    tsr_err err = {{0}};
    jm_deadline fs = {m, base_now() + FITS_SECONDS};
    int rc = tsr_puzzle_fits(pz, opt, FITS_IMAGES, &(tsr_stop){jm_deadline_passed, &fs}, f, &err);
    if (rc == TSR_EINVAL) {
        srv_reply_error(rep, 422, "request body: $.puzzle: %s", err.msg);
    } else if (rc == TSR_ENOMEM) {
        srv_reply_error(rep, 500, "out of memory");
    } else if (rc == 0 && fits != NULL) {
        char *text = tsr_fits_json(pz, f);
        json_t *j = text ? json_loads(text, 0, NULL) : NULL;
        free(text);
        if (j != NULL)
            *fits = j;
    }
    free(f);
    return rc != TSR_EINVAL && rc != TSR_ENOMEM; /* stopped or too big: not checked */
}
