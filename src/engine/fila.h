/*
 * fila.h - the fixed image list algorithm (FILA) for the last pieces.
 *
 * When the DLX search reaches the handoff point, the driver builds a FILA
 * context from what is left in the DLX matrix: the open cells become the
 * bits of an occupancy field (64 or 128 bits), the available rows become
 * image masks, and per-cell image list sets are precomputed:
 *  - unordered lists (E and S heuristics): all images covering a cell;
 *  - ordered lists (a fixed cell order, F by default): only images whose
 *    lowest bit is the cell, since every earlier cell is already filled
 *    (priority occupancy filtering, POF);
 *  - with NOF, one list set per occupancy state of the cell's open
 *    neighbours (the image list set index, ILSI), each holding only the
 *    images that avoid the occupied neighbours.
 * The search then runs the FILA recursion over those lists.
 */
#ifndef TSR_FILA_H
#define TSR_FILA_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/dlx.h"
#include "engine/images.h"

#define FILA_MAX_BITS 128
#define FILA_MAX_COPIES (FILA_MAX_BITS * 64) /* piece copies a search can hold */
#define FILA_MAX_SHAPES 64 /* piece types left; one bit each in a 64-bit mask */

/* How FILA runs; fixed for a solver. */
typedef struct fila_plan {
    int maxp;             /* FILA handles nodes with at most maxp pieces left */
    const char *heur;     /* heur[p] for p <= maxp: 'f' (ordered), 'e' or 's' */
    const double *rank;   /* per free cell: the ordered heuristic's cell order */
    /* When box > 0, rank[c] is the cell's index in the board's bounding box
     * (box cells, <= FILA_MAX_BITS) and bits are box indices: neighbours are
     * then a fixed stride apart, and the E heuristic counts the open
     * neighbours of all cells at once with shifts.  stride/ext per axis x, y, z. */
    int box, stride[3], ext[3];
    /* Without box numbering: E counts the open neighbours of every hole
     * at once by shifts, one per distinct offset between a bit and a
     * neighbour's bit, when there are few (a regular board); else hole
     * by hole.  The same holes either way. */
    bool shift_count;
    bool nof;
    /* with nof: the unordered lists' sets are picked by the occupancy of at
     * most this many of a bit's open neighbours (those first in bit order;
     * 0: all of them).  On hexagons six neighbours make 64 sets a bit,
     * whose building cost the small searches more than the few entries
     * they spare E's nodes; three make 8. */
    int nof_max;
    int goal;             /* leaves at this many pieces left (0 = complete) */
    /* the memo of small subtrees (memo.h): the pieces left at the nodes
     * it remembers, 0 for none; only with goal 0 */
    int memo;
    /* parity trigger: active while pieces left >= parity_min (0 = off) */
    int parity_min;
    const int *type_class;  /* per type: parity class or -1 */
    const int *class_radix; /* per class */
    const uint64_t *parity_ok; /* per state, bitset over hole parity + parity_range */
    int parity_words, parity_range;
    /* the two-piece table (pairs.h; NULL: none), its cell numbering
     * (gpos[global cell]), used where two pieces are left above a complete
     * solution (goal 0) */
    const struct pairs_table *pairs;
    const int *gpos;
    /* E weighs the pieces too, as S always does, at its nodes with at
     * least `pieces` pieces left (0: never): a node where some piece
     * left fits fewer ways than the best hole has branches on that
     * piece's fits, and one where some piece fits nowhere has no child
     * (fila_impl.h: alive_at, piece_least) */
    int pieces;
} fila_plan;

/* Where FILA reports to; owned by the driver. */
typedef struct fila_hooks {
    void *ctx;
    /* images placed by FILA at a leaf (global ids); nonzero stops the search */
    int (*leaf)(void *ctx, const int *images, int n);
    /* called every few thousand placements; nonzero stops the search */
    int (*tick)(void *ctx);
    uint64_t *attempts, *fits; /* indexed by pieces left before the placement */
    /* When set, a leaf is counted here instead of reported (the caller
     * only counts, and every leaf counts alike); the memo then keeps the
     * leaves' number instead of their images */
    uint64_t *leaves;
} fila_hooks;

typedef struct fila fila;

fila *fila_new(const img_problem *ip, const fila_plan *plan);
void fila_free(fila *f);

/* Ask `stop` (NULL: nothing) while lists are built, by the entries
 * written: a build for 125 open cells and 25 pentacubes writes millions
 * of entries in tenths of a second, and preparation's estimates build
 * lists.  A build it stops fails with TSR_ECANCELED. */
void fila_set_stop(fila *f, const tsr_stop *stop);

/* Can FILA take over from this DLX state (enough bits, few enough pieces)? */
bool fila_can_take(const fila *f, const dlx *d);

/* The bytes of the table of overlaps a search keeps for E's pieces (one
 * per thread): for every image, a bit for every image of every type. */
double fila_pieces_bytes(const img_problem *ip);

/* Build the lists from the DLX state and search the subtree of weight w.
 * `hole_parity` is the colour sum of the open cells.  `forced` (per global
 * image, may be NULL) marks a task's images still to be placed: they are
 * replayed first, so the task's subtree is searched as in the full search.
 * Returns nonzero when a hook asked to stop, or TSR_ENOMEM. */
int fila_search(fila *f, const dlx *d, int hole_parity, double w, const fila_hooks *hooks,
                const unsigned char *forced);

/* Inside the leaf hook: the weight of the leaf's node (a leaf is a node
 * at the plan's goal, which tsr_solver_split sets to its cut). */
double fila_leaf_weight(const fila *f);

/* After fila_search: the weight of the node where the replay of the forced
 * images ended and the search proper began (w when nothing was forced), and
 * whether part of that node was given away (fila_donate), in which case
 * *done gets the weight the search did cover.  Otherwise it covered the
 * node's whole weight. */
double fila_task_weight(const fila *f);
bool fila_dirty(const fila *f, double *done);

/* Called from the tick hook during fila_search.  Every level of the running
 * path is live: fila_progress is Knuth's estimate of the weight searched so
 * far below the task's node, the sum over the live levels of the weight of
 * the children finished before the one being searched (a child whose
 * subtree gave work away counts only what it searched).  Children given
 * away come after it and are never counted.
 * fila_donate gives away the untried siblings of the shallowest live level
 * that has any (or, with `all`, of every live level), each as a task passed
 * to donate(ctx, images, n, weight); the loops end after their current
 * child.  images[0 .. nprefix) must hold the images placed above FILA; the
 * array must have room for every piece.  Returns the number of tasks. */
double fila_progress(const fila *f);
typedef void (*fila_donate_fn)(void *ctx, const int *images, int n, double weight);
int fila_donate(fila *f, int *images, int nprefix, bool all, fila_donate_fn donate, void *ctx);

/* Knuth's estimate of the number of nodes FILA searches below the node
 * where global image `image` is placed on the DLX state fila_probe_begin
 * built the lists for: the mean over `probes` random descents (the same
 * choices of cell as the search, a random fitting image at each level).
 * The lists of the state above serve every image placed on it: an image
 * that overlaps the placed one never fits, so the descents are those of
 * lists built below it (one build, not one per image).  -1 when the image
 * is not in the lists.  With image < 0, the estimate below the built
 * state itself. */
double fila_estimate(fila *f, int image, int probes, uint64_t *rng);

/* Can FILA build its lists for this DLX state (open cells and shapes fit
 * its fields), whatever the pieces left? */
bool fila_can_build(const fila *f, const dlx *d);

/* Knuth's descents one at a time, for the estimator of the whole search
 * (estimate.c): fila_probe_begin builds the lists for a DLX state once, then
 * each fila_descend makes one random descent from it with the search's
 * choices (the cell its heuristic picks, a uniform choice among the images
 * that fit, the parity trigger) down to `tail` pieces left, and searches
 * the whole subtree there.  Its nodes and solutions, each weighted by the
 * product of the degrees above, are added to *out; `leaf` tells how many
 * solutions a leaf reports (images: those FILA placed, global ids), or a
 * negative error code, which ends up in out->err.  `stop` (may be NULL) is
 * asked every FILA_PROBE_POLL nodes of a whole subtree, whose size has no
 * bound: nonzero ends the descent with TSR_ECANCELED in out->err. */
#define FILA_PROBE_POLL 4096
typedef struct fila_probe_hooks {
    void *ctx;
    int (*leaf)(void *ctx, const int *images, int n);
    int tail;
    int (*stop)(void *ctx);
} fila_probe_hooks;
typedef struct fila_descent {
    double nodes, solutions;
    double level[FILA_MAX_BITS]; /* [p]: the nodes with p pieces left that the
                                    random part of the descents counted */
    long leaves;    /* leaves that reported solutions */
    unsigned long steps; /* nodes visited in whole subtrees, for `stop` */
    int err;
} fila_descent;
int fila_probe_begin(fila *f, const dlx *d);
void fila_descend(fila *f, uint64_t *rng, const fila_probe_hooks *h, fila_descent *out);

#endif
