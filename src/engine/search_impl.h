/*
 * search_impl.h - what the three files of the search driver share.
 *
 * prepare.c builds a tsr_solver (the plan), search.c runs it and
 * estimate.c estimates a run before it is made.  They share the solver's
 * layout, the state of a walk down the tree (the run's DLX levels and the
 * estimator's descents take the same steps on it), the count of a leaf's
 * solutions and the random numbers.  Not a public header.
 */
#ifndef TSR_SEARCH_IMPL_H
#define TSR_SEARCH_IMPL_H

#include <stdint.h>

#include "engine/dlx.h"
#include "engine/fila.h"
#include "engine/filters.h"
#include "engine/images.h"
#include "engine/search.h"
#include "engine/symmetry.h"

/* A prepared solver: read only once tsr_solver_prepare returns, so any
 * number of runs and estimates may share it. */
struct tsr_solver {
    const tsr_puzzle *pz;
    tsr_options opt;
    img_problem *ip;
    sym_group *g;
    uint64_t mode_mask;
    int ctype;              /* type constrained by the redundancy filter, -1 */
    double est_nodes;       /* the constrained search's estimated nodes, -1 unknown */
    double est_quick;       /* the first candidate's quick estimate (200 probes), -1 */
    double est_e;           /* when choose_schedule took E: its estimated nodes, else -1 */
    bool order_auto;        /* the schedule is the automatic one */
    bool fila_auto;         /* so is the level where FILA takes over */
    unsigned char *keep;    /* redundancy filter flags */
    unsigned char *quick;   /* images that settle a leaf's acceptance (sym_quick_accept), NULL */
    int quick_count;        /* the solutions such a leaf counts in the mode */
    bool quick_all;         /* every leaf holds a quick image */
    uint64_t *digest_tab;   /* per image: its hash and that hash mixed (srch_class_digest);
                               NULL on puzzles of over DIGEST_TAB_MAX images */
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
    struct pairs_table *pairs; /* the two-piece table (plan.pairs), NULL */
    int *gpos;              /* its cell numbering (plan.gpos) */
    char config[512];
};

/* A walk down the tree from the root, what a run and an estimate both
 * work on: the matrix of the images left after the root filters, FILA for
 * the levels below the handoff (NULL when it takes none), the volume
 * filter, the path and the filter stack, a leaf's buffers and the parity
 * of the holes. */
typedef struct srch_walk {
    dlx *d;
    fila *f;
    flt_volume *vol;
    flt_lparity *lpar;      /* the parity trigger of a loose puzzle, NULL when off */
    int *path, depth;       /* images placed above FILA (a task's start images first) */
    int *hidden, nhidden;   /* filter stack */
    int *rows;              /* scratch of the parity filter */
    int *sol, *scratch;     /* a leaf's images (srch_leaf_solutions) */
    int hp, pstate;         /* the holes' parity, the parity classes left */
} srch_walk;

/* Build a walk at the root of s: 0 or TSR_ENOMEM.  Either way
 * srch_walk_free releases it. */
int srch_walk_init(srch_walk *w, const tsr_solver *s);
void srch_walk_free(srch_walk *w);

/* A leaf: the images placed above (path[0..depth)) and `extra` placed by
 * FILA, n of them at *ids: gathered into sol, or `extra` itself where
 * nothing reads them in order.  Returns what the leaf reports in the
 * solver's mode: for a partial assembly (--goal) 1, as found; for a whole
 * solution (sorted into its key) the number of solutions of its class in
 * the mode when it is the class's canonical member (written to `expand`
 * unless that is NULL), else 0; or a negative error code.  The search and
 * the estimator both count leaves with it.  Without `sorted` (a caller
 * that reads no image of the class, expand NULL) a solution that
 * sym_quick_accept settles is left unsorted (the sort was a fifth of a
 * leaf on the polyhex ring), and when FILA placed every image, uncopied
 * (the copy was 2.4% of that ring's instructions). */
int srch_leaf_solutions(const tsr_solver *s, const int *path, int depth, const int *extra,
                        int nextra, int *sol, const int **ids, int *n, int *scratch, int *expand,
                        bool sorted);

/* xorshift64*: the random choices of sampling and of the estimator, taken
 * at every node they visit, so inline. */
static inline uint64_t srch_rng_step(uint64_t *x)
{
    *x ^= *x >> 12;
    *x ^= *x << 25;
    *x ^= *x >> 27;
    return *x * 2685821657736338717ull;
}

/* A class's share of tsr_stats.digest: a 64-bit mix of its image ids
 * (in any order: a sum and an xor of mixed ids, so a partial assembly
 * need not be sorted) and the count it stands for.  Runs add these up
 * (mod 2^64), so a digest does not depend on the order of the leaves,
 * the split into tasks or the number of threads. */
static inline uint64_t srch_mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static inline uint64_t srch_image_hash(int image)
{
    return srch_mix((uint64_t)(unsigned)image + 0x9e3779b97f4a7c15ull);
}

/* `tab` (may be NULL) holds each image's hash and that hash mixed again
 * (tsr_solver.digest_tab): two loads an image instead of two mixes, which
 * were most of a leaf's time once sym_quick_accept made the rest short. */
static inline uint64_t srch_class_digest(const uint64_t *tab, const int *images, int n, int count)
{
    uint64_t sum = 0, xr = 0;
    for (int i = 0; i < n; i++) {
        uint64_t h = tab ? tab[2 * images[i]] : srch_image_hash(images[i]);
        sum += h;
        xr ^= tab ? tab[2 * images[i] + 1] : srch_mix(h);
    }
    return srch_mix(sum ^ (xr << 1) ^ ((uint64_t)n << 56) ^ (uint64_t)(unsigned)count);
}

#endif
