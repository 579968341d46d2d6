/*
 * search.c - a run of a prepared solver (prepare.c): DLX at the top of the
 * tree, FILA below the handoff, and leaves -> reported solutions; tasks
 * replayed from their start images, progress, cancellation and the work
 * given away to other threads; and Monte Carlo sampling, which is a run
 * that takes random children.
 *
 * Leaves.  A complete assembly is accepted only when it is the canonical
 * member of its symmetry class among those this search can find
 * (symmetry.h), then expanded into the solutions the uniqueness mode
 * reports.  So every configuration reports the same solutions.
 *
 * Loose puzzles (count ranges, optional cells) run DLX alone.  A leaf is a
 * node where no required cell is open and no type can take another row;
 * between the two, branch_subset enumerates the pieces that may still go
 * on optional cells (docs/engine.md says why this is exact).
 *
 * The functions called at every node (dlx_rec, branch, branch_column and
 * the loop bookkeeping) stay together in this file, so that the compiler
 * can inline them into each other.
 */
#include "config.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "engine/search_impl.h"

/* How often (DLX branches) the driver ticks: DLX nodes cost microseconds,
 * so this is about every millisecond */
#define DLX_TICK_MASK 0x3ff

/* ---------------------------------------------------------------------------
 * A run
 */

typedef struct run {
    const tsr_solver *s;
    const img_problem *ip;
    const tsr_callbacks *cb;
    tsr_stats *st;
    srch_walk walk;         /* the matrix, FILA, the path, the filter stack */
    int *expand;
    tsr_placement *pl;
    tsr_cell *plcells;
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
    uint64_t leaves;        /* hooks.leaves: FILA's counted leaves, not yet in st */
    /* sampling */
    uint64_t rng;
    int sample_r, trial_done;
    /* tasks: images still to place by replay, and the DLX loops' state for
     * progress and for giving untried siblings away (indexed by depth) */
    unsigned char *forced;
    int nforced;
    int *start_cells, *start_types; /* mark_start's counts, zero between runs */
    int *lvl_node;          /* the row being searched */
    int *lvl_done;          /* children finished before it ... */
    int *lvl_ndirty;        /* ... of which dirty (they gave work away) ... */
    double *lvl_dirty_done; /* ... having searched this much */
    int *lvl_given;         /* children given away */
    double *lvl_w;          /* weight of each child of the loop */
    unsigned char *lvl_active, *lvl_cut;
    int *donation;          /* scratch: the images of one task */
    bool in_fila;
    int root_hp, root_pstate; /* the walk's at the root, for walk_at_root */
    /* tsr_solver_split: the depth whose nodes are given away unsearched
     * (-1: none), and the weight they carried */
    int cut_depth;
    double cut_weight;
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
    long double done = r->in_fila ? fila_progress(r->walk.f) : 0;
    for (int d = r->s->P; d >= 0; d--)
        if (r->lvl_active[d])
            done += loop_done(r, d, r->lvl_done[d]);
    return done > 1 ? 1 : (double)done;
}

static void refresh_stats(run *r)
{
    tsr_stats *st = r->st;
    /* FILA's counted leaves, each a class of quick_count solutions */
    st->classes += r->leaves;
    st->solutions += r->leaves * (uint64_t)r->s->quick_count;
    r->leaves = 0;
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
            pl[k++] = (tsr_placement){p, pz->pieces[p].ncells, pz->pieces[p].cells,
                                      pz->pieces[p].colors};
    for (int i = 0; i < n; i++) {
        const int *c = img_cells_of(ip, ids[i]);
        int size = img_size(ip, ids[i]);
        for (int j = 0; j < size; j++)
            cells[j] = ip->cells[c[j]];
        pl[k++] = (tsr_placement){ip->types[ip->img_type[ids[i]]].piece, size, cells,
                                  img_colors(ip, ids[i])};
        cells += size;
    }
    return (tsr_solution){k, pl};
}

static void report(run *r, const int *ids, int n)
{
    r->st->solutions++;
    if (r->cb && r->cb->solution) { /* built only for someone who reads it */
        tsr_solution sol = build_solution(r->s, ids, n, r->pl, r->plcells);
        if (r->cb->solution(r->cb->ctx, &sol))
            r->stop = 1;
    }
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
    if (!r->cb->counts_only && r->cb->found(r->cb->ctx, ids, n, count))
        r->stop = 1;
    if (limit > 0 && r->st->solutions >= limit)
        r->stop = 1;
}

/* What a leaf reports in the solver's mode (search_impl.h). */
int srch_leaf_solutions(const tsr_solver *s, const int *path, int depth, const int *extra,
                        int nextra, int *sol, const int **ids, int *n, int *scratch, int *expand,
                        bool sorted)
{
    bool quick = false;
    if (s->opt.goal == 0 && s->quick != NULL) {
        quick = s->quick_all;
#ifdef TSR_DEBUG
        bool any = false; /* quick_all: some image is one */
        for (int i = 0; i < depth; i++)
            any |= s->quick[path[i]];
        for (int i = 0; i < nextra; i++)
            any |= s->quick[extra[i]];
        assert(any || !quick);
#endif
        for (int i = 0; i < depth && !quick; i++)
            quick |= s->quick[path[i]];
        for (int i = 0; i < nextra && !quick; i++)
            quick |= s->quick[extra[i]];
        if (quick && expand == NULL && !sorted && depth == 0) {
            /* FILA placed every image, and nobody reads them in order:
             * they are counted where FILA keeps them, without a copy */
            *ids = extra;
            *n = nextra;
            return s->quick_count;
        }
    }
    int k = 0; /* not *n: a store through n may alias sol, and the loops reload it */
    for (int i = 0; i < depth; i++)
        sol[k++] = path[i];
    for (int i = 0; i < nextra; i++)
        sol[k++] = extra[i];
    *n = k;
    *ids = sol;
    if (s->opt.goal > 0)
        return 1;
    if (quick && expand == NULL && !sorted)
        return s->quick_count; /* the class's members, unsorted: nobody reads them */
    sym_sort(sol, k);
    uint64_t stab = 0;
    if (quick) {
#ifdef TSR_DEBUG
        assert(sym_accept(s->ip, s->g, s->keep, sol, k, scratch, &stab) && stab == 1);
#endif
        if (expand == NULL)
            return s->quick_count;
    } else if (!sym_accept(s->ip, s->g, s->ctype >= 0 ? s->keep : NULL, sol, k, scratch, &stab)) {
        return 0;
    }
    /* only counted: the stabiliser tells how many, when every element
     * maps every solution to one */
    int m = expand == NULL && s->g->all_full ? sym_count(s->g, s->mode_mask, stab) : -1;
    return m >= 0 ? m : sym_expand(s->ip, s->g, s->mode_mask, sol, k, expand);
}

/* A leaf of the run: its solutions reported one by one, or as one class
 * when the caller takes classes (tsr_callbacks.found). */
static int leaf(void *ctx, const int *extra, int nextra)
{
    run *r = ctx;
    const tsr_solver *s = r->s;
    bool counts = r->cb && r->cb->counts_only;
    bool classes = counts || (r->cb && r->cb->found);
    const int *ids;
    int n, m = srch_leaf_solutions(s, r->walk.path, r->walk.depth, extra, nextra, r->walk.sol,
                                   &ids, &n, r->walk.scratch, classes ? NULL : r->expand,
                                   !classes || !(counts || r->cb->found_any_order));
    if (m < 0) {
        r->err = m;
        r->stop = 1;
    }
    if (m <= 0)
        return r->stop;
    if (s->opt.goal == 0)
        r->st->classes++;
    if (!counts)
        r->st->digest += srch_class_digest(s->digest_tab, ids, n, m);
    if (classes) {
        if (s->opt.goal > 0) /* srch_leaf_solutions sorted the others */
            sym_sort(r->walk.sol, n); /* a partial assembly too: a class is a sorted set */
        report_class(r, ids, n, m);
    } else if (s->opt.goal > 0) {
        report(r, ids, n);
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
    if (r->cut_depth >= 0) { /* tsr_solver_split's cut, inside FILA */
        int n = r->walk.depth;
        memcpy(r->donation, r->walk.path, (size_t)n * sizeof *r->donation);
        memcpy(r->donation + n, extra, (size_t)nextra * sizeof *r->donation);
        double w = fila_leaf_weight(r->walk.f);
        r->cb->donate(r->cb->ctx, r->donation, n + nextra, w);
        r->cut_weight += w;
        return 0;
    }
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
    tsr_placement pl = {ip->types[ip->img_type[img]].piece, size, r->plcells,
                        img_colors(ip, img)};
    r->cb->trace(r->cb->ctx, r->walk.depth - 1, &pl);
}

static inline uint64_t rng_next(run *r) { return srch_rng_step(&r->rng); }

static void dlx_rec(run *r, double w);

/* Place the row at node x, search below with weight cw, undo.  A replayed
 * placement (on a task's path) was counted by the run that gave the task.
 * With `whole` x's column is not covered by the caller (a type column
 * that may take more rows): the row is placed as a whole image. */
static void branch(run *r, int x, int p, double cw, bool replay, bool whole)
{
    const tsr_solver *s = r->s;
    const img_problem *ip = r->ip;
    int img = dlx_row_of(r->walk.d, x);
    if (!replay) {
        r->st->attempts[p]++;
        r->st->fits[p]++;
    } else {
        r->forced[img] = 0;
        r->nforced--;
    }
    if (whole)
        dlx_place(r->walk.d, img);
    else
        dlx_select(r->walk.d, x);
    r->walk.path[r->walk.depth++] = img;
    int par = img_parity(ip, img), cls = s->parity ? s->parity->type_class[ip->img_type[img]] : -1;
    r->walk.hp -= par;
    if (cls >= 0)
        r->walk.pstate -= s->parity->class_radix[cls];
    if (r->cb && r->cb->trace)
        trace(r, img);
    bool ok = true;
    if (s->parity && s->opt.parity > 0 && p - 1 >= s->opt.parity)
        ok = flt_parity_ok(s->parity, r->walk.pstate, r->walk.hp);
    if (ok && r->walk.lpar != NULL && p - 1 >= s->opt.parity)
        ok = flt_lparity_ok(r->walk.lpar, r->walk.d);
    if (ok && s->opt.vtrigger > 0 && p - 1 >= s->opt.vtrigger)
        ok = flt_volume_ok(r->walk.vol, r->walk.d);
    if (ok)
        dlx_rec(r, cw);
    else if (replay)
        r->w_task = cw; /* the task's node is pruned: it is done as it starts */
    r->walk.hp += par;
    if (cls >= 0)
        r->walk.pstate += s->parity->class_radix[cls];
    r->walk.depth--;
    if (whole)
        dlx_unplace(r->walk.d, img);
    else
        dlx_unselect(r->walk.d, x);
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
    for (int d = 0; d <= r->walk.depth; d++) { /* a DLX tick comes from the loop at r->walk.depth */
        if (!r->lvl_active[d] || r->lvl_cut[d] || dlx_next(r->walk.d, r->lvl_node[d]) < 0)
            continue;
        memcpy(r->donation, r->walk.path, (size_t)d * sizeof *r->donation);
        for (int y = dlx_next(r->walk.d, r->lvl_node[d]); y >= 0; y = dlx_next(r->walk.d, y)) {
            r->donation[d] = dlx_row_of(r->walk.d, y);
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
        memcpy(r->donation, r->walk.path, (size_t)r->walk.depth * sizeof *r->donation);
        fila_donate(r->walk.f, r->donation, r->walk.depth, all, r->cb->donate, r->cb->ctx);
    }
}

static void replay_at_once(run *r, double w);

/* Hide type column t's first rows down to (not including) node `stop`, or
 * all of them when stop < 0, onto the filter stack. */
static void hide_before(run *r, int t, int stop)
{
    for (int y = dlx_first(r->walk.d, t); y >= 0 && y != stop; y = dlx_first(r->walk.d, t)) {
        int img = dlx_row_of(r->walk.d, y);
        dlx_hide(r->walk.d, img);
        r->walk.hidden[r->walk.nhidden++] = img;
    }
}

/* A loose puzzle's subset node on a task's path (see branch_subset): the
 * child that places the task's image of type t, with the rows before it
 * hidden as the search had them, or the last child when the task has no
 * image of type t.  False when the task is not a node of this search. */
static bool replay_subset(run *r, int t, int p, double w)
{
    dlx *d = r->walk.d;
    const img_type *ty = &r->ip->types[t - r->ip->ncells];
    int options = dlx_col_len(d, t) + 1, mark = r->walk.nhidden, x;
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
    while (r->walk.nhidden > mark)
        dlx_unhide(d, r->walk.hidden[--r->walk.nhidden]);
    return true;
}

/* One level of a task's path: the column the search would branch on holds
 * exactly one of the task's images; take it alone.  When none is there the
 * images are not a node of this search, and they are all placed at once. */
static void replay(run *r, int p, double w)
{
    dlx *d = r->walk.d;
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
    dlx *d = r->walk.d;
    int placed = 0;
    for (int i = 0; i < r->ip->nimages && r->nforced > 0; i++)
        if (r->forced[i] && dlx_place(d, i)) {
            r->forced[i] = 0;
            r->nforced--;
            r->walk.path[r->walk.depth++] = i;
            r->walk.hp -= img_parity(r->ip, i);
            placed++;
        }
    if (r->s->parity)
        r->walk.pstate = flt_parity_state(r->s->parity, r->ip, d);
    dlx_rec(r, w);
    while (placed-- > 0) {
        int i = r->walk.path[--r->walk.depth];
        dlx_unplace(d, i);
        r->forced[i] = 1;
        r->nforced++;
        r->walk.hp += img_parity(r->ip, i);
    }
    if (r->s->parity)
        r->walk.pstate = flt_parity_state(r->s->parity, r->ip, d);
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
    dlx *d = r->walk.d;
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
        int depth = r->walk.depth;
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
    dlx *d = r->walk.d;
    int depth = r->walk.depth, mark = r->walk.nhidden, options = dlx_col_len(d, t) + 1;
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
    while (r->walk.nhidden > mark)
        dlx_unhide(d, r->walk.hidden[--r->walk.nhidden]);
}

static void dlx_rec(run *r, double w)
{
    const tsr_solver *s = r->s;
    dlx *d = r->walk.d;
    int p = dlx_remaining_copies(d);
    if (r->nforced == 0 && r->w_task < 0)
        r->w_task = w; /* a task's replay ends here */
    if (r->walk.depth == r->cut_depth && r->nforced == 0) { /* tsr_solver_split */
        r->cb->donate(r->cb->ctx, r->walk.path, r->walk.depth, w);
        r->cut_weight += w;
        return;
    }
    if (p == s->opt.goal && r->ip->exact) {
        leaf_hook(r, NULL, 0);
        return;
    }
    /* sampling needs DLX's random choices down to the sampling level */
    if (p <= s->plan.maxp && (r->sample_r == 0 || p < r->sample_r) && r->walk.f != NULL &&
        fila_can_take(r->walk.f, d)) {
        r->in_fila = true;
        int rc = fila_search(r->walk.f, d, r->walk.hp, w, &r->hooks,
                             r->nforced > 0 ? r->forced : NULL);
        r->in_fila = false;
        if (r->w_task < 0)
            r->w_task = fila_task_weight(r->walk.f); /* the replay ended inside FILA */
        r->dirty = fila_dirty(r->walk.f, &r->dirty_done);
        if (rc < 0) {
            r->err = rc;
            r->stop = 1;
        }
        return;
    }
    int mark = r->walk.nhidden;
    if (s->opt.volume > 0 && p >= s->opt.volume && p < s->P)
        flt_volume_filter(r->walk.vol, d, NULL, r->walk.hidden, &r->walk.nhidden);
    if (s->parity && s->opt.pfilter > 0 && p >= s->opt.pfilter && p < s->P)
        flt_parity_filter(s->parity, r->ip, d, r->walk.pstate, r->walk.hp, NULL, r->walk.rows,
                          r->walk.hidden, &r->walk.nhidden);
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
    while (r->walk.nhidden > mark)
        dlx_unhide(d, r->walk.hidden[--r->walk.nhidden]);
}

/* A walk at the root, shared with the estimator (search_impl.h). */
int srch_walk_init(srch_walk *w, const tsr_solver *s)
{
    const img_problem *ip = s->ip;
    size_t ni = (size_t)(ip->nimages ? ip->nimages : 1), nc = (size_t)ip->ncopies + 1;
    *w = (srch_walk){0};
    w->d = dlx_new(ip, s->alive, NULL);
    w->f = s->plan.maxp > 0 || s->opt.fila > 0 ? fila_new(ip, &s->plan) : NULL;
    w->vol = flt_volume_new(ip);
    bool lpar = !ip->exact && s->opt.parity > 0;
    w->lpar = lpar ? flt_lparity_new(ip) : NULL;
    w->path = malloc(nc * sizeof *w->path);
    w->hidden = malloc(ni * sizeof *w->hidden);
    w->rows = malloc(ni * sizeof *w->rows);
    w->sol = malloc(nc * sizeof *w->sol);
    w->scratch = malloc((2 * nc + (size_t)ip->ntypes) * sizeof *w->scratch);
    if (!w->d || (s->plan.maxp > 0 && !w->f) || !w->vol || (lpar && !w->lpar) || !w->path || !w->hidden || !w->rows ||
        !w->sol || !w->scratch)
        return TSR_ENOMEM;
    for (int c = 0; c < ip->ncells; c++)
        w->hp += img_color(ip, c);
    if (s->parity)
        w->pstate = flt_parity_state(s->parity, ip, w->d);
    return 0;
}

void srch_walk_free(srch_walk *w)
{
    dlx_free(w->d);
    fila_free(w->f);
    flt_volume_free(w->vol);
    flt_lparity_free(w->lpar);
    free(w->path);
    free(w->hidden);
    free(w->rows);
    free(w->sol);
    free(w->scratch);
}

static void run_free(run *r)
{
    srch_walk_free(&r->walk);
    free(r->expand);
    free(r->pl);
    free(r->plcells);
    free(r->forced);
    free(r->start_cells);
    free(r->start_types);
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

/* What a run needs and keeps from one run to the next: the walk at the
 * root (the matrix, FILA and its lists) and the buffers.  0 or TSR_ENOMEM;
 * either way run_free releases it. */
static int run_init(run *r, const tsr_solver *s)
{
    memset(r, 0, sizeof *r);
    const img_problem *ip = s->ip;
    size_t ni = (size_t)(ip->nimages ? ip->nimages : 1), nc = (size_t)ip->ncopies + 1;
    r->s = s;
    r->ip = ip;
    int rc = srch_walk_init(&r->walk, s);
    r->root_hp = r->walk.hp;
    r->root_pstate = r->walk.pstate;
    r->expand = malloc((size_t)s->g->n * nc * sizeof *r->expand);
    r->pl = malloc(((size_t)s->pz->npieces + nc) * sizeof *r->pl);
    r->plcells = malloc((size_t)(tsr_puzzle_piece_volume(s->pz) + 1) * sizeof *r->plcells);
    r->forced = calloc(ni, 1);
    r->start_cells = calloc((size_t)ip->ncells + 1, sizeof *r->start_cells);
    r->start_types = calloc((size_t)ip->ntypes + 1, sizeof *r->start_types);
    r->lvl_node = malloc(nc * sizeof *r->lvl_node);
    r->lvl_done = calloc(nc, sizeof *r->lvl_done);
    r->lvl_ndirty = calloc(nc, sizeof *r->lvl_ndirty);
    r->lvl_dirty_done = calloc(nc, sizeof *r->lvl_dirty_done);
    r->lvl_given = calloc(nc, sizeof *r->lvl_given);
    r->lvl_active = calloc(nc, 1);
    r->lvl_cut = calloc(nc, 1);
    r->lvl_w = calloc(nc, sizeof *r->lvl_w);
    r->donation = malloc(nc * sizeof *r->donation);
    if (rc != 0 || !r->forced || !r->start_cells || !r->start_types || !r->lvl_node ||
        !r->lvl_done || !r->lvl_ndirty || !r->lvl_dirty_done || !r->lvl_given || !r->lvl_w ||
        !r->lvl_active || !r->lvl_cut || !r->donation || !r->expand || !r->pl || !r->plcells)
        return TSR_ENOMEM;
    return 0;
}

/* Is the walk back at the root, as every run leaves it (each placement is
 * undone on the way back up, a stopped run's too)? */
static bool walk_at_root(const run *r)
{
    return r->walk.depth == 0 && r->walk.nhidden == 0 && r->walk.hp == r->root_hp &&
           r->walk.pstate == r->root_pstate && dlx_remaining_copies(r->walk.d) == r->s->P;
}

/* The state of one run, on a walk at the root: the callbacks, the
 * statistics (their arrays allocated here) and every per-run field. */
static int run_begin(run *r, const tsr_callbacks *cb, tsr_stats *st)
{
    const img_problem *ip = r->ip;
    size_t nc = (size_t)ip->ncopies + 1;
    memset(st, 0, sizeof *st);
    st->levels = ip->ncopies + 1;
    st->attempts = calloc((size_t)st->levels, sizeof *st->attempts);
    st->fits = calloc((size_t)st->levels, sizeof *st->fits);
    if (!st->attempts || !st->fits) {
        tsr_stats_free(st);
        return TSR_ENOMEM;
    }
    r->cb = cb;
    r->st = st;
    r->w_task = -1;
    r->fraction = 0;
    r->dirty = false;
    r->dirty_done = 0;
    r->tick = 0;
    r->stop = r->err = 0;
    r->rng = 0;
    r->sample_r = r->trial_done = 0;
    r->in_fila = false;
    r->cut_depth = -1;
    r->cut_weight = 0;
    /* a run that ended inside FILA left its task's FILA images marked */
    memset(r->forced, 0, (size_t)(ip->nimages ? ip->nimages : 1));
    r->nforced = 0;
    memset(r->lvl_done, 0, nc * sizeof *r->lvl_done);
    memset(r->lvl_ndirty, 0, nc * sizeof *r->lvl_ndirty);
    memset(r->lvl_dirty_done, 0, nc * sizeof *r->lvl_dirty_done);
    memset(r->lvl_given, 0, nc * sizeof *r->lvl_given);
    memset(r->lvl_active, 0, nc);
    memset(r->lvl_cut, 0, nc);
    memset(r->lvl_w, 0, nc * sizeof *r->lvl_w);
    /* a caller that only counts, where every leaf counts alike: FILA
     * counts its leaves (a limit needs each one seen) */
    bool count_leaves = cb && cb->counts_only && r->s->quick_all && r->s->opt.goal == 0 &&
                        r->s->opt.limit <= 0;
    r->leaves = 0;
    r->hooks = (fila_hooks){r, leaf_hook, tick, st->attempts, st->fits,
                            count_leaves ? &r->leaves : NULL};
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
    /* The images must be placeable one after another from the root, as
     * dlx_place would place them: each available there, no cell taken
     * twice, no type more often than its copies left.  That is what
     * covering their columns would tell, without the cost: every task a
     * pool worker takes starts here, and covering at the root touches
     * most of the matrix. */
    int rc = 0, i = 0;
    for (; i < nstart && rc == 0; i++) {
        int img = start[i];
        if (img < 0 || img >= ip->nimages || !dlx_available(r->walk.d, img)) {
            rc = TSR_EINVAL;
            break;
        }
        int t = ip->img_type[img];
        if (++r->start_types[t] > dlx_need(r->walk.d, t))
            rc = TSR_EINVAL;
        const int *c = img_cells_of(ip, img);
        for (int k = 0; k < img_size(ip, img); k++)
            if (r->start_cells[c[k]]++ > 0)
                rc = TSR_EINVAL;
    }
    while (i-- > 0) { /* clear the marks of the images counted */
        int img = start[i];
        r->start_types[ip->img_type[img]] = 0;
        const int *c = img_cells_of(ip, img);
        for (int k = 0; k < img_size(ip, img); k++)
            r->start_cells[c[k]] = 0;
    }
    for (int j = 0; j < nstart && rc == 0; j++)
        r->forced[start[j]] = 1;
    r->nforced = rc == 0 ? nstart : 0;
    return rc;
}

struct tsr_runner {
    run r;
};

int tsr_runner_new(const tsr_solver *s, tsr_runner **out)
{
    *out = NULL;
    tsr_runner *rn = malloc(sizeof *rn);
    if (rn == NULL)
        return TSR_ENOMEM;
    int rc = run_init(&rn->r, s);
    if (rc) {
        run_free(&rn->r);
        free(rn);
        return rc;
    }
    *out = rn;
    return 0;
}

void tsr_runner_free(tsr_runner *rn)
{
    if (rn == NULL)
        return;
    run_free(&rn->r);
    free(rn);
}

int tsr_runner_run(tsr_runner *rn, const int *start, int nstart, const tsr_callbacks *cb,
                   tsr_stats *st)
{
    run *r = &rn->r;
#ifdef TSR_DEBUG
    assert(walk_at_root(r));
#endif
    if (!walk_at_root(r)) { /* never seen; a fresh walk costs only time */
        const tsr_solver *s = r->s;
        run_free(r);
        int rc = run_init(r, s);
        if (rc) {
            memset(st, 0, sizeof *st);
            return rc;
        }
    }
    int rc = run_begin(r, cb, st);
    if (rc == 0)
        rc = mark_start(r, start, nstart);
    if (rc == 0) {
        const tsr_solver *s = r->s;
        if (s->parity == NULL || flt_parity_ok(s->parity, r->walk.pstate, r->walk.hp))
            dlx_rec(r, 1.0);
        else
            r->w_task = 1; /* no solution: the whole tree is done */
        rc = r->err;
        st->stopped = r->stop != 0;
        /* a finished run searched its task's whole node (1 exactly for a
         * whole tree searched alone) or, when it gave work away, what it
         * reported; a stopped one reports the estimate of its last tick */
        if (!st->stopped && r->w_task >= 0)
            r->fraction = r->dirty ? r->dirty_done : r->w_task;
        refresh_stats(r);
    }
    return rc;
}

int tsr_solver_run(const tsr_solver *s, const int *start, int nstart, const tsr_callbacks *cb,
                   tsr_stats *st)
{
    tsr_runner *rn;
    int rc = tsr_runner_new(s, &rn);
    if (rc) {
        memset(st, 0, sizeof *st);
        return rc;
    }
    rc = tsr_runner_run(rn, start, nstart, cb, st);
    tsr_runner_free(rn);
    return rc;
}

/* The nodes at `depth`, each given to cb->donate unsearched: a run
 * whose dlx_rec stops there (the cut).  Only DLX levels lead to them, so
 * their images are in the order the search places them. */
int tsr_solver_split(const tsr_solver *s, int depth, const tsr_callbacks *cb, tsr_stats *st)
{
    memset(st, 0, sizeof *st);
    if (cb == NULL || cb->donate == NULL || !s->ip->exact || depth < 1 ||
        depth >= s->P - s->opt.goal)
        return TSR_EINVAL;
    tsr_callbacks own = *cb;
    own.split_wanted = NULL; /* nothing but the cut gives work away */
    run r;
    int rc = run_init(&r, s);
    /* a cut below the handoff is FILA's goal: its leaves are the nodes */
    fila_plan plan = s->plan;
    plan.goal = s->P - depth;
    if (rc == 0 && r.walk.f != NULL && plan.goal <= plan.maxp) {
        fila_free(r.walk.f);
        r.walk.f = fila_new(s->ip, &plan);
        if (r.walk.f == NULL)
            rc = TSR_ENOMEM;
    }
    if (rc == 0)
        rc = run_begin(&r, &own, st);
    if (rc == 0) {
        r.cut_depth = depth;
        r.hooks.leaves = NULL; /* the cut's leaves are nodes given away */
        if (s->parity == NULL || flt_parity_ok(s->parity, r.walk.pstate, r.walk.hp))
            dlx_rec(&r, 1.0);
        rc = r.err;
        refresh_stats(&r);
        /* what the cut did not give away: pruned above (rounding aside) */
        st->fraction = r.cut_weight < 1 ? 1 - r.cut_weight : 0;
        st->stopped = r.stop != 0;
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
    int rc = run_init(&r, s);
    if (rc == 0)
        rc = run_begin(&r, cb, st);
    else
        memset(st, 0, sizeof *st);
    if (rc) {
        run_free(&r);
        return rc;
    }
    r.rng = seed * 0x9E3779B97F4A7C15ull + 1;
    r.sample_r = rr;
    r.hooks.leaves = NULL; /* each trial's leaves, as they come */
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

void tsr_stats_free(tsr_stats *st)
{
    if (st == NULL)
        return;
    free(st->attempts);
    free(st->fits);
    st->attempts = st->fits = NULL;
}

/* ---------------------------------------------------------------------------
 * Solutions rebuilt from image ids, as a run reports them
 */

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
