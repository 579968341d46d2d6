/*
 * search.c - the search driver: options -> plan, DLX at the top of the tree,
 * FILA below the handoff, and leaves -> reported solutions.
 *
 * Plan.  Every level of the tree is named by p, the number of piece copies
 * still to place (P at the root, 0 at a solution).  The heuristic schedule
 * gives a letter per level; DLX runs while p > fila (or while the open cells
 * do not fit FILA's 128-bit field), FILA below.  DLX reads 's' and 'e' as
 * min-fit and the fixed orders (f x y z r a) as ranked cells; FILA reads
 * 'e' and 's' as its E and S heuristics and every fixed order as its
 * ordered, POF-filtered lists, numbered in that order.
 *
 * Leaves.  A complete assembly is accepted only when it is the canonical
 * member of its symmetry class among those this search can find
 * (symmetry.h), then expanded into the solutions the uniqueness mode
 * reports.  So every configuration reports the same solutions.
 *
 * Loose puzzles (count ranges, optional cells) run DLX alone, without the
 * filters, triggers and redundancy filter (loose_options).  A leaf is a
 * node where no required cell is open and no type can take another row;
 * between the two, branch_subset enumerates the pieces that may still go
 * on optional cells (docs/engine.md says why this is exact).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/base.h"
#include "engine/dlx.h"
#include "engine/fila.h"
#include "engine/filters.h"
#include "engine/images.h"
#include "engine/search.h"
#include "engine/symmetry.h"

#define MAX_IMAGES 20000000L
/* How often (DLX branches) the driver ticks: DLX nodes cost microseconds,
 * so this is about every millisecond */
#define DLX_TICK_MASK 0x3ff
/* candidates for the constrained piece whose search is estimated (those
 * with fewest placements first); each costs a few tens of milliseconds */
#define MAX_ESTIMATED 16

struct tsr_solver {
    const tsr_puzzle *pz;
    tsr_options opt;
    img_problem *ip;
    sym_group *g;
    uint64_t mode_mask;
    int ctype;              /* type constrained by the redundancy filter, -1 */
    unsigned char *keep;    /* redundancy filter flags */
    unsigned char *alive;   /* images left after the root filters */
    const tsr_stop *stop;   /* during tsr_solver_prepare only: its latch */
    int nalive;
    int P;                  /* piece copies */
    char *heur;             /* [p], p = 0..P */
    double *angle;
    double **rank;          /* [p]: DLX cell ranks, NULL for min-fit */
    double *ranks;          /* storage behind rank[] */
    fila_plan plan;
    char *fila_heur;
    flt_parity *parity;
    char config[512];
};

/* ---------------------------------------------------------------------------
 * Heuristic schedules
 */

static bool known_letter(char c) { return strchr("sfexyzra", c) != NULL && c != '\0'; }

int srch_parse_order(const char *spec, int maxp, char *heur, double *angle, tsr_err *err)
{
    enum { MAXENT = 32 };
    char let[MAXENT];
    double ang[MAXENT];
    long thr[MAXENT];
    int n = 0;
    const char *s = spec;
    while (*s) {
        if (n == MAXENT)
            return tsr_err_set(err, TSR_EINVAL, "order '%s': too many entries", spec);
        if (!known_letter(*s))
            return tsr_err_set(err, TSR_EINVAL,
                               "order '%s': unknown heuristic '%c' (use s f e x y z r a)", spec, *s);
        let[n] = *s++;
        ang[n] = 0;
        thr[n] = -1;
        if (*s == '@') {
            if (let[n] != 'a')
                return tsr_err_set(err, TSR_EINVAL, "order '%s': only 'a' takes @ANGLE", spec);
            char *end;
            ang[n] = strtod(s + 1, &end);
            if (end == s + 1 || !isfinite(ang[n]))
                return tsr_err_set(err, TSR_EINVAL, "order '%s': bad angle", spec);
            s = end;
        }
        if (*s == '=') {
            char *end;
            thr[n] = strtol(s + 1, &end, 10);
            if (end == s + 1 || thr[n] < 0 || thr[n] > 1000000)
                return tsr_err_set(err, TSR_EINVAL, "order '%s': bad piece count after '='", spec);
            s = end;
        }
        if (*s == ':')
            s++;
        else if (*s != '\0')
            return tsr_err_set(err, TSR_EINVAL, "order '%s': unexpected '%c'", spec, *s);
        n++;
    }
    for (int p = 0; p <= maxp; p++) {
        int best = -1;
        for (int i = 0; i < n; i++)
            if ((thr[i] < 0 || thr[i] >= p) &&
                (best < 0 || (thr[i] >= 0 && (thr[best] < 0 || thr[i] < thr[best]))))
                best = i;
        heur[p] = best < 0 ? 's' : let[best];
        angle[p] = best < 0 ? 0 : ang[best];
    }
    return 0;
}

/* The first-cell order's axes, most significant first: the longest axis
 * leads, so a rectangle is filled across its short side first (Fletcher and
 * de Bruijn's order); ext gets the box's extent along x, y, z. */
static void f_axes(const img_problem *ip, int ax[3], int ext[3])
{
    ext[0] = ip->hi.x - ip->lo.x + 1;
    ext[1] = ip->hi.y - ip->lo.y + 1;
    ext[2] = ip->hi.z - ip->lo.z + 1;
    ax[0] = 2, ax[1] = 1, ax[2] = 0;
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++)
            if (ext[ax[j]] > ext[ax[i]]) {
                int t = ax[i];
                ax[i] = ax[j];
                ax[j] = t;
            }
}

/* Cell ranks of a fixed-order heuristic (lower is filled first).  The 'f'
 * rank is the cell's index in the bounding box, in f_axes order. */
static void compute_rank(const img_problem *ip, char h, double ang, double *rank)
{
    double cx = 0, cy = 0, cz = 0;
    for (int c = 0; c < ip->ncells; c++) {
        cx += ip->cells[c].x;
        cy += ip->cells[c].y;
        cz += ip->cells[c].z;
    }
    if (ip->ncells > 0) {
        cx /= ip->ncells;
        cy /= ip->ncells;
        cz /= ip->ncells;
    }
    int ax[3], ext[3];
    f_axes(ip, ax, ext);
    for (int c = 0; c < ip->ncells; c++) {
        const tsr_cell *q = &ip->cells[c];
        int v[3] = {q->x - ip->lo.x, q->y - ip->lo.y, q->z - ip->lo.z};
        double dx = q->x - cx, dy = q->y - cy, dz = q->z - cz;
        switch (h) {
        case 'x': rank[c] = v[0]; break;
        case 'y': rank[c] = v[1]; break;
        case 'z': rank[c] = v[2]; break;
        case 'r': rank[c] = -(dx * dx + dy * dy + dz * dz); break;
        case 'a': {
            double a = atan2(dy, dx) * 180.0 / M_PI - ang;
            rank[c] = fmod(fmod(a, 360.0) + 360.0, 360.0);
            break;
        }
        default:
            rank[c] = ((double)v[ax[0]] * ext[ax[1]] + v[ax[1]]) * ext[ax[2]] + v[ax[2]];
            break;
        }
    }
}

static bool is_ordered(char h) { return h != 's' && h != 'e'; }

int srch_check_fila_order(const char *heur, const double *angle, int maxp, int nfila,
                          const char *spec, tsr_err *err)
{
    char order = 0;
    double at = 0;
    for (int p = 0; p <= maxp && p <= nfila; p++) {
        if (!is_ordered(heur[p]))
            continue;
        if (order && (order != heur[p] || at != angle[p]))
            return tsr_err_set(err, TSR_EINVAL,
                               "order '%s': FILA levels may use only one fixed order", spec);
        order = heur[p];
        at = angle[p];
    }
    return 0;
}

/* Render the schedule compactly, e.g. "s=12:e=11:f=3". */
static void format_order(const char *heur, const double *angle, int P, char *out, size_t size)
{
    size_t len = 0;
    out[0] = '\0';
    for (int p = P; p >= 0; p--) {
        if (p < P && heur[p] == heur[p + 1] && angle[p] == angle[p + 1])
            continue;
        char ang[32] = "";
        if (heur[p] == 'a')
            snprintf(ang, sizeof ang, "@%g", angle[p]);
        len += (size_t)snprintf(out + len, len < size ? size - len : 0, "%s%c%s=%d",
                                len ? ":" : "", heur[p], ang, p);
    }
}

/* ---------------------------------------------------------------------------
 * Solver preparation
 */

void tsr_solver_free(tsr_solver *s)
{
    if (s == NULL)
        return;
    img_free(s->ip);
    sym_free(s->g);
    free(s->keep);
    free(s->alive);
    free(s->heur);
    free(s->angle);
    free(s->rank);
    free(s->ranks);
    free(s->fila_heur);
    free((void *)s->plan.rank);
    flt_parity_free(s->parity);
    free(s);
}

/* Apply the root filters (volume once, fit, parity) to the images the
 * redundancy filter kept; the survivors are s->alive. */
static int root_filters(tsr_solver *s)
{
    const img_problem *ip = s->ip;
    dlx *d = dlx_new(ip, s->keep, s->stop);
    int *stack = malloc((size_t)(ip->nimages ? ip->nimages : 1) * sizeof *stack);
    int *rows = malloc((size_t)(ip->nimages ? ip->nimages : 1) * sizeof *rows);
    flt_volume *vol = flt_volume_new(ip);
    int rc = 0, n = 0;
    if (d == NULL || stack == NULL || rows == NULL || vol == NULL)
        rc = TSR_ENOMEM;
    if (rc == 0 && s->opt.volume != 0)
        flt_volume_filter(vol, d, stack, &n);
    if (rc == 0 && s->opt.pfilter > 0 && s->parity != NULL) {
        int hp = 0;
        for (int c = 0; c < ip->ncells; c++)
            hp += img_color(ip, c);
        flt_parity_filter(s->parity, ip, d, flt_parity_state(s->parity, ip, d), hp, rows, stack,
                          &n);
    }
    if (rc == 0 && s->opt.fit > 0)
        flt_fit_filter(d, rows, stack, &n);
    if (rc == 0) {
        s->alive = calloc((size_t)(ip->nimages ? ip->nimages : 1), 1);
        if (s->alive == NULL)
            rc = TSR_ENOMEM;
    }
    if (rc == 0) {
        int nr = dlx_rows(d, rows);
        for (int i = 0; i < nr; i++)
            s->alive[rows[i]] = 1;
        s->nalive = nr;
    }
    flt_volume_free(vol);
    free(rows);
    free(stack);
    dlx_free(d);
    return rc;
}

/* Knuth's estimate of the nodes the search below the root would visit with
 * type t constrained: the root's options are enumerated (they are the
 * constrained piece's placements, whose subtrees differ most), and each
 * subtree is estimated by random descents through FILA exactly as the
 * search would run it.  Returns -1 when FILA would not take over right
 * below the root. */
static double estimate_candidate(const tsr_solver *s, fila *f, int t, int budget)
{
    const img_problem *ip = s->ip;
    unsigned char *keep = malloc((size_t)(ip->nimages ? ip->nimages : 1));
    dlx *d = keep ? (sym_filter_keep(ip, s->g, t, keep), dlx_new(ip, keep, s->stop)) : NULL;
    double total = -1;
    int options, root = d ? dlx_choose(d, s->rank[s->P], &options) : -1;
    if (root >= 0 && options >= dlx_need_of(d, root) && options > 0) {
        int per_child = budget / options > 16 ? budget / options : 16;
        uint64_t rng = 0x2545F4914F6CDD1Dull;
        /* one build of the lists serves every child when the root's
         * state fits FILA's fields (fila_estimate says why), else each
         * child builds its own */
        bool shared = fila_can_build(f, d);
        total = !shared || fila_probe_begin(f, d) == 0 ? options : -1;
        dlx_cover_column(d, root);
        for (int x = dlx_first(d, root); x >= 0 && total >= 0; x = dlx_next(d, x)) {
            dlx_select(d, x);
            double sub = -1;
            if (fila_can_take(f, d) && shared)
                sub = fila_estimate(f, dlx_row_of(d, x), per_child, &rng);
            else if (fila_can_take(f, d) && fila_probe_begin(f, d) == 0)
                sub = fila_estimate(f, -1, per_child, &rng);
            dlx_unselect(d, x);
            total = sub < 0 ? -1 : total + sub;
        }
        dlx_uncover_column(d, root);
    }
    dlx_free(d);
    free(keep);
    return total;
}

/* The rotational-redundancy filter: among the pieces that break the most
 * symmetry, the one whose constrained search is estimated smallest (a
 * large, awkward piece placed first usually prunes best; the estimate
 * measures it instead of guessing).  When the first candidate's search is
 * small anyway, it is kept without estimating the others: then the choice
 * is polycube's, the piece with the fewest placements. */
static int choose_constrained_piece(tsr_solver *s, const int *cands, int n)
{
    const img_problem *ip = s->ip;
    s->ctype = n > 0 ? cands[0] : -1;
    if (n > 1 && s->opt.redundancy[0] == '\0' && s->opt.fila == s->P - 1) {
        fila *f = fila_new(ip, &s->plan);
        if (f == NULL)
            return TSR_ENOMEM;
        /* a quick look at the first candidate tells whether the choice is
         * worth its cost (about a second's worth of probes for the cubes);
         * fewer probes per candidate would not tell the best pieces apart */
        double best = estimate_candidate(s, f, cands[0], 200);
        if (best > 2e7)
            for (int i = 0; i < n && i < MAX_ESTIMATED; i++) {
                double est = estimate_candidate(s, f, cands[i], 3000);
                if (est >= 0 && (i == 0 || est < best)) {
                    best = est;
                    s->ctype = cands[i];
                }
            }
        fila_free(f);
    }
    s->keep = malloc((size_t)(ip->nimages ? ip->nimages : 1));
    if (s->keep == NULL)
        return TSR_ENOMEM;
    sym_filter_keep(ip, s->g, s->ctype, s->keep);
    return 0;
}

/* A loose puzzle runs DLX alone: FILA fills every cell, and the filters,
 * triggers and the redundancy filter assume fixed counts and no optional
 * cell.  Settles their automatic values to off and refuses explicit ones,
 * so the options in force read back to the same configuration. */
static int loose_options(tsr_options *o, tsr_err *err)
{
    const char *bad = o->fila > 0        ? "fila"
                      : o->goal > 0      ? "goal"
                      : o->volume > 0 || o->volume == -2 ? "volume"
                      : o->parity > 0    ? "parity"
                      : o->vtrigger > 0  ? "vtrigger"
                      : o->pfilter > 0   ? "pfilter"
                      : o->fit > 0       ? "fit"
                      : o->redundancy[0] != '\0' && strcmp(o->redundancy, "off") != 0
                          ? "redundancy"
                          : NULL;
    if (bad != NULL)
        return tsr_err_set(err, TSR_EINVAL,
                           "option '%s' needs fixed piece counts and no optional cells", bad);
    o->fila = o->volume = o->parity = o->vtrigger = o->pfilter = o->fit = 0;
    if (o->nof < 0)
        o->nof = 0; /* a FILA filter */
    snprintf(o->redundancy, sizeof o->redundancy, "off");
    return 0;
}

/* Fill in every automatic choice from the puzzle's size and shape. */
static void choose_defaults(tsr_solver *s)
{
    tsr_options *o = &s->opt;
    bool flat = s->ip->dims == 2;
    if (o->fila < 0)
        o->fila = s->ctype >= 0 ? s->P - 1 : s->P;
    if (o->fila > s->P)
        o->fila = s->P;
    if (o->order[0] == '\0') {
        /* DLX keeps min-fit; FILA fills 2D boards in order and estimates the
         * most constrained cell in 3D, switching to the cheap order for the
         * last three pieces */
        if (flat)
            snprintf(o->order, sizeof o->order, "s:f=%d", o->fila);
        else if (o->fila > 3)
            snprintf(o->order, sizeof o->order, "s:e=%d:f=3", o->fila);
        else
            snprintf(o->order, sizeof o->order, "s:f=%d", o->fila);
    }
    if (o->nof < 0)
        o->nof = 1;
    if (o->volume == -1)
        o->volume = flat ? -2 : 0;
    if (o->parity < 0)
        o->parity = 0;
    if (o->fit < 0)
        o->fit = 0;
}

static int build_plan(tsr_solver *s, tsr_err *err)
{
    const img_problem *ip = s->ip;
    int P = s->P;
    s->heur = calloc((size_t)P + 2, 1);
    s->angle = calloc((size_t)P + 2, sizeof *s->angle);
    s->rank = calloc((size_t)P + 2, sizeof *s->rank);
    s->ranks = malloc((size_t)(P + 2) * (size_t)(ip->ncells ? ip->ncells : 1) * sizeof(double));
    s->fila_heur = calloc((size_t)P + 2, 1);
    double *frank = malloc((size_t)(ip->ncells ? ip->ncells : 1) * sizeof(double));
    if (!s->heur || !s->angle || !s->rank || !s->ranks || !s->fila_heur || !frank) {
        free(frank);
        return TSR_ENOMEM;
    }
    s->plan.rank = frank;
    int rc = srch_parse_order(s->opt.order, P, s->heur, s->angle, err);
    if (rc == 0)
        rc = srch_check_fila_order(s->heur, s->angle, P, s->opt.fila, s->opt.order, err);
    if (rc)
        return rc;
    char fila_order = 0;
    double fila_angle = 0;
    for (int p = 0; p <= P; p++) {
        char h = s->heur[p];
        if (is_ordered(h)) {
            s->rank[p] = s->ranks + (size_t)p * ip->ncells;
            compute_rank(ip, h, s->angle[p], s->rank[p]);
        }
        if (p <= s->opt.fila) {
            s->fila_heur[p] = is_ordered(h) ? 'f' : h;
            if (is_ordered(h)) {
                fila_order = h; /* one only (srch_check_fila_order) */
                fila_angle = s->angle[p];
            }
        }
    }
    compute_rank(ip, fila_order ? fila_order : 'f', fila_angle, frank);
    if (fila_order == 0 || fila_order == 'f') {
        int ax[3], ext[3];
        f_axes(ip, ax, ext);
        long box = (long)ext[0] * ext[1] * ext[2];
        if (box <= FILA_MAX_BITS) {
            s->plan.box = (int)box;
            s->plan.stride[ax[2]] = 1;
            s->plan.stride[ax[1]] = ext[ax[2]];
            s->plan.stride[ax[0]] = ext[ax[2]] * ext[ax[1]];
            memcpy(s->plan.ext, ext, sizeof ext);
        }
    }
    s->plan.maxp = s->opt.fila;
    s->plan.heur = s->fila_heur;
    s->plan.nof = s->opt.nof > 0;
    s->plan.goal = s->opt.goal;
    if (s->opt.parity > 0 && s->parity != NULL) {
        s->plan.parity_min = s->opt.parity;
        s->plan.type_class = s->parity->type_class;
        s->plan.class_radix = s->parity->class_radix;
        s->plan.parity_ok = s->parity->ok;
        s->plan.parity_words = s->parity->words;
        s->plan.parity_range = s->parity->range;
    }
    return 0;
}

int tsr_solver_new(const tsr_puzzle *pz, const tsr_options *opt, tsr_solver **out, tsr_err *err)
{
    return tsr_solver_prepare(pz, opt, NULL, out, err);
}

/* The caller's stop, latched: once it has asked to stop, every phase of
 * the preparation sees it, and a phase that could only fail (a DLX
 * matrix given up reads as out of memory) is known to have been stopped. */
typedef struct prep_stop {
    tsr_stop hook;
    const tsr_stop *user;
    bool stopped;
} prep_stop;

static int prep_stopped(void *ctx)
{
    prep_stop *p = ctx;
    if (!p->stopped && p->user != NULL && p->user->stop != NULL)
        p->stopped = p->user->stop(p->user->ctx) != 0;
    return p->stopped;
}

int tsr_solver_prepare(const tsr_puzzle *pz, const tsr_options *opt, const tsr_stop *user,
                       tsr_solver **out, tsr_err *err)
{
    prep_stop ps = {{prep_stopped, NULL}, user, false};
    ps.hook.ctx = &ps;
    const tsr_stop *stop = &ps.hook;
    *out = NULL;
    int rc = tsr_puzzle_validate(pz, NULL, err);
    if (rc)
        return rc;
    tsr_solver *s = calloc(1, sizeof *s);
    if (s == NULL)
        return TSR_ENOMEM;
    s->pz = pz;
    s->stop = stop;
    if (opt)
        s->opt = *opt;
    else
        tsr_options_init(&s->opt);
    if (s->opt.goal < 0)
        rc = tsr_err_set(err, TSR_EINVAL, "goal must not be negative");
    if (rc == 0)
        rc = img_compile(pz, MAX_IMAGES, stop, &s->ip, err);
    if (rc == 0) {
        s->P = s->ip->ncopies;
        if (s->P >= FILA_MAX_COPIES)
            rc = tsr_err_set(err, TSR_ETOOBIG, "too many pieces (%d)", s->P);
    }
    if (rc == 0 && s->opt.goal > s->P)
        rc = tsr_err_set(err, TSR_EINVAL, "goal %d exceeds the %d pieces", s->opt.goal, s->P);
    if (rc == 0 && !s->ip->exact)
        rc = loose_options(&s->opt, err);
    if (rc == 0)
        rc = sym_build(s->ip, stop, &s->g);
    int *cands = NULL, ncands = 0;
    if (rc == 0) {
        s->mode_mask = sym_mode_mask(s->g, s->opt.unique);
        cands = malloc((size_t)(s->ip->ntypes ? s->ip->ntypes : 1) * sizeof *cands);
        ncands = cands ? sym_filter_candidates(s->ip, s->g, s->opt.redundancy, cands, err)
                       : TSR_ENOMEM;
        if (ncands < 0)
            rc = ncands;
    }
    if (rc == 0) {
        s->ctype = ncands > 0 ? cands[0] : -1; /* for the defaults; settled below */
        choose_defaults(s);
        /* the parity table also settles at the root that a puzzle like the
         * 35 hexominoes in a rectangle has no solution */
        s->parity = s->ip->exact ? flt_parity_new(s->ip) : NULL;
        rc = build_plan(s, err);
    }
    if (rc == 0)
        rc = choose_constrained_piece(s, cands, ncands);
    free(cands);
    if (rc == 0) /* the options in force name the choice, so they reproduce it */
        snprintf(s->opt.redundancy, sizeof s->opt.redundancy, "%s",
                 s->ctype >= 0 ? pz->pieces[s->ip->types[s->ctype].piece].name : "off");
    if (rc == 0)
        rc = root_filters(s);
    s->stop = NULL; /* ps lives on this stack */
    if (ps.stopped)
        rc = tsr_err_set(err, TSR_ECANCELED, "preparation stopped");
    if (rc) {
        tsr_solver_free(s);
        return rc;
    }
    char order[256];
    format_order(s->heur, s->angle, s->P, order, sizeof order);
    const tsr_options *o = &s->opt;
    char vol[32];
    if (o->volume == -2)
        snprintf(vol, sizeof vol, "once");
    else if (o->volume > 0)
        snprintf(vol, sizeof vol, "%d", o->volume);
    else
        snprintf(vol, sizeof vol, "off");
    snprintf(s->config, sizeof s->config,
             "fila=%d order=%s nof=%s volume=%s vtrigger=%d parity=%d pfilter=%d fit=%s "
             "redundancy=%s group=%d images=%d/%d",
             o->fila, order, o->nof ? "on" : "off", vol, o->vtrigger,
             s->parity ? o->parity : 0, s->parity ? o->pfilter : 0, o->fit ? "on" : "off",
             s->ctype >= 0 ? pz->pieces[s->ip->types[s->ctype].piece].name : "off",
             tsr_solver_group_order(s),
             s->nalive, s->ip->nimages);
    *out = s;
    return 0;
}

const char *tsr_solver_config(const tsr_solver *s) { return s->config; }
const tsr_options *tsr_solver_options(const tsr_solver *s) { return &s->opt; }
int tsr_solver_nimages(const tsr_solver *s) { return s->ip->nimages; }
int tsr_solver_ncopies(const tsr_solver *s) { return s->P; }
int tsr_solver_group_order(const tsr_solver *s)
{
    int n = 0;
    for (int e = 0; e < s->g->n; e++)
        n += s->g->full[e];
    return n;
}

int tsr_solver_image(const tsr_solver *s, int id, tsr_placement *out, tsr_cell *cells)
{
    const img_problem *ip = s->ip;
    if (id < 0 || id >= ip->nimages)
        return TSR_EINVAL;
    const int *c = img_cells_of(ip, id);
    int n = img_size(ip, id);
    for (int i = 0; cells != NULL && i < n; i++)
        cells[i] = ip->cells[c[i]];
    *out = (tsr_placement){ip->types[ip->img_type[id]].piece, n, cells};
    return 0;
}

static tsr_solution build_solution(const tsr_solver *s, const int *ids, int n, tsr_placement *pl,
                                   tsr_cell *cells);

int tsr_solver_max_members(const tsr_solver *s) { return s->g->n; }

void tsr_solver_solution_room(const tsr_solver *s, int *placements, long *cells)
{
    *placements = s->pz->npieces + s->P; /* as run_init sizes report()'s */
    *cells = tsr_puzzle_piece_volume(s->pz) + 1;
}

/* Valid ids for a solution of s: in range, at most one per piece copy. */
static bool valid_ids(const tsr_solver *s, const int *images, int n)
{
    if (n < 0 || n > s->ip->ncopies)
        return false;
    for (int i = 0; i < n; i++)
        if (images[i] < 0 || images[i] >= s->ip->nimages)
            return false;
    return true;
}

int tsr_solver_members(const tsr_solver *s, const int *images, int n, int *out)
{
    if (!valid_ids(s, images, n))
        return TSR_EINVAL;
    if (s->opt.goal > 0) { /* a partial assembly stands for itself */
        memcpy(out, images, (size_t)n * sizeof *out);
        return 1;
    }
    return sym_expand(s->ip, s->g, s->mode_mask, images, n, out);
}

int tsr_solver_solution(const tsr_solver *s, const int *images, int n, tsr_placement *pl,
                        tsr_cell *cells, tsr_solution *out)
{
    if (!valid_ids(s, images, n))
        return TSR_EINVAL;
    *out = build_solution(s, images, n, pl, cells);
    return 0;
}

void tsr_stats_free(tsr_stats *st)
{
    if (st == NULL)
        return;
    free(st->attempts);
    free(st->fits);
    st->attempts = st->fits = NULL;
}

/* ---------------------------------------------------------------------------
 * A run
 */

typedef struct run {
    const tsr_solver *s;
    const img_problem *ip;
    const tsr_callbacks *cb;
    tsr_stats *st;
    dlx *d;
    fila *f;
    flt_volume *vol;
    int *path, depth;       /* images placed above FILA, start images first */
    int *hidden, nhidden;   /* filter stack */
    int *rows;
    int *sol, *scratch, *expand;
    tsr_placement *pl;
    tsr_cell *plcells;
    int hp, pstate;
    /* progress: the task's weight (known once its replay ends, -1 before)
     * and the fraction last computed; `dirty` is set by a loop (or FILA)
     * that ended having given work away, with the weight it did search,
     * for the loop above to take */
    double w_task, fraction;
    bool dirty;
    double dirty_done;
    unsigned tick;
    double t0, next_progress;
    int stop, err;
    fila_hooks hooks;
    /* sampling */
    uint64_t rng;
    int sample_r, trial_done;
    /* tasks: images still to place by replay, and the DLX loops' state for
     * progress and for giving untried siblings away (indexed by depth) */
    unsigned char *forced;
    int nforced;
    int *lvl_node;          /* the row being searched */
    int *lvl_done;          /* children finished before it ... */
    int *lvl_ndirty;        /* ... of which dirty (they gave work away) ... */
    double *lvl_dirty_done; /* ... having searched this much */
    int *lvl_given;         /* children given away */
    double *lvl_w;          /* weight of each child of the loop */
    unsigned char *lvl_active, *lvl_cut;
    int *donation;          /* scratch: the images of one task */
    bool in_fila;
} run;

/* What the finished children of DLX loop d searched: a clean child its
 * whole share, a dirty one what it reported. */
static double loop_done(const run *r, int d, int finished)
{
    return r->lvl_w[d] * (double)(finished - r->lvl_ndirty[d]) + r->lvl_dirty_done[d];
}

/* Knuth's estimate of the weight searched so far, from the running path:
 * at every live DLX loop and FILA level, the weight of the children
 * finished before the current one.  Only sums, never differences: a child
 * whose subtree gave work away counts what it searched, so the estimate
 * keeps its precision on deep trees where the finished part is a tiny
 * fraction of what was given away.  Read only from a tick, when the path
 * is consistent: a DLX loop's finished children include the one just
 * searched, and FILA's live levels are those above the tick.  Never
 * decreases while the run goes on.  Sums the small terms first, in
 * extended precision, so that the deep levels move it on very deep trees. */
static double progress_now(const run *r)
{
    if (r->sample_r > 0)
        return 0; /* sampling does not cover the tree */
    long double done = r->in_fila ? fila_progress(r->f) : 0;
    for (int d = r->s->P; d >= 0; d--)
        if (r->lvl_active[d])
            done += loop_done(r, d, r->lvl_done[d]);
    return done > 1 ? 1 : (double)done;
}

static void refresh_stats(run *r)
{
    tsr_stats *st = r->st;
    st->nodes = 0;
    for (int p = 0; p < st->levels; p++)
        st->nodes += st->fits[p];
    st->fraction = r->fraction;
    st->seconds = base_now() - r->t0;
}

static void split(run *r, bool all);

/* Periodic work: progress callback, cancellation, work sharing.  Returns
 * r->stop. */
static int tick(void *ctx)
{
    run *r = ctx;
    int want = r->cb && r->cb->split_wanted ? r->cb->split_wanted(r->cb->ctx) : 0;
    if (want != TSR_SPLIT_NONE)
        split(r, want == TSR_SPLIT_ALL);
    if (r->cb && r->cb->progress) {
        double t = base_now();
        if (t >= r->next_progress) {
            double every = r->cb->progress_seconds > 0 ? r->cb->progress_seconds : 1;
            r->next_progress = t + every;
            r->fraction = progress_now(r);
            refresh_stats(r);
            if (r->cb->progress(r->cb->ctx, r->st))
                r->stop = 1;
        }
    }
    return r->stop;
}

/* The public solution for `n` image ids plus the fixed pieces, in pl and
 * cells (sized as tsr_solver_solution says). */
static tsr_solution build_solution(const tsr_solver *s, const int *ids, int n, tsr_placement *pl,
                                   tsr_cell *cells)
{
    const tsr_puzzle *pz = s->pz;
    const img_problem *ip = s->ip;
    int k = 0;
    for (int p = 0; p < pz->npieces; p++)
        if (pz->pieces[p].fixed)
            pl[k++] = (tsr_placement){p, pz->pieces[p].ncells, pz->pieces[p].cells};
    for (int i = 0; i < n; i++) {
        const int *c = img_cells_of(ip, ids[i]);
        int size = img_size(ip, ids[i]);
        for (int j = 0; j < size; j++)
            cells[j] = ip->cells[c[j]];
        pl[k++] = (tsr_placement){ip->types[ip->img_type[ids[i]]].piece, size, cells};
        cells += size;
    }
    return (tsr_solution){k, pl};
}

static void report(run *r, const int *ids, int n)
{
    tsr_solution sol = build_solution(r->s, ids, n, r->pl, r->plcells);
    r->st->solutions++;
    if (r->cb && r->cb->solution && r->cb->solution(r->cb->ctx, &sol))
        r->stop = 1;
    if (r->s->opt.limit > 0 && r->st->solutions >= (uint64_t)r->s->opt.limit)
        r->stop = 1;
}

/* A class of `count` solutions to the found callback, cut to the limit. */
static void report_class(run *r, const int *ids, int n, int count)
{
    uint64_t limit = r->s->opt.limit > 0 ? (uint64_t)r->s->opt.limit : 0;
    if (limit > 0 && r->st->solutions + (uint64_t)count > limit)
        count = (int)(limit - r->st->solutions);
    if (count <= 0)
        return;
    r->st->solutions += (uint64_t)count;
    if (r->cb->found(r->cb->ctx, ids, n, count))
        r->stop = 1;
    if (limit > 0 && r->st->solutions >= limit)
        r->stop = 1;
}

/* A leaf: the images placed above (path[0..depth)) and `extra` placed by
 * FILA, gathered into sol[0..*n).  Returns what the leaf reports in the
 * solver's mode: for a partial assembly (--goal) 1, as found; for a whole
 * solution (sorted into its key) the number of solutions of its class in
 * the mode when it is the class's canonical member (written to `expand`
 * unless that is NULL), else 0; or a negative error code.  The search and
 * the estimator both count leaves with it. */
static int leaf_solutions(const tsr_solver *s, const int *path, int depth, const int *extra,
                          int nextra, int *sol, int *n, int *scratch, int *expand)
{
    *n = 0;
    for (int i = 0; i < depth; i++)
        sol[(*n)++] = path[i];
    for (int i = 0; i < nextra; i++)
        sol[(*n)++] = extra[i];
    if (s->opt.goal > 0)
        return 1;
    sym_sort(sol, *n);
    if (!sym_accept(s->ip, s->g, s->ctype >= 0 ? s->keep : NULL, sol, *n, scratch))
        return 0;
    return sym_expand(s->ip, s->g, s->mode_mask, sol, *n, expand);
}

/* A leaf of the run: its solutions reported one by one, or as one class
 * when the caller takes classes (tsr_callbacks.found). */
static int leaf(void *ctx, const int *extra, int nextra)
{
    run *r = ctx;
    const tsr_solver *s = r->s;
    bool classes = r->cb && r->cb->found;
    int n, m = leaf_solutions(s, r->path, r->depth, extra, nextra, r->sol, &n, r->scratch,
                              classes ? NULL : r->expand);
    if (m < 0) {
        r->err = m;
        r->stop = 1;
    }
    if (m <= 0)
        return r->stop;
    if (s->opt.goal == 0)
        r->st->classes++;
    if (classes) {
        sym_sort(r->sol, n); /* a partial assembly too: a class is a sorted set */
        report_class(r, r->sol, n, m);
    } else if (s->opt.goal > 0) {
        report(r, r->sol, n);
    } else {
        for (int i = 0; i < m && !r->stop; i++)
            report(r, r->expand + (size_t)i * n, n);
    }
    return r->stop;
}

/* The leaf hook: a leaf that ends the run leaves the progress at that
 * point as the run's last estimate (no tick comes after it). */
static int leaf_hook(void *ctx, const int *extra, int nextra)
{
    run *r = ctx;
    int stop = leaf(r, extra, nextra);
    if (stop)
        r->fraction = progress_now(r);
    return stop;
}

static void trace(run *r, int img)
{
    const img_problem *ip = r->ip;
    const int *c = img_cells_of(ip, img);
    int size = img_size(ip, img);
    for (int j = 0; j < size; j++)
        r->plcells[j] = ip->cells[c[j]];
    tsr_placement pl = {ip->types[ip->img_type[img]].piece, size, r->plcells};
    r->cb->trace(r->cb->ctx, r->depth - 1, &pl);
}

/* xorshift64*: the random choices of sampling and of the estimator */
static inline uint64_t rng_step(uint64_t *x)
{
    *x ^= *x >> 12;
    *x ^= *x << 25;
    *x ^= *x >> 27;
    return *x * 2685821657736338717ull;
}

static inline uint64_t rng_next(run *r) { return rng_step(&r->rng); }

static void dlx_rec(run *r, double w);

/* Place the row at node x, search below with weight cw, undo.  A replayed
 * placement (on a task's path) was counted by the run that gave the task.
 * With `whole` x's column is not covered by the caller (a type column
 * that may take more rows): the row is placed as a whole image. */
static void branch(run *r, int x, int p, double cw, bool replay, bool whole)
{
    const tsr_solver *s = r->s;
    const img_problem *ip = r->ip;
    int img = dlx_row_of(r->d, x);
    if (!replay) {
        r->st->attempts[p]++;
        r->st->fits[p]++;
    } else {
        r->forced[img] = 0;
        r->nforced--;
    }
    if (whole)
        dlx_place(r->d, img);
    else
        dlx_select(r->d, x);
    r->path[r->depth++] = img;
    int par = img_parity(ip, img), cls = s->parity ? s->parity->type_class[ip->img_type[img]] : -1;
    r->hp -= par;
    if (cls >= 0)
        r->pstate -= s->parity->class_radix[cls];
    if (r->cb && r->cb->trace)
        trace(r, img);
    bool ok = true;
    if (s->parity && s->opt.parity > 0 && p - 1 >= s->opt.parity)
        ok = flt_parity_ok(s->parity, r->pstate, r->hp);
    if (ok && s->opt.vtrigger > 0 && p - 1 >= s->opt.vtrigger)
        ok = flt_volume_ok(r->vol, r->d);
    if (ok)
        dlx_rec(r, cw);
    else if (replay)
        r->w_task = cw; /* the task's node is pruned: it is done as it starts */
    r->hp += par;
    if (cls >= 0)
        r->pstate += s->parity->class_radix[cls];
    r->depth--;
    if (whole)
        dlx_unplace(r->d, img);
    else
        dlx_unselect(r->d, x);
    if (replay) {
        r->forced[img] = 1;
        r->nforced++;
    }
}

/* Give away the untried siblings of the shallowest DLX loop that has any,
 * else of FILA's shallowest live level; with `all`, of every level.  The
 * giver counts the siblings' placements, as its loop would have; their
 * weight goes with them. */
static void split(run *r, bool all)
{
    const int P = r->s->P;
    for (int d = 0; d <= r->depth; d++) { /* a DLX tick comes from the loop at r->depth */
        if (!r->lvl_active[d] || r->lvl_cut[d] || dlx_next(r->d, r->lvl_node[d]) < 0)
            continue;
        memcpy(r->donation, r->path, (size_t)d * sizeof *r->donation);
        for (int y = dlx_next(r->d, r->lvl_node[d]); y >= 0; y = dlx_next(r->d, y)) {
            r->donation[d] = dlx_row_of(r->d, y);
            r->st->attempts[P - d]++;
            r->st->fits[P - d]++;
            r->cb->donate(r->cb->ctx, r->donation, d + 1, r->lvl_w[d]);
            r->lvl_given[d]++;
        }
        r->lvl_cut[d] = 1;
        if (!all)
            return;
    }
    if (r->in_fila) {
        memcpy(r->donation, r->path, (size_t)r->depth * sizeof *r->donation);
        fila_donate(r->f, r->donation, r->depth, all, r->cb->donate, r->cb->ctx);
    }
}

static void replay_at_once(run *r, double w);

/* Hide type column t's first rows down to (not including) node `stop`, or
 * all of them when stop < 0, onto the filter stack. */
static void hide_before(run *r, int t, int stop)
{
    for (int y = dlx_first(r->d, t); y >= 0 && y != stop; y = dlx_first(r->d, t)) {
        int img = dlx_row_of(r->d, y);
        dlx_hide(r->d, img);
        r->hidden[r->nhidden++] = img;
    }
}

/* A loose puzzle's subset node on a task's path (see branch_subset): the
 * child that places the task's image of type t, with the rows before it
 * hidden as the search had them, or the last child when the task has no
 * image of type t.  False when the task is not a node of this search. */
static bool replay_subset(run *r, int t, int p, double w)
{
    dlx *d = r->d;
    const img_type *ty = &r->ip->types[t - r->ip->ncells];
    int options = dlx_col_len(d, t) + 1, mark = r->nhidden, x;
    for (x = dlx_first(d, t); x >= 0 && !r->forced[dlx_row_of(d, x)]; x = dlx_next(d, x))
        ;
    if (x < 0)
        for (int i = ty->first; i < ty->first + ty->nimages; i++)
            if (r->forced[i])
                return false; /* an image of t the search cannot place here */
    hide_before(r, t, x);
    if (x >= 0)
        branch(r, x, p, w / options, true, true);
    else
        dlx_rec(r, w / options);
    while (r->nhidden > mark)
        dlx_unhide(d, r->hidden[--r->nhidden]);
    return true;
}

/* One level of a task's path: the column the search would branch on holds
 * exactly one of the task's images; take it alone.  When none is there the
 * images are not a node of this search, and they are all placed at once. */
static void replay(run *r, int p, double w)
{
    dlx *d = r->d;
    int options, c = dlx_choose(d, r->s->rank[p], &options), x = -1;
    if (c >= 0 && options > 0 && options >= dlx_need_of(d, c))
        for (x = dlx_first(d, c); x >= 0 && !r->forced[dlx_row_of(d, x)]; x = dlx_next(d, x))
            ;
    if (x >= 0) {
        dlx_cover_column(d, c);
        branch(r, x, p, w / options, true, false);
        dlx_uncover_column(d, c);
        return;
    }
    if (c < 0 && !r->ip->exact) {
        int low, t = dlx_open_type(d, &low);
        if (t >= 0 && replay_subset(r, t, p, w))
            return;
    }
    replay_at_once(r, w);
}

/* The images of a task that is not a node of this search, all at once. */
static void replay_at_once(run *r, double w)
{
    dlx *d = r->d;
    int placed = 0;
    for (int i = 0; i < r->ip->nimages && r->nforced > 0; i++)
        if (r->forced[i] && dlx_place(d, i)) {
            r->forced[i] = 0;
            r->nforced--;
            r->path[r->depth++] = i;
            r->hp -= img_parity(r->ip, i);
            placed++;
        }
    if (r->s->parity)
        r->pstate = flt_parity_state(r->s->parity, r->ip, d);
    dlx_rec(r, w);
    while (placed-- > 0) {
        int i = r->path[--r->depth];
        dlx_unplace(d, i);
        r->forced[i] = 1;
        r->nforced++;
        r->hp += img_parity(r->ip, i);
    }
    if (r->s->parity)
        r->pstate = flt_parity_state(r->s->parity, r->ip, d);
}

/* A DLX loop at `depth` publishes itself for progress and split(): the
 * weight of each child, how many are finished, which of those were dirty
 * (gave work away) and what they searched.  A loop whose children are not
 * tasks starts cut, so that split() passes it by. */
static void loop_begin(run *r, int depth, double cw, bool not_tasks)
{
    r->lvl_active[depth] = 1;
    r->lvl_cut[depth] = not_tasks;
    r->lvl_w[depth] = cw;
    r->lvl_given[depth] = 0;
    r->lvl_done[depth] = 0;
    r->lvl_ndirty[depth] = 0;
    r->lvl_dirty_done[depth] = 0;
}

/* A child of the loop is done: counted (taking what a dirty one searched),
 * then the periodic tick, when the path is consistent. */
static void loop_child_done(run *r, int depth)
{
    r->lvl_done[depth]++;
    if (r->dirty) {
        r->lvl_ndirty[depth]++;
        r->lvl_dirty_done[depth] += r->dirty_done;
        r->dirty = false;
    }
    if ((++r->tick & DLX_TICK_MASK) == 0)
        tick(r);
}

/* The loop of `options` children ends: when it gave work away or has a
 * dirty child, what it searched (its children but those given away) goes
 * up for the loop above to take. */
static void loop_end(run *r, int depth, int options)
{
    r->lvl_active[depth] = 0;
    if ((r->lvl_given[depth] > 0 || r->lvl_ndirty[depth] > 0) && !r->stop) {
        r->dirty = true;
        r->dirty_done = loop_done(r, depth, options - r->lvl_given[depth]);
    }
}

/* Branch on every row of column c (options rows) at a node of weight w:
 * in order, publishing the loop for split() to cut short, or in random
 * order when sampling. */
static void branch_column(run *r, int c, int options, int p, double w)
{
    dlx *d = r->d;
    dlx_cover_column(d, c);
    double cw = w / options;
    if (r->sample_r > 0 && p > r->sample_r) {
        int *order = malloc((size_t)options * sizeof *order), n = 0;
        if (order == NULL) {
            r->err = TSR_ENOMEM;
            r->stop = 1;
        } else {
            for (int x = dlx_first(d, c); x >= 0; x = dlx_next(d, x))
                order[n++] = x;
            for (int i = n - 1; i > 0; i--) {
                int j = (int)(rng_next(r) % (uint64_t)(i + 1)), t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
            for (int i = 0; i < n && !r->stop && !r->trial_done; i++) {
                branch(r, order[i], p, cw, false, false);
                if ((++r->tick & DLX_TICK_MASK) == 0)
                    tick(r);
            }
            free(order);
        }
    } else {
        int depth = r->depth;
        r->lvl_active[depth] = 1;
        r->lvl_cut[depth] = 0;
        r->lvl_w[depth] = cw;
        loop_begin(r, depth, cw, false);
        for (int x = dlx_first(d, c); x >= 0 && !r->stop; x = dlx_next(d, x)) {
            r->lvl_node[depth] = x;
            branch(r, x, p, cw, false, false);
            loop_child_done(r, depth);
            if (r->sample_r > 0 && p <= r->sample_r) {
                r->trial_done = 1; /* a sampling trial ends after one subtree here */
                break;
            }
            if (r->lvl_cut[depth])
                break; /* the rest was given away */
        }
        loop_end(r, depth, options);
    }
    dlx_uncover_column(d, c);
}

/* A loose puzzle's node where no column can be branched on: every
 * required cell is covered and type column t still has rows, all on
 * optional cells.  Its children place t's rows in order, each hidden once
 * its subtree is done, and the last child places no more of t (it is dead
 * when t still needs copies).  So every set of t's copies is met once, in
 * increasing row order, never in k! orders.  The children are not tasks
 * (each assumes the rows before it hidden), so split() passes this loop
 * by; replay_subset rebuilds them on a task's path. */
static void branch_subset(run *r, int t, int p, double w)
{
    dlx *d = r->d;
    int depth = r->depth, mark = r->nhidden, options = dlx_col_len(d, t) + 1;
    double cw = w / options;
    loop_begin(r, depth, cw, true);
    for (int child = 0; child < options && !r->stop && !r->trial_done; child++) {
        int x = dlx_first(d, t);
        if (x >= 0) {
            r->lvl_node[depth] = x;
            branch(r, x, p, cw, false, true);
            hide_before(r, t, dlx_next(d, x));
        } else {
            dlx_rec(r, cw);
        }
        loop_child_done(r, depth);
    }
    loop_end(r, depth, options);
    while (r->nhidden > mark)
        dlx_unhide(d, r->hidden[--r->nhidden]);
}

static void dlx_rec(run *r, double w)
{
    const tsr_solver *s = r->s;
    dlx *d = r->d;
    int p = dlx_remaining_copies(d);
    if (r->nforced == 0 && r->w_task < 0)
        r->w_task = w; /* a task's replay ends here */
    if (p == s->opt.goal && r->ip->exact) {
        leaf_hook(r, NULL, 0);
        return;
    }
    /* sampling needs DLX's random choices down to the sampling level */
    if (p <= s->plan.maxp && (r->sample_r == 0 || p < r->sample_r) && r->f != NULL &&
        fila_can_take(r->f, d)) {
        r->in_fila = true;
        int rc = fila_search(r->f, d, r->hp, w, &r->hooks, r->nforced > 0 ? r->forced : NULL);
        r->in_fila = false;
        if (r->w_task < 0)
            r->w_task = fila_task_weight(r->f); /* the replay ended inside FILA */
        r->dirty = fila_dirty(r->f, &r->dirty_done);
        if (rc < 0) {
            r->err = rc;
            r->stop = 1;
        }
        return;
    }
    int mark = r->nhidden;
    if (s->opt.volume > 0 && p >= s->opt.volume && p < s->P)
        flt_volume_filter(r->vol, d, r->hidden, &r->nhidden);
    if (s->parity && s->opt.pfilter > 0 && p >= s->opt.pfilter && p < s->P)
        flt_parity_filter(s->parity, r->ip, d, r->pstate, r->hp, r->rows, r->hidden, &r->nhidden);
    if (r->nforced > 0) {
        replay(r, p, w);
    } else {
        int options, c = dlx_choose(d, s->rank[p], &options), low;
        if (c >= 0 && options >= dlx_need_of(d, c) && options > 0)
            branch_column(r, c, options, p, w);
        else if (c < 0 && !r->ip->exact && (c = dlx_open_type(d, &low)) >= 0)
            branch_subset(r, c, p, w);
        else if (c < 0 && !r->ip->exact)
            leaf_hook(r, NULL, 0); /* the dead check of dlx_choose saw every minimum met */
    }
    while (r->nhidden > mark)
        dlx_unhide(d, r->hidden[--r->nhidden]);
}

static void run_free(run *r)
{
    dlx_free(r->d);
    fila_free(r->f);
    flt_volume_free(r->vol);
    free(r->path);
    free(r->hidden);
    free(r->rows);
    free(r->sol);
    free(r->scratch);
    free(r->expand);
    free(r->pl);
    free(r->plcells);
    free(r->forced);
    free(r->lvl_node);
    free(r->lvl_done);
    free(r->lvl_ndirty);
    free(r->lvl_dirty_done);
    free(r->lvl_given);
    free(r->lvl_active);
    free(r->lvl_cut);
    free(r->lvl_w);
    free(r->donation);
}

static int run_init(run *r, const tsr_solver *s, const tsr_callbacks *cb, tsr_stats *st)
{
    memset(r, 0, sizeof *r);
    const img_problem *ip = s->ip;
    size_t ni = (size_t)(ip->nimages ? ip->nimages : 1), nc = (size_t)ip->ncopies + 1;
    memset(st, 0, sizeof *st);
    st->levels = ip->ncopies + 1;
    st->attempts = calloc((size_t)st->levels, sizeof *st->attempts);
    st->fits = calloc((size_t)st->levels, sizeof *st->fits);
    r->s = s;
    r->ip = ip;
    r->cb = cb;
    r->st = st;
    r->d = dlx_new(ip, s->alive, NULL);
    r->f = s->plan.maxp > 0 || s->opt.fila > 0 ? fila_new(ip, &s->plan) : NULL;
    r->vol = flt_volume_new(ip);
    r->path = malloc(nc * sizeof *r->path);
    r->hidden = malloc(ni * sizeof *r->hidden);
    r->rows = malloc(ni * sizeof *r->rows);
    r->sol = malloc(nc * sizeof *r->sol);
    r->scratch = malloc((nc + (size_t)ip->ntypes) * sizeof *r->scratch);
    r->expand = malloc((size_t)s->g->n * nc * sizeof *r->expand);
    r->pl = malloc(((size_t)s->pz->npieces + nc) * sizeof *r->pl);
    r->plcells = malloc((size_t)(tsr_puzzle_piece_volume(s->pz) + 1) * sizeof *r->plcells);
    r->forced = calloc(ni, 1);
    r->lvl_node = malloc(nc * sizeof *r->lvl_node);
    r->lvl_done = calloc(nc, sizeof *r->lvl_done);
    r->lvl_ndirty = calloc(nc, sizeof *r->lvl_ndirty);
    r->lvl_dirty_done = calloc(nc, sizeof *r->lvl_dirty_done);
    r->lvl_given = calloc(nc, sizeof *r->lvl_given);
    r->lvl_active = calloc(nc, 1);
    r->lvl_cut = calloc(nc, 1);
    r->lvl_w = calloc(nc, sizeof *r->lvl_w);
    r->donation = malloc(nc * sizeof *r->donation);
    if (!r->forced || !r->lvl_node || !r->lvl_done || !r->lvl_ndirty || !r->lvl_dirty_done ||
        !r->lvl_given || !r->lvl_w ||
        !r->lvl_active || !r->lvl_cut || !r->donation ||
        !st->attempts || !st->fits || !r->d || (s->plan.maxp > 0 && !r->f) || !r->vol ||
        !r->path || !r->hidden || !r->rows || !r->sol || !r->scratch || !r->expand || !r->pl ||
        !r->plcells)
        return TSR_ENOMEM;
    r->hooks = (fila_hooks){r, leaf_hook, tick, st->attempts, st->fits};
    r->w_task = -1;
    for (int c = 0; c < ip->ncells; c++)
        r->hp += img_color(ip, c);
    if (s->parity)
        r->pstate = flt_parity_state(s->parity, ip, r->d);
    r->t0 = base_now();
    r->next_progress = r->t0 + (cb && cb->progress_seconds > 0 ? cb->progress_seconds : 1);
    return 0;
}

/* Check that the start images can be placed together (valid ids, images
 * the search has, disjoint, within the piece counts), then mark them for
 * replay. */
static int mark_start(run *r, const int *start, int nstart)
{
    const img_problem *ip = r->ip;
    int placed = 0, rc = 0;
    for (; placed < nstart; placed++) {
        int img = start[placed];
        if (img < 0 || img >= ip->nimages || !dlx_place(r->d, img)) {
            rc = TSR_EINVAL;
            break;
        }
    }
    while (placed > 0)
        dlx_unplace(r->d, start[--placed]);
    for (int i = 0; i < nstart && rc == 0; i++)
        r->forced[start[i]] = 1;
    r->nforced = rc == 0 ? nstart : 0;
    return rc;
}

int tsr_solver_run(const tsr_solver *s, const int *start, int nstart, const tsr_callbacks *cb,
                   tsr_stats *st)
{
    run r;
    int rc = run_init(&r, s, cb, st);
    if (rc == 0)
        rc = mark_start(&r, start, nstart);
    if (rc == 0) {
        if (s->parity == NULL || flt_parity_ok(s->parity, r.pstate, r.hp))
            dlx_rec(&r, 1.0);
        else
            r.w_task = 1; /* no solution: the whole tree is done */
        rc = r.err;
        st->stopped = r.stop != 0;
        /* a finished run searched its task's whole node (1 exactly for a
         * whole tree searched alone) or, when it gave work away, what it
         * reported; a stopped one reports the estimate of its last tick */
        if (!st->stopped && r.w_task >= 0)
            r.fraction = r.dirty ? r.dirty_done : r.w_task;
        refresh_stats(&r);
    }
    run_free(&r);
    return rc;
}

int tsr_solver_sample(const tsr_solver *s, long trials, int rr, uint64_t seed,
                      const tsr_callbacks *cb, tsr_stats *st)
{
    if (trials < 1 || rr < 1 || rr > s->P)
        return TSR_EINVAL;
    run r;
    int rc = run_init(&r, s, cb, st);
    r.rng = seed * 0x9E3779B97F4A7C15ull + 1;
    r.sample_r = rr;
    for (long t = 0; t < trials && rc == 0 && !r.stop; t++) {
        r.trial_done = 0;
        dlx_rec(&r, 1.0);
        rc = r.err;
    }
    refresh_stats(&r);
    st->fraction = 0; /* sampling does not cover the tree */
    st->stopped = r.stop != 0;
    run_free(&r);
    return rc;
}

/* ---------------------------------------------------------------------------
 * Estimating a search before running it (Knuth, "Estimating the efficiency
 * of backtrack programs", 1975)
 *
 * A descent walks from the root to a leaf or a dead end making exactly the
 * search's choices: at DLX levels the same filters, column choice and
 * triggers as dlx_rec and branch, below the handoff FILA's heuristics
 * (fila_descend); at each node it takes one of the d children the search
 * would count as fits, uniformly.  With d1, d2, ... the degrees along the
 * way, d1 + d1 d2 + ... is an unbiased estimate of the search's `nodes`,
 * and at a leaf d1 d2 ... dk times the solutions the leaf reports (what
 * leaf() would report in the job's mode) one of its solution count.
 *
 * Building FILA's lists at the handoff costs as much as many descents, so
 * each DLX descent that reaches FILA makes EST_FILA_DESCENTS descents from
 * there and takes their mean: still an unbiased estimate of its subtree.
 * One such DLX descent is one sample; samples are independent.
 *
 * Spread.  Descent values are heavy-tailed (a rare deep path carries a
 * huge product), so the plain standard error is itself unreliable.  The
 * samples are dealt round-robin into EST_BATCHES batches; the range is the
 * mean +- t(0.975, EST_BATCHES - 1) standard errors of the batch means,
 * which are much closer to normal than single samples.  It still misses
 * when no sample has met the rare paths that hold most of the tree, and
 * then it errs low: docs/engine.md says how to read it.
 */

#define EST_FILA_DESCENTS 16
/* A first EST_PILOT_SAMPLES samples measure the nodes per level; then
 * descents search the whole subtree once they reach the deepest level
 * whose subtrees are estimated at EST_TAIL_NODES nodes at most.  A rare
 * solution is far likelier to be met by a descent that searches a whole
 * small subtree than by one that has to guess its way down, and the
 * estimate stays unbiased. */
#define EST_PILOT_SAMPLES 200
#define EST_TAIL_NODES 300.0
#define EST_BATCHES 30
#define EST_T95 2.045 /* Student's t, 29 degrees of freedom */

typedef struct est_walk {
    const tsr_solver *s;
    const img_problem *ip;
    dlx *d;
    fila *f;
    flt_volume *vol;
    int *path, depth;       /* images placed by DLX */
    int *hidden, nhidden, *rows;
    int *sol, *scratch;
    int hp, pstate;
    uint64_t rng;
    long descents;
    double nodes, solutions; /* of the current sample */
    long hits;               /* descents that reached a leaf reporting solutions */
    int tail;                /* pieces left where FILA descents search all */
    double level[FILA_MAX_BITS]; /* [p]: nodes with p pieces left, summed over samples */
} est_walk;

static uint64_t est_next(est_walk *w) { return rng_step(&w->rng); }

/* The solutions a leaf reports (leaf_solutions): the DLX path plus FILA's
 * `extra` images.  Negative: an error code. */
static int est_leaf(est_walk *w, const int *extra, int nextra)
{
    int n;
    return leaf_solutions(w->s, w->path, w->depth, extra, nextra, w->sol, &n, w->scratch, NULL);
}

static int est_fila_leaf(void *ctx, const int *images, int n)
{
    return est_leaf(ctx, images, n);
}

/* FILA's part of a sample: `prod` is the product of the DLX degrees. */
static int est_fila(est_walk *w, double prod)
{
    int rc = fila_probe_begin(w->f, w->d);
    fila_probe_hooks h = {w, est_fila_leaf, w->tail};
    fila_descent fd = {0};
    for (int k = 0; k < EST_FILA_DESCENTS && rc == 0 && fd.err == 0; k++) {
        fila_descend(w->f, &w->rng, &h, &fd);
        w->descents++;
    }
    w->nodes += prod * fd.nodes / EST_FILA_DESCENTS;
    w->solutions += prod * fd.solutions / EST_FILA_DESCENTS;
    w->hits += fd.leaves;
    for (int p = 0; p < FILA_MAX_BITS; p++)
        w->level[p] += prod * fd.level[p] / EST_FILA_DESCENTS;
    return rc ? rc : fd.err;
}

/* A descent ends at a leaf of the DLX path. */
static int est_at_leaf(est_walk *w, double prod)
{
    int m = est_leaf(w, NULL, 0);
    w->solutions += m > 0 ? prod * m : 0;
    w->hits += m > 0;
    w->descents++;
    return m < 0 ? m : 0;
}

static int est_dlx(est_walk *w, double prod);

/* A loose puzzle's node with nothing to branch on: a leaf, or a node of
 * branch_subset, whose child is drawn uniformly (its last child places no
 * piece, so it is no node of the count). */
static int est_loose(est_walk *w, double prod)
{
    dlx *d = w->d;
    int low, t = dlx_open_type(d, &low);
    if (t < 0)
        return est_at_leaf(w, prod);
    int n = dlx_col_len(d, t), options = n + 1, mark = w->nhidden, rc;
    int k = (int)(est_next(w) % (uint64_t)options);
    prod *= options;
    for (int i = 0; i < k; i++) { /* the rows the search hid before child k */
        int img = dlx_row_of(d, dlx_first(d, t));
        dlx_hide(d, img);
        w->hidden[w->nhidden++] = img;
    }
    if (k < n) {
        int img = dlx_row_of(d, dlx_first(d, t));
        w->nodes += prod;
        dlx_place(d, img);
        w->path[w->depth++] = img;
        rc = est_dlx(w, prod);
        w->depth--;
        dlx_unplace(d, img);
    } else {
        rc = est_dlx(w, prod);
    }
    while (w->nhidden > mark)
        dlx_unhide(d, w->hidden[--w->nhidden]);
    return rc;
}

/* One DLX level of a descent, then the levels below; restores the matrix. */
static int est_dlx(est_walk *w, double prod)
{
    const tsr_solver *s = w->s;
    dlx *d = w->d;
    int p = dlx_remaining_copies(d);
    if (p == s->opt.goal && w->ip->exact)
        return est_at_leaf(w, prod);
    if (p <= s->plan.maxp && w->f != NULL && fila_can_take(w->f, d))
        return est_fila(w, prod);
    int mark = w->nhidden, rc = 0;
    if (s->opt.volume > 0 && p >= s->opt.volume && p < s->P)
        flt_volume_filter(w->vol, d, w->hidden, &w->nhidden);
    if (s->parity && s->opt.pfilter > 0 && p >= s->opt.pfilter && p < s->P)
        flt_parity_filter(s->parity, w->ip, d, w->pstate, w->hp, w->rows, w->hidden, &w->nhidden);
    int options, c = dlx_choose(d, s->rank[p], &options);
    if (c >= 0 && options >= dlx_need_of(d, c) && options > 0) {
        prod *= options; /* every row of the column is a fit */
        w->nodes += prod;
        dlx_cover_column(d, c);
        int x = dlx_first(d, c);
        for (long pick = (long)(est_next(w) % (uint64_t)options); pick > 0; pick--)
            x = dlx_next(d, x);
        int img = dlx_row_of(d, x);
        dlx_select(d, x);
        w->path[w->depth++] = img;
        int par = img_parity(w->ip, img);
        int cls = s->parity ? s->parity->type_class[w->ip->img_type[img]] : -1;
        w->hp -= par;
        if (cls >= 0)
            w->pstate -= s->parity->class_radix[cls];
        bool ok = true; /* the triggers of branch() */
        if (s->parity && s->opt.parity > 0 && p - 1 >= s->opt.parity)
            ok = flt_parity_ok(s->parity, w->pstate, w->hp);
        if (ok && s->opt.vtrigger > 0 && p - 1 >= s->opt.vtrigger)
            ok = flt_volume_ok(w->vol, d);
        if (ok)
            rc = est_dlx(w, prod);
        else
            w->descents++;
        w->hp += par;
        if (cls >= 0)
            w->pstate += s->parity->class_radix[cls];
        w->depth--;
        dlx_unselect(d, x);
        dlx_uncover_column(d, c);
    } else if (c < 0 && !w->ip->exact) {
        rc = est_loose(w, prod);
    } else {
        w->descents++; /* a dead end */
    }
    while (w->nhidden > mark)
        dlx_unhide(d, w->hidden[--w->nhidden]);
    return rc;
}

static void est_free(est_walk *w)
{
    dlx_free(w->d);
    fila_free(w->f);
    flt_volume_free(w->vol);
    free(w->path);
    free(w->hidden);
    free(w->rows);
    free(w->sol);
    free(w->scratch);
}

static int est_init(est_walk *w, const tsr_solver *s, uint64_t seed)
{
    const img_problem *ip = s->ip;
    size_t ni = (size_t)(ip->nimages ? ip->nimages : 1), nc = (size_t)ip->ncopies + 1;
    *w = (est_walk){.s = s, .ip = ip};
    w->d = dlx_new(ip, s->alive, NULL);
    w->f = s->plan.maxp > 0 || s->opt.fila > 0 ? fila_new(ip, &s->plan) : NULL;
    w->vol = flt_volume_new(ip);
    w->path = malloc(nc * sizeof *w->path);
    w->hidden = malloc(ni * sizeof *w->hidden);
    w->rows = malloc(ni * sizeof *w->rows);
    w->sol = malloc(nc * sizeof *w->sol);
    w->scratch = malloc((nc + (size_t)ip->ntypes) * sizeof *w->scratch);
    if (!w->d || (s->plan.maxp > 0 && !w->f) || !w->vol || !w->path || !w->hidden || !w->rows ||
        !w->sol || !w->scratch)
        return TSR_ENOMEM;
    for (int c = 0; c < ip->ncells; c++)
        w->hp += img_color(ip, c);
    if (s->parity)
        w->pstate = flt_parity_state(s->parity, ip, w->d);
    w->tail = s->opt.goal;
    w->rng = seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
    if (w->rng == 0)
        w->rng = 1;
    return 0;
}

/* Mean and 95% range of per-sample values dealt into batches (see above). */
static void est_range(const double *bsum, const long *bcount, double sum, long n, double *mean,
                      double *low, double *high)
{
    *mean = n > 0 ? sum / n : 0;
    double var = 0;
    int nb = 0;
    for (int b = 0; b < EST_BATCHES; b++)
        if (bcount[b] > 0) {
            double dv = bsum[b] / bcount[b] - *mean;
            var += dv * dv;
            nb++;
        }
    double half = nb > 1 ? EST_T95 * sqrt(var / (nb - 1) / nb) : INFINITY;
    *low = *mean - half > 0 ? *mean - half : 0;
    *high = *mean + half;
}

/* The deepest level whose subtrees the pilot estimates at EST_TAIL_NODES
 * nodes at most: the nodes below level t over the nodes at t. */
static int est_choose_tail(const est_walk *w)
{
    int goal = w->s->opt.goal, tail = goal;
    double below = 0;
    for (int t = goal + 1; t < FILA_MAX_BITS && t <= w->s->plan.maxp; t++) {
        below += w->level[t - 1];
        if (w->level[t] > 0 && below / w->level[t] <= EST_TAIL_NODES)
            tail = t;
    }
    return tail;
}

int tsr_solver_estimate(const tsr_solver *s, long probes, double max_seconds, uint64_t seed,
                        tsr_estimate *out)
{
    return tsr_solver_estimate_until(s, probes, max_seconds, seed, NULL, NULL, out);
}

int tsr_solver_estimate_until(const tsr_solver *s, long probes, double max_seconds, uint64_t seed,
                              int (*stop)(void *ctx), void *ctx, tsr_estimate *out)
{
    memset(out, 0, sizeof *out);
    if (probes < 1 || !(max_seconds > 0))
        return TSR_EINVAL;
    est_walk w;
    double t0 = base_now();
    int rc = est_init(&w, s, seed);
    double nsum[EST_BATCHES] = {0}, ssum[EST_BATCHES] = {0}, ntot = 0, stot = 0;
    long count[EST_BATCHES] = {0}, n = 0;
    bool feasible = s->parity == NULL || flt_parity_ok(s->parity, w.pstate, w.hp);
    /* the pilot: plain descents, for the tail, in at most a quarter of the
     * time (on a slow machine it would leave the estimate no probe) */
    for (long i = 0; i < EST_PILOT_SAMPLES && rc == 0 && feasible && base_now() - t0 < max_seconds / 4;
         i++)
        rc = est_dlx(&w, 1.0);
    w.tail = est_choose_tail(&w);
    w.descents = w.hits = 0;
    while (rc == 0 && w.descents < probes && base_now() - t0 < max_seconds) {
        if (stop != NULL && stop(ctx)) {
            rc = TSR_ECANCELED;
            break;
        }
        w.nodes = w.solutions = 0;
        if (feasible)
            rc = est_dlx(&w, 1.0);
        else
            w.descents++; /* the root itself is dead, as tsr_solver_run finds */
        nsum[n % EST_BATCHES] += w.nodes;
        ssum[n % EST_BATCHES] += w.solutions;
        count[n % EST_BATCHES]++;
        ntot += w.nodes;
        stot += w.solutions;
        n++;
    }
    if (rc == 0) {
        est_range(nsum, count, ntot, n, &out->nodes, &out->nodes_low, &out->nodes_high);
        est_range(ssum, count, stot, n, &out->solutions, &out->solutions_low,
                  &out->solutions_high);
        if (w.hits == 0) /* no descent met a solution: the count is unknown */
            out->solutions_high = -1;
        out->probes = w.descents;
        out->samples = n;
        out->hits = w.hits;
        out->seconds = base_now() - t0;
    }
    est_free(&w);
    return rc;
}
