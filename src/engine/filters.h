/*
 * filters.h - constraints that prune the search: volume, parity and fit.
 *
 * Each constraint is offered both ways the 2011 article describes:
 *  - as a backtrack trigger, a yes/no check on the current position;
 *  - as an image filter, hiding from the DLX matrix every available image
 *    whose placement would violate the constraint.
 * Hidden images are pushed on a caller-owned stack so the caller can unhide
 * them in reverse order on backtrack.
 */
#ifndef TSR_FILTERS_H
#define TSR_FILTERS_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/dlx.h"
#include "engine/images.h"

/* ---- volume ---- */
typedef struct flt_volume flt_volume;

flt_volume *flt_volume_new(const img_problem *ip);
void flt_volume_free(flt_volume *v);

/* Trigger: can every connected region of open cells be filled, volume-wise,
 * by some of the pieces left?  A piece is face-connected, so it lies in one
 * region, and the pieces in a region of r open required cells and t open
 * cells in all have a volume in [r, t], made of at most need copies of
 * each type (r == t in an exact puzzle; a region of optional cells alone
 * needs nothing).  In a loose puzzle the copies still required must also
 * fit in the open cells.  With a piece that is not face-connected the
 * check answers yes. */
bool flt_volume_ok(flt_volume *v, const dlx *d);

/* Filter: hide every available image after whose placement some region
 * touching it has a volume the remaining pieces cannot make (as above).
 * Returns the number hidden (pushed onto stack[*n...]), or TSR_ECANCELED
 * when `stop` (may be NULL: preparation's, whose filters run once on the
 * whole board) asks to stop, with the images hidden so far on the stack. */
int flt_volume_filter(flt_volume *v, dlx *d, const tsr_stop *stop, int *stack, int *n);

/* The same filter at the root, without a matrix: alive[i] (nimages flags,
 * set for the images to consider, none of a type allowed no copy) is
 * cleared for each image that strands a region.  Returns the number
 * cleared, TSR_ECANCELED as above or TSR_ENOMEM.  On a 100x200 board of
 * 1000-cell pieces the matrix alone took 8 s and 2.2 GB. */
int flt_volume_filter_root(flt_volume *v, const tsr_stop *stop, unsigned char *alive);

/* ---- fit ---- */
/* Hide every available image whose placement leaves a cell or a piece with
 * no option, repeating until nothing changes.  Returns the number hidden,
 * or TSR_ECANCELED as flt_volume_filter. */
int flt_fit_filter(const img_problem *ip, dlx *d, const tsr_stop *stop, int *rows, int *stack,
                   int *n);

/* ---- parity ----
 * Colour the cells like a 3D checkerboard.  The parity of the holes must be
 * reached exactly by the pieces left, each contributing +m or -m where m is
 * its parity magnitude.  States count the pieces left per magnitude class;
 * ok[state] is the set of reachable hole parities. */
typedef struct flt_parity {
    int nclasses;
    int *type_class;   /* per type: class index or -1 (magnitude 0) */
    int *class_radix;  /* state = sum over classes of left * radix */
    int *class_mag;
    int nstates, range, words;
    uint64_t *ok;      /* nstates * words bits over parity + range */
} flt_parity;

/* NULL when out of memory, when the state table would be too big, or when
 * `stop` (may be NULL) asks to stop. */
flt_parity *flt_parity_new(const img_problem *ip, const tsr_stop *stop);
void flt_parity_free(flt_parity *fp);

static inline bool flt_parity_ok(const flt_parity *fp, int state, int hole_parity)
{
    int v = hole_parity + fp->range;
    if (v < 0 || v > 2 * fp->range)
        return false;
    return (fp->ok[(size_t)state * fp->words + (v >> 6)] >> (v & 63)) & 1;
}

/* State of the pieces left in a DLX position. */
int flt_parity_state(const flt_parity *fp, const img_problem *ip, const dlx *d);

/* Filter: hide the available images of pieces whose placement with that
 * sign of parity would make the hole parity unreachable.  Returns the
 * number hidden, or TSR_ECANCELED as flt_volume_filter. */
int flt_parity_filter(const flt_parity *fp, const img_problem *ip, dlx *d, int state,
                      int hole_parity, const tsr_stop *stop, int *rows, int *stack, int *n);

/* ---- parity with ranges (loose puzzles) ----
 * The cells the pieces left will cover are the open required cells and
 * some of the open optional ones, so their colour sum lies in
 * [h - b, h + w] (h: the open required cells' sum; b, w: open optional
 * cells of colour -1 and +1).  It is also the sum of the pieces' signed
 * parities: each copy gives +m or -m, and type t places between low and
 * need more copies.  The trigger asks that some such sum fall in the
 * range.  It answers yes when the table of sums would be too big. */
typedef struct flt_lparity flt_lparity;

flt_lparity *flt_lparity_new(const img_problem *ip); /* NULL when out of memory */
void flt_lparity_free(flt_lparity *lp);
bool flt_lparity_ok(flt_lparity *lp, const dlx *d);

#endif
