/*
 * estimate.c - estimating a search before running it (Knuth, "Estimating
 * the efficiency of backtrack programs", 1975): tsr_solver_estimate.
 *
 * A descent walks from the root to a leaf or a dead end making exactly the
 * search's choices: at DLX levels the same filters, column choice and
 * triggers as dlx_rec and branch (search.c), below the handoff FILA's
 * heuristics (fila_descend); at each node it takes one of the d children
 * the search would count as fits, uniformly.  With d1, d2, ... the degrees
 * along the way, d1 + d1 d2 + ... is an unbiased estimate of the search's
 * `nodes`, and at a leaf d1 d2 ... dk times the solutions the leaf reports
 * (what a run's leaf() would report in the job's mode) one of its solution
 * count.
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
 * which are much closer to normal than single samples.  For the solution
 * count that still errs low when the rare samples that hold most of the
 * count have not come up, so its high end is at least a log-normal bound
 * fitted to the upper half of the samples that met solutions, up to
 * EST_HIGH_WIDEN times higher (est_tail_high; docs/engine.md, section 9,
 * gives the argument and the coverage).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "engine/search_impl.h"

#define EST_FILA_DESCENTS 16
/* A first EST_PILOT_SAMPLES samples measure the nodes per level; then
 * descents search the whole subtree once they reach the deepest level
 * whose subtrees are estimated at EST_TAIL_NODES nodes at most.  A rare
 * solution is far likelier to be met by a descent that searches a whole
 * small subtree than by one that has to guess its way down, and the
 * estimate stays unbiased. */
#define EST_PILOT_SAMPLES 200
/* The pilot's samples are dealt into this many groups and the tail chosen
 * from the median of the groups' subtree sizes (a median of means): one
 * heavy sample made a pilot's sizes 10 times too large at every level, and
 * the tail one level too deep, on 1 seed in 8 of the 6x15. */
#define EST_PILOT_GROUPS 5
/* 8000, not 300: on the one-sided 5x18 and 6x15 a 300-node tail met a
 * solution in about 1 sample of 100 and the estimates spread over a factor
 * of 4 (rms log error 1.3); tails of some thousand nodes cost 10 to 30
 * times more per sample and cut it to 0.2 to 0.4 (docs/engine.md). */
#define EST_TAIL_NODES 8000.0
/* A sample still running at EST_HARD_BOUND times the time bound is cut
 * short and left out: one exhaustive tail of the 35 hexominoes can run for
 * minutes. */
#define EST_HARD_BOUND 2.0
#define EST_BATCHES 30
#define EST_T95 2.045 /* Student's t, 29 degrees of freedom */
/* The log-normal bound is one-sided, at 99.5%: a 97.5% one still missed
 * the 5x18's count in 1 run of 6 (bench/estimate_coverage.py). */
#define EST_Z_HIGH 2.576
/* The log-normal bound raises the batch means' high end by this factor at
 * most: where the positive samples spread over many decades (the 8x8 with
 * its corners cut) the fit says more about itself than about the count. */
#define EST_HIGH_WIDEN 3.0
/* Fewer samples with solutions than this: nothing bounds the count. */
#define EST_MIN_HITS 3

typedef struct est_walk {
    const tsr_solver *s;
    const img_problem *ip;
    srch_walk walk;
    uint64_t rng;
    long descents;
    double nodes, solutions; /* of the current sample */
    long hits;               /* descents that reached a leaf reporting solutions */
    int tail;                /* pieces left where FILA descents search all */
    /* [g][p]: nodes with p pieces left, summed over the pilot's samples of
     * group g (the current one: group) */
    double level[EST_PILOT_GROUPS][FILA_MAX_BITS];
    int group;
    int (*stop)(void *ctx);  /* the caller's: may end the walk anywhere */
    void *stop_ctx;
    double deadline;         /* base_now() past which a sample is cut short */
    bool late;               /* the deadline cut a sample short */
    double *logs;            /* log of each sample's solution estimate, if > 0 */
    long nlogs, maxlogs;
} est_walk;

static uint64_t est_next(est_walk *w) { return srch_rng_step(&w->rng); }

/* The solutions a leaf reports (srch_leaf_solutions): the DLX path plus
 * FILA's `extra` images.  Negative: an error code. */
static int est_leaf(est_walk *w, const int *extra, int nextra)
{
    const int *ids;
    int n;
    return srch_leaf_solutions(w->s, w->walk.path, w->walk.depth, extra, nextra, w->walk.sol, &ids,
                               &n, w->walk.scratch, NULL, false);
}

static int est_fila_leaf(void *ctx, const int *images, int n)
{
    return est_leaf(ctx, images, n);
}

/* Must the walk end now: the caller asks it to, or the hard deadline has
 * passed?  Polled between samples and descents and inside whole subtrees:
 * one exhaustive tail can outlast the time bound many times over, and a
 * job being paused must not wait for it. */
static int est_stopped(void *ctx)
{
    est_walk *w = ctx;
    if (w->stop != NULL && w->stop(w->stop_ctx))
        return 1;
    if (base_now() > w->deadline)
        w->late = true;
    return w->late;
}

/* FILA's part of a sample: `prod` is the product of the DLX degrees. */
static int est_fila(est_walk *w, double prod)
{
    int rc = fila_probe_begin(w->walk.f, w->walk.d);
    fila_probe_hooks h = {w, est_fila_leaf, w->tail, est_stopped};
    fila_descent fd = {0};
    for (int k = 0; k < EST_FILA_DESCENTS && rc == 0 && fd.err == 0; k++) {
        if (est_stopped(w)) {
            fd.err = TSR_ECANCELED;
            break;
        }
        fila_descend(w->walk.f, &w->rng, &h, &fd);
        w->descents++;
    }
    w->nodes += prod * fd.nodes / EST_FILA_DESCENTS;
    w->solutions += prod * fd.solutions / EST_FILA_DESCENTS;
    w->hits += fd.leaves;
    for (int p = 0; p < FILA_MAX_BITS; p++)
        w->level[w->group][p] += prod * fd.level[p] / EST_FILA_DESCENTS;
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
    dlx *d = w->walk.d;
    int low, t = dlx_open_type(d, &low);
    if (t < 0)
        return est_at_leaf(w, prod);
    int n = dlx_col_len(d, t), options = n + 1, mark = w->walk.nhidden, rc;
    int k = (int)(est_next(w) % (uint64_t)options);
    prod *= options;
    for (int i = 0; i < k; i++) { /* the rows the search hid before child k */
        int img = dlx_row_of(d, dlx_first(d, t));
        dlx_hide(d, img);
        w->walk.hidden[w->walk.nhidden++] = img;
    }
    if (k < n) {
        const tsr_solver *s = w->s;
        int img = dlx_row_of(d, dlx_first(d, t)), p = dlx_remaining_copies(d);
        w->nodes += prod;
        dlx_place(d, img);
        w->walk.path[w->walk.depth++] = img;
        /* the triggers of branch(), which places this child too */
        bool ok = w->walk.lpar == NULL || p - 1 < s->opt.parity ||
                  flt_lparity_ok(w->walk.lpar, d);
        if (ok && s->opt.vtrigger > 0 && p - 1 >= s->opt.vtrigger)
            ok = flt_volume_ok(w->walk.vol, d);
        if (!ok) {
            w->descents++;
            rc = 0;
        } else {
            rc = est_dlx(w, prod);
        }
        w->walk.depth--;
        dlx_unplace(d, img);
    } else {
        rc = est_dlx(w, prod);
    }
    while (w->walk.nhidden > mark)
        dlx_unhide(d, w->walk.hidden[--w->walk.nhidden]);
    return rc;
}

/* One DLX level of a descent, then the levels below; restores the matrix. */
static int est_dlx(est_walk *w, double prod)
{
    const tsr_solver *s = w->s;
    dlx *d = w->walk.d;
    int p = dlx_remaining_copies(d);
    if (p == s->opt.goal && w->ip->exact)
        return est_at_leaf(w, prod);
    if (p <= s->plan.maxp && w->walk.f != NULL && fila_can_take(w->walk.f, d))
        return est_fila(w, prod);
    int mark = w->walk.nhidden, rc = 0;
    if (s->opt.volume > 0 && p >= s->opt.volume && p < s->P)
        flt_volume_filter(w->walk.vol, d, NULL, w->walk.hidden, &w->walk.nhidden);
    if (s->parity && s->opt.pfilter > 0 && p >= s->opt.pfilter && p < s->P)
        flt_parity_filter(s->parity, w->ip, d, w->walk.pstate, w->walk.hp, NULL, w->walk.rows,
                          w->walk.hidden, &w->walk.nhidden);
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
        w->walk.path[w->walk.depth++] = img;
        int par = img_parity(w->ip, img);
        int cls = s->parity ? s->parity->type_class[w->ip->img_type[img]] : -1;
        w->walk.hp -= par;
        if (cls >= 0)
            w->walk.pstate -= s->parity->class_radix[cls];
        bool ok = true; /* the triggers of branch() */
        if (s->parity && s->opt.parity > 0 && p - 1 >= s->opt.parity)
            ok = flt_parity_ok(s->parity, w->walk.pstate, w->walk.hp);
        if (ok && w->walk.lpar != NULL && p - 1 >= s->opt.parity)
            ok = flt_lparity_ok(w->walk.lpar, d);
        if (ok && s->opt.vtrigger > 0 && p - 1 >= s->opt.vtrigger)
            ok = flt_volume_ok(w->walk.vol, d);
        if (ok)
            rc = est_dlx(w, prod);
        else
            w->descents++;
        w->walk.hp += par;
        if (cls >= 0)
            w->walk.pstate += s->parity->class_radix[cls];
        w->walk.depth--;
        dlx_unselect(d, x);
        dlx_uncover_column(d, c);
    } else if (c < 0 && !w->ip->exact) {
        rc = est_loose(w, prod);
    } else {
        w->descents++; /* a dead end */
    }
    while (w->walk.nhidden > mark)
        dlx_unhide(d, w->walk.hidden[--w->walk.nhidden]);
    return rc;
}

static int est_init(est_walk *w, const tsr_solver *s, uint64_t seed)
{
    *w = (est_walk){.s = s, .ip = s->ip};
    int rc = srch_walk_init(&w->walk, s);
    if (rc)
        return rc;
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

/* Keeps the log of a sample's positive solution estimate for
 * est_tail_high.  0 or TSR_ENOMEM. */
static int est_keep(est_walk *w, double solutions)
{
    if (!(solutions > 0))
        return 0;
    if (w->nlogs == w->maxlogs) {
        long cap = w->maxlogs ? 2 * w->maxlogs : 1024;
        double *p = realloc(w->logs, (size_t)cap * sizeof *p);
        if (p == NULL)
            return TSR_ENOMEM;
        w->logs = p;
        w->maxlogs = cap;
    }
    w->logs[w->nlogs++] = log(solutions);
    return 0;
}

static int est_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The 99.5% upper bound on the mean of n samples, of which m = w->nlogs are
 * positive, under the delta-log-normal model (Aitchison 1955): a share p =
 * m/n is positive and their logs are normal(mu, s2), so the mean is
 * p exp(mu + s2/2).  mu is the median of the logs and s2 their mean square
 * above it: the model is fitted to the upper half, which holds the mean,
 * so a body whose logs lean left (the domino tilings) does not widen it.
 * The bound is Cox's: log p + mu + s2/2 plus z times the root of its
 * delta-method variance (1-p)/(n p) + s2/m + s2^2/(2(m-1)).  Sorts the
 * logs. */
static double est_tail_high(est_walk *w, long n)
{
    long m = w->nlogs;
    if (m < 2 || n < 1)
        return 0;
    qsort(w->logs, (size_t)m, sizeof *w->logs, est_cmp);
    double mu = w->logs[m / 2], ss = 0;
    long k = 0;
    for (long i = m / 2; i < m; i++, k++)
        ss += (w->logs[i] - mu) * (w->logs[i] - mu);
    double s2 = k > 1 ? ss / (k - 1) : 0, p = (double)m / n;
    double var = (1 - p) / (n * p) + s2 / m + s2 * s2 / (2.0 * (m - 1));
    return exp(log(p) + mu + s2 / 2 + EST_Z_HIGH * sqrt(var));
}

/* The deepest level whose subtrees the pilot estimates at EST_TAIL_NODES
 * nodes at most: the nodes below level t over the nodes at t, the median
 * over the groups (a group that never reached level t counts as infinite). */
static int est_choose_tail(const est_walk *w)
{
    int goal = w->s->opt.goal, tail = goal;
    double below[EST_PILOT_GROUPS] = {0};
    for (int t = goal + 1; t < FILA_MAX_BITS && t <= w->s->plan.maxp; t++) {
        double size[EST_PILOT_GROUPS];
        for (int g = 0; g < EST_PILOT_GROUPS; g++) {
            below[g] += w->level[g][t - 1];
            size[g] = w->level[g][t] > 0 ? below[g] / w->level[g][t] : INFINITY;
        }
        qsort(size, EST_PILOT_GROUPS, sizeof *size, est_cmp);
        if (size[EST_PILOT_GROUPS / 2] <= EST_TAIL_NODES)
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
    w.stop = stop;
    w.stop_ctx = ctx;
    w.deadline = t0 + EST_HARD_BOUND * max_seconds;
    double nsum[EST_BATCHES] = {0}, ssum[EST_BATCHES] = {0}, ntot = 0, stot = 0;
    long count[EST_BATCHES] = {0}, n = 0;
    bool feasible = s->parity == NULL || flt_parity_ok(s->parity, w.walk.pstate, w.walk.hp);
    /* the pilot: plain descents, for the tail, in at most a quarter of the
     * time (on a slow machine it would leave the estimate no probe) */
    for (long i = 0; i < EST_PILOT_SAMPLES && rc == 0 && feasible && base_now() - t0 < max_seconds / 4;
         i++) {
        w.group = (int)(i % EST_PILOT_GROUPS);
        rc = est_stopped(&w) ? TSR_ECANCELED : est_dlx(&w, 1.0);
    }
    w.group = 0; /* the levels are not used after the pilot */
    w.tail = est_choose_tail(&w);
    w.descents = w.hits = 0;
    while (rc == 0 && w.descents < probes && base_now() - t0 < max_seconds) {
        if (est_stopped(&w)) {
            rc = TSR_ECANCELED;
            break;
        }
        w.nodes = w.solutions = 0;
        long descents = w.descents, hits = w.hits;
        if (feasible)
            rc = est_dlx(&w, 1.0);
        else
            w.descents++; /* the root itself is dead, as tsr_solver_run finds */
        if (rc != 0) { /* a sample cut short counts for nothing */
            w.descents = descents;
            w.hits = hits;
            break;
        }
        if ((rc = est_keep(&w, w.solutions)) != 0)
            break;
        nsum[n % EST_BATCHES] += w.nodes;
        ssum[n % EST_BATCHES] += w.solutions;
        count[n % EST_BATCHES]++;
        ntot += w.nodes;
        stot += w.solutions;
        n++;
    }
    if (rc == TSR_ECANCELED && w.late && !(stop != NULL && stop(ctx)))
        rc = 0; /* out of time: what the finished samples say */
    if (rc == 0) {
        est_range(nsum, count, ntot, n, &out->nodes, &out->nodes_low, &out->nodes_high);
        est_range(ssum, count, stot, n, &out->solutions, &out->solutions_low,
                  &out->solutions_high);
        double high = fmin(est_tail_high(&w, n), EST_HIGH_WIDEN * out->solutions_high);
        if (out->solutions_high < high)
            out->solutions_high = high;
        /* (almost) no sample met a solution: nothing bounds the count */
        if (w.hits == 0 || w.nlogs < EST_MIN_HITS)
            out->solutions_high = -1;
        out->probes = w.descents;
        out->samples = n;
        out->hits = w.hits;
        out->seconds = base_now() - t0;
    }
    srch_walk_free(&w.walk);
    free(w.logs);
    return rc;
}