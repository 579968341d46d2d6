/*
 * images.h - the compiled form of a puzzle that every search engine shares.
 *
 * Compiling turns the user's model into numbers:
 *  - cells: the free board cells (board minus fixed pieces), numbered in
 *    reading order (z, then y, then x), so cell ids are stable;
 *  - types: one per mobile piece entry, with its range of identical copies
 *    and its distinct orientations;
 *  - images: every placement of every orientation of a type that lies on
 *    free cells ("bounded images"), numbered type by type.  An image is a
 *    sorted list of cell ids.  Image ids name placements everywhere else:
 *    in solutions, in canonical keys and in search tasks.
 * Colours (tessera/puzzle.h): a coloured piece's orientations are its
 * coloured shapes, and an image is kept only where every piece cell may
 * sit on the board cell under it.  That is all the search ever sees of
 * colours: two images of a type may then cover the same cells with
 * different colours, so an image is (type, cells, colouring), and
 * img_find_colored tells them apart.
 * The compiled problem is immutable after img_compile and may be shared by
 * any number of concurrent searches.
 */
#ifndef TSR_IMAGES_H
#define TSR_IMAGES_H

#include <stdbool.h>
#include <stdint.h>

#include "geom/geom.h"
#include "tessera/engine.h"
#include "tessera/puzzle.h"

typedef struct img_type {
    int piece;        /* index into the puzzle's pieces */
    int count;        /* identical copies, at most */
    int count_min;    /* ... and at least (== count in an exact puzzle) */
    int size;         /* cells per copy */
    int norient;      /* distinct allowed orientations */
    tsr_cell *orient; /* norient * size normalised cells */
    int first, nimages; /* its images are first .. first+nimages-1 */
    int *ofirst;      /* norient + 1: orientation o's images are ofirst[o] ..
                         ofirst[o+1]-1, in ascending order of their first cell */
    int parity;       /* |black - white| cells in the lattice's 2-colouring (up and
                         down triangles; 0 on hexagons) */
    unsigned char *ocolor; /* norient * size: the colours of each orientation's
                              cells, in their order (so of each image's cells,
                              ascending); NULL when the piece is neutral */
} img_type;

typedef struct img_problem {
    const tsr_puzzle *pz;
    geo_lattice L;          /* the puzzle's lattice: transforms, neighbours, colouring */
    int dims;               /* 2 when the puzzle is flat (plane lattices are), else 3 */
    int ncells;             /* free cells, optional ones included */
    tsr_cell *cells;        /* ncells coordinates in reading order */
    unsigned char *optional; /* ncells flags: 1 for an optional cell; NULL when none is */
    bool exact;             /* every count fixed and no optional cell */
    int *nbr;               /* ncells * 6 neighbour ids, -1 none: on cubes -x,-y,-z,
                               +x,+y,+z; else the descriptor's order, -1 padded */
    signed char *ccolor;    /* ncells: the lattice's 2-colouring as +1 / -1, 0 on a
                               lattice without one (hexagons) */
    tsr_cell lo, hi;        /* bounding box of the whole board */
    int *grid;              /* box -> free cell id, -1 off the board or fixed */
    unsigned char *color;   /* ncells board colours of the free cells; NULL when all
                               are neutral */
    uint64_t allow[TSR_MAX_COLORS + 1]; /* bit b of allow[p]: a piece cell of colour p
                               may sit on a board cell of colour b (the puzzle's rule,
                               tsr_puzzle_color_allowed, tabled; filled when `color` is) */
    int ntypes;
    img_type *types;
    int ncopies;            /* mobile piece copies at their largest counts: the
                               pieces in every solution of an exact puzzle, the
                               most in any solution of a loose one */
    int nimages;
    int *img_type;          /* nimages */
    int *img_off;           /* nimages + 1 offsets into img_cells */
    int *img_cells;         /* cell ids, ascending per image */
    /* hash of images by (type, cells) for img_find */
    int *hash;
    uint32_t hash_mask;
    int maxsize;            /* largest piece */
} img_problem;

/* Compile a validated puzzle.  Fails with TSR_ETOOBIG when the images would
 * exceed `max_images` (0 = no limit), with TSR_ECANCELED when `stop` (may be
 * NULL) asks it to. */
int img_compile(const tsr_puzzle *pz, long max_images, const tsr_stop *stop, img_problem **out,
                tsr_err *err);

/* Preparation's poll of a tsr_stop, by the work done and not by the
 * clock (reading it at every step would cost more than the step): each
 * step adds its work to *work, in units of about one cell or one image
 * visited (a few to a hundred nanoseconds), and the hook is asked once
 * IMG_POLL_WORK units have passed since the last question, so every 0.1
 * to 10 ms of work: a pause, cancel or shutdown acts well within 100 ms,
 * and the questions cost nothing measurable.  True when it asks to stop. */
#define IMG_POLL_WORK 65536ul
static inline bool img_stopped(const tsr_stop *st, unsigned long *work, unsigned long units)
{
    if (st == NULL || st->stop == NULL || (*work += units) < IMG_POLL_WORK)
        return false;
    *work = 0;
    return st->stop(st->ctx) != 0;
}
void img_free(img_problem *ip);

/* Free cell id at a coordinate, or -1. */
int img_cell_at(const img_problem *ip, tsr_cell c);

/* The image of type `t` covering exactly the sorted cell ids `cells`, or -1. */
int img_find(const img_problem *ip, int t, const int *cells, int n);

/* The same for a coloured type: the image whose cells are `cells` and whose
 * colours (parallel to them; NULL: all neutral) are `colors`, or -1. */
int img_find_colored(const img_problem *ip, int t, const int *cells, const unsigned char *colors,
                     int n);

/* The colours of image i's cells (parallel to img_cells_of), or NULL when
 * its piece is neutral. */
const unsigned char *img_colors(const img_problem *ip, int i);

/* The orientation of type t that image i (of type t) has. */
int img_orientation(const img_problem *ip, int t, int i);

/* The image of type t in orientation o whose first (lowest) cell is
 * `first`, or -1: a binary search, where img_find hashes every cell. */
int img_find_at(const img_problem *ip, int t, int o, int first);

static inline int img_size(const img_problem *ip, int i)
{
    return ip->img_off[i + 1] - ip->img_off[i];
}

static inline const int *img_cells_of(const img_problem *ip, int i)
{
    return ip->img_cells + ip->img_off[i];
}

/* The 2-colouring of a free cell: +1 or -1 (checkerboard on cubes, up or
 * down on triangles), 0 everywhere on a lattice without one. */
static inline int img_color(const img_problem *ip, int c)
{
    return ip->ccolor[c];
}

/* Signed parity of an image: sum of its cells' colours. */
int img_parity(const img_problem *ip, int i);

#endif
