/*
 * fits.c - where each piece fits: the placement diagnostics a designer
 * reads before searching.
 *
 * A puzzle whose required piece has no placement on the board, or whose
 * required cell no piece can cover, has no solution; searching it only to
 * report 0 helps nobody, so the doors (the CLI, validate, submit and
 * estimate) refuse it with a message that names the piece or the cells.
 * A piece that may stay out (count_min 0) and fits nowhere is only worth
 * a warning, which the caller words from the counts.
 *
 * Two readings: tsr_puzzle_fits compiles the placements alone (what a door
 * can afford: milliseconds for the puzzles people draw, and a stop hook for
 * the rest), tsr_solver_fits reads a prepared solver and adds what the root
 * filters left (a placement that strands a region the volume filter
 * removes), so "none of its 12 placements leaves the board fillable" is
 * said before a search, not after.  With a goal (partial assemblies) no
 * piece and no cell is required, so nothing is refused.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/search_impl.h"

/* "this 4x4 board", "this 3x3x3 board" or "this board of 23 cells". */
static void board_words(const img_problem *ip, char *buf, size_t size)
{
    const tsr_puzzle *pz = ip->pz;
    long w = ip->hi.x - ip->lo.x + 1, h = ip->hi.y - ip->lo.y + 1, d = ip->hi.z - ip->lo.z + 1;
    if (w * h * d != pz->ncells)
        snprintf(buf, size, "this board of %d cells", pz->ncells);
    else if (d == 1)
        snprintf(buf, size, "this %ldx%ld board", w, h);
    else
        snprintf(buf, size, "this %ldx%ldx%ld board", w, h, d);
}

static int cell_words(const tsr_cell *c, bool flat, char *buf, size_t size)
{
    return flat ? snprintf(buf, size, "(%d, %d)", c->x, c->y)
                : snprintf(buf, size, "(%d, %d, %d)", c->x, c->y, c->z);
}

/* Fill out[] (one per puzzle piece) from the compiled images and, when
 * `alive` is given, the root filters' survivors; then the verdict.  Returns
 * 0, TSR_EINVAL with the reason, TSR_ENOMEM or TSR_ECANCELED. */
static int fits_of(const img_problem *ip, const unsigned char *alive, int goal,
                   const tsr_stop *stop, tsr_fit *out, tsr_err *err)
{
    const tsr_puzzle *pz = ip->pz;
    for (int p = 0; p < pz->npieces; p++)
        out[p] = (tsr_fit){0, alive != NULL ? 0 : -1};
    unsigned long work = 0;
    for (int t = 0; t < ip->ntypes; t++) {
        const img_type *ty = &ip->types[t];
        tsr_fit *f = &out[ty->piece];
        f->placements = ty->nimages;
        for (int i = ty->first; alive != NULL && i < ty->first + ty->nimages; i++)
            f->usable += alive[i];
    }
    if (goal > 0) /* a partial assembly needs no particular piece or cell */
        return 0;
    char board[64];
    board_words(ip, board, sizeof board);
    for (int t = 0; t < ip->ntypes; t++) {
        const img_type *ty = &ip->types[t];
        const tsr_fit *f = &out[ty->piece];
        const char *name = pz->pieces[ty->piece].name;
        if (ty->count_min > 0 && f->placements == 0) /* colours may be why: say so */
            return tsr_err_set(err, TSR_EINVAL, "piece %s fits nowhere on %s%s", name, board,
                               ty->ocolor != NULL && ip->color != NULL
                                   ? " with its colours (see the allowed colour pairs)" : "");
    }
    /* required cells that no placement of a piece allowed a copy covers */
    unsigned char *covered = calloc((size_t)(ip->ncells ? ip->ncells : 1), 1);
    if (covered == NULL)
        return TSR_ENOMEM;
    for (int i = 0; i < ip->nimages; i++) {
        if (img_stopped(stop, &work, (unsigned long)img_size(ip, i))) {
            free(covered);
            return TSR_ECANCELED;
        }
        if (ip->types[ip->img_type[i]].count > 0)
            for (int k = 0; k < img_size(ip, i); k++)
                covered[img_cells_of(ip, i)[k]] = 1;
    }
    int bare = 0;
    char list[160] = "";
    size_t used = 0;
    for (int c = 0; c < ip->ncells; c++) {
        if (covered[c] || (ip->optional != NULL && ip->optional[c]))
            continue;
        if (bare++ < 4 && used < sizeof list) {
            if (bare > 1)
                used += (size_t)snprintf(list + used, sizeof list - used, ", ");
            if (used < sizeof list)
                used += (size_t)cell_words(&ip->cells[c], ip->dims == 2 && ip->L.nkinds == 1,
                                           list + used,
                                           sizeof list - used);
        }
    }
    free(covered);
    if (bare > 0)
        return tsr_err_set(err, TSR_EINVAL, "%s %s%s on %s can be covered by no piece%s",
                           bare == 1 ? "board cell" : "board cells", list,
                           bare > 4 ? " and more" : "", board,
                           ip->color != NULL ? " of the colours allowed there" : "");
    /* last, as the plainer reasons above explain it when they hold */
    for (int t = 0; t < ip->ntypes; t++) {
        const img_type *ty = &ip->types[t];
        if (ty->count_min > 0 && out[ty->piece].usable == 0)
            return tsr_err_set(err, TSR_EINVAL,
                               "piece %s: none of its %ld placements on %s leaves the rest of "
                               "the board fillable (the volume filter removed them all)",
                               pz->pieces[ty->piece].name, out[ty->piece].placements, board);
    }
    return 0;
}

int tsr_solver_fits(const tsr_solver *s, tsr_fit *out, tsr_err *err)
{
    return fits_of(s->ip, s->alive, s->opt.goal, NULL, out, err);
}

int tsr_puzzle_fits(const tsr_puzzle *pz, const tsr_options *opt, long max_images,
                    const tsr_stop *stop, tsr_fit *out, tsr_err *err)
{
    int rc = tsr_puzzle_validate(pz, NULL, err);
    img_problem *ip = NULL;
    if (rc == 0)
        rc = img_compile(pz, max_images, stop, &ip, err);
    if (rc == 0)
        rc = fits_of(ip, NULL, opt != NULL ? opt->goal : 0, stop, out, err);
    img_free(ip);
    return rc;
}

/* A piece that may stay out and fits nowhere (the warning a door gives),
 * into buf; false when piece p is not one. */
bool tsr_fit_warning(const tsr_puzzle *pz, const tsr_fit *fits, int p, char *buf, size_t size)
{
    const tsr_piece *pc = &pz->pieces[p];
    if (pc->fixed || pc->count_min > 0)
        return false;
    if (fits[p].placements == 0)
        snprintf(buf, size, "piece %s fits nowhere on the board, so no solution uses it", pc->name);
    else if (fits[p].usable == 0)
        snprintf(buf, size, "piece %s: none of its %ld placements leaves the rest of the board "
                 "fillable, so no solution uses it", pc->name, fits[p].placements);
    else
        return false;
    return true;
}

char *tsr_fits_json(const tsr_puzzle *pz, const tsr_fit *fits)
{
    json_t *o = json_object(), *pieces = json_array(), *warnings = json_array();
    for (int p = 0; o && pieces && warnings && p < pz->npieces; p++) {
        const tsr_piece *pc = &pz->pieces[p];
        json_t *e = json_pack("{s:s, s:b, s:[i, i], s:I}", "piece", pc->name, "fixed", pc->fixed,
                              "copies", pc->count_min, pc->count, "placements",
                              (json_int_t)fits[p].placements);
        if (e != NULL && fits[p].usable >= 0)
            json_object_set_new(e, "usable", json_integer(fits[p].usable));
        json_array_append_new(pieces, e);
        char w[TSR_MAX_NAME + 160];
        if (tsr_fit_warning(pz, fits, p, w, sizeof w))
            json_array_append_new(warnings, json_string(w));
    }
    json_object_set_new(o, "pieces", pieces);
    json_object_set_new(o, "warnings", warnings);
    char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    return text;
}
