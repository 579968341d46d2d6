/*
 * prepare.c - a solver prepared from a puzzle and options: the puzzle
 * compiled, the symmetry group, the constrained piece, the root filters
 * and the plan every run and estimate of it follows (search_impl.h).
 *
 * Plan.  Every level of the tree is named by p, the number of piece copies
 * still to place (P at the root, 0 at a solution).  The heuristic schedule
 * gives a letter per level; DLX runs while p > fila (or while the open cells
 * do not fit FILA's 128-bit field), FILA below.  DLX reads 's' and 'e' as
 * min-fit and the fixed orders (f x y z r a) as ranked cells; FILA reads
 * 'e' and 's' as its E and S heuristics and every fixed order as its
 * ordered, POF-filtered lists, numbered in that order.
 *
 * Loose puzzles (count ranges, optional cells) run DLX alone, without the
 * volume, parity and fit filters and triggers (loose_options).
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "engine/pairs.h"
#include "engine/search_impl.h"

#define MAX_IMAGES 20000000L
/* candidates for the constrained piece whose search is estimated (those
 * with fewest placements first); each costs a few tens of milliseconds */
#define MAX_ESTIMATED 16
/* Flat boards: FILA fills cells in order (F) unless the E heuristic's
 * search is estimated at least E_COST times smaller, E's nodes costing
 * about that many of F's (3.5 to 4.8 measured on the one-sided
 * pentominoes); weighed only for searches estimated above E_WEIGHED nodes
 * with F, where the estimate's quarter second is nothing. */
#define E_COST 5.0
#define E_WEIGHED 1e9
/* On the triangular and hexagonal lattices filling cells in order prunes
 * worse (a row of triangles alternates kinds, a hexagon has six
 * neighbours): E's tree was 34 times smaller on the hexiamonds' 6x6 and 7
 * times on a polyhex ring, 3 on the 9x4 and a polyhex hexagon, so E is
 * weighed there from a million nodes (by the quick estimate when that is
 * all there is), its nodes costing about 3 of F's (2.8 on the ring) */
#define E_WEIGHED_PLANE 1e6
#define E_COST_PLANE 3.0
/* choose_root: weighed from this many nodes below the root (a smaller
 * search is over before the estimate pays); a closer look is made while
 * its descents' nodes stay under ROOT_SHARE of the smaller tree's */
#define ROOT_WEIGHED 1e4
#define ROOT_SHARE 0.05
/* A level of one of E's descents costs about this many of F's nodes (the
 * 3+4 hexagon: 20M instructions for 3000 descents of 9 levels, its search
 * 130 a node) */
#define E_STEP_NODES 6.0
/* choose_pieces: E's pieces cost PIECES_COST of E's node without them
 * (the search's time with F's tail, with against without them, over the
 * ratio of E's trees estimated without the tail: 1.44 on the polyhex
 * ring, 1.49 on the 3+4 hexagon, 1.48 on the 3+4 polyhexes in a 6x6 with
 * one cell more); weighed where the two estimates' descents stay under
 * ROOT_SHARE of E's tree, and where the overlaps' table stays under
 * PIECES_AUTO_BYTES (when asked for, under PIECES_MAX_BYTES).  Chosen,
 * they are weighed while PIECES_LEVEL or more pieces are left: lower, a
 * hole nearly always wins and the bits cost more than they save. */
#define PIECES_COST 1.45
#define PIECES_LEVEL 5
#define PIECES_AUTO_BYTES (4.0 * 1024 * 1024)
#define PIECES_MAX_BYTES (256.0 * 1024 * 1024)

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

/* What build_plan allocates, freed (and the plan emptied for another). */
static void free_plan(tsr_solver *s)
{
    free(s->heur);
    free(s->angle);
    free(s->rank);
    free(s->ranks);
    free(s->fila_heur);
    free((void *)s->plan.rank);
    s->heur = s->fila_heur = NULL;
    s->angle = s->ranks = NULL;
    s->rank = NULL;
    memset(&s->plan, 0, sizeof s->plan);
}

void tsr_solver_free(tsr_solver *s)
{
    if (s == NULL)
        return;
    img_free(s->ip);
    sym_free(s->g);
    free(s->keep);
    free(s->quick);
    free(s->digest_tab);
    free(s->alive);
    free_plan(s);
    flt_parity_free(s->parity);
    pairs_free(s->pairs);
    free(s->gpos);
    free(s);
}

/* The root volume filter alone, which needs no matrix: the survivors
 * are the images the redundancy filter kept, less those of a type allowed
 * no copy (the matrix leaves them out) and those that strand a region. */
static int root_volume_filter(tsr_solver *s)
{
    const img_problem *ip = s->ip;
    s->alive = malloc((size_t)(ip->nimages ? ip->nimages : 1));
    flt_volume *vol = s->opt.volume != 0 ? flt_volume_new(ip) : NULL;
    int rc = s->alive == NULL || (s->opt.volume != 0 && vol == NULL) ? TSR_ENOMEM : 0;
    for (int i = 0; rc == 0 && i < ip->nimages; i++)
        s->alive[i] = s->keep[i] && ip->types[ip->img_type[i]].count > 0;
    if (rc == 0 && vol != NULL) {
        int hidden = flt_volume_filter_root(vol, s->stop, s->alive);
        rc = hidden < 0 ? hidden : 0;
    }
    for (int i = 0; rc == 0 && i < ip->nimages; i++)
        s->nalive += s->alive[i];
    flt_volume_free(vol);
    return rc;
}

/* Apply the root filters (volume once, fit, parity) to the images the
 * redundancy filter kept; the survivors are s->alive.  On a large board
 * each costs seconds (the volume filter floods most of the board around
 * every image), so each polls the stop hook.  The parity and fit filters
 * work on a matrix; the volume filter alone, the default on flat boards,
 * does without (on a 100x200 board of 1000-cell pieces the matrix cost
 * 8 s, 2.2 GB, and a tenth of a second or more to free when stopped). */
static int root_filters(tsr_solver *s)
{
    if (s->opt.fit <= 0 && !(s->opt.pfilter > 0 && s->parity != NULL))
        return root_volume_filter(s);
    const img_problem *ip = s->ip;
    dlx *d = dlx_new(ip, s->keep, s->stop);
    int *stack = malloc((size_t)(ip->nimages ? ip->nimages : 1) * sizeof *stack);
    int *rows = malloc((size_t)(ip->nimages ? ip->nimages : 1) * sizeof *rows);
    flt_volume *vol = flt_volume_new(ip);
    int rc = 0, n = 0;
    if (d == NULL || stack == NULL || rows == NULL || vol == NULL)
        rc = TSR_ENOMEM; /* or stopped: the caller's latch tells */
    int hidden = 0; /* or TSR_ECANCELED from the filter that was stopped */
    if (rc == 0 && s->opt.volume != 0)
        hidden = flt_volume_filter(vol, d, s->stop, stack, &n);
    if (rc == 0 && hidden >= 0 && s->opt.pfilter > 0 && s->parity != NULL) {
        int hp = 0;
        for (int c = 0; c < ip->ncells; c++)
            hp += img_color(ip, c);
        hidden = flt_parity_filter(s->parity, ip, d, flt_parity_state(s->parity, ip, d), hp,
                                   s->stop, rows, stack, &n);
    }
    if (rc == 0 && hidden >= 0 && s->opt.fit > 0)
        hidden = flt_fit_filter(ip, d, s->stop, rows, stack, &n);
    if (hidden < 0)
        rc = hidden;
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

/* Has the caller asked to stop (the preparation's latch)?  Thread-safe,
 * as the candidates' estimates ask it from several threads. */
static bool prep_asked(const tsr_solver *s)
{
    return s->stop != NULL && s->stop->stop(s->stop->ctx) != 0;
}

/* Knuth's estimate of the nodes the search below the root would visit with
 * type t constrained: the root's options are enumerated (they are the
 * constrained piece's placements, whose subtrees differ most), and each
 * subtree is estimated by random descents through FILA exactly as the
 * search would run it.  Returns -1 when FILA would not take over right
 * below the root, or when `cancel` is set or the caller asks to stop
 * (each child, a cover and its descents, asks once). */
static double estimate_candidate(const tsr_solver *s, fila *f, int t, int budget,
                                 const atomic_bool *cancel)
{
    const img_problem *ip = s->ip;
    unsigned char *keep = malloc((size_t)(ip->nimages ? ip->nimages : 1));
    dlx *d = keep && sym_filter_keep(ip, s->g, t, s->stop, keep) == 0 ? dlx_new(ip, keep, s->stop)
                                                                       : NULL;
    double total = -1;
    int options, root = d ? dlx_choose(d, s->rank[s->P], &options) : -1;
    if (root >= 0 && options >= dlx_need_of(d, root) && options > 0) {
        int per_child = budget / options > 16 ? budget / options : 16;
        uint64_t rng = 0x2545F4914F6CDD1Dull;
        /* one build of the lists serves every child when the root's state
         * fits FILA's fields (fila_estimate says why), else each child
         * builds its own.  Shared lists place each child's row themselves,
         * and as each child places one copy into a state fila_can_build
         * passed, the first tells whether FILA takes them all */
        bool shared = fila_can_build(f, d), take = false;
        total = !shared || fila_probe_begin(f, d) == 0 ? options : -1;
        dlx_cover_column(d, root);
        int x0 = dlx_first(d, root);
        if (shared && x0 >= 0) {
            dlx_select(d, x0);
            take = fila_can_take(f, d);
            dlx_unselect(d, x0);
        }
        for (int x = x0; x >= 0 && total >= 0; x = dlx_next(d, x)) {
            if ((cancel != NULL && atomic_load_explicit(cancel, memory_order_relaxed)) ||
                prep_asked(s)) {
                total = -1; /* not wanted after all: the caller drops it */
                break;
            }
            double sub = -1;
            if (shared) {
                sub = take ? fila_estimate(f, dlx_row_of(d, x), per_child, &rng) : -1;
            } else {
                dlx_select(d, x);
                if (fila_can_take(f, d) && fila_probe_begin(f, d) == 0)
                    sub = fila_estimate(f, -1, per_child, &rng);
                dlx_unselect(d, x);
            }
            total = sub < 0 ? -1 : total + sub;
        }
        dlx_uncover_column(d, root);
    }
    dlx_free(d);
    free(keep);
    return total;
}

/* The candidates' estimates, one thread per CPU the run is given: the
 * estimates are independent (each has its own DLX state, FILA lists and
 * random stream, seeded alike), so the choice is the same on any number
 * of threads, and on 16 threads the preparation no longer takes the time
 * of 12 estimates in a row before the pool can start. */
typedef struct est_batch {
    const tsr_solver *s;
    const int *cands;
    double *est;
    int n, budget;
    atomic_int next;    /* the next candidate to take */
    atomic_bool cancel; /* the estimates are not wanted: stop at once */
    pthread_t th[MAX_ESTIMATED];
    int started; /* helper threads running est_worker */
} est_batch;

static void *est_worker(void *arg)
{
    est_batch *b = arg;
    fila *f = fila_new(b->s->ip, &b->s->plan);
    if (f == NULL)
        return NULL; /* no memory for its lists: it takes no candidate */
    fila_set_stop(f, b->s->stop);
    for (int i; !atomic_load(&b->cancel) && !prep_asked(b->s) &&
                (i = atomic_fetch_add(&b->next, 1)) < b->n;)
        b->est[i] = estimate_candidate(b->s, f, b->cands[i], b->budget, &b->cancel);
    fila_free(f);
    return NULL;
}

/* Starts up to threads - 1 helpers on the n candidates' estimates into
 * est[] (fewer when there are fewer candidates, or when a thread is
 * refused: the others take its share). */
static void est_start(est_batch *b, const tsr_solver *s, const int *cands, int n, int budget,
                      int threads, double *est)
{
    *b = (est_batch){.s = s, .cands = cands, .est = est, .n = n, .budget = budget};
    atomic_init(&b->next, 0);
    atomic_init(&b->cancel, false);
    while (b->started < threads - 1 && b->started < n - 1 &&
           pthread_create(&b->th[b->started], NULL, est_worker, b) == 0)
        b->started++;
}

/* Ends a batch: unless `cancel`, the caller works on it too until every
 * candidate is taken; then the helpers are joined.  Returns 0 when every
 * estimate is in est[], TSR_ENOMEM when no worker had memory for its
 * lists, TSR_ECANCELED when cancelled. */
static int est_finish(est_batch *b, bool cancel)
{
    if (cancel)
        atomic_store(&b->cancel, true);
    else
        est_worker(b);
    for (int i = 0; i < b->started; i++)
        pthread_join(b->th[i], NULL);
    if (cancel)
        return TSR_ECANCELED;
    /* any worker with lists takes candidates until none is left */
    return atomic_load(&b->next) >= b->n ? 0 : TSR_ENOMEM;
}

/* The rotational-redundancy filter: among the pieces that break the most
 * symmetry, the one whose constrained search is estimated smallest (a
 * large, awkward piece placed first usually prunes best; the estimate
 * measures it instead of guessing).  When the first candidate's search is
 * small anyway, it is kept without estimating the others: then the choice
 * is polycube's, the piece with the fewest placements.
 *
 * The quick look that tells which runs on the caller's thread while the
 * run's other threads already estimate the candidates, so that on many
 * threads a large search does not wait for it; a small one cancels them.
 * The choice is the same either way, and on any number of threads. */
static int choose_constrained_piece(tsr_solver *s, const int *cands, int n)
{
    const img_problem *ip = s->ip;
    s->ctype = n > 0 ? cands[0] : -1;
    if (n > 1 && s->opt.redundancy[0] == '\0' && s->opt.fila == s->P - 1 && s->ip->exact) {
        double est[MAX_ESTIMATED];
        int m = n < MAX_ESTIMATED ? n : MAX_ESTIMATED;
        int threads = s->opt.threads > 0 ? s->opt.threads : base_cpu_count();
        fila *f = fila_new(ip, &s->plan);
        if (f == NULL)
            return TSR_ENOMEM;
        fila_set_stop(f, s->stop);
        est_batch b;
        est_start(&b, s, cands, m, 3000, threads, est);
        /* a quick look at the first candidate tells whether the choice is
         * worth its cost (a tenth of a second on one thread for the cubes);
         * fewer probes per candidate would not tell the best pieces apart */
        double best = estimate_candidate(s, f, cands[0], 200, NULL);
        s->est_quick = best;
        fila_free(f);
        int rc = est_finish(&b, prep_asked(s) || !(best > 2e7));
        if (prep_asked(s))
            return TSR_ECANCELED; /* estimates cut short: no answer (the latch holds) */
        if (rc != 0 && rc != TSR_ECANCELED)
            return rc;
        for (int i = 0; rc == 0 && i < m; i++)
            if (est[i] >= 0 && (i == 0 || est[i] < best)) {
                best = est[i];
                s->ctype = cands[i];
            }
        s->est_nodes = rc == 0 ? best : -1;
    }
    s->keep = malloc((size_t)(ip->nimages ? ip->nimages : 1));
    if (s->keep == NULL)
        return TSR_ENOMEM;
    return sym_filter_keep(ip, s->g, s->ctype, s->stop, s->keep);
}

/* The images that settle a leaf's acceptance (sym_quick_accept), kept
 * only when some are and the count of such a class is known; and the
 * table of image hashes the leaves' digests add up (srch_class_digest),
 * up to a megabyte of it. */
#define DIGEST_TAB_MAX 65536
static int leaf_tables(tsr_solver *s)
{
    int ni = s->ip->nimages;
    if (ni > 0 && ni <= DIGEST_TAB_MAX) {
        s->digest_tab = malloc((size_t)ni * 2 * sizeof *s->digest_tab);
        if (s->digest_tab == NULL)
            return TSR_ENOMEM;
        for (int i = 0; i < ni; i++) {
            s->digest_tab[2 * i] = srch_image_hash(i);
            s->digest_tab[2 * i + 1] = srch_mix(s->digest_tab[2 * i]);
        }
    }
    s->quick = malloc((size_t)(s->ip->nimages ? s->ip->nimages : 1));
    if (s->quick == NULL)
        return TSR_ENOMEM;
    int nq = sym_quick_accept(s->ip, s->g, s->ctype, s->ctype >= 0 ? s->keep : NULL, s->quick);
    s->quick_count = nq > 0 ? sym_count(s->g, s->mode_mask, 1) : -1;
    if (s->quick_count < 0) {
        free(s->quick);
        s->quick = NULL;
        return 0;
    }
    /* every solution holds one image of the constrained type (quick is
     * none otherwise), a kept one: when all those are quick, so is every
     * leaf, and nobody need look */
    const img_type *ty = &s->ip->types[s->ctype];
    int nkept = 0;
    for (int i = ty->first; i < ty->first + ty->nimages; i++)
        nkept += s->keep[i] != 0;
    s->quick_all = nq == nkept;
    return 0;
}

/* Knuth's estimate of a search that FILA takes from the root (no piece
 * constrained, FILA for every piece): `probes` random descents over the
 * images in keep[], with the plan as it stands; -1 when FILA cannot take
 * the root. */
static double root_estimate(const tsr_solver *s, const unsigned char *keep, int probes)
{
    fila *f = fila_new(s->ip, &s->plan);
    dlx *d = f ? dlx_new(s->ip, keep, s->stop) : NULL;
    double est = -1;
    uint64_t rng = 0x2545F4914F6CDD1Dull;
    if (d != NULL && fila_can_take(f, d)) {
        fila_set_stop(f, s->stop);
        if (fila_probe_begin(f, d) == 0)
            est = fila_estimate(f, -1, probes, &rng);
    }
    dlx_free(d);
    fila_free(f);
    return est;
}

/* Knuth's estimate of the search below the constrained piece's placements
 * (estimate_candidate), with the plan as it stands; -1 when FILA does not
 * take over right below the root, or there is no memory for its lists. */
static double below_estimate(const tsr_solver *s, int probes)
{
    fila *f = fila_new(s->ip, &s->plan);
    if (f == NULL)
        return -1;
    fila_set_stop(f, s->stop);
    double est = estimate_candidate(s, f, s->ctype, probes, NULL);
    fila_free(f);
    return est;
}

static int build_plan(tsr_solver *s, tsr_err *err);
static double quick_estimate(const tsr_solver *s);

/* The plan with FILA from the root (root) or below it, in order. */
static int root_plan(tsr_solver *s, bool root, const char *below_order, tsr_err *err)
{
    tsr_options *o = &s->opt;
    o->fila = root ? s->P : s->P - 1;
    if (root)
        snprintf(o->order, sizeof o->order, "s:f=%d", o->fila);
    else
        memcpy(o->order, below_order, sizeof o->order);
    free_plan(s);
    return build_plan(s, err);
}

/* Where FILA takes over on a flat board with a constrained piece: below
 * the root, where DLX has placed that piece (its few placements, spread
 * over the board, split the search: the 6x10 pentominoes' tree is 8 times
 * smaller so), or at the root, filling cells in order from the first (the
 * piece then lies where the order reaches it: on long boards, whose short
 * side the order fills first, that prunes better: the 5x12 pentominoes'
 * tree is 1.8 times smaller so, the hexiamonds' 12x3 2.6 times).
 *
 * Knuth's estimates of both trees decide, with the same seeds.  200
 * descents tell them apart only when they differ by a factor of 4 or more
 * (on the 8x8 pentominoes with a centre hole they put the root's tree 1.5
 * times smaller where it is 2.4 times larger), so a closer call looks
 * again with 4 times as many, up to 3200; a search too small to pay for
 * more descents (ROOT_SHARE) is decided by the look it had. */
static int choose_root(tsr_solver *s, tsr_err *err)
{
    tsr_options *o = &s->opt;
    if (!s->order_auto || !s->fila_auto || s->ip->dims != 2 || !s->ip->exact || s->ctype < 0 ||
        o->fila != s->P - 1 || o->fila < 2)
        return 0;
    int below_probes = s->est_nodes >= 0 ? 3000 : 200;
    double below = s->est_nodes >= 0 ? s->est_nodes : s->est_quick;
    if (below < 0)
        below = s->est_quick = quick_estimate(s);
    if (prep_asked(s))
        return TSR_ECANCELED;
    if (!(below > ROOT_WEIGHED))
        return 0;
    char below_order[sizeof o->order];
    memcpy(below_order, o->order, sizeof below_order);
    double root = -1;
    int rc = 0;
    for (int probes = 200;; probes *= 4) {
        if (probes > below_probes) {
            below = below_estimate(s, probes);
            below_probes = probes;
            rc = prep_asked(s) ? TSR_ECANCELED : 0;
        }
        if (rc == 0)
            rc = root_plan(s, true, below_order, err);
        if (rc == 0) {
            root = root_estimate(s, s->keep, probes);
            rc = prep_asked(s) ? TSR_ECANCELED : 0;
        }
        if (rc || root < 0 || below < 0)
            break;
        /* decided: a factor of 4 after 200 descents, 2 after 800, any
         * after 3200; or the next look (4 times the descents, each of at
         * most P levels, for both trees) would cost too much */
        double ratio = root < below ? below / root : root / below;
        bool affordable = 2.0 * 4 * probes * s->P < ROOT_SHARE * (root < below ? root : below);
        if (ratio >= sqrt(3200.0 / probes) || probes >= 3200 || !affordable)
            break;
        rc = root_plan(s, false, below_order, err);
        if (rc)
            break;
    }
    if (rc == 0 && root >= 0 && below >= 0 && root < below) {
        s->est_nodes = -1; /* the estimates below the root no longer apply */
        s->est_quick = root;
        return 0;
    }
    if (rc == TSR_ECANCELED)
        return rc;
    int rc2 = root_plan(s, false, below_order, err);
    return rc ? rc : rc2;
}

/* E's pieces on a flat board where E was taken (est: E's estimate, from
 * `probes` descents, with the schedule s:e=fila), unless choose_schedule
 * settled them (on hexagons, E comes with them): FILA also branches on a
 * piece that fits fewer ways than every hole, and stops where a piece
 * fits nowhere, as DLX does on its piece columns.  On the polyhex diamond
 * ring that makes the tree 0.59 of E's; on the hexiamonds' 6x6 0.95, not
 * worth its cost (PIECES_COST).  Knuth's estimates of both trees decide,
 * with the same seeds, 800 descents each, then 3200 when the call is
 * close, as long as the descents stay under ROOT_SHARE of E's tree.  The
 * schedule is left as it was found. */
static int choose_pieces(tsr_solver *s, bool rootless, double est, int probes, tsr_err *err)
{
    tsr_options *o = &s->opt;
    if (o->pieces >= 0)
        return 0;
    o->pieces = 0;
    if (fila_pieces_bytes(s->ip) > PIECES_AUTO_BYTES || est < 0)
        return 0;
    char order[sizeof o->order];
    memcpy(order, o->order, sizeof order);
    snprintf(o->order, sizeof o->order, "s:e=%d", o->fila);
    int rc = 0;
    double with = -1, without = est;
    for (int n = 800; rc == 0; n *= 4) {
        if (2.0 * 2 * n * s->P > ROOT_SHARE * without)
            break; /* not worth the look: the last one decides */
        if (probes < n) {
            o->pieces = 0;
            free_plan(s);
            rc = build_plan(s, err);
            without = rc ? -1 : rootless ? root_estimate(s, s->keep, n) : below_estimate(s, n);
            probes = n;
        }
        o->pieces = PIECES_LEVEL;
        free_plan(s);
        rc = rc ? rc : build_plan(s, err);
        with = rc ? -1 : rootless ? root_estimate(s, s->keep, n) : below_estimate(s, n);
        if (prep_asked(s))
            rc = TSR_ECANCELED;
        double ratio = with * PIECES_COST / without;
        if (with < 0 || without < 0 || ratio < 0.7 || ratio > 1.2 || n >= 3200)
            break;
    }
    o->pieces = rc == 0 && with >= 0 && without >= 0 && with * PIECES_COST < without
                    ? PIECES_LEVEL : 0;
    if (o->pieces)
        s->est_e = with;
    memcpy(o->order, order, sizeof order);
    free_plan(s);
    return rc ? rc : build_plan(s, err);
}

/* FILA's heuristic on a flat board: F (cells in order, the cheapest node)
 * unless E's search is estimated E_COST times smaller.  On most rectangles
 * F wins (the 6x10, 6x15 and 5x18 pentominoes), but on a wide board like
 * the 9x10 E's tree is 14 times smaller.  The estimate is Knuth's, as for
 * the constrained piece, with E's lists and the same seed: the choice is
 * the same on every run and any number of threads, and the configuration
 * string names it, so a record pins it.  Runs after the constrained piece
 * is chosen (with F's lists) and keeps that piece. */
static int choose_schedule(tsr_solver *s, tsr_err *err)
{
    tsr_options *o = &s->opt;
    bool plane = s->ip->L.id != TSR_LATTICE_CUBIC;
    /* on the plane lattices a board with no piece to constrain (FILA from
     * the root) is weighed too: its quick look is made here */
    bool rootless = plane && s->ctype < 0 && o->fila == s->P;
    if (s->order_auto && s->ip->exact && rootless && s->est_quick < 0)
        s->est_quick = root_estimate(s, s->keep, 200);
    double f_nodes = s->est_nodes >= 0 ? s->est_nodes : plane ? s->est_quick : -1;
    if (!s->order_auto || s->ip->dims != 2 || !s->ip->exact ||
        !(rootless || (s->ctype >= 0 && o->fila == s->P - 1)) || o->fila < 2 ||
        !(f_nodes > (plane ? E_WEIGHED_PLANE : E_WEIGHED)))
        return choose_root(s, err); /* F below the root, unless from it */
    char f_order[sizeof o->order];
    memcpy(f_order, o->order, sizeof f_order);
    snprintf(o->order, sizeof o->order, "s:e=%d", o->fila);
    /* on hexagons E comes with its pieces (choose_pieces), and is weighed
     * so: there a piece is often the most constrained, and their nodes,
     * at 2.0 of F's for E (the ring and the 3+4 hexagon: the search's
     * time with F's tail over the nodes of E's tree estimated without
     * it, against F's time a node) times PIECES_COST, cost about
     * E_COST_PLANE */
    int pieces_asked = o->pieces;
    if (s->ip->L.id == TSR_LATTICE_HEXAGONAL && o->pieces < 0 &&
        fila_pieces_bytes(s->ip) <= PIECES_AUTO_BYTES)
        o->pieces = PIECES_LEVEL;
    free_plan(s);
    int rc = build_plan(s, err);
    double est = -1;
    /* 200 descents decide a factor of 4 either way, 800 a factor of 2,
     * else 3000 decide: a clear call costs a fifteenth of a close one; a
     * closer look is taken only while its descents cost under ROOT_SHARE
     * of F's search (E_STEP_NODES a level) */
    int probes_used = 0;
    for (int probes = 200; rc == 0; probes = probes < 800 ? 800 : 3000) {
        est = rootless ? root_estimate(s, s->keep, probes) : below_estimate(s, probes);
        probes_used = probes;
        double margin = probes == 200 ? 4 : 2, e = est * (plane ? E_COST_PLANE : E_COST);
        int next = probes < 800 ? 800 : 3000;
        bool affordable = (double)next * o->fila * E_STEP_NODES < ROOT_SHARE * f_nodes;
        if (est < 0 || probes == 3000 || prep_asked(s) || e * margin <= f_nodes ||
            e >= margin * f_nodes || !affordable)
            break;
    }
    if (prep_asked(s))
        return TSR_ECANCELED;
    if (rc == 0 && est >= 0 && est * (plane ? E_COST_PLANE : E_COST) < f_nodes) {
        s->est_e = est;
        if (!plane || o->fila <= 3)
            return choose_pieces(s, rootless, est, probes_used, err); /* E it is */
        /* on the plane lattices, as in 3D, the last three pieces are
         * filled in order: their E nodes cost more than the F nodes that
         * replace them (the polyhex ring in 0.90 of the time, polyhexes
         * 1-4 in an 8x5 in 0.70) */
        snprintf(o->order, sizeof o->order, "s:e=%d:f=3", o->fila);
        free_plan(s);
        rc = build_plan(s, err);
        rc = rc ? rc : choose_pieces(s, rootless, est, probes_used, err);
        /* and FILA from the root, with S there: S weighs the pieces as
         * DLX's min-fit does, so it branches alike (on the constrained
         * piece, as a rule), and FILA builds its lists once instead of
         * once for each of that piece's placements (the hexiamonds' 6x6:
         * the same 123,032 nodes in 0.81 of the instructions) */
        if (rc == 0 && s->fila_auto && s->ctype >= 0 && o->fila == s->P - 1) {
            o->fila = s->P;
            free_plan(s);
            rc = build_plan(s, err);
        }
        return rc;
    }
    o->pieces = pieces_asked;
    memcpy(o->order, f_order, sizeof f_order);
    free_plan(s);
    rc = rc ? rc : build_plan(s, err);
    return rc ? rc : choose_root(s, err); /* F it is: below the root or from it */
}

/* A loose puzzle runs DLX alone: FILA fills every cell, and the parity
 * and fit filters assume fixed counts and no optional cell.  Settles their
 * automatic values to off and refuses explicit ones, so the options in
 * force read back to the same configuration.  What stays: the redundancy
 * filter (a full symmetry maps a solution to a solution with the same
 * tally, optional cells to optional cells, and a piece of at most one copy
 * is in a solution once or not at all: symmetry.h), the volume filter and
 * trigger, which ask of each region some sum of the pieces left between
 * its required and its open cells, and the parity trigger, which asks the
 * same of the colour sums (filters.h). */
static int loose_options(tsr_options *o, tsr_err *err)
{
    const char *bad = o->fila > 0        ? "fila"
                      : o->goal > 0      ? "goal"
                      : o->pfilter > 0   ? "pfilter"
                      : o->fit > 0       ? "fit"
                      : o->pairs > 0     ? "pairs"
                      : o->pieces > 0    ? "pieces"
                      : o->memo > 0      ? "memo"
                                         : NULL;
    if (bad != NULL)
        return tsr_err_set(err, TSR_EINVAL,
                           "option '%s' needs fixed piece counts and no optional cells", bad);
    o->fila = o->pfilter = o->fit = o->pairs = o->pieces = o->memo = 0;
    if (o->nof < 0)
        o->nof = 0; /* a FILA filter */
    return 0;
}

/* Fill in every automatic choice from the puzzle's size and shape. */
static void choose_defaults(tsr_solver *s)
{
    tsr_options *o = &s->opt;
    bool flat = s->ip->dims == 2;
    s->fila_auto = o->fila < 0;
    if (o->fila < 0)
        o->fila = s->ctype >= 0 ? s->P - 1 : s->P;
    if (o->fila > s->P)
        o->fila = s->P;
    s->order_auto = o->order[0] == '\0';
    if (s->order_auto) {
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
    if (o->volume == TSR_AUTO)
        o->volume = flat ? TSR_VOLUME_ONCE : 0;
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
    s->fila_heur = calloc((size_t)P + 2, 1);
    double *frank = malloc((size_t)(ip->ncells ? ip->ncells : 1) * sizeof(double));
    /* each level's fixed order among the distinct ones (-1: none), and
     * each distinct order's first level */
    int *order_of = malloc(((size_t)P + 1) * sizeof *order_of);
    int *first = malloc(((size_t)P + 1) * sizeof *first);
    if (!s->heur || !s->angle || !s->rank || !s->fila_heur || !frank || !order_of || !first) {
        free(frank);
        free(order_of);
        free(first);
        return TSR_ENOMEM;
    }
    s->plan.rank = frank;
    int rc = srch_parse_order(s->opt.order, P, s->heur, s->angle, err);
    if (rc == 0)
        rc = srch_check_fila_order(s->heur, s->angle, P, s->opt.fila, s->opt.order, err);
    /* levels with the same fixed order share its ranks: a schedule names a
     * few orders, and ranks per level would cost levels x cells (seconds
     * and gigabytes for thousands of pieces on a large board) */
    int norders = 0;
    for (int p = 0; rc == 0 && p <= P; p++) {
        order_of[p] = -1;
        if (!is_ordered(s->heur[p]))
            continue;
        int k = 0;
        while (k < norders &&
               (s->heur[first[k]] != s->heur[p] || s->angle[first[k]] != s->angle[p]))
            k++;
        if (k == norders)
            first[norders++] = p;
        order_of[p] = k;
    }
    if (rc == 0) {
        s->ranks = malloc((size_t)(norders ? norders : 1) * (size_t)(ip->ncells ? ip->ncells : 1) *
                          sizeof(double));
        if (s->ranks == NULL)
            rc = TSR_ENOMEM;
    }
    for (int k = 0; rc == 0 && k < norders; k++)
        compute_rank(ip, s->heur[first[k]], s->angle[first[k]], s->ranks + (size_t)k * ip->ncells);
    free(first);
    if (rc) {
        free(order_of);
        return rc;
    }
    char fila_order = 0;
    double fila_angle = 0;
    for (int p = 0; p <= P; p++) {
        char h = s->heur[p];
        if (order_of[p] >= 0)
            s->rank[p] = s->ranks + (size_t)order_of[p] * ip->ncells;
        if (p <= s->opt.fila) {
            s->fila_heur[p] = is_ordered(h) ? 'f' : h;
            if (is_ordered(h)) {
                fila_order = h; /* one only (srch_check_fila_order) */
                fila_angle = s->angle[p];
            }
        }
    }
    free(order_of);
    compute_rank(ip, fila_order ? fila_order : 'f', fila_angle, frank);
    /* box numbering shifts by a stride per axis: cubes only (a triangle's
     * neighbours depend on its kind, a hexagon has six directions) */
    if ((fila_order == 0 || fila_order == 'f') && ip->L.id == TSR_LATTICE_CUBIC) {
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
    /* hexagons: E's lists by three neighbours (fila.h), which built 10%
     * faster and searched as fast on the polyhex hexagon; the cubes' six
     * pay for themselves (the Tetris Cube 15% slower with three) */
    s->plan.nof_max = ip->L.id == TSR_LATTICE_HEXAGONAL ? 3 : 0;
    /* E's neighbour count by shifts: the hexiamonds' 6x6 searched in 0.83
     * of the time, the 8x5 polyhexes in 0.975; cubes unchanged */
    s->plan.shift_count = ip->L.id != TSR_LATTICE_CUBIC;
    s->plan.pieces = s->opt.pieces > 0 ? s->opt.pieces : 0;
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

/* FILA's memo of small subtrees (memo.h), where FILA searches complete
 * solutions from that many pieces left.  Automatic: six pieces left, five
 * where the pieces average fewer than 3.5 cells (measured: docs/engine.md,
 * the memo).  Where the subtrees it finds again are too small to pay, it
 * turns itself off.  Refused on a loose puzzle (loose_options), a goal. */
#define MEMO_AUTO_LEVEL 6
#define MEMO_SMALL_PIECES 3.5
static int choose_memo(tsr_solver *s, tsr_err *err)
{
    tsr_options *o = &s->opt;
    if (o->memo > 0 && o->goal > 0)
        return tsr_err_set(err, TSR_EINVAL, "option 'memo' needs complete solutions (goal 0)");
    if (o->memo < 0)
        o->memo = s->ip->ncells < MEMO_SMALL_PIECES * s->P ? MEMO_AUTO_LEVEL - 1 : MEMO_AUTO_LEVEL;
    if (o->memo > o->fila || o->goal > 0 || !s->ip->exact)
        o->memo = 0; /* FILA meets no such node: the options in force say what runs */
    s->plan.memo = o->memo;
    return 0;
}

/* Knuth's quick look (200 descents) at the search as it will run, for a
 * choice that needs its size when the redundancy filter's choice made no
 * estimate (a single candidate piece, or none: an asymmetric board); -1
 * when FILA does not take the search at or right below the root. */
static double quick_estimate(const tsr_solver *s)
{
    return s->ctype < 0 ? root_estimate(s, s->alive, 200) : below_estimate(s, 200);
}

/* The two-piece table (pairs.h), built over the images the root filters
 * left when the search has a use for it: FILA down to two pieces left,
 * the first hole's order there, complete solutions, a board of at most
 * 128 cells.  Automatic: on the triangular and hexagonal lattices when
 * the estimated nodes are at least PAIRS_NODES_PER_TEST times the pairs
 * of images its build tests (a small search does not earn the build
 * back); off on the cubes, whose many images fill its bitmap (the Tetris
 * Cube 1.22 times slower with it: docs/engine.md, section 5). */
static int build_pairs(tsr_solver *s, tsr_err *err)
{
    tsr_options *o = &s->opt;
    const img_problem *ip = s->ip;
    bool usable = o->goal == 0 && ip->exact && o->fila >= 3 && s->fila_heur[2] == 'f' &&
                  ip->ncells <= PAIRS_MAX_CELLS;
    if (o->pairs < 0) {
        bool plane = ip->L.id != TSR_LATTICE_CUBIC;
        /* with E, the larger of its estimate and F's: E's tree is
         * estimated without the F tail where the table acts, whose nodes
         * are most of the search (the 3+4 hexagon: 284k estimated, 661k
         * searched, 475k with the table in 0.82 of the time) */
        double f = s->est_nodes >= 0 ? s->est_nodes : s->est_quick;
        double nodes = s->est_e >= 0 && s->est_e > f ? s->est_e : f;
        if (nodes < 0 && usable && plane)
            nodes = quick_estimate(s);
        if (prep_asked(s))
            return TSR_ECANCELED;
        o->pairs = usable && plane && nodes >= PAIRS_NODES_PER_TEST * pairs_tests(ip, s->alive);
    }
    if (o->pairs > 0 && o->goal > 0)
        return tsr_err_set(err, TSR_EINVAL, "option 'pairs' needs complete solutions (goal 0)");
    if (o->pairs <= 0 || !usable) {
        o->pairs = 0; /* the options in force say what runs */
        return 0;
    }
    s->gpos = malloc((size_t)(ip->ncells ? ip->ncells : 1) * sizeof *s->gpos);
    if (s->gpos == NULL)
        return TSR_ENOMEM;
    /* FILA's numbering of the whole board: the box index, or the rank
     * (then the id) among all cells, the order in which it numbers the
     * open ones (fila.c, prepare) */
    const double *rank = s->plan.rank;
    for (int c = 0; c < ip->ncells; c++) {
        int g = 0;
        if (s->plan.box > 0)
            g = (int)rank[c];
        else
            for (int d = 0; d < ip->ncells; d++)
                g += rank[d] < rank[c] || (rank[d] == rank[c] && d < c);
        s->gpos[c] = g;
    }
    int rc = pairs_build(ip, s->alive, s->gpos, s->stop, &s->pairs);
    s->plan.pairs = s->pairs;
    s->plan.gpos = s->gpos;
    return rc;
}

/* E's pieces once the schedule is settled: off unless chosen or asked
 * for, and off without an E level with at least `pieces` pieces left to
 * weigh them at (as the two-piece table is off where it cannot serve:
 * the options in force say what runs); asked for, the overlaps' table
 * must be of a size a search may hold, one per thread. */
static int check_pieces(tsr_solver *s, tsr_err *err)
{
    tsr_options *o = &s->opt;
    bool e = false;
    for (int p = o->goal + 1; p <= o->fila && p <= s->P; p++) /* FILA's nodes */
        e |= s->fila_heur[p] == 'e' && p >= o->pieces;
    if (o->pieces <= 0 || !e) {
        o->pieces = 0;
        s->plan.pieces = 0;
        return 0;
    }
    double bytes = fila_pieces_bytes(s->ip);
    if (bytes > PIECES_MAX_BYTES)
        return tsr_err_set(err, TSR_ETOOBIG,
                           "option 'pieces': its table of overlaps would take %.0f MiB a thread "
                           "(%d images), more than %.0f MiB", bytes / 1048576, s->ip->nimages,
                           PIECES_MAX_BYTES / 1048576);
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
    atomic_bool stopped; /* the candidates' estimates poll it from threads */
} prep_stop;

static int prep_stopped(void *ctx)
{
    prep_stop *p = ctx;
    if (!atomic_load(&p->stopped) && p->user != NULL && p->user->stop != NULL &&
        p->user->stop(p->user->ctx) != 0)
        atomic_store(&p->stopped, true);
    return atomic_load(&p->stopped);
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
    s->est_nodes = s->est_quick = s->est_e = -1;
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
        rc = sym_build(s->ip, s->opt.unique, stop, &s->g);
    int *cands = NULL, ncands = 0;
    if (rc == 0) {
        s->mode_mask = sym_mode_mask(s->g, s->opt.unique);
        cands = malloc((size_t)(s->ip->ntypes ? s->ip->ntypes : 1) * sizeof *cands);
        ncands = cands ? sym_filter_candidates(s->ip, s->g, s->opt.redundancy, stop, cands, err)
                       : TSR_ENOMEM;
        if (ncands < 0)
            rc = ncands;
    }
    if (rc == 0) {
        s->ctype = ncands > 0 ? cands[0] : -1; /* for the defaults; settled below */
        choose_defaults(s);
        /* the parity table also settles at the root that a puzzle like the
         * 35 hexominoes in a rectangle has no solution */
        s->parity = s->ip->exact ? flt_parity_new(s->ip, stop) : NULL;
        rc = atomic_load(&ps.stopped) ? TSR_ECANCELED : build_plan(s, err);
    }
    if (rc == 0)
        rc = choose_constrained_piece(s, cands, ncands);
    free(cands);
    if (rc == 0)
        rc = leaf_tables(s);
    if (rc == 0)
        rc = choose_schedule(s, err);
    if (rc == 0) /* the options in force name the choice, so they reproduce it */
        snprintf(s->opt.redundancy, sizeof s->opt.redundancy, "%s",
                 s->ctype >= 0 ? pz->pieces[s->ip->types[s->ctype].piece].name
                               : TSR_REDUNDANCY_OFF);
    if (rc == 0)
        rc = root_filters(s);
    if (rc == 0)
        rc = build_pairs(s, err);
    if (rc == 0)
        rc = check_pieces(s, err);
    if (rc == 0)
        rc = choose_memo(s, err);
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
    char vol[32], pieces[32]; /* pieces: absent when off, "on" at every level, as before */
    snprintf(vol, sizeof vol, o->volume == TSR_VOLUME_ONCE ? "once" : o->volume > 0 ? "%d" : "off",
             o->volume);
    snprintf(pieces, sizeof pieces, o->pieces == 1 ? " pieces=on" : o->pieces > 1 ? " pieces=%d" : "",
             o->pieces);
    snprintf(s->config, sizeof s->config,
             "fila=%d order=%s nof=%s volume=%s vtrigger=%d parity=%d pfilter=%d fit=%s%s%s "
             "redundancy=%s group=%d images=%d/%d",
             o->fila, order, o->nof ? "on" : "off", vol, o->vtrigger,
             s->parity || !s->ip->exact ? o->parity : 0, s->parity ? o->pfilter : 0, o->fit ? "on" : "off",
             o->pairs ? " pairs=on" : "", /* absent when off: as before the table */
             pieces,
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
    *out = (tsr_placement){ip->types[ip->img_type[id]].piece, n, cells, img_colors(ip, id)};
    return 0;
}
