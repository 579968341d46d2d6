/*
 * stats_sum.h - the statistics of several runs (tasks given away, rounds
 * of a resumed search) added up and checked against one run of the whole
 * tree.  Work split any way must count what one run counts: the
 * solutions, the nodes, the digest, and the attempts and fits of every
 * level; a task that searched a subtree twice, or one the search had
 * pruned, shows up here.
 */
#ifndef TSR_TEST_STATS_SUM_H
#define TSR_TEST_STATS_SUM_H

#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "tessera/engine.h"

typedef struct stats_sum {
    int levels;
    uint64_t solutions, nodes, digest;
    uint64_t *attempts, *fits; /* [levels] */
} stats_sum;

static inline void stats_sum_init(stats_sum *t, int levels)
{
    *t = (stats_sum){.levels = levels};
    t->attempts = calloc((size_t)levels, sizeof *t->attempts);
    t->fits = calloc((size_t)levels, sizeof *t->fits);
    ck_assert(t->attempts != NULL && t->fits != NULL);
}

static inline void stats_sum_add(stats_sum *t, const tsr_stats *st)
{
    ck_assert_int_le(st->levels, t->levels);
    t->solutions += st->solutions;
    t->nodes += st->nodes;
    t->digest += st->digest;
    for (int p = 0; p < st->levels; p++) {
        t->attempts[p] += st->attempts[p];
        t->fits[p] += st->fits[p];
    }
}

/* Every count of t is one run's (ref); `what` names the split in the
 * messages. */
static inline void stats_sum_check(const stats_sum *t, const tsr_stats *ref, const char *what)
{
    ck_assert_msg(t->solutions == ref->solutions, "%s: %llu solutions, one run %llu", what,
                  (unsigned long long)t->solutions, (unsigned long long)ref->solutions);
    ck_assert_msg(t->nodes == ref->nodes, "%s: %llu nodes, one run %llu", what,
                  (unsigned long long)t->nodes, (unsigned long long)ref->nodes);
    ck_assert_msg(t->digest == ref->digest, "%s: digest %016llx, one run %016llx", what,
                  (unsigned long long)t->digest, (unsigned long long)ref->digest);
    for (int p = 0; p < ref->levels; p++) {
        ck_assert_msg(t->attempts[p] == ref->attempts[p], "%s: attempts[%d] %llu, one run %llu",
                      what, p, (unsigned long long)t->attempts[p],
                      (unsigned long long)ref->attempts[p]);
        ck_assert_msg(t->fits[p] == ref->fits[p], "%s: fits[%d] %llu, one run %llu", what, p,
                      (unsigned long long)t->fits[p], (unsigned long long)ref->fits[p]);
    }
}

static inline void stats_sum_free(stats_sum *t)
{
    free(t->attempts);
    free(t->fits);
}

#endif
