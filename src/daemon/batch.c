/*
 * batch.c - batches of jobs: POST /api/v1/batches, GET /api/v1/batches and
 * GET /api/v1/batches/{id} (docs/api.md, "Batches").
 *
 * A batch is a stored group of ordinary jobs (the store's sto_batch): each
 * member is queued, scheduled, paused and read like any job, and knows its
 * batch (jm_job.batch).  A batch is asked for either as a list of job
 * bodies or as one puzzle and its variants: the same board with a hole of
 * a given shape at every position where it fits, optionally one position
 * per class under the board's symmetries.  Every member is checked exactly
 * as POST /api/v1/jobs checks a job, at the door; one bad member refuses
 * the whole batch (its error names it: `$.jobs[3].options.limit`, or the
 * variant's hole), and the batch with its jobs is created in one store
 * transaction, so a batch is whole or absent.
 *
 * Reading a batch takes the group's row from the reader connection and
 * its members' state and counts from the in-memory job table.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "daemon/manager.h"
#include "geom/geom.h"
#include "tessera/job.h"

#define BATCH_MAX_HOLE 1000 /* cells in a variant's hole shape */

/* One member of a batch on its way in: the stored document and what it
 * reads as. */
typedef struct member {
    char *doc;
    tsr_puzzle *pz;
    tsr_options opt;
    char *options; /* the options as stored (tsr_options_write_json) */
} member;

static void members_free(member *v, int n)
{
    for (int i = 0; i < n; i++) {
        free(v[i].doc);
        tsr_puzzle_free(v[i].pz);
        free(v[i].options);
    }
    free(v);
}

/* rep's message "request body: $.options.limit: ..." as the member at
 * `where` spells it: "request body: $.jobs[3].options.limit: ...", or
 * "request body: WHERE: ..." for a message without a JSON path. */
static void reword(srv_reply *rep, const char *where, const char *sep)
{
    static const char head[] = "request body: ";
    char msg[sizeof rep->message + 512]; /* srv_reply_error cuts it to fit */
    const char *rest = rep->message;
    if (strncmp(rest, head, sizeof head - 1) == 0)
        rest += sizeof head - 1;
    if (rest[0] == '$' && sep == NULL)
        snprintf(msg, sizeof msg, "%s%s%s", head, where, rest + 1);
    else
        snprintf(msg, sizeof msg, "%s%s%s%s", head, where, sep ? sep : ": ", rest);
    int status = rep->status;
    srv_reply_error(rep, status, "%s", msg);
}

/* Read and check one member from its document (a job body); false with
 * the error, reworded for `where`, in rep. */
static bool member_read(jm_manager *m, member *mb, json_t *body, const char *where,
                        const char *sep, srv_reply *rep)
{
    mb->doc = json_dumps(body, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (mb->doc == NULL) {
        srv_reply_error(rep, 500, "out of memory");
        return false;
    }
    if (!jm_read_submission(m, mb->doc, strlen(mb->doc), &mb->pz, &mb->opt, rep)) {
        reword(rep, where, sep);
        return false;
    }
    mb->options = tsr_options_write_json(&mb->opt);
    if (mb->options == NULL) {
        srv_reply_error(rep, 500, "out of memory");
        return false;
    }
    return true;
}

/* ---- variants: a hole at every position ------------------------------------------ */

static bool has_cell(const tsr_cell *v, int n, tsr_cell c)
{
    return bsearch(&c, v, (size_t)n, sizeof c, geo_cell_cmp) != NULL;
}

/* The hole's cells from $.variants.hole: "each-cell", {"rows": [...]} (2D,
 * '#' a cell, row r at y = r) or {"cells": [[x, y], [x, y, z], ...]}.
 * Normalised (min corner 0, sorted).  false with a 400 in rep. */
static bool hole_shape(json_t *h, tsr_cell **out, int *n, srv_reply *rep)
{
    const char *where = "request body: $.variants.hole";
    tsr_cell *v = calloc(BATCH_MAX_HOLE, sizeof *v);
    int k = 0;
    if (v == NULL) {
        srv_reply_error(rep, 500, "out of memory");
        return false;
    }
    json_t *rows = json_object_get(h, "rows"), *cells = json_object_get(h, "cells");
    if (json_is_string(h) && strcmp(json_string_value(h), "each-cell") == 0) {
        v[k++] = (tsr_cell){0, 0, 0};
    } else if (json_is_object(h) && json_object_size(h) == 1 && json_is_array(rows)) {
        for (size_t y = 0; y < json_array_size(rows); y++) {
            const char *r = json_string_value(json_array_get(rows, y));
            if (r == NULL || y > 1000) {
                srv_reply_error(rep, 400, "%s.rows[%zu]: expected a string of '#' and '.'", where,
                                y);
                goto bad;
            }
            for (size_t x = 0; r[x]; x++) {
                if ((r[x] != '#' && r[x] != '.') || x > 1000) {
                    srv_reply_error(rep, 400, "%s.rows[%zu]: expected '#' and '.' only, got '%c'",
                                    where, y, r[x]);
                    goto bad;
                }
                if (r[x] == '#' && k == BATCH_MAX_HOLE) {
                    srv_reply_error(rep, 400, "%s: more than %d cells", where, BATCH_MAX_HOLE);
                    goto bad;
                }
                if (r[x] == '#')
                    v[k++] = (tsr_cell){(int)x, (int)y, 0};
            }
        }
    } else if (json_is_object(h) && json_object_size(h) == 1 && json_is_array(cells)) {
        for (size_t i = 0; i < json_array_size(cells); i++) {
            json_t *c = json_array_get(cells, i);
            size_t d = json_array_size(c);
            json_int_t xyz[3] = {0, 0, 0};
            bool ok = (d == 2 || d == 3) && k < BATCH_MAX_HOLE;
            for (size_t j = 0; ok && j < d; j++) {
                json_t *e = json_array_get(c, j);
                ok = json_is_integer(e) && json_integer_value(e) >= -100000 &&
                     json_integer_value(e) <= 100000;
                xyz[j] = ok ? json_integer_value(e) : 0;
            }
            if (!ok) {
                srv_reply_error(rep, 400, "%s.cells[%zu]: expected [x, y] or [x, y, z], integers "
                                          "of at most 100000 (and at most %d cells)",
                                where, i, BATCH_MAX_HOLE);
                goto bad;
            }
            v[k++] = (tsr_cell){(int)xyz[0], (int)xyz[1], (int)xyz[2]};
        }
    } else {
        srv_reply_error(rep, 400, "%s: expected \"each-cell\", {\"rows\": [...]} or "
                                  "{\"cells\": [[x, y], ...]}", where);
        goto bad;
    }
    if (k == 0) {
        srv_reply_error(rep, 400, "%s: the hole has no cells", where);
        goto bad;
    }
    geo_normalize(v, k);
    for (int i = 1; i < k; i++)
        if (geo_cell_cmp(&v[i - 1], &v[i]) == 0) {
            srv_reply_error(rep, 400, "%s: cell (%d, %d, %d) is given twice", where, v[i].x,
                            v[i].y, v[i].z);
            goto bad;
        }
    *out = v;
    *n = k;
    return true;
bad:
    free(v);
    return false;
}

/* Sorted copy of cells, translated so that the min corner is 0; *corner
 * gets the min corner. */
static tsr_cell *normal_copy(const tsr_cell *c, int n, tsr_cell *corner)
{
    tsr_cell *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    if (v == NULL)
        return NULL;
    if (n > 0) /* none: c may be NULL */
        memcpy(v, c, (size_t)n * sizeof *v);
    *corner = n > 0 ? geo_min_corner(v, n) : (tsr_cell){0, 0, 0};
    geo_normalize(v, n);
    return v;
}

/* The transforms that map the board (its cells, optional cells and fixed
 * pieces' cells) onto itself, each with the translation that brings the
 * image back in place: t maps c to geo_apply(t, c) + shift.  The group is
 * what the job counts up to: mirror images too when unique is "mirror"; a
 * flat board may be turned over (what `rotations` counts up to, too). */
typedef struct board_sym {
    int n;
    geo_mat t[GEO_NTRANSFORMS];
    tsr_cell shift[GEO_NTRANSFORMS];
} board_sym;

static bool same_set_under(const geo_mat *t, const tsr_cell *c, int n, tsr_cell *scratch,
                           const tsr_cell *norm, tsr_cell *corner)
{
    for (int i = 0; i < n; i++)
        scratch[i] = geo_apply(t, c[i]);
    *corner = n > 0 ? geo_min_corner(scratch, n) : (tsr_cell){0, 0, 0};
    geo_normalize(scratch, n);
    return memcmp(scratch, norm, (size_t)n * sizeof *norm) == 0;
}

/* The colour of board cell c (0 off a coloured board): a binary search of
 * the board's cells sorted with their colours. */
static int color_at(const geo_ccell *v, int n, tsr_cell c)
{
    geo_ccell key = {c, 0};
    const geo_ccell *hit = bsearch(&key, v, (size_t)n, sizeof key, geo_ccell_cmp);
    return hit ? hit->color : 0;
}

/* Does t (with shift) keep the board's colouring?  A coloured board's
 * symmetries are those that do (docs/puzzle-format.md, "Colours"), so a
 * hole is not taken for another one on cells of other colours. */
static bool keeps_colors(const tsr_puzzle *pz, const geo_ccell *v, const geo_mat *t,
                         tsr_cell shift)
{
    for (int i = 0; v != NULL && i < pz->ncells; i++) {
        tsr_cell c = geo_apply(t, pz->cells[i]);
        c = (tsr_cell){c.x + shift.x, c.y + shift.y, c.z + shift.z};
        if (color_at(v, pz->ncells, c) != pz->colors[i])
            return false;
    }
    return true;
}

static int board_symmetries(const tsr_puzzle *pz, const tsr_cell *fixed, int nfixed,
                            bool mirror, board_sym *out)
{
    geo_mat all[GEO_NTRANSFORMS];
    geo_transforms(all);
    bool flat = true;
    for (int i = 0; i < pz->ncells; i++)
        flat = flat && pz->cells[i].z == pz->cells[0].z;
    tsr_cell lo, olo, flo;
    int big = pz->ncells;
    tsr_cell *bn = normal_copy(pz->cells, pz->ncells, &lo);
    tsr_cell *on = normal_copy(pz->optional, pz->noptional, &olo);
    tsr_cell *fn = normal_copy(fixed, nfixed, &flo);
    tsr_cell *scratch = malloc((size_t)big * sizeof *scratch);
    geo_ccell *colors = pz->colors ? malloc((size_t)pz->ncells * sizeof *colors) : NULL;
    out->n = 0;
    if (bn == NULL || on == NULL || fn == NULL || scratch == NULL ||
        (pz->colors != NULL && colors == NULL)) {
        free(bn), free(on), free(fn), free(scratch), free(colors);
        return TSR_ENOMEM;
    }
    for (int i = 0; colors != NULL && i < pz->ncells; i++)
        colors[i] = (geo_ccell){pz->cells[i], pz->colors[i]};
    if (colors != NULL)
        qsort(colors, (size_t)pz->ncells, sizeof *colors, geo_ccell_cmp);
    for (int g = 0; g < GEO_NTRANSFORMS; g++) {
        const geo_mat *t = &all[g];
        bool proper = g < GEO_NPROPER;
        /* flat: the 8 symmetries of the square, each twice (z kept or
         * turned over, the same on the plane): a flat board may be turned
         * over in every counting mode */
        if (flat ? (t->m[2][2] != 1 && t->m[2][2] != -1) : (!proper && !mirror))
            continue;
        tsr_cell corner, c2;
        if (!same_set_under(t, pz->cells, pz->ncells, scratch, bn, &corner))
            continue;
        tsr_cell shift = {lo.x - corner.x, lo.y - corner.y, lo.z - corner.z};
        bool ok = true;
        /* the optional cells and the fixed pieces must land on their own
         * kind, with the board's translation */
        for (int i = 0; ok && i < pz->noptional; i++) {
            tsr_cell c = geo_apply(t, pz->optional[i]);
            c2 = (tsr_cell){c.x + shift.x, c.y + shift.y, c.z + shift.z};
            ok = has_cell(on, pz->noptional, (tsr_cell){c2.x - olo.x, c2.y - olo.y, c2.z - olo.z});
        }
        for (int i = 0; ok && i < nfixed; i++) {
            tsr_cell c = geo_apply(t, fixed[i]);
            c2 = (tsr_cell){c.x + shift.x, c.y + shift.y, c.z + shift.z};
            ok = has_cell(fn, nfixed, (tsr_cell){c2.x - flo.x, c2.y - flo.y, c2.z - flo.z});
        }
        if (ok && keeps_colors(pz, colors, t, shift)) {
            out->t[out->n] = *t;
            out->shift[out->n++] = shift;
        }
    }
    free(bn), free(on), free(fn), free(scratch), free(colors);
    return 0;
}

/* The hole's cells at anchor `at` (hole[0] goes to it) into out, sorted;
 * false when one is not a free board cell. */
static bool place_hole(const tsr_cell *hole, int nh, tsr_cell at, const tsr_cell *free_cells,
                       int nfree, tsr_cell *out)
{
    for (int i = 0; i < nh; i++) {
        out[i] = (tsr_cell){hole[i].x - hole[0].x + at.x, hole[i].y - hole[0].y + at.y,
                            hole[i].z - hole[0].z + at.z};
        if (!has_cell(free_cells, nfree, out[i]))
            return false;
    }
    qsort(out, (size_t)nh, sizeof *out, geo_cell_cmp);
    return true;
}

/* Is this placed hole the first of its class (reading order of the sorted
 * cell lists) under the board's symmetries? */
static bool first_of_class(const board_sym *sym, const tsr_cell *h, int nh, tsr_cell *scratch)
{
    for (int g = 0; g < sym->n; g++) {
        for (int i = 0; i < nh; i++) {
            tsr_cell c = geo_apply(&sym->t[g], h[i]);
            scratch[i] = (tsr_cell){c.x + sym->shift[g].x, c.y + sym->shift[g].y,
                                    c.z + sym->shift[g].z};
        }
        qsort(scratch, (size_t)nh, sizeof *scratch, geo_cell_cmp);
        for (int i = 0; i < nh; i++) {
            int d = geo_cell_cmp(&scratch[i], &h[i]);
            if (d < 0)
                return false; /* an image comes first: it stands for the class */
            if (d > 0)
                break;
        }
    }
    return true;
}

/* The variants of `pz` (read from `body`'s puzzle) as members: the board
 * without the hole at each position, named after its position.  false
 * with the error in rep. */
static bool make_variants(jm_manager *m, json_t *body, const tsr_puzzle *pz,
                          const tsr_options *opt, const tsr_cell *hole, int nh, bool up_to,
                          member **out, int *nout, srv_reply *rep)
{

    /* free cells: the board less the optional cells and the fixed pieces */
    int nfixed = 0;
    for (int p = 0; p < pz->npieces; p++)
        if (pz->pieces[p].fixed)
            nfixed += pz->pieces[p].ncells;
    tsr_cell *fixed = malloc((size_t)(nfixed + 1) * sizeof *fixed);
    tsr_cell *opt_sorted = malloc((size_t)(pz->noptional + 1) * sizeof *opt_sorted);
    tsr_cell *free_cells = malloc((size_t)pz->ncells * sizeof *free_cells);
    tsr_cell *placed = malloc((size_t)nh * sizeof *placed);
    tsr_cell *scratch = malloc((size_t)nh * sizeof *scratch);
    board_sym *sym = calloc(1, sizeof *sym);
    member *mv = NULL;
    int nm = 0;
    size_t capm = 0;
    bool ok = false;
    if (!fixed || !opt_sorted || !free_cells || !placed || !scratch || !sym) {
        srv_reply_error(rep, 500, "out of memory");
        goto done;
    }
    nfixed = 0;
    for (int p = 0; p < pz->npieces; p++)
        if (pz->pieces[p].fixed)
            for (int i = 0; i < pz->pieces[p].ncells; i++)
                fixed[nfixed++] = pz->pieces[p].cells[i];
    qsort(fixed, (size_t)nfixed, sizeof *fixed, geo_cell_cmp);
    if (pz->noptional > 0) /* none: pz->optional may be NULL, which memcpy must not get */
        memcpy(opt_sorted, pz->optional, (size_t)pz->noptional * sizeof *opt_sorted);
    qsort(opt_sorted, (size_t)pz->noptional, sizeof *opt_sorted, geo_cell_cmp);
    int nfree = 0;
    for (int i = 0; i < pz->ncells; i++)
        if (!has_cell(fixed, nfixed, pz->cells[i]) &&
            !has_cell(opt_sorted, pz->noptional, pz->cells[i]))
            free_cells[nfree++] = pz->cells[i];
    qsort(free_cells, (size_t)nfree, sizeof *free_cells, geo_cell_cmp);
    if (board_symmetries(pz, fixed, nfixed, opt->unique == TSR_UNIQUE_MIRROR, sym) != 0) {
        srv_reply_error(rep, 500, "out of memory");
        goto done;
    }
    if (!up_to)
        sym->n = 0;

    json_t *pj = jm_puzzle_json(pz);
    json_t *oj = json_object_get(body, "options");
    if (pj == NULL) {
        srv_reply_error(rep, 500, "out of memory");
        goto done;
    }
    /* the whole board's counts and words are not a variant's */
    json_object_del(pj, "expected");
    json_object_del(pj, "description");
    const char *base = pz->name ? pz->name : "puzzle";
    for (int a = 0; a < nfree; a++) {
        if (!place_hole(hole, nh, free_cells[a], free_cells, nfree, placed) ||
            !first_of_class(sym, placed, nh, scratch))
            continue;
        if (nm == STO_MAX_BATCH_JOBS) {
            srv_reply_error(rep, 422, "request body: $.variants: more than %d positions of the "
                                      "hole; a batch has at most %d jobs",
                            STO_MAX_BATCH_JOBS, STO_MAX_BATCH_JOBS);
            break;
        }
        if (base_grow((void **)&mv, &capm, (size_t)nm, sizeof *mv, 16, 0) != 0) {
            srv_reply_error(rep, 500, "out of memory");
            break;
        }
        memset(&mv[nm], 0, sizeof *mv);
        nm++;
        tsr_cell c = geo_min_corner(placed, nh);
        char name[256], where[96];
        if (pz->cells[0].z == c.z && c.z == 0)
            snprintf(where, sizeof where, "(%d, %d)", c.x, c.y);
        else
            snprintf(where, sizeof where, "(%d, %d, %d)", c.x, c.y, c.z);
        snprintf(name, sizeof name, "%s, hole at %s", base, where);
        /* the board's cells (with their colours) and optional cells less the hole */
        json_t *vp = json_deep_copy(pj), *board = json_object();
        json_t *cells = json_array(), *optional = json_array(), *colors = json_array();
        for (int i = 0; i < pz->ncells; i++)
            if (!has_cell(placed, nh, pz->cells[i])) {
                json_array_append_new(cells, json_pack("[iii]", pz->cells[i].x, pz->cells[i].y,
                                                       pz->cells[i].z));
                if (pz->colors != NULL)
                    json_array_append_new(colors, json_integer(pz->colors[i]));
            }
        if (pz->colors != NULL)
            json_object_set(board, "colors", colors);
        json_decref(colors);
        for (int i = 0; i < pz->noptional; i++)
            json_array_append_new(optional, json_pack("[iii]", pz->optional[i].x,
                                                      pz->optional[i].y, pz->optional[i].z));
        json_object_set_new(board, "cells", cells);
        if (pz->noptional > 0)
            json_object_set_new(board, "optional", optional);
        else
            json_decref(optional);
        json_object_set_new(vp, "board", board);
        json_object_set_new(vp, "name", json_string(name));
        json_t *job = json_pack("{s:o}", "puzzle", vp);
        if (oj != NULL)
            json_object_set(job, "options", oj);
        char label[160];
        snprintf(label, sizeof label, "$.variants: the hole at %s: ", where);
        bool read = member_read(m, &mv[nm - 1], job, label, "", rep);
        json_decref(job);
        if (!read)
            break;
    }
    json_decref(pj);
    if (rep->status < 400 && nm == 0)
        srv_reply_error(rep, 422, "request body: $.variants.hole: fits nowhere on the board's "
                                  "free cells");
    ok = rep->status < 400;
done:
    free(fixed), free(opt_sorted), free(free_cells), free(placed), free(scratch);
    free(sym);
    if (!ok) {
        members_free(mv, nm);
        return false;
    }
    *out = mv;
    *nout = nm;
    return true;
}

/* The variants of $.puzzle that $.variants asks for.  The whole board is
 * read with the hole as one more piece (so that its volume matches the
 * pieces', as every variant's must), which is then dropped. */
static bool read_variants(jm_manager *m, json_t *body, json_t *job, member **out, int *n,
                          srv_reply *rep)
{
    json_t *variants = json_object_get(body, "variants");
    const char *key;
    json_t *v;
    json_object_foreach(variants, key, v) {
        if (strcmp(key, "hole") != 0 && strcmp(key, "up_to_symmetry") != 0) {
            srv_reply_error(rep, 400, "request body: $.variants.%s: unknown member (expected "
                                      "\"hole\", \"up_to_symmetry\")", key);
            return false;
        }
    }
    json_t *sym_j = json_object_get(variants, "up_to_symmetry");
    if (sym_j != NULL && !json_is_boolean(sym_j)) {
        srv_reply_error(rep, 400, "request body: $.variants.up_to_symmetry: expected true or "
                                  "false");
        return false;
    }
    if (json_object_get(variants, "hole") == NULL) {
        srv_reply_error(rep, 400, "request body: $.variants: \"hole\" is missing");
        return false;
    }
    json_t *puzzle = json_object_get(job, "puzzle");
    json_t *pieces = json_object_get(puzzle, "pieces");
    if (!json_is_object(puzzle) || !json_is_array(pieces)) {
        srv_reply_error(rep, 400, "request body: $.puzzle: expected a puzzle object with "
                                  "\"pieces\" (docs/puzzle-format.md)");
        return false;
    }
    /* holes are moved and turned as cubes (geo_transforms, translations of
     * x, y and z): not the plane lattices' motions.  An unknown name is
     * left to the reader, which lists the valid ones. */
    const char *lattice = json_string_value(json_object_get(puzzle, "lattice"));
    if (lattice != NULL && tsr_lattice_parse(lattice) > TSR_LATTICE_CUBIC) {
        srv_reply_error(rep, 422, "request body: $.puzzle.lattice: hole variants ($.variants) "
                                  "are made on the cubic lattice only, and this puzzle is on "
                                  "the %s lattice: list its variants as \"jobs\" instead",
                        lattice);
        return false;
    }
    tsr_cell *hole = NULL;
    int nh = 0;
    if (!hole_shape(json_object_get(variants, "hole"), &hole, &nh, rep))
        return false;
    /* a name no piece has */
    char name[32] = "hole";
    for (int k = 2;; k++) {
        size_t i = 0;
        while (i < json_array_size(pieces) &&
               strcmp(json_string_value(json_object_get(json_array_get(pieces, i), "name"))
                          ? json_string_value(json_object_get(json_array_get(pieces, i), "name"))
                          : "",
                      name) != 0)
            i++;
        if (i == json_array_size(pieces))
            break;
        snprintf(name, sizeof name, "hole%d", k);
    }
    json_t *cells = json_array();
    for (int i = 0; i < nh; i++)
        json_array_append_new(cells, json_pack("[iii]", hole[i].x, hole[i].y, hole[i].z));
    json_t *whole = json_deep_copy(job);
    json_array_append_new(json_object_get(json_object_get(whole, "puzzle"), "pieces"),
                          json_pack("{s:s,s:o}", "name", name, "cells", cells));
    char *text = json_dumps(whole, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(whole);
    tsr_puzzle *pz = NULL;
    tsr_options opt;
    bool ok = text != NULL && jm_read_puzzle(text, strlen(text), &pz, &opt, rep);
    free(text);
    if (!ok && rep->status == 422) {
        char where[96];
        snprintf(where, sizeof where, "$.variants: with the hole (%d cell%s) as one more piece, ",
                 nh, nh == 1 ? "" : "s");
        reword(rep, where, "");
    } else if (!ok && rep->status < 400) {
        srv_reply_error(rep, 500, "out of memory");
    }
    if (ok) {
        tsr_piece *last = &pz->pieces[--pz->npieces];
        free(last->name);
        free(last->cells);
        ok = make_variants(m, job, pz, &opt, hole, nh, sym_j == NULL || json_is_true(sym_j), out,
                           n, rep);
    }
    tsr_puzzle_free(pz);
    free(hole);
    return ok;
}

/* ---- POST /api/v1/batches ---------------------------------------------------------- */

/* The members a batch body asks for: $.jobs, or $.puzzle with $.variants. */
static bool read_batch(jm_manager *m, json_t *body, member **out, int *n, srv_reply *rep)
{
    const char *key;
    json_t *v;
    bool list = json_object_get(body, "jobs") != NULL;
    json_object_foreach(body, key, v) {
        static const char *const list_keys[] = {"name", "jobs", NULL};
        static const char *const variant_keys[] = {"name", "puzzle", "options", "variants",
                                                   NULL};
        const char *const *k = list ? list_keys : variant_keys;
        while (*k && strcmp(*k, key) != 0)
            k++;
        if (*k == NULL) {
            srv_reply_error(rep, 400, "request body: $.%s: unknown member (a batch is "
                                      "{\"name\", \"jobs\": [...]} or {\"name\", \"puzzle\", "
                                      "\"options\", \"variants\"})", key);
            return false;
        }
    }
    json_t *name = json_object_get(body, "name");
    if (name != NULL && (!json_is_string(name) || json_string_length(name) > 200)) {
        srv_reply_error(rep, 400, "request body: $.name: expected a string of at most 200 "
                                  "bytes");
        return false;
    }
    if (!list) {
        if (json_object_get(body, "puzzle") == NULL || json_object_get(body, "variants") == NULL) {
            srv_reply_error(rep, 400, "request body: expected \"jobs\": [...], or \"puzzle\" "
                                      "with \"variants\"");
            return false;
        }
        if (!json_is_object(json_object_get(body, "variants"))) {
            srv_reply_error(rep, 400, "request body: $.variants: expected an object");
            return false;
        }
        json_t *job = json_pack("{s:O}", "puzzle", json_object_get(body, "puzzle"));
        if (json_object_get(body, "options"))
            json_object_set(job, "options", json_object_get(body, "options"));
        bool ok = read_variants(m, body, job, out, n, rep);
        json_decref(job);
        return ok;
    }
    json_t *jobs = json_object_get(body, "jobs");
    size_t count = json_array_size(jobs);
    if (!json_is_array(jobs) || count == 0 || count > STO_MAX_BATCH_JOBS) {
        srv_reply_error(rep, json_is_array(jobs) && count > 0 ? 422 : 400,
                        "request body: $.jobs: expected an array of 1 to %d job objects%s",
                        STO_MAX_BATCH_JOBS, json_is_array(jobs) && count > 0 ? ", got more" : "");
        return false;
    }
    member *mv = calloc(count, sizeof *mv);
    if (mv == NULL) {
        srv_reply_error(rep, 500, "out of memory");
        return false;
    }
    for (size_t i = 0; i < count; i++) {
        char where[32];
        snprintf(where, sizeof where, "$.jobs[%zu]", i);
        if (!json_is_object(json_array_get(jobs, i))) {
            srv_reply_error(rep, 400, "request body: %s: expected a job object "
                                      "{\"puzzle\": {...}, \"options\": {...}}", where);
            members_free(mv, (int)i + 1);
            return false;
        }
        if (!member_read(m, &mv[i], json_array_get(jobs, i), where, NULL, rep)) {
            members_free(mv, (int)i + 1);
            return false;
        }
    }
    *out = mv;
    *n = (int)count;
    return true;
}

void jm_batch_submit(void *ctx, const char *body, size_t len, srv_reply *rep)
{
    jm_manager *m = ctx;
    if (jm_refuse_lost(m, rep))
        return;
    json_error_t jerr;
    json_t *root = len ? json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr) : NULL;
    if (!json_is_object(root)) {
        srv_reply_error(rep, 400, "request body: %s%s", root ? "expected a JSON object" :
                        len ? "not valid JSON: " : "empty; expected a batch object",
                        root || !len ? "" : jerr.text);
        json_decref(root);
        return;
    }
    member *mv = NULL;
    int n = 0;
    if (!read_batch(m, root, &mv, &n, rep)) {
        json_decref(root);
        return;
    }
    /* the spec: the request less its puzzles, for the batch's page */
    json_t *spec = json_object();
    json_t *name = json_object_get(root, "name");
    if (json_object_get(root, "variants"))
        json_object_set(spec, "variants", json_object_get(root, "variants"));
    json_object_set_new(spec, "jobs", json_integer(n));
    char *spec_text = json_dumps(spec, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(spec);
    const char **docs = calloc((size_t)n, sizeof *docs), **opts = calloc((size_t)n, sizeof *opts);
    int *prio = calloc((size_t)n, sizeof *prio);
    int64_t *ids = calloc((size_t)n, sizeof *ids), group = 0, created = 0;
    jm_job **jobs = calloc((size_t)n, sizeof *jobs);
    tsr_err err = {{0}};
    int rc = spec_text && docs && opts && prio && ids && jobs ? 0 : TSR_ENOMEM;
    for (int i = 0; rc == 0 && i < n; i++) {
        docs[i] = mv[i].doc;
        opts[i] = mv[i].options;
        prio[i] = mv[i].opt.priority;
        if ((jobs[i] = calloc(1, sizeof **jobs)) == NULL)
            rc = TSR_ENOMEM;
    }
    if (rc == 0) {
        base_lock(&m->db_mu);
        rc = sto_batch_create(m->db, name ? json_string_value(name) : NULL, spec_text, n, docs,
                              opts, prio, &group, ids, &created, &err);
        base_unlock(&m->db_mu);
    } else {
        tsr_err_set(&err, rc, "out of memory");
    }
    if (rc != 0) {
        srv_reply_error(rep, rc == TSR_EINVAL ? 400 : rc == TSR_EIO ? 503 : 500, "%s", err.msg);
    } else {
        for (int i = 0; i < n; i++)
            jm_job_init(jobs[i], m, ids[i], group, created, &mv[i].opt, mv[i].options,
                        mv[i].pz);
        base_lock(&m->mu);
        for (int i = 0; i < n; i++) {
            if (jm_add_job(m, jobs[i]) != 0) {
                /* stored, so the next start-up loads it; say so */
                srv_reply_error(rep, 500, "out of memory (batch %lld is stored: restart the "
                                          "daemon to run it)", (long long)group);
                jm_free_job(jobs[i]);
            } else {
                jm_touch(m, jobs[i]);
            }
            jobs[i] = NULL;
        }
        base_unlock(&m->mu);
        if (rep->status < 400) {
            jm_batches(m, group, 0, 0, rep);
            if (rep->status == 200)
                rep->status = 201;
            snprintf(rep->location, sizeof rep->location, "/api/v1/batches/%lld",
                     (long long)group);
        }
    }
    for (int i = 0; jobs && i < n; i++)
        free(jobs[i]);
    free(jobs), free(ids), free(prio), free(docs), free(opts), free(spec_text);
    members_free(mv, n);
    json_decref(root);
}

/* ---- GET /api/v1/batches[/{id}] ------------------------------------------------------ */

/* A batch's members' states and counts, summed (under mu). */
static json_t *summary_json(jm_manager *m, const sto_batch *g, json_t *jobs_out)
{
    BASE_HELD(&m->mu);
    int states[TSR_JOB_NSTATES] = {0}, n = 0;
    long long solutions = 0;
    for (int i = 0; i < m->njobs; i++) {
        const jm_job *j = m->jobs[i];
        if (j->batch != g->id)
            continue;
        n++;
        states[j->state]++;
        solutions += j->solutions;
        if (jobs_out)
            json_array_append_new(jobs_out, jm_job_json(j, false));
    }
    json_t *o = json_object(), *st = json_object();
    json_object_set_new(o, "id", json_integer(g->id));
    json_object_set_new(o, "name", g->name ? json_string(g->name) : json_null());
    json_object_set_new(o, "created", json_integer(g->created));
    json_t *spec = json_loads(g->spec, 0, NULL);
    json_object_set_new(o, "spec", spec ? spec : json_null());
    json_object_set_new(o, "jobs", json_integer(n));
    int finished = 0; /* members in a final state */
    for (int s = 0; s < TSR_JOB_NSTATES; s++) {
        json_object_set_new(st, sto_state_name((enum sto_state)s), json_integer(states[s]));
        if (sto_state_final((enum sto_state)s))
            finished += states[s];
    }
    json_object_set_new(o, "states", st);
    json_object_set_new(o, "finished", json_integer(finished));
    json_object_set_new(o, "solutions", json_integer(solutions));
    json_object_set_new(o, "done", json_boolean(finished == n));
    return o;
}

/* Members by solutions found, fewest first (0 and 1 are what a designer
 * looks for), then by id. */
static int by_count(const void *a, const void *b)
{
    json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
    json_int_t sx = json_integer_value(json_object_get(x, "solutions"));
    json_int_t sy = json_integer_value(json_object_get(y, "solutions"));
    json_int_t ix = json_integer_value(json_object_get(x, "id"));
    json_int_t iy = json_integer_value(json_object_get(y, "id"));
    return sx != sy ? (sx < sy ? -1 : 1) : (ix > iy) - (ix < iy);
}

void jm_batches(void *ctx, int64_t id, int64_t after, int limit, srv_reply *rep)
{
    jm_manager *m = ctx;
    sto_batch *groups = NULL, one = {0};
    int n = 0, rc;
    tsr_err err = {{0}};
    base_lock(&m->rd_mu);
    if (id > 0) {
        rc = sto_batch_get(m->rdb, id, &one, &err);
        n = rc == 0;
    } else {
        rc = sto_batch_list(m->rdb, after, limit, &groups, &n, &err);
    }
    base_unlock(&m->rd_mu);
    if (rc != 0) {
        if (id > 0 && rc == TSR_EINVAL)
            srv_reply_error(rep, 404, "no batch %lld", (long long)id);
        else
            srv_reply_error(rep, rc == TSR_EIO ? 503 : 500, "%s", err.msg);
        return;
    }
    if (id > 0) {
        json_t *jobs = json_array();
        base_lock(&m->mu);
        json_t *o = summary_json(m, &one, jobs);
        base_unlock(&m->mu);
        size_t k = json_array_size(jobs);
        json_t **v = malloc((k + 1) * sizeof *v);
        json_t *sorted = json_array();
        if (v != NULL) {
            for (size_t i = 0; i < k; i++)
                v[i] = json_array_get(jobs, i);
            qsort(v, k, sizeof *v, by_count);
            for (size_t i = 0; i < k; i++)
                json_array_append(sorted, v[i]);
        }
        free(v);
        json_decref(jobs);
        json_object_set_new(o, "members", sorted);
        sto_batch_clear(&one);
        rep->status = 200;
        rep->json = o;
        return;
    }
    json_t *arr = json_array();
    base_lock(&m->mu);
    for (int i = 0; i < n; i++)
        json_array_append_new(arr, summary_json(m, &groups[i], NULL));
    base_unlock(&m->mu);
    json_t *o = json_object();
    json_object_set_new(o, "batches", arr);
    json_object_set_new(o, "next", n == limit && n > 0 ? json_integer(groups[n - 1].id)
                                                       : json_null());
    sto_batches_free(groups, n);
    rep->status = 200;
    rep->json = o;
}
