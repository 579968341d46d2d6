/*
 * classcount.h - count a solver's solutions the way the pool and the
 * daemon take them: one class at a time through tsr_callbacks.found, with
 * the number of solutions it stands for, and no solution built; and the
 * way `tessera solve -q` takes them, counted only.  The differential
 * tests check these paths (the leaf's count from the stabiliser,
 * symmetry.h's sym_count; FILA's counted leaves) against their
 * references beside the one that lists every solution.
 */
#ifndef TSR_TEST_CLASSCOUNT_H
#define TSR_TEST_CLASSCOUNT_H

#include <stdbool.h>

#include "tessera/engine.h"

static int classcount_found(void *ctx, const int *images, int n, int count)
{
    (void)images;
    (void)n;
    *(long long *)ctx += count;
    return 0;
}

/* Did a run that only counted (cs, tsr_callbacks.counts_only) count what
 * one that took the classes (st) counted: the solutions, the classes, the
 * nodes and every level's attempts and fits, with no digest? */
static inline bool classcount_same(const tsr_stats *cs, const tsr_stats *st)
{
    bool same = cs->solutions == st->solutions && cs->classes == st->classes &&
                cs->nodes == st->nodes && cs->digest == 0 && cs->levels == st->levels;
    for (int p = 0; same && p < st->levels; p++)
        same = cs->attempts[p] == st->attempts[p] && cs->fits[p] == st->fits[p];
    return same;
}

/* Run sv with only the found callback: the solutions its classes stand
 * for, or -1 when the run fails, or when a run that only counts
 * (counts_only) counts other solutions, classes, nodes, attempts or fits.
 * *classes gets the run's class count. */
static inline long long classcount_run(tsr_solver *sv, unsigned long long *classes)
{
    long long total = 0;
    tsr_callbacks cb = {0};
    cb.ctx = &total;
    cb.found = classcount_found;
    tsr_stats st;
    int rc = tsr_solver_run(sv, NULL, 0, &cb, &st);
    *classes = st.classes;
    if (rc == 0 && st.solutions != (uint64_t)total)
        total = -1;
    /* and counted only (tsr_callbacks.counts_only: FILA counts its leaves
     * where they all count alike): the same solutions, classes and tree */
    tsr_callbacks counts = {.counts_only = true};
    tsr_stats cs;
    if (rc == 0 && tsr_solver_run(sv, NULL, 0, &counts, &cs) == 0) {
        if (!classcount_same(&cs, &st))
            total = -1;
        tsr_stats_free(&cs);
    } else {
        total = -1;
    }
    tsr_stats_free(&st);
    return rc == 0 ? total : -1;
}

#endif
