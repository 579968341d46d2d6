/*
 * classcount.h - count a solver's solutions the way the pool and the
 * daemon take them: one class at a time through tsr_callbacks.found, with
 * the number of solutions it stands for, and no solution built.  The
 * differential tests check this path (the leaf's count from the
 * stabiliser, symmetry.h's sym_count) against their references beside
 * the one that lists every solution.
 */
#ifndef TSR_TEST_CLASSCOUNT_H
#define TSR_TEST_CLASSCOUNT_H

#include "tessera/engine.h"

static int classcount_found(void *ctx, const int *images, int n, int count)
{
    (void)images;
    (void)n;
    *(long long *)ctx += count;
    return 0;
}

/* Run sv with only the found callback: the solutions its classes stand
 * for, or -1 when the run fails.  *classes gets the run's class count. */
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
    tsr_stats_free(&st);
    return rc == 0 ? total : -1;
}

#endif
